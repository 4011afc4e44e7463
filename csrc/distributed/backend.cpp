// The ocl_gloo c10d backend: see backend.h for the pipeline.
#include "distributed/backend.h"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "integration/allocator.h"
#include "integration/state.h"
#include "runtime/cl_error.h"

#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

namespace torch_ocl::distributed {
namespace {

constexpr c10::DeviceType kOcl = c10::DeviceType::PrivateUse1;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;
using Works = std::vector<WorkPtr>;

// The dtypes gloo transports (ProcessGroupGloo's GENERATE_ALL_TYPES).
bool glooHolds(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat:
    case c10::kDouble:
    case c10::kHalf:
    case c10::kBFloat16:
    case c10::kChar:
    case c10::kByte:
    case c10::kBool:
    case c10::kInt:
    case c10::kLong:
      return true;
    default:
      return false;
  }
}

// Where a list of tensors lives: std::nullopt for CPU tensors (they go to gloo unchanged), the
// ocl device otherwise. Mixed lists and other devices get an error.
std::optional<c10::Device> placeOf(const std::vector<at::Tensor>& tensors, const char* op) {
  std::optional<c10::Device> dev;
  bool cpu = false;
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.defined(), "ocl_gloo::", op, ": undefined tensor");
    TORCH_CHECK(t.layout() == c10::kStrided, "ocl_gloo::", op,
                ": only dense (strided) tensors are supported, got ", t.layout());
    if (t.device().is_cpu()) {
      cpu = true;
      continue;
    }
    TORCH_CHECK(t.device().type() == kOcl, "ocl_gloo::", op, ": unsupported device type ",
                t.device().type());
    TORCH_CHECK(!dev || *dev == t.device(), "ocl_gloo::", op,
                ": all tensors must be on the same device, got ", *dev, " and ", t.device());
    dev = t.device();
    TORCH_CHECK(glooHolds(t.scalar_type()), "ocl_gloo::", op, ": unsupported dtype ",
                t.scalar_type(),
                " (gloo transports float, double, half, bfloat16, int8, uint8, bool, int32 and "
                "int64)");
  }
  TORCH_CHECK(!(cpu && dev), "ocl_gloo::", op, ": tensors on cpu and ", *dev,
              " cannot be mixed in one collective");
  return dev;
}

void append(std::vector<at::Tensor>& all, const std::vector<at::Tensor>& list) {
  all.insert(all.end(), list.begin(), list.end());
}
void append(std::vector<at::Tensor>& all, const std::vector<std::vector<at::Tensor>>& lists) {
  for (const auto& l : lists) append(all, l);
}
// Every tensor of a collective's arguments (lists and lists of lists), in order: what placeOf
// checks.
template <typename... Lists>
std::vector<at::Tensor> joined(const Lists&... lists) {
  std::vector<at::Tensor> all;
  (append(all, lists), ...);
  return all;
}

at::Tensor pinnedEmpty(at::IntArrayRef sizes, c10::ScalarType dtype) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).pinned_memory(true));
}

// Enqueues the device-to-host copy of t on its current stream into a fresh pinned buffer.
at::Tensor stageOut(const at::Tensor& t) {
  at::Tensor host = pinnedEmpty(t.sizes(), t.scalar_type());
  if (t.numel() > 0) host.copy_(t, /*non_blocking=*/true);
  return host;
}

// PREMUL_SUM is a SUM of inputs scaled on the device first; other ops pass through.
bool isPremul(const c10d::ReduceOp& op) {
  return op.op_ == c10d::ReduceOp::PREMUL_SUM;
}
at::Tensor premul(const at::Tensor& t, const c10d::ReduceOp& op) {
  // NCCLPreMulSumSupplement: the name torch 2.11 declares, an alias of PreMulSumSupplement in 2.13.
  auto* sup = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(sup, "ocl_gloo: PREMUL_SUM without its factor");
  if (sup->tensor_factor.defined()) return t * sup->tensor_factor.to(t.device());
  return t * sup->double_factor;
}
c10d::ReduceOp glooOp(const c10d::ReduceOp& op) {
  return isPremul(op) ? c10d::ReduceOp(c10d::ReduceOp::SUM) : op;
}
at::Tensor stageReduceInput(const at::Tensor& t, const c10d::ReduceOp& op) {
  return stageOut(isPremul(op) ? premul(t, op) : t);
}

// The per-rank views of a flat host buffer holding size blocks of n elements, as gloo's
// allgather and reduce_scatter take them (a single list).
std::vector<std::vector<at::Tensor>> rankViews(const at::Tensor& flat, int size, int64_t n,
                                               at::IntArrayRef shape) {
  std::vector<std::vector<at::Tensor>> v(1);
  for (int r = 0; r < size; ++r) v[0].push_back(flat.narrow(0, r * n, n).view(shape));
  return v;
}

void recordOnStream(const at::Tensor& t, const c10::Stream& s) {
  if (!t.defined() || t.numel() == 0) return;
  c10::impl::VirtualGuardImpl impl(kOcl);
  impl.recordDataPtrOnStream(t.storage().data_ptr(), s);
}

// Host-to-device copy on the current (communication) stream.
void stageIn(const at::Tensor& dst, const at::Tensor& host) {
  if (dst.numel() == 0) return;
  dst.copy_(host.view(dst.sizes()), /*non_blocking=*/true);
  recordOnStream(dst, c10::impl::VirtualGuardImpl(kOcl).getStream(dst.device()));
}

// Zero-copy path for devices whose memory is the host's (PoCL, integrated GPUs reporting
// CL_DEVICE_HOST_UNIFIED_MEMORY on a CPU device): a contiguous tensor is mapped with
// clEnqueueMapBuffer on its stream (ordered like a copy, complete when the ready event is) and
// gloo works on the mapped bytes in place; the unmap is enqueued on the communication stream
// after gloo is done. TORCH_OCL_DIST_ZERO_COPY=0 forces the pinned staging copies.
bool zeroCopyEnabled(c10::Device d) {
  static const bool env = [] {
    const char* v = std::getenv("TORCH_OCL_DIST_ZERO_COPY");
    return !(v && std::string(v) == "0");
  }();
  if (!env) return false;
  const rt::DeviceInfo& info = torch_ocl::device(d.index()).info();
  return info.host_unified_memory && (info.type & CL_DEVICE_TYPE_CPU);
}

