// Caching device allocator (see allocator.h). The bookkeeping follows CUDA's
// CUDACachingAllocator: blocks live in per-pool std::sets ordered by (stream, size, address),
// segments are split on allocation and merged on free, and the statistics have the meaning of
// c10::CachingDeviceAllocator::DeviceStats.
//
// Pointers. The allocator reserves a range of host virtual addresses with
// mmap(PROT_NONE, MAP_NORESERVE): it costs no memory, can never be read or written, and the
// kernel never hands those addresses to anything else. Each segment (one cl_mem) is given a
// 2 MiB aligned sub-range of it by a first-fit range allocator, and a block's pointer is
// segment base + offset. resolve() maps any address inside a live block back to
// (cl_mem, offset) with one ordered-map lookup.
//
// Fast path. Allocating a cached block and freeing it again does no heap allocation in the
// steady state: Block objects are recycled through a free list, and the tree nodes of the pool
// sets and of the live-block map are kept in the blocks (C++17 node handles) between uses.
#include "allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace torch_ocl::rt {

void Stat::increase(int64_t n) {
  current += n;
  peak = std::max(peak, current);
  allocated += n;
}

void Stat::decrease(int64_t n) {
  current -= n;
  freed += n;
}

namespace {

constexpr size_t kSegmentAlign = 2 << 20;                   // VA ranges of segments
constexpr uint64_t kWantedReservation = uint64_t{1} << 40;  // 1 TiB of address space
constexpr uint64_t kMinReservation = uint64_t{64} << 20;

size_t roundUp(size_t n, size_t m) {
  return (n + m - 1) / m * m;
}

size_t roundSize(size_t n) {
  return n < kMinBlockSize ? kMinBlockSize : roundUp(n, kMinBlockSize);
}

std::string hexPtr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

// Same format as c10's format_size: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB".
std::string formatSize(uint64_t size) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed;
  if (size <= 1024) {
    os << size << " bytes";
  } else if (size <= 1048576) {
    os << static_cast<double>(size) / 1024.0 << " KiB";
  } else if (size <= 1073741824ULL) {
    os << static_cast<double>(size) / 1048576.0 << " MiB";
  } else {
    os << static_cast<double>(size) / 1073741824.0 << " GiB";
  }
  return os.str();
}

bool isOutOfMemoryCode(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_OUT_OF_HOST_MEMORY;
}

// A range of reserved, inaccessible host addresses, handed out in 2 MiB aligned pieces.
class AddressRange {
 public:
  explicit AddressRange(uint64_t wanted) {
    uint64_t len = std::max<uint64_t>(roundUp(wanted, kSegmentAlign), kMinReservation);
    for (; len >= kMinReservation; len /= 2) {
      size_t map_len = static_cast<size_t>(len) + kSegmentAlign;  // room to align the base
      void* p =
          mmap(nullptr, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) continue;
      map_ = p;
      map_len_ = map_len;
      base_ = roundUp(reinterpret_cast<uintptr_t>(p), kSegmentAlign);
      size_ = static_cast<size_t>(len);
      free_.emplace(base_, size_);
      return;
    }
    throw std::runtime_error(
        "torch_ocl allocator: could not reserve host address space for device pointers "
        "(mmap(PROT_NONE) of " +
        formatSize(kMinReservation) + " failed)");
  }
  ~AddressRange() {
    if (map_) munmap(map_, map_len_);
  }
  AddressRange(const AddressRange&) = delete;
  AddressRange& operator=(const AddressRange&) = delete;

  bool contains(uintptr_t p) const { return p >= base_ && p - base_ < size_; }
  size_t size() const { return size_; }
  uintptr_t base() const { return base_; }

  // First fit; returns 0 when no free range is large enough.
  uintptr_t take(size_t len) {
    len = roundUp(len, kSegmentAlign);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < len) continue;
      uintptr_t start = it->first;
      size_t rest = it->second - len;
      free_.erase(it);
      if (rest) free_.emplace(start + len, rest);
      return start;
    }
    return 0;
  }

  void give(uintptr_t start, size_t len) {
    len = roundUp(len, kSegmentAlign);
    auto next = free_.lower_bound(start);
    if (next != free_.end() && start + len == next->first) {  // coalesce with the following
      len += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {  // coalesce with the preceding
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        prev->second += len;
        return;
      }
    }
    free_.emplace_hint(next, start, len);
  }

 private:
  void* map_ = nullptr;
  size_t map_len_ = 0;
  uintptr_t base_ = 0;
  size_t size_ = 0;
  std::map<uintptr_t, size_t> free_;  // start -> length
};

