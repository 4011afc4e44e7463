#include "graph.h"

#include "cl_error.h"
#include "graph_observer.h"
#include "graph_rng.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
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

// ---- random numbers (graph_rng.h) -----------------------------------------------------------
// Kept beside the graph, keyed by it, rather than in CommandGraph's members: graph.h is included
// by every op file, and only graphs that draw random numbers have an entry.

struct PhiloxStream {  // one generator of one graph
  const void* key = nullptr;
  std::shared_ptr<PhiloxSource> source;
  uint64_t seed = 0, first = 0, total = 0;  // seed and offset of its first draw; span drawn
};
struct HostWords {
  int64_t* seed = nullptr;
  int64_t* offset = nullptr;
  std::shared_ptr<void> keep_alive;
};
struct PhiloxDrawRecord {
  size_t stream = 0;
  uint64_t rel = 0;               // offset - the stream's first offset
  uint64_t seed = 0, offset = 0;  // at capture
  std::vector<HostWords> host;
  bool used = false;  // a recorded kernel or host words take it
  // Not a draw but (seed, offset) read from host memory at each replay (addHostSource).
  const int64_t* src_seed = nullptr;
  const int64_t* src_offset = nullptr;
  std::shared_ptr<void> src_keep_alive;
};
struct ArgPatch {  // kernel node's arguments re-set at each replay
  size_t node = 0;
  int draw = 0;
  cl_uint seed_arg = 0, offset_arg = 0;
};
struct Binding {  // capture only: launches of kernel get ArgPatches
  int draw = 0;
  cl_kernel kernel = nullptr;
  cl_uint seed_arg = 0, offset_arg = 0;
};
struct GraphRng {
  std::mutex replay_mutex;  // a replay re-sets the clones' arguments, then enqueues them
  std::vector<PhiloxStream> streams;
  std::vector<PhiloxDrawRecord> draws;
  std::vector<ArgPatch> patches;
  std::vector<Binding> bindings;
};

std::mutex g_rng_mutex;
std::unordered_map<const CommandGraph*, std::unique_ptr<GraphRng>> g_rng;
std::atomic<int> g_rng_graphs{0};