class Mapping {
 public:
  Mapping(const at::Tensor& t) : device_(t.device()) {
    rt::BufferRef ref = resolvePtr(t.data_ptr());
    mem_ = ref.mem;
    cl_int err = CL_SUCCESS;
    OCL_TRY
    cl_command_queue q = currentQueue(t.device().index());
    cl_event ev = nullptr;
    ptr_ = clEnqueueMapBuffer(q, mem_, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, ref.offset, t.nbytes(),
                              0, nullptr, &ev, &err);
    OCL_CHECK_ERR(err, "clEnqueueMapBuffer");
    event_ = rt::ClEvent(ev);
    // No flush: the launcher's clWaitForEvents on this event flushes the queue, so that the
    // caller does not pay for waking the driver.
    OCL_CATCH
    host_ = at::from_blob(ptr_, t.sizes(), at::TensorOptions().dtype(t.scalar_type()));
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    try {
      unmap();
    } catch (...) {
    }
  }
  const at::Tensor& host() const { return host_; }
  // The map command's event: complete when the bytes may be read on the host.
  cl_event event() const { return event_.get(); }
  // Enqueued on the current stream of the tensor's device (the communication stream in finish).
  void unmap() {
    if (!ptr_) return;
    host_ = at::Tensor();
    cl_command_queue q = currentQueue(device_.index());
    void* p = ptr_;
    ptr_ = nullptr;
    OCL_TRY
    OCL_CHECK(clEnqueueUnmapMemObject(q, mem_, p, 0, nullptr, nullptr));
    OCL_CHECK(clFlush(q));
    OCL_CATCH
  }

 private:
  c10::Device device_;
  cl_mem mem_ = nullptr;
  void* ptr_ = nullptr;
  rt::ClEvent event_;
  at::Tensor host_;
};

std::shared_ptr<Mapping> tryMap(const at::Tensor& t) {
  if (t.numel() == 0 || !t.is_contiguous() || !zeroCopyEnabled(t.device())) return nullptr;
  return std::make_shared<Mapping>(t);
}

// The host side of an ocl tensor: mapped in place when possible, otherwise a pinned buffer
// (filled from the device when `read`). `done` runs in finish: unmap, or the copy back when
// `write`.
struct HostSide {
  at::Tensor host;
  std::shared_ptr<Mapping> map;
  at::Tensor dev;
  bool write = false;
  void done() const {
    if (map) {
      map->unmap();
    } else if (write) {
      stageIn(dev, host);
    }
  }
};

// The launch of a collective on a single host tensor: call({host}), one gloo work.
template <typename Call>
OclBackend::Launch onHost(at::Tensor host, Call call) {
  return [host, call]() mutable {
    std::vector<at::Tensor> v{host};
    return Works{call(v)};
  };
}

// The finish of a collective whose outputs come back from host buffers one to one.
OclBackend::Finish stageInEach(std::vector<at::Tensor> outs, std::vector<at::Tensor> houts) {
  return [outs = std::move(outs), houts = std::move(houts)] {
    for (size_t i = 0; i < outs.size(); ++i) stageIn(outs[i], houts[i]);
  };
}

// Host buffers of a coalesced collective done as one gloo call per tensor: stage(inputs[i]) and
// an empty pinned buffer like outputs[i]. Gathering, outputs[i] holds world times the elements of
// inputs[i] (its buffer is flat); scattering, inputs[i] holds world times those of outputs[i].
struct StagedPairs {
  std::vector<at::Tensor> hins, houts;
};
template <typename Stage>
StagedPairs stagePairs(const std::vector<at::Tensor>& outputs,
                       const std::vector<at::Tensor>& inputs, int world, bool gathering,
                       const char* op, const char* size_error, Stage stage) {
  TORCH_CHECK(outputs.size() == inputs.size(), "ocl_gloo::", op,
              ": as many outputs as inputs expected");
  StagedPairs p;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& big = gathering ? outputs[i] : inputs[i];
    const at::Tensor& small = gathering ? inputs[i] : outputs[i];
    TORCH_CHECK(big.numel() == small.numel() * world && big.scalar_type() == small.scalar_type(),
                "ocl_gloo::", op, ": ", size_error);
    p.hins.push_back(stage(inputs[i]));
    p.houts.push_back(gathering ? pinnedEmpty({outputs[i].numel()}, outputs[i].scalar_type())
                                : pinnedEmpty(outputs[i].sizes(), outputs[i].scalar_type()));
  }
  return p;
}

// Gloo's options for a collective: the effective timeout, and SUM for PREMUL_SUM (the inputs are
// scaled when staged).
template <typename Opts>
Opts withTimeout(const Opts& opts, std::chrono::milliseconds timeout) {
  Opts o = opts;
  o.timeout = timeout;
  return o;
}
template <typename Opts>
Opts reduceOptions(const Opts& opts, std::chrono::milliseconds timeout) {
  Opts o = withTimeout(opts, timeout);
  o.reduceOp = glooOp(opts.reduceOp);
  return o;
}

HostSide hostSide(const at::Tensor& t, bool read, bool write) {
  HostSide h;
  h.dev = t;
  h.write = write;
  h.map = tryMap(t);
  if (h.map) {
    h.host = h.map->host();
  } else {
    h.host = read ? stageOut(t) : pinnedEmpty(t.sizes(), t.scalar_type());
  }
  return h;
}

}  // namespace

// ---- Work ------------------------------------------------------------------------------------

OclWork::OclWork(int rank, c10d::OpType op, c10::Device device, std::vector<at::Tensor> inputs,
                 std::vector<at::Tensor> outputs)
    : c10d::Work(rank, op, nullptr, std::optional<std::vector<at::Tensor>>(std::move(inputs))),
      device_(device),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()), std::vector<c10::Device>{device})) {}

bool OclWork::isCompleted() {
  std::lock_guard<std::mutex> g(m_);
  return done_;
}

