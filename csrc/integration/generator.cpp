#include "integration/generator.h"

#include <ATen/Utils.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/CallOnce.h>

#include "aten/launch.h"
#include "integration/state.h"
#include "runtime/graph_rng.h"

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

namespace torch_ocl {

namespace {
constexpr size_t kStateSize = 2 * sizeof(uint64_t);

// The generator as a captured graph sees it: at each replay, its current (seed, offset), then
// the offset advances by the capture's total. The graph keeps the generator alive.
class GeneratorSource final : public rt::PhiloxSource {
 public:
  explicit GeneratorSource(c10::intrusive_ptr<OclGeneratorImpl> gen) : gen_(std::move(gen)) {}
  std::pair<uint64_t, uint64_t> advance(uint64_t total) override {
    std::lock_guard<std::mutex> lock(gen_->mutex_);
    return gen_->advanceForReplay(total);
  }

 private:
  c10::intrusive_ptr<OclGeneratorImpl> gen_;
};

// CUDA's rule: a generator's state is not set while its device's current stream captures (the
// captured draws count from the state at their first draw).
void refuseStateChange(c10::DeviceIndex index, const char* what) {
  if (rt::capture::active()) aten::refuseCapture(currentQueue(index), what);
}
}  // namespace

PhiloxDraw::PhiloxDraw(PhiloxDraw&& o) noexcept
    : seed_(o.seed_),
      offset_(o.offset_),
      graph_(std::exchange(o.graph_, nullptr)),
      draw_(std::exchange(o.draw_, -1)),
      owner_(o.owner_) {}

PhiloxDraw& PhiloxDraw::operator=(PhiloxDraw&& o) noexcept {
  if (this != &o) {
    if (graph_) rt::philox_capture::unbind(*graph_, draw_, owner_);
    seed_ = o.seed_;
    offset_ = o.offset_;
    graph_ = std::exchange(o.graph_, nullptr);
    draw_ = std::exchange(o.draw_, -1);
    owner_ = o.owner_;
  }
  return *this;
}

PhiloxDraw::~PhiloxDraw() {
  if (graph_) rt::philox_capture::unbind(*graph_, draw_, owner_);
}

void PhiloxDraw::setArgs(cl_kernel k, cl_uint& a) const {
  const cl_ulong seed = seed_, offset = offset_;
  if (graph_) rt::philox_capture::bind(*graph_, draw_, k, a, a + 1);
  aten::setArg(k, a, seed);
  aten::setArg(k, a, offset);
}

void PhiloxDraw::bindHost(int64_t* seed, int64_t* offset, std::shared_ptr<void> keep_alive) const {
  if (graph_) rt::philox_capture::bindHost(*graph_, draw_, seed, offset, std::move(keep_alive));
}

PhiloxDraw PhiloxDraw::reuse(cl_command_queue q, const at::Tensor& seed, const at::Tensor& offset) {
  PhiloxDraw d(static_cast<uint64_t>(seed.item<int64_t>()),
               static_cast<uint64_t>(offset.item<int64_t>()));
  rt::CommandGraph* g = rt::capture::graphOf(q);
  if (!g) return d;
  d.draw_ = rt::philox_capture::findDraw(*g, d.seed_, d.offset_);
  if (d.draw_ < 0) {
    auto host = [](const at::Tensor& t) {
      return t.device().is_cpu() && t.scalar_type() == at::kLong && t.numel() == 1;
    };
    if (!host(seed) || !host(offset))
      aten::refuseCapture(q,
                          "a kernel reusing a random (seed, offset) that is not a CPU int64 "
                          "scalar");
    d.draw_ = rt::philox_capture::addHostSource(
        *g, seed.const_data_ptr<int64_t>(), offset.const_data_ptr<int64_t>(),
        std::make_shared<std::pair<at::Tensor, at::Tensor>>(seed, offset));
  }
  d.graph_ = g;
  return d;
}

OclGeneratorImpl::OclGeneratorImpl(c10::DeviceIndex device_index)
    : c10::GeneratorImpl{c10::Device(kOcl, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)} {}

void OclGeneratorImpl::set_current_seed(uint64_t seed) {
  refuseStateChange(device().index(), "setting the seed of an ocl generator (manual_seed)");
  seed_ = seed;
  offset_ = 0;
}

uint64_t OclGeneratorImpl::seed() {
  // A non-deterministic seed, as torch.cuda.seed() does.
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  set_current_seed(s);
  return s;
}

void OclGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  refuseStateChange(device().index(), "setting the state of an ocl generator (set_rng_state)");
  at::detail::check_rng_state(new_state);
  TORCH_CHECK(static_cast<size_t>(new_state.numel()) == kStateSize, "ocl RNG state must hold ",
              kStateSize, " bytes (seed, offset), got ", new_state.numel());
  uint64_t words[2];
  std::memcpy(words, new_state.data(), kStateSize);
  seed_ = words[0];
  offset_ = words[1];
}

c10::intrusive_ptr<c10::TensorImpl> OclGeneratorImpl::get_state() const {
  auto state = at::detail::empty_cpu({static_cast<int64_t>(kStateSize)}, at::kByte, std::nullopt,
                                     std::nullopt, std::nullopt, std::nullopt);
  uint64_t words[2] = {seed_, offset_};
  std::memcpy(state.data_ptr(), words, kStateSize);
  return state.getIntrusivePtr();
}

c10::DeviceType OclGeneratorImpl::device_type() {
  return kOcl;
}

void OclGeneratorImpl::set_offset(uint64_t offset) {
  refuseStateChange(device().index(), "setting the offset of an ocl generator");
  offset_ = offset;
}

PhiloxDraw OclGeneratorImpl::philoxDraw(uint64_t increment, cl_command_queue q) {
  increment = ((increment + 3) / 4) * 4;
  PhiloxDraw d(seed_, offset_);
  if (rt::CommandGraph* g = rt::capture::graphOf(q)) {
    d.draw_ = rt::philox_capture::addDraw(*g, this, seed_, offset_, increment, [this] {
      return std::make_shared<GeneratorSource>(
          c10::intrusive_ptr<OclGeneratorImpl>::reclaim_copy(this));
    });
    d.graph_ = g;
    d.owner_ = true;
  }
  offset_ += increment;
  return d;
}

std::pair<uint64_t, uint64_t> OclGeneratorImpl::advanceForReplay(uint64_t total) {
  const std::pair<uint64_t, uint64_t> at{seed_, offset_};
  offset_ += total;
  return at;
}

OclGeneratorImpl* OclGeneratorImpl::clone_impl() const {
  auto gen = std::make_unique<OclGeneratorImpl>(device().index());
  gen->seed_ = seed_;
  gen->offset_ = offset_;
  return gen.release();  // ownership passes to the caller, as GeneratorImpl::clone requires
}

const at::Generator& defaultGenerator(c10::DeviceIndex index) {
  // One generator per device, created on first use and kept for the life of the process.
  static std::mutex mu;
  static auto* gens = new std::deque<at::Generator>();  // NOLINT: intentionally leaked
  if (index < 0) index = currentDevice();
  checkIndex(index);
  std::lock_guard<std::mutex> lock(mu);
  while (static_cast<c10::DeviceIndex>(gens->size()) <= index)
    gens->push_back(
        at::make_generator<OclGeneratorImpl>(static_cast<c10::DeviceIndex>(gens->size())));
  return (*gens)[index];
}

at::Generator newGenerator(c10::DeviceIndex index) {
  if (index < 0) index = currentDevice();
  checkIndex(index);
  return at::make_generator<OclGeneratorImpl>(index);
}

}  // namespace torch_ocl
