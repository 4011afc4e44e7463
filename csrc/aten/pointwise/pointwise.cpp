// Pointwise ops through PyTorch's structured-kernel meta functions (shape, broadcasting and type
// promotion exactly as on CPU, via at::TensorIterator) and the kernel generator. Each op is one
// expression; its functional, in-place and out= forms share one runner. Dtypes the generator does
// not cover go through the counted CPU fallback.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/acos_meta.h>
#include <ATen/ops/add_meta.h>
#include <ATen/ops/asin_meta.h>
#include <ATen/ops/atan2_meta.h>
#include <ATen/ops/atan_meta.h>
#include <ATen/ops/ceil_meta.h>
#include <ATen/ops/clamp_max_meta.h>
#include <ATen/ops/clamp_meta.h>
#include <ATen/ops/clamp_min_meta.h>
#include <ATen/ops/cos_meta.h>
#include <ATen/ops/cosh_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/eq_meta.h>
#include <ATen/ops/erf_meta.h>
#include <ATen/ops/erfc_meta.h>
#include <ATen/ops/exp2_meta.h>
#include <ATen/ops/exp_meta.h>
#include <ATen/ops/expm1_meta.h>
#include <ATen/ops/floor_meta.h>
#include <ATen/ops/ge_meta.h>
#include <ATen/ops/gelu_backward_meta.h>
#include <ATen/ops/gelu_meta.h>
#include <ATen/ops/gt_meta.h>
#include <ATen/ops/le_meta.h>
#include <ATen/ops/leaky_relu_backward_meta.h>
#include <ATen/ops/leaky_relu_meta.h>
#include <ATen/ops/log10_meta.h>
#include <ATen/ops/log1p_meta.h>
#include <ATen/ops/log2_meta.h>
#include <ATen/ops/log_meta.h>
#include <ATen/ops/lt_meta.h>
#include <ATen/ops/maximum_meta.h>
#include <ATen/ops/minimum_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/ne_meta.h>
#include <ATen/ops/neg_meta.h>
#include <ATen/ops/pow_meta.h>
#include <ATen/ops/reciprocal_meta.h>
#include <ATen/ops/rsqrt_meta.h>
#include <ATen/ops/sigmoid_meta.h>
#include <ATen/ops/sign_meta.h>
#include <ATen/ops/silu_backward_meta.h>
#include <ATen/ops/silu_meta.h>
#include <ATen/ops/sin_meta.h>
#include <ATen/ops/sinh_meta.h>
#include <ATen/ops/sqrt_meta.h>
#include <ATen/ops/sub_meta.h>
#include <ATen/ops/tan_meta.h>
#include <ATen/ops/tanh_meta.h>
#include <ATen/ops/threshold_backward_meta.h>
#include <ATen/ops/trunc_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/pointwise_run.h"
#include "aten/structured.h"
#include "codegen/pointwise.h"
#include "integration/state.h"

