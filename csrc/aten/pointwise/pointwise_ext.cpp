// The rest of the pointwise family: division with rounding, remainder, rounding, inverse
// trigonometric and special functions, activations and their gradients, logical and bitwise ops,
// clamp with tensor bounds, lerp, addcmul/addcdiv, float classification and two-operand math.
// Structured ops run PyTorch's meta functions (pointwise_run.h); the few CPU-only ops without one
// build their TensorIterator the way CPU PyTorch does. Semantics follow ATen's CPU kernels
// (aten/src/ATen/native/cpu/*Kernel.cpp), including NaN and signed-zero handling.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/acosh_meta.h>
#include <ATen/ops/addcdiv_meta.h>
#include <ATen/ops/addcmul_meta.h>
#include <ATen/ops/asinh_meta.h>
#include <ATen/ops/atanh_meta.h>
#include <ATen/ops/bitwise_and_meta.h>
#include <ATen/ops/bitwise_left_shift_meta.h>
#include <ATen/ops/bitwise_not_meta.h>
#include <ATen/ops/bitwise_or_meta.h>
#include <ATen/ops/bitwise_right_shift_meta.h>
#include <ATen/ops/bitwise_xor_meta.h>
#include <ATen/ops/clamp_max_meta.h>
#include <ATen/ops/clamp_meta.h>
#include <ATen/ops/clamp_min_meta.h>
#include <ATen/ops/copysign_meta.h>
#include <ATen/ops/digamma_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/elu_backward_meta.h>
#include <ATen/ops/elu_meta.h>
#include <ATen/ops/erfinv_meta.h>
#include <ATen/ops/fmax_meta.h>
#include <ATen/ops/fmin_meta.h>
#include <ATen/ops/fmod_meta.h>
#include <ATen/ops/frac_meta.h>
#include <ATen/ops/gcd_meta.h>
#include <ATen/ops/hardsigmoid_backward_meta.h>
#include <ATen/ops/hardsigmoid_meta.h>
#include <ATen/ops/heaviside_meta.h>
#include <ATen/ops/hypot_meta.h>
#include <ATen/ops/isneginf_meta.h>
#include <ATen/ops/isposinf_meta.h>
#include <ATen/ops/lcm_meta.h>
#include <ATen/ops/lerp_meta.h>
#include <ATen/ops/lgamma_meta.h>
#include <ATen/ops/logaddexp2_meta.h>
#include <ATen/ops/logaddexp_meta.h>
#include <ATen/ops/logit_backward_meta.h>
#include <ATen/ops/mish_meta.h>
#include <ATen/ops/remainder_meta.h>
#include <ATen/ops/round_meta.h>
#include <ATen/ops/sigmoid_backward_meta.h>
#include <ATen/ops/signbit_meta.h>
#include <ATen/ops/softplus_backward_meta.h>
#include <ATen/ops/softplus_meta.h>
#include <ATen/ops/tanh_backward_meta.h>
#include <ATen/ops/threshold_meta.h>
#include <ATen/ops/xlogy_meta.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/pointwise_run.h"

#include <cmath>
#include <limits>

namespace torch_ocl::aten {
namespace {

using codegen::Domain;
using codegen::PointwiseOp;

// ---- integer division by zero ------------------------------------------------------------------
// CPU PyTorch raises "ZeroDivisionError" for integer division, remainder and fmod by zero. The
// kernels below also guard the division (a trap would kill the process on CPU OpenCL devices), so
// this check is what makes the error match; it costs a comparison and a small copy, only for
// integral dtypes.
void checkNoIntegerZero(const at::TensorIteratorBase& iter, int input) {
  const int i = iter.noutputs() + input;
  const c10::ScalarType compute = computeDtype(iter);
  if (!c10::isIntegralType(compute, /*includeBool=*/false)) return;
  const at::TensorBase& t = iter.tensor_base(i);
  if (t.numel() == 0) return;
  const at::Tensor divisor(t);
  const bool any_zero = divisor.device().is_cpu()
                            ? divisor.eq(0).any().item<bool>()
                            : at::eq(divisor, 0).to(at::kCPU).any().item<bool>();
  TORCH_CHECK(!any_zero, "ZeroDivisionError");
}

// ---- expressions -------------------------------------------------------------------------------

// Floor division of floating values, as c10::div_floor_floating (Python's // semantics).
const char* kFloorDivFloat = R"CLC(
inline T ocl_div_floor(T a, T b) {
  if (b == (T)0) return a / b;
  const T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != (T)0 && (b < (T)0) != (mod < (T)0)) div -= (T)1;
  if (div == (T)0) return copysign((T)0, a / b);
  T fl = floor(div);
  if (div - fl > (T)0.5) fl += (T)1;
  return fl;
}
inline T ocl_rem(T a, T b) {
  T mod = fmod(a, b);
  if (mod != (T)0 && (b < (T)0) != (mod < (T)0)) mod += b;
  return mod;
}
)CLC";

// Integer forms never divide by zero or overflow MIN / -1 (both trap on CPU devices); the host
// raises ZeroDivisionError before launching, as CPU PyTorch does.
const char* kDivInt = R"CLC(
#define OCL_SIGNED ((T)-1 < (T)0)
inline T ocl_div_trunc(T a, T b) {
  if (b == (T)0) return (T)0;
  if (OCL_SIGNED && b == (T)-1) return (T)(-a);
  return (T)(a / b);
}
inline T ocl_div_floor(T a, T b) {
  if (b == (T)0) return (T)0;
  if (OCL_SIGNED && b == (T)-1) return (T)(-a);
  if (OCL_SIGNED && ((a < (T)0) != (b < (T)0))) {
    const T q = (T)(a / b), r = (T)(a % b);
    return r != (T)0 ? (T)(q - 1) : q;
  }
  return (T)(a / b);
}
inline T ocl_fmod(T a, T b) {
  if (b == (T)0 || (OCL_SIGNED && b == (T)-1)) return (T)0;
  return (T)(a % b);
}
inline T ocl_rem(T a, T b) {
  T r = ocl_fmod(a, b);
  if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r = (T)(r + b);
  return r;
}
)CLC";

const PointwiseOp kDivTrunc{"div_trunc",
                            "trunc(ocl_round_out(a / b))",
                            "ocl_div_trunc(a, b)",
                            Domain::kNumeric,
                            false,
                            nullptr,
                            kDivInt};
const PointwiseOp kDivFloor{"div_floor",
                            "ocl_div_floor(a, b)",
                            "ocl_div_floor(a, b)",
                            Domain::kNumeric,
                            false,
                            kFloorDivFloat,
                            kDivInt};
const PointwiseOp kRemainder{"remainder", "ocl_rem(a, b)", "ocl_rem(a, b)", Domain::kNumeric,
                             false,       kFloorDivFloat,  kDivInt};
const PointwiseOp kFmod{"fmod", "fmod(a, b)", "ocl_fmod(a, b)", Domain::kNumeric,
                        false,  nullptr,      kDivInt};

