// Process state shared by the integration layer: lazy initialisation, fork poisoning, the
// current device and stream of each thread, and the per-device runtime objects. Every entry
// point that touches the device goes through here, so OpenCL errors become PyTorch errors in
// one place.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/program_cache.h"

#include <functional>
#include <string>

namespace torch_ocl {

constexpr c10::DeviceType kOcl = c10::DeviceType::PrivateUse1;

// Number of devices; never throws, 0 when OpenCL has none (or discovery failed).
c10::DeviceIndex deviceCount() noexcept;
// Checks the index (clear error naming the count) and fork state; initialises lazily.
rt::Device& device(c10::DeviceIndex index);
rt::DeviceAllocator& allocator(c10::DeviceIndex index);
rt::ProgramCache& programs(c10::DeviceIndex index);
// The allocator whose address range holds ptr, or nullptr.
rt::DeviceAllocator* allocatorOwning(const void* ptr);
bool isInitialized();
bool isInBadFork();

c10::DeviceIndex currentDevice();
void setCurrentDevice(c10::DeviceIndex index);
void checkIndex(c10::DeviceIndex index);

// Streams: c10::Stream id is the runtime stream index (0 default, 1.. pool).
c10::Stream currentStream(c10::DeviceIndex index);
void setCurrentStream(const c10::Stream& stream);
c10::Stream defaultStream(c10::DeviceIndex index);
cl_command_queue queueOf(const c10::Stream& stream);
inline cl_command_queue currentQueue(c10::DeviceIndex index) {
  return queueOf(currentStream(index));
}

// Runs fn and turns runtime exceptions into PyTorch errors: ClError/BuildError -> RuntimeError
// with the OpenCL name and call, OutOfMemoryError -> torch.OutOfMemoryError,
// std::out_of_range -> IndexError, std::invalid_argument -> ValueError.
[[noreturn]] void rethrowAsTorch(const std::exception& e);

}  // namespace torch_ocl

// Wraps a block that calls the runtime. c10::Error passes through unchanged.
#define OCL_TRY try {
#define OCL_CATCH                              \
  }                                            \
  catch (const c10::Error&) {                  \
    throw;                                     \
  }                                            \
  catch (const std::exception& ocl_catch_e_) { \
    ::torch_ocl::rethrowAsTorch(ocl_catch_e_); \
  }
