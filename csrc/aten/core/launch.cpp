#include "aten/launch.h"

#include "runtime/graph.h"

#include <algorithm>
#include <atomic>

namespace torch_ocl::aten {
namespace {
std::atomic<int64_t> g_launches{0};
}  // namespace

int64_t kernelLaunchCount() {
  return g_launches.load(std::memory_order_relaxed);
}

void countLaunches(int64_t n) {
  g_launches.fetch_add(n, std::memory_order_relaxed);
}

void launchND(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, size_t global,
              size_t local) {
  (void)dev;
  if (global == 0) return;
  rt::CommandGraph* graph = rt::capture::graphOf(queue);
  ProfiledCommand pc(CommandKind::kKernel, nullptr, kernel);
  OCL_CHECK(
      clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, pc.event()));
  if (graph) graph->addKernel(kernel, 1, nullptr, &global, &local);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  afterLaunch(queue);
}

void launch2D(cl_command_queue queue, cl_kernel kernel, const size_t (&global)[2],
              const size_t (&local)[2]) {
  if (global[0] == 0 || global[1] == 0) return;
  launchKernel(queue, kernel, 2, global, local);
}

void launchKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* global,
                  const size_t* local) {
  launchKernelAs(queue, kernel, dims, global, local, CommandKind::kKernel, nullptr);
}

void launchKernelAs(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* global,
                    const size_t* local, CommandKind kind, const char* name) {
  rt::CommandGraph* graph = rt::capture::graphOf(queue);
  ProfiledCommand pc(kind, name, kernel);
  OCL_CHECK(
      clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, 0, nullptr, pc.event()));
  if (graph) graph->addKernel(kernel, dims, nullptr, global, local);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  afterLaunch(queue);
}

void launch1D(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, int64_t n) {
  if (n <= 0) return;
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  // One work item per element: PoCL vectorises across work items, and a grid-stride loop
  // measured 4x slower there (benchmarks/runtime.py, raw fill kernel); GPUs do not mind.
  const size_t global = (static_cast<size_t>(n) + local - 1) / local * local;
  rt::CommandGraph* graph = rt::capture::graphOf(queue);
  ProfiledCommand pc(CommandKind::kKernel, nullptr, kernel);
  OCL_CHECK(
      clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, pc.event()));
  if (graph) graph->addKernel(kernel, 1, nullptr, &global, &local);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  afterLaunch(queue);
}

void launch1DTail(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, int64_t n) {
  if (n <= 0) return;
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  const size_t un = static_cast<size_t>(n);
  size_t full = un / local * local;
  if (full != un && un < 16 * local) full = 0;  // a second launch would cost more than it saves
  rt::CommandGraph* graph = rt::capture::graphOf(queue);
  if (full > 0) {
    ProfiledCommand pc(CommandKind::kKernel, nullptr, kernel);
    OCL_CHECK(
        clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &full, &local, 0, nullptr, pc.event()));
    if (graph) graph->addKernel(kernel, 1, nullptr, &full, &local);
    g_launches.fetch_add(1, std::memory_order_relaxed);
    afterLaunch(queue);
  }
  if (full == un) return;
  const size_t offset = full + local;
  const size_t global = (un - full + local - 1) / local * local;
  ProfiledCommand pc(CommandKind::kKernel, nullptr, kernel);
  OCL_CHECK(
      clEnqueueNDRangeKernel(queue, kernel, 1, &offset, &global, &local, 0, nullptr, pc.event()));
  if (graph) graph->addKernel(kernel, 1, &offset, &global, &local);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  afterLaunch(queue);
}

void enqueueCopyBuffer(cl_command_queue queue, const rt::BufferRef& src, const rt::BufferRef& dst,
                       size_t bytes, cl_event* event) {
  rt::CommandGraph* graph = rt::capture::graphOf(queue);
  OCL_CHECK(clEnqueueCopyBuffer(queue, src.mem, dst.mem, src.offset, dst.offset, bytes, 0, nullptr,
                                event));
  if (graph) graph->addCopy(src.mem, dst.mem, src.offset, dst.offset, bytes);
}

void enqueueFillBuffer(cl_command_queue queue, const rt::BufferRef& dst, const void* pattern,
                       size_t pattern_size, size_t bytes, cl_event* event) {
  rt::CommandGraph* graph = rt::capture::graphOf(queue);
  OCL_CHECK(clEnqueueFillBuffer(queue, dst.mem, pattern, pattern_size, dst.offset, bytes, 0,
                                nullptr, event));
  if (graph) graph->addFill(dst.mem, pattern, pattern_size, dst.offset, bytes);
}

void refuseCaptureSlow(cl_command_queue queue, const char* what) {
  try {
    rt::capture::refuse(queue, what);
  } catch (const rt::CaptureError& e) {
    TORCH_CHECK(false, e.what());
  }
}

void checkSameDevice(std::initializer_list<std::reference_wrapper<const at::Tensor>> tensors) {
  const at::Tensor* first = nullptr;
  for (const at::Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (!first) {
      first = &t;
      continue;
    }
    TORCH_CHECK(t.device() == first->device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                first->device(), " and ", t.device(), "!");
  }
}

OclStrides2 stridesOf(const at::TensorIteratorBase& iter) {
  TORCH_CHECK(iter.ndim() <= kMaxDims, "torch-ocl: tensors that keep ", iter.ndim(),
              " dimensions after coalescing are not supported yet (at most ", kMaxDims, ")");
  OclStrides2 s{};
  for (int d = 0; d < iter.ndim(); ++d) {
    s.sizes[d] = iter.shape()[d];
    for (int a = 0; a < std::min(iter.ntensors(), 2); ++a) s.strides[a][d] = iter.strides(a)[d];
  }
  return s;
}

std::string withPrelude(const std::string& body) {
  return std::string(kernels::source("prelude.cl")) + "\n" + body;
}

cl_program realProgram(c10::DeviceIndex idx, const char* family, const char* file,
                       c10::ScalarType t) {
  TORCH_INTERNAL_ASSERT(t == c10::kFloat || t == c10::kDouble);
  return programs(idx).get({family, static_cast<uint64_t>(t)}, [&] {
    const std::string type = t == c10::kDouble ? "double" : "float";
    return rt::ProgramSource{std::string(file) + "<" + type + ">",
                             withPrelude(kernels::source(file)), "-DT=" + type + " -DACC=" + type};
  });
}

}  // namespace torch_ocl::aten