GraphRng* rngOf(const CommandGraph* g) {
  if (g_rng_graphs.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(g_rng_mutex);
  auto it = g_rng.find(g);
  return it == g_rng.end() ? nullptr : it->second.get();
}

GraphRng& rngFor(const CommandGraph* g) {
  std::lock_guard<std::mutex> lock(g_rng_mutex);
  auto& slot = g_rng[g];
  if (!slot) {
    slot = std::make_unique<GraphRng>();
    g_rng_graphs.fetch_add(1, std::memory_order_relaxed);
  }
  return *slot;
}

void forgetRng(const CommandGraph* g) {
  if (g_rng_graphs.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(g_rng_mutex);
  if (g_rng.erase(g)) g_rng_graphs.fetch_sub(1, std::memory_order_relaxed);
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
CommandGraph::~CommandGraph() {
  forgetRng(this);
}

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
  if (GraphRng* rng = rngOf(this)) {
    for (const Binding& b : rng->bindings)
      if (b.kernel == kernel) {
        rng->patches.push_back({nodes_.size() - 1, b.draw, b.seed_arg, b.offset_arg});
        rng->draws[b.draw].used = true;
      }
  }
}

void CommandGraph::addNativeKernel(void(CL_CALLBACK* fn)(void*), const void* args, size_t args_size,
                                   cl_uint num_mems, const cl_mem* mems, const void** mem_locs) {
  Node n{Node::kNative};
  ++kernel_nodes_;  // a native kernel is a kernel node too (a replay counts it as a launch)
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

namespace {
thread_local const ReplayObserver* t_replay_observer = nullptr;
}  // namespace

ObservedReplays::ObservedReplays(const ReplayObserver& observer) : previous_(t_replay_observer) {
  t_replay_observer = &observer;
}

ObservedReplays::~ObservedReplays() {
  t_replay_observer = previous_;
}

const ReplayObserver* replayObserver() {
  return t_replay_observer;
}

void CommandGraph::replay(cl_command_queue q) const {
  const ReplayObserver* observer = t_replay_observer;
  GraphRng* rng = rngOf(this);
  std::unique_lock<std::mutex> rng_lock;
  if (rng && !rng->draws.empty()) {
    // CUDA's replay prologue: the numbers of this replay are those eager code would draw from
    // each generator's current state, which then advances past the whole capture.
    rng_lock = std::unique_lock<std::mutex>(rng->replay_mutex);
    std::vector<std::pair<uint64_t, uint64_t>> base(rng->streams.size());
    for (size_t i = 0; i < rng->streams.size(); ++i)
      base[i] = rng->streams[i].source->advance(rng->streams[i].total);
    auto valueOf = [&](const PhiloxDrawRecord& d) -> std::pair<uint64_t, uint64_t> {
      if (d.src_seed)
        return {static_cast<uint64_t>(*d.src_seed), static_cast<uint64_t>(*d.src_offset)};
      return {base[d.stream].first, base[d.stream].second + d.rel};
    };
    for (const PhiloxDrawRecord& d : rng->draws) {
      for (const HostWords& h : d.host) {
        const auto v = valueOf(d);
        *h.seed = static_cast<int64_t>(v.first);
        *h.offset = static_cast<int64_t>(v.second);
      }
    }
    for (const ArgPatch& p : rng->patches) {
      const auto v = valueOf(rng->draws[p.draw]);
      const cl_ulong seed = v.first, offset = v.second;
      cl_kernel k = nodes_[p.node].kernel.get();
      OCL_CHECK(clSetKernelArg(k, p.seed_arg, sizeof(cl_ulong), &seed));
      OCL_CHECK(clSetKernelArg(k, p.offset_arg, sizeof(cl_ulong), &offset));
    }
  }
  for (const Node& n : nodes_) {
    cl_event ev = nullptr;
    cl_event* evp = observer ? &ev : nullptr;
    ReplayNodeKind kind = ReplayNodeKind::kKernel;
    switch (n.kind) {
      case Node::kKernel:
        OCL_CHECK(clEnqueueNDRangeKernel(q, n.kernel.get(), n.dims,
                                         n.has_offset ? n.offset.data() : nullptr, n.global.data(),
                                         n.has_local ? n.local.data() : nullptr, 0, nullptr, evp));
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
                                        n.mems.empty() ? nullptr : locs, 0, nullptr, evp));
        kind = ReplayNodeKind::kNative;
        break;
      }
      case Node::kCopy:
        OCL_CHECK(clEnqueueCopyBuffer(q, n.src.get(), n.dst.get(), n.src_offset, n.dst_offset,
                                      n.bytes, 0, nullptr, evp));
        kind = ReplayNodeKind::kCopy;
        break;
      case Node::kFill:
        OCL_CHECK(clEnqueueFillBuffer(q, n.dst.get(), n.pattern.data(), n.pattern.size(),
                                      n.dst_offset, n.bytes, 0, nullptr, evp));
        kind = ReplayNodeKind::kFill;
        break;
      case Node::kWrite:
        OCL_CHECK(clEnqueueWriteBuffer(q, n.dst.get(), CL_FALSE, n.dst_offset, n.bytes, n.host, 0,
                                       nullptr, evp));
        kind = ReplayNodeKind::kWrite;
        break;
    }
    if (ev) (*observer)(ev, kind, n.kind == Node::kKernel ? n.kernel.get() : nullptr);
  }
}

