// torch.accelerator.Graph on ocl: at::GraphImplInterface over the runtime's CommandGraph
// (runtime/graph.h: capture executes and records; a replay enqueues the recorded nodes on the
// current stream, in C++, in one call) and the allocator's graph memory pools.
//
// Memory pools follow CUDA graphs: a graph captures with a private pool ({id, 0}) unless it is
// given the pool of another graph (Graph(pool=other.pool())), which then share it (the user
// replays them in capture order). Allocations of the capturing stream come from the pool;
// blocks freed during the capture are reused within it; the pool's memory is kept (emptyCache
// leaves it alone) until the last graph using it is reset or destroyed.
//
// Built only against a torch that has the interface (2.12+); on older ones (2.11) this file
// compiles to nothing and torch.accelerator.Graph does not exist for any device.
#if __has_include(<ATen/core/GraphImplInterface.h>)

#include <ATen/core/GraphImplInterface.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>

#include "aten/launch.h"
#include "integration/command_names.h"
#include "integration/profiler.h"
#include "integration/state.h"
#include "runtime/graph.h"
#include "runtime/graph_observer.h"

#include <array>
#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace torch_ocl {
namespace {

std::atomic<at::CaptureId_t> g_next_id{1};

// Graph memory pools in use: PyTorch's pool id -> the allocator's pool id and how many graphs
// use it.
class MempoolRegistry {
 public:
  static MempoolRegistry& get() {
    static MempoolRegistry* r = new MempoolRegistry();  // NOLINT: lives as long as the process
    return *r;
  }
  int acquire(const at::MempoolId_t& id, c10::DeviceIndex dev) {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = pools_[id];
    if (e.uses == 0) {
      e.rt_id = next_rt_id_++;
      e.device = dev;
    }
    TORCH_CHECK(e.device == dev, "graph memory pool (", id.first, ", ", id.second,
                ") belongs to ocl:", e.device, " and cannot be used for a capture on ocl:", dev);
    ++e.uses;
    return e.rt_id;
  }
  void release(const at::MempoolId_t& id) {
    int rt_id = 0;
    c10::DeviceIndex dev = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pools_.find(id);
      if (it == pools_.end()) return;
      if (--it->second.uses > 0) return;
      rt_id = it->second.rt_id;
      dev = it->second.device;
      pools_.erase(it);
    }
    allocator(dev).releasePool(rt_id);
  }

 private:
  struct Entry {
    int rt_id = 0;
    int uses = 0;
    c10::DeviceIndex device = 0;
  };
  std::mutex mu_;
  std::map<at::MempoolId_t, Entry> pools_;
  int next_rt_id_ = 1;
};

class OclGraphImpl final : public at::GraphImplInterface {
 public:
  explicit OclGraphImpl(const at::GraphImplArgs& args = {}) : keep_graph_(args.keep_graph) {}
  ~OclGraphImpl() override {
    try {
      reset();
    } catch (...) {
    }
  }
  OclGraphImpl(const OclGraphImpl&) = delete;
  OclGraphImpl& operator=(const OclGraphImpl&) = delete;

  void capture_begin(at::MempoolId_t pool, at::GraphCaptureMode /*mode: one behaviour*/) override {
    TORCH_CHECK(!graph_ && !capturing_,
                "This ocl Graph instance already owns a captured graph. To capture a new graph, "
                "create a new instance or call reset() first.");
    const bool given = pool.first != 0 || pool.second != 0;
    TORCH_CHECK(!given || (pool.first == 0) != (pool.second == 0),
                "graph memory pool id must have exactly one nonzero part, got (", pool.first, ", ",
                pool.second, ")");
    dev_ = currentDevice();
    stream_ = currentStream(dev_);
    queue_ = queueOf(stream_);
    mempool_id_ = given ? pool : at::MempoolId_t{g_next_id.fetch_add(1), 0};
    rt_pool_ = MempoolRegistry::get().acquire(mempool_id_, dev_);
    auto graph = std::make_unique<rt::CommandGraph>();
    try {
      allocator(dev_).beginPoolCapture(static_cast<int>(stream_.id()), rt_pool_);
      try {
        rt::capture::begin(queue_, graph.get());
      } catch (...) {
        allocator(dev_).endPoolCapture(static_cast<int>(stream_.id()));
        throw;
      }
    } catch (const std::exception& e) {
      MempoolRegistry::get().release(mempool_id_);
      TORCH_CHECK(false, "ocl graph capture_begin failed: ", e.what());
    }
    graph_ = std::move(graph);
    capturing_ = true;
    instantiated_ = false;
  }