struct Block;

// Lookup key for the pools: (memory pool, stream, size, address). Memory pool 0 is the general
// one; others are private to graphs (see beginPoolCapture).
struct PoolKey {
  int mempool;
  int stream;
  size_t size;
  uintptr_t ptr;
};

struct BlockBySize {
  using is_transparent = void;
  bool operator()(const Block* a, const Block* b) const;
  bool operator()(const Block* a, const PoolKey& b) const;  // for lower_bound
};

using BlockPool = std::set<Block*, BlockBySize>;
using LiveMap = std::map<uintptr_t, Block*>;  // start address -> allocated block

struct Segment {
  Mem mem;
  uintptr_t base = 0;
  size_t size = 0;
  bool small = false;
  int mempool = 0;  // 0: general; else the graph memory pool that owns the segment
};

struct Block {
  Segment* segment = nullptr;
  uintptr_t ptr = 0;
  size_t size = 0;
  size_t requested = 0;  // bytes asked for (for requested_bytes)
  int stream = 0;
  int mempool = 0;           // that of its segment
  bool small = false;        // pool
  bool allocated = false;    // handed out and not yet freed
  bool spare = false;        // on the free list of Block objects
  uint32_t stream_uses = 0;  // bit s: used on stream s (recordStream), other than `stream`
  int event_count = 0;       // events that must complete before the block returns to its pool
  Block* prev = nullptr;     // neighbours within the segment, in address order
  Block* next = nullptr;
  // Tree nodes kept between uses so that the fast path allocates nothing.
  BlockPool::node_type pool_node;
  LiveMap::node_type live_node;

  bool isSplit() const { return prev != nullptr || next != nullptr; }
  PoolKey key() const { return {mempool, stream, size, ptr}; }
};

bool keyLess(const PoolKey& a, const PoolKey& b) {
  if (a.mempool != b.mempool) return a.mempool < b.mempool;
  if (a.stream != b.stream) return a.stream < b.stream;
  if (a.size != b.size) return a.size < b.size;
  return a.ptr < b.ptr;
}
bool BlockBySize::operator()(const Block* a, const Block* b) const {
  return keyLess(a->key(), b->key());
}
bool BlockBySize::operator()(const Block* a, const PoolKey& b) const {
  return keyLess(a->key(), b);
}

void checkStream(int stream_index, const char* what) {
  if (stream_index < 0 || stream_index >= kStreamsPerDevice)
    throw std::out_of_range(std::string(what) + ": stream index " + std::to_string(stream_index) +
                            " out of range (valid 0.." + std::to_string(kStreamsPerDevice - 1) +
                            ")");
}

}  // namespace

// Segment of every 2 MiB piece of the address range, for resolveUnchecked(): written under the
// allocator's mutex when a segment is created or released, read without it. The table is an
// anonymous mapping, so pieces never used cost no memory.
class SegmentTable {
 public:
  explicit SegmentTable(const AddressRange& va) : base_(va.base()), n_(va.size() / kSegmentAlign) {
    bytes_ = n_ * sizeof(std::atomic<Segment*>);
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw std::runtime_error("torch_ocl allocator: mmap of the segment table failed");
    slots_ = static_cast<std::atomic<Segment*>*>(p);  // zero pages: every slot null
  }
  ~SegmentTable() { munmap(slots_, bytes_); }
  SegmentTable(const SegmentTable&) = delete;
  SegmentTable& operator=(const SegmentTable&) = delete;

  void set(uintptr_t start, size_t len, Segment* s) {
    const size_t first = (start - base_) / kSegmentAlign;
    const size_t count = roundUp(len, kSegmentAlign) / kSegmentAlign;
    for (size_t i = first; i < first + count && i < n_; ++i)
      slots_[i].store(s, std::memory_order_release);
  }
  Segment* get(uintptr_t p) const {
    const size_t i = (p - base_) / kSegmentAlign;  // wraps for p < base_: then i >= n_
    return i < n_ ? slots_[i].load(std::memory_order_acquire) : nullptr;
  }

 private:
  uintptr_t base_;
  size_t n_;
  size_t bytes_ = 0;
  std::atomic<Segment*>* slots_ = nullptr;
};

