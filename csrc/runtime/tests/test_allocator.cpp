// Tests of the caching device allocator and of pinned host memory against a real OpenCL device
// (PoCL's CPU device in CI).
#include "runtime/allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <numeric>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace torch_ocl::rt {
namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;

// Releases a user event in the destructor, so that a failing test never leaves a stream blocked.
class UserEventGate {
 public:
  explicit UserEventGate(Device& dev) {
    cl_int err = CL_SUCCESS;
    ev_ = ClEvent(clCreateUserEvent(dev.context(), &err));
    OCL_CHECK_ERR(err, "clCreateUserEvent");
  }
  ~UserEventGate() { open(); }
  // Makes every later command of the stream wait for open().
  void block(Device& dev, int stream) {
    cl_event e = ev_.get();
    OCL_CHECK(clEnqueueBarrierWithWaitList(dev.queue(stream), 1, &e, nullptr));
    OCL_CHECK(clFlush(dev.queue(stream)));
  }
  void open() {
    if (!open_) clSetUserEventStatus(ev_.get(), CL_COMPLETE);
    open_ = true;
  }

 private:
  ClEvent ev_;
  bool open_ = false;
};

class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Runtime::get().deviceCount() == 0)
      GTEST_SKIP() << "no OpenCL device: " << Runtime::get().discoveryError();
    dev_ = &Runtime::get().device(0);
    alloc_ = std::make_unique<DeviceAllocator>(*dev_);
  }
  void TearDown() override {
    if (dev_) dev_->synchronize();
  }

  Device& dev() { return *dev_; }
  DeviceAllocator& alloc() { return *alloc_; }
  AllocatorStats stats() { return alloc_->stats(); }

  void write(const void* p, const std::vector<uint8_t>& data) {
    BufferRef r = alloc().resolve(p);
    OCL_CHECK(clEnqueueWriteBuffer(dev().queue(0), r.mem, CL_TRUE, r.offset, data.size(),
                                   data.data(), 0, nullptr, nullptr));
  }
  std::vector<uint8_t> read(const void* p, size_t n) {
    std::vector<uint8_t> out(n);
    BufferRef r = alloc().resolve(p);
    OCL_CHECK(clEnqueueReadBuffer(dev().queue(0), r.mem, CL_TRUE, r.offset, n, out.data(), 0,
                                  nullptr, nullptr));
    return out;
  }
  static std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
    return v;
  }

  Device* dev_ = nullptr;
  std::unique_ptr<DeviceAllocator> alloc_;
};

uintptr_t addr(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

TEST_F(AllocatorTest, ZeroBytesAndNull) {
  EXPECT_EQ(alloc().allocate(0), nullptr);
  alloc().free(nullptr);  // no-op
  EXPECT_EQ(stats().num_device_alloc, 0);
  EXPECT_EQ(&alloc().device(), &dev());
  EXPECT_EQ(alloc().memoryLimit(), dev().info().global_mem_size);
  EXPECT_EQ(stats().max_split_size, -1);
}

TEST_F(AllocatorTest, DistinctNonOverlappingBlocksWithRoundedSizes) {
  const std::vector<size_t> sizes = {1,       511,     512,         513,          4 * KiB,
                                     1 * MiB, MiB + 1, 5 * MiB + 3, 12 * MiB + 1, 100};
  std::vector<std::pair<uintptr_t, size_t>> ranges;
  for (size_t n : sizes) {
    void* p = alloc().allocate(n);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(alloc().owns(p));
    EXPECT_EQ(addr(p) % 512, 0u);
    size_t bs = alloc().blockSize(p);
    EXPECT_EQ(bs, std::max<size_t>(512, (n + 511) / 512 * 512)) << n;
    ranges.emplace_back(addr(p), bs);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i - 1].first + ranges[i - 1].second, ranges[i].first);
  for (auto& r : ranges) alloc().free(reinterpret_cast<void*>(r.first));
  EXPECT_EQ(stats().allocated_bytes[kAggregate].current, 0);
  EXPECT_EQ(stats().allocation[kAggregate].current, 0);
  EXPECT_EQ(stats().active[kAggregate].current, 0);
  EXPECT_EQ(stats().requested_bytes[kAggregate].current, 0);
}

