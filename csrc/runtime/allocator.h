// Caching device allocator in the spirit of CUDA's: cl_mem segments ("slabs") carved into
// blocks, small and large pools, block splitting and merging, stream-ordered reuse,
// record_stream, statistics, OOM handling. No torch headers.
//
// Pointers: every segment is given a range of host virtual addresses inside a region reserved
// with mmap(PROT_NONE) (never readable, never handed out to anything else). The pointer of a
// block is segment_base + offset, so data_ptr() arithmetic in PyTorch works, and resolve()
// maps any address inside a live block back to (cl_mem, byte offset).
#pragma once

#include "device.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace torch_ocl::rt {

struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n);
  void decrease(int64_t n);
  void resetPeak() { peak = current; }
  void resetAccumulated() { allocated = freed = 0; }
};
enum StatIndex { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kNumStatIndices = 3 };
using StatArray = std::array<Stat, kNumStatIndices>;

// Same fields and meaning as c10::CachingDeviceAllocator::DeviceStats.
struct AllocatorStats {
  StatArray allocation, segment, active, inactive_split;
  StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
  Stat oversize_allocations, oversize_segments;
  int64_t max_split_size = 0;
};

struct BufferRef {
  cl_mem mem = nullptr;
  size_t offset = 0;  // bytes from the start of mem
};

// Sizes follow CUDA's allocator: requests round up to 512 bytes; <= 1 MiB comes from the small
// pool (2 MiB segments); larger from the large pool (20 MiB segments below 10 MiB, else the size
// rounded to 2 MiB). Segments never exceed the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE.
constexpr size_t kMinBlockSize = 512;
constexpr size_t kSmallSize = 1 << 20;
constexpr size_t kSmallBuffer = 2 << 20;
constexpr size_t kLargeBuffer = 20 << 20;
constexpr size_t kMinLargeAlloc = 10 << 20;
constexpr size_t kRoundLarge = 2 << 20;

class DeviceAllocator {
 public:
  // memory_limit: bytes the allocator may reserve; 0 means the device's global memory size.
  explicit DeviceAllocator(Device& dev, uint64_t memory_limit = 0);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // nbytes == 0 returns nullptr. Throws OutOfMemoryError (after freeing the cache and
  // retrying) with figures in the message; throws std::invalid_argument when nbytes exceeds
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE. stream_index: the stream that will use the block.
  void* allocate(size_t nbytes, int stream_index = 0);
  // The block becomes reusable on its own stream at once (in-order queue), and on other streams
  // once the events of recordStream() uses complete.
  void free(void* ptr);
  // Any address inside a live block. Throws std::invalid_argument for an unknown address.
  BufferRef resolve(const void* ptr) const;
  // Hot path of resolve(): (cl_mem, offset) of any address inside one of this allocator's
  // segments, with no lock and no lookup beyond one table read; {nullptr, 0} otherwise. It does
  // not check that the block is live (a live tensor's pointer always is); resolve() does.
  BufferRef resolveUnchecked(const void* ptr) const noexcept;
  bool owns(const void* ptr) const;         // inside this allocator's reserved address range
  size_t blockSize(const void* ptr) const;  // size of the live block that starts at ptr
  void recordStream(const void* ptr, int stream_index);
  // Releases every cached segment of the general memory pool that holds no live block. Waits
  // for pending stream events.
  void emptyCache();

  // Graph memory pools (ids > 0, chosen by the caller). Between beginPoolCapture and
  // endPoolCapture, allocations on stream_index come from segments of that pool only; blocks of
  // a pool, freed or not, return to that pool, so a graph captured with it can be replayed into
  // the same addresses. emptyCache() keeps the memory of pools; releasePool() hands it back
  // (segments with live blocks move to the general pool).
  void beginPoolCapture(int stream_index, int mempool);
  void endPoolCapture(int stream_index);
  void releasePool(int mempool);
  size_t poolReservedBytes(int mempool) const;  // bytes of the segments of mempool

  AllocatorStats stats() const;
  void resetPeakStats();
  void resetAccumulatedStats();
  void setMemoryLimit(uint64_t bytes);  // 0: the device's global memory
  uint64_t memoryLimit() const;
  Device& device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Pinned (page-locked) host memory: a cl_mem created with CL_MEM_ALLOC_HOST_PTR and mapped once,
// on a queue of its own (allocating and freeing wait for no stream).
// Copies from/to these pointers can run asynchronously. No caching here; the integration
// layer wraps it in ATen's CachingHostAllocatorImpl.
class PinnedHostMemory {
 public:
  static void* allocate(Device& dev, size_t nbytes);
  static void free(void* ptr);
  static bool isPinned(const void* ptr);
};

}  // namespace torch_ocl::rt
