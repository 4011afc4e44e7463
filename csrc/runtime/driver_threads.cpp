#include "driver_threads.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#ifdef __linux__
#include <dirent.h>
#include <sched.h>
#endif

namespace torch_ocl::rt::driver_threads {

std::vector<long> threadIds() {
  std::vector<long> ids;
#ifdef __linux__
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return ids;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long id = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') ids.push_back(id);
  }
  closedir(dir);
  std::sort(ids.begin(), ids.end());
#endif
  return ids;
}

namespace {
Outcome g_outcome{"n/a", 0, "no device discovery yet"};
std::vector<long> g_moved;  // the threads moved to SCHED_BATCH (written once, at discovery)
std::mutex g_switch_mutex;
bool g_batch_now = true;  // under g_switch_mutex

Outcome apply(const std::vector<long>& before, bool cpu_only, std::vector<long>& moved) {
  Outcome out;
  const char* env = std::getenv("TORCH_OCL_DRIVER_THREADS");
  const std::string choice = env && *env ? env : "batch";
  if (choice == "normal") {
    out.policy = "normal";
    out.detail = "TORCH_OCL_DRIVER_THREADS=normal";
    return out;
  }
  out.policy = "n/a";
  if (choice != "batch") {
    out.detail = "TORCH_OCL_DRIVER_THREADS='" + choice + "' is not 'batch' or 'normal'";
    return out;
  }
  if (!cpu_only) {
    out.detail = "not every device is a CPU device";
    return out;
  }
#ifdef __linux__
  std::vector<long> now = threadIds();
  std::vector<long> created;
  std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                      std::back_inserter(created));
  if (created.empty()) {
    out.detail = "the driver started no threads during discovery";
    return out;
  }
  for (long tid : created) {
    sched_param param{};
    param.sched_priority = 0;
    // Unprivileged. SCHED_BATCH keeps a woken thread from preempting a running one and leaves
    // its share of the CPU as it was (nice 0): a lower priority (nice 5 or 19) made the device
    // 3-40x slower whenever other processes kept the cores busy. Threads the workers start later
    // (a host BLAS's) inherit it.
    if (sched_setscheduler(static_cast<pid_t>(tid), SCHED_BATCH, &param) != 0) {
      if (errno == ESRCH) continue;  // the thread has ended
      out.detail = std::string("sched_setscheduler(SCHED_BATCH) failed: ") + std::strerror(errno);
      continue;
    }
    ++out.threads;
    moved.push_back(tid);
  }
  out.policy = out.threads > 0 ? "batch" : "n/a";
#else
  (void)before;
  (void)moved;
  out.detail = "only on Linux";
#endif
  return out;
}

}  // namespace

void applyBatchPolicy(const std::vector<long>& before, bool cpu_only) {
  std::vector<long> moved;
  g_outcome = apply(before, cpu_only, moved);
  std::lock_guard<std::mutex> lock(g_switch_mutex);
  g_moved = std::move(moved);
  g_batch_now = true;
}

bool workersSwitchable() {
  return g_outcome.policy == "batch" && g_outcome.threads > 0;
}

void setWorkersBatch(bool batch) {
#ifdef __linux__
  if (!workersSwitchable()) return;
  std::lock_guard<std::mutex> lock(g_switch_mutex);
  if (g_batch_now == batch) return;
  g_batch_now = batch;
  for (long tid : g_moved) {
    sched_param param{};
    param.sched_priority = 0;
    sched_setscheduler(static_cast<pid_t>(tid), batch ? SCHED_BATCH : SCHED_OTHER, &param);
  }
#else
  (void)batch;
#endif
}

const Outcome& outcome() {
  return g_outcome;
}

const std::vector<long>& movedThreads() {
  return g_moved;
}

}  // namespace torch_ocl::rt::driver_threads