TEST_F(AllocatorTest, ResolveMapsInteriorPointers) {
  char* a = static_cast<char*>(alloc().allocate(3 * KiB));
  char* b = static_cast<char*>(alloc().allocate(1 * KiB));
  BufferRef ra = alloc().resolve(a);
  BufferRef rb = alloc().resolve(b);
  ASSERT_NE(ra.mem, nullptr);
  EXPECT_EQ(ra.mem, rb.mem);  // same 2 MiB small segment
  EXPECT_EQ(rb.offset, ra.offset + 3 * KiB);
  BufferRef ri = alloc().resolve(a + 100);
  EXPECT_EQ(ri.mem, ra.mem);
  EXPECT_EQ(ri.offset, ra.offset + 100);
  EXPECT_EQ(alloc().resolve(a + 3 * KiB - 1).offset, ra.offset + 3 * KiB - 1);
  EXPECT_EQ(alloc().resolve(b + 1023).offset, rb.offset + 1023);
  // Past the last live block: free space of the segment.
  EXPECT_THROW(alloc().resolve(b + 1 * KiB), std::invalid_argument);
  int local = 0;
  EXPECT_FALSE(alloc().owns(&local));
  try {
    alloc().resolve(&local);
    FAIL() << "resolve of a host address must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not allocated by the ocl:0 allocator"), std::string::npos)
        << e.what();
  }
  alloc().free(a);
  EXPECT_THROW(alloc().resolve(a), std::invalid_argument);
  EXPECT_THROW(alloc().resolve(a + 5), std::invalid_argument);
  EXPECT_THROW(alloc().blockSize(a), std::invalid_argument);
  EXPECT_TRUE(alloc().owns(a));  // still inside the reserved range
  alloc().free(b);
}

TEST_F(AllocatorTest, ResolveUncheckedMatchesResolveInsideLiveSegments) {
  char* a = static_cast<char*>(alloc().allocate(3 * KiB));
  char* big = static_cast<char*>(alloc().allocate(12 * MiB));  // a large-pool segment
  for (char* p : {a, a + 1, a + 3 * KiB - 1, big, big + 5 * MiB + 7, big + 12 * MiB - 1}) {
    BufferRef checked = alloc().resolve(p), fast = alloc().resolveUnchecked(p);
    EXPECT_EQ(fast.mem, checked.mem);
    EXPECT_EQ(fast.offset, checked.offset);
  }
  int local = 0;
  EXPECT_EQ(alloc().resolveUnchecked(&local).mem, nullptr);  // not ours
  EXPECT_EQ(alloc().resolveUnchecked(nullptr).mem, nullptr);
  alloc().free(a);
  alloc().free(big);
  alloc().emptyCache();  // segments released: their addresses resolve to nothing
  EXPECT_EQ(alloc().resolveUnchecked(a).mem, nullptr);
  EXPECT_EQ(alloc().resolveUnchecked(big + 5 * MiB).mem, nullptr);
}

TEST_F(AllocatorTest, BlocksDoNotAlias) {
  // Small blocks sharing a segment, and large blocks sharing a segment.
  for (size_t n : {1 * KiB, 3 * MiB}) {
    std::vector<void*> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(alloc().allocate(n));
    for (int i = 0; i < 4; ++i) write(ps[i], pattern(n, static_cast<uint8_t>(i * 31 + 1)));
    // Overwrite the middle of block 1 through an interior pointer.
    auto mid = pattern(n / 2, 200);
    write(static_cast<char*>(ps[1]) + n / 4, mid);
    for (int i = 0; i < 4; ++i) {
      auto expect = pattern(n, static_cast<uint8_t>(i * 31 + 1));
      if (i == 1) std::copy(mid.begin(), mid.end(), expect.begin() + n / 4);
      EXPECT_EQ(read(ps[i], n), expect) << "block " << i << " of size " << n;
    }
    for (void* p : ps) alloc().free(p);
  }
}