// erfinv: rational approximation refined by two Newton steps (c10's calc_erfinv).
const char* kErfinv = R"CLC(
inline T ocl_erfinv(T y) {
  const T y_abs = fabs(y);
  if (y_abs > (T)1) return (T)NAN;
  if (y_abs == (T)1) return copysign((T)INFINITY, y);
  T x;
  if (y_abs <= (T)0.7) {
    const T z = y * y;
    const T num = ((((T)-0.140543331 * z + (T)0.914624893) * z + (T)-1.645349621) * z +
                   (T)0.886226899);
    const T dem = (((((T)0.012229801 * z + (T)-0.329097515) * z + (T)1.442710462) * z +
                    (T)-2.118377725) * z + (T)1);
    x = y * num / dem;
  } else {
    const T z = sqrt(-log(((T)1 - y_abs) / (T)2));
    const T num = (((T)1.641345311 * z + (T)3.429567803) * z + (T)-1.624906493) * z +
                  (T)-1.970840454;
    const T dem = ((T)1.637067800 * z + (T)3.543889200) * z + (T)1;
    x = copysign(num, y) / dem;
  }
  const T k = (T)1.1283791670955126;  // 2 / sqrt(pi)
  x = x - (erf(x) - y) / (k * exp(-x * x));
  x = x - (erf(x) - y) / (k * exp(-x * x));
  return x;
}
)CLC";

// digamma: reflection for negative arguments, recurrence up to 10, asymptotic series (c10's
// calc_digamma, without its recursion).
const char* kDigamma = R"CLC(
inline T ocl_digamma(T x) {
  if (x == (T)0) return copysign((T)INFINITY, -x);
  T result = (T)0;
  if (x < (T)0) {
    if (x == trunc(x)) return (T)NAN;
    const T r = x - trunc(x);
    result = -(T)M_PI / tan((T)M_PI * r);
    x = (T)1 - x;
  }
  while (x < (T)10) {
    result -= (T)1 / x;
    x += (T)1;
  }
  if (x == (T)10) return result + (T)2.25175258906672110764;
  T y = (T)0;
  if (x < (T)1.0e17) {
    const T z = (T)1 / (x * x);
    T p = (T)8.33333333333333333333E-2;
    p = p * z + (T)-2.10927960927960927961E-2;
    p = p * z + (T)7.57575757575757575758E-3;
    p = p * z + (T)-4.16666666666666666667E-3;
    p = p * z + (T)3.96825396825396825397E-3;
    p = p * z + (T)-8.33333333333333333333E-3;
    p = p * z + (T)8.33333333333333333333E-2;
    y = z * p;
  }
  return result + log(x) - ((T)0.5 / x) - y;
}
)CLC";

// log(1 + exp(x)) for softplus and mish, as the CPU kernels compute it.
#define OCL_SOFTPLUS(X) "log1p(exp(" X "))"

// sgn of real numbers is sign; of complex ones z / |z|. The last field of an op is its complex
// form (kernels/complex.cl), where it has one.
const PointwiseOp kSgn{"sgn",
                       "(T)((a > (T)0) - (a < (T)0))",
                       "(T)((a > (T)0) - (a < (T)0))",
                       Domain::kAll,
                       false,
                       nullptr,
                       nullptr,
                       "ocl_csgn(a)"};
const PointwiseOp kFrac{"frac", "a - trunc(a)", nullptr, Domain::kFloating};
// Bool is rejected by CPU PyTorch (the fallback gives its error).
const PointwiseOp kRound{"round", "rint(a)", "a", Domain::kNumeric};
// round(decimals): s0 = 10^|decimals|; the negative form divides first, as CPU does.
const PointwiseOp kRoundDecimals{"round_decimals", "rint(a * s0) / s0", nullptr, Domain::kFloating};
const PointwiseOp kRoundDecimalsNeg{"round_decimals_neg", "rint(a / s0) * s0", nullptr,
                                    Domain::kFloating};
const PointwiseOp kAsinh{"asinh", "asinh(a)", nullptr, Domain::kFloating,
                         false,   nullptr,    nullptr, "ocl_casinh(a)"};
const PointwiseOp kAcosh{"acosh", "acosh(a)", nullptr, Domain::kFloating,
                         false,   nullptr,    nullptr, "ocl_cacosh(a)"};
const PointwiseOp kAtanh{"atanh", "atanh(a)", nullptr, Domain::kFloating,
                         false,   nullptr,    nullptr, "ocl_catanh(a)"};
const PointwiseOp kErfinvOp{"erfinv", "ocl_erfinv(a)", nullptr, Domain::kFloating, false, kErfinv};
const PointwiseOp kLgamma{"lgamma", "lgamma(a)", nullptr, Domain::kFloating};
const PointwiseOp kDigammaOp{"digamma", "ocl_digamma(a)", nullptr, Domain::kFloating,
                             false,     kDigamma};

// Gradients: (grad, forward value) are the inputs (a, b).
// Complex gradients are conjugated, as on CPU.
const PointwiseOp kSigmoidBackward{"sigmoid_backward",
                                   "a * ((T)1 - b) * b",
                                   nullptr,
                                   Domain::kFloating,
                                   false,
                                   nullptr,
                                   nullptr,
                                   "ocl_cmul(a, ocl_cconj(ocl_cmul((T)(1, 0) - b, b)))"};
const PointwiseOp kTanhBackward{
    "tanh_backward", "a * ((T)1 - b * b)",
    nullptr,         Domain::kFloating,
    false,           nullptr,
    nullptr,         "ocl_cmul(a, ocl_cconj((T)(1, 0) - ocl_cmul(b, b)))"};
// logit: s0 = eps, negative when no eps was given.
const PointwiseOp kLogit{"logit", "log(a / ((T)1 - a))", nullptr, Domain::kFloating};
const PointwiseOp kLogitEps{"logit_eps",
                            "log((a < s0 ? s0 : (a > (T)1 - s0 ? (T)1 - s0 : a)) / "
                            "((T)1 - (a < s0 ? s0 : (a > (T)1 - s0 ? (T)1 - s0 : a))))",
                            nullptr, Domain::kFloating};
const PointwiseOp kLogitBackward{
    "logit_backward",
    "(b < (T)0 || b > (T)1) ? (T)NAN : ((b == (T)0 || b == (T)1) ? a * (T)INFINITY : "
    "a / (b * ((T)1 - b)))",
    nullptr, Domain::kFloating};
const PointwiseOp kLogitBackwardEps{"logit_backward_eps",
                                    "(b < s0 || b > (T)1 - s0) ? (T)0 : a / (b * ((T)1 - b))",
                                    nullptr, Domain::kFloating};
// elu: s0 = alpha * scale (negcoef), s1 = scale (poscoef), s2 = input_scale (negiptcoef).
const PointwiseOp kElu{"elu", "a <= (T)0 ? (exp(a * s2) - (T)1) * s0 : a * s1", nullptr,
                       Domain::kFloating};
const PointwiseOp kEluBackward{"elu_backward", "b <= (T)0 ? a * s2 * s0 * exp(b * s2) : a * s1",
                               nullptr, Domain::kFloating};
const PointwiseOp kEluBackwardResult{
    "elu_backward_result", "b <= (T)0 ? a * s2 * (b + s0) : a * s1", nullptr, Domain::kFloating};
const PointwiseOp kMish{"mish", "a * tanh(" OCL_SOFTPLUS("a") ")", nullptr, Domain::kFloating};
const PointwiseOp kMishBackward{
    "mish_backward",
    "a * (tanh(" OCL_SOFTPLUS("b") ") + b * ((T)1 / ((T)1 + exp(-b))) * ((T)1 - tanh(" OCL_SOFTPLUS(
        "b") ") * tanh(" OCL_SOFTPLUS("b") ")))",
    nullptr, Domain::kFloating};
// softplus: s0 = beta, s1 = threshold.
const PointwiseOp kSoftplus{"softplus", "(a * s0) > s1 ? a : log1p(exp(a * s0)) / s0", nullptr,
                            Domain::kFloating};
