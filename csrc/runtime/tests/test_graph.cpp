// Tests of graph capture (runtime/graph.h) and of the allocator's graph memory pools against a
// real OpenCL device (PoCL's CPU device in CI).
#include "runtime/allocator.h"
#include "runtime/graph.h"
#include "runtime/graph_rng.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
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

// A generator stand-in: seed and offset it hands out, and how far replays advanced it.
class CountingSource final : public PhiloxSource {
 public:
  std::pair<uint64_t, uint64_t> advance(uint64_t total) override {
    const std::pair<uint64_t, uint64_t> at{seed, offset};
    offset += total;
    return at;
  }
  uint64_t seed = 5, offset = 0;
};

TEST_F(GraphTest, ReplayResetsBoundSeedAndOffsetArgumentsAndAdvancesTheSource) {
  const char* src =
      "__kernel void k(__global ulong* out, ulong seed, ulong offset) {\n"
      "  out[get_global_id(0)] = seed * 1000000 + offset * 10 + get_global_id(0);\n}\n";
  cl_int err = CL_SUCCESS;
  Program prog(clCreateProgramWithSource(dev_->context(), 1, &src, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  cl_device_id id = dev_->id();
  ASSERT_EQ(clBuildProgram(prog.get(), 1, &id, "", nullptr, nullptr), CL_SUCCESS);
  Kernel k(clCreateKernel(prog.get(), "k", &err));
  ASSERT_EQ(err, CL_SUCCESS);
  Mem out(clCreateBuffer(dev_->context(), CL_MEM_READ_WRITE, 4 * sizeof(cl_ulong), nullptr, &err));
  cl_command_queue q = dev_->queue(0);
  auto source = std::make_shared<CountingSource>();
  int key = 0;

  CommandGraph g;
  capture::begin(q, &g);
  // Two draws of one generator (8 values each, the second at relative offset 8), the second
  // one's kernel recorded; and a draw that no kernel takes.
  const int d0 = philox_capture::addDraw(g, &key, 5, 100, 8, [&] { return source; });
  philox_capture::unbind(g, d0, /*require_use=*/false);
  const int d1 = philox_capture::addDraw(g, &key, 5, 108, 8, [&] { return source; });
  philox_capture::bind(g, d1, k.get(), 1, 2);
  const cl_mem m = out.get();
  const cl_ulong seed = 5, offset = 108;
  OCL_CHECK(clSetKernelArg(k.get(), 0, sizeof(cl_mem), &m));
  OCL_CHECK(clSetKernelArg(k.get(), 1, sizeof(cl_ulong), &seed));
  OCL_CHECK(clSetKernelArg(k.get(), 2, sizeof(cl_ulong), &offset));
  const size_t global = 4;
  OCL_CHECK(clEnqueueNDRangeKernel(q, k.get(), 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  g.addKernel(k.get(), 1, nullptr, &global, nullptr);
  philox_capture::unbind(g, d1, /*require_use=*/true);
  EXPECT_TRUE(g.valid());
  EXPECT_EQ(philox_capture::findDraw(g, 5, 108), d1);
  EXPECT_EQ(philox_capture::findDraw(g, 5, 104), -1);
  capture::end(q);
  EXPECT_EQ(philox_capture::draws(g), 2u);

  auto readOut = [&] {
    std::vector<cl_ulong> v(4);
    OCL_CHECK(clEnqueueReadBuffer(q, out.get(), CL_TRUE, 0, 4 * sizeof(cl_ulong), v.data(), 0,
                                  nullptr, nullptr));
    return v;
  };
  EXPECT_EQ(readOut()[1], 5u * 1000000 + 108 * 10 + 1);  // the capture ran it
  source->offset = 116;  // where the generator stands after the capture (eager: 100 + 16)
  for (uint64_t r = 0; r < 3; ++r) {
    g.replay(q);
    const std::vector<cl_ulong> v = readOut();
    const uint64_t want_offset = 116 + 16 * r + 8;  // the replay's base + the draw's offset
    for (cl_ulong i = 0; i < 4; ++i) EXPECT_EQ(v[i], 5u * 1000000 + want_offset * 10 + i);
    EXPECT_EQ(source->offset, 116 + 16 * (r + 1));
  }
  source->seed = 9;  // a new seed applies at the next replay
  source->offset = 0;
  g.replay(q);
  EXPECT_EQ(readOut()[0], 9u * 1000000 + 8 * 10);
  EXPECT_NE(g.dump().find("random numbers: 2 draws from 1 generators"), std::string::npos);
}

TEST_F(GraphTest, HostSourceIsReadAgainAtEachReplay) {
  const char* src =
      "__kernel void k(__global ulong* out, ulong seed, ulong offset) {\n"
      "  out[0] = seed * 1000 + offset;\n}\n";
  cl_int err = CL_SUCCESS;
  Program prog(clCreateProgramWithSource(dev_->context(), 1, &src, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  cl_device_id id = dev_->id();
  ASSERT_EQ(clBuildProgram(prog.get(), 1, &id, "", nullptr, nullptr), CL_SUCCESS);
  Kernel k(clCreateKernel(prog.get(), "k", &err));
  ASSERT_EQ(err, CL_SUCCESS);
  Mem out(clCreateBuffer(dev_->context(), CL_MEM_READ_WRITE, sizeof(cl_ulong), nullptr, &err));
  cl_command_queue q = dev_->queue(0);
  auto words = std::make_shared<std::array<int64_t, 2>>(std::array<int64_t, 2>{3, 40});
  CommandGraph g;
  capture::begin(q, &g);
  const int d = philox_capture::addHostSource(g, &(*words)[0], &(*words)[1], words);
  philox_capture::bind(g, d, k.get(), 1, 2);
  const cl_mem m = out.get();
  const cl_ulong seed = 3, offset = 40;
  OCL_CHECK(clSetKernelArg(k.get(), 0, sizeof(cl_mem), &m));
  OCL_CHECK(clSetKernelArg(k.get(), 1, sizeof(cl_ulong), &seed));
  OCL_CHECK(clSetKernelArg(k.get(), 2, sizeof(cl_ulong), &offset));
  const size_t global = 1;
  OCL_CHECK(clEnqueueNDRangeKernel(q, k.get(), 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  g.addKernel(k.get(), 1, nullptr, &global, nullptr);
  philox_capture::unbind(g, d, /*require_use=*/false);
  capture::end(q);
  ASSERT_TRUE(g.valid());
  (*words)[0] = 7;
  (*words)[1] = 12;
  g.replay(q);
  cl_ulong got = 0;
  OCL_CHECK(clEnqueueReadBuffer(q, out.get(), CL_TRUE, 0, sizeof(got), &got, 0, nullptr, nullptr));
  EXPECT_EQ(got, 7012u);
}

TEST_F(GraphTest, DrawThatNoRecordedKernelTakesInvalidatesTheCapture) {
  cl_command_queue q = dev_->queue(0);
  auto source = std::make_shared<CountingSource>();
  int key = 0;
  CommandGraph g;
  capture::begin(q, &g);
  const int d = philox_capture::addDraw(g, &key, 5, 0, 4, [&] { return source; });
  philox_capture::unbind(g, d, /*require_use=*/true);
  capture::end(q);
  EXPECT_FALSE(g.valid());
  EXPECT_NE(g.invalidReason().find("does not bind its (seed, offset)"), std::string::npos);
}

TEST_F(GraphTest, GeneratorSetBackDuringCaptureIsRefused) {
  cl_command_queue q = dev_->queue(0);
  auto source = std::make_shared<CountingSource>();
  int key = 0;
  CommandGraph g;
  capture::begin(q, &g);
  philox_capture::addDraw(g, &key, 5, 40, 4, [&] { return source; });
  EXPECT_THROW(philox_capture::addDraw(g, &key, 5, 36, 4, [&] { return source; }), CaptureError);
  EXPECT_THROW(philox_capture::addDraw(g, &key, 6, 44, 4, [&] { return source; }), CaptureError);
  capture::end(q);
  EXPECT_FALSE(g.valid());
}

}  // namespace
}  // namespace torch_ocl::rt
