// Counter-based Philox-4x32-10 generator for ocl devices. The state is (seed, offset): a kernel
// that draws N numbers takes the current (seed, offset) and the offset advances, so the same seed
// gives the same numbers on every OpenCL device and every run, whatever the device's speed.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <utility>

namespace torch_ocl {

constexpr uint64_t kDefaultRngSeed = 67280421310721ULL;  // the value CUDA uses too

struct OclGeneratorImpl : public c10::GeneratorImpl {
  explicit OclGeneratorImpl(c10::DeviceIndex device_index = -1);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type();

  // (seed, offset) for a kernel that consumes `increment` 32-bit draws per work item;
  // the offset advances by increment rounded up to a multiple of 4 (one Philox block).
  std::pair<uint64_t, uint64_t> philoxEngineInputs(uint64_t increment);

 private:
  OclGeneratorImpl* clone_impl() const override;
  uint64_t seed_ = kDefaultRngSeed;
  uint64_t offset_ = 0;
};

const at::Generator& defaultGenerator(c10::DeviceIndex index);
at::Generator newGenerator(c10::DeviceIndex index);

}  // namespace torch_ocl