TEST_F(AllocatorTest, SplitSharesOneSegment) {
  void* a = alloc().allocate(1 * KiB);
  void* b = alloc().allocate(1 * KiB);
  AllocatorStats s = stats();
  EXPECT_EQ(s.segment[kAggregate].current, 1);
  EXPECT_EQ(s.segment[kSmallPool].current, 1);
  EXPECT_EQ(s.segment[kLargePool].current, 0);
  EXPECT_EQ(s.reserved_bytes[kSmallPool].current, static_cast<int64_t>(kSmallBuffer));
  EXPECT_EQ(s.num_device_alloc, 1);
  EXPECT_EQ(s.allocation[kSmallPool].current, 2);
  EXPECT_EQ(s.inactive_split[kAggregate].current, 1);  // the remainder
  EXPECT_EQ(s.inactive_split_bytes[kAggregate].current,
            static_cast<int64_t>(kSmallBuffer - 2 * KiB));
  EXPECT_EQ(alloc().resolve(a).mem, alloc().resolve(b).mem);
  EXPECT_EQ(alloc().resolve(a).offset, 0u);
  EXPECT_EQ(alloc().resolve(b).offset, 1 * KiB);
  alloc().free(a);
  alloc().free(b);
  s = stats();
  EXPECT_EQ(s.inactive_split[kAggregate].current, 0);  // merged back into one block
  EXPECT_EQ(s.inactive_split_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.segment[kAggregate].current, 1);  // cached
}

TEST_F(AllocatorTest, MergedNeighboursAreReused) {
  // Fill one small segment exactly: 512 KiB + 512 KiB + 1 MiB.
  void* a = alloc().allocate(512 * KiB);
  void* b = alloc().allocate(512 * KiB);
  void* c = alloc().allocate(1 * MiB);
  EXPECT_EQ(stats().segment[kAggregate].current, 1);
  EXPECT_EQ(stats().inactive_split[kAggregate].current, 0);
  alloc().free(a);
  EXPECT_EQ(stats().inactive_split[kAggregate].current, 1);
  alloc().free(b);
  AllocatorStats s = stats();
  EXPECT_EQ(s.inactive_split[kAggregate].current, 1);  // a and b merged
  EXPECT_EQ(s.inactive_split_bytes[kAggregate].current, static_cast<int64_t>(1 * MiB));
  // Only the merged space can hold 1 MiB.
  void* d = alloc().allocate(1 * MiB);
  EXPECT_EQ(d, a);
  EXPECT_EQ(stats().num_device_alloc, 1);
  EXPECT_EQ(stats().inactive_split[kAggregate].current, 0);
  alloc().free(c);
  alloc().free(d);
  EXPECT_EQ(stats().inactive_split[kAggregate].current, 0);

  // Large pool: 4 MiB out of a 20 MiB segment, the remainder split off and merged back.
  void* l1 = alloc().allocate(4 * MiB);
  void* l2 = alloc().allocate(4 * MiB);
  EXPECT_EQ(addr(l2), addr(l1) + 4 * MiB);
  EXPECT_EQ(stats().segment[kLargePool].current, 1);
  alloc().free(l1);
  alloc().free(l2);
  void* l3 = alloc().allocate(16 * MiB);  // fits only after l1, l2 and the rest merged
  EXPECT_EQ(l3, l1);
  EXPECT_EQ(stats().segment[kLargePool].current, 1);
  EXPECT_EQ(stats().num_device_alloc, 2);
  alloc().free(l3);
}

TEST_F(AllocatorTest, LargeBlocksSplitOnlyAboveOneMiBRemainder) {
  // 19.5 MiB from a 20 MiB segment: the 0.5 MiB remainder stays part of the block.
  void* p = alloc().allocate(19 * MiB + 512 * KiB);
  EXPECT_EQ(alloc().blockSize(p), 20 * MiB);
  EXPECT_EQ(stats().reserved_bytes[kLargePool].current, static_cast<int64_t>(20 * MiB));
  EXPECT_EQ(stats().allocated_bytes[kLargePool].current, static_cast<int64_t>(20 * MiB));
  EXPECT_EQ(stats().requested_bytes[kLargePool].current,
            static_cast<int64_t>(19 * MiB + 512 * KiB));
  EXPECT_EQ(stats().inactive_split[kLargePool].current, 0);
  alloc().free(p);
  // 8.5 MiB from a 20 MiB segment: the 11.5 MiB remainder is split off.
  p = alloc().allocate(8 * MiB + 512 * KiB);
  EXPECT_EQ(alloc().blockSize(p), 8 * MiB + 512 * KiB);
  EXPECT_EQ(stats().inactive_split[kLargePool].current, 1);
  alloc().free(p);
  // A small request never comes from the large pool.
  void* q = alloc().allocate(1 * MiB);
  EXPECT_EQ(stats().segment[kSmallPool].current, 1);
  alloc().free(q);
}

