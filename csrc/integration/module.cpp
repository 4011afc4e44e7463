// torch_ocl._C: thin Python bindings over the runtime and integration layers.
#include <torch/csrc/Event.h>
#include <torch/csrc/Generator.h>
#include <torch/extension.h>

#include "aten/device_check.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "integration/allocator.h"
#include "integration/autograd_thread.h"
#include "integration/generator.h"
#include "integration/state.h"
#include "runtime/driver_threads.h"

namespace py = pybind11;

namespace torch_ocl {

void registerHooks();                     // hooks.cpp
void bindRawBench(py::module_& m);        // raw_bench.cpp
void bindUserKernels(py::module_& m);     // user_kernels.cpp
void bindGemm(py::module_& m);            // gemm_bindings.cpp
void bindDistributed(py::module_& m);     // distributed/bindings.cpp
void bindProfiler(py::module_& m);        // profiler.cpp
void bindWrapperHelpers(py::module_& m);  // wrapper_helpers.cpp

namespace {

// The properties of a device that doctor's probe of every device and get_device_properties share.
py::dict infoDict(const rt::DeviceInfo& info) {
  py::dict d;
  d["name"] = info.name;
  d["vendor"] = info.vendor;
  d["type"] = info.typeName();
  d["driver_version"] = info.driver_version;
  d["device_version"] = info.device_version;
  d["opencl_c_version"] = info.opencl_c_version;
  d["platform_name"] = info.platform_name;
  d["platform_version"] = info.platform_version;
  d["total_memory"] = info.global_mem_size;
  d["max_alloc_size"] = info.max_mem_alloc_size;
  d["local_memory"] = info.local_mem_size;
  d["compute_units"] = info.compute_units;
  d["max_work_group_size"] = info.max_work_group_size;
  d["fp16"] = info.fp16;
  d["fp64"] = info.fp64;
  // bf16 is always a storage type with float arithmetic; no OpenCL device has it natively.
  d["bf16"] = true;
  return d;
}

py::dict deviceProperties(c10::DeviceIndex index) {
  rt::Device& dev = device(index);
  py::dict d = infoDict(dev.info());
  d["extensions"] = dev.info().extensions;
  // The largest total size of a kernel's arguments (compiled graphs pack several kernels into one
  // launch up to it); the OpenCL minimum, 1024, where the driver does not say.
  size_t param_bytes = 0;
  if (clGetDeviceInfo(dev.id(), CL_DEVICE_MAX_PARAMETER_SIZE, sizeof(param_bytes), &param_bytes,
                      nullptr) != CL_SUCCESS) {
    param_bytes = 1024;
  }
  d["max_parameter_size"] = param_bytes;
  return d;
}

// Every device the OpenCL ICD loader reports, including the ones TORCH_OCL_DEVICES filtered
// away, with its properties and the ocl index it got (None when filtered out). `doctor` needs
// this to tell a user which device is ocl:0 and why the one they expected is missing.
py::list allDevices() {
  const int count = deviceCount();  // discovery goes through the state layer (fork tracking)
  py::list out;
  const auto& found = rt::Runtime::get().allDevices();
  for (size_t i = 0; i < found.size(); ++i) {
    const auto& f = found[i];
    py::dict d;
    d["index"] = i;  // the number TORCH_OCL_DEVICES uses
    d["platform"] = f.platform_name;
    d["name"] = f.device_name;
    d["type"] = (f.type & CL_DEVICE_TYPE_GPU)           ? "GPU"
                : (f.type & CL_DEVICE_TYPE_ACCELERATOR) ? "ACCELERATOR"
                : (f.type & CL_DEVICE_TYPE_CPU)         ? "CPU"
                                                        : "OTHER";
    py::object ocl_index = py::none();
    for (int k = 0; k < count; ++k)
      if (device(static_cast<c10::DeviceIndex>(k)).id() == f.device) ocl_index = py::int_(k);
    d["ocl_index"] = ocl_index;
    try {
      // Constructing a Device only queries properties; its context is created on first use.
      rt::Device probe(-1, f.platform, f.device);
      d["properties"] = infoDict(probe.info());
      d["error"] = py::none();
    } catch (const std::exception& e) {
      d["properties"] = py::none();
      d["error"] = std::string(e.what());
    }
    out.append(d);
  }
  return out;
}

py::list fallbackRecords() {
  py::list out;
  for (const auto& r : aten::fallbackRecords()) {
    py::dict d;
    d["op"] = r.op;
    d["calls"] = r.calls;
    d["bytes_to_host"] = r.bytes_to_host;
    d["bytes_to_device"] = r.bytes_to_device;
    d["seconds"] = r.seconds;
    out.append(d);
  }
  return out;
}

// torch.Event.elapsed_time accepts only an exact torch.Event as its argument, so two
// torch.ocl.Event objects (a subclass) cannot be timed against each other through it.
double eventElapsedMs(const py::handle& start, const py::handle& end) {
  TORCH_CHECK_TYPE(THPEvent_Check(start.ptr()) && THPEvent_Check(end.ptr()),
                   "elapsed_time expects two torch.Event objects");
  const c10::Event& a = reinterpret_cast<THPEvent*>(start.ptr())->event;
  const c10::Event& b = reinterpret_cast<THPEvent*>(end.ptr())->event;
  return a.elapsedTime(b);
}

py::dict programCacheStats(c10::DeviceIndex index) {
  rt::ProgramCacheStats s = programs(index).stats();
  py::dict d;
  d["memory_hits"] = s.memory_hits;
  d["disk_hits"] = s.disk_hits;
  d["disk_misses"] = s.disk_misses;
  d["disk_corrupt"] = s.disk_corrupt;
  d["disk_writes"] = s.disk_writes;
  d["compiles"] = s.compiles;
  d["compile_seconds"] = s.compile_seconds;
  d["disk_enabled"] = programs(index).disk().enabled();
  d["disk_every_program"] = programs(index).disk().storesEveryProgram();
  d["disk_dir"] = programs(index).disk().dir();
  return d;
}

}  // namespace
}  // namespace torch_ocl