bool OclWork::isSuccess() const {
  std::lock_guard<std::mutex> g(m_);
  return done_ && !error_;
}

std::exception_ptr OclWork::exception() const {
  std::lock_guard<std::mutex> g(m_);
  return error_;
}

int OclWork::sourceRank() const {
  std::lock_guard<std::mutex> g(m_);
  TORCH_CHECK(source_rank_ >= 0,
              "sourceRank() may only be called on a completed recv from any source");
  return source_rank_;
}

std::vector<at::Tensor> OclWork::result() {
  return outputs_;
}

void OclWork::waitHost(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(m_);
  if (timeout == kNoTimeout) {
    cv_.wait(lk, [&] { return done_; });
  } else if (!cv_.wait_for(lk, timeout, [&] { return done_; })) {
    C10_THROW_ERROR(DistBackendError, "ocl_gloo: operation " + c10d::opTypeToString(opType_) +
                                          " timed out after " + std::to_string(timeout.count()) +
                                          " ms");
  }
  if (error_) std::rethrow_exception(error_);
}

void OclWork::synchronize() {
  waitHost(kNoTimeout);
  // Orders the caller's streams after the host-to-device copies (the Future's events, recorded
  // on the communication stream after them), without a host wait on them.
  future_->wait();
}

bool OclWork::wait(std::chrono::milliseconds timeout) {
  waitHost(timeout);
  future_->wait();
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> OclWork::getFuture() {
  return future_;
}

void OclWork::finish(std::exception_ptr error, int source_rank) {
  {
    std::lock_guard<std::mutex> g(m_);
    error_ = error;
    source_rank_ = source_rank;
    done_ = true;
  }
  cv_.notify_all();
  if (error) {
    future_->setError(error);
  } else {
    // Records an event on the current (communication) stream: consumers of the future (and
    // wait(), through future_->wait()) wait on it. Callbacks run here, on the completing thread,
    // as they do for gloo's own futures.
    future_->markCompleted(c10::IValue(outputs_));
  }
}

// ---- Backend ---------------------------------------------------------------------------------

namespace {
// Live backends, so that the interpreter's exit can stop their threads while everything they
// use still exists (a group the program never destroyed is otherwise torn down in static
// destruction, where that is not the case).
std::mutex& liveMutex() {
  static auto* m = new std::mutex();
  return *m;
}
std::set<OclBackend*>& live() {
  static auto* s = new std::set<OclBackend*>();
  return *s;
}
}  // namespace

void OclBackend::stopAll() {
  std::lock_guard<std::mutex> g(liveMutex());
  for (OclBackend* b : live()) b->stopThreads();
}

OclBackend::OclBackend(c10::intrusive_ptr<c10d::Backend> gloo, int rank, int size,
                       std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), gloo_(std::move(gloo)), timeout_(timeout) {
  TORCH_CHECK(gloo_, "ocl_gloo: a ProcessGroupGloo is required");
  TORCH_CHECK(gloo_->getRank() == rank && gloo_->getSize() == size,
              "ocl_gloo: the gloo backend has rank ", gloo_->getRank(), " of ", gloo_->getSize(),
              ", expected ", rank, " of ", size);
  launcher_ = std::thread([this] { launcherLoop(); });
  completer_ = std::thread([this] { completionLoop(); });
  std::lock_guard<std::mutex> g(liveMutex());
  live().insert(this);
}

OclBackend::~OclBackend() {
  {
    std::lock_guard<std::mutex> g(liveMutex());
    live().erase(this);
  }
  stopThreads();
}

void OclBackend::stopThreads() {
  {
    std::lock_guard<std::mutex> g(mutex_);
    stop_ = true;
  }
  launch_cv_.notify_all();
  complete_cv_.notify_all();
  std::lock_guard<std::mutex> g(join_mutex_);
  for (std::thread* t : {&launcher_, &completer_}) {
    if (!t->joinable()) continue;
    if (t->get_id() == std::this_thread::get_id()) {
      t->detach();  // the last reference dropped on our own thread
    } else {
      t->join();
    }
  }
}

void OclBackend::shutdown() {
  stopThreads();
  gloo_->shutdown();
}

std::chrono::milliseconds OclBackend::effective(std::chrono::milliseconds t) const {
  return t == c10d::kUnsetTimeout ? timeout_ : t;
}

void OclBackend::setTimeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  gloo_->setTimeout(timeout);
}

void OclBackend::setSequenceNumberForGroup() {
  gloo_->setSequenceNumberForGroup();
}

uint64_t OclBackend::getSequenceNumberForGroup() {
  return gloo_->getSequenceNumberForGroup();
}

c10::Stream OclBackend::commStream(c10::Device device) {
  std::lock_guard<std::mutex> g(stream_mutex_);
  const size_t i = static_cast<size_t>(device.index());
  if (comm_streams_.size() <= i) comm_streams_.resize(i + 1);
  if (!comm_streams_[i]) {
    c10::impl::VirtualGuardImpl impl(kOcl);
    comm_streams_[i] = impl.getStreamFromGlobalPool(device, /*isHighPriority=*/true);
  }
  return *comm_streams_[i];
}

WorkPtr OclBackend::submit(c10::Device device, c10d::OpType op, std::vector<at::Tensor> inputs,
                           std::vector<at::Tensor> outputs, Launch launch, Finish finish,
                           cl_event ready) {
  auto job = std::make_shared<Job>(device);
  job->work =
      c10::make_intrusive<OclWork>(rank_, op, device, std::move(inputs), std::move(outputs));
  // Everything enqueued on the caller's stream so far (the staging copies included) happens
  // before gloo reads the host buffers and before the results are copied back. The queue is
  // in order: the event of the last command enqueued for this collective stands for all of them.
  if (ready) {
    job->ready = rt::ClEvent::retained(ready);
  } else {
    cl_command_queue q = currentQueue(device.index());
    OCL_TRY
    OCL_CHECK(clEnqueueMarkerWithWaitList(q, 0, nullptr, job->ready.out()));
    OCL_CHECK(clFlush(q));
    OCL_CATCH
  }
  job->launch = std::move(launch);
  job->finish = std::move(finish);
  {
    std::lock_guard<std::mutex> g(mutex_);
    TORCH_CHECK(!stop_, "ocl_gloo: the process group has been shut down");
    launch_q_.push_back(job);
    ++in_flight_;
  }
  launch_cv_.notify_one();
  return job->work;
}