TEST_F(AllocatorTest, ReuseOnSameStream) {
  void* p = alloc().allocate(1 * MiB);
  alloc().free(p);
  void* q = alloc().allocate(1 * MiB);
  EXPECT_EQ(p, q);
  void* r = alloc().allocate(8 * MiB);
  alloc().free(r);
  void* t = alloc().allocate(8 * MiB);
  EXPECT_EQ(r, t);
  EXPECT_EQ(stats().num_device_alloc, 2);
  alloc().free(q);
  alloc().free(t);
}

TEST_F(AllocatorTest, NoReuseAcrossStreams) {
  void* p = alloc().allocate(4 * MiB, 0);
  alloc().free(p);
  void* q = alloc().allocate(4 * MiB, 1);
  EXPECT_NE(p, q);
  EXPECT_EQ(stats().num_device_alloc, 2);  // the cached segment belongs to stream 0
  void* r = alloc().allocate(4 * MiB, 0);
  EXPECT_EQ(r, p);
  EXPECT_EQ(stats().num_device_alloc, 2);
  alloc().free(q);
  alloc().free(r);
  EXPECT_THROW(alloc().allocate(16, kStreamsPerDevice), std::out_of_range);
  EXPECT_THROW(alloc().allocate(16, -1), std::out_of_range);
}

TEST_F(AllocatorTest, RecordStreamDelaysReuseUntilEventCompletes) {
  UserEventGate gate(dev());
  gate.block(dev(), 1);  // stream 1 cannot make progress until gate.open()

  void* p = alloc().allocate(4 * MiB, 0);
  alloc().recordStream(p, 0);  // the allocation stream: no effect
  alloc().recordStream(static_cast<char*>(p) + 100, 1);
  alloc().free(p);
  AllocatorStats s = stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.active[kAggregate].current, 1);  // still waiting for stream 1
  EXPECT_EQ(s.active_bytes[kAggregate].current, static_cast<int64_t>(4 * MiB));

  void* q = alloc().allocate(4 * MiB, 0);
  EXPECT_NE(q, p);                         // p is not reusable yet
  EXPECT_EQ(stats().num_device_alloc, 1);  // q came from the rest of the segment

  gate.open();
  OCL_CHECK(clFinish(dev().queue(1)));
  void* r = alloc().allocate(4 * MiB, 0);  // processes the completed event first
  EXPECT_EQ(r, p);
  EXPECT_EQ(stats().active[kAggregate].current, 2);
  alloc().free(q);
  alloc().free(r);
  EXPECT_EQ(stats().active[kAggregate].current, 0);
}

TEST_F(AllocatorTest, EmptyCacheWaitsForRecordedStreams) {
  UserEventGate gate(dev());
  gate.block(dev(), 2);
  void* p = alloc().allocate(2 * MiB, 0);
  alloc().recordStream(p, 2);
  alloc().free(p);
  EXPECT_EQ(stats().active[kAggregate].current, 1);
  gate.open();
  const int64_t syncs = stats().num_sync_all_streams;
  alloc().emptyCache();
  AllocatorStats s = stats();
  EXPECT_EQ(s.active[kAggregate].current, 0);
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.segment[kAggregate].current, 0);
  EXPECT_EQ(s.num_sync_all_streams, syncs + 1);
  EXPECT_THROW(alloc().recordStream(p, 1), std::invalid_argument);
}

