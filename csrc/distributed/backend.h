// c10d backend for ocl tensors ("ocl_gloo"): stages tensors through pinned host buffers into the
// ProcessGroupGloo that PyTorch ships (handed over from Python), never a transport of our own.
//
// A collective on ocl tensors runs in three steps:
//   1. the caller's thread enqueues the device-to-host copies on the tensor's current stream and
//      records an event after them (no device synchronisation);
//   2. a launcher thread waits for that event on the host and hands the host buffers to gloo;
//   3. a completion thread waits for gloo's work, enqueues the host-to-device copies on a
//      communication stream, records an end event and completes the Work and its Future.
// Steps 2 and 3 are separate threads so that the copies of one bucket overlap the communication
// of the previous one. CPU tensors go to gloo unchanged.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <c10/core/Event.h>

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
    c10::intrusive_ptr<OclWork> work;
    std::shared_ptr<c10::Event> ready;
    Launch launch;
    Finish finish;
    std::vector<c10::intrusive_ptr<c10d::Work>> gloo_works;
    std::exception_ptr error;
  };

  std::chrono::milliseconds effective(std::chrono::milliseconds t) const;
  c10::intrusive_ptr<c10d::Work> submit(c10::Device device, c10d::OpType op,
                                        std::vector<at::Tensor> inputs,
                                        std::vector<at::Tensor> outputs, Launch launch,
                                        Finish finish);
  c10::Stream commStream(c10::Device device);
  void launcherLoop();
  void completionLoop();
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

  // Called by the backend's completion thread, with the communication stream current.
  void finish(std::exception_ptr error, std::shared_ptr<c10::Event> end, int source_rank);

 private:
  void waitHost(std::chrono::milliseconds timeout);

  c10::Device device_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::shared_ptr<c10::Event> end_;
  int source_rank_ = -1;
};

}  // namespace torch_ocl::distributed
