// torch.profiler for ocl: a Kineto activity profiler registered through PyTorch's PrivateUse1
// registry (REGISTER_PRIVATEUSE1_PROFILER). While a session records device activity, the
// commands enqueued through ProfiledCommand (kernels of the launch helpers, copies, fills) get an
// OpenCL event; at the end of the session their CL_PROFILING_COMMAND_START/END times, moved onto
// the host clock, become Kineto kernel / gpu_memcpy / gpu_memset activities linked (correlation id
// and flow) to the aten op that enqueued them, so key_averages() shows device time per op and
// the Chrome trace draws the arrows. Outside a session nothing here runs: the launch helpers read
// one atomic flag and pass a null event pointer.
//
// Our queues are created with CL_QUEUE_PROFILING_ENABLE once and for all (Event.elapsed_time
// needs it on any stream); commands without an event cost the driver nothing extra (measured by
// benchmarks/runtime.py: the raw chain on a queue without profiling).
#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#define TORCH_OCL_HAVE_PU1_PROFILER 1
#define USE_KINETO 1
// GenericTraceActivity::addMetadata formats with fmt, whose library libtorch does not export.
#define FMT_HEADER_ONLY 1
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <kineto/GenericTraceActivity.h>
#include <kineto/IActivityProfiler.h>
#include <kineto/libkineto.h>
#include <kineto/output_base.h>
#endif  // a PyTorch without the PrivateUse1 profiler registry gets no device rows

#include <torch/extension.h>

#include "integration/profiler.h"
#include "integration/state.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace torch_ocl {
namespace detail {
std::atomic<bool> g_profiling{false};
}  // namespace detail

namespace {

namespace pybind = pybind11;

struct Record {
  cl_event ev = nullptr;
  CommandKind kind = CommandKind::kKernel;
  std::string name;
  uint64_t correlation = 0;
};

struct Tracer {
  std::mutex mu;
  std::vector<Record> records;
  std::atomic<int64_t> events_created{0};
};
Tracer& tracer() {
  static auto* t = new Tracer();  // NOLINT: never destroyed (launches may run at exit)
  return *t;
}

// The aten op of this thread that is running now (Kineto pushes the correlation id of each op
// as it starts, on the op's own thread).
thread_local std::vector<uint64_t> t_correlation;

std::string kernelName(cl_kernel kernel) {
  char fn[256] = {};
  clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(fn) - 1, fn, nullptr);
  cl_program program = nullptr;
  clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof(program), &program, nullptr);
  for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) {
    const std::string* p = programs(i).programName(program);
    if (p) return *p + "::" + fn;
  }
  return fn;
}

