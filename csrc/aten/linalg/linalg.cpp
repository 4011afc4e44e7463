// Matrix products: mm, bmm, addmm, _addmm_activation, baddbmm, addbmm, addmv (mv reaches it), dot,
// vdot; matmul, linear, outer reach these by themselves. Every one is a call of the matrix engine
// (gemm.h), which picks the provider per device and dtype and takes strided, transposed and batched
// operands. Complex goes through the counted CPU fallback; bool is rejected by CPU PyTorch and gets
// the same error through it.
#include "aten/linalg.h"

#include <ATen/ATen.h>
#include <ATen/ops/_addmm_activation_meta.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/addmv_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/mm_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/gemm.h"
#include "aten/launch.h"
#include "aten/structured.h"

#include <algorithm>
#include <mutex>

namespace torch_ocl::aten {

std::mutex& clblastMutex() {
  static std::mutex m;
  return m;
}

namespace {

// CPU PyTorch's check (in its kernels, not the meta functions): one dtype for all operands.
void checkSameDtype(const at::Tensor& m1, const at::Tensor& m2,
                    const at::Tensor& self = at::Tensor()) {
  TORCH_CHECK(m1.scalar_type() == m2.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", m1.dtype(),
              " != ", m2.dtype());
  TORCH_CHECK(!self.defined() || self.scalar_type() == m1.scalar_type(),
              "expected self and m1 to have the same dtype, but got: ", self.dtype(),
              " != ", m1.dtype());
}

// mm and bmm: the same product, 2-D or batched; `name` is the op the fallback runs.
template <class Meta>
at::Tensor productFn(const char* name, const at::Tensor& a, const at::Tensor& b) {
  checkSameDevice({a, b});
  if (!gemmSupports(a.scalar_type())) return runFallback(name, "", {a, b})[0].toTensor();
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(a, b);
  checkSameDtype(a, b);
  gemm(s.output(), a, b, 1, 0);
  return s.output();
}

template <class Meta>
at::Tensor& productOut(const char* name, const at::Tensor& a, const at::Tensor& b,
                       at::Tensor& out) {
  checkSameDevice({a, b, out});
  if (!gemmSupports(a.scalar_type())) {
    runFallback(name, "out", {a, b, out});
    return out;
  }
  checkSameDtype(a, b);
  Structured<Meta> s(Mode::kOut, &out);
  s.meta(a, b);
  TORCH_CHECK(out.scalar_type() == a.scalar_type(), "Expected out tensor to have dtype ",
              a.scalar_type(), ", but got ", out.scalar_type(), " instead");
  gemm(out, a, b, 1, 0);
  return out;
}

at::Tensor mmFn(const at::Tensor& a, const at::Tensor& b) {
  return productFn<at::meta::structured_mm>("aten::mm", a, b);
}
at::Tensor& mmOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return productOut<at::meta::structured_mm>("aten::mm", a, b, out);
}
at::Tensor bmmFn(const at::Tensor& a, const at::Tensor& b) {
  return productFn<at::meta::structured_bmm>("aten::bmm", a, b);
}
at::Tensor& bmmOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return productOut<at::meta::structured_bmm>("aten::bmm", a, b, out);
}

// out = act(beta * self + alpha * (m1 @ m2)), for addmm, baddbmm and _addmm_activation (self
// broadcasts to out): self is the engine's epilogue bias, added as each element is stored (no
// copy of self into out first); in place, beta scales out itself.
void addProductImpl(const at::Tensor& out, const at::Tensor& self, const at::Tensor& m1,
                    const at::Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha,
                    GemmActivation act = GemmActivation::kNone) {
  const bool beta_zero = beta.isComplex()         ? beta.toComplexDouble() == 0.0
                         : beta.isFloatingPoint() ? beta.toDouble() == 0
                                                  : beta.toLong() == 0;
  GemmEpilogue epi;
  epi.act = act;
  if (beta_zero) return gemm(out, m1, m2, alpha, 0, epi);
  if (out.is_same(self)) return gemm(out, m1, m2, alpha, beta, epi);
  epi.bias = self;
  epi.bias_scale = beta;
  gemm(out, m1, m2, alpha, 0, epi);
}

// Functional, in-place and out= forms of addmm / baddbmm through their meta functions.
template <class Meta>
at::Tensor addProduct(const char* name, const char* overload, Mode mode, at::Tensor* out,
                      const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                      const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, m1, m2});
  if (out) checkSameDevice({self, *out});
  if (!gemmSupports(m1.scalar_type())) {
    std::vector<c10::IValue> stack{self, m1, m2, beta, alpha};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  Structured<Meta> s(mode, out);
  s.meta(self, m1, m2, beta, alpha);
  checkSameDtype(m1, m2, self);
  TORCH_CHECK(s.output().scalar_type() == m1.scalar_type(), "Expected out tensor to have dtype ",
              m1.scalar_type(), ", but got ", s.output().scalar_type(), " instead");
  addProductImpl(s.output(), self, m1, m2, beta, alpha);
  return s.output();
}