namespace torch_ocl::aten {
namespace {

using codegen::Domain;
using codegen::PointwiseOp;

// ---- the ops: one expression each ------------------------------------------------------------

// Floating results of a comparison-free expression normalise bools to 0/1 in the generator.
// The last field of an op is its complex form (kernels/complex.cl), where it has one.
// The last field: vector-safe (PointwiseOp::vector_safe).
const PointwiseOp kadd{"add",   "a + s0 * b", "a + s0 * b",          Domain::kAll, false,
                       nullptr, nullptr,      "a + ocl_cmul(s0, b)", true};
const PointwiseOp ksub{"sub",   "a - s0 * b", "a - s0 * b",          Domain::kAll, false,
                       nullptr, nullptr,      "a - ocl_cmul(s0, b)", true};
const PointwiseOp kMul{"mul",   "a * b", "a * b",          Domain::kAll, false,
                       nullptr, nullptr, "ocl_cmul(a, b)", true};
const PointwiseOp kDiv{"div",   "a / b",          nullptr, Domain::kFloating, false, nullptr,
                       nullptr, "ocl_cdiv(a, b)", true};
const PointwiseOp kMaximum{"maximum", "(isnan(a) || isnan(b)) ? a + b : fmax(a, b)", "max(a, b)"};
const PointwiseOp kMinimum{"minimum", "(isnan(a) || isnan(b)) ? a + b : fmin(a, b)", "min(a, b)"};
const PointwiseOp kAtan2{"atan2", "atan2(a, b)", nullptr, Domain::kFloating};
const PointwiseOp kEq{"eq", "a == b", nullptr, Domain::kAll,
                      true, nullptr,  nullptr, "ocl_ceq(a, b)"};
const PointwiseOp kNe{"ne", "a != b", nullptr, Domain::kAll,
                      true, nullptr,  nullptr, "!ocl_ceq(a, b)"};
const PointwiseOp kLt{"lt", "a < b", nullptr, Domain::kAll, true};
const PointwiseOp kLe{"le", "a <= b", nullptr, Domain::kAll, true};
const PointwiseOp kGt{"gt", "a > b", nullptr, Domain::kAll, true};
const PointwiseOp kGe{"ge", "a >= b", nullptr, Domain::kAll, true};
const PointwiseOp kClampMin{"clamp_min", "isnan(a) ? a : fmax(a, s0)", "max(a, s0)"};
// Inputs are (self, grad): the gradient passes where the forward input exceeded the threshold.
const PointwiseOp kThresholdBackward =
    codegen::vectorSafe({"threshold_backward", "a <= s0 ? (T)0 : b", "a <= s0 ? (T)0 : b"});

#define OCL_BINARY_ALPHA(NAME, META)                                                               \
  at::Tensor NAME##Fn(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {        \
    return run<META>(k##NAME, "aten::" #NAME, "Tensor", Mode::kFunctional, nullptr, {alpha}, a, b, \
                     alpha);                                                                       \
  }                                                                                                \
  at::Tensor& NAME##Inplace(at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {        \
    run<META>(k##NAME, "aten::" #NAME "_", "Tensor", Mode::kInplace, &a, {alpha}, a, b, alpha);    \
    return a;                                                                                      \
  }                                                                                                \
  at::Tensor& NAME##Out(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,        \
                        at::Tensor& out) {                                                         \
    run<META>(k##NAME, "aten::" #NAME, "out", Mode::kOut, &out, {alpha}, a, b, alpha);             \
    return out;                                                                                    \
  }

#define OCL_BINARY(NAME, OVERLOAD, OUT_OVERLOAD, META, ARG_T)                                   \
  at::Tensor NAME##OVERLOAD##Fn(const at::Tensor& a, const ARG_T& b) {                          \
    return run<META>(k##NAME, "aten::" #NAME, #OVERLOAD, Mode::kFunctional, nullptr, {}, a, b); \
  }                                                                                             \
  [[maybe_unused]] at::Tensor& NAME##OVERLOAD##Inplace(at::Tensor& a, const ARG_T& b) {         \
    run<META>(k##NAME, "aten::" #NAME "_", #OVERLOAD, Mode::kInplace, &a, {}, a, b);            \
    return a;                                                                                   \
  }                                                                                             \
  at::Tensor& NAME##OVERLOAD##Out(const at::Tensor& a, const ARG_T& b, at::Tensor& out) {       \
    run<META>(k##NAME, "aten::" #NAME, #OUT_OVERLOAD, Mode::kOut, &out, {}, a, b);              \
    return out;                                                                                 \
  }

OCL_BINARY_ALPHA(add, at::meta::structured_add_Tensor)
OCL_BINARY_ALPHA(sub, at::meta::structured_sub_Tensor)
// Plain binary ops are named in lower case so that "aten::" #NAME is the op's name.
const PointwiseOp& kmul = kMul;
const PointwiseOp& kdiv = kDiv;
const PointwiseOp& katan2 = kAtan2;
const PointwiseOp& kmaximum = kMaximum;
const PointwiseOp& kminimum = kMinimum;
const PointwiseOp& keq = kEq;
const PointwiseOp& kne = kNe;
const PointwiseOp& klt = kLt;
const PointwiseOp& kle = kLe;
const PointwiseOp& kgt = kGt;
const PointwiseOp& kge = kGe;
OCL_BINARY(mul, Tensor, out, at::meta::structured_mul_Tensor, at::Tensor)
OCL_BINARY(div, Tensor, out, at::meta::structured_div_Tensor, at::Tensor)
OCL_BINARY(atan2, , out, at::meta::structured_atan2, at::Tensor)
OCL_BINARY(maximum, , out, at::meta::structured_maximum, at::Tensor)
OCL_BINARY(minimum, , out, at::meta::structured_minimum, at::Tensor)
#define OCL_COMPARISON(NAME, META_PREFIX)                                                       \
  OCL_BINARY(NAME, Tensor, Tensor_out, at::meta::structured_##META_PREFIX##_Tensor, at::Tensor) \
  OCL_BINARY(NAME, Scalar, Scalar_out, at::meta::structured_##META_PREFIX##_Scalar, c10::Scalar)
OCL_COMPARISON(eq, eq)
OCL_COMPARISON(ne, ne)
OCL_COMPARISON(lt, lt)
OCL_COMPARISON(le, le)
OCL_COMPARISON(gt, gt)
OCL_COMPARISON(ge, ge)

at::Tensor clampMinFn(const at::Tensor& a, const c10::Scalar& min) {
  return run<at::meta::structured_clamp_min>(kClampMin, "aten::clamp_min", "", Mode::kFunctional,
                                             nullptr, {min}, a, min);
}
at::Tensor& clampMinInplace(at::Tensor& a, const c10::Scalar& min) {
  run<at::meta::structured_clamp_min>(kClampMin, "aten::clamp_min_", "", Mode::kInplace, &a, {min},
                                      a, min);
  return a;
}
at::Tensor& clampMinOut(const at::Tensor& a, const c10::Scalar& min, at::Tensor& out) {
  run<at::meta::structured_clamp_min>(kClampMin, "aten::clamp_min", "out", Mode::kOut, &out, {min},
                                      a, min);
  return out;
}
at::Tensor reluFn(const at::Tensor& a) {
  return clampMinFn(a, 0);
}
at::Tensor& reluInplace(at::Tensor& a) {
  return clampMinInplace(a, 0);
}

at::Tensor thresholdBackwardFn(const at::Tensor& grad, const at::Tensor& self,
                               const c10::Scalar& threshold) {
  return run<at::meta::structured_threshold_backward>(
      kThresholdBackward, "aten::threshold_backward", "", Mode::kFunctional, nullptr, {threshold},
      grad, self, threshold);
}
at::Tensor& thresholdBackwardOut(const at::Tensor& grad, const at::Tensor& self,
                                 const c10::Scalar& threshold, at::Tensor& out) {
  run<at::meta::structured_threshold_backward>(kThresholdBackward, "aten::threshold_backward",
                                               "grad_input", Mode::kOut, &out, {threshold}, grad,
                                               self, threshold);
  return out;
}

// Unary floating functions: ints promote to float in their meta functions.
// VEC: the expression is vector-safe (PointwiseOp::vector_safe).
#define OCL_UNARY_CV(NAME, EXPR, EXPR_INT, DOMAIN, EXPR_COMPLEX, VEC)                              \
  const PointwiseOp k_##NAME{#NAME,   EXPR,    EXPR_INT,     DOMAIN, false,                        \
                             nullptr, nullptr, EXPR_COMPLEX, VEC};                                 \
  at::Tensor NAME##Fn(const at::Tensor& a) {                                                       \
    return run<at::meta::structured_##NAME>(k_##NAME, "aten::" #NAME, "", Mode::kFunctional,       \
                                            nullptr, {}, a);                                       \
  }                                                                                                \
  at::Tensor& NAME##Inplace(at::Tensor& a) {                                                       \
    run<at::meta::structured_##NAME>(k_##NAME, "aten::" #NAME "_", "", Mode::kInplace, &a, {}, a); \
    return a;                                                                                      \
  }                                                                                                \
  at::Tensor& NAME##Out(const at::Tensor& a, at::Tensor& out) {                                    \
    run<at::meta::structured_##NAME>(k_##NAME, "aten::" #NAME, "out", Mode::kOut, &out, {}, a);    \
    return out;                                                                                    \
  }