TEST_F(AllocatorTest, StatsPeaksAndResets) {
  void* a = alloc().allocate(1000);         // 1024 bytes, small
  void* b = alloc().allocate(3 * MiB + 1);  // 3 MiB + 512, large
  AllocatorStats s = stats();
  EXPECT_EQ(s.allocated_bytes[kSmallPool].current, 1024);
  EXPECT_EQ(s.allocated_bytes[kLargePool].current, static_cast<int64_t>(3 * MiB + 512));
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, static_cast<int64_t>(3 * MiB + 1536));
  EXPECT_EQ(s.requested_bytes[kAggregate].current, static_cast<int64_t>(3 * MiB + 1001));
  EXPECT_EQ(s.reserved_bytes[kAggregate].current,
            static_cast<int64_t>(kSmallBuffer + kLargeBuffer));
  EXPECT_EQ(s.allocation[kAggregate].current, 2);
  EXPECT_EQ(s.active[kAggregate].current, 2);
  EXPECT_EQ(s.segment[kAggregate].current, 2);
  alloc().free(b);
  s = stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 1024);
  EXPECT_EQ(s.allocated_bytes[kAggregate].peak, static_cast<int64_t>(3 * MiB + 1536));
  EXPECT_EQ(s.allocated_bytes[kAggregate].allocated, static_cast<int64_t>(3 * MiB + 1536));
  EXPECT_EQ(s.allocated_bytes[kAggregate].freed, static_cast<int64_t>(3 * MiB + 512));
  EXPECT_EQ(s.allocation[kAggregate].allocated, 2);
  EXPECT_EQ(s.allocation[kAggregate].freed, 1);
  alloc().resetPeakStats();
  s = stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].peak, 1024);
  EXPECT_EQ(s.reserved_bytes[kAggregate].peak, s.reserved_bytes[kAggregate].current);
  alloc().resetAccumulatedStats();
  s = stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].allocated, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].freed, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 1024);  // current is kept
  EXPECT_EQ(s.num_device_alloc, 0);
  alloc().free(a);
  s = stats();
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].freed, 1024);
  EXPECT_EQ(s.requested_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.active_bytes[kAggregate].current, 0);
  EXPECT_GT(s.reserved_bytes[kAggregate].current, 0);  // still cached
}

TEST_F(AllocatorTest, EmptyCacheReleasesFreeSegmentsOnly) {
  void* keep = alloc().allocate(1 * KiB);
  std::vector<void*> ps;
  for (size_t n : {2 * KiB, 1 * MiB, 1 * MiB, 6 * MiB, 30 * MiB}) ps.push_back(alloc().allocate(n));
  for (void* p : ps) alloc().free(p);
  alloc().emptyCache();
  AllocatorStats s = stats();
  // Only the small segment with the live block stays.
  EXPECT_EQ(s.segment[kAggregate].current, 1);
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, static_cast<int64_t>(kSmallBuffer));
  EXPECT_EQ(s.num_device_free, s.num_device_alloc - 1);
  EXPECT_EQ(read(keep, 4).size(), 4u);  // still usable
  alloc().free(keep);
  alloc().emptyCache();
  s = stats();
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.segment[kAggregate].current, 0);
  EXPECT_EQ(s.inactive_split[kAggregate].current, 0);
  EXPECT_EQ(s.num_device_free, s.num_device_alloc);
  // Usable after emptying.
  void* p = alloc().allocate(5 * MiB);
  write(p, pattern(64, 9));
  EXPECT_EQ(read(p, 64), pattern(64, 9));
  alloc().free(p);
}

TEST_F(AllocatorTest, OutOfMemoryThenStillUsable) {
  alloc().setMemoryLimit(32 * MiB);
  EXPECT_EQ(alloc().memoryLimit(), 32 * MiB);
  try {
    alloc().allocate(64 * MiB);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("OpenCL out of memory. Tried to allocate 64.00 MiB"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("ocl:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find(dev().info().name), std::string::npos) << msg;
    EXPECT_NE(msg.find("allocator limit 32.00 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reserved by PyTorch but unallocated"), std::string::npos) << msg;
  }
  AllocatorStats s = stats();
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, 0);
  void* p = alloc().allocate(1 * MiB);
  ASSERT_NE(p, nullptr);
  write(p, pattern(1 * MiB, 3));
  EXPECT_EQ(read(p, 1 * MiB), pattern(1 * MiB, 3));
  alloc().free(p);
  alloc().setMemoryLimit(0);
  EXPECT_EQ(alloc().memoryLimit(), dev().info().global_mem_size);
}

TEST_F(AllocatorTest, LimitFreesCacheAndRetries) {
  void* big = alloc().allocate(20 * MiB);  // a 20 MiB segment, cached after free
  alloc().free(big);
  alloc().setMemoryLimit(32 * MiB);
  void* p = alloc().allocate(24 * MiB);  // 20 + 24 > 32: release the cache, then it fits
  ASSERT_NE(p, nullptr);
  AllocatorStats s = stats();
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.reserved_bytes[kAggregate].current, static_cast<int64_t>(24 * MiB));
  EXPECT_EQ(s.num_device_free, 1);
  alloc().free(p);
}

