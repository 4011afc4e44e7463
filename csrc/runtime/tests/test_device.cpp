// Tests of device discovery, queues (streams) and events against a real OpenCL device.
#include "runtime/device.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace torch_ocl::rt {
namespace {

class DeviceRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Runtime::get().deviceCount() == 0)
      GTEST_SKIP() << "no OpenCL device: " << Runtime::get().discoveryError();
    dev_ = &Runtime::get().device(0);
  }
  Device& dev() { return *dev_; }
  Device* dev_ = nullptr;
};

cl_int eventStatus(cl_event e) {
  cl_int status = 0;
  OCL_CHECK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
  return status;
}

// A user event that is always completed by the end of its scope.
class Gate {
 public:
  explicit Gate(Device& dev) {
    cl_int err = CL_SUCCESS;
    ev_ = ClEvent(clCreateUserEvent(dev.context(), &err));
    OCL_CHECK_ERR(err, "clCreateUserEvent");
  }
  ~Gate() { open(); }
  cl_event get() const { return ev_.get(); }
  void open() {
    if (!open_) clSetUserEventStatus(ev_.get(), CL_COMPLETE);
    open_ = true;
  }

 private:
  ClEvent ev_;
  bool open_ = false;
};

TEST_F(DeviceRuntimeTest, DiscoveryAndInfo) {
  Runtime& rt = Runtime::get();
  EXPECT_GE(rt.deviceCount(), 1);
  EXPECT_TRUE(rt.discoveryError().empty());
  EXPECT_GE(static_cast<int>(rt.allDevices().size()), rt.deviceCount());
  for (int i = 0; i < rt.deviceCount(); ++i) {
    Device& d = rt.device(i);
    EXPECT_EQ(d.index(), i);
    EXPECT_EQ(&rt.device(i), &d);  // stable objects
    const DeviceInfo& info = d.info();
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.platform_name.empty());
    EXPECT_FALSE(info.device_version.empty());
    EXPECT_NE(info.opencl_c_version.find("OpenCL C"), std::string::npos) << info.opencl_c_version;
    EXPECT_GT(info.global_mem_size, 0u);
    EXPECT_GT(info.max_mem_alloc_size, 0u);
    EXPECT_LE(info.max_mem_alloc_size, info.global_mem_size);
    EXPECT_GT(info.local_mem_size, 0u);
    EXPECT_GT(info.compute_units, 0u);
    EXPECT_GT(info.max_work_group_size, 0u);
    EXPECT_GT(info.mem_base_addr_align_bytes, 0u);
    EXPECT_GE(info.cl_c_major, 1);
    EXPECT_NE(info.typeName(), "");
    EXPECT_EQ(d.clStdOption().rfind("-cl-std=CL", 0), 0u) << d.clStdOption();
    EXPECT_NE(d.platform(), nullptr);
    EXPECT_NE(d.id(), nullptr);
  }
  // GPUs are listed first.
  const auto& all = rt.allDevices();
  bool seen_non_gpu = false;
  for (const auto& f : all) {
    if (!(f.type & CL_DEVICE_TYPE_GPU)) seen_non_gpu = true;
    if (f.type & CL_DEVICE_TYPE_GPU) EXPECT_FALSE(seen_non_gpu) << "GPU after a non-GPU device";
    EXPECT_FALSE(f.device_name.empty());
  }
}

TEST(DeviceInfoTest, ExtensionsAndTypeName) {
  DeviceInfo info;
  info.extensions = "cl_khr_fp64 cl_khr_int64_base_atomics  cl_khr_fp16";
  EXPECT_TRUE(info.hasExtension("cl_khr_fp16"));
  EXPECT_TRUE(info.hasExtension("cl_khr_fp64"));
  EXPECT_FALSE(info.hasExtension("cl_khr_fp"));
  EXPECT_FALSE(info.hasExtension("cl_khr_subgroups"));
  info.type = CL_DEVICE_TYPE_GPU;
  EXPECT_EQ(info.typeName(), "GPU");
  info.type = CL_DEVICE_TYPE_CPU;
  EXPECT_EQ(info.typeName(), "CPU");
  info.type = CL_DEVICE_TYPE_ACCELERATOR;
  EXPECT_EQ(info.typeName(), "ACCELERATOR");
}

TEST_F(DeviceRuntimeTest, OutOfRangeIndexNamesTheCount) {
  Runtime& rt = Runtime::get();
  const int n = rt.deviceCount();
  for (int bad : {n, n + 5, -1}) {
    try {
      rt.device(bad);
      FAIL() << "device(" << bad << ") must throw";
    } catch (const std::out_of_range& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(std::to_string(n) + " ocl device(s)"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::to_string(bad)), std::string::npos) << msg;
    }
  }
}