struct DeviceAllocator::Impl {
  Device& dev;
  uint64_t limit;
  mutable std::mutex mu;
  AddressRange va;
  SegmentTable table{va};
  AllocatorStats st;
  BlockPool small_pool, large_pool;
  LiveMap live;
  std::map<uintptr_t, std::unique_ptr<Segment>> segments;  // by base address
  std::vector<std::unique_ptr<Block>> block_store;         // owns every Block
  std::vector<Block*> spare_blocks;
  std::vector<std::pair<Event, Block*>> pending;  // recordStream events of freed blocks
  // Memory pool that allocations of each stream come from (0: the general one); nonzero while a
  // graph captures on that stream.
  std::array<int, kStreamsPerDevice> capture_pool{};

  Impl(Device& d, uint64_t memory_limit)
      : dev(d),
        limit(memory_limit ? memory_limit : d.info().global_mem_size),
        va(std::max<uint64_t>(kWantedReservation, 4 * d.info().global_mem_size)) {
    st.max_split_size = -1;  // no limit on splitting (c10 reports SIZE_MAX as -1)
  }

  std::string name() const { return "ocl:" + std::to_string(dev.index()); }

  BlockPool& poolOf(const Block* b) { return b->small ? small_pool : large_pool; }

  template <typename F>
  static void forStats(bool small, F&& f) {
    f(kAggregate);
    f(small ? kSmallPool : kLargePool);
  }

  // ---- Block objects and tree nodes, recycled ---------------------------------------------
  Block* newBlock() {
    if (!spare_blocks.empty()) {
      Block* b = spare_blocks.back();
      spare_blocks.pop_back();
      b->spare = false;
      return b;
    }
    block_store.push_back(std::make_unique<Block>());
    return block_store.back().get();
  }

  void retireBlock(Block* b) {
    b->segment = nullptr;
    b->ptr = 0;
    b->size = b->requested = 0;
    b->stream = 0;
    b->mempool = 0;
    b->allocated = false;
    b->stream_uses = 0;
    b->event_count = 0;
    b->prev = b->next = nullptr;
    b->spare = true;
    spare_blocks.push_back(b);
  }

  // Frees Block objects that are not in use (after the cache was emptied).
  void trimSpareBlocks() {
    if (spare_blocks.empty()) return;
    spare_blocks.clear();
    block_store.erase(std::remove_if(block_store.begin(), block_store.end(),
                                     [](const std::unique_ptr<Block>& b) { return b->spare; }),
                      block_store.end());
  }

  void poolInsert(Block* b) {
    BlockPool& pool = poolOf(b);
    if (b->pool_node) {
      b->pool_node.value() = b;
      pool.insert(std::move(b->pool_node));
    } else {
      pool.insert(b);
    }
  }

  void poolErase(Block* b) { b->pool_node = poolOf(b).extract(b); }

  void liveInsert(Block* b) {
    if (b->live_node) {
      b->live_node.key() = b->ptr;
      b->live_node.mapped() = b;
      live.insert(std::move(b->live_node));
    } else {
      live.emplace(b->ptr, b);
    }
  }

  // The allocated block that contains p, or nullptr.
  Block* liveBlockContaining(uintptr_t p) const {
    auto it = live.upper_bound(p);
    if (it == live.begin()) return nullptr;
    --it;
    Block* b = it->second;
    return p - b->ptr < b->size ? b : nullptr;
  }

  std::string unknownPointer(const char* what, const void* ptr) const {
    uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::string s = std::string(what) + ": address " + hexPtr(ptr);
    if (!va.contains(p)) return s + " was not allocated by the " + name() + " allocator";
    return s + " is not inside a live block of the " + name() +
           " allocator (freed, or never allocated)";
  }

  // ---- allocation --------------------------------------------------------------------------
  Block* findFree(BlockPool& pool, int mempool, int stream, size_t size) {
    auto it = pool.lower_bound(PoolKey{mempool, stream, size, 0});
    if (it == pool.end() || (*it)->stream != stream || (*it)->mempool != mempool) return nullptr;
    Block* b = *it;
    b->pool_node = pool.extract(it);
    return b;
  }