#define OCL_UNARY_C(NAME, EXPR, EXPR_INT, DOMAIN, EXPR_COMPLEX) \
  OCL_UNARY_CV(NAME, EXPR, EXPR_INT, DOMAIN, EXPR_COMPLEX, false)
#define OCL_UNARY(NAME, EXPR, EXPR_INT, DOMAIN) OCL_UNARY_C(NAME, EXPR, EXPR_INT, DOMAIN, nullptr)
#define OCL_UNARY_FLOAT(NAME, EXPR) OCL_UNARY(NAME, EXPR, nullptr, Domain::kFloating)
// Floating functions that also have a complex form.
#define OCL_UNARY_FC(NAME, EXPR, EXPR_COMPLEX) \
  OCL_UNARY_C(NAME, EXPR, nullptr, Domain::kFloating, EXPR_COMPLEX)
// ... whose expression is also vector-safe.
#define OCL_UNARY_FCV(NAME, EXPR, EXPR_COMPLEX) \
  OCL_UNARY_CV(NAME, EXPR, nullptr, Domain::kFloating, EXPR_COMPLEX, true)
OCL_UNARY_FCV(exp, "ocl_exp(a)", "ocl_cexp(a)")
OCL_UNARY_FC(exp2, "exp2(a)", "ocl_cexp(a * (R)M_LN2)")
OCL_UNARY_FC(expm1, "expm1(a)", "ocl_cexpm1(a)")
OCL_UNARY_FC(log, "log(a)", "ocl_clog(a)")
OCL_UNARY_FC(log2, "log2(a)", "ocl_clog(a) / (R)M_LN2")
OCL_UNARY_FC(log10, "log10(a)", "ocl_clog(a) / (R)M_LN10")
OCL_UNARY_FC(log1p, "log1p(a)", "ocl_clog1p(a)")
OCL_UNARY_FCV(sqrt, "sqrt(a)", "ocl_csqrt(a)")
OCL_UNARY_FC(rsqrt, "rsqrt(a)", "ocl_crsqrt(a)")
OCL_UNARY_FC(sin, "sin(a)", "ocl_csin(a)")
OCL_UNARY_FC(cos, "cos(a)", "ocl_ccos(a)")
OCL_UNARY_FC(tan, "tan(a)", "ocl_ctan(a)")
OCL_UNARY_FC(asin, "asin(a)", "ocl_casin(a)")
OCL_UNARY_FC(acos, "acos(a)", "ocl_cacos(a)")
OCL_UNARY_FC(atan, "atan(a)", "ocl_catan(a)")
OCL_UNARY_FC(sinh, "sinh(a)", "ocl_csinh(a)")
OCL_UNARY_FC(cosh, "cosh(a)", "ocl_ccosh(a)")
OCL_UNARY_FCV(tanh, "ocl_tanh(a)", "ocl_ctanh(a)")
OCL_UNARY_CV(erf, "ocl_erf(a)", nullptr, Domain::kFloating, nullptr, true)
OCL_UNARY_FLOAT(erfc, "erfc(a)")
OCL_UNARY_FCV(sigmoid, "ocl_sigmoid(a)", "ocl_csigmoid(a)")
OCL_UNARY_FCV(reciprocal, "(T)1 / a", "ocl_crecip(a)")
OCL_UNARY_CV(neg, "-a", "-a", Domain::kAll, "-a", true)
OCL_UNARY(ceil, "ceil(a)", "a", Domain::kAll)
OCL_UNARY(floor, "floor(a)", "a", Domain::kAll)
OCL_UNARY(trunc, "trunc(a)", "a", Domain::kAll)

OCL_UNARY(sign, "(T)((a > (T)0) - (a < (T)0))", "(T)((a > (T)0) - (a < (T)0))", Domain::kAll)
OCL_UNARY_FCV(silu, "a / ((T)1 + ocl_exp(-a))", "ocl_cdiv(a, (T)(1, 0) + ocl_cexp(-a))")

// Activations with arguments, and their gradients: (grad, self) are the inputs a, b.
// ocl_gelu_erf: erf(x / sqrt 2) of its own for gelu (see prelude.cl), not ocl_erf.
const PointwiseOp kGelu = codegen::vectorSafe(
    {"gelu", "(T)0.5 * a * ((T)1 + ocl_gelu_erf(a))", nullptr, Domain::kFloating});
