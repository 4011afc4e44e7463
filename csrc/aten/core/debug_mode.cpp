// Debug mode (TORCH_OCL_LAUNCH_BLOCKING=1, torch_ocl.debug_mode()): every kernel launch waits for
// its queue and reads the device-side check records, so a driver error or an out-of-range index
// is raised by the op that launched the kernel, named, as CUDA_LAUNCH_BLOCKING=1 does. The op
// name comes from a RecordFunction callback that exists only while the mode is on; off, a launch
// pays one relaxed atomic load.
#include <ATen/record_function.h>

#include "aten/device_check.h"
#include "aten/launch.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace torch_ocl::aten {

namespace detail {
std::atomic<bool> g_launch_blocking{false};
}

namespace {

std::mutex g_mutex;
std::optional<at::CallbackHandle> g_callback;
thread_local std::vector<const char*> t_ops;  // innermost running aten op last

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction& fn) {
  t_ops.push_back(fn.name());
  return nullptr;
}
void onOpEnd(const at::RecordFunction&, at::ObserverContext*) {
  if (!t_ops.empty()) t_ops.pop_back();
}

[[noreturn]] void raiseAt(const char* what) {
  const char* op = t_ops.empty() ? "a kernel launched outside any aten op" : t_ops.back();
  TORCH_CHECK(false, "torch-ocl debug mode (TORCH_OCL_LAUNCH_BLOCKING): ", op, " failed: ", what);
}

const bool g_from_env = [] {
  const char* v = std::getenv("TORCH_OCL_LAUNCH_BLOCKING");
  const bool on = v && *v && std::string(v) != "0";
  if (on) setLaunchBlocking(true);
  return on;
}();

}  // namespace

void setLaunchBlocking(bool on) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (on && !g_callback) {
    g_callback = at::addGlobalCallback(
        at::RecordFunctionCallback(&onOpStart, &onOpEnd).scopes({at::RecordScope::FUNCTION}));
  } else if (!on && g_callback) {
    at::removeCallback(*g_callback);
    g_callback.reset();
  }
  detail::g_launch_blocking.store(on);
}

bool launchBlocking() {
  return detail::g_launch_blocking.load(std::memory_order_relaxed);
}

void finishLaunch(cl_command_queue queue) {
  try {
    OCL_CHECK(clFinish(queue));
    checkAllDeviceErrors();
  } catch (const c10::Error& e) {
    raiseAt(e.what_without_backtrace());
  } catch (const std::exception& e) {
    raiseAt(e.what());
  }
}

}  // namespace torch_ocl::aten