void OclBackend::launcherLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lk(mutex_);
      launch_cv_.wait(lk, [&] { return stop_ || !launch_q_.empty(); });
      if (launch_q_.empty()) return;  // stopping and drained
      job = launch_q_.front();
      launch_q_.pop_front();
    }
    try {
      cl_event e = job->ready.get();
      cl_int status = CL_COMPLETE;
      OCL_TRY
      OCL_CHECK(clWaitForEvents(1, &e));
      OCL_CHECK(
          clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr));
      if (status < 0)
        throw rt::ClError(status, "the staging of a collective (CL_EVENT_COMMAND_EXECUTION_STATUS)",
                          __FILE__, __LINE__);
      OCL_CATCH
      job->gloo_works = job->launch();
    } catch (...) {
      job->error = std::current_exception();
    }
    if (!job->error && completeOnGlooThreads(job)) continue;
    {
      std::lock_guard<std::mutex> g(mutex_);
      complete_q_.push_back(job);
    }
    complete_cv_.notify_one();
  }
}

bool OclBackend::completeOnGlooThreads(const std::shared_ptr<Job>& job) {
  std::vector<c10::intrusive_ptr<c10::ivalue::Future>> futs;
  if (job->work->retrieveOpType() == c10d::OpType::RECVANYSOURCE) return false;
  try {
    for (const WorkPtr& w : job->gloo_works) futs.push_back(w->getFuture());
  } catch (const c10::Error&) {
    return false;  // send/recv works have no future: the completion thread waits for them
  }
  if (futs.empty()) return false;
  job->pending = futs.size();
  // The last future to complete finishes the job, on the gloo worker thread that completed it
  // (or here, when it already has).
  for (const auto& f : futs) {
    f->addCallback([this, job](c10::ivalue::Future& fut) {
      if (fut.hasError()) {
        std::lock_guard<std::mutex> g(job->error_mutex);
        if (!job->error) job->error = fut.exception_ptr();
      }
      if (--job->pending == 0) {
        std::exception_ptr error;
        {
          std::lock_guard<std::mutex> g(job->error_mutex);
          error = job->error;
        }
        completeJob(job, error);
      }
    });
  }
  return true;
}

void OclBackend::completionLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lk(mutex_);
      complete_cv_.wait(lk, [&] {
        return !complete_q_.empty() || (stop_ && launch_q_.empty() && in_flight_ == 0);
      });
      if (complete_q_.empty()) return;
      job = complete_q_.front();
      complete_q_.pop_front();
    }
    std::exception_ptr error = job->error;
    if (!error) {
      try {
        for (const WorkPtr& w : job->gloo_works) w->wait();
      } catch (...) {
        error = std::current_exception();
      }
    }
    completeJob(job, error);
  }
}

void OclBackend::completeJob(const std::shared_ptr<Job>& job, std::exception_ptr error) {
  int source_rank = -1;
  {
    c10::Stream comm = commStream(job->device);
    c10::StreamGuard guard(comm);
    if (!error) {
      try {
        if (job->work->retrieveOpType() == c10d::OpType::RECVANYSOURCE)
          for (const WorkPtr& w : job->gloo_works) source_rank = w->sourceRank();
        if (job->finish) job->finish();
      } catch (...) {
        error = std::current_exception();
      }
    }
    job->work->finish(error, source_rank);
    // Drop the buffers (host staging, outputs) while the stream guard still holds.
    job->launch = nullptr;
    job->finish = nullptr;
    job->gloo_works.clear();
  }
  // Notified under the lock: once in_flight_ is 0 the backend may be destroyed.
  std::lock_guard<std::mutex> g(mutex_);
  --in_flight_;
  idle_cv_.notify_all();
  complete_cv_.notify_all();
}

void OclBackend::waitForPendingWorks() {
  std::unique_lock<std::mutex> lk(mutex_);
  idle_cv_.wait(lk, [&] { return in_flight_ == 0; });
}

template <typename One>
WorkPtr OclBackend::submitPerTensor(c10::Device device, const std::vector<at::Tensor>& inputs,
                                    const std::vector<at::Tensor>& outputs,
                                    std::vector<at::Tensor> hins, std::vector<at::Tensor> houts,
                                    One one) {
  // One gloo work a tensor; the Work's op type is COALESCED (c10d has none for
  // allgather_into_tensor_coalesced, and torch 2.11 none for reduce_scatter_tensor_coalesced).
  Finish finish = stageInEach(outputs, houts);
  return submit(
      device, c10d::OpType::COALESCED, inputs, outputs,
      [hins = std::move(hins), houts = std::move(houts), one]() mutable {
        Works w;
        for (size_t i = 0; i < hins.size(); ++i) w.push_back(one(hins[i], houts[i]));
        return w;
      },
      std::move(finish));
}

// ---- collectives -----------------------------------------------------------------------------

WorkPtr OclBackend::broadcast(std::vector<at::Tensor>& tensors,
                              const c10d::BroadcastOptions& opts) {
  auto dev = placeOf(tensors, "broadcast");
  if (!dev) return gloo_->broadcast(tensors, opts);
  TORCH_CHECK(tensors.size() == 1, "ocl_gloo::broadcast: expects a single tensor, got ",
              tensors.size());
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_,
              "ocl_gloo::broadcast: invalid root rank ", opts.rootRank);
  const bool root = opts.rootRank == rank_;
  HostSide h = hostSide(tensors[0], /*read=*/root, /*write=*/!root);
  at::Tensor host = h.host;
  c10d::BroadcastOptions o = withTimeout(opts, effective(opts.timeout));
  o.rootTensor = 0;
  return submit(
      *dev, c10d::OpType::BROADCAST, tensors, tensors,
      onHost(host, [this, o](auto& v) { return gloo_->broadcast(v, o); }), [h] { h.done(); },
      h.map ? h.map->event() : nullptr);
}