TEST_F(AllocatorTest, RequestAboveMaxAllocSize) {
  const uint64_t max_alloc = dev().info().max_mem_alloc_size;
  try {
    alloc().allocate(static_cast<size_t>(max_alloc) + 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(max_alloc)), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(max_alloc + 1)), std::string::npos) << msg;
  }
  EXPECT_EQ(stats().num_ooms, 0);
  EXPECT_EQ(stats().num_device_alloc, 0);
}

TEST_F(AllocatorTest, LargePoolSegmentSizes) {
  struct Case {
    size_t request, segment;
  };
  const size_t max_alloc = static_cast<size_t>(dev().info().max_mem_alloc_size);
  const std::vector<Case> cases = {
      {1 * MiB + 1, kLargeBuffer}, {10 * MiB - 512, kLargeBuffer}, {10 * MiB, 10 * MiB},
      {12 * MiB + 1, 14 * MiB},    {33 * MiB, 34 * MiB},           {512, kSmallBuffer},
  };
  for (const Case& c : cases) {
    DeviceAllocator a(dev());
    void* p = a.allocate(c.request);
    AllocatorStats s = a.stats();
    EXPECT_EQ(s.reserved_bytes[kAggregate].current,
              static_cast<int64_t>(std::min(c.segment, max_alloc)))
        << c.request;
    EXPECT_EQ(s.num_device_alloc, 1);
    a.free(p);
  }
}

TEST_F(AllocatorTest, FreeOfUnknownPointerThrows) {
  int local = 0;
  EXPECT_THROW(alloc().free(&local), std::invalid_argument);
  void* p = alloc().allocate(4 * KiB);
  EXPECT_THROW(alloc().free(static_cast<char*>(p) + 512), std::invalid_argument);  // interior
  EXPECT_THROW(alloc().recordStream(p, kStreamsPerDevice), std::out_of_range);
  alloc().free(p);
  EXPECT_THROW(alloc().free(p), std::invalid_argument);  // double free
  EXPECT_EQ(stats().allocation[kAggregate].current, 0);
}

TEST_F(AllocatorTest, CachedFastPathNeedsNoDeviceAllocation) {
  // Not a timing test: checks the cached path stays on one segment and reports the speed.
  void* first = alloc().allocate(1 * MiB);
  alloc().free(first);
  constexpr int kIters = 200000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kIters; ++i) {
    void* p = alloc().allocate(1 * MiB);
    if (p != first) ADD_FAILURE() << "cached block not reused at iteration " << i;
    alloc().free(p);
  }
  auto t1 = std::chrono::steady_clock::now();
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kIters;
  std::printf("[ info     ] cached allocate+free of 1 MiB: %.1f ns\n", ns);
  EXPECT_EQ(stats().num_device_alloc, 1);
  EXPECT_EQ(stats().allocation[kAggregate].allocated, kIters + 1);
}

TEST_F(AllocatorTest, ConcurrentUse) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<void*> mine;
      for (int i = 0; i < 2000; ++i) {
        if (!mine.empty() && (rng() % 2 || mine.size() > 16)) {
          size_t k = rng() % mine.size();
          alloc().free(mine[k]);
          mine.erase(mine.begin() + static_cast<long>(k));
        } else {
          size_t n = 1 + rng() % (3 * MiB);
          void* p = alloc().allocate(n, t % 2);
          if (alloc().blockSize(p) < n) failures++;
          mine.push_back(p);
        }
      }
      for (void* p : mine) alloc().free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  AllocatorStats s = stats();
  EXPECT_EQ(s.allocation[kAggregate].current, 0);
  EXPECT_EQ(s.allocated_bytes[kAggregate].current, 0);
  EXPECT_EQ(s.active[kAggregate].current, 0);
  EXPECT_EQ(s.inactive_split[kAggregate].current, 0);  // everything merged back
  alloc().emptyCache();
  EXPECT_EQ(stats().reserved_bytes[kAggregate].current, 0);
}