  size_t segmentSize(size_t size) const {
    size_t seg;
    if (size <= kSmallSize)
      seg = kSmallBuffer;
    else if (size < kMinLargeAlloc)
      seg = kLargeBuffer;
    else
      seg = roundUp(size, kRoundLarge);
    size_t max_block = dev.info().max_mem_alloc_size / kMinBlockSize * kMinBlockSize;
    return std::max(size, std::min(seg, max_block));
  }

  // A new segment as one free block that is in no pool; nullptr (and the reason in *why) when
  // the limit, the address range or the driver's memory is exhausted.
  Block* newSegment(size_t seg_size, int stream, bool small, int mempool, std::string* why) {
    uint64_t reserved = static_cast<uint64_t>(st.reserved_bytes[kAggregate].current);
    if (reserved + seg_size > limit) {
      *why = "A new segment of " + formatSize(seg_size) + " would exceed the allocator limit.";
      return nullptr;
    }
    cl_context ctx = dev.context();
    uintptr_t base = va.take(seg_size);
    if (!base) {
      *why = "The reserved device address range (" + formatSize(va.size()) + ") is exhausted.";
      return nullptr;
    }
    cl_int err = CL_SUCCESS;
    Mem mem(clCreateBuffer(ctx, CL_MEM_READ_WRITE, seg_size, nullptr, &err));
    if (err != CL_SUCCESS || !mem) {
      va.give(base, seg_size);
      if (err == CL_SUCCESS || isOutOfMemoryCode(err)) {
        *why = "clCreateBuffer(" + formatSize(seg_size) + ") failed with " + clErrorName(err) + ".";
        return nullptr;
      }
      throw ClError(err, "clCreateBuffer(CL_MEM_READ_WRITE, " + std::to_string(seg_size) + ")",
                    __FILE__, __LINE__);
    }
    auto seg = std::make_unique<Segment>();
    seg->mem = std::move(mem);
    seg->base = base;
    seg->size = seg_size;
    seg->small = small;
    seg->mempool = mempool;
    Segment* s = seg.get();
    segments.emplace(base, std::move(seg));
    table.set(base, seg_size, s);
    Block* b = newBlock();
    b->segment = s;
    b->ptr = base;
    b->size = seg_size;
    b->stream = stream;
    b->mempool = mempool;
    b->small = small;
    st.num_device_alloc++;
    forStats(small, [&](int i) {
      st.segment[i].increase(1);
      st.reserved_bytes[i].increase(static_cast<int64_t>(seg_size));
    });
    return b;
  }

  // Takes `size` bytes from the front of the free block b (in no pool) and hands them out.
  void* allocFound(Block* b, size_t size, size_t requested) {
    const bool small = b->small;
    const bool already_split = b->isSplit();
    const size_t remaining = b->size - size;
    const bool split = small ? remaining >= kMinBlockSize : remaining > kSmallSize;
    if (split) {
      Block* rest = b;
      b = newBlock();
      b->segment = rest->segment;
      b->ptr = rest->ptr;
      b->size = size;
      b->stream = rest->stream;
      b->mempool = rest->mempool;
      b->small = small;
      b->prev = rest->prev;
      if (b->prev) b->prev->next = b;
      b->next = rest;
      rest->prev = b;
      rest->ptr += size;
      rest->size -= size;
      poolInsert(rest);
      if (already_split) {
        // An already split inactive block shrinks by `size` bytes.
        forStats(small, [&](int i) { st.inactive_split_bytes[i].decrease(size); });
      } else {
        // A previously unsplit block becomes split: the remainder is a new inactive split.
        forStats(small, [&](int i) {
          st.inactive_split_bytes[i].increase(static_cast<int64_t>(rest->size));
          st.inactive_split[i].increase(1);
        });
      }
    } else if (already_split) {
      // An already split block becomes active.
      forStats(small, [&](int i) {
        st.inactive_split_bytes[i].decrease(static_cast<int64_t>(b->size));
        st.inactive_split[i].decrease(1);
      });
    }
    b->allocated = true;
    b->requested = requested;
    b->stream_uses = 0;
    liveInsert(b);
    const int64_t bytes = static_cast<int64_t>(b->size);
    forStats(small, [&](int i) {
      st.allocation[i].increase(1);
      st.allocated_bytes[i].increase(bytes);
      st.active[i].increase(1);
      st.active_bytes[i].increase(bytes);
      st.requested_bytes[i].increase(static_cast<int64_t>(requested));
    });
    return reinterpret_cast<void*>(b->ptr);
  }