WorkPtr OclBackend::allreduce(std::vector<at::Tensor>& tensors,
                              const c10d::AllreduceOptions& opts) {
  auto dev = placeOf(tensors, "allreduce");
  if (!dev) return gloo_->allreduce(tensors, opts);
  TORCH_CHECK(tensors.size() == 1, "ocl_gloo::allreduce: expects a single tensor, got ",
              tensors.size());
  at::Tensor t = tensors[0];
  HostSide h;
  if (isPremul(opts.reduceOp)) {
    h.dev = t;
    h.write = true;
    h.host = stageReduceInput(t, opts.reduceOp);
  } else {
    h = hostSide(t, /*read=*/true, /*write=*/true);
  }
  at::Tensor host = h.host;
  const c10d::AllreduceOptions o = reduceOptions(opts, effective(opts.timeout));
  return submit(
      *dev, c10d::OpType::ALLREDUCE, tensors, tensors,
      onHost(host, [this, o](auto& v) { return gloo_->allreduce(v, o); }), [h] { h.done(); },
      h.map ? h.map->event() : nullptr);
}

WorkPtr OclBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                        const c10d::AllreduceCoalescedOptions& opts) {
  auto dev = placeOf(tensors, "allreduce_coalesced");
  if (!dev) return gloo_->allreduce_coalesced(tensors, opts);
  // One flat pinned buffer per dtype, one gloo allreduce on each.
  std::map<c10::ScalarType, std::vector<size_t>> by_dtype;
  for (size_t i = 0; i < tensors.size(); ++i) by_dtype[tensors[i].scalar_type()].push_back(i);
  struct Group {
    at::Tensor host;
    std::vector<std::pair<at::Tensor, at::Tensor>> parts;  // (device tensor, host view)
  };
  auto groups = std::make_shared<std::vector<Group>>();
  for (auto& [dtype, idx] : by_dtype) {
    int64_t total = 0;
    for (size_t i : idx) total += tensors[i].numel();
    Group g;
    g.host = pinnedEmpty({total}, dtype);
    int64_t off = 0;
    for (size_t i : idx) {
      const at::Tensor& t = tensors[i];
      at::Tensor src = isPremul(opts.reduceOp) ? premul(t, opts.reduceOp) : t;
      at::Tensor view = g.host.narrow(0, off, t.numel()).view(t.sizes());
      if (t.numel() > 0) view.copy_(src, /*non_blocking=*/true);
      g.parts.emplace_back(t, view);
      off += t.numel();
    }
    groups->push_back(std::move(g));
  }
  c10d::AllreduceOptions o;
  o.reduceOp = glooOp(opts.reduceOp);
  o.timeout = effective(opts.timeout);
  return submit(
      *dev, c10d::OpType::ALLREDUCE_COALESCED, tensors, tensors,
      [this, groups, o]() mutable {
        Works w;
        for (Group& g : *groups) {
          std::vector<at::Tensor> v{g.host};
          w.push_back(gloo_->allreduce(v, o));
        }
        return w;
      },
      [groups] {
        for (Group& g : *groups)
          for (auto& [t, view] : g.parts) stageIn(t, view);
      });
}

WorkPtr OclBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  auto dev = placeOf(tensors, "reduce");
  if (!dev) return gloo_->reduce(tensors, opts);
  TORCH_CHECK(tensors.size() == 1, "ocl_gloo::reduce: expects a single tensor, got ",
              tensors.size());
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "ocl_gloo::reduce: invalid root rank ",
              opts.rootRank);
  at::Tensor t = tensors[0];
  at::Tensor host = stageReduceInput(t, opts.reduceOp);
  c10d::ReduceOptions o = reduceOptions(opts, effective(opts.timeout));
  o.rootTensor = 0;
  const bool root = opts.rootRank == rank_;
  return submit(*dev, c10d::OpType::REDUCE, tensors, tensors,
                onHost(host, [this, o](auto& v) { return gloo_->reduce(v, o); }), [t, host, root] {
                  if (root) stageIn(t, host);
                });
}

WorkPtr OclBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                              std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  auto dev = placeOf(joined(outputs, inputs), "allgather");
  if (!dev) return gloo_->allgather(outputs, inputs, opts);
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1,
              "ocl_gloo::allgather: expects a single input tensor and a single output list");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_,
              "ocl_gloo::allgather: the output list must have one tensor per rank (", size_,
              "), got ", outputs[0].size());
  const at::Tensor& in = inputs[0];
  for (const at::Tensor& o : outputs[0]) {
    TORCH_CHECK(o.sizes() == in.sizes() && o.scalar_type() == in.scalar_type(),
                "ocl_gloo::allgather: invalid tensor size or type in the output list: expected ",
                in.sizes(), " ", in.scalar_type(), ", got ", o.sizes(), " ", o.scalar_type());
  }
  at::Tensor hin = stageOut(in);
  at::Tensor hout = pinnedEmpty({size_ * in.numel()}, in.scalar_type());
  std::vector<at::Tensor> outs = outputs[0];
  const c10d::AllgatherOptions o = withTimeout(opts, effective(opts.timeout));
  const int64_t n = in.numel();
  auto shape = in.sizes().vec();
  return submit(
      *dev, c10d::OpType::ALLGATHER, inputs, outs,
      [this, hin, hout, o, n, shape]() mutable {
        auto ov = rankViews(hout, size_, n, shape);
        std::vector<at::Tensor> iv{hin};
        return Works{gloo_->allgather(ov, iv, o)};
      },
      [outs, hout, n] {
        for (size_t r = 0; r < outs.size(); ++r)
          stageIn(outs[r], hout.narrow(0, static_cast<int64_t>(r) * n, n));
      });
}