#define OCL_ADD_PRODUCT(ID, META, NAME)                                                        \
  at::Tensor ID##Fn(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,        \
                    const c10::Scalar& beta, const c10::Scalar& alpha) {                       \
    return addProduct<META>("aten::" NAME, "", Mode::kFunctional, nullptr, self, m1, m2, beta, \
                            alpha);                                                            \
  }                                                                                            \
  at::Tensor& ID##Out(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,      \
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {    \
    addProduct<META>("aten::" NAME, "out", Mode::kOut, &out, self, m1, m2, beta, alpha);       \
    return out;                                                                                \
  }                                                                                            \
  at::Tensor& ID##Inplace(at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,        \
                          const c10::Scalar& beta, const c10::Scalar& alpha) {                 \
    addProduct<META>("aten::" NAME "_", "", Mode::kInplace, &self, self, m1, m2, beta, alpha); \
    return self;                                                                               \
  }
OCL_ADD_PRODUCT(addmm, at::meta::structured_addmm, "addmm")
OCL_ADD_PRODUCT(baddbmm, at::meta::structured_baddbmm, "baddbmm")

// _addmm_activation: relu(beta * self + alpha * m1 @ m2), or the exact (erf) gelu of it, in the
// GEMM's own launch. CPU PyTorch runs addmm and then relu_ / gelu_ on the result (so float16 and
// bfloat16 round before the activation, which the epilogue does too), and its errors for the dtypes
// those reject are repeated here.
at::Tensor addmmActivation(Mode mode, at::Tensor* out, const at::Tensor& self, const at::Tensor& m1,
                           const at::Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha,
                           bool use_gelu) {
  checkSameDevice({self, m1, m2});
  if (out) checkSameDevice({self, *out});
  if (!gemmSupports(m1.scalar_type())) {
    std::vector<c10::IValue> stack{self, m1, m2, beta, alpha, use_gelu};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback("aten::_addmm_activation", mode == Mode::kOut ? "out" : "",
                       std::move(stack))[0]
        .toTensor();
  }
  Structured<at::meta::structured__addmm_activation> s(mode, out);
  s.meta(self, m1, m2, beta, alpha, use_gelu);
  checkSameDtype(m1, m2, self);
  const at::ScalarType t = s.output().scalar_type();
  TORCH_CHECK(t == m1.scalar_type(), "Expected out tensor to have dtype ", m1.scalar_type(),
              ", but got ", t, " instead");
  if (use_gelu) {
    TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"GeluKernelImpl\" not implemented for '",
                                t, "'");
  } else {
    TORCH_CHECK_NOT_IMPLEMENTED(!at::isComplexType(t), "clamp is not supported for complex types");
  }
  addProductImpl(s.output(), self, m1, m2, beta, alpha,
                 use_gelu ? GemmActivation::kGelu : GemmActivation::kRelu);
  return s.output();
}
at::Tensor addmmActivationFn(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                             const c10::Scalar& beta, const c10::Scalar& alpha, bool use_gelu) {
  return addmmActivation(Mode::kFunctional, nullptr, self, m1, m2, beta, alpha, use_gelu);
}
at::Tensor& addmmActivationOut(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                               const c10::Scalar& beta, const c10::Scalar& alpha, bool use_gelu,
                               at::Tensor& out) {
  addmmActivation(Mode::kOut, &out, self, m1, m2, beta, alpha, use_gelu);
  return out;
}

// addmv: the vector as a (k x 1) matrix, the result as an (n x 1) one; mv reaches it.
at::Tensor addmvImpl(const char* name, const char* overload, Mode mode, at::Tensor* out,
                     const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                     const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, mat, vec});
  if (out) checkSameDevice({self, *out});
  if (!gemmSupports(mat.scalar_type())) {
    std::vector<c10::IValue> stack{self, mat, vec, beta, alpha};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  Structured<at::meta::structured_addmv> s(mode, out);
  s.meta(self, mat, vec, beta, alpha);
  checkSameDtype(mat, vec, self);
  const at::Tensor& r = s.output();
  TORCH_CHECK(r.scalar_type() == mat.scalar_type() && vec.scalar_type() == mat.scalar_type(),
              "expected scalar type ", mat.scalar_type(), " but found ", vec.scalar_type());
  addProductImpl(r.unsqueeze(1), self.dim() == 1 ? self.unsqueeze(1) : self, mat, vec.unsqueeze(1),
                 beta, alpha);
  return r;
}
at::Tensor addmvFn(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  return addmvImpl("aten::addmv", "", Mode::kFunctional, nullptr, self, mat, vec, beta, alpha);
}
at::Tensor& addmvOut(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                     const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  addmvImpl("aten::addmv", "out", Mode::kOut, &out, self, mat, vec, beta, alpha);
  return out;
}
at::Tensor& addmvInplace(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                         const c10::Scalar& beta, const c10::Scalar& alpha) {
  addmvImpl("aten::addmv_", "", Mode::kInplace, &self, self, mat, vec, beta, alpha);
  return self;
}