#ifdef TORCH_OCL_HAVE_PU1_PROFILER
int64_t hostNowNs() {
  // Kineto and the CPU side of torch.profiler stamp activities with the system clock in ns.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Offset that moves a device's profiling clock onto the host's system clock, from markers: the
// host time read just after a marker completed bounds the marker's end from above, so the
// smallest (host - device) over a few tries is the closest estimate.
int64_t clockOffset(rt::Device& dev) {
  int64_t best = 0;
  bool have = false;
  cl_command_queue q = dev.queue(0);
  for (int i = 0; i < 5; ++i) {
    cl_event ev = nullptr;
    if (clEnqueueMarkerWithWaitList(q, 0, nullptr, &ev) != CL_SUCCESS) break;
    clWaitForEvents(1, &ev);
    const int64_t host = hostNowNs();
    cl_ulong end = 0;
    const cl_int err =
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    clReleaseEvent(ev);
    if (err != CL_SUCCESS) break;
    const int64_t off = host - static_cast<int64_t>(end);
    if (!have || off < best) best = off;
    have = true;
  }
  return best;
}

libkineto::ActivityType activityType(CommandKind k) {
  switch (k) {
    case CommandKind::kMemcpy:
      return libkineto::ActivityType::GPU_MEMCPY;
    case CommandKind::kMemset:
      return libkineto::ActivityType::GPU_MEMSET;
    default:
      return libkineto::ActivityType::CONCURRENT_KERNEL;
  }
}

const std::set<libkineto::ActivityType>& deviceActivities() {
  static const std::set<libkineto::ActivityType> s{
      libkineto::ActivityType::CONCURRENT_KERNEL, libkineto::ActivityType::GPU_MEMCPY,
      libkineto::ActivityType::GPU_MEMSET, libkineto::ActivityType::PRIVATEUSE1_RUNTIME,
      libkineto::ActivityType::PRIVATEUSE1_DRIVER};
  return s;
}

class OclProfilerSession final : public libkineto::IActivityProfilerSession {
 public:
  explicit OclProfilerSession(bool device_activity) : device_activity_(device_activity) {}
  ~OclProfilerSession() override {
    if (recording_) stop();
  }

  void start() override {
    status_ = libkineto::TraceStatus::RECORDING;
    if (!device_activity_ || !isInitialized() || isInBadFork()) return;
    try {
      for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) offsets_[i] = clockOffset(device(i));
    } catch (const std::exception& e) {
      errors_.push_back(std::string("torch-ocl profiler: ") + e.what());
    }
    start_ns_ = hostNowNs();
    recording_ = true;
    detail::g_profiling.store(true, std::memory_order_release);
  }

  void stop() override {
    status_ = libkineto::TraceStatus::PROCESSING;
    if (!recording_) return;
    recording_ = false;
    detail::g_profiling.store(false, std::memory_order_release);
    end_ns_ = hostNowNs();
    // Events complete once their queues drain.
    try {
      for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) device(i).synchronize();
    } catch (const std::exception& e) {
      errors_.push_back(std::string("torch-ocl profiler: ") + e.what());
    }
    std::vector<Record> records;
    {
      std::lock_guard<std::mutex> lock(tracer().mu);
      records.swap(tracer().records);
    }
    buildActivities(records);
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, nullptr, 0, 0);
  }

  // Links each activity to the CPU op of its correlation id (Kineto's callback) and logs it. The
  // activities live in the trace buffer, which Kineto may already own (getTraceBuffer).
  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked,
                    int64_t, int64_t) override {
    for (libkineto::GenericTraceActivity* act : activities_) {
      if (linked && act->id) act->linked = linked(act->id);
      logger.handleActivity(*act);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    std::string label = "ocl:0";
    try {
      if (isInitialized() && deviceCount() > 0) label += " " + device(0).info().name;
    } catch (...) {
    }
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{0, 0, "ocl", label});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [dev, stream] : streams_)
      out.push_back(
          libkineto::ResourceInfo{stream, stream, dev, "stream " + std::to_string(stream)});
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

  void pushCorrelationId(uint64_t id) override { t_correlation.push_back(id); }
  void popCorrelationId() override {
    if (!t_correlation.empty()) t_correlation.pop_back();
  }

 private:
  void buildActivities(std::vector<Record>& records) {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(start_ns_, end_ns_, "ocl");
    buffer_->gpuOpCount = 0;
    for (Record& r : records) {
      cl_ulong t0 = 0, t1 = 0;
      cl_command_queue q = nullptr;
      const bool ok =
          clGetEventProfilingInfo(r.ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, nullptr) ==
              CL_SUCCESS &&
          clGetEventProfilingInfo(r.ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr) ==
              CL_SUCCESS &&
          clGetEventInfo(r.ev, CL_EVENT_COMMAND_QUEUE, sizeof(q), &q, nullptr) == CL_SUCCESS;
      clReleaseEvent(r.ev);
      r.ev = nullptr;
      if (!ok) continue;
      auto [dev, stream] = queueOwner(q);
      buffer_->emplace_activity(buffer_->span, activityType(r.kind), r.name);
      auto& act = libkineto::CpuTraceBuffer::toRef(buffer_->activities.back());
      act.startTime = static_cast<int64_t>(t0) + offsets_[dev];
      act.endTime = static_cast<int64_t>(t1) + offsets_[dev];
      act.device = dev;
      act.resource = stream;
      act.id = static_cast<int32_t>(r.correlation);
      act.flow.id = static_cast<uint32_t>(r.correlation);
      act.flow.type = libkineto::kLinkAsyncCpuGpu;
      act.flow.start = false;
      act.addMetadata("device", dev);
      act.addMetadata("stream", stream);
      act.addMetadata("correlation", r.correlation);
      streams_.emplace(dev, stream);
      ++buffer_->gpuOpCount;
      activities_.push_back(&act);
    }
  }

  // (device index, stream index) of one of our queues; (0, -1) for one we do not know.
  static std::pair<int, int> queueOwner(cl_command_queue q) {
    for (c10::DeviceIndex i = 0; i < deviceCount(); ++i) {
      rt::Device& d = device(i);
      for (int s = 0; s < rt::kStreamsPerDevice; ++s)
        if (d.queueCreated(s) && d.queue(s) == q) return {i, s};
    }
    return {0, -1};
  }

  bool device_activity_;
  bool recording_ = false;
  int64_t start_ns_ = 0, end_ns_ = 0;
  int64_t offsets_[64] = {};
  std::vector<libkineto::GenericTraceActivity*> activities_;  // owned by buffer_ (or Kineto)
  std::set<std::pair<int, int>> streams_;
  std::vector<std::string> errors_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
};

class OclActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return deviceActivities();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& types, const libkineto::Config&) override {
    bool device_activity = false;
    // A CPU-only torch.profiler still asks for the runtime types (PRIVATEUSE1_RUNTIME, ...);
    // only the device types mean that ProfilerActivity.PrivateUse1 was requested.
    for (libkineto::ActivityType t : types)
      device_activity |= t == libkineto::ActivityType::CONCURRENT_KERNEL ||
                         t == libkineto::ActivityType::GPU_MEMCPY ||
                         t == libkineto::ActivityType::GPU_MEMSET;
    return std::make_unique<OclProfilerSession>(device_activity);
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t, int64_t, const std::set<libkineto::ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"torch_ocl"};
};

REGISTER_PRIVATEUSE1_PROFILER(OclActivityProfiler);
#endif  // TORCH_OCL_HAVE_PU1_PROFILER

}  // namespace

namespace detail {
void recordProfiled(cl_event ev, CommandKind kind, const char* name, cl_kernel kernel) noexcept {
  try {
    Record r;
    r.ev = ev;
    r.kind = kind;
    r.name = name ? std::string(name) : kernel ? kernelName(kernel) : std::string("kernel");
    r.correlation = t_correlation.empty() ? 0 : t_correlation.back();
    tracer().events_created.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(tracer().mu);
    if (!g_profiling.load(std::memory_order_acquire)) {
      clReleaseEvent(ev);  // the session stopped while this command was being enqueued
      return;
    }
    tracer().records.push_back(std::move(r));
  } catch (...) {
    clReleaseEvent(ev);
  }
}
}  // namespace detail

void bindProfiler(pybind::module_& m) {
  m.def("_profiler_events_created",
        [] { return tracer().events_created.load(std::memory_order_relaxed); });
  m.def("_profiler_active", &profilingActive);
}

}  // namespace torch_ocl
