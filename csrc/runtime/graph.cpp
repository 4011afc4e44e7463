#include "graph.h"

#include "cl_error.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

namespace torch_ocl::rt {

namespace {

using CloneKernelFn = cl_kernel(CL_API_CALL*)(cl_kernel, cl_int*);

// clCloneKernel is OpenCL 2.1; the library is built against 1.2 entry points, so it is looked up
// in the loaded ICD loader. nullptr when the loader lacks it.
CloneKernelFn cloneKernelFn() {
  static const CloneKernelFn fn =
      reinterpret_cast<CloneKernelFn>(dlsym(RTLD_DEFAULT, "clCloneKernel"));
  return fn;
}

std::string kernelName(cl_kernel k) {
  char buf[256] = {0};
  if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(buf) - 1, buf, nullptr) != CL_SUCCESS)
    return "?";
  return buf;
}

}  // namespace

struct CommandGraph::Node {
  enum Kind { kKernel, kNative, kCopy, kFill, kWrite } kind;
  // kernel
  Kernel kernel;
  cl_uint dims = 0;
  bool has_offset = false, has_local = false;
  std::array<size_t, 3> offset{}, global{}, local{};
  // native kernel
  void(CL_CALLBACK* fn)(void*) = nullptr;
  std::vector<uint64_t> args;  // 8-byte aligned copy of the argument block
  size_t args_size = 0;
  std::vector<Mem> mems;
  std::vector<size_t> mem_locs;  // byte offsets of the buffer slots in args
  // copy / fill / write
  Mem src, dst;
  size_t src_offset = 0, dst_offset = 0, bytes = 0;
  std::vector<unsigned char> pattern;
  const void* host = nullptr;
  std::shared_ptr<void> keep_alive;
};

CommandGraph::CommandGraph() = default;
CommandGraph::~CommandGraph() = default;

void CommandGraph::addKernel(cl_kernel kernel, cl_uint dims, const size_t* offset,
                             const size_t* global, const size_t* local) {
  CloneKernelFn clone = cloneKernelFn();
  if (!clone) {
    invalidate(
        "graph capture on ocl needs clCloneKernel (OpenCL 2.1), which the OpenCL loader "
        "does not export");
    throw CaptureError(invalid_reason_);
  }
  cl_int err = CL_SUCCESS;
  Kernel copy(clone(kernel, &err));
  if (err != CL_SUCCESS || !copy) {
    invalidate("graph capture on ocl: clCloneKernel(" + kernelName(kernel) + ") failed with " +
               clErrorName(err) + " (the driver may not support it)");
    throw CaptureError(invalid_reason_);
  }
  Node n{Node::kKernel};
  n.kernel = std::move(copy);
  n.dims = dims;
  for (cl_uint d = 0; d < dims && d < 3; ++d) {
    n.global[d] = global[d];
    if (offset) n.offset[d] = offset[d];
    if (local) n.local[d] = local[d];
  }
  n.has_offset = offset != nullptr;
  n.has_local = local != nullptr;
  nodes_.push_back(std::move(n));
  ++kernel_nodes_;
}

void CommandGraph::addNativeKernel(void(CL_CALLBACK* fn)(void*), const void* args, size_t args_size,
                                   cl_uint num_mems, const cl_mem* mems, const void** mem_locs) {
  Node n{Node::kNative};
  n.fn = fn;
  n.args.resize((args_size + 7) / 8);
  if (args_size) std::memcpy(n.args.data(), args, args_size);
  n.args_size = args_size;
  for (cl_uint i = 0; i < num_mems; ++i) {
    n.mems.push_back(Mem::retained(mems[i]));
    n.mem_locs.push_back(static_cast<size_t>(static_cast<const char*>(mem_locs[i]) -
                                             static_cast<const char*>(args)));
  }
  nodes_.push_back(std::move(n));
}

