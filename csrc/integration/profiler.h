// The device side of torch.profiler (integration/profiler.cpp): while a profiler session records
// PrivateUse1 activity, every command enqueued through ProfiledCommand gets a cl_event whose
// device start and end become kernel / memcpy / memset rows, linked to the aten op that enqueued
// them. Off (the usual case) it costs one relaxed atomic load per command and creates no event.
#pragma once

#include "runtime/cl_include.h"

#include <atomic>
#include <cstdint>

namespace torch_ocl {

enum class CommandKind : uint8_t { kKernel, kMemcpy, kMemset };

namespace detail {
extern std::atomic<bool> g_profiling;
// Takes ownership of ev. name may be null for kernels (the program's name is used).
void recordProfiled(cl_event ev, CommandKind kind, const char* name, cl_kernel kernel) noexcept;
}  // namespace detail

inline bool profilingActive() {
  return detail::g_profiling.load(std::memory_order_relaxed);
}

// The event out-parameter of one enqueue: pass event() (nullptr unless profiling) to the
// clEnqueue* call; the destructor hands the event to the profiler.
class ProfiledCommand {
 public:
  explicit ProfiledCommand(CommandKind kind, const char* name = nullptr, cl_kernel kernel = nullptr)
      : on_(profilingActive()), kind_(kind), name_(name), kernel_(kernel) {}
  ~ProfiledCommand() {
    if (ev_) detail::recordProfiled(ev_, kind_, name_, kernel_);
  }
  ProfiledCommand(const ProfiledCommand&) = delete;
  ProfiledCommand& operator=(const ProfiledCommand&) = delete;
  cl_event* event() { return on_ ? &ev_ : nullptr; }

 private:
  bool on_;
  CommandKind kind_;
  const char* name_;
  cl_kernel kernel_;
  cl_event ev_ = nullptr;
};

}  // namespace torch_ocl