const PointwiseOp kGeluTanh = codegen::vectorSafe(
    {"gelu_tanh",
     "(T)0.5 * a * ((T)1 + ocl_tanh((T)0.7978845608028654 * (a + (T)0.044715 * a * a * a)))",
     nullptr, Domain::kFloating});
const PointwiseOp kGeluBackward =
    codegen::vectorSafe({"gelu_backward",
                         "a * ((T)0.5 * ((T)1 + ocl_gelu_erf(b)) + b * ocl_exp((T)-0.5 * b * b) * "
                         "(T)0.3989422804014327)",
                         nullptr, Domain::kFloating});
// d/dx of gelu_tanh without 1 - tanh(u)^2, which cancels catastrophically once tanh(u) rounds
// near +-1 (an error of 1e-5 where the gradient is 0): with e = exp(-2|u|),
// (1 + tanh u) / 2 = (u < 0 ? e : 1) / (1 + e) and sech(u)^2 = 4e / (1 + e)^2.
#define OCL_GELU_U "((T)0.7978845608028654 * (b + (T)0.044715 * b * b * b))"
#define OCL_GELU_E "ocl_exp((T)-2 * fabs(" OCL_GELU_U "))"
const PointwiseOp kGeluTanhBackward = codegen::vectorSafe(
    {"gelu_tanh_backward",
     "a * (((" OCL_GELU_U " < (T)0) ? " OCL_GELU_E " : (T)1) / ((T)1 + " OCL_GELU_E
     ") + (T)2 * b * " OCL_GELU_E " / (((T)1 + " OCL_GELU_E ") * ((T)1 + " OCL_GELU_E
     ")) * (T)0.7978845608028654 * "
     "((T)1 + (T)0.134145 * b * b))",
     nullptr, Domain::kFloating});
#undef OCL_GELU_E
#undef OCL_GELU_U
const PointwiseOp kSiluBackward = codegen::vectorSafe(
    {"silu_backward",
     "a * ((T)1 / ((T)1 + ocl_exp(-b))) * ((T)1 + b * ((T)1 - (T)1 / ((T)1 + ocl_exp(-b))))",
     nullptr, Domain::kFloating});
const PointwiseOp kLeakyRelu =
    codegen::vectorSafe({"leaky_relu", "a > (T)0 ? a : a * s0", nullptr, Domain::kFloating});
// Inputs are (self, grad), as for threshold_backward.
const PointwiseOp kLeakyReluBackward = codegen::vectorSafe(
    {"leaky_relu_backward", "a > (T)0 ? b : b * s0", nullptr, Domain::kFloating});
// Integer pow as CPU's powi: square-and-multiply with wrap-around (in ulong: the low bits of a
// product depend only on the low bits of its factors, and unsigned overflow is defined); negative
// exponents give 1, +-1 or 0.
const char* kPowInt = R"CLC(
inline T ocl_powi(T a, T b) {
  if ((T)-1 < (T)0 && b < (T)0) {
    if (a == (T)1) return (T)1;
    if (a == (T)-1) return (b & (T)1) ? (T)-1 : (T)1;
    return (T)0;
  }
  ulong r = 1, x = (ulong)a, e = (ulong)b;
  while (e) {
    if (e & 1) r *= x;
    e >>= 1;
    x *= x;
  }
  return (T)r;
}
)CLC";
const PointwiseOp kPowScalar{"pow_scalar", "pow(a, s0)", "ocl_powi(a, s0)", Domain::kNumeric,
                             false,        nullptr,      kPowInt,           "ocl_cpow(a, s0)"};
const PointwiseOp kPowTensor{"pow_tensor", "pow(a, b)", "ocl_powi(a, b)", Domain::kNumeric,
                             false,        nullptr,     kPowInt,          "ocl_cpow(a, b)"};

const PointwiseOp& geluOp(c10::string_view approximate, bool backward) {
  const bool tanh = approximate == "tanh";
  TORCH_CHECK(tanh || approximate == "none", "approximate argument must be either none or tanh.");
  return backward ? (tanh ? kGeluTanhBackward : kGeluBackward) : (tanh ? kGeluTanh : kGelu);
}