const PointwiseOp kSoftplusBackward{"softplus_backward",
                                    "(b * s0) > s1 ? a : a * exp(b * s0) / (exp(b * s0) + (T)1)",
                                    nullptr, Domain::kFloating};
// hardtanh_backward: s0 = min_val, s1 = max_val.
const PointwiseOp kHardtanhBackward{"hardtanh_backward", "(b <= s0 || b >= s1) ? (T)0 : a",
                                    "(b <= s0 || b >= s1) ? (T)0 : a", Domain::kNumeric};
// NaN propagates through the min/max of the CPU kernels (std::min/std::max keep their first
// argument when a comparison is false), so these are written with comparisons, not fmin/fmax.
#define OCL_RELU6(X) \
  "((" X " + (T)3) < (T)0 ? (T)0 : ((" X " + (T)3) > (T)6 ? (T)6 : (" X " + (T)3)))"
const PointwiseOp kHardsigmoid{"hardsigmoid", OCL_RELU6("a") " / (T)6", nullptr, Domain::kFloating};
const PointwiseOp kHardsigmoidBackward{"hardsigmoid_backward",
                                       "(b > (T)-3 && b < (T)3) ? a / (T)6 : (T)0", nullptr,
                                       Domain::kFloating};
const PointwiseOp kHardswish{"hardswish", "a * " OCL_RELU6("a") " / (T)6", nullptr,
                             Domain::kFloating};
const PointwiseOp kHardswishBackward{
    "hardswish_backward", "b < (T)-3 ? (T)0 : (b <= (T)3 ? a * ((b / (T)3) + (T)0.5) : a)", nullptr,
    Domain::kFloating};
// threshold: both inputs are self (the meta adds it twice); s0 = threshold, s1 = value.
const PointwiseOp kThreshold{"threshold", "a <= s0 ? s1 : b", "a <= s0 ? s1 : b", Domain::kNumeric};
// log_sigmoid: min(x, 0) - log1p(exp(-|x|)); the gradient from x alone (no buffer needed).
const PointwiseOp kLogSigmoid{"log_sigmoid", "fmin(a, (T)0) - log1p(exp(-fabs(a)))", nullptr,
                              Domain::kFloating};
const PointwiseOp kLogSigmoidBackward{
    "log_sigmoid_backward",
    "a * ((b < (T)0 ? (T)1 : (T)0) - (b < (T)0 ? (T)1 : (T)-1) * (exp(-fabs(b)) / ((T)1 + "
    "exp(-fabs(b)))))",
    nullptr, Domain::kFloating};

// Logical and bitwise ops.
#define OCL_CNZ(X) "(" X ".x != (R)0 || " X ".y != (R)0)"
const PointwiseOp kLogicalAnd{
    "logical_and", "(a != (T)0) && (b != (T)0)",    nullptr, Domain::kAll, true, nullptr,
    nullptr,       OCL_CNZ("a") " && " OCL_CNZ("b")};
const PointwiseOp kLogicalOr{
    "logical_or", "(a != (T)0) || (b != (T)0)",    nullptr, Domain::kAll, true, nullptr,
    nullptr,      OCL_CNZ("a") " || " OCL_CNZ("b")};
const PointwiseOp kLogicalXor{
    "logical_xor", "(a != (T)0) != (b != (T)0)",    nullptr, Domain::kAll, true, nullptr,
    nullptr,       OCL_CNZ("a") " != " OCL_CNZ("b")};
const PointwiseOp kLogicalNot{"logical_not", "a == (T)0", nullptr, Domain::kAll,
                              true,          nullptr,     nullptr, "!" OCL_CNZ("a")};
const PointwiseOp kBitwiseAnd{"bitwise_and", "a & b", nullptr, Domain::kIntegral};
const PointwiseOp kBitwiseOr{"bitwise_or", "a | b", nullptr, Domain::kIntegral};
const PointwiseOp kBitwiseXor{"bitwise_xor", "a ^ b", nullptr, Domain::kIntegral};
const PointwiseOp kBitwiseNot{"bitwise_not", "~a", nullptr, Domain::kInteger};
const PointwiseOp kBitwiseNotBool{"bitwise_not_bool", "!a", nullptr, Domain::kIntegral};
// Shifts out of range give 0 (left) or the sign fill (right), as on CPU; OpenCL would mask them.
const char* kShifts = R"CLC(
#define OCL_BITS ((long)sizeof(T) * 8)
#define OCL_SIGNED ((T)-1 < (T)0)
inline T ocl_shl(T a, T b) {
  if ((OCL_SIGNED && b < (T)0) || (long)b >= OCL_BITS) return (T)0;
  return (T)(a << b);
}
inline T ocl_shr(T a, T b) {
  const long max_shift = OCL_BITS - (OCL_SIGNED ? 1 : 0);
  if ((OCL_SIGNED && b < (T)0) || (long)b >= max_shift) return (T)(a >> max_shift);
  return (T)(a >> b);
}
)CLC";
const PointwiseOp kShl{"bitwise_left_shift", "ocl_shl(a, b)", nullptr,
                       Domain::kInteger,     false,           kShifts};
const PointwiseOp kShr{"bitwise_right_shift", "ocl_shr(a, b)", nullptr,
                       Domain::kInteger,      false,           kShifts};

// clamp with tensor bounds: NaN in the value or a bound propagates, as on CPU.
const PointwiseOp kClampTT{"clamp_tt",
                           "(isnan(a) || isnan(b) || isnan(c)) ? a + b + c : fmin(fmax(a, b), c)",
                           "min(max(a, b), c)"};
const PointwiseOp kClampT{"clamp_t_min", "(isnan(a) || isnan(b)) ? a + b : fmax(a, b)",
                          "max(a, b)"};
const PointwiseOp kClampTMax{"clamp_t_max", "(isnan(a) || isnan(b)) ? a + b : fmin(a, b)",
                             "min(a, b)"};

// lerp: the two-sided formula of the CPU kernel (exact at both ends).
#define OCL_LERP(W) "(fabs(" W ") < (T)0.5 ? a + " W " * (b - a) : b - (b - a) * ((T)1 - " W "))"
#define OCL_CLERP(W)                            \
  "(ocl_cabs(" W ") < (R)0.5 ? a + ocl_cmul(" W \
  ", b - a) : b - ocl_cmul(b - a, "             \
  "(T)(1, 0) - " W "))"
const PointwiseOp kLerpScalar{"lerp_scalar", OCL_LERP("s0"), nullptr, Domain::kFloating,
                              false,         nullptr,        nullptr, OCL_CLERP("s0")};
const PointwiseOp kLerpTensor{"lerp_tensor", OCL_LERP("c"), nullptr, Domain::kFloating,
                              false,         nullptr,       nullptr, OCL_CLERP("c")};
const PointwiseOp kAddcmul{
    "addcmul", "a + s0 * b * c", "a + s0 * b * c", Domain::kNumeric,
    false,     nullptr,          nullptr,          "a + ocl_cmul(ocl_cmul(s0, b), c)"};
const PointwiseOp kAddcdiv{"addcdiv", "a + s0 * (b / c)",
                           nullptr,   Domain::kFloating,
                           false,     nullptr,
                           nullptr,   "a + ocl_cmul(s0, ocl_cdiv(b, c))"};

// Classification.
const PointwiseOp kIsnan{"isnan", "isnan(a)", "0",     Domain::kAll,
                         true,    nullptr,    nullptr, "ocl_cisnan(a)"};