  // ---- free --------------------------------------------------------------------------------
  // Merges src into dst when src is free and cached; returns the bytes taken over.
  size_t tryMerge(Block* dst, Block* src) {
    if (!src || src->allocated || src->event_count > 0) return 0;
    poolErase(src);
    if (dst->prev == src) {
      dst->ptr = src->ptr;
      dst->prev = src->prev;
      if (dst->prev) dst->prev->next = dst;
    } else {
      dst->next = src->next;
      if (dst->next) dst->next->prev = dst;
    }
    const size_t subsumed = src->size;
    dst->size += subsumed;
    retireBlock(src);
    return subsumed;
  }

  // Returns an inactive block (no pending events) to its pool (c10's free_block).
  void freeBlock(Block* b) {
    const int64_t original_size = static_cast<int64_t>(b->size);
    const int64_t requested = static_cast<int64_t>(b->requested);
    int64_t split_blocks = 0, split_bytes = 0;
    Block* candidates[2] = {b->prev, b->next};
    for (Block* c : candidates) {
      const size_t subsumed = tryMerge(b, c);
      if (subsumed > 0) {
        split_blocks -= 1;
        split_bytes -= static_cast<int64_t>(subsumed);
      }
    }
    b->requested = 0;
    poolInsert(b);
    if (b->isSplit()) {
      split_blocks += 1;
      split_bytes += static_cast<int64_t>(b->size);
    }
    forStats(b->small, [&](int i) {
      if (split_blocks > 0) st.inactive_split[i].increase(split_blocks);
      if (split_blocks < 0) st.inactive_split[i].decrease(-split_blocks);
      if (split_bytes > 0) st.inactive_split_bytes[i].increase(split_bytes);
      if (split_bytes < 0) st.inactive_split_bytes[i].decrease(-split_bytes);
      st.active[i].decrease(1);
      st.active_bytes[i].decrease(original_size);
      st.requested_bytes[i].decrease(requested);
    });
  }

  void eventDone(Block* b) {
    if (--b->event_count == 0) freeBlock(b);
  }

  // Returns the blocks whose recordStream events have completed to their pools.
  void processEvents() {
    if (pending.empty()) return;
    size_t keep = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      bool done = true;
      try {
        done = pending[i].first.query();
      } catch (const ClError&) {
        done = true;  // the stream failed; nothing will use the block any more
      }
      if (done) {
        eventDone(pending[i].second);
      } else {
        if (keep != i) pending[keep] = std::move(pending[i]);
        ++keep;
      }
    }
    pending.resize(keep);
  }

  void synchronizeEvents() {
    st.num_sync_all_streams++;
    for (auto& [event, block] : pending) {
      try {
        event.synchronize();
      } catch (const ClError&) {
        // as in processEvents
      }
      eventDone(block);
    }
    pending.clear();
  }

  void releaseSegment(Block* b) {
    Segment* s = b->segment;
    const bool small = b->small;
    const size_t size = s->size;
    poolErase(b);
    table.set(s->base, size, nullptr);
    va.give(s->base, size);
    segments.erase(s->base);  // releases the cl_mem
    retireBlock(b);
    st.num_device_free++;
    forStats(small, [&](int i) {
      st.segment[i].decrease(1);
      st.reserved_bytes[i].decrease(static_cast<int64_t>(size));
    });
  }

  // c10's release_cached_blocks: waits for pending events, then releases every segment of the
  // general memory pool that is one free block. Graph memory pools keep theirs: a graph's
  // replays write to the blocks it was captured with, freed or not.
  void releaseCached() {
    synchronizeEvents();
    for (BlockPool* pool : {&small_pool, &large_pool}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = *it;
        ++it;
        if (!b->isSplit() && b->mempool == 0) releaseSegment(b);
      }
    }
    trimSpareBlocks();
  }

  // The graph memory pool `mempool` is no longer used by any graph: its segments that are one
  // free block are released, the others join the general pool (their live blocks are tensors
  // someone still holds).
  void releaseMempool(int mempool) {
    synchronizeEvents();  // every block of the pool is then live or in a pool set
    std::vector<Segment*> segs;
    for (auto& [base, seg] : segments)
      if (seg->mempool == mempool) segs.push_back(seg.get());
    for (Segment* s : segs) {
      Block* first = nullptr;
      for (Block* b : small_pool)
        if (b->segment == s && !b->prev) first = b;
      for (Block* b : large_pool)
        if (b->segment == s && !b->prev) first = b;
      if (!first) {
        auto it = live.lower_bound(s->base);
        if (it != live.end() && it->second->segment == s) first = it->second;
      }
      while (first && first->prev) first = first->prev;
      s->mempool = 0;
      if (first && !first->isSplit() && !first->allocated) {
        releaseSegment(first);
        continue;
      }
      for (Block* b = first; b; b = b->next) {
        const bool pooled = !b->allocated;
        if (pooled) poolErase(b);
        b->mempool = 0;
        if (pooled) poolInsert(b);
      }
    }
  }

  [[noreturn]] void throwOutOfMemory(size_t size, const std::string& why) {
    st.num_ooms++;
    const DeviceInfo& info = dev.info();
    const uint64_t reserved = static_cast<uint64_t>(st.reserved_bytes[kAggregate].current);
    const uint64_t allocated = static_cast<uint64_t>(st.allocated_bytes[kAggregate].current);
    const uint64_t free_bytes = limit > reserved ? limit - reserved : 0;
    std::ostringstream os;
    os << "OpenCL out of memory. Tried to allocate " << formatSize(size) << ". Device " << name()
       << " (" << info.name << ") has a total capacity of " << formatSize(info.global_mem_size)
       << " (allocator limit " << formatSize(limit) << ") of which " << formatSize(free_bytes)
       << " is free. Of the allocated memory " << formatSize(allocated)
       << " is allocated by PyTorch, and " << formatSize(reserved - allocated)
       << " is reserved by PyTorch but unallocated. " << why;
    throw OutOfMemoryError(os.str());
  }
};