PYBIND11_MODULE(_C, m) {
  using namespace torch_ocl;
  registerHooks();
  m.doc() = "torch-ocl native core";
  m.def("device_count", [] { return static_cast<int>(deviceCount()); });
  m.def("discovery_error", [] { return rt::Runtime::get().discoveryError(); });
  m.def("all_devices", &allDevices);
  m.def("_driver_threads", [] {
    rt::Runtime::get().deviceCount();  // discovery applies the policy
    const rt::driver_threads::Outcome& o = rt::driver_threads::outcome();
    py::dict d;
    d["policy"] = o.policy;
    d["threads"] = o.threads;
    d["detail"] = o.detail;
    d["thread_ids"] = rt::driver_threads::movedThreads();
    return d;
  });
  m.def("_autograd_thread", [] {
    const autograd_thread::Outcome o = autograd_thread::outcome();
    py::dict d;
    d["policy"] = o.policy;
    d["thread"] = o.thread;
    d["detail"] = o.detail;
    return d;
  });
  m.def(
      "_drain_autograd_threads",
      [](double timeout_s) -> std::string {
        if (!isInitialized()) return "skipped: no ocl device initialised";
        if (isInBadFork()) return "skipped: fork child";
        const int devices = static_cast<int>(deviceCount());
        py::gil_scoped_release no_gil;  // the device threads may need it to finish
        return autograd_thread::drainDeviceThreads(devices, timeout_s);
      },
      py::arg("timeout_s"));
  m.def("init", [](int index) { device(static_cast<c10::DeviceIndex>(index)); });
  m.def("is_initialized", &isInitialized);
  m.def("is_in_bad_fork", &isInBadFork);
  m.def("current_device", [] { return static_cast<int>(currentDevice()); });
  m.def("set_device", [](int i) { setCurrentDevice(static_cast<c10::DeviceIndex>(i)); });
  m.def("get_device_properties",
        [](int i) { return deviceProperties(static_cast<c10::DeviceIndex>(i)); });
  m.def("synchronize", [](int i) {
    rt::Device& dev = device(static_cast<c10::DeviceIndex>(i));
    py::gil_scoped_release no_gil;
    OCL_TRY
    dev.synchronize();
    OCL_CATCH
    aten::checkDeviceErrors(static_cast<c10::DeviceIndex>(i), dev.queue(0), /*whole_device=*/true);
  });
  m.def("set_memory_limit",
        [](int i, uint64_t bytes) { setMemoryLimit(static_cast<c10::DeviceIndex>(i), bytes); });
  m.def("memory_limit", [](int i) { return memoryLimit(static_cast<c10::DeviceIndex>(i)); });
  m.def("default_generator", [](int i) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(defaultGenerator(static_cast<c10::DeviceIndex>(i))));
  });
  m.def("event_elapsed_time", &eventElapsedMs);
  m.def("fallback_records", &fallbackRecords);
  m.def("reset_fallback_records", &aten::resetFallbackRecords);
  m.def("set_strict", &aten::setStrict);
  m.def("is_strict", &aten::strict);
  m.def("_push_strict", &aten::pushStrict);
  m.def("_pop_strict", &aten::popStrict);
  m.def("set_launch_blocking", &aten::setLaunchBlocking);
  m.def("is_launch_blocking", &aten::launchBlocking);
  m.def("program_cache_stats",
        [](int i) { return programCacheStats(static_cast<c10::DeviceIndex>(i)); });
  m.def("install_hint", [] { return std::string(rt::kInstallHint); });
  m.def("_kernel_launch_count", &aten::kernelLaunchCount);
  bindRawBench(m);
  bindUserKernels(m);
  bindGemm(m);
  bindDistributed(m);
  bindProfiler(m);
  bindWrapperHelpers(m);
}
