// Launch helpers shared by the op families: argument setting, 1-D launches with an explicit
// local size, (cl_mem, offset) of a tensor, and the strides struct the kernels take.
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>

#include "integration/allocator.h"
#include "integration/profiler.h"
#include "integration/state.h"
#include "kernels/embedded.h"
#include "runtime/graph.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

namespace torch_ocl::aten {

constexpr int kMaxDims = 10;  // OCL_MAX_DIMS in prelude.cl
struct alignas(8) OclStrides2 {
  cl_long sizes[kMaxDims];
  cl_long strides[2][kMaxDims];
};

// Byte-addressed location of a tensor's first element.
inline rt::BufferRef bufferOf(const at::Tensor& t) {
  return resolvePtr(static_cast<const char*>(t.storage().data()) +
                    t.storage_offset() * t.element_size());
}

template <typename T>
inline void setArg(cl_kernel k, cl_uint& i, const T& v) {
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(T), &v));
}
inline void setArg(cl_kernel k, cl_uint& i, const rt::BufferRef& b) {
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_mem), &b.mem));
  cl_ulong off = b.offset;
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_ulong), &off));
}
template <typename... Args>
inline void setArgs(cl_kernel k, const Args&... args) {
  cl_uint i = 0;
  (setArg(k, i, args), ...);
}

// PyTorch's usual error when the defined tensors are not all on one device. OpenCL objects of two
// contexts must never meet in one command (drivers abort rather than report it).
void checkSameDevice(std::initializer_list<std::reference_wrapper<const at::Tensor>> tensors);

// Enqueues a 1-D kernel with one work item per element (kernels return when id >= n).
void launch1D(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, int64_t n);
// Enqueues a 1-D kernel over n items whose bound check runs only when get_global_offset(0) is
// nonzero, shifting its index down by one local size there: the full work-groups at offset 0, the
// remainder (or, for small n, all of it) at an offset of one local size past its start.
void launch1DTail(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, int64_t n);
// Enqueues a 1-D kernel with an explicit global and local size (global a multiple of local).
void launchND(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, size_t global,
              size_t local);
// Enqueues a 2-D kernel (each global size a multiple of its local size).
void launch2D(cl_command_queue queue, cl_kernel kernel, const size_t (&global)[2],
              const size_t (&local)[2]);
// Enqueues an N-D kernel (dims 1..3; local may be null: the driver picks) on queue.
void launchKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* global,
                  const size_t* local);
// launchKernel for a kernel that does a copy or fill: the profiler shows it as a `kind` row named
// `name` (e.g. "Memcpy DtoD") instead of a kernel row.
void launchKernelAs(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* global,
                    const size_t* local, CommandKind kind, const char* name);
// A buffer copy / fill on queue, recorded while it captures a graph (event may be null).
void enqueueCopyBuffer(cl_command_queue queue, const rt::BufferRef& src, const rt::BufferRef& dst,
                       size_t bytes, cl_event* event = nullptr);
void enqueueFillBuffer(cl_command_queue queue, const rt::BufferRef& dst, const void* pattern,
                       size_t pattern_size, size_t bytes, cl_event* event = nullptr);
// Raises a RuntimeError saying that `what` cannot be captured when queue is capturing a graph
// (and invalidates that capture). Call before enqueueing `what`. Off capture: one atomic load.
void refuseCaptureSlow(cl_command_queue queue, const char* what);
inline void refuseCapture(cl_command_queue queue, const char* what) {
  if (rt::capture::active()) refuseCaptureSlow(queue, what);
}
// Kernels enqueued through launch1D/launchND/launch2D/launchKernel since the process started (all
// devices, threads).
int64_t kernelLaunchCount();
// Adds n to that count (graph replays: their kernel nodes are launches too).
void countLaunches(int64_t n);
// While a stream captures a graph (runtime/graph.h), the launch helpers also record each launch
// as a node of that graph; off capture that costs one relaxed atomic load per launch.

// Debug mode (debug_mode.cpp): launches wait for their queue and check the device-side records,
// raising with the name of the aten op that launched them.
void setLaunchBlocking(bool on);
bool launchBlocking();
void finishLaunch(cl_command_queue queue);  // waits and raises; only called in debug mode
namespace detail {
extern std::atomic<bool> g_launch_blocking;
}
// Call after enqueueing a kernel (the launch helpers below do).
inline void afterLaunch(cl_command_queue queue) {
  if (detail::g_launch_blocking.load(std::memory_order_relaxed)) finishLaunch(queue);
}

// Sizes/strides from a TensorIterator with up to two operands (0: output, 1: input).
OclStrides2 stridesOf(const at::TensorIteratorBase& iter);

// Source of a program: the prelude followed by the body.
std::string withPrelude(const std::string& body);

// A hand-written program from csrc/kernels/<file> for float or double: T is the element type and
// ACC the accumulation type. Other dtypes are for the caller to route elsewhere.
cl_program realProgram(c10::DeviceIndex idx, const char* family, const char* file,
                       c10::ScalarType t);

}  // namespace torch_ocl::aten