DeviceAllocator::DeviceAllocator(Device& dev, uint64_t memory_limit)
    : impl_(std::make_unique<Impl>(dev, memory_limit)) {}

DeviceAllocator::~DeviceAllocator() {
  // May run at process exit: release everything, throw nothing.
  try {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->pending.clear();
    impl_->small_pool.clear();
    impl_->large_pool.clear();
    impl_->live.clear();
    impl_->segments.clear();  // clReleaseMemObject for every segment
    impl_->block_store.clear();
  } catch (...) {
  }
}

void* DeviceAllocator::allocate(size_t nbytes, int stream_index) {
  checkStream(stream_index, "DeviceAllocator::allocate");
  if (nbytes == 0) return nullptr;
  Impl& m = *impl_;
  const uint64_t max_alloc = m.dev.info().max_mem_alloc_size;
  const uint64_t max_block = max_alloc / kMinBlockSize * kMinBlockSize;
  if (nbytes > max_alloc || roundSize(nbytes) > max_block)
    throw std::invalid_argument(
        "OpenCL device " + m.name() + " (" + m.dev.info().name + ") cannot allocate " +
        std::to_string(nbytes) + " bytes (" + formatSize(nbytes) +
        ") in one buffer: CL_DEVICE_MAX_MEM_ALLOC_SIZE is " + std::to_string(max_alloc) +
        " bytes (" + formatSize(max_alloc) + ")");
  const size_t size = roundSize(nbytes);
  const bool small = size <= kSmallSize;

  std::lock_guard<std::mutex> lock(m.mu);
  m.processEvents();
  BlockPool& pool = small ? m.small_pool : m.large_pool;
  const int mempool = m.capture_pool[stream_index];
  Block* b = m.findFree(pool, mempool, stream_index, size);
  if (!b) {
    const size_t seg_size = m.segmentSize(size);
    std::string why;
    b = m.newSegment(seg_size, stream_index, small, mempool, &why);
    if (!b) {
      // Free every cached segment and try once more.
      m.st.num_alloc_retries++;
      m.releaseCached();
      b = m.findFree(pool, mempool, stream_index, size);
      if (!b) b = m.newSegment(seg_size, stream_index, small, mempool, &why);
      if (!b) m.throwOutOfMemory(size, why);
    }
  }
  return m.allocFound(b, size, nbytes);
}

