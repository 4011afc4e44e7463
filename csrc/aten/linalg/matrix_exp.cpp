// linalg.matrix_exp on the device: scaling and squaring with the degree-13 Pade approximant
// (Higham 2005), composed of the matrix engine's batched GEMMs and the device LU solve. The
// scaling is the batch's largest 1-norm (one value read back, as CPU branches per matrix too);
// float32 and complex64 run in float64 and complex128 where the device has cl_khr_fp64, float16
// and bfloat16 in float32 (see matrixExp).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>

#include "aten/fallback.h"
#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

at::Tensor matrixExp(const at::Tensor& self) {
  checkSameDevice({self});
  TORCH_CHECK(self.dim() >= 2 && self.size(-1) == self.size(-2),
              "linalg.matrix_exp: The input tensor A must be a batch of square matrices, but got ",
              "a tensor of shape ", self.sizes());
  const c10::ScalarType t = self.scalar_type();
  // float16 and bfloat16 are storage only: computed in float32 (in turn float64 where the device
  // has it) and rounded once. CPU runs the Pade steps in 16 bits, which overflow to NaN on
  // matrices of norm ~9 where this gives the finite exponential.
  if (t == at::kHalf || t == at::kBFloat16) return matrixExp(self.to(at::kFloat)).to(t);
  TORCH_CHECK(
      t == at::kFloat || t == at::kDouble || t == at::kComplexFloat || t == at::kComplexDouble,
      "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got ", t);
  const int64_t n = self.size(-1);
  if (self.numel() == 0) return at::empty_like(self, at::MemoryFormat::Contiguous);
  if (n == 1) return self.exp();
  // float32 (complex64) is computed in float64 (complex128) where the device has it: the
  // approximant's cancellations then cost no accuracy (the result is within rounding of the exact
  // exponential).
  const bool fp64 = device(self.device().index()).info().fp64;
  if (t == at::kFloat && fp64) return matrixExp(self.to(at::kDouble)).to(at::kFloat);
  if (t == at::kComplexFloat && fp64)
    return matrixExp(self.to(at::kComplexDouble)).to(at::kComplexFloat);
  static constexpr double b[] = {64764752532480000.0,
                                 32382376266240000.0,
                                 7771770303897600.0,
                                 1187353796428800.0,
                                 129060195264000.0,
                                 10559470521600.0,
                                 670442572800.0,
                                 33522128640.0,
                                 1323241920.0,
                                 40840800.0,
                                 960960.0,
                                 16380.0,
                                 182.0,
                                 1.0};
  constexpr double kTheta13 = 5.371920351148152;
  const double norm = self.abs().sum(-2).amax().item<double>();
  TORCH_CHECK(std::isfinite(norm) || std::isnan(norm),
              "linalg.matrix_exp: the input has an infinite entry");
  const int64_t s =
      norm > kTheta13 ? static_cast<int64_t>(std::ceil(std::log2(norm / kTheta13))) : 0;
  const at::Tensor a = s > 0 ? self / std::ldexp(1.0, static_cast<int>(s)) : self;
  const at::Tensor eye = at::eye(n, self.options()).expand(self.sizes());
  const at::Tensor a2 = at::matmul(a, a), a4 = at::matmul(a2, a2), a6 = at::matmul(a4, a2);
  const at::Tensor u_inner = at::matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 +
                             b[5] * a4 + b[3] * a2 + b[1] * eye;
  const at::Tensor u = at::matmul(a, u_inner);
  const at::Tensor v = at::matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 +
                       b[2] * a2 + b[0] * eye;
  at::Tensor r = at::linalg_solve(v - u, v + u);
  for (int64_t i = 0; i < s; ++i) r = at::matmul(r, r);
  return r;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_matrix_exp", TORCH_FN(matrixExp));
}

}  // namespace torch_ocl::aten
