// Pointwise nn activations with ATen's CPU semantics: hardshrink and softshrink with their shared
// backward, glu and glu_backward, and the _prelu_kernel pair that F.prelu and nn.PReLU call.
// Structured ops run PyTorch's meta functions (pointwise_run.h); glu_backward and the prelu kernels
// build their TensorIterators the way CPU PyTorch does (aten/src/ATen/native/Activation.cpp,
// GatedLinearUnit.cpp).
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/glu_meta.h>
#include <ATen/ops/hardshrink_backward_meta.h>
#include <ATen/ops/hardshrink_meta.h>
#include <ATen/ops/softshrink_backward_meta.h>
#include <ATen/ops/softshrink_meta.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/pointwise_run.h"

namespace torch_ocl::aten {
namespace {

using codegen::Domain;
using codegen::PointwiseOp;

// CPU's vectorised kernels (the path every contiguous run but its last few elements takes) define
// the edge cases: the middle band gives +0 (also for -0), NaN passes through the forward ops, and
// the backward gives 0 where self is NaN. s0 = lambd.
const PointwiseOp kHardshrink{"hardshrink", "(a >= -s0 && a <= s0) ? (T)0 : a", nullptr,
                              Domain::kFloating};
const PointwiseOp kSoftshrink{"softshrink",
                              "a > s0 ? a - s0 : (a < -s0 ? a + s0 : (a != a ? a : (T)0))", nullptr,
                              Domain::kFloating};
// shrink_backward (both shrinks): a = grad, b = self.
const PointwiseOp kShrinkBackward{"shrink_backward", "(b < -s0 || b > s0) ? a : (T)0", nullptr,
                                  Domain::kFloating};

// hardshrink and shrink_backward compare against lambd converted to the tensor's dtype (half and
// bfloat16 round it); softshrink computes with lambd as a float.
c10::Scalar lambdIn(c10::ScalarType t, const c10::Scalar& lambd) {
  if (t == c10::kHalf) return static_cast<double>(lambd.to<c10::Half>());
  if (t == c10::kBFloat16) return static_cast<double>(lambd.to<c10::BFloat16>());
  return lambd;
}

// glu: a = first half, b = second half.
const PointwiseOp kGlu{"glu", "a * ((T)1 / ((T)1 + exp(-b)))", nullptr, Domain::kFloating};
// glu_backward's second half: a = sigmoid(second half), b = first half, c = grad.
const PointwiseOp kGluBackward{"glu_backward", "((T)1 - a) * a * b * c", nullptr,
                               Domain::kFloating};
// prelu: a = self, b = weight; backward: c = grad.
const PointwiseOp kPrelu{"prelu", "a > (T)0 ? a : b * a", nullptr, Domain::kFloating};
const PointwiseOp kPreluBackwardSelf{"prelu_backward_self", "a > (T)0 ? c : b * c", nullptr,
                                     Domain::kFloating};
const PointwiseOp kPreluBackwardWeight{"prelu_backward_weight", "a > (T)0 ? (T)0 : a * c", nullptr,
                                       Domain::kFloating};

OCL_STRUCTURED(hardshrink, at::meta::structured_hardshrink, kHardshrink, "hardshrink", "", "out",
               (lambdIn(self.scalar_type(), lambd)), (, const c10::Scalar& lambd), (, lambd))
OCL_STRUCTURED(softshrink, at::meta::structured_softshrink, kSoftshrink, "softshrink", "", "out",
               (lambd), (, const c10::Scalar& lambd), (, lambd))
OCL_STRUCTURED(hardshrinkBackward, at::meta::structured_hardshrink_backward, kShrinkBackward,
               "hardshrink_backward", "", "grad_input",
               (lambdIn(c10::promoteTypes(self.scalar_type(), input.scalar_type()), lambd)),
               (, const at::Tensor& input, const c10::Scalar& lambd), (, input, lambd))
OCL_STRUCTURED(softshrinkBackward, at::meta::structured_softshrink_backward, kShrinkBackward,
               "softshrink_backward", "", "grad_input",
               (lambdIn(c10::promoteTypes(self.scalar_type(), input.scalar_type()), lambd)),
               (, const at::Tensor& input, const c10::Scalar& lambd), (, input, lambd))
OCL_STRUCTURED(glu, at::meta::structured_glu, kGlu, "glu", "", "out", (), (, int64_t dim), (, dim))

// glu_backward as CPU computes it: sigmoid of the second half into the first half of grad_input,
// the fused second-half gradient, then the first half times grad.
at::Tensor& gluBackwardInto(const at::Tensor& grad, const at::Tensor& input, int64_t dim,
                            at::Tensor& grad_input, bool functional) {
  TORCH_CHECK(input.dim() > 0, "glu does not support 0-dimensional tensors");
  const int64_t wrap_dim = at::maybe_wrap_dim(dim, input.dim());
  const int64_t n = input.size(wrap_dim);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", wrap_dim, " is size ",
              n);
  if (!codegen::supports(kGluBackward, input.scalar_type())) {
    if (functional)
      return grad_input = runFallback("aten::glu_backward", "", {grad, input, dim})[0].toTensor();
    runFallback("aten::glu_backward", "grad_input", {grad, input, dim, grad_input});
    return grad_input;
  }
  checkSameDevice({grad, input});
  if (functional)
    grad_input = at::empty_like(input, at::MemoryFormat::Contiguous);
  else
    grad_input.resize_as_(input);
  const int64_t half = n / 2;
  const at::Tensor first = input.narrow(wrap_dim, 0, half);
  const at::Tensor second = input.narrow(wrap_dim, half, half);
  at::Tensor grad_first = grad_input.narrow(wrap_dim, 0, half);
  at::Tensor grad_second = grad_input.narrow(wrap_dim, half, half);
  at::sigmoid_out(grad_first, second);
  auto iter = at::TensorIteratorConfig()
                  .add_output(grad_second)
                  .add_const_input(grad_first)
                  .add_const_input(first)
                  .add_const_input(grad)
                  .build();
  codegen::launch(kGluBackward, iter, iter.common_dtype());
  grad_first.mul_(grad);
  return grad_input;
}
at::Tensor gluBackwardFn(const at::Tensor& grad, const at::Tensor& input, int64_t dim) {
  at::Tensor grad_input;
  return gluBackwardInto(grad, input, dim, grad_input, true);
}
at::Tensor& gluBackwardOut(const at::Tensor& grad, const at::Tensor& input, int64_t dim,
                           at::Tensor& grad_input) {
  return gluBackwardInto(grad, input, dim, grad_input, false);
}

// _prelu_kernel: a binary TensorIterator over self and the (already broadcastable) weight.
at::Tensor preluKernelFn(const at::Tensor& self, const at::Tensor& weight) {
  checkSameDevice({self, weight});
  at::Tensor result = at::empty_like(self);
  auto iter = at::TensorIteratorConfig()
                  .add_output(result)
                  .add_const_input(self)
                  .add_const_input(weight)
                  .build();
  const c10::ScalarType compute = iter.common_dtype();
  if (!codegen::supports(kPrelu, compute))
    return runFallback("aten::_prelu_kernel", "", {self, weight})[0].toTensor();
  codegen::launch(kPrelu, iter, compute);
  return result;
}

// _prelu_kernel_backward: both gradients at the broadcast shape, as CPU returns them (autograd
// sums the weight gradient down to the weight's shape). One launch per output.
std::tuple<at::Tensor, at::Tensor> preluKernelBackwardFn(const at::Tensor& grad,
                                                         const at::Tensor& self,
                                                         const at::Tensor& weight) {
  checkSameDevice({grad, self, weight});
  auto build = [&](at::Tensor& out) {
    return at::TensorIteratorConfig()
        .add_output(out)
        .add_const_input(self)
        .add_const_input(weight)
        .add_const_input(grad)
        .build();
  };
  at::Tensor grad_self = at::empty({0}, self.options());
  at::Tensor grad_weight = at::empty({0}, weight.options());
  auto iter_self = build(grad_self);
  const c10::ScalarType compute = iter_self.common_dtype();
  if (!codegen::supports(kPreluBackwardSelf, compute)) {
    auto r = runFallback("aten::_prelu_kernel_backward", "", {grad, self, weight});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  auto iter_weight = build(grad_weight);
  codegen::launch(kPreluBackwardSelf, iter_self, compute);
  codegen::launch(kPreluBackwardWeight, iter_weight, compute);
  return {grad_self, grad_weight};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_prelu_kernel", TORCH_FN(preluKernelFn));
  m.impl("_prelu_kernel_backward", TORCH_FN(preluKernelBackwardFn));
  m.impl("glu", TORCH_FN(gluFn));
  m.impl("glu.out", TORCH_FN(gluOut));
  m.impl("glu_backward", TORCH_FN(gluBackwardFn));
  m.impl("glu_backward.grad_input", TORCH_FN(gluBackwardOut));
  m.impl("hardshrink", TORCH_FN(hardshrinkFn));
  m.impl("hardshrink.out", TORCH_FN(hardshrinkOut));
  m.impl("hardshrink_backward", TORCH_FN(hardshrinkBackwardFn));
  m.impl("hardshrink_backward.grad_input", TORCH_FN(hardshrinkBackwardOut));
  m.impl("softshrink", TORCH_FN(softshrinkFn));
  m.impl("softshrink.out", TORCH_FN(softshrinkOut));
  m.impl("softshrink_backward", TORCH_FN(softshrinkBackwardFn));
  m.impl("softshrink_backward.grad_input", TORCH_FN(softshrinkBackwardOut));
}

}  // namespace torch_ocl::aten