void DeviceAllocator::free(void* ptr) {
  if (!ptr) return;
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == m.live.end()) throw std::invalid_argument(m.unknownPointer("free", ptr));
  Block* b = it->second;
  const auto release = [&] {
    b->live_node = m.live.extract(it);
    b->allocated = false;
    const int64_t bytes = static_cast<int64_t>(b->size);
    Impl::forStats(b->small, [&](int i) {
      m.st.allocation[i].decrease(1);
      m.st.allocated_bytes[i].decrease(bytes);
    });
  };
  if (!b->stream_uses) {
    release();
    m.freeBlock(b);
    return;
  }
  // Used on other streams: the block returns to its pool once markers on those streams have
  // passed. Record them first: if that throws, the block stays allocated and nothing changed.
  std::array<Event, kStreamsPerDevice> events;
  int n_events = 0;
  for (int s = 0; s < kStreamsPerDevice; ++s)
    if (b->stream_uses & (1u << s)) events[n_events++].record(m.dev, s);
  release();
  b->stream_uses = 0;
  b->event_count = n_events;
  for (int i = 0; i < n_events; ++i) m.pending.emplace_back(std::move(events[i]), b);
}

BufferRef DeviceAllocator::resolve(const void* ptr) const {
  const Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  const Block* b = m.liveBlockContaining(reinterpret_cast<uintptr_t>(ptr));
  if (!b) throw std::invalid_argument(m.unknownPointer("resolve", ptr));
  return {b->segment->mem.get(), reinterpret_cast<uintptr_t>(ptr) - b->segment->base};
}

BufferRef DeviceAllocator::resolveUnchecked(const void* ptr) const noexcept {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  const Segment* s = impl_->table.get(p);
  if (!s || p - s->base >= s->size) return {};
  return {s->mem.get(), p - s->base};
}

bool DeviceAllocator::owns(const void* ptr) const {
  return impl_->va.contains(reinterpret_cast<uintptr_t>(ptr));  // immutable: no lock needed
}

size_t DeviceAllocator::blockSize(const void* ptr) const {
  const Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == m.live.end()) throw std::invalid_argument(m.unknownPointer("blockSize", ptr));
  return it->second->size;
}

void DeviceAllocator::recordStream(const void* ptr, int stream_index) {
  checkStream(stream_index, "DeviceAllocator::recordStream");
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  Block* b = m.liveBlockContaining(reinterpret_cast<uintptr_t>(ptr));
  if (!b) throw std::invalid_argument(m.unknownPointer("recordStream", ptr));
  // Uses on the allocation stream need no synchronization.
  if (stream_index != b->stream) b->stream_uses |= 1u << stream_index;
}

void DeviceAllocator::beginPoolCapture(int stream_index, int mempool) {
  checkStream(stream_index, "DeviceAllocator::beginPoolCapture");
  if (mempool <= 0) throw std::invalid_argument("beginPoolCapture: memory pool ids are > 0");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->capture_pool[stream_index] = mempool;
}

void DeviceAllocator::endPoolCapture(int stream_index) {
  checkStream(stream_index, "DeviceAllocator::endPoolCapture");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->capture_pool[stream_index] = 0;
}

void DeviceAllocator::releasePool(int mempool) {
  if (mempool <= 0) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (int& p : impl_->capture_pool)
    if (p == mempool) p = 0;
  impl_->releaseMempool(mempool);
}

size_t DeviceAllocator::poolReservedBytes(int mempool) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  size_t n = 0;
  for (auto& [base, seg] : impl_->segments)
    if (seg->mempool == mempool) n += seg->size;
  return n;
}

void DeviceAllocator::emptyCache() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->releaseCached();
}

AllocatorStats DeviceAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->st;
}

void DeviceAllocator::resetPeakStats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  AllocatorStats& s = impl_->st;
  for (StatArray* a :
       {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
        &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& stat : *a) stat.resetPeak();
  s.oversize_allocations.resetPeak();
  s.oversize_segments.resetPeak();
}

void DeviceAllocator::resetAccumulatedStats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  AllocatorStats& s = impl_->st;
  for (StatArray* a :
       {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
        &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& stat : *a) stat.resetAccumulated();
  s.num_alloc_retries = 0;
  s.num_ooms = 0;
  s.num_sync_all_streams = 0;
  s.num_device_alloc = 0;
  s.num_device_free = 0;
  s.oversize_allocations.resetAccumulated();
  s.oversize_segments.resetAccumulated();
}

void DeviceAllocator::setMemoryLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->limit = bytes ? bytes : impl_->dev.info().global_mem_size;
}

uint64_t DeviceAllocator::memoryLimit() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->limit;
}

Device& DeviceAllocator::device() const {
  return impl_->dev;
}

// ---- pinned host memory ----------------------------------------------------------------------

