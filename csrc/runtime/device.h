// Discovery of OpenCL devices, one context per device, in-order queues as streams.
#pragma once

#include "cl_error.h"
#include "handles.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace torch_ocl::rt {

struct DeviceInfo {
  std::string name, vendor, driver_version, device_version, opencl_c_version;
  std::string platform_name, platform_vendor, platform_version, extensions;
  cl_device_type type = 0;
  uint64_t global_mem_size = 0;
  uint64_t max_mem_alloc_size = 0;
  uint64_t local_mem_size = 0;
  uint32_t compute_units = 0;
  size_t max_work_group_size = 0;
  uint32_t mem_base_addr_align_bytes = 0;
  int cl_c_major = 1, cl_c_minor = 2;  // parsed from the device's OpenCL C version
  bool fp16 = false, fp64 = false;
  // CL_EXEC_NATIVE_KERNEL in CL_DEVICE_EXECUTION_CAPABILITIES: clEnqueueNativeKernel works.
  bool native_kernel = false;
  // CL_DEVICE_HOST_UNIFIED_MEMORY: buffers live in host memory (CPU drivers, integrated GPUs).
  bool host_unified_memory = false;
  bool hasExtension(const std::string& ext) const;
  std::string typeName() const;  // "GPU", "CPU", "ACCELERATOR", ...
};

// Streams are in-order command queues. Index 0 is the default stream; 1..kPoolSize are a pool
// handed out round robin (like CUDA's stream pool). Queues are created on first use.
constexpr int kStreamPoolSize = 8;
constexpr int kStreamsPerDevice = kStreamPoolSize + 1;

class Device {
 public:
  Device(int index, cl_platform_id platform, cl_device_id id);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int index() const { return index_; }
  cl_device_id id() const { return id_; }
  cl_platform_id platform() const { return platform_; }
  const DeviceInfo& info() const { return info_; }
  cl_context context();                      // created on first use
  cl_command_queue queue(int stream_index);  // created on first use
  bool queueCreated(int stream_index) const { return queues_[stream_index].load() != nullptr; }
  int nextPoolStream();  // 1..kStreamPoolSize, round robin
  // "-cl-std=CL1.2" etc., from the device's OpenCL C version (not the platform's).
  std::string clStdOption() const;
  void synchronize();  // finishes every created queue

 private:
  int index_;
  cl_platform_id platform_;
  cl_device_id id_;
  DeviceInfo info_;
  std::once_flag context_once_;
  Context context_;
  std::mutex queue_mutex_;
  std::array<std::atomic<cl_command_queue>, kStreamsPerDevice> queues_{};
  std::array<Queue, kStreamsPerDevice> queue_owners_;
  std::atomic<int> pool_counter_{0};
};

// A recorded point on a stream. Created only for user events, cross-stream waits, host waits
// and profiling; launches themselves never create events.
class Event {
 public:
  Event() = default;
  void record(Device& dev, int stream_index);      // enqueues a marker
  void wait(Device& dev, int stream_index) const;  // the stream waits for this event
  bool query() const;                              // true when complete (or never recorded)
  void synchronize() const;
  // Milliseconds between two recorded events (both must be complete or are waited for).
  double elapsedMs(const Event& end) const;
  bool recorded() const { return static_cast<bool>(ev_); }
  cl_event get() const { return ev_.get(); }

 private:
  ClEvent ev_;
};

// Process-wide registry. Discovery runs once, lazily; the object is never destroyed so that
// tensors freed late at interpreter shutdown still find their device (no static-destructor
// ordering crashes).
class Runtime {
 public:
  static Runtime& get();
  int deviceCount();          // 0 when there is no platform or no device; never throws
  Device& device(int index);  // throws std::out_of_range naming the count
  // Why there are no devices (empty when there are some).
  const std::string& discoveryError();
  // All devices found before TORCH_OCL_DEVICES filtering, in our order (GPUs first).
  struct Found {
    cl_platform_id platform;
    cl_device_id device;
    std::string platform_name, device_name;
    cl_device_type type;
  };
  const std::vector<Found>& allDevices();

 private:
  Runtime() = default;
  void discover();
  std::once_flag once_;
  std::vector<Found> all_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::string error_;
};

// Installation hint used by every "no device" error.
extern const char* const kInstallHint;

}  // namespace torch_ocl::rt
