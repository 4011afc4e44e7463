// torch.special-style pointwise functions, with ATen's CPU semantics (NaN and zero cases):
// sinc, special_entr, special_xlog1py, and angle of real tensors. Shapes and promotion come from
// PyTorch's meta functions.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/ops/sinc_meta.h>
#include <ATen/ops/special_entr_meta.h>
#include <ATen/ops/special_xlog1py_meta.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/pointwise_run.h"

namespace torch_ocl::aten {
namespace {

using codegen::Domain;
using codegen::PointwiseOp;

// sin(pi x) / (pi x), 1 at 0; the product is formed once, as CPU does.
const PointwiseOp kSinc{"sinc",
                        "a == (T)0 ? (T)1 : sin((T)3.14159265358979323846 * a) / "
                        "((T)3.14159265358979323846 * a)",
                        nullptr, Domain::kFloating};
// -x log x: 0 at 0, -inf below, NaN stays NaN.
const PointwiseOp kEntr{"special_entr",
                        "a != a ? a : (a > (T)0 ? -a * log(a) : (a == (T)0 ? (T)0 : -(T)INFINITY))",
                        nullptr, Domain::kFloating};
// x log1p(y): NaN when y is NaN, else 0 when x is 0.
const PointwiseOp kXlog1py{"special_xlog1py", "b != b ? (T)NAN : (a == (T)0 ? (T)0 : a * log1p(b))",
                           nullptr, Domain::kFloating};

// angle of a real number: pi below zero, else 0; NaN stays NaN.
const PointwiseOp kAngle{"angle", "a != a ? a : (a < (T)0 ? (T)3.14159265358979323846 : (T)0)",
                         nullptr, Domain::kFloating};

// angle is not structured: CPU's unary float op (integers give the default float dtype).
at::Tensor& angleInto(const at::Tensor& self, at::Tensor& out, bool functional) {
  if (self.is_complex()) {
    if (functional) return out = runFallback("aten::angle", "", {self})[0].toTensor();
    runFallback("aten::angle", "out", {self, out});
    return out;
  }
  if (!functional) checkSameDevice({self, out});
  at::TensorIterator iter = at::TensorIterator::unary_float_op(out, self);
  runIter(kAngle, iter, iter.common_dtype(), {}, "aten::angle", functional ? "" : "out",
          functional ? std::vector<c10::IValue>{self} : std::vector<c10::IValue>{self, out});
  if (functional) out = iter.output();
  return out;
}
at::Tensor angleFn(const at::Tensor& self) {
  at::Tensor out;
  return angleInto(self, out, true);
}
at::Tensor& angleOut(const at::Tensor& self, at::Tensor& out) {
  return angleInto(self, out, false);
}

OCL_UNARY_S(sinc, kSinc)
OCL_UNARY_S(special_entr, kEntr)
OCL_BINARY_S(xlog1py, at::meta::structured_special_xlog1py, kXlog1py, "special_xlog1py", "", "out")

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("angle", TORCH_FN(angleFn));
  m.impl("angle.out", TORCH_FN(angleOut));
  m.impl("sinc", TORCH_FN(sincFn));
  m.impl("sinc_", TORCH_FN(sincInplace));
  m.impl("sinc.out", TORCH_FN(sincOut));
  m.impl("special_entr", TORCH_FN(special_entrFn));
  m.impl("special_entr.out", TORCH_FN(special_entrOut));
  m.impl("special_xlog1py", TORCH_FN(xlog1pyFn));
  m.impl("special_xlog1py.out", TORCH_FN(xlog1pyOut));
}

}  // namespace torch_ocl::aten