  void capture_end() override {
    TORCH_CHECK(capturing_, "capture_end() called on an ocl Graph that is not capturing");
    TORCH_CHECK(currentStream(dev_) == stream_,
                "Capture must end on the same stream it began on (ocl graph).");
    endCapture();
    if (!graph_->valid()) {
      const std::string why = graph_->invalidReason();
      reset();
      TORCH_CHECK(false, "ocl graph capture failed: ", why,
                  ". The capture was discarded (the Graph can capture again); eager work is not "
                  "affected.");
    }
    if (graph_->size() == 0)
      TORCH_WARN("The ocl graph is empty: nothing was enqueued on the capturing stream.");
    if (!keep_graph_) instantiate();
  }

  void instantiate() override {
    TORCH_CHECK(graph_ && !capturing_,
                "Called Graph.instantiate without a preceding successful capture (ocl).");
    instantiated_ = true;  // the nodes are ready to enqueue as captured
  }

  void replay() override {
    TORCH_CHECK(graph_ && !capturing_,
                "Called Graph.replay without a preceding successful capture (ocl).");
    if (!instantiated_) instantiate();
    cl_command_queue q = currentQueue(dev_);
    aten::refuseCapture(q, "replaying a graph inside another capture");
    OCL_TRY
    if (profilingActive()) {
      // A row for the replay, which its device rows link to, and a profiled event per node.
      RECORD_FUNCTION("ocl::graph_replay", c10::ArrayRef<const c10::IValue>{});
      const rt::ReplayObserver observe = [](cl_event ev, rt::ReplayNodeKind kind,
                                            cl_kernel kernel) {
        using K = rt::ReplayNodeKind;
        switch (kind) {
          case K::kKernel:
            return detail::recordProfiled(ev, CommandKind::kKernel, nullptr, kernel);
          case K::kNative:
            return detail::recordProfiled(ev, CommandKind::kKernel, command_names::kHostBlas,
                                          nullptr);
          case K::kCopy:
            return detail::recordProfiled(ev, CommandKind::kMemcpy, command_names::kMemcpyDtoD,
                                          nullptr);
          case K::kFill:
            return detail::recordProfiled(ev, CommandKind::kMemset, command_names::kMemset,
                                          nullptr);
          case K::kWrite:
            return detail::recordProfiled(ev, CommandKind::kMemcpy, command_names::kMemcpyHtoD,
                                          nullptr);
        }
      };
      rt::ObservedReplays scope(observe);
      graph_->replay(q);
    } else {
      graph_->replay(q);
    }
    OCL_CHECK(clFlush(q));
    OCL_CATCH
    replayed_on_[static_cast<size_t>(currentStream(dev_).id())] = true;
    aten::countLaunches(graph_->kernelNodes());
  }

  void reset() override {
    if (capturing_) endCapture();
    if (graph_) {
      // Replays in flight use the graph's kernels, argument blocks and host memory.
      for (size_t s = 0; s < replayed_on_.size(); ++s)
        if (replayed_on_[s]) OCL_CHECK(clFinish(device(dev_).queue(static_cast<int>(s))));
      replayed_on_.fill(false);
      OCL_CHECK(clFinish(queue_));
      graph_.reset();
      MempoolRegistry::get().release(mempool_id_);
    }
    instantiated_ = false;
  }

  at::MempoolId_t pool() const override {
    TORCH_CHECK(graph_, "Called Graph.pool without a preceding successful capture (ocl).");
    return mempool_id_;
  }

  void enable_debug_mode() override { debug_ = true; }

  void debug_dump(const std::string& path) override {
    TORCH_CHECK(debug_, "To call debug_dump, call enable_debug_mode() before capture (ocl).");
    TORCH_CHECK(graph_ && !capturing_, "debug_dump: no captured ocl graph to dump");
    std::ofstream out(path);
    TORCH_CHECK(out, "debug_dump: cannot open ", path, " for writing");
    out << graph_->dump();
  }

 private:
  void endCapture() {
    rt::capture::end(queue_);
    allocator(dev_).endPoolCapture(static_cast<int>(stream_.id()));
    capturing_ = false;
  }

  bool keep_graph_;
  bool capturing_ = false;
  bool instantiated_ = false;
  bool debug_ = false;
  std::unique_ptr<rt::CommandGraph> graph_;
  c10::DeviceIndex dev_ = 0;
  c10::Stream stream_{c10::Stream::DEFAULT, c10::Device(kOcl, 0)};
  cl_command_queue queue_ = nullptr;
  at::MempoolId_t mempool_id_{0, 0};
  int rt_pool_ = 0;
  std::array<bool, rt::kStreamsPerDevice> replayed_on_{};
};

}  // namespace
}  // namespace torch_ocl

namespace at {
// The registry key is c10::DeviceTypeName(PrivateUse1, false): "PRIVATEUSEONE" before
// torch_ocl renames the backend (at import, after this library loads), "OCL" after.
REGISTER_GRAPH_IMPL(OCL, torch_ocl::OclGraphImpl);
REGISTER_GRAPH_IMPL(PRIVATEUSEONE, torch_ocl::OclGraphImpl);
}  // namespace at

#endif  // __has_include(<ATen/core/GraphImplInterface.h>)
