// Shared by upsample.cpp (nearest, nearest-exact) and upsample_interp.cpp (linear, bicubic):
// upsample.cl's geometry, its launch, and the run of an op's structured meta into a contiguous
// output. 1-D and 2-D ops run the 3-D kernels with the leading spatial sizes 1.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <optional>
#include <vector>

#include "aten/nn_common.h"

namespace torch_ocl::aten {

// Mirrors UpGeom in upsample.cl.
struct alignas(8) UpGeom {
  cl_long P, D, H, W, OD, OH, OW;
};

// `in` and `out` are (N, C, spatial...) with `spatial` (1 to 3) trailing spatial dimensions.
UpGeom upGeom(const at::Tensor& in, const at::Tensor& out, int spatial);

// Scales of the (D, H, W) dimensions, as the op's optional arguments (nullopt for the
// dimensions a lower-dimensional op lacks).
using UpScales = std::array<std::optional<double>, 3>;
// The op's scales for its `spatial` trailing dimensions, right-aligned into (D, H, W).
template <class... S>
UpScales upScales(S... scales) {
  std::array<std::optional<double>, sizeof...(S)> given{scales...};
  UpScales r{};
  for (size_t i = 0; i < given.size(); ++i) r[3 - given.size() + i] = given[i];
  return r;
}

// Runs upsample.cl's `name` over n work items with (out, in, g), then the scalar arguments
// (each a cl_float, cl_double or cl_int).
struct UpArg {
  enum Kind { kFloat, kDouble, kInt } kind;
  double value;
};
void launchUpsample(const at::Tensor& anchor, const char* name, int64_t n, const at::Tensor& out,
                    const at::Tensor& in, const UpGeom& g, std::initializer_list<UpArg> args);

// Scalar arguments in the kernel's ACC precision (float for half/bfloat16).
inline UpArg accArg(c10::ScalarType t, double v) {
  return {t == c10::kDouble ? UpArg::kDouble : UpArg::kFloat, v};
}

}  // namespace torch_ocl::aten
