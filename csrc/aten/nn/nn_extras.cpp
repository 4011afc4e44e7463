// aten ops that ordinary torch.nn code reaches outside the OpInfo matrix: _add_relu (the fused
// add + relu of quantization-aware and scripted models), the deprecated _aminmax aliases,
// glu_jvp / glu_backward_jvp (forward-mode AD of glu) and _weight_norm_interface with its
// backward (torch.nn.utils.weight_norm over dim 0 or the last dim). Each follows CPU's kernel in
// aten/src/ATen/native (BinaryOps.cpp, TensorCompare.cpp, GatedLinearUnit.cpp, WeightNorm.cpp).
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/glu_backward_jvp_native.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/pointwise_run.h"

#include <limits>

namespace torch_ocl::aten {
namespace {

using codegen::Domain;
using codegen::PointwiseOp;

// ---- _add_relu ------------------------------------------------------------------------------
// CPU's add_clamp: clamp(a + alpha * b, 0, max of self's dtype); NaN passes (as CPU's vectorised
// loop, which every run but its last few elements takes), +inf becomes the dtype's maximum.
const PointwiseOp kAddClamp{"add_relu",
                            "(a + s0 * b) != (a + s0 * b) ? (a + s0 * b) : ((a + s0 * b) < s1 ? s1 "
                            ": ((a + s0 * b) > s2 ? s2 : (a + s0 * b)))",
                            nullptr, Domain::kNumeric};

c10::Scalar addReluMax(c10::ScalarType t) {
  switch (t) {
    case at::kInt:
      return std::numeric_limits<int32_t>::max();
    case at::kLong:
      return std::numeric_limits<int64_t>::max();
    case at::kShort:
      return std::numeric_limits<int16_t>::max();
    case at::kChar:
      return std::numeric_limits<int8_t>::max();
    case at::kFloat:
      return std::numeric_limits<float>::max();
    case at::kDouble:
      return std::numeric_limits<double>::max();
    default:
      TORCH_CHECK(false, "Unsupported datatype for add_relu:", c10::toString(t));
  }
}

at::Tensor& addReluInto(at::Tensor& result, const at::Tensor& self, const at::Tensor& other,
                        const c10::Scalar& alpha) {
  const c10::Scalar hi = addReluMax(self.scalar_type());
  auto iter = at::TensorIterator::binary_op(result, self, other);
  const c10::ScalarType compute = iter.common_dtype();
  TORCH_CHECK(codegen::supports(kAddClamp, compute), "torch-ocl: no add_relu kernel for ", compute);
  codegen::launch(kAddClamp, iter, compute, {alpha, 0, hi});
  result = iter.output();
  return result;
}

at::Tensor addRelu(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  at::Tensor result;
  return addReluInto(result, self, other, alpha);
}
at::Tensor& addReluInplace(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return addReluInto(self, self, other, alpha);
}
at::Tensor& addReluOut(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                       at::Tensor& out) {
  return addReluInto(out, self, other, alpha);
}
at::Tensor addReluScalar(const at::Tensor& self, const c10::Scalar& other,
                         const c10::Scalar& alpha) {
  return addRelu(self, at::native::wrapped_scalar_tensor(other), alpha);
}
at::Tensor& addReluScalarInplace(at::Tensor& self, const c10::Scalar& other,
                                 const c10::Scalar& alpha) {
  return addReluInplace(self, at::native::wrapped_scalar_tensor(other), alpha);
}

// ---- _aminmax (deprecated aliases of aminmax) -----------------------------------------------
std::tuple<at::Tensor, at::Tensor> aminmaxAll(const at::Tensor& self) {
  TORCH_WARN_ONCE(
      "_aminmax is deprecated as of PyTorch 1.11 and will be removed in a future release. Use "
      "aminmax instead. This warning will only appear once per process.");
  return at::aminmax(self);
}
std::tuple<at::Tensor, at::Tensor> aminmaxDim(const at::Tensor& self, int64_t dim, bool keepdim) {
  TORCH_WARN_ONCE(
      "_aminmax is deprecated as of PyTorch 1.11 and will be removed in a future release. Use "
      "aminmax instead. This warning will only appear once per process.");
  return at::aminmax(self, dim, keepdim);
}

// ---- glu_jvp --------------------------------------------------------------------------------
// dglu = da * s + glu * (db - s * db) with s = sigmoid(b), CPU's glu_jvp kernel. The generator
// takes three inputs, so it runs as t = glu * (db - s * db), then dglu = t + da * s.
const PointwiseOp kGluJvpTail{"glu_jvp_tail", "a * (c - b * c)", nullptr, Domain::kFloating};
const PointwiseOp kGluJvpHead{"glu_jvp_head", "a + b * c", nullptr, Domain::kFloating};

at::Tensor gluJvp(const at::Tensor& glu, const at::Tensor& x, const at::Tensor& dx, int64_t dim) {
  checkSameDevice({glu, x, dx});
  dim = at::maybe_wrap_dim(dim, x.dim());
  const int64_t n = glu.size(dim);
  const at::Tensor b = x.narrow(dim, n, n);
  const at::Tensor da = dx.narrow(dim, 0, n);
  const at::Tensor db = dx.narrow(dim, n, n);
  at::Tensor dglu = at::empty_like(glu);
  const at::Tensor sig = at::sigmoid(b);
  {
    auto iter = at::TensorIteratorConfig()
                    .add_output(dglu)
                    .add_const_input(glu)
                    .add_const_input(sig)
                    .add_const_input(db)
                    .build();
    TORCH_CHECK(codegen::supports(kGluJvpTail, iter.common_dtype()),
                "\"glu_jvp\" not implemented for '", iter.common_dtype(), "'");
    codegen::launch(kGluJvpTail, iter, iter.common_dtype());
  }
  auto iter = at::TensorIteratorConfig()
                  .add_output(dglu)
                  .add_const_input(dglu)
                  .add_const_input(da)
                  .add_const_input(sig)
                  .build();
  codegen::launch(kGluJvpHead, iter, iter.common_dtype());
  return dglu;
}

// ---- _weight_norm_interface -----------------------------------------------------------------
// w = v * (g / ||v||) with the norm over every dim but `dim` (0 or the last, as CPU's fused
// kernel requires); norms have g's shape, in float for bfloat16 g (as CPU keeps them).
std::vector<int64_t> normDims(const at::Tensor& v, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < v.dim(); ++d)
    if (d != dim) dims.push_back(d);
  return dims;
}

void checkWeightNormDim(const at::Tensor& v, int64_t dim) {
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1,
              "fused kernels can only be applied for first or last dim");
}

