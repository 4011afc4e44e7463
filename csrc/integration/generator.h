// Counter-based Philox-4x32-10 generator for ocl devices. The state is (seed, offset): a kernel
// that draws N numbers takes the current (seed, offset) and the offset advances, so the same seed
// gives the same numbers on every OpenCL device and every run, whatever the device's speed.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/GeneratorImpl.h>

#include "runtime/handles.h"

#include <cstdint>
#include <memory>
#include <utility>

namespace torch_ocl {
namespace rt {
class CommandGraph;
}

// The (seed, offset) one kernel launch draws at. While the current stream captures a graph, the
// draw is registered with it (runtime/graph_rng.h) and setArgs binds the kernel arguments it
// sets, so that every replay re-sets them to the numbers eager code would draw at the
// generator's state then (the generator advancing by the capture's total, as CUDA graphs do).
// Bind every launch that uses the draw while the object lives; launches after it are not bound.
// A draw that no recorded kernel took (its numbers set some other way) fails the capture.
class PhiloxDraw {
 public:
  PhiloxDraw() = default;
  PhiloxDraw(uint64_t seed, uint64_t offset) : seed_(seed), offset_(offset) {}
  PhiloxDraw(PhiloxDraw&& o) noexcept;
  PhiloxDraw& operator=(PhiloxDraw&& o) noexcept;
  PhiloxDraw(const PhiloxDraw&) = delete;
  PhiloxDraw& operator=(const PhiloxDraw&) = delete;
  ~PhiloxDraw();

  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  // Sets arguments a and a + 1 of k to seed and offset (cl_ulong) and advances a.
  void setArgs(cl_kernel k, cl_uint& a) const;
  // Host words that hold (seed, offset) for a later kernel (SDPA's saved philox state): a replay
  // rewrites them with its own. keep_alive owns them.
  void bindHost(int64_t* seed, int64_t* offset, std::shared_ptr<void> keep_alive) const;

  // The (seed, offset) of an earlier draw, held in two CPU int64 scalars, that a later kernel
  // reuses (SDPA's backward recomputing its forward's dropout mask). While q captures: bound to
  // that draw when the same capture made it; otherwise the scalars are read again at each
  // replay (a backward graph replayed apart from its forward's, which rewrites them).
  static PhiloxDraw reuse(cl_command_queue q, const at::Tensor& seed, const at::Tensor& offset);

 private:
  friend struct OclGeneratorImpl;
  uint64_t seed_ = 0, offset_ = 0;
  rt::CommandGraph* graph_ = nullptr;  // capturing graph the draw is registered with
  int draw_ = -1;
  bool owner_ = false;  // made the draw (not reuse): it must reach a bound kernel
};

constexpr uint64_t kDefaultRngSeed = 67280421310721ULL;  // the value CUDA uses too

struct OclGeneratorImpl : public c10::GeneratorImpl {
  explicit OclGeneratorImpl(c10::DeviceIndex device_index = -1);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override { return offset_; }
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type();

  // The draw of a kernel launched on queue q that consumes `increment` 32-bit values per work
  // item; the offset advances by increment rounded up to a multiple of 4 (one Philox block).
  // While q captures a graph the draw is registered with it. Call with mutex_ held.
  PhiloxDraw philoxDraw(uint64_t increment, cl_command_queue q);
  // A replay of a graph that draws `total` values from this generator: the (seed, offset) its
  // draws count from; the offset advances past them. Call with mutex_ held.
  std::pair<uint64_t, uint64_t> advanceForReplay(uint64_t total);

 private:
  OclGeneratorImpl* clone_impl() const override;
  uint64_t seed_ = kDefaultRngSeed;
  uint64_t offset_ = 0;
};

const at::Generator& defaultGenerator(c10::DeviceIndex index);
at::Generator newGenerator(c10::DeviceIndex index);

}  // namespace torch_ocl