at::Tensor geluFn(const at::Tensor& a, c10::string_view approximate) {
  return run<at::meta::structured_gelu>(geluOp(approximate, false), "aten::gelu", "",
                                        Mode::kFunctional, nullptr, {}, a, approximate);
}
at::Tensor& geluInplace(at::Tensor& a, c10::string_view approximate) {
  run<at::meta::structured_gelu>(geluOp(approximate, false), "aten::gelu_", "", Mode::kInplace, &a,
                                 {}, a, approximate);
  return a;
}
at::Tensor& geluOut(const at::Tensor& a, c10::string_view approximate, at::Tensor& out) {
  run<at::meta::structured_gelu>(geluOp(approximate, false), "aten::gelu", "out", Mode::kOut, &out,
                                 {}, a, approximate);
  return out;
}
at::Tensor geluBackwardFn(const at::Tensor& grad, const at::Tensor& self,
                          c10::string_view approximate) {
  return run<at::meta::structured_gelu_backward>(geluOp(approximate, true), "aten::gelu_backward",
                                                 "", Mode::kFunctional, nullptr, {}, grad, self,
                                                 approximate);
}
at::Tensor& geluBackwardOut(const at::Tensor& grad, const at::Tensor& self,
                            c10::string_view approximate, at::Tensor& out) {
  run<at::meta::structured_gelu_backward>(geluOp(approximate, true), "aten::gelu_backward",
                                          "grad_input", Mode::kOut, &out, {}, grad, self,
                                          approximate);
  return out;
}
at::Tensor siluBackwardFn(const at::Tensor& grad, const at::Tensor& self) {
  return run<at::meta::structured_silu_backward>(kSiluBackward, "aten::silu_backward", "",
                                                 Mode::kFunctional, nullptr, {}, grad, self);
}
at::Tensor& siluBackwardOut(const at::Tensor& grad, const at::Tensor& self, at::Tensor& out) {
  run<at::meta::structured_silu_backward>(kSiluBackward, "aten::silu_backward", "grad_input",
                                          Mode::kOut, &out, {}, grad, self);
  return out;
}
at::Tensor leakyReluFn(const at::Tensor& a, const c10::Scalar& slope) {
  return run<at::meta::structured_leaky_relu>(kLeakyRelu, "aten::leaky_relu", "", Mode::kFunctional,
                                              nullptr, {slope}, a, slope);
}
at::Tensor& leakyReluInplace(at::Tensor& a, const c10::Scalar& slope) {
  run<at::meta::structured_leaky_relu>(kLeakyRelu, "aten::leaky_relu_", "", Mode::kInplace, &a,
                                       {slope}, a, slope);
  return a;
}
at::Tensor& leakyReluOut(const at::Tensor& a, const c10::Scalar& slope, at::Tensor& out) {
  run<at::meta::structured_leaky_relu>(kLeakyRelu, "aten::leaky_relu", "out", Mode::kOut, &out,
                                       {slope}, a, slope);
  return out;
}
at::Tensor leakyReluBackwardFn(const at::Tensor& grad, const at::Tensor& self,
                               const c10::Scalar& slope, bool self_is_result) {
  return run<at::meta::structured_leaky_relu_backward>(
      kLeakyReluBackward, "aten::leaky_relu_backward", "", Mode::kFunctional, nullptr, {slope},
      grad, self, slope, self_is_result);
}
at::Tensor& leakyReluBackwardOut(const at::Tensor& grad, const at::Tensor& self,
                                 const c10::Scalar& slope, bool self_is_result, at::Tensor& out) {
  run<at::meta::structured_leaky_relu_backward>(kLeakyReluBackward, "aten::leaky_relu_backward",
                                                "grad_input", Mode::kOut, &out, {slope}, grad, self,
                                                slope, self_is_result);
  return out;
}
// A real floating tensor to the power of 2, 3, 0.5, -0.5, -1 or -2: products, sqrt and
// division, as CPU PyTorch's pow_tensor_scalar_optimized_kernel computes them (so the results
// match CPU's, sqrt's sign of zero included; +-0.5 not for half, as there). OpenCL's pow costs ~130
// ns an element on PoCL and keeps the driver from vectorizing: x.pow(2) of 4096 x 768 floats took
// 400-500 ms.
const PointwiseOp kPowSquare =
    codegen::vectorSafe({"pow_square", "a * a", nullptr, Domain::kFloating});
const PointwiseOp kPowCube =
    codegen::vectorSafe({"pow_cube", "a * a * a", nullptr, Domain::kFloating});
const PointwiseOp kPowSqrt =
    codegen::vectorSafe({"pow_sqrt", "sqrt(a)", nullptr, Domain::kFloating});
const PointwiseOp kPowRsqrt =
    codegen::vectorSafe({"pow_rsqrt", "(T)1 / sqrt(a)", nullptr, Domain::kFloating});
const PointwiseOp kPowRecip =
    codegen::vectorSafe({"pow_reciprocal", "(T)1 / a", nullptr, Domain::kFloating});
const PointwiseOp kPowRecipSquare =
    codegen::vectorSafe({"pow_reciprocal_square", "(T)1 / (a * a)", nullptr, Domain::kFloating});

const PointwiseOp& powScalarOp(const at::Tensor& a, const c10::Scalar& e) {
  if (!a.is_floating_point() || e.isComplex() || e.isBoolean()) return kPowScalar;
  const double x = e.toDouble();
  if (x == 2.0) return kPowSquare;
  if (x == 3.0) return kPowCube;
  // CPU takes sqrt for all but half, which keeps pow's values (pow(-0, 0.5) is +0, pow(-inf,
  // 0.5) +inf)
  const bool roots = a.scalar_type() != at::kHalf;
  if (x == 0.5 && roots) return kPowSqrt;
  if (x == -0.5 && roots) return kPowRsqrt;
  if (x == -1.0) return kPowRecip;
  if (x == -2.0) return kPowRecipSquare;
  return kPowScalar;
}

at::Tensor powScalarFn(const at::Tensor& a, const c10::Scalar& e) {
  return run<at::meta::structured_pow_Tensor_Scalar>(
      powScalarOp(a, e), "aten::pow", "Tensor_Scalar", Mode::kFunctional, nullptr, {e}, a, e);
}
at::Tensor& powScalarInplace(at::Tensor& a, const c10::Scalar& e) {
  run<at::meta::structured_pow_Tensor_Scalar>(powScalarOp(a, e), "aten::pow_", "Scalar",
                                              Mode::kInplace, &a, {e}, a, e);
  return a;
}
at::Tensor& powScalarOut(const at::Tensor& a, const c10::Scalar& e, at::Tensor& out) {
  run<at::meta::structured_pow_Tensor_Scalar>(powScalarOp(a, e), "aten::pow", "Tensor_Scalar_out",
                                              Mode::kOut, &out, {e}, a, e);
  return out;
}
at::Tensor powTensorFn(const at::Tensor& a, const at::Tensor& e) {
  return run<at::meta::structured_pow_Tensor_Tensor>(kPowTensor, "aten::pow", "Tensor_Tensor",
                                                     Mode::kFunctional, nullptr, {}, a, e);
}
at::Tensor& powTensorInplace(at::Tensor& a, const at::Tensor& e) {
  run<at::meta::structured_pow_Tensor_Tensor>(kPowTensor, "aten::pow_", "Tensor", Mode::kInplace,
                                              &a, {}, a, e);
  return a;
}
at::Tensor& powTensorOut(const at::Tensor& a, const at::Tensor& e, at::Tensor& out) {
  run<at::meta::structured_pow_Tensor_Tensor>(kPowTensor, "aten::pow", "Tensor_Tensor_out",
                                              Mode::kOut, &out, {}, a, e);
  return out;
}