void CommandGraph::addCopy(cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                           size_t bytes) {
  Node n{Node::kCopy};
  n.src = Mem::retained(src);
  n.dst = Mem::retained(dst);
  n.src_offset = src_offset;
  n.dst_offset = dst_offset;
  n.bytes = bytes;
  nodes_.push_back(std::move(n));
}

void CommandGraph::addFill(cl_mem dst, const void* pattern, size_t pattern_size, size_t offset,
                           size_t bytes) {
  Node n{Node::kFill};
  n.dst = Mem::retained(dst);
  const auto* p = static_cast<const unsigned char*>(pattern);
  n.pattern.assign(p, p + pattern_size);
  n.dst_offset = offset;
  n.bytes = bytes;
  nodes_.push_back(std::move(n));
}

void CommandGraph::addWrite(cl_mem dst, size_t offset, size_t bytes, const void* host,
                            std::shared_ptr<void> keep_alive) {
  Node n{Node::kWrite};
  n.dst = Mem::retained(dst);
  n.dst_offset = offset;
  n.bytes = bytes;
  n.host = host;
  n.keep_alive = std::move(keep_alive);
  nodes_.push_back(std::move(n));
}

void CommandGraph::invalidate(const std::string& why) {
  if (invalid_reason_.empty()) invalid_reason_ = why;
}

size_t CommandGraph::size() const {
  return nodes_.size();
}

void CommandGraph::replay(cl_command_queue q) const {
  for (const Node& n : nodes_) {
    switch (n.kind) {
      case Node::kKernel:
        OCL_CHECK(clEnqueueNDRangeKernel(
            q, n.kernel.get(), n.dims, n.has_offset ? n.offset.data() : nullptr, n.global.data(),
            n.has_local ? n.local.data() : nullptr, 0, nullptr, nullptr));
        break;
      case Node::kNative: {
        std::array<const void*, 16> small_locs{};
        std::vector<const void*> big_locs;
        const void** locs = small_locs.data();
        if (n.mem_locs.size() > small_locs.size()) {
          big_locs.resize(n.mem_locs.size());
          locs = big_locs.data();
        }
        const char* base = reinterpret_cast<const char*>(n.args.data());
        std::array<cl_mem, 16> small_mems{};
        std::vector<cl_mem> big_mems;
        cl_mem* mems = small_mems.data();
        if (n.mems.size() > small_mems.size()) {
          big_mems.resize(n.mems.size());
          mems = big_mems.data();
        }
        for (size_t i = 0; i < n.mems.size(); ++i) {
          locs[i] = base + n.mem_locs[i];
          mems[i] = n.mems[i].get();
        }
        // The driver copies the block (and patches its copy), so ours stays as captured.
        OCL_CHECK(clEnqueueNativeKernel(q, n.fn, const_cast<void*>(static_cast<const void*>(base)),
                                        n.args_size, static_cast<cl_uint>(n.mems.size()),
                                        n.mems.empty() ? nullptr : mems,
                                        n.mems.empty() ? nullptr : locs, 0, nullptr, nullptr));
        break;
      }
      case Node::kCopy:
        OCL_CHECK(clEnqueueCopyBuffer(q, n.src.get(), n.dst.get(), n.src_offset, n.dst_offset,
                                      n.bytes, 0, nullptr, nullptr));
        break;
      case Node::kFill:
        OCL_CHECK(clEnqueueFillBuffer(q, n.dst.get(), n.pattern.data(), n.pattern.size(),
                                      n.dst_offset, n.bytes, 0, nullptr, nullptr));
        break;
      case Node::kWrite:
        OCL_CHECK(clEnqueueWriteBuffer(q, n.dst.get(), CL_FALSE, n.dst_offset, n.bytes, n.host, 0,
                                       nullptr, nullptr));
        break;
    }
  }
}