WorkPtr OclBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                    const c10d::AllgatherOptions& opts) {
  auto dev = placeOf({output, input}, "_allgather_base");
  if (!dev) return gloo_->_allgather_base(output, input, opts);
  TORCH_CHECK(input.scalar_type() == output.scalar_type(),
              "ocl_gloo::_allgather_base: input and output must have the same dtype");
  TORCH_CHECK(output.numel() == input.numel() * size_,
              "ocl_gloo::_allgather_base: output tensor size must be equal to world_size times "
              "input tensor size");
  const int64_t n = input.numel();
  auto shape = input.sizes().vec();
  // The output is mapped (or staged); an input inside the output (FSDP's all-gather buffer) is a
  // view of the same host bytes, never a second mapping of them.
  HostSide ho = hostSide(output, /*read=*/false, /*write=*/true);
  at::Tensor hout = ho.host.view({-1});
  at::Tensor hin;
  std::shared_ptr<Mapping> in_map;
  const bool inside = ho.map && input.is_contiguous() &&
                      input.storage().is_alias_of(output.storage()) &&
                      static_cast<const uint8_t*>(input.data_ptr()) >=
                          static_cast<const uint8_t*>(output.data_ptr()) &&
                      static_cast<const uint8_t*>(input.data_ptr()) + input.nbytes() <=
                          static_cast<const uint8_t*>(output.data_ptr()) + output.nbytes();
  if (inside) {
    const int64_t off = (static_cast<const uint8_t*>(input.data_ptr()) -
                         static_cast<const uint8_t*>(output.data_ptr())) /
                        static_cast<int64_t>(input.element_size());
    hin = hout.narrow(0, off, n).view(shape);
  } else if (ho.map && !input.storage().is_alias_of(output.storage()) && (in_map = tryMap(input))) {
    hin = in_map->host();
  } else {
    hin = stageOut(input);
  }
  // The last command enqueued: the input's map, or the output's when the input needed none.
  cl_event ready = nullptr;
  if (in_map) {
    ready = in_map->event();
  } else if (ho.map && inside) {
    ready = ho.map->event();
  }
  const c10d::AllgatherOptions o = withTimeout(opts, effective(opts.timeout));
  return submit(
      *dev, c10d::OpType::_ALLGATHER_BASE, {input}, {output},
      [this, hin, hout, o, n, shape]() mutable {
        auto ov = rankViews(hout, size_, n, shape);
        std::vector<at::Tensor> iv{hin};
        return Works{gloo_->allgather(ov, iv, o)};
      },
      [ho, in_map] {
        if (in_map) in_map->unmap();
        ho.done();
      },
      ready);
}

WorkPtr OclBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::AllgatherOptions& opts) {
  auto all = joined(outputs, inputs);
  auto dev = placeOf(all, "allgather_coalesced");
  if (!dev) return gloo_->allgather_coalesced(outputs, inputs, opts);
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_,
              "ocl_gloo::allgather_coalesced: expects one output list per rank");
  for (const auto& l : outputs)
    TORCH_CHECK(l.size() == inputs.size(),
                "ocl_gloo::allgather_coalesced: each output list must match the input list");
  // outputs[r][i] receives rank r's inputs[i]: one flat buffer per rank.
  std::vector<int64_t> offs{0};
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.scalar_type() == inputs[0].scalar_type(),
                "ocl_gloo::allgather_coalesced: all tensors must have the same dtype");
    offs.push_back(offs.back() + t.numel());
  }
  const int64_t total = offs.back();
  const c10::ScalarType dt = inputs.empty() ? c10::kFloat : inputs[0].scalar_type();
  at::Tensor hin = pinnedEmpty({total}, dt);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].numel() > 0)
      hin.narrow(0, offs[i], inputs[i].numel()).view(inputs[i].sizes()).copy_(inputs[i], true);
  at::Tensor hout = pinnedEmpty({size_ * total}, dt);
  const c10d::AllgatherOptions o = withTimeout(opts, effective(opts.timeout));
  auto outs = outputs;
  return submit(
      *dev, c10d::OpType::ALLGATHER_COALESCED, inputs, all,
      [this, hin, hout, o, total]() mutable {
        std::vector<std::vector<at::Tensor>> ov(1);
        for (int r = 0; r < size_; ++r) ov[0].push_back(hout.narrow(0, r * total, total));
        std::vector<at::Tensor> iv{hin};
        return Works{gloo_->allgather(ov, iv, o)};
      },
      [outs, hout, offs, total] {
        for (size_t r = 0; r < outs.size(); ++r)
          for (size_t i = 0; i < outs[r].size(); ++i)
            stageIn(outs[r][i],
                    hout.narrow(0, static_cast<int64_t>(r) * total + offs[i], outs[r][i].numel()));
      });
}

WorkPtr OclBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                    std::vector<at::Tensor>& inputs,
                                                    const c10d::AllgatherOptions& opts) {
  auto dev = placeOf(joined(outputs, inputs), "allgather_into_tensor_coalesced");
  if (!dev) return gloo_->allgather_into_tensor_coalesced(outputs, inputs, opts);
  StagedPairs p = stagePairs(
      outputs, inputs, size_, /*gathering=*/true, "allgather_into_tensor_coalesced",
      "output tensor size must be equal to world_size times input tensor size", stageOut);
  return submitPerTensor(
      *dev, inputs, outputs, std::move(p.hins), std::move(p.houts),
      [this, o = withTimeout(opts, effective(opts.timeout))](at::Tensor& hin, at::Tensor& hout) {
        auto ov = rankViews(hout, size_, hin.numel(), hin.sizes());
        std::vector<at::Tensor> iv{hin};
        return gloo_->allgather(ov, iv, o);
      });
}

WorkPtr OclBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                           std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  auto dev = placeOf(joined(outputs, inputs), "gather");
  if (!dev) return gloo_->gather(outputs, inputs, opts);
  TORCH_CHECK(inputs.size() == 1, "ocl_gloo::gather: expects a single input tensor");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "ocl_gloo::gather: invalid root rank ",
              opts.rootRank);
  const bool root = opts.rootRank == rank_;
  if (root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "ocl_gloo::gather: requires a single-element output list containing a list with "
                "<size> tensors");
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "ocl_gloo::gather: requires empty output on non-root");
  }
  at::Tensor hin = stageOut(inputs[0]);
  std::vector<at::Tensor> outs = root ? outputs[0] : std::vector<at::Tensor>{};
  std::vector<at::Tensor> houts;
  for (const at::Tensor& t : outs) houts.push_back(pinnedEmpty(t.sizes(), t.scalar_type()));
  const c10d::GatherOptions o = withTimeout(opts, effective(opts.timeout));
  return submit(
      *dev, c10d::OpType::GATHER, inputs, outs,
      [this, hin, houts, o, root]() mutable {
        std::vector<std::vector<at::Tensor>> ov;
        if (root) ov.push_back(houts);
        std::vector<at::Tensor> iv{hin};
        return Works{gloo_->gather(ov, iv, o)};
      },
      stageInEach(outs, houts));
}

