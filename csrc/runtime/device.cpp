#include "device.h"

#include "driver_threads.h"
#include "graph.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace torch_ocl::rt {

const char* const kInstallHint =
    "Install an OpenCL driver: on Debian/Ubuntu `apt-get install ocl-icd-libopencl1 "
    "pocl-opencl-icd` gives a CPU device (PoCL); for a GPU install the vendor's OpenCL "
    "driver (NVIDIA driver, ROCm/`mesa-opencl-icd`, `intel-opencl-icd`). Check with `clinfo -l` "
    "and `python -m torch_ocl doctor`. TORCH_OCL_DEVICES may also have filtered every device away.";

namespace {

std::string deviceString(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  OCL_CHECK(clGetDeviceInfo(d, what, 0, nullptr, &n));
  std::string s(n, '\0');
  OCL_CHECK(clGetDeviceInfo(d, what, n, s.data(), nullptr));
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string platformString(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  OCL_CHECK(clGetPlatformInfo(p, what, 0, nullptr, &n));
  std::string s(n, '\0');
  OCL_CHECK(clGetPlatformInfo(p, what, n, s.data(), nullptr));
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <typename T>
T deviceValue(cl_device_id d, cl_device_info what) {
  T v{};
  OCL_CHECK(clGetDeviceInfo(d, what, sizeof(T), &v, nullptr));
  return v;
}

int typeRank(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return 0;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return 1;
  if (t & CL_DEVICE_TYPE_CPU) return 3;
  return 2;
}

}  // namespace

bool DeviceInfo::hasExtension(const std::string& ext) const {
  std::istringstream is(extensions);
  std::string e;
  while (is >> e)
    if (e == ext) return true;
  return false;
}

std::string DeviceInfo::typeName() const {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  return "OTHER";
}

Device::Device(int index, cl_platform_id platform, cl_device_id id)
    : index_(index), platform_(platform), id_(id) {
  info_.name = deviceString(id, CL_DEVICE_NAME);
  info_.vendor = deviceString(id, CL_DEVICE_VENDOR);
  info_.driver_version = deviceString(id, CL_DRIVER_VERSION);
  info_.device_version = deviceString(id, CL_DEVICE_VERSION);
  info_.opencl_c_version = deviceString(id, CL_DEVICE_OPENCL_C_VERSION);
  info_.extensions = deviceString(id, CL_DEVICE_EXTENSIONS);
  info_.platform_name = platformString(platform, CL_PLATFORM_NAME);
  info_.platform_vendor = platformString(platform, CL_PLATFORM_VENDOR);
  info_.platform_version = platformString(platform, CL_PLATFORM_VERSION);
  info_.type = deviceValue<cl_device_type>(id, CL_DEVICE_TYPE);
  info_.global_mem_size = deviceValue<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
  info_.max_mem_alloc_size = deviceValue<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info_.local_mem_size = deviceValue<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
  info_.compute_units = deviceValue<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
  info_.max_work_group_size = deviceValue<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  info_.mem_base_addr_align_bytes = deviceValue<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  info_.fp16 = info_.hasExtension("cl_khr_fp16");
  info_.native_kernel =
      (deviceValue<cl_device_exec_capabilities>(id, CL_DEVICE_EXECUTION_CAPABILITIES) &
       CL_EXEC_NATIVE_KERNEL) != 0;
  {
    // Deprecated in OpenCL 2.0 but still answered; a driver that rejects the query gets false.
    cl_bool unified = CL_FALSE;
    if (clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified, nullptr) ==
        CL_SUCCESS)
      info_.host_unified_memory = unified == CL_TRUE;
  }
  info_.fp64 = info_.hasExtension("cl_khr_fp64") ||
               deviceValue<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  // Lets code be tried as on the many GPUs without fp64 (Mali, Adreno, most Intel iGPUs).
  if (const char* off = std::getenv("TORCH_OCL_DISABLE_FP64"); off && *off && *off != '0')
    info_.fp64 = false;
  // "OpenCL C 1.2 PoCL" -> 1, 2
  int major = 1, minor = 2;
  if (std::sscanf(info_.opencl_c_version.c_str(), "OpenCL C %d.%d", &major, &minor) == 2) {
    info_.cl_c_major = major;
    info_.cl_c_minor = minor;
  }
}

cl_context Device::context() {
  std::call_once(context_once_, [&] {
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(platform_), 0};
    context_ = Context(clCreateContext(props, 1, &id_, nullptr, nullptr, &err));
    OCL_CHECK_ERR(err, "clCreateContext");
  });
  return context_.get();
}

