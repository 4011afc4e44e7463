// Helpers shared by the random family's files: the typed header their hand-written programs
// (kernels/random.cl, kernels/random_dists.cl) start with, and the generator's Philox inputs.
#pragma once

#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Generator.h>

#include "aten/cl_types.h"
#include "integration/generator.h"
#include "integration/state.h"
#include "runtime/handles.h"

#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace torch_ocl::aten {

// REAL (float, or double for double tensors: the arithmetic of the samplers), RND_DOUBLE for
// double, ST/C (storage and compute type of t) and ld/st for them.
inline std::string randomProgramHeader(c10::ScalarType t) {
  const bool dbl = t == c10::kDouble;
  std::string h =
      std::string(dbl ? "#define RND_DOUBLE 1\n#define REAL double\n" : "#define REAL float\n") +
      "#define ST " + clStorageType(t) + "\n#define C " + clComputeType(t) + "\n";
  h += "inline C ld(__global const ST* p, long i) { return " + loadExpr(t, "p", "i") + "; }\n";
  h += "inline void st(__global ST* p, long i, C v) { " + storeStmt(t, "p", "i", "v") + " }\n";
  return h;
}

// The program of kernels/random.cl for dtype t (random.cpp).
cl_program randomExtraProgram(c10::DeviceIndex idx, c10::ScalarType t);

// The draw of a kernel launched on device idx's current stream whose work items each consume
// `increment` 32-bit values; the generator's offset advances past them (rounded up to a whole
// Philox block). Set its kernel arguments with PhiloxDraw::setArgs (graph replays re-set them).
inline PhiloxDraw philoxDraw(std::optional<at::Generator> gen, c10::DeviceIndex idx,
                             uint64_t increment = 4) {
  auto* g = at::get_generator_or_default<OclGeneratorImpl>(gen, defaultGenerator(idx));
  std::lock_guard<std::mutex> lock(g->mutex_);
  return g->philoxDraw(increment, currentQueue(idx));
}

}  // namespace torch_ocl::aten