WorkPtr OclBackend::scatter(std::vector<at::Tensor>& outputs,
                            std::vector<std::vector<at::Tensor>>& inputs,
                            const c10d::ScatterOptions& opts) {
  auto dev = placeOf(joined(inputs, outputs), "scatter");
  if (!dev) return gloo_->scatter(outputs, inputs, opts);
  TORCH_CHECK(outputs.size() == 1, "ocl_gloo::scatter: expects a single output tensor");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "ocl_gloo::scatter: invalid root rank ",
              opts.rootRank);
  const bool root = opts.rootRank == rank_;
  if (root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "ocl_gloo::scatter: requires a single-element input list containing a list with "
                "<size> tensors");
  }
  std::vector<at::Tensor> hins;
  if (root)
    for (const at::Tensor& t : inputs[0]) hins.push_back(stageOut(t));
  at::Tensor out = outputs[0];
  at::Tensor hout = pinnedEmpty(out.sizes(), out.scalar_type());
  const c10d::ScatterOptions o = withTimeout(opts, effective(opts.timeout));
  return submit(
      *dev, c10d::OpType::SCATTER, hins.empty() ? std::vector<at::Tensor>{} : inputs[0], outputs,
      [this, hins, hout, o, root]() mutable {
        std::vector<std::vector<at::Tensor>> iv;
        if (root) iv.push_back(hins);
        std::vector<at::Tensor> ov{hout};
        return Works{gloo_->scatter(ov, iv, o)};
      },
      [out, hout] { stageIn(out, hout); });
}

WorkPtr OclBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                   std::vector<std::vector<at::Tensor>>& inputs,
                                   const c10d::ReduceScatterOptions& opts) {
  auto dev = placeOf(joined(inputs, outputs), "reduce_scatter");
  if (!dev) return gloo_->reduce_scatter(outputs, inputs, opts);
  TORCH_CHECK(
      outputs.size() == 1 && inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
      "ocl_gloo::reduce_scatter: expects one output tensor and a list of <size> inputs");
  at::Tensor out = outputs[0];
  for (const at::Tensor& t : inputs[0])
    TORCH_CHECK(t.sizes() == out.sizes() && t.scalar_type() == out.scalar_type(),
                "ocl_gloo::reduce_scatter: invalid tensor size or type in the input list");
  // Inputs staged into one flat buffer: gloo's reduce_scatter on its per-rank views.
  const int64_t n = out.numel();
  at::Tensor hin = pinnedEmpty({size_ * n}, out.scalar_type());
  for (int r = 0; r < size_; ++r) {
    const at::Tensor& t = inputs[0][r];
    at::Tensor src = isPremul(opts.reduceOp) ? premul(t, opts.reduceOp) : t;
    if (n > 0) hin.narrow(0, r * n, n).view(t.sizes()).copy_(src, true);
  }
  at::Tensor hout = pinnedEmpty(out.sizes(), out.scalar_type());
  const c10d::ReduceScatterOptions o = reduceOptions(opts, effective(opts.timeout));
  auto shape = out.sizes().vec();
  return submit(
      *dev, c10d::OpType::REDUCE_SCATTER, inputs[0], outputs,
      [this, hin, hout, o, n, shape]() mutable {
        auto iv = rankViews(hin, size_, n, shape);
        std::vector<at::Tensor> ov{hout};
        return Works{gloo_->reduce_scatter(ov, iv, o)};
      },
      [out, hout] { stageIn(out, hout); });
}

WorkPtr OclBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                         const c10d::ReduceScatterOptions& opts) {
  auto dev = placeOf({output, input}, "_reduce_scatter_base");
  if (!dev) return gloo_->_reduce_scatter_base(output, input, opts);
  TORCH_CHECK(input.scalar_type() == output.scalar_type(),
              "ocl_gloo::_reduce_scatter_base: input and output must have the same dtype");
  TORCH_CHECK(input.numel() == output.numel() * size_,
              "ocl_gloo::_reduce_scatter_base: input tensor must be the same size as output size "
              "times world size");
  at::Tensor hin = stageReduceInput(input, opts.reduceOp);
  at::Tensor hout = pinnedEmpty(output.sizes(), output.scalar_type());
  const c10d::ReduceScatterOptions o = reduceOptions(opts, effective(opts.timeout));
  at::Tensor out = output;
  return submit(
      *dev, c10d::OpType::_REDUCE_SCATTER_BASE, {input}, {output},
      [this, hin, hout, o]() mutable {
        at::Tensor i = hin, h = hout;
        return Works{gloo_->_reduce_scatter_base(h, i, o)};
      },
      [out, hout] { stageIn(out, hout); });
}

WorkPtr OclBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                    std::vector<at::Tensor>& inputs,
                                                    const c10d::ReduceScatterOptions& opts) {
  auto dev = placeOf(joined(outputs, inputs), "reduce_scatter_tensor_coalesced");
  if (!dev) return gloo_->reduce_scatter_tensor_coalesced(outputs, inputs, opts);
  auto stage = [&opts](const at::Tensor& t) { return stageReduceInput(t, opts.reduceOp); };
  StagedPairs p =
      stagePairs(outputs, inputs, size_, /*gathering=*/false, "reduce_scatter_tensor_coalesced",
                 "input tensor must be the same size as output size times world size", stage);
  // OpType::COALESCED: REDUCE_SCATTER_TENSOR_COALESCED does not exist in torch 2.11.
  return submitPerTensor(
      *dev, inputs, outputs, std::move(p.hins), std::move(p.houts),
      [this, o = reduceOptions(opts, effective(opts.timeout))](at::Tensor& hin, at::Tensor& hout) {
        return gloo_->_reduce_scatter_base(hout, hin, o);
      });
}