// pow(Scalar base, Tensor exponent): CPU's meta sizes the output, then 1 ** x is a fill and the
// rest pow.Tensor_Tensor with the base as a wrapped CPU scalar (a kernel argument).
void powScalarBaseInto(const c10::Scalar& base, const at::Tensor& e, const at::Tensor& out) {
  if (base.equal(1.0)) {
    out.fill_(1);
    return;
  }
  at::Tensor b = at::scalar_to_tensor(base);
  b.unsafeGetTensorImpl()->set_wrapped_number(true);
  at::Tensor o = out;
  powTensorOut(b, e, o);
}
at::Tensor powScalarBaseFn(const c10::Scalar& base, const at::Tensor& e) {
  Structured<at::meta::structured_pow_Scalar> s(Mode::kFunctional, nullptr);
  s.meta(base, e);
  powScalarBaseInto(base, e, s.output());
  return s.output();
}
at::Tensor& powScalarBaseOut(const c10::Scalar& base, const at::Tensor& e, at::Tensor& out) {
  Structured<at::meta::structured_pow_Scalar> s(Mode::kOut, &out);
  s.meta(base, e);
  powScalarBaseInto(base, e, out);
  return out;
}

const PointwiseOp kClampMax{"clamp_max", "isnan(a) ? a : fmin(a, s0)", "min(a, s0)"};
const PointwiseOp kClamp{"clamp", "isnan(a) ? a : fmin(fmax(a, s0), s1)", "min(max(a, s0), s1)"};

at::Tensor clampMaxFn(const at::Tensor& a, const c10::Scalar& max) {
  return run<at::meta::structured_clamp_max>(kClampMax, "aten::clamp_max", "", Mode::kFunctional,
                                             nullptr, {max}, a, max);
}
at::Tensor& clampMaxInplace(at::Tensor& a, const c10::Scalar& max) {
  run<at::meta::structured_clamp_max>(kClampMax, "aten::clamp_max_", "", Mode::kInplace, &a, {max},
                                      a, max);
  return a;
}
at::Tensor& clampMaxOut(const at::Tensor& a, const c10::Scalar& max, at::Tensor& out) {
  run<at::meta::structured_clamp_max>(kClampMax, "aten::clamp_max", "out", Mode::kOut, &out, {max},
                                      a, max);
  return out;
}

// clamp with scalar bounds: one bound uses the clamp_min / clamp_max expression.
at::Tensor clampImpl(Mode mode, at::Tensor* out, const at::Tensor& a,
                     const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max) {
  const at::OptionalScalarRef lo = min ? at::OptionalScalarRef(*min) : at::OptionalScalarRef();
  const at::OptionalScalarRef hi = max ? at::OptionalScalarRef(*max) : at::OptionalScalarRef();
  const PointwiseOp& op = min && max ? kClamp : min ? kClampMin : kClampMax;
  const c10::Scalar s0 = min ? *min : max ? *max : c10::Scalar(0);
  const c10::Scalar s1 = max ? *max : c10::Scalar(0);
  const char* name = mode == Mode::kInplace ? "aten::clamp_" : "aten::clamp";
  const char* overload = mode == Mode::kOut ? "out" : "";
  return run<at::meta::structured_clamp>(op, name, overload, mode, out, {s0, s1}, a, lo, hi);
}
at::Tensor clampFn(const at::Tensor& a, const std::optional<c10::Scalar>& min,
                   const std::optional<c10::Scalar>& max) {
  return clampImpl(Mode::kFunctional, nullptr, a, min, max);
}
at::Tensor& clampInplace(at::Tensor& a, const std::optional<c10::Scalar>& min,
                         const std::optional<c10::Scalar>& max) {
  clampImpl(Mode::kInplace, &a, a, min, max);
  return a;
}
at::Tensor& clampOut(const at::Tensor& a, const std::optional<c10::Scalar>& min,
                     const std::optional<c10::Scalar>& max, at::Tensor& out) {
  clampImpl(Mode::kOut, &out, a, min, max);
  return out;
}

// abs is composite above abs.out, which has no structured meta: a plain unary TensorIterator.
// Complex inputs compute in their own dtype and store |z| to a real (or complex) output.
const PointwiseOp kAbs{"abs", "fabs(a)", "(T)abs(a)", Domain::kAll,
                       false, nullptr,   nullptr,     "(T)(ocl_cabs(a), 0)"};