const PointwiseOp kIsposinf{"isposinf", "a == (T)INFINITY", "0", Domain::kAll, true};
const PointwiseOp kIsneginf{"isneginf", "a == -(T)INFINITY", "0", Domain::kAll, true};
const PointwiseOp kSignbit{"signbit", "signbit(a)", "a < (T)0", Domain::kAll, true};
// nan_to_num: s0 = nan, s1 = posinf, s2 = neginf replacements (already defaulted on the host).
const PointwiseOp kNanToNum{
    "nan_to_num", "isnan(a) ? s0 : (a == (T)INFINITY ? s1 : (a == -(T)INFINITY ? s2 : a))", "a"};

// gcd and lcm as CPU's calc_gcd and lcm kernel (C's integer promotions included: int8, int16 and
// uint8 take |x| and lcm's product in int, so |-128| wraps back to -128 as it does there).
const char* kGcdLcm = R"CLC(
inline T ocl_gcd(T a, T b) {
  a = (T)(a < (T)0 ? -a : a);
  b = (T)(b < (T)0 ? -b : b);
  while (a != (T)0) {
    const T c = a;
    a = (T)(b % a);
    b = c;
  }
  return b;
}
inline T ocl_lcm(T a, T b) {
  const T g = ocl_gcd(a, b);
  if (g == (T)0) return (T)0;
  // MIN / -1 would trap (CPU faults there); -a is what it wraps to.
  const T q = ((T)-1 < (T)0 && g == (T)-1) ? (T)(-a) : (T)(a / g);
  if (sizeof(T) < sizeof(int)) {
    const int p = (int)q * (int)b;
    return (T)(p < 0 ? -p : p);
  }
  const T p = (T)(q * b);
  return (T)(p < (T)0 ? -p : p);
}
)CLC";
const PointwiseOp kGcd{"gcd", "ocl_gcd(a, b)", nullptr, Domain::kInteger, false, kGcdLcm};
const PointwiseOp kLcm{"lcm", "ocl_lcm(a, b)", nullptr, Domain::kInteger, false, kGcdLcm};

// Two-operand math.
const PointwiseOp kHypot{"hypot", "hypot(a, b)", nullptr, Domain::kFloating};
const PointwiseOp kCopysign{"copysign", "copysign(a, b)", nullptr, Domain::kFloating};
// Complex: CPU's _log_add_exp_helper (the operands ordered by real part as its
// _logcumsumexp_minmax orders them, b first on a tie; NaN infectious; equal infinite real parts
// apart).
#define OCL_LAE_LO "((a.x < b.x) ? a : b)"
#define OCL_LAE_HI "((a.x < b.x) ? b : a)"
const PointwiseOp kLogaddexp{"logaddexp",
                             "(isinf(a) && a == b) ? a : fmax(a, b) + log1p(exp(-fabs(a - b)))",
                             nullptr,
                             Domain::kFloating,
                             false,
                             nullptr,
                             nullptr,
                             "(isnan(" OCL_LAE_LO ".x) || isnan(" OCL_LAE_LO
                             ".y)) ? (T)(NAN, NAN) : "
                             "((!isfinite(" OCL_LAE_LO ".x) && " OCL_LAE_LO ".x == " OCL_LAE_HI
                             ".x) ? "
                             "(" OCL_LAE_LO ".x < 0 ? " OCL_LAE_LO
                             " : ocl_clog(ocl_cexp(" OCL_LAE_LO ") + ocl_cexp(" OCL_LAE_HI
                             "))) : ocl_clog1p(ocl_cexp(" OCL_LAE_LO " - " OCL_LAE_HI
                             ")) + " OCL_LAE_HI ")"};
#undef OCL_LAE_LO
#undef OCL_LAE_HI
const PointwiseOp kLogaddexp2{
    "logaddexp2",
    "(isinf(a) && a == b) ? a : fmax(a, b) + log1p(exp2(-fabs(a - b))) * (T)1.4426950408889634",
    nullptr, Domain::kFloating};
const PointwiseOp kXlogy{"xlogy", "isnan(b) ? (T)NAN : (a == (T)0 ? (T)0 : a * log(b))", nullptr,
                         Domain::kFloating};
const PointwiseOp kFmax{"fmax", "fmax(a, b)", "max(a, b)"};
const PointwiseOp kFmin{"fmin", "fmin(a, b)", "min(a, b)"};
const PointwiseOp kHeaviside{"heaviside", "a == (T)0 ? b : (T)(a > (T)0)",
                             "a == (T)0 ? b : (T)(a > (T)0)"};

// ---- structured ops ----------------------------------------------------------------------------

OCL_UNARY_S(frac, kFrac)
OCL_UNARY_S(sgn, kSgn)
OCL_UNARY_S(round, kRound)
OCL_UNARY_S(asinh, kAsinh)
OCL_UNARY_S(acosh, kAcosh)
OCL_UNARY_S(atanh, kAtanh)
OCL_UNARY_S(erfinv, kErfinvOp)
OCL_UNARY_S(lgamma, kLgamma)
OCL_UNARY_S(digamma, kDigammaOp)
OCL_UNARY_S(mish, kMish)
OCL_UNARY_S(hardsigmoid, kHardsigmoid)
OCL_UNARY_S(isposinf, kIsposinf)
OCL_UNARY_S(isneginf, kIsneginf)
OCL_UNARY_S(signbit, kSignbit)

c10::Scalar tenPow(int64_t decimals) {
  return c10::Scalar(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)));
}
OCL_STRUCTURED(roundDecimals, at::meta::structured_round_decimals,
               (decimals < 0 ? kRoundDecimalsNeg : kRoundDecimals), "round", "decimals",
               "decimals_out", (tenPow(decimals)), (, int64_t decimals), (, decimals))

OCL_BINARY_S(bitwiseAnd, at::meta::structured_bitwise_and_Tensor, kBitwiseAnd, "bitwise_and",
             "Tensor", "Tensor_out")
OCL_BINARY_S(bitwiseOr, at::meta::structured_bitwise_or_Tensor, kBitwiseOr, "bitwise_or", "Tensor",
             "Tensor_out")
OCL_BINARY_S(bitwiseXor, at::meta::structured_bitwise_xor_Tensor, kBitwiseXor, "bitwise_xor",
             "Tensor", "Tensor_out")
OCL_BINARY_S(shl, at::meta::structured_bitwise_left_shift_Tensor, kShl, "bitwise_left_shift",
             "Tensor", "Tensor_out")
OCL_BINARY_S(shr, at::meta::structured_bitwise_right_shift_Tensor, kShr, "bitwise_right_shift",
             "Tensor", "Tensor_out")
OCL_BINARY_S(gcd, at::meta::structured_gcd, kGcd, "gcd", "", "out")
OCL_BINARY_S(lcm, at::meta::structured_lcm, kLcm, "lcm", "", "out")
OCL_BINARY_S(hypot, at::meta::structured_hypot, kHypot, "hypot", "", "out")
OCL_BINARY_S(copysign, at::meta::structured_copysign_Tensor, kCopysign, "copysign", "Tensor", "out")
OCL_BINARY_S(logaddexp, at::meta::structured_logaddexp, kLogaddexp, "logaddexp", "", "out")
OCL_BINARY_S(logaddexp2, at::meta::structured_logaddexp2, kLogaddexp2, "logaddexp2", "", "out")
OCL_BINARY_S(xlogy, at::meta::structured_xlogy_Tensor, kXlogy, "xlogy", "Tensor", "OutTensor")
OCL_BINARY_S(fmax, at::meta::structured_fmax, kFmax, "fmax", "", "out")
OCL_BINARY_S(fmin, at::meta::structured_fmin, kFmin, "fmin", "", "out")
OCL_BINARY_S(heaviside, at::meta::structured_heaviside, kHeaviside, "heaviside", "", "out")
OCL_BINARY_S(sigmoidBackward, at::meta::structured_sigmoid_backward, kSigmoidBackward,
             "sigmoid_backward", "", "grad_input")
