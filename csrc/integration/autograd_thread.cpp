#include "integration/autograd_thread.h"

#include <c10/core/AutogradState.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <mutex>

#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace torch_ocl::autograd_thread {
namespace {

std::mutex g_mutex;
Outcome g_outcome;

long currentThreadId() {
#ifdef __linux__
  return static_cast<long>(::syscall(SYS_gettid));
#else
  return 0;
#endif
}

}  // namespace

void applyOnInit(int devices, int cpu_devices) {
  Outcome out;
  const char* env = std::getenv("TORCH_OCL_AUTOGRAD_THREAD");
  std::string choice = env && *env ? env : "";
  if (!choice.empty() && choice != "caller" && choice != "device") {
    TORCH_WARN_ONCE("torch-ocl: TORCH_OCL_AUTOGRAD_THREAD='", choice,
                    "' is not 'caller' or 'device'; using the default");
    choice.clear();
  }
  if (choice == "device") {
    out.policy = "device";
    out.detail = "TORCH_OCL_AUTOGRAD_THREAD=device";
  } else if (choice.empty() && devices > 1 && cpu_devices < devices) {
    out.policy = "device";
    out.detail =
        "several ocl devices, not all CPU devices: PyTorch's device threads run their "
        "backward in parallel";
  } else {
    c10::AutogradState::get_tls_state().set_multithreading_enabled(false);
    out.policy = "caller";
    out.thread = currentThreadId();
    out.detail = "backward runs on the thread that initialised the device";
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_outcome = out;
}

Outcome outcome() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_outcome;
}

}  // namespace torch_ocl::autograd_thread
