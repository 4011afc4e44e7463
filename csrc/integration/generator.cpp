#include "integration/generator.h"

#include <ATen/Utils.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/CallOnce.h>

#include "aten/launch.h"
#include "integration/state.h"

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

namespace torch_ocl {

namespace {
constexpr size_t kStateSize = 2 * sizeof(uint64_t);
}

OclGeneratorImpl::OclGeneratorImpl(c10::DeviceIndex device_index)
    : c10::GeneratorImpl{c10::Device(kOcl, device_index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)} {}

void OclGeneratorImpl::set_current_seed(uint64_t seed) {
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

std::pair<uint64_t, uint64_t> OclGeneratorImpl::philoxEngineInputs(uint64_t increment) {
  // A captured kernel keeps the (seed, offset) it was launched with: every replay of a graph
  // would draw the same numbers. Refused until graphs advance the offset on the device.
  aten::refuseCapture(currentQueue(device().index()),
                      "random number generation (rand, randn, dropout, ...)");
  increment = ((increment + 3) / 4) * 4;
  uint64_t offset = offset_;
  offset_ += increment;
  return {seed_, offset};
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