TEST_F(DeviceRuntimeTest, ContextAndQueues) {
  cl_context ctx = dev().context();
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(dev().context(), ctx);
  cl_command_queue q0 = dev().queue(0);
  ASSERT_NE(q0, nullptr);
  EXPECT_EQ(dev().queue(0), q0);
  EXPECT_TRUE(dev().queueCreated(0));
  cl_command_queue q3 = dev().queue(3);
  EXPECT_NE(q3, q0);
  EXPECT_THROW(dev().queue(kStreamsPerDevice), std::out_of_range);
  EXPECT_THROW(dev().queue(-1), std::out_of_range);
  // Queues are in order and have profiling on.
  cl_command_queue_properties props = 0;
  OCL_CHECK(clGetCommandQueueInfo(q3, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr));
  EXPECT_FALSE(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  EXPECT_TRUE(props & CL_QUEUE_PROFILING_ENABLE);
  for (int i = 0; i < 2 * kStreamPoolSize; ++i) {
    int s = dev().nextPoolStream();
    EXPECT_GE(s, 1);
    EXPECT_LE(s, kStreamPoolSize);
  }
  dev().synchronize();
}

TEST_F(DeviceRuntimeTest, UnrecordedEvent) {
  Event e;
  EXPECT_FALSE(e.recorded());
  EXPECT_TRUE(e.query());
  e.synchronize();   // no-op
  e.wait(dev(), 0);  // no-op
  Event f;
  f.record(dev(), 0);
  EXPECT_THROW(e.elapsedMs(f), std::runtime_error);
  EXPECT_THROW(f.elapsedMs(e), std::runtime_error);
  f.synchronize();
}

TEST_F(DeviceRuntimeTest, EventRecordSynchronizeElapsed) {
  constexpr size_t n = 4 << 20;
  cl_int err = CL_SUCCESS;
  Mem buf(clCreateBuffer(dev().context(), CL_MEM_READ_WRITE, n, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  Event start, end;
  start.record(dev(), 0);
  const uint8_t zero = 0;
  OCL_CHECK(clEnqueueFillBuffer(dev().queue(0), buf.get(), &zero, 1, 0, n, 0, nullptr, nullptr));
  end.record(dev(), 0);
  EXPECT_TRUE(start.recorded());
  EXPECT_NE(end.get(), nullptr);
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_TRUE(start.query());  // in-order queue
  double ms = start.elapsedMs(end);
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 60000.0);
  EXPECT_DOUBLE_EQ(start.elapsedMs(start), 0.0);
}

TEST_F(DeviceRuntimeTest, EventQueryReflectsBlockedStream) {
  Gate gate(dev());
  cl_event g = gate.get();
  OCL_CHECK(clEnqueueBarrierWithWaitList(dev().queue(4), 1, &g, nullptr));
  Event e;
  e.record(dev(), 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(e.query());
  gate.open();
  e.synchronize();
  EXPECT_TRUE(e.query());
}

// Stream 1 writes a buffer after a gate opens; stream 2 reads it after waiting on an event
// recorded on stream 1. The read must see the write although it was enqueued first in time.
TEST_F(DeviceRuntimeTest, CrossStreamOrderingWithEventWait) {
  constexpr size_t kCount = 1 << 16;
  const size_t bytes = kCount * sizeof(uint32_t);
  cl_int err = CL_SUCCESS;
  Mem buf(clCreateBuffer(dev().context(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
  OCL_CHECK_ERR(err, "clCreateBuffer");
  const uint32_t zero = 0;
  OCL_CHECK(clEnqueueFillBuffer(dev().queue(0), buf.get(), &zero, sizeof(zero), 0, bytes, 0,
                                nullptr, nullptr));
  OCL_CHECK(clFinish(dev().queue(0)));

  std::vector<uint32_t> src(kCount), dst(kCount, 0xdeadbeef);
  std::iota(src.begin(), src.end(), 1u);

  Gate gate(dev());
  cl_event g = gate.get();
  cl_command_queue s1 = dev().queue(1), s2 = dev().queue(2);
  OCL_CHECK(clEnqueueBarrierWithWaitList(s1, 1, &g, nullptr));
  OCL_CHECK(
      clEnqueueWriteBuffer(s1, buf.get(), CL_FALSE, 0, bytes, src.data(), 0, nullptr, nullptr));
  Event written;
  written.record(dev(), 1);
  written.wait(dev(), 2);
  ClEvent read_done;
  OCL_CHECK(clEnqueueReadBuffer(s2, buf.get(), CL_FALSE, 0, bytes, dst.data(), 0, nullptr,
                                read_done.out()));
  OCL_CHECK(clFlush(s2));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(written.query());
  EXPECT_NE(eventStatus(read_done.get()), CL_COMPLETE);  // held back by the barrier
  gate.open();
  OCL_CHECK(clFinish(s2));
  EXPECT_TRUE(written.query());
  EXPECT_EQ(eventStatus(read_done.get()), CL_COMPLETE);
  EXPECT_EQ(dst, src);
  dev().synchronize();
}

}  // namespace
}  // namespace torch_ocl::rt