std::tuple<at::Tensor, at::Tensor> weightNorm(const at::Tensor& v, const at::Tensor& g,
                                              int64_t dim) {
  checkSameDevice({v, g});
  checkWeightNormDim(v, dim);
  const c10::ScalarType t = v.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kDouble || t == at::kBFloat16,
              "\"weight_norm_fwd_first_dim_kernel\" not implemented for '", c10::toString(t), "'");
  const c10::ScalarType acc = t == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor va = v.to(acc);
  at::Tensor norm = at::linalg_vector_norm(va, 2, normDims(v, dim), /*keepdim=*/true);
  at::Tensor w = at::empty_like(v, at::MemoryFormat::Contiguous);
  w.copy_(va * (g.to(acc).reshape(norm.sizes()) / norm));
  const c10::ScalarType norm_t = g.scalar_type() == at::kBFloat16 ? at::kFloat : g.scalar_type();
  at::Tensor norms = at::empty_strided(g.sizes(), g.strides(), g.options().dtype(norm_t));
  norms.copy_(norm.reshape(g.sizes()));
  return {w, norms};
}

// grad_g = sum(grad_w * v) / norm; grad_v = (g / norm) * (grad_w - v * grad_g / norm).
std::tuple<at::Tensor, at::Tensor> weightNormBackward(const at::Tensor& grad_w,
                                                      const at::Tensor& saved_v,
                                                      const at::Tensor& saved_g,
                                                      const at::Tensor& saved_norms, int64_t dim) {
  checkSameDevice({grad_w, saved_v, saved_g, saved_norms});
  TORCH_CHECK(saved_v.is_contiguous(), "saved_v must be contiguous");
  TORCH_CHECK(saved_g.is_contiguous(), "saved_g must be contiguous");
  TORCH_CHECK(saved_norms.is_contiguous(), "saved_norms must be contiguous");
  checkWeightNormDim(saved_v, dim);
  const c10::ScalarType t = saved_v.scalar_type();
  const c10::ScalarType acc = t == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor gw = grad_w.to(acc), v = saved_v.to(acc);
  const at::Tensor norm = saved_norms.to(acc);
  const at::Tensor s = (gw * v).sum(normDims(saved_v, dim), /*keepdim=*/true);
  const at::Tensor nk = norm.reshape(s.sizes());
  const at::Tensor gg = s / nk;
  const at::Tensor gv = (saved_g.to(acc).reshape(s.sizes()) / nk) * (gw - v * (gg / nk));
  at::Tensor grad_v = at::empty_like(saved_v, at::MemoryFormat::Contiguous);
  grad_v.copy_(gv);
  at::Tensor grad_g = at::empty_like(saved_g, at::MemoryFormat::Contiguous);
  grad_g.copy_(gg.reshape(saved_g.sizes()));
  return {grad_v, grad_g};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_add_relu.Scalar", TORCH_FN(addReluScalar));
  m.impl("_add_relu.Tensor", TORCH_FN(addRelu));
  m.impl("_add_relu.out", TORCH_FN(addReluOut));
  m.impl("_add_relu_.Scalar", TORCH_FN(addReluScalarInplace));
  m.impl("_add_relu_.Tensor", TORCH_FN(addReluInplace));
  m.impl("_aminmax", TORCH_FN(aminmaxAll));
  m.impl("_aminmax.dim", TORCH_FN(aminmaxDim));
  m.impl("_weight_norm_interface", TORCH_FN(weightNorm));
  m.impl("_weight_norm_interface_backward", TORCH_FN(weightNormBackward));
  m.impl("glu_backward_jvp", TORCH_FN(at::native::glu_backward_jvp));
  m.impl("glu_jvp", TORCH_FN(gluJvp));
}

}  // namespace torch_ocl::aten