OCL_BINARY_S(tanhBackward, at::meta::structured_tanh_backward, kTanhBackward, "tanh_backward", "",
             "grad_input")
OCL_BINARY_S(hardsigmoidBackward, at::meta::structured_hardsigmoid_backward, kHardsigmoidBackward,
             "hardsigmoid_backward", "", "grad_input")
OCL_STRUCTURED(lerpScalar, at::meta::structured_lerp_Scalar, kLerpScalar, "lerp", "Scalar",
               "Scalar_out", (weight), (, const at::Tensor& end, const c10::Scalar& weight),
               (, end, weight))
OCL_STRUCTURED(lerpTensor, at::meta::structured_lerp_Tensor, kLerpTensor, "lerp", "Tensor",
               "Tensor_out", (), (, const at::Tensor& end, const at::Tensor& weight),
               (, end, weight))
OCL_STRUCTURED(addcmul, at::meta::structured_addcmul, kAddcmul, "addcmul", "", "out", (value),
               (, const at::Tensor& t1, const at::Tensor& t2, const c10::Scalar& value),
               (, t1, t2, value))
OCL_STRUCTURED(addcdiv, at::meta::structured_addcdiv, kAddcdiv, "addcdiv", "", "out", (value),
               (, const at::Tensor& t1, const at::Tensor& t2, const c10::Scalar& value),
               (, t1, t2, value))
OCL_STRUCTURED(logitBackward, at::meta::structured_logit_backward,
               (eps && *eps >= 0 ? kLogitBackwardEps : kLogitBackward), "logit_backward", "",
               "grad_input", (eps ? *eps : -1.0),
               (, const at::Tensor& input, std::optional<double> eps), (, input, eps))
OCL_STRUCTURED(elu, at::meta::structured_elu, kElu, "elu", "", "out",
               (alpha.toDouble() * scale.toDouble(), scale, input_scale),
               (, const c10::Scalar& alpha, const c10::Scalar& scale,
                const c10::Scalar& input_scale),
               (, alpha, scale, input_scale))
OCL_STRUCTURED(eluBackward, at::meta::structured_elu_backward,
               (is_result ? kEluBackwardResult : kEluBackward), "elu_backward", "", "grad_input",
               (alpha.toDouble() * scale.toDouble(), scale, input_scale),
               (, const c10::Scalar& alpha, const c10::Scalar& scale,
                const c10::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result),
               (, alpha, scale, input_scale, is_result, self_or_result))
OCL_STRUCTURED(softplus, at::meta::structured_softplus, kSoftplus, "softplus", "", "out",
               (beta, threshold), (, const c10::Scalar& beta, const c10::Scalar& threshold),
               (, beta, threshold))
OCL_STRUCTURED(softplusBackward, at::meta::structured_softplus_backward, kSoftplusBackward,
               "softplus_backward", "", "grad_input", (beta, threshold),
               (, const at::Tensor& input, const c10::Scalar& beta, const c10::Scalar& threshold),
               (, input, beta, threshold))
OCL_STRUCTURED(threshold, at::meta::structured_threshold, kThreshold, "threshold", "", "out",
               (threshold, value), (, const c10::Scalar& threshold, const c10::Scalar& value),
               (, threshold, value))

// bitwise_not of bool is logical not (~true would be 254 in a uchar).
at::Tensor bitwiseNotImpl(Mode mode, at::Tensor* out, const at::Tensor& self) {
  const PointwiseOp& op = self.scalar_type() == at::kBool ? kBitwiseNotBool : kBitwiseNot;
  const char* name = mode == Mode::kInplace ? "aten::bitwise_not_" : "aten::bitwise_not";
  return run<at::meta::structured_bitwise_not>(op, name, mode == Mode::kOut ? "out" : "", mode, out,
                                               {}, self);
}
at::Tensor bitwiseNotFn(const at::Tensor& self) {
  return bitwiseNotImpl(Mode::kFunctional, nullptr, self);
}
at::Tensor& bitwiseNotInplace(at::Tensor& self) {
  bitwiseNotImpl(Mode::kInplace, &self, self);
  return self;
}
at::Tensor& bitwiseNotOut(const at::Tensor& self, at::Tensor& out) {
  bitwiseNotImpl(Mode::kOut, &out, self);
  return out;
}

// Integer division ops: meta, then the zero check, then the kernel.
template <class Meta, typename... Args>
at::Tensor runDivision(const PointwiseOp& op, const char* name, const char* overload, Mode mode,
                       at::Tensor* out, const Args&... args) {
  Structured<Meta> s(mode, out);
  s.meta(args...);
  const c10::ScalarType compute = computeDtype(s);
  if (!codegen::supports(op, compute)) {
    std::vector<c10::IValue> stack{c10::IValue(args)...};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  checkNoIntegerZero(s, 1);
  codegen::launch(op, s, compute);
  return s.output();
}

at::Tensor remainderTensorFn(const at::Tensor& a, const at::Tensor& b) {
  return runDivision<at::meta::structured_remainder_Tensor>(kRemainder, "aten::remainder", "Tensor",
                                                            Mode::kFunctional, nullptr, a, b);
}
at::Tensor& remainderTensorInplace(at::Tensor& a, const at::Tensor& b) {
  runDivision<at::meta::structured_remainder_Tensor>(kRemainder, "aten::remainder_", "Tensor",
                                                     Mode::kInplace, &a, a, b);
  return a;
}
at::Tensor& remainderTensorOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  runDivision<at::meta::structured_remainder_Tensor>(kRemainder, "aten::remainder", "Tensor_out",
                                                     Mode::kOut, &out, a, b);
  return out;
}
at::Tensor remainderScalarTensorFn(const c10::Scalar& a, const at::Tensor& b) {
  return remainderTensorFn(at::native::wrapped_scalar_tensor(a), b);
}
at::Tensor fmodTensorFn(const at::Tensor& a, const at::Tensor& b) {
  return runDivision<at::meta::structured_fmod_Tensor>(kFmod, "aten::fmod", "Tensor",
                                                       Mode::kFunctional, nullptr, a, b);
}
at::Tensor& fmodTensorInplace(at::Tensor& a, const at::Tensor& b) {
  runDivision<at::meta::structured_fmod_Tensor>(kFmod, "aten::fmod_", "Tensor", Mode::kInplace, &a,
                                                a, b);
  return a;
}
at::Tensor& fmodTensorOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  runDivision<at::meta::structured_fmod_Tensor>(kFmod, "aten::fmod", "Tensor_out", Mode::kOut, &out,
                                                a, b);
  return out;
}

