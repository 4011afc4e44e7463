// Observing graph replays (the profiler, integration/graph.cpp): while an ObservedReplays scope
// lives on a thread, every node a CommandGraph::replay on that thread enqueues gets an event,
// handed to the observer with what the node is. Without a scope, replays create no events.
#pragma once

#include "cl_include.h"

#include <functional>

namespace torch_ocl::rt {

enum class ReplayNodeKind { kKernel, kNative, kCopy, kFill, kWrite };

// Called once per enqueued node with its event (owned by the callee from then on) and, for
// NDRange kernels, the recorded kernel (null otherwise).
using ReplayObserver = std::function<void(cl_event ev, ReplayNodeKind kind, cl_kernel kernel)>;

class ObservedReplays {
 public:
  explicit ObservedReplays(const ReplayObserver& observer);
  ~ObservedReplays();
  ObservedReplays(const ObservedReplays&) = delete;
  ObservedReplays& operator=(const ObservedReplays&) = delete;

 private:
  const ReplayObserver* previous_;
};

// The observer of this thread's replays, or null.
const ReplayObserver* replayObserver();

}  // namespace torch_ocl::rt