std::string CommandGraph::dump() const {
  std::ostringstream os;
  os << "ocl graph: " << nodes_.size() << " nodes (" << kernel_nodes_ << " kernels)\n";
  size_t i = 0;
  for (const Node& n : nodes_) {
    os << i++ << ": ";
    switch (n.kind) {
      case Node::kKernel:
        os << "kernel " << kernelName(n.kernel.get()) << " global=(";
        for (cl_uint d = 0; d < n.dims; ++d) os << (d ? "," : "") << n.global[d];
        os << ")";
        if (n.has_local) {
          os << " local=(";
          for (cl_uint d = 0; d < n.dims; ++d) os << (d ? "," : "") << n.local[d];
          os << ")";
        }
        if (n.has_offset) {
          os << " offset=(";
          for (cl_uint d = 0; d < n.dims; ++d) os << (d ? "," : "") << n.offset[d];
          os << ")";
        }
        break;
      case Node::kNative:
        os << "native kernel, " << n.args_size << " argument bytes, " << n.mems.size()
           << " buffers";
        break;
      case Node::kCopy:
        os << "copy " << n.bytes << " bytes " << n.src.get() << "+" << n.src_offset << " -> "
           << n.dst.get() << "+" << n.dst_offset;
        break;
      case Node::kFill:
        os << "fill " << n.bytes << " bytes at " << n.dst.get() << "+" << n.dst_offset << " with a "
           << n.pattern.size() << "-byte pattern";
        break;
      case Node::kWrite:
        os << "write " << n.bytes << " bytes from host " << n.host << " -> " << n.dst.get() << "+"
           << n.dst_offset;
        break;
    }
    os << "\n";
  }
  return os.str();
}

// ---- capture state --------------------------------------------------------------------------

namespace capture {
namespace detail {
std::atomic<int> g_active{0};
}

namespace {
std::mutex g_mutex;
std::unordered_map<cl_command_queue, CommandGraph*> g_capturing;
thread_local cl_command_queue t_capture_queue = nullptr;  // this thread began a capture on it

[[noreturn]] void refuseOtherQueue(CommandGraph* g) {
  const std::string why =
      "an enqueue on another stream (or device) than the capturing one cannot be captured on "
      "ocl: a graph records a single stream";
  if (g) g->invalidate(why);
  throw CaptureError(why);
}
}  // namespace

CommandGraph* detail::lookup(cl_command_queue q) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_capturing.find(q);
  if (it != g_capturing.end()) return it->second;
  if (t_capture_queue) {
    auto own = g_capturing.find(t_capture_queue);
    refuseOtherQueue(own == g_capturing.end() ? nullptr : own->second);
  }
  return nullptr;
}

void begin(cl_command_queue q, CommandGraph* g) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (t_capture_queue)
    throw CaptureError("graph capture: this thread is already capturing (captures do not nest)");
  if (!g_capturing.emplace(q, g).second)
    throw CaptureError("graph capture: the stream is already capturing");
  t_capture_queue = q;
  detail::g_active.fetch_add(1, std::memory_order_relaxed);
}

void end(cl_command_queue q) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_capturing.erase(q) == 0) return;
  if (t_capture_queue == q) t_capture_queue = nullptr;
  detail::g_active.fetch_sub(1, std::memory_order_relaxed);
}

void refuse(cl_command_queue q, const std::string& what) {
  CommandGraph* g = graphOf(q);
  if (!g) return;
  const std::string why = what + " cannot be captured in a graph on ocl";
  g->invalidate(why);
  throw CaptureError(why);
}
}  // namespace capture

cl_int enqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK* fn)(void*), void* args,
                           size_t args_size, cl_uint num_mems, const cl_mem* mems,
                           const void** mem_locs, cl_uint num_events, const cl_event* wait_list,
                           cl_event* event) {
  CommandGraph* g = capture::graphOf(q);
  const cl_int err = clEnqueueNativeKernel(q, fn, args, args_size, num_mems, mems, mem_locs,
                                           num_events, wait_list, event);
  if (err == CL_SUCCESS && g) g->addNativeKernel(fn, args, args_size, num_mems, mems, mem_locs);
  return err;
}

}  // namespace torch_ocl::rt