// addbmm: the batch folds into the inner dimension, (n x B*k) @ (B*k x m), then addmm.
at::Tensor& addbmmInto(at::Tensor& out, const at::Tensor& self, const at::Tensor& b1,
                       const at::Tensor& b2, const c10::Scalar& beta, const c10::Scalar& alpha) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b1.size(0) == b2.size(0), "batch1 and batch2 must have same number of batches, got ",
              b1.size(0), " and ", b2.size(0));
  TORCH_CHECK(b1.size(2) == b2.size(1), "Incompatible matrix sizes for bmm (", b1.size(1), "x",
              b1.size(2), " and ", b2.size(1), "x", b2.size(2), ")");
  const int64_t nb = b1.size(0), n = b1.size(1), k = b1.size(2), m = b2.size(2);
  const at::Tensor m1 = b1.transpose(0, 1).reshape({n, nb * k});
  const at::Tensor m2 = b2.reshape({nb * k, m});
  if (out.is_same(self)) return out.addmm_(m1, m2, beta, alpha);
  return at::addmm_out(out, self, m1, m2, beta, alpha);
}
at::Tensor addbmmFn(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                    const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, b1, b2});
  at::Tensor out = at::empty({0}, b1.options());
  return addbmmInto(out, self, b1, b2, beta, alpha);
}
at::Tensor& addbmmOut(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  checkSameDevice({self, b1, b2, out});
  return addbmmInto(out, self, b1, b2, beta, alpha);
}
at::Tensor& addbmmInplace(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                          const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, b1, b2});
  TORCH_CHECK(self.dim() == 2 && self.size(0) == b1.size(1) && self.size(1) == b2.size(2),
              "The input tensor must be a matrix with size ", b1.size(1), "x", b2.size(2),
              ", but got a ", self.dim(), "-D tensor with size ", self.size(0), "x",
              self.dim() > 1 ? self.size(1) : 0);
  return addbmmInto(self, self, b1, b2, beta, alpha);
}

// dot / vdot: a (1 x n) @ (n x 1) product; vdot conjugates a (a lazy view that gemm resolves).
at::Tensor dotImpl(const char* name, const at::Tensor& a, const at::Tensor& b) {
  checkSameDevice({a, b});
  TORCH_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ",
              b.dim(), "D tensors");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "dot : expected both vectors to have same dtype, ", "but found ", a.scalar_type(),
              " and ", b.scalar_type());
  TORCH_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(),
              "] and src [", b.numel(), "] to have the same number of elements, but got ",
              a.numel(), " and ", b.numel(), " elements respectively");
  if (!gemmSupports(a.scalar_type())) return runFallback(name, "", {a, b})[0].toTensor();
  at::Tensor out = at::empty({}, a.options());
  const bool vdot = std::string(name) == "aten::vdot";
  const at::Tensor lhs = vdot && a.is_complex() ? a.conj() : a;
  gemm(out.view({1, 1}), lhs.unsqueeze(0), b.unsqueeze(1), 1, 0);
  return out;
}
at::Tensor dotFn(const at::Tensor& a, const at::Tensor& b) {
  return dotImpl("aten::dot", a, b);
}
at::Tensor vdotFn(const at::Tensor& a, const at::Tensor& b) {
  return dotImpl("aten::vdot", a, b);
}