at::Tensor& absOut(const at::Tensor& a, at::Tensor& out) {
  checkSameDevice({a, out});
  if (c10::isComplexType(a.scalar_type())) {
    const c10::ScalarType real = c10::toRealValueType(a.scalar_type());
    TORCH_CHECK(c10::canCast(real, out.scalar_type()), "result type ", real,
                " can't be cast to the desired output type ", out.scalar_type());
    at::native::resize_output(out, a.sizes());
    auto iter = at::TensorIteratorConfig()
                    .check_all_same_dtype(false)
                    .add_output(out)
                    .add_const_input(a)
                    .build();
    codegen::launch(kAbs, iter, a.scalar_type());
    return out;
  }
  auto iter = at::TensorIterator::unary_op(out, a);
  codegen::launch(kAbs, iter, iter.common_dtype());
  return out;
}

// conj_physical: the conjugate materialised (a copy for real dtypes, as on CPU).
const PointwiseOp kConjPhysical{"conj_physical", "a",     "a",     Domain::kAll,
                                false,           nullptr, nullptr, "ocl_cconj(a)"};
at::Tensor& conjPhysicalOut(const at::Tensor& a, at::Tensor& out) {
  checkSameDevice({a, out});
  auto iter = at::TensorIterator::unary_op(out, a);
  codegen::launch(kConjPhysical, iter, iter.common_dtype());
  return out;
}
at::Tensor& conjPhysicalInplace(at::Tensor& a) {
  if (!a.is_complex()) return a;
  return conjPhysicalOut(a, a);
}

// complex(real, imag) and polar(abs, angle): two real inputs (converted to the complex result
// type, so their values are the .x parts) make one complex output; CPU's dtype checks.
const PointwiseOp kComplex{"complex", nullptr, nullptr, Domain::kAll,
                           false,     nullptr, nullptr, "(T)(a.x, b.x)"};
const PointwiseOp kPolar{"polar", nullptr, nullptr, Domain::kAll,
                         false,   nullptr, nullptr, "(T)(a.x * cos(b.x), a.x * sin(b.x))"};
at::Tensor& complexLikeOut(const PointwiseOp& op, const at::Tensor& a, const at::Tensor& b,
                           at::Tensor& out) {
  checkSameDevice({a, b, out});
  auto floating = [](c10::ScalarType t) {
    return t == at::kFloat || t == at::kDouble || t == at::kHalf;
  };
  TORCH_CHECK(floating(a.scalar_type()) && floating(b.scalar_type()),
              "Expected both inputs to be Half, Float or Double tensors but got ", a.scalar_type(),
              " and ", b.scalar_type());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "Expected object of scalar type ",
              a.scalar_type(), " but got scalar type ", b.scalar_type(), " for second argument");
  const c10::ScalarType result = c10::toComplexType(a.scalar_type());
  TORCH_CHECK(out.scalar_type() == result, "Expected object of scalar type ", result,
              " but got scalar type ", out.scalar_type(), " for argument 'out'");
  auto iter = at::TensorIteratorConfig()
                  .add_output(out)
                  .add_const_input(a)
                  .add_const_input(b)
                  .check_all_same_dtype(false)
                  .build();
  codegen::launch(op, iter, result);
  return out;
}
at::Tensor& complexOut(const at::Tensor& real, const at::Tensor& imag, at::Tensor& out) {
  return complexLikeOut(kComplex, real, imag, out);
}
at::Tensor& polarOut(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  return complexLikeOut(kPolar, abs, angle, out);
}

// where(condition, self, other): the condition is input a, converted to the result type.
const PointwiseOp kWhere{
    "where", "a != (T)0 ? b : c",  "a != (T)0 ? b : c", Domain::kAll, false, nullptr,
    nullptr, "a.x != (R)0 ? b : c"};
at::Tensor& whereOut(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other,
                     at::Tensor& out) {
  TORCH_CHECK(cond.scalar_type() == at::kBool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  const c10::ScalarType result = at::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == result, "Expected out type to be ", result, " but got ",
              out.scalar_type());
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .add_output(out)
                  .add_const_input(cond)
                  .add_const_input(self)
                  .add_const_input(other)
                  .build();
  codegen::launch(kWhere, iter, result);
  return out;
}
at::Tensor whereFn(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  const at::Device d = self.device().is_cpu() && self.dim() == 0 ? other.device() : self.device();
  at::Tensor out = at::empty({0}, self.options().device(d).dtype(at::result_type(self, other)));
  return whereOut(cond, self, other, out);
}

}  // namespace