TEST(AllocatorStat, IncreaseDecreaseSemantics) {
  Stat s;
  s.increase(10);
  s.increase(5);
  s.decrease(12);
  EXPECT_EQ(s.current, 3);
  EXPECT_EQ(s.peak, 15);
  EXPECT_EQ(s.allocated, 15);
  EXPECT_EQ(s.freed, 12);
  s.resetPeak();
  EXPECT_EQ(s.peak, 3);
  s.resetAccumulated();
  EXPECT_EQ(s.allocated, 0);
  EXPECT_EQ(s.freed, 0);
  EXPECT_EQ(s.current, 3);
}

TEST_F(AllocatorTest, PinnedHostMemory) {
  constexpr size_t n = 1 * MiB;
  EXPECT_EQ(PinnedHostMemory::allocate(dev(), 0), nullptr);
  auto* h = static_cast<uint8_t*>(PinnedHostMemory::allocate(dev(), n));
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(PinnedHostMemory::isPinned(h));
  EXPECT_TRUE(PinnedHostMemory::isPinned(h + n - 1));
  EXPECT_FALSE(PinnedHostMemory::isPinned(h + n));
  int local = 0;
  EXPECT_FALSE(PinnedHostMemory::isPinned(&local));
  EXPECT_FALSE(PinnedHostMemory::isPinned(nullptr));
  auto data = pattern(n, 42);
  std::memcpy(h, data.data(), n);
  // Use it as the source and destination of device copies.
  void* d = alloc().allocate(n);
  BufferRef r = alloc().resolve(d);
  OCL_CHECK(
      clEnqueueWriteBuffer(dev().queue(0), r.mem, CL_FALSE, r.offset, n, h, 0, nullptr, nullptr));
  OCL_CHECK(clFinish(dev().queue(0)));
  std::memset(h, 0, n);
  OCL_CHECK(
      clEnqueueReadBuffer(dev().queue(0), r.mem, CL_TRUE, r.offset, n, h, 0, nullptr, nullptr));
  EXPECT_EQ(0, std::memcmp(h, data.data(), n));
  alloc().free(d);
  EXPECT_THROW(PinnedHostMemory::free(h + 1), std::invalid_argument);
  PinnedHostMemory::free(h);
  EXPECT_FALSE(PinnedHostMemory::isPinned(h));
  EXPECT_THROW(PinnedHostMemory::free(h), std::invalid_argument);
  PinnedHostMemory::free(nullptr);
}

// A pinned buffer is mapped and unmapped on a queue of its own: allocating one while stream 0
// has work queued (here: a barrier on an unset user event, as if a long backward pass were
// queued) must not wait for that work. Before, the blocking map on stream 0 did; this test then
// never finishes the allocation until the gate opens.
TEST_F(AllocatorTest, PinnedHostMemoryWaitsForNoStream) {
  constexpr size_t n = 256 * KiB;
  UserEventGate gate(dev());
  gate.block(dev(), 0);
  auto done = std::async(std::launch::async, [&] {
    void* h = PinnedHostMemory::allocate(dev(), n);
    std::memset(h, 7, n);
    PinnedHostMemory::free(h);
    return h != nullptr;
  });
  // Generous: the allocation itself takes microseconds; only a wait for the gate exceeds this.
  const bool finished = done.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  gate.open();  // unblocks a waiting allocation, so that the test fails instead of hanging
  EXPECT_TRUE(finished) << "PinnedHostMemory::allocate/free waited for work queued on stream 0";
  EXPECT_TRUE(done.get());
  // The stream still runs after the gate, and pinned memory still works as a copy source there.
  auto* h = static_cast<uint8_t*>(PinnedHostMemory::allocate(dev(), n));
  auto data = pattern(n, 3);
  std::memcpy(h, data.data(), n);
  void* d = alloc().allocate(n);
  BufferRef r = alloc().resolve(d);
  OCL_CHECK(
      clEnqueueWriteBuffer(dev().queue(0), r.mem, CL_FALSE, r.offset, n, h, 0, nullptr, nullptr));
  std::vector<uint8_t> back(n);
  OCL_CHECK(clEnqueueReadBuffer(dev().queue(0), r.mem, CL_TRUE, r.offset, n, back.data(), 0,
                                nullptr, nullptr));
  EXPECT_EQ(0, std::memcmp(back.data(), data.data(), n));
  alloc().free(d);
  PinnedHostMemory::free(h);
}

}  // namespace
}  // namespace torch_ocl::rt