cl_command_queue Device::queue(int stream_index) {
  if (stream_index < 0 || stream_index >= kStreamsPerDevice)
    throw std::out_of_range("stream index " + std::to_string(stream_index) + " out of range");
  cl_command_queue q = queues_[stream_index].load(std::memory_order_acquire);
  if (q) return q;
  cl_context ctx = context();
  std::lock_guard<std::mutex> lock(queue_mutex_);
  q = queues_[stream_index].load();
  if (q) return q;
  cl_int err = CL_SUCCESS;
  // Profiling is on for every queue so that Event.elapsed_time works on any stream; launches
  // create no events, so it costs nothing on the hot path.
  Queue owner(clCreateCommandQueue(ctx, id_, CL_QUEUE_PROFILING_ENABLE, &err));
  OCL_CHECK_ERR(err, "clCreateCommandQueue");
  q = owner.get();
  queue_owners_[stream_index] = std::move(owner);
  queues_[stream_index].store(q, std::memory_order_release);
  return q;
}

int Device::nextPoolStream() {
  return 1 + (pool_counter_.fetch_add(1, std::memory_order_relaxed) % kStreamPoolSize);
}

std::string Device::clStdOption() const {
  int major = info_.cl_c_major, minor = info_.cl_c_minor;
  // OpenCL C 3.0 compilers accept CL3.0; 2.x ones CL2.0; anything else gets CL1.2 at most.
  if (major >= 3) return "-cl-std=CL3.0";
  if (major == 2) return "-cl-std=CL2.0";
  if (major == 1 && minor >= 2) return "-cl-std=CL1.2";
  return "-cl-std=CL1." + std::to_string(minor);
}

void Device::synchronize() {
  for (int i = 0; i < kStreamsPerDevice; ++i) {
    cl_command_queue q = queues_[i].load();
    if (q) OCL_CHECK(clFinish(q));
  }
}

void Event::record(Device& dev, int stream_index) {
  cl_event e = nullptr;
  OCL_CHECK(clEnqueueMarkerWithWaitList(dev.queue(stream_index), 0, nullptr, &e));
  ev_ = ClEvent(e);
  // Makes sure the marker reaches the device so that query() can make progress.
  OCL_CHECK(clFlush(dev.queue(stream_index)));
}

void Event::wait(Device& dev, int stream_index) const {
  if (!ev_) return;
  // A replay would not wait for the other stream's work.
  capture::refuseIfCapturing(dev.queue(stream_index),
                             "a wait on an event or another stream (wait_event/wait_stream)");
  cl_event e = ev_.get();
  OCL_CHECK(clEnqueueBarrierWithWaitList(dev.queue(stream_index), 1, &e, nullptr));
}

bool Event::query() const {
  if (!ev_) return true;
  cl_int status = 0;
  OCL_CHECK(clGetEventInfo(ev_.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                           nullptr));
  if (status < 0)
    throw ClError(status, "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)", __FILE__, __LINE__);
  return status == CL_COMPLETE;
}

void Event::synchronize() const {
  if (!ev_) return;
  cl_event e = ev_.get();
  OCL_CHECK(clWaitForEvents(1, &e));
}

double Event::elapsedMs(const Event& end) const {
  if (!ev_ || !end.ev_)
    throw std::runtime_error("elapsed_time: both events must be recorded before measuring");
  synchronize();
  end.synchronize();
  cl_ulong t0 = 0, t1 = 0;
  OCL_CHECK(clGetEventProfilingInfo(ev_.get(), CL_PROFILING_COMMAND_END, sizeof(t0), &t0, nullptr));
  OCL_CHECK(
      clGetEventProfilingInfo(end.ev_.get(), CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr));
  return (static_cast<double>(t1) - static_cast<double>(t0)) / 1e6;
}