#define OCL_REGISTER_UNARY(NAME)              \
  m.impl(#NAME, TORCH_FN(NAME##Fn));          \
  m.impl(#NAME "_", TORCH_FN(NAME##Inplace)); \
  m.impl(#NAME ".out", TORCH_FN(NAME##Out));
#define OCL_REGISTER_BINARY(NAME, OV, FN_NAME, INPLACE_NAME, OUT_NAME) \
  m.impl(FN_NAME, TORCH_FN(NAME##OV##Fn));                             \
  m.impl(INPLACE_NAME, TORCH_FN(NAME##OV##Inplace));                   \
  m.impl(OUT_NAME, TORCH_FN(NAME##OV##Out));

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", TORCH_FN(addFn));
  m.impl("add_.Tensor", TORCH_FN(addInplace));
  m.impl("add.out", TORCH_FN(addOut));
  m.impl("sub.Tensor", TORCH_FN(subFn));
  m.impl("sub_.Tensor", TORCH_FN(subInplace));
  m.impl("sub.out", TORCH_FN(subOut));
  OCL_REGISTER_BINARY(mul, Tensor, "mul.Tensor", "mul_.Tensor", "mul.out")
  OCL_REGISTER_BINARY(div, Tensor, "div.Tensor", "div_.Tensor", "div.out")
  OCL_REGISTER_BINARY(atan2, , "atan2", "atan2_", "atan2.out")
  m.impl("maximum", TORCH_FN(maximumFn));
  m.impl("maximum.out", TORCH_FN(maximumOut));
  m.impl("minimum", TORCH_FN(minimumFn));
  m.impl("minimum.out", TORCH_FN(minimumOut));
#define OCL_REGISTER_COMPARISON(NAME)                                                       \
  OCL_REGISTER_BINARY(NAME, Tensor, #NAME ".Tensor", #NAME "_.Tensor", #NAME ".Tensor_out") \
  OCL_REGISTER_BINARY(NAME, Scalar, #NAME ".Scalar", #NAME "_.Scalar", #NAME ".Scalar_out")
  OCL_REGISTER_COMPARISON(eq)
  OCL_REGISTER_COMPARISON(ne)
  OCL_REGISTER_COMPARISON(lt)
  OCL_REGISTER_COMPARISON(le)
  OCL_REGISTER_COMPARISON(gt)
  OCL_REGISTER_COMPARISON(ge)
  m.impl("clamp_min", TORCH_FN(clampMinFn));
  m.impl("clamp_min_", TORCH_FN(clampMinInplace));
  m.impl("clamp_min.out", TORCH_FN(clampMinOut));
  m.impl("clamp_max", TORCH_FN(clampMaxFn));
  m.impl("clamp_max_", TORCH_FN(clampMaxInplace));
  m.impl("clamp_max.out", TORCH_FN(clampMaxOut));
  m.impl("clamp", TORCH_FN(clampFn));
  m.impl("clamp_", TORCH_FN(clampInplace));
  m.impl("clamp.out", TORCH_FN(clampOut));
  m.impl("abs.out", TORCH_FN(absOut));
  m.impl("complex.out", TORCH_FN(complexOut));
  m.impl("polar.out", TORCH_FN(polarOut));
  m.impl("conj_physical.out", TORCH_FN(conjPhysicalOut));
  m.impl("conj_physical_", TORCH_FN(conjPhysicalInplace));
  m.impl("where.self", TORCH_FN(whereFn));
  m.impl("where.self_out", TORCH_FN(whereOut));
  m.impl("relu", TORCH_FN(reluFn));
  m.impl("relu_", TORCH_FN(reluInplace));
  m.impl("threshold_backward", TORCH_FN(thresholdBackwardFn));
  m.impl("threshold_backward.grad_input", TORCH_FN(thresholdBackwardOut));
  OCL_REGISTER_UNARY(exp)
  OCL_REGISTER_UNARY(exp2)
  OCL_REGISTER_UNARY(expm1)
  OCL_REGISTER_UNARY(log)
  OCL_REGISTER_UNARY(log2)
  OCL_REGISTER_UNARY(log10)
  OCL_REGISTER_UNARY(log1p)
  OCL_REGISTER_UNARY(sqrt)
  OCL_REGISTER_UNARY(rsqrt)
  OCL_REGISTER_UNARY(sin)
  OCL_REGISTER_UNARY(cos)
  OCL_REGISTER_UNARY(tan)
  OCL_REGISTER_UNARY(asin)
  OCL_REGISTER_UNARY(acos)
  OCL_REGISTER_UNARY(atan)
  OCL_REGISTER_UNARY(sinh)
  OCL_REGISTER_UNARY(cosh)
  OCL_REGISTER_UNARY(tanh)
  OCL_REGISTER_UNARY(erf)
  OCL_REGISTER_UNARY(erfc)
  OCL_REGISTER_UNARY(sigmoid)
  OCL_REGISTER_UNARY(reciprocal)
  OCL_REGISTER_UNARY(neg)
  OCL_REGISTER_UNARY(ceil)
  OCL_REGISTER_UNARY(floor)
  OCL_REGISTER_UNARY(trunc)
  OCL_REGISTER_UNARY(sign)
  OCL_REGISTER_UNARY(silu)
  m.impl("gelu", TORCH_FN(geluFn));
  m.impl("gelu_", TORCH_FN(geluInplace));
  m.impl("gelu.out", TORCH_FN(geluOut));
  m.impl("gelu_backward", TORCH_FN(geluBackwardFn));
  m.impl("gelu_backward.grad_input", TORCH_FN(geluBackwardOut));
  m.impl("silu_backward", TORCH_FN(siluBackwardFn));
  m.impl("silu_backward.grad_input", TORCH_FN(siluBackwardOut));
  m.impl("leaky_relu", TORCH_FN(leakyReluFn));
  m.impl("leaky_relu_", TORCH_FN(leakyReluInplace));
  m.impl("leaky_relu.out", TORCH_FN(leakyReluOut));
  m.impl("leaky_relu_backward", TORCH_FN(leakyReluBackwardFn));
  m.impl("leaky_relu_backward.grad_input", TORCH_FN(leakyReluBackwardOut));
  m.impl("pow.Tensor_Scalar", TORCH_FN(powScalarFn));
  m.impl("pow_.Scalar", TORCH_FN(powScalarInplace));
  m.impl("pow.Tensor_Scalar_out", TORCH_FN(powScalarOut));
  m.impl("pow.Tensor_Tensor", TORCH_FN(powTensorFn));
  m.impl("pow_.Tensor", TORCH_FN(powTensorInplace));
  m.impl("pow.Tensor_Tensor_out", TORCH_FN(powTensorOut));
  m.impl("pow.Scalar", TORCH_FN(powScalarBaseFn));
  m.impl("pow.Scalar_out", TORCH_FN(powScalarBaseOut));
}

}  // namespace torch_ocl::aten
