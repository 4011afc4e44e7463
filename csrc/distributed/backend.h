// c10d backend for ocl tensors ("ocl_gloo"): stages tensors through pinned host buffers into the
// ProcessGroupGloo that PyTorch ships (handed over from Python), never a transport of our own.
//
// A collective on ocl tensors runs in three steps:
//   1. the caller's thread makes the tensors host-readable on the tensor's current stream (maps
//      them in place on host-unified devices, or enqueues device-to-host copies into pinned
//      buffers) and keeps an event after that (the map command's own event, or a marker); no
//      device synchronisation;
//   2. a launcher thread waits for that event on the host and hands the host buffers to gloo, in
//      submission order (every rank issues gloo's collectives in the same order);
//   3. when gloo's work completes, a callback on gloo's worker thread (the one that ran the
//      collective; for gloo works without a future, send and recv, the completion thread) enqueues
//      the host-to-device copies (or the unmap) on a communication stream and completes the Work
//      and its Future, whose event orders the consumers' streams after those copies.
// The launcher and the completion run on different threads, so that the copies of one bucket
// overlap the communication of the previous one. CPU tensors go to gloo unchanged.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <c10/core/Event.h>

#include "runtime/handles.h"

#include <atomic>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace torch_ocl::distributed {

class OclWork;

class OclBackend final : public c10d::Backend {
 public:
  OclBackend(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size,
             std::chrono::milliseconds timeout);
  ~OclBackend() override;

  const std::string getBackendName() const override { return "ocl_gloo"; }
  c10::intrusive_ptr<c10d::Backend> glooBackend() const { return gloo_; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplitSizes,
                                               std::vector<int64_t>& inputSplitSizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) override;
  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;
  void setTimeout(std::chrono::milliseconds timeout) override;
  void waitForPendingWorks() override;
  void shutdown() override;
  // Stops the threads of every live backend (registered with atexit by torch_ocl.distributed).
  static void stopAll();

  // What a job does on the launcher thread (gloo calls on host buffers) and on the completion
  // thread (host-to-device copies; runs with the communication stream current).
  using Launch = std::function<std::vector<c10::intrusive_ptr<c10d::Work>>()>;
  using Finish = std::function<void()>;

 private:
  struct Job {
    explicit Job(c10::Device d) : device(d) {}
    c10::intrusive_ptr<OclWork> work;
    c10::Device device;
    rt::ClEvent ready;
    Launch launch;
    Finish finish;
    std::vector<c10::intrusive_ptr<c10d::Work>> gloo_works;
    std::exception_ptr error;
    std::atomic<size_t> pending{0};  // gloo futures not yet completed
    std::mutex error_mutex;
  };

  std::chrono::milliseconds effective(std::chrono::milliseconds t) const;
  // ready: the last command enqueued on the caller's stream for this collective, when its event
  // is at hand (the map of a mapped tensor); otherwise a marker is recorded.
  c10::intrusive_ptr<c10d::Work> submit(c10::Device device, c10d::OpType op,
                                        std::vector<at::Tensor> inputs,
                                        std::vector<at::Tensor> outputs, Launch launch,
                                        Finish finish, cl_event ready = nullptr);
  // A coalesced collective done as one gloo call a tensor: one(hins[i], houts[i]) on the launcher
  // thread, houts[i] copied back into outputs[i].
  template <typename One>
  c10::intrusive_ptr<c10d::Work> submitPerTensor(c10::Device device,
                                                 const std::vector<at::Tensor>& inputs,
                                                 const std::vector<at::Tensor>& outputs,
                                                 std::vector<at::Tensor> hins,
                                                 std::vector<at::Tensor> houts, One one);
  c10::Stream commStream(c10::Device device);
  void launcherLoop();
  void completionLoop();
  // Copies back, completes the Work and its Future, releases the job (any thread).
  void completeJob(const std::shared_ptr<Job>& job, std::exception_ptr error);
  // Completion through the gloo works' futures; false when a work has none (send, recv).
  bool completeOnGlooThreads(const std::shared_ptr<Job>& job);
  void stopThreads();

  c10::intrusive_ptr<c10d::Backend> gloo_;
  std::chrono::milliseconds timeout_;

  std::mutex mutex_;
  std::condition_variable launch_cv_, complete_cv_, idle_cv_;
  std::deque<std::shared_ptr<Job>> launch_q_, complete_q_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  std::mutex join_mutex_;
  std::mutex stream_mutex_;
  std::vector<std::optional<c10::Stream>> comm_streams_;
  std::thread launcher_, completer_;
};

class OclWork final : public c10d::Work {
 public:
  OclWork(int rank, c10d::OpType op, c10::Device device, std::vector<at::Tensor> inputs,
          std::vector<at::Tensor> outputs);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override;
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // Called when gloo is done and the copies back are enqueued, with the communication stream
  // current (the Future records its event there).
  void finish(std::exception_ptr error, int source_rank);

 private:
  void waitHost(std::chrono::milliseconds timeout);

  c10::Device device_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  int source_rank_ = -1;
};

}  // namespace torch_ocl::distributed