Runtime& Runtime::get() {
  // Deliberately never destroyed: see the class comment.
  static Runtime* instance = new Runtime();  // NOLINT(cppcoreguidelines-owning-memory)
  return *instance;
}

void Runtime::discover() {
  // PoCL's CPU driver otherwise often places its worker threads on one core (half the speed of
  // every kernel, and slower launches). It reads the variable when the platform loads, which is
  // the first clGetPlatformIDs below; a value the user set is kept.
  setenv("POCL_AFFINITY", "1", /*overwrite=*/0);
  // A CPU driver starts its worker threads while the platform loads (PoCL: in the first
  // clGetPlatformIDs); the threads that appear meanwhile are its own.
  const std::vector<long> threads_before = driver_threads::threadIds();
  try {
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || np == 0) {
      error_ = std::string("no OpenCL platform found. ") + kInstallHint;
      return;
    }
    OCL_CHECK_ERR(err, "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(np);
    OCL_CHECK(clGetPlatformIDs(np, platforms.data(), nullptr));
    for (cl_platform_id p : platforms) {
      cl_uint nd = 0;
      err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
      if (err == CL_DEVICE_NOT_FOUND || nd == 0) continue;
      OCL_CHECK_ERR(err, "clGetDeviceIDs");
      std::vector<cl_device_id> ids(nd);
      OCL_CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr));
      for (cl_device_id d : ids)
        all_.push_back({p, d, platformString(p, CL_PLATFORM_NAME), deviceString(d, CL_DEVICE_NAME),
                        deviceValue<cl_device_type>(d, CL_DEVICE_TYPE)});
    }
    std::stable_sort(all_.begin(), all_.end(), [](const Found& a, const Found& b) {
      return typeRank(a.type) < typeRank(b.type);
    });
    std::vector<size_t> order;
    const char* sel = std::getenv("TORCH_OCL_DEVICES");
    if (sel && *sel) {
      std::stringstream ss(sel);
      std::string tok;
      while (std::getline(ss, tok, ',')) {
        if (tok.empty()) continue;
        char* end = nullptr;
        long v = std::strtol(tok.c_str(), &end, 10);
        if (*end != '\0' || v < 0 || static_cast<size_t>(v) >= all_.size()) {
          error_ = "TORCH_OCL_DEVICES='" + std::string(sel) + "' names device '" + tok + "', but " +
                   std::to_string(all_.size()) + " OpenCL device(s) were found (valid indices 0.." +
                   std::to_string(static_cast<long>(all_.size()) - 1) + ")";
          return;
        }
        order.push_back(static_cast<size_t>(v));
      }
    } else {
      for (size_t i = 0; i < all_.size(); ++i) order.push_back(i);
    }
    for (size_t i : order)
      devices_.push_back(std::make_unique<Device>(static_cast<int>(devices_.size()),
                                                  all_[i].platform, all_[i].device));
    if (devices_.empty()) error_ = std::string("no OpenCL device found. ") + kInstallHint;
    const bool cpu_only =
        !all_.empty() && std::all_of(all_.begin(), all_.end(), [](const Found& f) {
          return (f.type & CL_DEVICE_TYPE_CPU) != 0;
        });
    driver_threads::applyBatchPolicy(threads_before, cpu_only);
  } catch (const std::exception& e) {
    devices_.clear();
    error_ = std::string("OpenCL device discovery failed: ") + e.what();
  }
}

int Runtime::deviceCount() {
  std::call_once(once_, [this] { discover(); });
  return static_cast<int>(devices_.size());
}

Device& Runtime::device(int index) {
  int n = deviceCount();
  if (n == 0) throw NoDeviceError(error_);
  if (index < 0 || index >= n)
    throw std::out_of_range("Invalid device index " + std::to_string(index) + ": " +
                            std::to_string(n) + " ocl device(s) are available (valid 0.." +
                            std::to_string(n - 1) + ")");
  return *devices_[index];
}

const std::string& Runtime::discoveryError() {
  deviceCount();
  return error_;
}

const std::vector<Runtime::Found>& Runtime::allDevices() {
  deviceCount();
  return all_;
}

}  // namespace torch_ocl::rt
