// Tests of graph capture (runtime/graph.h) and of the allocator's graph memory pools against a
// real OpenCL device (PoCL's CPU device in CI).
#include "runtime/allocator.h"
#include "runtime/graph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace torch_ocl::rt {
namespace {

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Runtime::get().deviceCount() == 0)
      GTEST_SKIP() << "no OpenCL device: " << Runtime::get().discoveryError();
    dev_ = &Runtime::get().device(0);
  }
  std::vector<float> read(cl_mem m, size_t n) {
    std::vector<float> out(n);
    OCL_CHECK(clEnqueueReadBuffer(dev_->queue(0), m, CL_TRUE, 0, n * sizeof(float), out.data(), 0,
                                  nullptr, nullptr));
    return out;
  }
  Device* dev_ = nullptr;
};

TEST_F(GraphTest, RecordsFillAndCopyAndReplaysThem) {
  cl_int err = CL_SUCCESS;
  Mem a(clCreateBuffer(dev_->context(), CL_MEM_READ_WRITE, 64 * sizeof(float), nullptr, &err));
  Mem b(clCreateBuffer(dev_->context(), CL_MEM_READ_WRITE, 64 * sizeof(float), nullptr, &err));
  cl_command_queue q = dev_->queue(0);
  EXPECT_EQ(capture::graphOf(q), nullptr);
  CommandGraph g;
  capture::begin(q, &g);
  ASSERT_EQ(capture::graphOf(q), &g);
  const float two = 2.0f;
  OCL_CHECK(clEnqueueFillBuffer(q, a.get(), &two, sizeof(two), 0, 64 * sizeof(float), 0, nullptr,
                                nullptr));
  g.addFill(a.get(), &two, sizeof(two), 0, 64 * sizeof(float));
  OCL_CHECK(
      clEnqueueCopyBuffer(q, a.get(), b.get(), 0, 0, 32 * sizeof(float), 0, nullptr, nullptr));
  g.addCopy(a.get(), b.get(), 0, 0, 32 * sizeof(float));
  EXPECT_THROW(capture::refuse(q, "a test command"), CaptureError);
  EXPECT_FALSE(g.valid());
  capture::end(q);
  EXPECT_FALSE(capture::active());
  EXPECT_EQ(g.size(), 2u);
  const float zero = 0.0f;
  OCL_CHECK(clEnqueueFillBuffer(q, b.get(), &zero, sizeof(zero), 0, 64 * sizeof(float), 0, nullptr,
                                nullptr));
  g.replay(q);
  std::vector<float> got = read(b.get(), 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(got[i], i < 32 ? 2.0f : 0.0f) << i;
  EXPECT_NE(g.dump().find("copy"), std::string::npos);
}

TEST_F(GraphTest, MemoryPoolKeepsItsBlocksApartAndUntilReleased) {
  DeviceAllocator alloc(*dev_);
  alloc.beginPoolCapture(0, 7);
  void* p = alloc.allocate(4096, 0);
  alloc.free(p);
  void* p2 = alloc.allocate(4096, 0);  // reused within the pool
  EXPECT_EQ(p, p2);
  alloc.free(p2);
  alloc.endPoolCapture(0);
  void* outside = alloc.allocate(4096, 0);  // the general pool never gets the pool's block
  EXPECT_NE(outside, p);
  alloc.free(outside);
  alloc.emptyCache();
  EXPECT_GT(alloc.poolReservedBytes(7), 0u);  // kept for the graph's replays
  alloc.releasePool(7);
  EXPECT_EQ(alloc.poolReservedBytes(7), 0u);
  alloc.emptyCache();
  EXPECT_EQ(alloc.stats().reserved_bytes[kAggregate].current, 0);
}

}  // namespace
}  // namespace torch_ocl::rt
