#include "integration/autograd_thread.h"

#include <ATen/ATen.h>
#include <c10/core/AutogradState.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/variable.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
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

// Whether PyTorch's engine has started its device threads ("pt_autograd_<i>"): it starts them
// all on the first backward of the process. Without them there is nothing to wait for, and an
// empty backward at exit would only start them. Linux only; elsewhere: assume they run.
bool deviceThreadsRunning() {
#ifdef __linux__
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return true;
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/comm";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char name[32] = {};
    const ssize_t n = ::read(fd, name, sizeof(name) - 1);
    ::close(fd);
    if (n > 0 && std::strncmp(name, "pt_autograd_", 12) == 0) {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
#else
  return true;
#endif
}

// Shared by drainDeviceThreads and its helper thread, which outlives the call on a timeout.
struct DrainState {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::string error;
};

void runEmptyBackwards(int devices, const std::shared_ptr<DrainState>& state) {
  std::string error;
  try {
    auto& engine = torch::autograd::Engine::get_default_engine();
    for (int i = 0; i < devices; ++i) {
      const auto opts =
          at::TensorOptions()
              .dtype(at::kFloat)
              .device(c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(i)));
      at::Tensor leaf = at::empty({0}, opts).requires_grad_(true);
      const torch::autograd::Edge edge = torch::autograd::impl::gradient_edge(leaf);
      // Engine::execute queues the root on the ready queue of the gradient's device, that is
      // ocl:i's device thread, and returns once that thread has run it.
      engine.execute({edge}, {at::empty({0}, opts)}, /*keep_graph=*/false,
                     /*create_graph=*/false, /*accumulate_grad=*/false, {edge});
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->done = true;
    state->error = std::move(error);
  }
  state->done_cv.notify_all();
}

}  // namespace

std::string drainDeviceThreads(int devices, double timeout_s) {
  if (devices <= 0) return "skipped: no ocl device";
  if (!deviceThreadsRunning()) return "skipped: no autograd device thread";
  auto state = std::make_shared<DrainState>();
  // A fresh thread: its thread-local state (which the graph task copies) holds no Python
  // objects, so its own graph task is released without the GIL, wherever that happens. It is
  // detached so that a timeout leaves it behind instead of waiting for it.
  std::thread(runEmptyBackwards, devices, state).detach();
  std::unique_lock<std::mutex> lock(state->mutex);
  const bool done = state->done_cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                            [&] { return state->done; });
  if (!done) return "timeout";
  return state->error.empty() ? "drained" : "error: " + state->error;
}

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
