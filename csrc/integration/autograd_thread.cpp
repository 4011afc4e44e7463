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

void applyOnInit() {
  Outcome out;
  const char* env = std::getenv("TORCH_OCL_AUTOGRAD_THREAD");
  const std::string choice = env && *env ? env : "caller";
  if (choice == "device") {
    out.policy = "device";
    out.detail = "TORCH_OCL_AUTOGRAD_THREAD=device";
  } else {
    if (choice != "caller") {
      TORCH_WARN_ONCE("torch-ocl: TORCH_OCL_AUTOGRAD_THREAD='", choice,
                      "' is not 'caller' or 'device'; using 'caller'");
    }
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