// div with rounding_mode: none is plain division (div.Tensor, native in pointwise.cpp).
at::Tensor divModeImpl(Mode mode, at::Tensor* out, const at::Tensor& a, const at::Tensor& b,
                       std::optional<c10::string_view> rounding_mode) {
  const char* name = mode == Mode::kInplace ? "aten::div_" : "aten::div";
  const char* overload = mode == Mode::kOut ? "out_mode" : "Tensor_mode";
  if (!rounding_mode) {
    if (mode == Mode::kOut) {
      at::div_out(*out, a, b);
      return *out;
    }
    return mode == Mode::kInplace ? a.div_(b) : at::div(a, b);
  }
  const PointwiseOp& op = *rounding_mode == "trunc" ? kDivTrunc : kDivFloor;
  // The meta function rejects unknown modes with CPU's message.
  return runDivision<at::meta::structured_div_Tensor_mode>(op, name, overload, mode, out, a, b,
                                                           rounding_mode);
}
at::Tensor divModeFn(const at::Tensor& a, const at::Tensor& b,
                     std::optional<c10::string_view> mode) {
  return divModeImpl(Mode::kFunctional, nullptr, a, b, mode);
}
at::Tensor& divModeInplace(at::Tensor& a, const at::Tensor& b,
                           std::optional<c10::string_view> mode) {
  divModeImpl(Mode::kInplace, &a, a, b, mode);
  return a;
}
at::Tensor& divModeOut(const at::Tensor& a, const at::Tensor& b,
                       std::optional<c10::string_view> mode, at::Tensor& out) {
  divModeImpl(Mode::kOut, &out, a, b, mode);
  return out;
}

// floor_divide has no meta function: CPU builds a binary_op TensorIterator and floors.
at::Tensor& floorDivideInto(at::Tensor& result, const at::Tensor& a, const at::Tensor& b,
                            const char* name, const char* overload) {
  // No checkSameDevice: b may be a wrapped Python scalar (a CPU tensor); the launch checks.
  auto iter = at::TensorIterator::binary_op(result, a, b);
  const c10::ScalarType compute = iter.common_dtype();
  if (!codegen::supports(kDivFloor, compute)) {
    std::vector<c10::IValue> args{a, b};
    if (std::string(overload) == "out") args.emplace_back(result);
    runFallback(name, overload, std::move(args));
    return result;
  }
  checkNoIntegerZero(iter, 1);
  codegen::launch(kDivFloor, iter, compute);
  if (!result.defined()) result = iter.output();
  return result;
}
at::Tensor floorDivideFn(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor result;
  auto iter = at::TensorIterator::binary_op(result, a, b);
  const c10::ScalarType compute = iter.common_dtype();
  if (!codegen::supports(kDivFloor, compute))
    return runFallback("aten::floor_divide", "", {a, b})[0].toTensor();
  checkNoIntegerZero(iter, 1);
  codegen::launch(kDivFloor, iter, compute);
  return iter.output();
}
at::Tensor& floorDivideInplace(at::Tensor& a, const at::Tensor& b) {
  return floorDivideInto(a, a, b, "aten::floor_divide_", "Tensor");
}
at::Tensor& floorDivideOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return floorDivideInto(out, a, b, "aten::floor_divide", "out");
}

// ---- CPU-only (non-structured) ops -------------------------------------------------------------

// A unary op on a TensorIterator built like CPU's: `float_op` promotes integers to the default
// float dtype (logit), otherwise the output keeps the input dtype.
at::Tensor& unaryInto(at::Tensor& result, const at::Tensor& self, const PointwiseOp& op,
                      Scalars scalars, bool float_op, const char* name, const char* overload,
                      std::vector<c10::IValue> fallback_args) {
  checkSameDevice({self, result});
  at::TensorIterator iter = float_op ? at::TensorIterator::unary_float_op(result, self)
                                     : at::TensorIterator::unary_op(result, self);
  const c10::ScalarType compute = iter.common_dtype();
  if (!codegen::supports(op, compute)) {
    auto r = runFallback(name, overload, std::move(fallback_args));
    if (!result.defined()) result = r[0].toTensor();
    return result;
  }
  codegen::launch(op, iter, compute, scalars);
  if (!result.defined()) result = iter.output();
  return result;
}

const PointwiseOp& logitOp(std::optional<double> eps) {
  return eps && *eps >= 0 ? kLogitEps : kLogit;
}
at::Tensor logitFn(const at::Tensor& self, std::optional<double> eps) {
  at::Tensor result;
  return unaryInto(result, self, logitOp(eps), {eps ? *eps : -1.0}, true, "aten::logit", "",
                   {self, eps});
}
at::Tensor& logitInplace(at::Tensor& self, std::optional<double> eps) {
  return unaryInto(self, self, logitOp(eps), {eps ? *eps : -1.0}, true, "aten::logit_", "",
                   {self, eps});
}
at::Tensor& logitOut(const at::Tensor& self, std::optional<double> eps, at::Tensor& out) {
  return unaryInto(out, self, logitOp(eps), {eps ? *eps : -1.0}, true, "aten::logit", "out",
                   {self, eps, out});
}

at::Tensor hardswishFn(const at::Tensor& self) {
  at::Tensor result;
  return unaryInto(result, self, kHardswish, {}, false, "aten::hardswish", "", {self});
}
at::Tensor& hardswishInplace(at::Tensor& self) {
  return unaryInto(self, self, kHardswish, {}, false, "aten::hardswish_", "", {self});
}
at::Tensor& hardswishOut(const at::Tensor& self, at::Tensor& out) {
  return unaryInto(out, self, kHardswish, {}, false, "aten::hardswish", "out", {self, out});
}

// Gradients without meta functions: binary_op(grad_input, grad_output, self) as on CPU.
at::Tensor& binaryInto(at::Tensor& result, const at::Tensor& a, const at::Tensor& b,
                       const PointwiseOp& op, Scalars scalars, const char* name,
                       const char* overload, std::vector<c10::IValue> fallback_args) {
  checkSameDevice({a, b, result});
  auto iter = at::TensorIterator::borrowing_binary_op(result, a, b);
  const c10::ScalarType compute = iter.common_dtype();
  if (!codegen::supports(op, compute)) {
    auto r = runFallback(name, overload, std::move(fallback_args));
    if (!result.defined()) result = r[0].toTensor();
    return result;
  }
  codegen::launch(op, iter, compute, scalars);
  if (!result.defined()) result = iter.output();
  return result;
}
at::Tensor hardswishBackwardFn(const at::Tensor& grad, const at::Tensor& self) {
  at::Tensor result;
  return binaryInto(result, grad, self, kHardswishBackward, {}, "aten::hardswish_backward", "",
                    {grad, self});
}
at::Tensor mishBackwardFn(const at::Tensor& grad, const at::Tensor& self) {
  at::Tensor result;
  return binaryInto(result, grad, self, kMishBackward, {}, "aten::mish_backward", "", {grad, self});
}
at::Tensor hardtanhBackwardFn(const at::Tensor& grad, const at::Tensor& self,
                              const c10::Scalar& min, const c10::Scalar& max) {
  at::Tensor result;
  return binaryInto(result, grad, self, kHardtanhBackward, {min, max}, "aten::hardtanh_backward",
                    "", {grad, self, min, max});
}
at::Tensor& hardtanhBackwardOut(const at::Tensor& grad, const at::Tensor& self,
                                const c10::Scalar& min, const c10::Scalar& max, at::Tensor& out) {
  return binaryInto(out, grad, self, kHardtanhBackward, {min, max}, "aten::hardtanh_backward",
                    "grad_input", {grad, self, min, max, out});
}

// hardtanh is clamp (CPU does the same), with CPU's checks and its legacy rule that the bounds
// never promote: for integer inputs they are truncated to integers and the result keeps self's
// dtype.
std::pair<c10::Scalar, c10::Scalar> hardtanhBounds(const at::Tensor& self, const c10::Scalar& min,
                                                   const c10::Scalar& max) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  if (!at::isIntegralType(self.scalar_type(), /*includeBool=*/false)) return {min, max};
  const int64_t lo = min.toLong(), hi = max.toLong();
  TORCH_CHECK(self.scalar_type() != at::kByte || (lo >= 0 && hi >= 0),
              "cannot do hardtanh on an unsigned type with negative limits");
  return {c10::Scalar(lo), c10::Scalar(hi)};
}
at::Tensor& hardtanhOut(const at::Tensor& self, const c10::Scalar& min, const c10::Scalar& max,
                        at::Tensor& out) {
  const auto [lo, hi] = hardtanhBounds(self, min, max);
  return at::clamp_out(out, self, lo, hi);
}
at::Tensor hardtanhFn(const at::Tensor& self, const c10::Scalar& min, const c10::Scalar& max) {
  at::Tensor result = at::empty_like(self);
  return hardtanhOut(self, min, max, result);
}
at::Tensor& hardtanhInplace(at::Tensor& self, const c10::Scalar& min, const c10::Scalar& max) {
  return hardtanhOut(self, min, max, self);
}

