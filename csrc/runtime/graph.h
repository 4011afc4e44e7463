// Graph capture: the commands enqueued on a capturing queue are recorded as nodes of a
// CommandGraph and can be replayed later, in the same order, with no argument setting and no
// host work beyond one clEnqueue* per node. No torch headers.
//
// Capture executes as it records. Every command still runs when it is enqueued during capture
// (like eager), and is also recorded. That keeps capture simple and robust: host code that
// looks at results during capture (a native kernel's host-address probe, a debug-mode check)
// sees real data, and the captured step has done its work once, like a warm-up. What cannot be
// replayed faithfully (a host read whose value the host acts on, a copy from pageable host
// memory, a library that enqueues by itself, a cross-stream wait) is refused with a clear error
// and invalidates the capture; nothing is silently left out of a replay.
//
// Nodes:
// - NDRange kernels: a clone of the launched cl_kernel (clCloneKernel, OpenCL 2.1, looked up at
//   run time so that the library still links against 1.2 loaders) taken right after the launch,
//   so it carries the argument values of that launch; a replay only enqueues it.
// - native kernels: the argument block, the buffer list and the buffer slots in the block.
// - buffer copies and fills, and writes from host memory the caller keeps alive (pinned memory).
#pragma once

#include "handles.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace torch_ocl::rt {

// An enqueue that cannot be captured; the message names it.
class CaptureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CommandGraph {
 public:
  CommandGraph();
  ~CommandGraph();
  CommandGraph(const CommandGraph&) = delete;
  CommandGraph& operator=(const CommandGraph&) = delete;

  // offset and local may be null.
  void addKernel(cl_kernel kernel, cl_uint dims, const size_t* offset, const size_t* global,
                 const size_t* local);
  void addNativeKernel(void(CL_CALLBACK* fn)(void*), const void* args, size_t args_size,
                       cl_uint num_mems, const cl_mem* mems, const void** mem_locs);
  void addCopy(cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset, size_t bytes);
  void addFill(cl_mem dst, const void* pattern, size_t pattern_size, size_t offset, size_t bytes);
  // A write from host memory that stays valid (and is read again) at every replay; keep_alive
  // owns that memory for as long as the graph exists.
  void addWrite(cl_mem dst, size_t offset, size_t bytes, const void* host,
                std::shared_ptr<void> keep_alive);

  // Marks the capture as failed (the first reason is kept); the owner refuses to finish it.
  void invalidate(const std::string& why);
  bool valid() const { return invalid_reason_.empty(); }
  const std::string& invalidReason() const { return invalid_reason_; }

  // Enqueues every node on q (a queue of the capture's context), in capture order.
  void replay(cl_command_queue q) const;
  size_t size() const;
  int64_t kernelNodes() const { return kernel_nodes_; }
  std::string dump() const;  // one line per node

 private:
  struct Node;
  std::vector<Node> nodes_;
  int64_t kernel_nodes_ = 0;
  std::string invalid_reason_;
};

namespace capture {
namespace detail {
extern std::atomic<int> g_active;  // queues capturing now, all devices
CommandGraph* lookup(cl_command_queue q);
}  // namespace detail

// The graph q is capturing into, or nullptr. Off capture this is one relaxed load and a branch.
inline CommandGraph* graphOf(cl_command_queue q) {
  if (detail::g_active.load(std::memory_order_relaxed) == 0) return nullptr;
  return detail::lookup(q);
}

// Starts recording the commands of q into g (the calling thread becomes the capturing thread:
// from it, an enqueue on another queue of the same context is refused while q captures).
void begin(cl_command_queue q, CommandGraph* g);
void end(cl_command_queue q);  // no-op when q does not capture
inline bool active() {
  return detail::g_active.load(std::memory_order_relaxed) != 0;
}

// Throws CaptureError saying that `what` cannot be captured on ocl, and invalidates the graph,
// when q is capturing. Call before enqueueing `what`.
void refuse(cl_command_queue q, const std::string& what);
inline void refuseIfCapturing(cl_command_queue q, const char* what) {
  if (detail::g_active.load(std::memory_order_relaxed) != 0) refuse(q, what);
}
}  // namespace capture

// clEnqueueNativeKernel that is also recorded while q captures (same arguments and result).
cl_int enqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK* fn)(void*), void* args,
                           size_t args_size, cl_uint num_mems, const cl_mem* mems,
                           const void** mem_locs, cl_uint num_events, const cl_event* wait_list,
                           cl_event* event);

}  // namespace torch_ocl::rt
