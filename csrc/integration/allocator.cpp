#include "integration/allocator.h"

#include <ATen/Context.h>

#include "aten/launch.h"
#include "integration/state.h"

#include <cstring>

namespace torch_ocl {
namespace {

using c10::CachingDeviceAllocator::DeviceStats;

void convertStatArray(const rt::StatArray& from, c10::CachingAllocator::StatArray& to) {
  for (int i = 0; i < rt::kNumStatIndices; ++i) {
    to[i].current = from[i].current;
    to[i].peak = from[i].peak;
    to[i].allocated = from[i].allocated;
    to[i].freed = from[i].freed;
  }
}

void deleteDevicePtr(void* ptr) {
  if (!ptr) return;
  rt::DeviceAllocator* a = allocatorOwning(ptr);
  // A pointer we do not own cannot reach here; losing it silently would leak, so be loud.
  TORCH_INTERNAL_ASSERT(a, "torch-ocl: freeing a pointer no ocl allocator owns");
  a->free(ptr);
}

class OclDeviceAllocator final : public c10::DeviceAllocator {
 public:
  at::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex index = currentDevice();
    rt::DeviceAllocator& alloc = allocator(index);
    void* ptr = nullptr;
    OCL_TRY
    ptr = alloc.allocate(nbytes, static_cast<int>(currentStream(index).id()));
    OCL_CATCH
    return {ptr, ptr, &deleteDevicePtr, c10::Device(kOcl, index)};
  }
  at::DeleterFnPtr raw_deleter() const override { return &deleteDevicePtr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) return;
    rt::BufferRef d = resolvePtr(dest), s = resolvePtr(src);
    OCL_TRY
    cl_command_queue q = currentQueue(currentDevice());
    aten::enqueueCopyBuffer(q, s, d, count);
    OCL_CATCH
  }

  bool initialized() override { return isInitialized(); }
  void emptyCache(c10::MempoolId_t) override {
    if (!isInitialized()) return;
    for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) {
      OCL_TRY
      allocator(i).emptyCache();
      OCL_CATCH
    }
  }
  void recordStream(const at::DataPtr& ptr, c10::Stream stream) override {
    recordStreamForPtr(ptr.get(), stream);
  }
  DeviceStats getDeviceStats(c10::DeviceIndex index) override {
    rt::AllocatorStats s = allocator(index < 0 ? currentDevice() : index).stats();
    DeviceStats out;
    convertStatArray(s.allocation, out.allocation);
    convertStatArray(s.segment, out.segment);
    convertStatArray(s.active, out.active);
    convertStatArray(s.inactive_split, out.inactive_split);
    convertStatArray(s.allocated_bytes, out.allocated_bytes);
    convertStatArray(s.reserved_bytes, out.reserved_bytes);
    convertStatArray(s.active_bytes, out.active_bytes);
    convertStatArray(s.inactive_split_bytes, out.inactive_split_bytes);
    convertStatArray(s.requested_bytes, out.requested_bytes);
    out.num_alloc_retries = s.num_alloc_retries;
    out.num_ooms = s.num_ooms;
    out.num_sync_all_streams = s.num_sync_all_streams;
    out.num_device_alloc = s.num_device_alloc;
    out.num_device_free = s.num_device_free;
    out.max_split_size = s.max_split_size;
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex index) override {
    allocator(index < 0 ? currentDevice() : index).resetAccumulatedStats();
  }
  void resetPeakStats(c10::DeviceIndex index) override {
    allocator(index < 0 ? currentDevice() : index).resetPeakStats();
  }
  // (free, total) as the allocator sees them: total is the device's global memory, free is what
  // the allocator may still reserve under its limit.
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex index) override {
    if (index < 0) index = currentDevice();
    rt::DeviceAllocator& a = allocator(index);
    uint64_t total = device(index).info().global_mem_size;
    uint64_t limit = a.memoryLimit();
    int64_t reserved = a.stats().reserved_bytes[rt::kAggregate].current;
    int64_t free_bytes = static_cast<int64_t>(limit) - reserved;
    return {static_cast<size_t>(std::max<int64_t>(free_bytes, 0)), static_cast<size_t>(total)};
  }
};

OclDeviceAllocator g_device_allocator;

// ---- pinned host memory --------------------------------------------------------------------

using HostEvent = std::shared_ptr<rt::Event>;

struct OclHostAllocatorImpl final : public at::CachingHostAllocatorImpl<c10::Stream, HostEvent> {
 private:
  void allocate_host_memory(size_t size, void** ptr) override {
    OCL_TRY
    *ptr = rt::PinnedHostMemory::allocate(device(0), size);
    OCL_CATCH
  }
  void free_block(at::HostBlock<c10::Stream>* block) override {
    rt::PinnedHostMemory::free(block->ptr_);
  }
  void record_stream(std::optional<std::vector<HostEvent>>& events, c10::Stream stream) override {
    auto ev = std::make_shared<rt::Event>();
    OCL_TRY
    ev->record(device(stream.device_index()), static_cast<int>(stream.id()));
    OCL_CATCH
    events->push_back(std::move(ev));
  }
  bool query_event(HostEvent& event) override {
    OCL_TRY
    return event->query();
    OCL_CATCH
  }
  c10::Stream get_current_stream() const override { return currentStream(currentDevice()); }
  bool stream_is_capturing(c10::Stream) const override { return false; }
};

void deletePinned(void* ctx);

struct OclHostAllocator final
    : public at::CachingHostAllocatorInterface<OclHostAllocatorImpl, deletePinned> {};

OclHostAllocator g_host_allocator;

void deletePinned(void* ctx) {
  g_host_allocator.free(ctx);
}

}  // namespace

rt::BufferRef resolvePtr(const void* ptr) {
  rt::DeviceAllocator* a = allocatorOwning(ptr);
  // Every launch binds its operands through here: one table read, no lock. Addresses outside a
  // live segment take the checked path below, which raises the error.
  if (a) {
    rt::BufferRef fast = a->resolveUnchecked(ptr);
    if (fast.mem) return fast;
  }
  TORCH_CHECK(a, "torch-ocl: address ", ptr, " is not ocl device memory");
  OCL_TRY
  return a->resolve(ptr);
  OCL_CATCH
}

void recordStreamForPtr(void* ptr, const c10::Stream& stream) {
  if (!ptr) return;
  rt::DeviceAllocator* a = allocatorOwning(ptr);
  if (!a) return;
  OCL_TRY
  a->recordStream(ptr, static_cast<int>(stream.id()));
  OCL_CATCH
}

c10::DeviceAllocator* deviceAllocator() {
  return &g_device_allocator;
}
at::HostAllocator* hostAllocator() {
  return &g_host_allocator;
}

void recordHostUse(void* host_ptr, void* host_ctx, const c10::Stream& stream) {
  g_host_allocator.record_event(host_ptr, host_ctx, stream);
}

void setMemoryLimit(c10::DeviceIndex index, uint64_t bytes) {
  allocator(index).setMemoryLimit(bytes);
}
uint64_t memoryLimit(c10::DeviceIndex index) {
  return allocator(index).memoryLimit();
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_device_allocator);
REGISTER_HOST_ALLOCATOR(at::kPrivateUse1, &g_host_allocator);

}  // namespace torch_ocl