WorkPtr OclBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                  std::vector<int64_t>& outputSplitSizes,
                                  std::vector<int64_t>& inputSplitSizes,
                                  const c10d::AllToAllOptions& opts) {
  auto dev = placeOf({output, input}, "alltoall_base");
  if (!dev) return gloo_->alltoall_base(output, input, outputSplitSizes, inputSplitSizes, opts);
  TORCH_CHECK(input.scalar_type() == output.scalar_type(),
              "ocl_gloo::alltoall_base: input and output must have the same dtype");
  at::Tensor hin = stageOut(input);
  at::Tensor hout = pinnedEmpty(output.sizes(), output.scalar_type());
  const c10d::AllToAllOptions o = withTimeout(opts, effective(opts.timeout));
  at::Tensor out = output;
  std::vector<int64_t> os = outputSplitSizes, is = inputSplitSizes;
  return submit(
      *dev, c10d::OpType::ALLTOALL_BASE, {input}, {output},
      [this, hin, hout, o, os, is]() mutable {
        at::Tensor i = hin, h = hout;
        return Works{gloo_->alltoall_base(h, i, os, is, o)};
      },
      [out, hout] { stageIn(out, hout); });
}

WorkPtr OclBackend::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                             const c10d::AllToAllOptions& opts) {
  auto dev = placeOf(joined(outputs, inputs), "alltoall");
  TORCH_CHECK(dev,
              "ocl_gloo::alltoall: CPU tensors are not supported by gloo's alltoall; use "
              "all_to_all_single");
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ && static_cast<int>(inputs.size()) == size_,
              "ocl_gloo::alltoall: expects one input and one output tensor per rank");
  // Flat 1-D buffers with element-count splits: one gloo alltoall_base.
  const c10::ScalarType dt = inputs[0].scalar_type();
  std::vector<int64_t> is, os, ooffs{0};
  int64_t itotal = 0;
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.scalar_type() == dt, "ocl_gloo::alltoall: all tensors must have the same dtype");
    is.push_back(t.numel());
    itotal += t.numel();
  }
  for (const at::Tensor& t : outputs) {
    TORCH_CHECK(t.scalar_type() == dt, "ocl_gloo::alltoall: all tensors must have the same dtype");
    os.push_back(t.numel());
    ooffs.push_back(ooffs.back() + t.numel());
  }
  at::Tensor hin = pinnedEmpty({itotal}, dt);
  int64_t off = 0;
  for (const at::Tensor& t : inputs) {
    if (t.numel() > 0) hin.narrow(0, off, t.numel()).view(t.sizes()).copy_(t, true);
    off += t.numel();
  }
  at::Tensor hout = pinnedEmpty({ooffs.back()}, dt);
  const c10d::AllToAllOptions o = withTimeout(opts, effective(opts.timeout));
  auto outs = outputs;
  return submit(
      *dev, c10d::OpType::ALLTOALL, inputs, outputs,
      [this, hin, hout, o, os, is]() mutable {
        at::Tensor i = hin, h = hout;
        return Works{gloo_->alltoall_base(h, i, os, is, o)};
      },
      [outs, hout, ooffs] {
        for (size_t r = 0; r < outs.size(); ++r)
          stageIn(outs[r], hout.narrow(0, ooffs[r], outs[r].numel()));
      });
}

WorkPtr OclBackend::send(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  auto dev = placeOf(tensors, "send");
  if (!dev) return gloo_->send(tensors, dstRank, tag);
  TORCH_CHECK(tensors.size() == 1, "ocl_gloo::send: expects a single tensor");
  at::Tensor host = stageOut(tensors[0]);
  return submit(
      *dev, c10d::OpType::SEND, tensors, {},
      onHost(host, [this, dstRank, tag](auto& v) { return gloo_->send(v, dstRank, tag); }),
      nullptr);
}

WorkPtr OclBackend::recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  auto dev = placeOf(tensors, "recv");
  if (!dev) return gloo_->recv(tensors, srcRank, tag);
  TORCH_CHECK(tensors.size() == 1, "ocl_gloo::recv: expects a single tensor");
  at::Tensor t = tensors[0];
  at::Tensor host = pinnedEmpty(t.sizes(), t.scalar_type());
  return submit(
      *dev, c10d::OpType::RECV, {}, tensors,
      onHost(host, [this, srcRank, tag](auto& v) { return gloo_->recv(v, srcRank, tag); }),
      [t, host] { stageIn(t, host); });
}

WorkPtr OclBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  auto dev = placeOf(tensors, "recvAnysource");
  if (!dev) return gloo_->recvAnysource(tensors, tag);
  TORCH_CHECK(tensors.size() == 1, "ocl_gloo::recvAnysource: expects a single tensor");
  at::Tensor t = tensors[0];
  at::Tensor host = pinnedEmpty(t.sizes(), t.scalar_type());
  return submit(*dev, c10d::OpType::RECVANYSOURCE, {}, tensors,
                onHost(host, [this, tag](auto& v) { return gloo_->recvAnysource(v, tag); }),
                [t, host] { stageIn(t, host); });
}

WorkPtr OclBackend::barrier(const c10d::BarrierOptions& opts) {
  // Ordered after every collective queued before it, like gloo's own barrier.
  c10d::BarrierOptions o = withTimeout(opts, effective(opts.timeout));
  o.device = std::nullopt;
  o.device_ids.clear();
  c10::impl::VirtualGuardImpl impl(kOcl);
  c10::Device dev = opts.device && opts.device->type() == kOcl ? *opts.device : impl.getDevice();
  if (!dev.has_index()) dev = impl.getDevice();
  return submit(
      dev, c10d::OpType::BARRIER, {}, {}, [this, o]() mutable { return Works{gloo_->barrier(o)}; },
      nullptr);
}

void OclBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  waitForPendingWorks();
  c10d::BarrierOptions o = withTimeout(opts, effective(opts.timeout));
  gloo_->monitoredBarrier(o, waitAllRanks);
}

}  // namespace torch_ocl::distributed
