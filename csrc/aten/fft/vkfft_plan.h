// VkFFT plans (OpenCL back end) for the spectral ops: one plan per (device, kind, dtype, direction,
// sizes, batch), built on first use and kept in a bounded LRU cache. A plan transforms contiguous
// data only: its fastest axis is sizes[0]; spectral.cpp permutes and copies into that layout.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "runtime/allocator.h"

#include <array>
#include <cstdint>
#include <memory>

namespace torch_ocl::aten::fft {

enum class Kind : uint8_t { kC2C, kR2C, kC2R };

struct PlanKey {
  c10::DeviceIndex device = 0;
  Kind kind = Kind::kC2C;
  bool inverse = false;  // c2c direction; R2C is always forward, C2R always inverse
  bool fp64 = false;
  uint8_t rank = 1;                 // 1..3 transformed axes
  std::array<uint64_t, 3> sizes{};  // signal sizes, fastest axis first (real sizes for R2C/C2R)
  uint64_t batch = 1;               // contiguous signals one after another
  bool operator==(const PlanKey& o) const {
    return device == o.device && kind == o.kind && inverse == o.inverse && fp64 == o.fp64 &&
           rank == o.rank && sizes == o.sizes && batch == o.batch;
  }
};

// Enqueues the plan's transform on the current stream of key.device. C2C: in place on `data`.
// R2C: real `real` (contiguous, unpadded) -> complex `data` (fastest axis sizes[0]/2+1).
// C2R: complex `data` -> real `real`; `data` is overwritten. Offsets are in bytes; temp buffers
// come from the caching allocator. Returns false (and enqueues nothing) for the real transforms
// VkFFT 1.2.26 cannot do right: R2C lengths it rejects, and C2R that needs several uploads per
// axis (it reads out of bounds there); the caller then takes a complex-to-complex route.
bool execute(const PlanKey& key, rt::BufferRef data, rt::BufferRef real);

// Plans currently cached, and the cache's capacity (for tests and the benchmark).
size_t planCacheSize();
size_t planCacheCapacity();
void clearPlanCache();

}  // namespace torch_ocl::aten::fft