namespace {

// Constructed on first use and never destroyed, so that pinned memory freed late at process
// exit still finds its entry (no static-destructor ordering problems).
template <typename T>
class NoDestructor {
 public:
  NoDestructor() { ::new (static_cast<void*>(storage_)) T(); }
  T& get() { return *std::launder(reinterpret_cast<T*>(storage_)); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

struct PinnedEntry {
  Mem mem;
  Device* dev = nullptr;
  size_t size = 0;
};

struct PinnedRegistry {
  std::mutex mu;
  std::map<uintptr_t, PinnedEntry> entries;  // host pointer -> allocation
  // Per device, a queue of our own for the map at allocation and the unmap at release. A fresh
  // buffer has no commands pending anywhere, but a blocking map on a stream waits for all the
  // work queued there before it: on stream 0 every pinned staging buffer that the caching host
  // allocator had to create in a training step (foreach tables) waited for the whole backward
  // pass (1.3-1.6 s of aten::empty in AdamW's first foreach op under PoCL). Created on first
  // use, kept for the life of the process like the registry.
  std::map<const Device*, Queue> map_queues;
};

PinnedRegistry& pinnedRegistry() {
  static NoDestructor<PinnedRegistry> registry;
  return registry.get();
}

// The queue that maps and unmaps pinned buffers of dev; nothing else is ever enqueued on it.
cl_command_queue mapQueue(PinnedRegistry& reg, Device& dev) {
  std::lock_guard<std::mutex> lock(reg.mu);
  Queue& q = reg.map_queues[&dev];
  if (!q) {
    cl_int err = CL_SUCCESS;
    Queue created(clCreateCommandQueue(dev.context(), dev.id(), 0, &err));
    OCL_CHECK_ERR(err, "clCreateCommandQueue(pinned host memory)");
    q = std::move(created);
  }
  return q.get();
}

}  // namespace

void* PinnedHostMemory::allocate(Device& dev, size_t nbytes) {
  if (nbytes == 0) return nullptr;
  cl_int err = CL_SUCCESS;
  Mem mem(clCreateBuffer(dev.context(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, nbytes, nullptr,
                         &err));
  if (err != CL_SUCCESS && isOutOfMemoryCode(err))
    throw OutOfMemoryError("OpenCL out of memory. Tried to allocate " + formatSize(nbytes) +
                           " of pinned host memory for device ocl:" + std::to_string(dev.index()) +
                           " (clCreateBuffer failed with " + clErrorName(err) + ")");
  OCL_CHECK_ERR(err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, " + std::to_string(nbytes) + ")");
  PinnedRegistry& reg = pinnedRegistry();
  void* host = clEnqueueMapBuffer(mapQueue(reg, dev), mem.get(), CL_TRUE,
                                  CL_MAP_READ | CL_MAP_WRITE, 0, nbytes, 0, nullptr, nullptr, &err);
  OCL_CHECK_ERR(err, "clEnqueueMapBuffer(pinned host memory)");
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.entries[reinterpret_cast<uintptr_t>(host)] = PinnedEntry{std::move(mem), &dev, nbytes};
  return host;
}

void PinnedHostMemory::free(void* ptr) {
  if (!ptr) return;
  PinnedRegistry& reg = pinnedRegistry();
  PinnedEntry entry;
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.entries.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == reg.entries.end())
      throw std::invalid_argument("PinnedHostMemory::free: " + hexPtr(ptr) +
                                  " is not the start of a live pinned allocation");
    entry = std::move(it->second);
    reg.entries.erase(it);
  }
  // The cl_mem is released when `entry` goes out of scope, also if unmapping fails. The caller
  // guarantees that no stream uses the memory any more (the caching host allocator frees a
  // block only after its events completed), so the unmap waits for nothing else either.
  cl_command_queue q = mapQueue(reg, *entry.dev);
  OCL_CHECK(clEnqueueUnmapMemObject(q, entry.mem.get(), ptr, 0, nullptr, nullptr));
  OCL_CHECK(clFinish(q));
}

bool PinnedHostMemory::isPinned(const void* ptr) {
  if (!ptr) return false;
  PinnedRegistry& reg = pinnedRegistry();
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.entries.upper_bound(p);
  if (it == reg.entries.begin()) return false;
  --it;
  return p - it->first < it->second.size;
}

}  // namespace torch_ocl::rt