std::string CommandGraph::dump() const {
  std::ostringstream os;
  os << "ocl graph: " << nodes_.size() << " nodes (" << kernel_nodes_ << " kernels)\n";
  const GraphRng* rng = rngOf(this);
  if (rng && !rng->draws.empty()) {
    size_t host = 0;
    for (const PhiloxDrawRecord& d : rng->draws) host += d.src_seed != nullptr;
    os << "random numbers: " << rng->draws.size() - host << " draws from " << rng->streams.size()
       << " generators, " << host << " (seed, offset) pairs read from host memory, "
       << rng->patches.size()
       << " kernels whose (seed, offset) arguments are re-set at each replay\n";
  }
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
  auto it = g_capturing.find(q);
  if (it == g_capturing.end()) return;
  if (GraphRng* rng = rngOf(it->second)) rng->bindings.clear();
  g_capturing.erase(it);
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

namespace philox_capture {

int addDraw(CommandGraph& g, const void* key, uint64_t seed, uint64_t offset, uint64_t increment,
            const std::function<std::shared_ptr<PhiloxSource>()>& make) {
  GraphRng& rng = rngFor(&g);
  size_t s = 0;
  while (s < rng.streams.size() && rng.streams[s].key != key) ++s;
  if (s == rng.streams.size()) {
    PhiloxStream st;
    st.key = key;
    st.source = make();
    st.seed = seed;
    st.first = offset;
    rng.streams.push_back(std::move(st));
  }
  PhiloxStream& st = rng.streams[s];
  if (seed != st.seed || offset < st.first) {
    const std::string why =
        "a generator whose seed or offset was set back during the capture cannot be captured in "
        "a graph on ocl (its draws could not be replayed as eager code would make them)";
    g.invalidate(why);
    throw CaptureError(why);
  }
  PhiloxDrawRecord d;
  d.stream = s;
  d.rel = offset - st.first;
  d.seed = seed;
  d.offset = offset;
  st.total = std::max(st.total, d.rel + increment);
  rng.draws.push_back(std::move(d));
  return static_cast<int>(rng.draws.size() - 1);
}

int findDraw(const CommandGraph& g, uint64_t seed, uint64_t offset) {
  const GraphRng* rng = rngOf(&g);
  if (!rng) return -1;
  for (size_t i = 0; i < rng->draws.size(); ++i)
    if (!rng->draws[i].src_seed && rng->draws[i].seed == seed && rng->draws[i].offset == offset)
      return static_cast<int>(i);
  return -1;
}

int addHostSource(CommandGraph& g, const int64_t* seed, const int64_t* offset,
                  std::shared_ptr<void> keep_alive) {
  GraphRng& rng = rngFor(&g);
  PhiloxDrawRecord d;
  d.stream = static_cast<size_t>(-1);
  d.src_seed = seed;
  d.src_offset = offset;
  d.src_keep_alive = std::move(keep_alive);
  rng.draws.push_back(std::move(d));
  return static_cast<int>(rng.draws.size() - 1);
}

void bind(CommandGraph& g, int d, cl_kernel k, cl_uint seed_arg, cl_uint offset_arg) {
  rngFor(&g).bindings.push_back({d, k, seed_arg, offset_arg});
}

void unbind(CommandGraph& g, int d, bool require_use) {
  GraphRng* rng = rngOf(&g);
  if (!rng || d < 0 || static_cast<size_t>(d) >= rng->draws.size()) return;
  auto& b = rng->bindings;
  b.erase(std::remove_if(b.begin(), b.end(), [d](const Binding& x) { return x.draw == d; }),
          b.end());
  if (require_use && !rng->draws[d].used)
    g.invalidate(
        "random numbers drawn for an ocl kernel that does not bind its (seed, offset) arguments "
        "for replay (a replay would repeat the captured numbers) cannot be captured in a graph "
        "on ocl");
}

void bindHost(CommandGraph& g, int d, int64_t* seed, int64_t* offset,
              std::shared_ptr<void> keep_alive) {
  PhiloxDrawRecord& rec = rngFor(&g).draws.at(static_cast<size_t>(d));
  rec.host.push_back({seed, offset, std::move(keep_alive)});
  rec.used = true;
}

size_t draws(const CommandGraph& g) {
  const GraphRng* rng = rngOf(&g);
  return rng ? rng->draws.size() : 0;
}

}  // namespace philox_capture

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