// log_sigmoid: like CUDA, the buffer is empty; the backward recomputes from self.
std::tuple<at::Tensor&, at::Tensor&> logSigmoidForwardOut(const at::Tensor& self,
                                                          at::Tensor& output, at::Tensor& buffer) {
  unaryInto(output, self, kLogSigmoid, {}, false, "aten::log_sigmoid_forward", "output",
            {self, output, buffer});
  buffer.resize_({0});
  return {output, buffer};
}
std::tuple<at::Tensor, at::Tensor> logSigmoidForwardFn(const at::Tensor& self) {
  at::Tensor output;
  unaryInto(output, self, kLogSigmoid, {}, false, "aten::log_sigmoid_forward", "", {self});
  return {output, at::empty({0}, self.options())};
}
at::Tensor logSigmoidBackwardFn(const at::Tensor& grad, const at::Tensor& self,
                                const at::Tensor& buffer) {
  at::Tensor result;
  return binaryInto(result, grad, self, kLogSigmoidBackward, {}, "aten::log_sigmoid_backward", "",
                    {grad, self, buffer});
}
at::Tensor& logSigmoidBackwardOut(const at::Tensor& grad, const at::Tensor& self,
                                  const at::Tensor& buffer, at::Tensor& out) {
  return binaryInto(out, grad, self, kLogSigmoidBackward, {}, "aten::log_sigmoid_backward",
                    "grad_input", {grad, self, buffer, out});
}

// logical_*.out: a comparison TensorIterator (inputs promoted; out may have any dtype).
at::Tensor& logicalOut(const PointwiseOp& op, const char* name, const at::Tensor& a,
                       const at::Tensor& b, at::Tensor& out) {
  // Wrapped Python scalars arrive as CPU tensors; the launch checks devices.
  auto iter = at::TensorIterator::comparison_op(out, a, b);
  const c10::ScalarType compute = iter.common_dtype();
  if (!codegen::supports(op, compute)) {
    runFallback(name, "out", {a, b, out});
    return out;
  }
  codegen::launch(op, iter, compute);
  return out;
}
at::Tensor& logicalAndOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return logicalOut(kLogicalAnd, "aten::logical_and", a, b, out);
}
at::Tensor& logicalOrOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return logicalOut(kLogicalOr, "aten::logical_or", a, b, out);
}
at::Tensor& logicalXorOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return logicalOut(kLogicalXor, "aten::logical_xor", a, b, out);
}
// A unary op whose output dtype is independent of the input (logical_not.out, isnan).
at::Tensor& unaryAnyDtypeOut(const PointwiseOp& op, const char* name, const char* overload,
                             const at::Tensor& self, at::Tensor& out) {
  checkSameDevice({self, out});
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .add_output(out)
                  .add_const_input(self)
                  .build();
  if (!codegen::supports(op, self.scalar_type())) {
    runFallback(name, overload, {self, out});
    return out;
  }
  codegen::launch(op, iter, self.scalar_type());
  return out;
}
at::Tensor& logicalNotOut(const at::Tensor& self, at::Tensor& out) {
  return unaryAnyDtypeOut(kLogicalNot, "aten::logical_not", "out", self, out);
}
at::Tensor isnanFn(const at::Tensor& self) {
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(at::kBool));
  return unaryAnyDtypeOut(kIsnan, "aten::isnan", "", self, out);
}

// nan_to_num: replacements default to the dtype's largest and lowest finite values.
template <typename T>
std::array<double, 2> finiteRange() {
  return {static_cast<double>(std::numeric_limits<T>::max()),
          static_cast<double>(std::numeric_limits<T>::lowest())};
}
at::Tensor& nanToNumOut(const at::Tensor& self, std::optional<double> nan,
                        std::optional<double> posinf, std::optional<double> neginf,
                        at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "nan_to_num: dtype of out: ", out.scalar_type(),
              " should be same as input: ", self.scalar_type());
  std::array<double, 2> range{0, 0};
  switch (self.scalar_type()) {
    case at::kHalf:
      range = finiteRange<c10::Half>();
      break;
    case at::kBFloat16:
      range = finiteRange<c10::BFloat16>();
      break;
    case at::kFloat:
      range = finiteRange<float>();
      break;
    case at::kDouble:
      range = finiteRange<double>();
      break;
    default:
      break;
  }
  // Integral and bool tensors are copied; their kernel takes no replacement values.
  const Scalars s =
      c10::isFloatingType(self.scalar_type())
          ? Scalars{nan.value_or(0.0), posinf.value_or(range[0]), neginf.value_or(range[1])}
          : Scalars{};
  return unaryInto(out, self, kNanToNum, s, false, "aten::nan_to_num", "out",
                   {self, nan, posinf, neginf, out});
}

// clamp with tensor bounds: the meta adds only the defined bounds as inputs.
at::Tensor clampTensorImpl(Mode mode, at::Tensor* out, const at::Tensor& self,
                           const std::optional<at::Tensor>& min,
                           const std::optional<at::Tensor>& max) {
  const bool lo = min && min->defined(), hi = max && max->defined();
  const PointwiseOp& op = lo && hi ? kClampTT : lo ? kClampT : kClampTMax;
  const char* name = mode == Mode::kInplace ? "aten::clamp_" : "aten::clamp";
  const char* overload = mode == Mode::kOut ? "Tensor_out" : "Tensor";
  const at::OptionalTensorRef min_ref = lo ? at::OptionalTensorRef(*min) : at::OptionalTensorRef();
  const at::OptionalTensorRef max_ref = hi ? at::OptionalTensorRef(*max) : at::OptionalTensorRef();
  Structured<at::meta::structured_clamp_Tensor> s(mode, out);
  s.meta(self, min_ref, max_ref);
  const c10::ScalarType compute = computeDtype(s);
  if (!codegen::supports(op, compute)) {
    std::vector<c10::IValue> stack{self, min, max};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  codegen::launch(op, s, compute);
  return s.output();
}
at::Tensor clampTensorFn(const at::Tensor& self, const std::optional<at::Tensor>& min,
                         const std::optional<at::Tensor>& max) {
  return clampTensorImpl(Mode::kFunctional, nullptr, self, min, max);
}
at::Tensor& clampTensorInplace(at::Tensor& self, const std::optional<at::Tensor>& min,
                               const std::optional<at::Tensor>& max) {
  clampTensorImpl(Mode::kInplace, &self, self, min, max);
  return self;
}
at::Tensor& clampTensorOut(const at::Tensor& self, const std::optional<at::Tensor>& min,
                           const std::optional<at::Tensor>& max, at::Tensor& out) {
  clampTensorImpl(Mode::kOut, &out, self, min, max);
  return out;
}
OCL_STRUCTURED(clampMinT, at::meta::structured_clamp_min_Tensor, kClampT, "clamp_min", "Tensor",
               "Tensor_out", (), (, const at::Tensor& min), (, min))
OCL_STRUCTURED(clampMaxT, at::meta::structured_clamp_max_Tensor, kClampTMax, "clamp_max", "Tensor",
               "Tensor_out", (), (, const at::Tensor& max), (, max))

}  // namespace

