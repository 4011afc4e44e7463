// PyTorch-facing allocators: the caching device allocator behind c10::DeviceAllocator for
// PrivateUse1, and the pinned host allocator (ATen's CachingHostAllocatorImpl over pinned
// OpenCL buffers).
#pragma once

#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/CachingDeviceAllocator.h>

#include "runtime/allocator.h"

namespace torch_ocl {

// (cl_mem, byte offset) of a device address; clear error for an address we do not own.
rt::BufferRef resolvePtr(const void* ptr);
void recordStreamForPtr(void* ptr, const c10::Stream& stream);
c10::DeviceAllocator* deviceAllocator();
at::HostAllocator* hostAllocator();
// Keeps a pinned host block alive until the work enqueued on stream so far completes.
void recordHostUse(void* host_ptr, void* host_ctx, const c10::Stream& stream);
void setMemoryLimit(c10::DeviceIndex index, uint64_t bytes);
uint64_t memoryLimit(c10::DeviceIndex index);

}  // namespace torch_ocl