// torch_ocl::addmm_with_activation: (beta * self + alpha * m1 @ m2, and its relu or exact gelu),
// both kept: a training graph saves the value before the activation for the backward, so
// _addmm_activation (which keeps only the activation) does not apply there. One command on the
// host BLAS or cpu_tile (GemmEpilogue::act_out); the compiled path's post-grad pass emits it
// (lowering.py).
std::tuple<at::Tensor, at::Tensor> addmmWithActivationFn(const at::Tensor& self,
                                                         const at::Tensor& m1, const at::Tensor& m2,
                                                         const c10::Scalar& beta,
                                                         const c10::Scalar& alpha, bool use_gelu) {
  checkSameDevice({self, m1, m2});
  TORCH_CHECK(m1.dim() == 2 && m2.dim() == 2 && m1.size(1) == m2.size(0),
              "addmm_with_activation: mat1 and mat2 shapes cannot be multiplied (", m1.sizes(),
              " and ", m2.sizes(), ")");
  checkSameDtype(m1, m2, self);
  TORCH_CHECK(at::isFloatingType(m1.scalar_type()), "addmm_with_activation: a floating dtype, got ",
              m1.scalar_type());
  if (!gemmSupports(m1.scalar_type())) {
    at::Tensor pre = at::addmm(self, m1, m2, beta, alpha);
    return {pre, use_gelu ? at::gelu(pre) : at::relu(pre)};
  }
  at::Tensor out = at::empty({m1.size(0), m2.size(1)}, m1.options());
  at::Tensor act = at::empty_like(out);
  GemmEpilogue epi;
  epi.act = use_gelu ? GemmActivation::kGelu : GemmActivation::kRelu;
  epi.act_out = act;
  const bool beta_zero = beta.isFloatingPoint() ? beta.toDouble() == 0 : beta.toLong() == 0;
  if (!beta_zero) {
    epi.bias = self.expand_as(out);
    epi.bias_scale = beta;
  }
  gemm(out, m1, m2, alpha, 0, epi);
  return {out, act};
}

// torch_ocl::mm_group: independent products a[i] @ b[i] as one command where the matrix engine
// can (gemmGroup); the compiled path's post-grad pass groups a backward's input and weight
// gradients into it (src/torch_ocl/_inductor/lowering.py).
std::vector<at::Tensor> mmGroupFn(at::TensorList a, at::TensorList b) {
  TORCH_CHECK(a.size() == b.size(), "mm_group: ", a.size(), " left and ", b.size(),
              " right operands");
  std::vector<at::Tensor> outs;
  outs.reserve(a.size());
  bool engine = true;
  for (size_t i = 0; i < a.size(); ++i) {
    TORCH_CHECK(a[i].dim() == 2 && b[i].dim() == 2 && a[i].size(1) == b[i].size(0),
                "mm_group: product ", i, " has shapes ", a[i].sizes(), " and ", b[i].sizes());
    checkSameDevice({a[i], b[i], a[0]});
    checkSameDtype(a[i], b[i]);
    TORCH_CHECK(a[i].scalar_type() == a[0].scalar_type(), "mm_group: products of one dtype");
    engine = engine && gemmSupports(a[i].scalar_type());
    outs.push_back(at::empty({a[i].size(0), b[i].size(1)}, a[i].options()));
  }
  if (!engine) {
    for (size_t i = 0; i < a.size(); ++i) outs[i] = at::mm(a[i], b[i]);
    return outs;
  }
  gemmGroup(outs, a, b);
  return outs;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_addmm_activation", TORCH_FN(addmmActivationFn));
  m.impl("_addmm_activation.out", TORCH_FN(addmmActivationOut));
  m.impl("addmm", TORCH_FN(addmmFn));
  m.impl("addmm.out", TORCH_FN(addmmOut));
  m.impl("addmm_", TORCH_FN(addmmInplace));
  m.impl("baddbmm", TORCH_FN(baddbmmFn));
  m.impl("baddbmm.out", TORCH_FN(baddbmmOut));
  m.impl("baddbmm_", TORCH_FN(baddbmmInplace));
  m.impl("addbmm", TORCH_FN(addbmmFn));
  m.impl("addbmm.out", TORCH_FN(addbmmOut));
  m.impl("addbmm_", TORCH_FN(addbmmInplace));
  m.impl("addmv", TORCH_FN(addmvFn));
  m.impl("addmv.out", TORCH_FN(addmvOut));
  m.impl("addmv_", TORCH_FN(addmvInplace));
  m.impl("bmm", TORCH_FN(bmmFn));
  m.impl("bmm.out", TORCH_FN(bmmOut));
  m.impl("mm", TORCH_FN(mmFn));
  m.impl("mm.out", TORCH_FN(mmOut));
  m.impl("dot", TORCH_FN(dotFn));
  m.impl("vdot", TORCH_FN(vdotFn));
}

TORCH_LIBRARY(torch_ocl, m) {
  m.def("mm_group(Tensor[] a, Tensor[] b) -> Tensor[]");
  m.def(
      "addmm_with_activation(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
      "Scalar alpha=1, bool use_gelu=False) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(torch_ocl, PrivateUse1, m) {
  m.impl("addmm_with_activation", TORCH_FN(addmmWithActivationFn));
  m.impl("mm_group", TORCH_FN(mmGroupFn));
}

}  // namespace torch_ocl::aten