#define OCL_REG3(ID, FN, INPLACE, OUT)    \
  m.impl(FN, TORCH_FN(ID##Fn));           \
  m.impl(INPLACE, TORCH_FN(ID##Inplace)); \
  m.impl(OUT, TORCH_FN(ID##Out));
#define OCL_REG_UNARY(ID) OCL_REG3(ID, #ID, #ID "_", #ID ".out")

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_REG_UNARY(frac)
  OCL_REG_UNARY(sgn)
  OCL_REG_UNARY(round)
  OCL_REG3(roundDecimals, "round.decimals", "round_.decimals", "round.decimals_out")
  OCL_REG_UNARY(asinh)
  OCL_REG_UNARY(acosh)
  OCL_REG_UNARY(atanh)
  OCL_REG_UNARY(erfinv)
  OCL_REG_UNARY(lgamma)
  OCL_REG_UNARY(digamma)
  OCL_REG_UNARY(mish)
  OCL_REG_UNARY(hardsigmoid)
  m.impl("isposinf", TORCH_FN(isposinfFn));
  m.impl("isposinf.out", TORCH_FN(isposinfOut));
  m.impl("isneginf", TORCH_FN(isneginfFn));
  m.impl("isneginf.out", TORCH_FN(isneginfOut));
  m.impl("signbit", TORCH_FN(signbitFn));
  m.impl("signbit.out", TORCH_FN(signbitOut));
  m.impl("isnan", TORCH_FN(isnanFn));

  OCL_REG3(remainderTensor, "remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out")
  m.impl("remainder.Scalar_Tensor", TORCH_FN(remainderScalarTensorFn));
  OCL_REG3(fmodTensor, "fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out")
  OCL_REG3(divMode, "div.Tensor_mode", "div_.Tensor_mode", "div.out_mode")
  OCL_REG3(floorDivide, "floor_divide", "floor_divide_.Tensor", "floor_divide.out")

  OCL_REG3(bitwiseAnd, "bitwise_and.Tensor", "bitwise_and_.Tensor", "bitwise_and.Tensor_out")
  OCL_REG3(bitwiseOr, "bitwise_or.Tensor", "bitwise_or_.Tensor", "bitwise_or.Tensor_out")
  OCL_REG3(bitwiseXor, "bitwise_xor.Tensor", "bitwise_xor_.Tensor", "bitwise_xor.Tensor_out")
  OCL_REG3(bitwiseNot, "bitwise_not", "bitwise_not_", "bitwise_not.out")
  OCL_REG3(shl, "bitwise_left_shift.Tensor", "bitwise_left_shift_.Tensor",
           "bitwise_left_shift.Tensor_out")
  OCL_REG3(shr, "bitwise_right_shift.Tensor", "bitwise_right_shift_.Tensor",
           "bitwise_right_shift.Tensor_out")
  m.impl("logical_and.out", TORCH_FN(logicalAndOut));
  m.impl("logical_or.out", TORCH_FN(logicalOrOut));
  m.impl("logical_xor.out", TORCH_FN(logicalXorOut));
  m.impl("logical_not.out", TORCH_FN(logicalNotOut));

  OCL_REG3(gcd, "gcd", "gcd_", "gcd.out")
  OCL_REG3(lcm, "lcm", "lcm_", "lcm.out")
  OCL_REG3(hypot, "hypot", "hypot_", "hypot.out")
  OCL_REG3(copysign, "copysign.Tensor", "copysign_.Tensor", "copysign.out")
  m.impl("logaddexp", TORCH_FN(logaddexpFn));
  m.impl("logaddexp.out", TORCH_FN(logaddexpOut));
  m.impl("logaddexp2", TORCH_FN(logaddexp2Fn));
  m.impl("logaddexp2.out", TORCH_FN(logaddexp2Out));
  OCL_REG3(xlogy, "xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor")
  m.impl("fmax", TORCH_FN(fmaxFn));
  m.impl("fmax.out", TORCH_FN(fmaxOut));
  m.impl("fmin", TORCH_FN(fminFn));
  m.impl("fmin.out", TORCH_FN(fminOut));
  OCL_REG3(heaviside, "heaviside", "heaviside_", "heaviside.out")
  OCL_REG3(lerpScalar, "lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out")
  OCL_REG3(lerpTensor, "lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out")
  OCL_REG3(addcmul, "addcmul", "addcmul_", "addcmul.out")
  OCL_REG3(addcdiv, "addcdiv", "addcdiv_", "addcdiv.out")
  m.impl("nan_to_num.out", TORCH_FN(nanToNumOut));
  OCL_REG3(clampTensor, "clamp.Tensor", "clamp_.Tensor", "clamp.Tensor_out")
  OCL_REG3(clampMinT, "clamp_min.Tensor", "clamp_min_.Tensor", "clamp_min.Tensor_out")
  OCL_REG3(clampMaxT, "clamp_max.Tensor", "clamp_max_.Tensor", "clamp_max.Tensor_out")

  m.impl("sigmoid_backward", TORCH_FN(sigmoidBackwardFn));
  m.impl("sigmoid_backward.grad_input", TORCH_FN(sigmoidBackwardOut));
  m.impl("tanh_backward", TORCH_FN(tanhBackwardFn));
  m.impl("tanh_backward.grad_input", TORCH_FN(tanhBackwardOut));
  OCL_REG3(logit, "logit", "logit_", "logit.out")
  m.impl("logit_backward", TORCH_FN(logitBackwardFn));
  m.impl("logit_backward.grad_input", TORCH_FN(logitBackwardOut));
  OCL_REG3(elu, "elu", "elu_", "elu.out")
  m.impl("elu_backward", TORCH_FN(eluBackwardFn));
  m.impl("elu_backward.grad_input", TORCH_FN(eluBackwardOut));
  m.impl("mish_backward", TORCH_FN(mishBackwardFn));
  m.impl("softplus", TORCH_FN(softplusFn));
  m.impl("softplus.out", TORCH_FN(softplusOut));
  m.impl("softplus_backward", TORCH_FN(softplusBackwardFn));
  m.impl("softplus_backward.grad_input", TORCH_FN(softplusBackwardOut));
  OCL_REG3(hardtanh, "hardtanh", "hardtanh_", "hardtanh.out")
  m.impl("hardtanh_backward", TORCH_FN(hardtanhBackwardFn));
  m.impl("hardtanh_backward.grad_input", TORCH_FN(hardtanhBackwardOut));
  m.impl("hardsigmoid_backward", TORCH_FN(hardsigmoidBackwardFn));
  m.impl("hardsigmoid_backward.grad_input", TORCH_FN(hardsigmoidBackwardOut));
  OCL_REG3(hardswish, "hardswish", "hardswish_", "hardswish.out")
  m.impl("hardswish_backward", TORCH_FN(hardswishBackwardFn));
  OCL_REG3(threshold, "threshold", "threshold_", "threshold.out")
  m.impl("log_sigmoid_forward", TORCH_FN(logSigmoidForwardFn));
  m.impl("log_sigmoid_forward.output", TORCH_FN(logSigmoidForwardOut));
  m.impl("log_sigmoid_backward", TORCH_FN(logSigmoidBackwardFn));
  m.impl("log_sigmoid_backward.grad_input", TORCH_FN(logSigmoidBackwardOut));
}

}  // namespace torch_ocl::aten
