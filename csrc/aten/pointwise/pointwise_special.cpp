// torch.special-style pointwise functions, with ATen's CPU semantics (NaN and zero cases):
// sinc, special_entr, special_xlog1py, angle of real tensors; the Bessel, error-function and
// orthogonal-polynomial families ported from ATen's Math.h (special_math.h); polygamma, zeta,
// nextafter; and the ops built on them: kaiser_window, renorm. Shapes and promotion come from
// PyTorch's meta functions.
#include <ATen/ATen.h>
#include <ATen/AccumulateType.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/i0_meta.h>
#include <ATen/ops/igamma_meta.h>
#include <ATen/ops/igammac_meta.h>
#include <ATen/ops/nextafter_meta.h>
#include <ATen/ops/polygamma_meta.h>
#include <ATen/ops/renorm_meta.h>
#include <ATen/ops/sinc_meta.h>
#include <ATen/ops/special_airy_ai_meta.h>
#include <ATen/ops/special_bessel_j0_meta.h>
#include <ATen/ops/special_bessel_j1_meta.h>
#include <ATen/ops/special_bessel_y0_meta.h>
#include <ATen/ops/special_bessel_y1_meta.h>
#include <ATen/ops/special_chebyshev_polynomial_t_meta.h>
#include <ATen/ops/special_chebyshev_polynomial_u_meta.h>
#include <ATen/ops/special_chebyshev_polynomial_v_meta.h>
#include <ATen/ops/special_chebyshev_polynomial_w_meta.h>
#include <ATen/ops/special_entr_meta.h>
#include <ATen/ops/special_erfcx_meta.h>
#include <ATen/ops/special_hermite_polynomial_h_meta.h>
#include <ATen/ops/special_hermite_polynomial_he_meta.h>
#include <ATen/ops/special_i0e_meta.h>
#include <ATen/ops/special_i1_meta.h>
#include <ATen/ops/special_i1e_meta.h>
#include <ATen/ops/special_laguerre_polynomial_l_meta.h>
#include <ATen/ops/special_legendre_polynomial_p_meta.h>
#include <ATen/ops/special_log_ndtr_meta.h>
#include <ATen/ops/special_modified_bessel_i0_meta.h>
#include <ATen/ops/special_modified_bessel_i1_meta.h>
#include <ATen/ops/special_modified_bessel_k0_meta.h>
#include <ATen/ops/special_modified_bessel_k1_meta.h>
#include <ATen/ops/special_ndtri_meta.h>
#include <ATen/ops/special_scaled_modified_bessel_k0_meta.h>
#include <ATen/ops/special_scaled_modified_bessel_k1_meta.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_t_meta.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_u_meta.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_v_meta.h>
#include <ATen/ops/special_shifted_chebyshev_polynomial_w_meta.h>
#include <ATen/ops/special_spherical_bessel_j0_meta.h>
#include <ATen/ops/special_xlog1py_meta.h>
#include <ATen/ops/special_zeta_meta.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/pointwise_run.h"
#include "aten/special_math.h"

namespace torch_ocl::aten {
namespace {

using codegen::Domain;
using codegen::PointwiseOp;

// sin(pi x) / (pi x), 1 at 0; the product is formed once, as CPU does (complex too).
const PointwiseOp kSinc{"sinc",
                        "a == (T)0 ? (T)1 : sin((T)3.14159265358979323846 * a) / "
                        "((T)3.14159265358979323846 * a)",
                        nullptr,
                        Domain::kFloating,
                        false,
                        nullptr,
                        nullptr,
                        "(a.x == (R)0 && a.y == (R)0) ? (T)(1, 0) : "
                        "ocl_cdiv(ocl_csin((R)3.14159265358979323846 * a), "
                        "(R)3.14159265358979323846 * a)"};
// -x log x: 0 at 0, -inf below, NaN stays NaN.
const PointwiseOp kEntr{"special_entr",
                        "a != a ? a : (a > (T)0 ? -a * log(a) : (a == (T)0 ? (T)0 : -(T)INFINITY))",
                        nullptr, Domain::kFloating};
// x log1p(y): NaN when y is NaN, else 0 when x is 0.
const PointwiseOp kXlog1py{"special_xlog1py", "b != b ? (T)NAN : (a == (T)0 ? (T)0 : a * log1p(b))",
                           nullptr, Domain::kFloating};

// angle of a real number: pi below zero, else 0; NaN stays NaN. Of a complex one atan2(y, x),
// stored to a real output (the real part of the complex form's result).
const PointwiseOp kAngle{"angle", "a != a ? a : (a < (T)0 ? (T)3.14159265358979323846 : (T)0)",
                         nullptr, Domain::kFloating,
                         false,   nullptr,
                         nullptr, "(T)(ocl_carg(a), 0)"};

// ---- Special functions ported from ATen's Math.h (special_math.h) ----------------------------
// i0 and the i0e/i1/i1e family compute half and bfloat16 in float as CPU does; the others exist on
// CPU for float and double only, so half and bfloat16 go to the counted fallback (and its error).
const PointwiseOp k_i0{
    "i0", "ocl_calc_i0(a)", nullptr, Domain::kFloating, false, OCL_SM_DEPS_calc_i0 OCL_SM_calc_i0};
const PointwiseOp k_special_i0e{"special_i0e", "ocl_calc_i0e(a)",
                                nullptr,       Domain::kFloating,
                                false,         OCL_SM_DEPS_calc_i0e OCL_SM_calc_i0e};
const PointwiseOp k_special_i1{"special_i1", "ocl_calc_i1(a)",
                               nullptr,      Domain::kFloating,
                               false,        OCL_SM_DEPS_calc_i1 OCL_SM_calc_i1};
const PointwiseOp k_special_i1e{"special_i1e", "ocl_calc_i1e(a)",
                                nullptr,       Domain::kFloating,
                                false,         OCL_SM_DEPS_calc_i1e OCL_SM_calc_i1e};
const PointwiseOp k_special_ndtri{"special_ndtri", "ocl_calc_ndtri(a)",
                                  nullptr,         Domain::kFloatDouble,
                                  false,           OCL_SM_DEPS_calc_ndtri OCL_SM_calc_ndtri};
const PointwiseOp k_special_log_ndtr{"special_log_ndtr",
                                     "ocl_calc_log_ndtr(a)",
                                     nullptr,
                                     Domain::kFloatDouble,
                                     false,
                                     OCL_SM_DEPS_calc_log_ndtr OCL_SM_calc_log_ndtr};
const PointwiseOp k_special_erfcx{"special_erfcx", "ocl_calc_erfcx(a)",
                                  nullptr,         Domain::kFloatDouble,
                                  false,           OCL_SM_DEPS_calc_erfcx OCL_SM_calc_erfcx};
const PointwiseOp k_special_airy_ai{"special_airy_ai",
                                    "ocl_airy_ai_forward(a)",
                                    nullptr,
                                    Domain::kFloatDouble,
                                    false,
                                    OCL_SM_DEPS_airy_ai_forward OCL_SM_airy_ai_forward};
const PointwiseOp k_special_bessel_j0{"special_bessel_j0",
                                      "ocl_bessel_j0_forward(a)",
                                      nullptr,
                                      Domain::kFloatDouble,
                                      false,
                                      OCL_SM_DEPS_bessel_j0_forward OCL_SM_bessel_j0_forward};
const PointwiseOp k_special_bessel_j1{"special_bessel_j1",
                                      "ocl_bessel_j1_forward(a)",
                                      nullptr,
                                      Domain::kFloatDouble,
                                      false,
                                      OCL_SM_DEPS_bessel_j1_forward OCL_SM_bessel_j1_forward};
const PointwiseOp k_special_bessel_y0{"special_bessel_y0",
                                      "ocl_bessel_y0_forward(a)",
                                      nullptr,
                                      Domain::kFloatDouble,
                                      false,
                                      OCL_SM_DEPS_bessel_y0_forward OCL_SM_bessel_y0_forward};
const PointwiseOp k_special_bessel_y1{"special_bessel_y1",
                                      "ocl_bessel_y1_forward(a)",
                                      nullptr,
                                      Domain::kFloatDouble,
                                      false,
                                      OCL_SM_DEPS_bessel_y1_forward OCL_SM_bessel_y1_forward};
const PointwiseOp k_special_modified_bessel_i0{
    "special_modified_bessel_i0",
    "ocl_modified_bessel_i0_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_modified_bessel_i0_forward OCL_SM_modified_bessel_i0_forward};
const PointwiseOp k_special_modified_bessel_i1{
    "special_modified_bessel_i1",
    "ocl_modified_bessel_i1_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_modified_bessel_i1_forward OCL_SM_modified_bessel_i1_forward};
const PointwiseOp k_special_modified_bessel_k0{
    "special_modified_bessel_k0",
    "ocl_modified_bessel_k0_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_modified_bessel_k0_forward OCL_SM_modified_bessel_k0_forward};
const PointwiseOp k_special_modified_bessel_k1{
    "special_modified_bessel_k1",
    "ocl_modified_bessel_k1_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_modified_bessel_k1_forward OCL_SM_modified_bessel_k1_forward};
const PointwiseOp k_special_scaled_modified_bessel_k0{
    "special_scaled_modified_bessel_k0",
    "ocl_scaled_modified_bessel_k0_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_scaled_modified_bessel_k0_forward OCL_SM_scaled_modified_bessel_k0_forward};
const PointwiseOp k_special_scaled_modified_bessel_k1{
    "special_scaled_modified_bessel_k1",
    "ocl_scaled_modified_bessel_k1_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_scaled_modified_bessel_k1_forward OCL_SM_scaled_modified_bessel_k1_forward};
const PointwiseOp k_special_spherical_bessel_j0{
    "special_spherical_bessel_j0",
    "ocl_spherical_bessel_j0_forward(a)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_spherical_bessel_j0_forward OCL_SM_spherical_bessel_j0_forward};

// The polynomials' degree n arrives as a tensor in the compute type; CPU casts it to int64_t (on
// x86 NaN, infinities and out-of-range values become INT64_MIN, a negative degree).
const PointwiseOp k_chebyshev_polynomial_t{
    "special_chebyshev_polynomial_t",
    "ocl_chebyshev_polynomial_t_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_chebyshev_polynomial_t_forward OCL_SM_chebyshev_polynomial_t_forward};
const PointwiseOp k_chebyshev_polynomial_u{
    "special_chebyshev_polynomial_u",
    "ocl_chebyshev_polynomial_u_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_chebyshev_polynomial_u_forward OCL_SM_chebyshev_polynomial_u_forward};
const PointwiseOp k_chebyshev_polynomial_v{
    "special_chebyshev_polynomial_v",
    "ocl_chebyshev_polynomial_v_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_chebyshev_polynomial_v_forward OCL_SM_chebyshev_polynomial_v_forward};
const PointwiseOp k_chebyshev_polynomial_w{
    "special_chebyshev_polynomial_w",
    "ocl_chebyshev_polynomial_w_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_chebyshev_polynomial_w_forward OCL_SM_chebyshev_polynomial_w_forward};
const PointwiseOp k_shifted_chebyshev_polynomial_t{
    "special_shifted_chebyshev_polynomial_t",
    "ocl_shifted_chebyshev_polynomial_t_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) "
    "? LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_shifted_chebyshev_polynomial_t_forward
        OCL_SM_shifted_chebyshev_polynomial_t_forward};
const PointwiseOp k_shifted_chebyshev_polynomial_u{
    "special_shifted_chebyshev_polynomial_u",
    "ocl_shifted_chebyshev_polynomial_u_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) "
    "? LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_shifted_chebyshev_polynomial_u_forward
        OCL_SM_shifted_chebyshev_polynomial_u_forward};
const PointwiseOp k_shifted_chebyshev_polynomial_v{
    "special_shifted_chebyshev_polynomial_v",
    "ocl_shifted_chebyshev_polynomial_v_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) "
    "? LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_shifted_chebyshev_polynomial_v_forward
        OCL_SM_shifted_chebyshev_polynomial_v_forward};
const PointwiseOp k_shifted_chebyshev_polynomial_w{
    "special_shifted_chebyshev_polynomial_w",
    "ocl_shifted_chebyshev_polynomial_w_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) "
    "? LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_shifted_chebyshev_polynomial_w_forward
        OCL_SM_shifted_chebyshev_polynomial_w_forward};
const PointwiseOp k_hermite_polynomial_h{
    "special_hermite_polynomial_h",
    "ocl_hermite_polynomial_h_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_hermite_polynomial_h_forward OCL_SM_hermite_polynomial_h_forward};
const PointwiseOp k_hermite_polynomial_he{
    "special_hermite_polynomial_he",
    "ocl_hermite_polynomial_he_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_hermite_polynomial_he_forward OCL_SM_hermite_polynomial_he_forward};
const PointwiseOp k_laguerre_polynomial_l{
    "special_laguerre_polynomial_l",
    "ocl_laguerre_polynomial_l_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_laguerre_polynomial_l_forward OCL_SM_laguerre_polynomial_l_forward};
const PointwiseOp k_legendre_polynomial_p{
    "special_legendre_polynomial_p",
    "ocl_legendre_polynomial_p_forward(a, (b != b || fabs(b) >= (T)9.2233720368547758e18) ? "
    "LONG_MIN : (long)b)",
    nullptr,
    Domain::kFloatDouble,
    false,
    OCL_SM_DEPS_legendre_polynomial_p_forward OCL_SM_legendre_polynomial_p_forward};

// Hurwitz zeta, Math.h's zeta: CPU accumulates in acc_type (double for float, where the device has
// fp64; float for half and bfloat16).
const char* kZeta = R"CLC(
#ifdef TORCH_OCL_FP64
typedef double ocl_zeta_acc;
#else
typedef float ocl_zeta_acc;
#endif
inline T ocl_zeta(T x_in, T q_in) {
  const ocl_zeta_acc x = x_in, q = q_in;
  const ocl_zeta_acc MACHEP = (ocl_zeta_acc)1.11022302462515654042E-16;
  const ocl_zeta_acc zero = 0, one_half = 0.5, one = 1;
  const ocl_zeta_acc A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
                            -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
                            1.1646782814350067249e14, -4.5979787224074726105e15,
                            1.8152105401943546773e17, -7.1661652561756670113e18};
  ocl_zeta_acc a, b, k, s, t, w;
  if (x == one) return (T)INFINITY;
  if (x < one) return (T)NAN;
  if (q <= zero) {
    if (q == floor(q)) return (T)INFINITY;
    if (x != floor(x)) return (T)NAN;
  }
  s = pow(q, -x);
  a = q;
  int i = 0;
  b = zero;
  while ((i < 9) || (a <= (ocl_zeta_acc)9.0)) {
    i += 1;
    a += one;
    b = pow(a, -x);
    s += b;
    if ((-MACHEP * s < b) && (b < MACHEP * s)) return (T)s;
  }
  w = a;
  s += b * w / (x - one);
  s -= one_half * b;
  a = one;
  k = zero;
  for (i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    t = a * b / A[i];
    s = s + t;
    t = fabs(t / s);
    if (t < MACHEP) return (T)s;
    k += one;
    a *= x + k;
    b /= w;
    k += one;
  }
  return (T)s;
}
)CLC";

// trigamma (polygamma(1, x), digamma's derivative), Math.h's float and double versions.
const char* kTrigamma = R"CLC(
inline T ocl_trigamma(T x) {
  T sign = (T)1;
  T result = (T)0;
  if (x < (T)0.5) {
    sign = (T)-1;
    const T sin_pi_x = sin((T)M_PI * x);
    result -= ((T)M_PI * (T)M_PI) / (sin_pi_x * sin_pi_x);
    x = (T)1 - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += (T)1 / (x * x);
    x += (T)1;
  }
  const T ixx = (T)1 / (x * x);
  result += ((T)1 + (T)1 / ((T)2 * x) +
             ixx * ((T)1 / (T)6 - ixx * ((T)1 / (T)30 - ixx * ((T)1 / (T)42)))) / x;
  return sign * result;
}
)CLC";

const PointwiseOp kZetaOp{"special_zeta", "ocl_zeta(a, b)", nullptr, Domain::kFloatDouble, false,
                          kZeta};
const PointwiseOp kTrigammaOp{"trigamma", "ocl_trigamma(a)", nullptr, Domain::kFloating,
                              false,      kTrigamma};
// polygamma(n >= 2): s0 = (-1)^(n+1), s1 = n.
const PointwiseOp kPolygammaOp{"polygamma", "s0 * exp(lgamma(s1 + (T)1)) * ocl_zeta(s1 + (T)1, a)",
                               nullptr,     Domain::kFloating,
                               false,       kZeta};
// nextafter steps in the storage precision: float and double with the builtin; half and bfloat16
// (computed in float) step their 16-bit patterns as c10::nextafter does (musl's algorithm).
const PointwiseOp kNextafter{"nextafter", "nextafter(a, b)", nullptr, Domain::kFloatDouble};
#define OCL_NEXTAFTER16(TO_BITS, FROM_BITS)                    \
  "inline ushort ocl_bits16(float x) { " TO_BITS               \
  " }\n"                                                       \
  "inline float ocl_from_bits16(ushort u) { " FROM_BITS        \
  " }\n"                                                       \
  "inline float ocl_nextafter16(float from, float to) {\n"     \
  "  if (from != from || to != to) return from + to;\n"        \
  "  ushort uf = ocl_bits16(from), ut = ocl_bits16(to);\n"     \
  "  if (uf == ut) return from;\n"                             \
  "  const ushort af = uf & 0x7fff, at = ut & 0x7fff;\n"       \
  "  if (af == 0) {\n"                                         \
  "    if (at == 0) return to;\n"                              \
  "    return ocl_from_bits16((ushort)((ut & 0x8000) | 1));\n" \
  "  }\n"                                                      \
  "  if (af > at || ((uf ^ ut) & 0x8000)) uf--; else uf++;\n"  \
  "  return ocl_from_bits16(uf);\n"                            \
  "}\n"
const PointwiseOp kNextafterHalf{
    "nextafter_half",
    "ocl_nextafter16(a, b)",
    nullptr,
    Domain::kFloating,
    false,
    OCL_NEXTAFTER16("ushort u; vstore_half_rte(x, 0, (__private half*)&u); return u;",
                    "return vload_half(0, (__private const half*)&u);")};
const PointwiseOp kNextafterBf16{
    "nextafter_bf16",
    "ocl_nextafter16(a, b)",
    nullptr,
    Domain::kFloating,
    false,
    OCL_NEXTAFTER16("return ocl_float_to_bf16(x);", "return ocl_bf16_to_float(u);")};
const PointwiseOp& nextafterOp(const at::Tensor& self, const at::Tensor& other) {
  const c10::ScalarType t = at::result_type(self, other);
  return t == c10::kHalf ? kNextafterHalf : t == c10::kBFloat16 ? kNextafterBf16 : kNextafter;
}

// kaiser_window's element a of arange: s0 = alpha = (N - 1) / 2, s1 = beta.
const PointwiseOp kKaiserWindow{
    "kaiser_window",
    "ocl_calc_i0(s1 * sqrt(fabs((T)1 - pow((a - s0) / s0, (T)2)))) / ocl_calc_i0(s1)",
    nullptr,
    Domain::kFloating,
    false,
    OCL_SM_DEPS_calc_i0 OCL_SM_calc_i0};

// kaiser_window.beta: PyTorch's composite calls a DispatchStub that has no ocl kernel (an internal
// assert); this follows native::kaiser_window around our kernel.
at::Tensor kaiserWindowFn(int64_t window_length, bool periodic, double beta,
                          std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                          std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  const c10::ScalarType t = dtype.value_or(c10::get_default_dtype_as_scalartype());
  const auto options =
      at::TensorOptions().dtype(t).layout(layout).device(device).pinned_memory(pin_memory);
  TORCH_CHECK(options.layout() != at::kSparse,
              "kaiser_window is not implemented for sparse types, got: ", options);
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t),
              "kaiser_window expects floating point dtypes, got: ", options);
  TORCH_CHECK(
      window_length >= 0,
      "kaiser_window requires non-negative window length, got window_length=", window_length);
  TORCH_CHECK(codegen::supports(kKaiserWindow, t), "\"kaiser_window_cpu\" not implemented for '", t,
              "'");
  if (window_length == 0) return at::empty({0}, options);
  if (window_length == 1) return at::ones({1}, options);
  if (periodic) window_length += 1;
  const at::Tensor initial = at::arange(window_length, options);
  at::Tensor window = at::empty(window_length, options);
  auto iter = at::TensorIterator::unary_op(window, initial);
  codegen::launch(kKaiserWindow, iter, t, {(window_length - 1) / 2.0, beta, 0.0});
  return periodic ? window.narrow(0, 0, window_length - 1) : window;
}
// The overloads without beta (12) or periodic (true) call native::kaiser_window directly.
at::Tensor kaiserWindowPeriodicFn(int64_t window_length, bool periodic,
                                  std::optional<c10::ScalarType> dtype,
                                  std::optional<c10::Layout> layout,
                                  std::optional<c10::Device> device,
                                  std::optional<bool> pin_memory) {
  return kaiserWindowFn(window_length, periodic, 12.0, dtype, layout, device, pin_memory);
}
at::Tensor kaiserWindowDefaultFn(int64_t window_length, std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout,
                                 std::optional<c10::Device> device,
                                 std::optional<bool> pin_memory) {
  return kaiserWindowFn(window_length, true, 12.0, dtype, layout, device, pin_memory);
}

// renorm's scale factor from the sub-tensor norms: s0 = maxnorm.
const PointwiseOp kRenormFactor{"renorm_factor", "a > s0 ? s0 / (a + (T)1e-7) : (T)1", nullptr,
                                Domain::kFloating};

// renorm as CPU's renorm_out: vector norms over every dim but `dim` (in float for half and
// bfloat16), the scale factor, then one multiplication into the result.
at::Tensor renormImpl(Mode mode, at::Tensor* out, const at::Tensor& self, const c10::Scalar& p,
                      int64_t dim, const c10::Scalar& maxnorm) {
  Structured<at::meta::structured_renorm> s(mode, out);
  s.meta(self, p, dim, maxnorm);
  const c10::ScalarType dtype = self.scalar_type();
  // Complex: the norms and their factor are real (CPU computes the factor in the norms' dtype
  // and casts it into a complex tensor; multiplying by the real factor gives the same product).
  const c10::ScalarType real = c10::toRealValueType(dtype);
  if (dtype == c10::kComplexHalf || !codegen::supports(kRenormFactor, real)) {
    std::vector<c10::IValue> stack{self, p, dim, maxnorm};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(mode == Mode::kInplace ? "aten::renorm_" : "aten::renorm",
                       mode == Mode::kOut ? "out" : "", std::move(stack))[0]
        .toTensor();
  }
  const at::Tensor& result = s.output();
  checkSameDevice({self, result});
  dim = c10::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> reduce_dims;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) reduce_dims.push_back(d);
  const c10::ScalarType acc = at::toAccumulateType(dtype, /*is_cuda=*/true);
  const at::Tensor norm =
      at::linalg_vector_norm(self, p.toDouble(), reduce_dims, /*keepdim=*/true,
                             acc != dtype ? std::optional<c10::ScalarType>(acc) : std::nullopt);
  at::Tensor factor = acc == dtype ? norm : at::empty(norm.sizes(), self.options());
  auto iter = at::TensorIteratorConfig()
                  .add_output(factor)
                  .add_const_input(norm)
                  .set_check_mem_overlap(false)
                  .cast_common_dtype_to_outputs(true)
                  .build();
  codegen::launch(kRenormFactor, iter, iter.common_dtype(), {maxnorm});
  at::Tensor r = result;
  at::mul_out(r, self, factor);
  return result;
}
at::Tensor renormFn(const at::Tensor& self, const c10::Scalar& p, int64_t dim,
                    const c10::Scalar& maxnorm) {
  return renormImpl(Mode::kFunctional, nullptr, self, p, dim, maxnorm);
}
at::Tensor& renormInplace(at::Tensor& self, const c10::Scalar& p, int64_t dim,
                          const c10::Scalar& maxnorm) {
  renormImpl(Mode::kInplace, &self, self, p, dim, maxnorm);
  return self;
}
at::Tensor& renormOut(const at::Tensor& self, const c10::Scalar& p, int64_t dim,
                      const c10::Scalar& maxnorm, at::Tensor& out) {
  renormImpl(Mode::kOut, &out, self, p, dim, maxnorm);
  return out;
}

// frexp: mantissa and exponent as two one-output kernels over the same input (the generator has
// one output); the exponent is an int, exact through the compute type.
const PointwiseOp kFrexpMantissa{
    "frexp_mantissa",
    "ocl_frexp_mantissa(a)",
    nullptr,
    Domain::kFloating,
    false,
    "inline T ocl_frexp_mantissa(T x) { int e; return frexp(x, &e); }"};
const PointwiseOp kFrexpExponent{
    "frexp_exponent",
    "ocl_frexp_exponent(a)",
    nullptr,
    Domain::kFloating,
    false,
    "inline T ocl_frexp_exponent(T x) { int e; frexp(x, &e); return (T)e; }"};

std::tuple<at::Tensor&, at::Tensor&> frexpOut(const at::Tensor& self, at::Tensor& mantissa,
                                              at::Tensor& exponent) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "torch.frexp() only supports floating-point dtypes");
  TORCH_CHECK(mantissa.dtype() == self.dtype(), "torch.frexp() expects mantissa to have dtype ",
              self.dtype(), " but got ", mantissa.dtype());
  TORCH_CHECK(exponent.dtype() == at::kInt,
              "torch.frexp() expects exponent to have int dtype but got ", exponent.dtype());
  checkSameDevice({self, mantissa, exponent});
  auto build = [&](at::Tensor& out) {
    return at::TensorIteratorConfig()
        .add_output(out)
        .add_const_input(self)
        .check_all_same_dtype(false)
        .set_check_mem_overlap(true)
        .build();
  };
  auto iter_m = build(mantissa);
  auto iter_e = build(exponent);
  // The exponent first: mantissa may alias self (x.frexp(out=(x, e))).
  codegen::launch(kFrexpExponent, iter_e, self.scalar_type());
  codegen::launch(kFrexpMantissa, iter_m, self.scalar_type());
  return {mantissa, exponent};
}

// Regularized lower and upper incomplete gamma functions (SciPy's igam/igamc via Math.h).
const PointwiseOp kIgamma{"igamma", "ocl_calc_igamma(a, b)",
                          nullptr,  Domain::kFloating,
                          false,    OCL_SM_DEPS_calc_igamma OCL_SM_calc_igamma};
const PointwiseOp kIgammac{"igammac", "ocl_calc_igammac(a, b)",
                           nullptr,   Domain::kFloating,
                           false,     OCL_SM_DEPS_calc_igammac OCL_SM_calc_igammac};

// angle is not structured: CPU's unary float op (integers give the default float dtype).
at::Tensor& angleInto(const at::Tensor& self, at::Tensor& out, bool functional) {
  if (self.is_complex()) {
    const c10::ScalarType real = c10::toRealValueType(self.scalar_type());
    if (functional) {
      out = at::empty(self.sizes(), self.options().dtype(real));
    } else {
      checkSameDevice({self, out});
      TORCH_CHECK(c10::canCast(real, out.scalar_type()), "result type ", real,
                  " can't be cast to the desired output type ", out.scalar_type());
      at::native::resize_output(out, self.sizes());
    }
    auto iter = at::TensorIteratorConfig()
                    .check_all_same_dtype(false)
                    .add_output(out)
                    .add_const_input(self)
                    .build();
    codegen::launch(kAngle, iter, self.scalar_type());
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

OCL_UNARY_S(i0, k_i0)
OCL_UNARY_S(special_i0e, k_special_i0e)
OCL_UNARY_S(special_i1, k_special_i1)
OCL_UNARY_S(special_i1e, k_special_i1e)
OCL_UNARY_S(special_ndtri, k_special_ndtri)
OCL_UNARY_S(special_log_ndtr, k_special_log_ndtr)
OCL_UNARY_S(special_erfcx, k_special_erfcx)
OCL_UNARY_S(special_airy_ai, k_special_airy_ai)
OCL_UNARY_S(special_bessel_j0, k_special_bessel_j0)
OCL_UNARY_S(special_bessel_j1, k_special_bessel_j1)
OCL_UNARY_S(special_bessel_y0, k_special_bessel_y0)
OCL_UNARY_S(special_bessel_y1, k_special_bessel_y1)
OCL_UNARY_S(special_modified_bessel_i0, k_special_modified_bessel_i0)
OCL_UNARY_S(special_modified_bessel_i1, k_special_modified_bessel_i1)
OCL_UNARY_S(special_modified_bessel_k0, k_special_modified_bessel_k0)
OCL_UNARY_S(special_modified_bessel_k1, k_special_modified_bessel_k1)
OCL_UNARY_S(special_scaled_modified_bessel_k0, k_special_scaled_modified_bessel_k0)
OCL_UNARY_S(special_scaled_modified_bessel_k1, k_special_scaled_modified_bessel_k1)
OCL_UNARY_S(special_spherical_bessel_j0, k_special_spherical_bessel_j0)
OCL_STRUCTURED(chebyshev_polynomial_t, at::meta::structured_special_chebyshev_polynomial_t,
               k_chebyshev_polynomial_t, "special_chebyshev_polynomial_t", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(chebyshev_polynomial_u, at::meta::structured_special_chebyshev_polynomial_u,
               k_chebyshev_polynomial_u, "special_chebyshev_polynomial_u", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(chebyshev_polynomial_v, at::meta::structured_special_chebyshev_polynomial_v,
               k_chebyshev_polynomial_v, "special_chebyshev_polynomial_v", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(chebyshev_polynomial_w, at::meta::structured_special_chebyshev_polynomial_w,
               k_chebyshev_polynomial_w, "special_chebyshev_polynomial_w", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(shifted_chebyshev_polynomial_t,
               at::meta::structured_special_shifted_chebyshev_polynomial_t,
               k_shifted_chebyshev_polynomial_t, "special_shifted_chebyshev_polynomial_t", "",
               "out", (), (, const at::Tensor& n), (, n))
OCL_STRUCTURED(shifted_chebyshev_polynomial_u,
               at::meta::structured_special_shifted_chebyshev_polynomial_u,
               k_shifted_chebyshev_polynomial_u, "special_shifted_chebyshev_polynomial_u", "",
               "out", (), (, const at::Tensor& n), (, n))
OCL_STRUCTURED(shifted_chebyshev_polynomial_v,
               at::meta::structured_special_shifted_chebyshev_polynomial_v,
               k_shifted_chebyshev_polynomial_v, "special_shifted_chebyshev_polynomial_v", "",
               "out", (), (, const at::Tensor& n), (, n))
OCL_STRUCTURED(shifted_chebyshev_polynomial_w,
               at::meta::structured_special_shifted_chebyshev_polynomial_w,
               k_shifted_chebyshev_polynomial_w, "special_shifted_chebyshev_polynomial_w", "",
               "out", (), (, const at::Tensor& n), (, n))
OCL_STRUCTURED(hermite_polynomial_h, at::meta::structured_special_hermite_polynomial_h,
               k_hermite_polynomial_h, "special_hermite_polynomial_h", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(hermite_polynomial_he, at::meta::structured_special_hermite_polynomial_he,
               k_hermite_polynomial_he, "special_hermite_polynomial_he", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(laguerre_polynomial_l, at::meta::structured_special_laguerre_polynomial_l,
               k_laguerre_polynomial_l, "special_laguerre_polynomial_l", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_STRUCTURED(legendre_polynomial_p, at::meta::structured_special_legendre_polynomial_p,
               k_legendre_polynomial_p, "special_legendre_polynomial_p", "", "out", (),
               (, const at::Tensor& n), (, n))
OCL_BINARY_S(igamma, at::meta::structured_igamma, kIgamma, "igamma", "", "out")
OCL_BINARY_S(igammac, at::meta::structured_igammac, kIgammac, "igammac", "", "out")
OCL_BINARY_S(zeta, at::meta::structured_special_zeta, kZetaOp, "special_zeta", "", "out")
OCL_BINARY_S(nextafter, at::meta::structured_nextafter, nextafterOp(self, other), "nextafter", "",
             "out")

// polygamma: n = 0 is digamma (native), n = 1 trigamma, larger n through zeta, as CPU's kernel.
at::Tensor polygammaImpl(Mode mode, at::Tensor* out, int64_t n, const at::Tensor& self) {
  const char* name = mode == Mode::kInplace ? "aten::polygamma_" : "aten::polygamma";
  const char* overload = mode == Mode::kOut ? "out" : "";
  if (n == 0) {
    if (mode == Mode::kOut) return at::digamma_out(*out, self);
    return mode == Mode::kInplace ? out->digamma_() : at::digamma(self);
  }
  const PointwiseOp& op = n == 1 ? kTrigammaOp : kPolygammaOp;
  const Scalars scalars{n % 2 ? 1.0 : -1.0, static_cast<double>(n), 0.0};
  return run<at::meta::structured_polygamma>(op, name, overload, mode, out, scalars, n, self);
}
at::Tensor polygammaFn(int64_t n, const at::Tensor& self) {
  return polygammaImpl(Mode::kFunctional, nullptr, n, self);
}
at::Tensor& polygammaInplace(at::Tensor& self, int64_t n) {
  polygammaImpl(Mode::kInplace, &self, n, self);
  return self;
}
at::Tensor& polygammaOut(int64_t n, const at::Tensor& self, at::Tensor& out) {
  polygammaImpl(Mode::kOut, &out, n, self);
  return out;
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
  m.impl("frexp.Tensor_out", TORCH_FN(frexpOut));
  m.impl("igamma", TORCH_FN(igammaFn));
  m.impl("igamma_", TORCH_FN(igammaInplace));
  m.impl("igamma.out", TORCH_FN(igammaOut));
  m.impl("igammac", TORCH_FN(igammacFn));
  m.impl("igammac_", TORCH_FN(igammacInplace));
  m.impl("igammac.out", TORCH_FN(igammacOut));
  m.impl("kaiser_window", TORCH_FN(kaiserWindowDefaultFn));
  m.impl("kaiser_window.beta", TORCH_FN(kaiserWindowFn));
  m.impl("kaiser_window.periodic", TORCH_FN(kaiserWindowPeriodicFn));
  m.impl("renorm", TORCH_FN(renormFn));
  m.impl("renorm_", TORCH_FN(renormInplace));
  m.impl("renorm.out", TORCH_FN(renormOut));
  m.impl("special_zeta", TORCH_FN(zetaFn));
  m.impl("special_zeta.out", TORCH_FN(zetaOut));
  m.impl("nextafter", TORCH_FN(nextafterFn));
  m.impl("nextafter_", TORCH_FN(nextafterInplace));
  m.impl("nextafter.out", TORCH_FN(nextafterOut));
  m.impl("polygamma", TORCH_FN(polygammaFn));
  m.impl("polygamma_", TORCH_FN(polygammaInplace));
  m.impl("polygamma.out", TORCH_FN(polygammaOut));
  m.impl("i0", TORCH_FN(i0Fn));
  m.impl("i0.out", TORCH_FN(i0Out));
  m.impl("i0_", TORCH_FN(i0Inplace));
  m.impl("special_i0e", TORCH_FN(special_i0eFn));
  m.impl("special_i0e.out", TORCH_FN(special_i0eOut));
  m.impl("special_i1", TORCH_FN(special_i1Fn));
  m.impl("special_i1.out", TORCH_FN(special_i1Out));
  m.impl("special_i1e", TORCH_FN(special_i1eFn));
  m.impl("special_i1e.out", TORCH_FN(special_i1eOut));
  m.impl("special_ndtri", TORCH_FN(special_ndtriFn));
  m.impl("special_ndtri.out", TORCH_FN(special_ndtriOut));
  m.impl("special_log_ndtr", TORCH_FN(special_log_ndtrFn));
  m.impl("special_log_ndtr.out", TORCH_FN(special_log_ndtrOut));
  m.impl("special_erfcx", TORCH_FN(special_erfcxFn));
  m.impl("special_erfcx.out", TORCH_FN(special_erfcxOut));
  m.impl("special_airy_ai", TORCH_FN(special_airy_aiFn));
  m.impl("special_airy_ai.out", TORCH_FN(special_airy_aiOut));
  m.impl("special_bessel_j0", TORCH_FN(special_bessel_j0Fn));
  m.impl("special_bessel_j0.out", TORCH_FN(special_bessel_j0Out));
  m.impl("special_bessel_j1", TORCH_FN(special_bessel_j1Fn));
  m.impl("special_bessel_j1.out", TORCH_FN(special_bessel_j1Out));
  m.impl("special_bessel_y0", TORCH_FN(special_bessel_y0Fn));
  m.impl("special_bessel_y0.out", TORCH_FN(special_bessel_y0Out));
  m.impl("special_bessel_y1", TORCH_FN(special_bessel_y1Fn));
  m.impl("special_bessel_y1.out", TORCH_FN(special_bessel_y1Out));
  m.impl("special_modified_bessel_i0", TORCH_FN(special_modified_bessel_i0Fn));
  m.impl("special_modified_bessel_i0.out", TORCH_FN(special_modified_bessel_i0Out));
  m.impl("special_modified_bessel_i1", TORCH_FN(special_modified_bessel_i1Fn));
  m.impl("special_modified_bessel_i1.out", TORCH_FN(special_modified_bessel_i1Out));
  m.impl("special_modified_bessel_k0", TORCH_FN(special_modified_bessel_k0Fn));
  m.impl("special_modified_bessel_k0.out", TORCH_FN(special_modified_bessel_k0Out));
  m.impl("special_modified_bessel_k1", TORCH_FN(special_modified_bessel_k1Fn));
  m.impl("special_modified_bessel_k1.out", TORCH_FN(special_modified_bessel_k1Out));
  m.impl("special_scaled_modified_bessel_k0", TORCH_FN(special_scaled_modified_bessel_k0Fn));
  m.impl("special_scaled_modified_bessel_k0.out", TORCH_FN(special_scaled_modified_bessel_k0Out));
  m.impl("special_scaled_modified_bessel_k1", TORCH_FN(special_scaled_modified_bessel_k1Fn));
  m.impl("special_scaled_modified_bessel_k1.out", TORCH_FN(special_scaled_modified_bessel_k1Out));
  m.impl("special_spherical_bessel_j0", TORCH_FN(special_spherical_bessel_j0Fn));
  m.impl("special_spherical_bessel_j0.out", TORCH_FN(special_spherical_bessel_j0Out));
  m.impl("special_chebyshev_polynomial_t", TORCH_FN(chebyshev_polynomial_tFn));
  m.impl("special_chebyshev_polynomial_t.out", TORCH_FN(chebyshev_polynomial_tOut));
  m.impl("special_chebyshev_polynomial_u", TORCH_FN(chebyshev_polynomial_uFn));
  m.impl("special_chebyshev_polynomial_u.out", TORCH_FN(chebyshev_polynomial_uOut));
  m.impl("special_chebyshev_polynomial_v", TORCH_FN(chebyshev_polynomial_vFn));
  m.impl("special_chebyshev_polynomial_v.out", TORCH_FN(chebyshev_polynomial_vOut));
  m.impl("special_chebyshev_polynomial_w", TORCH_FN(chebyshev_polynomial_wFn));
  m.impl("special_chebyshev_polynomial_w.out", TORCH_FN(chebyshev_polynomial_wOut));
  m.impl("special_shifted_chebyshev_polynomial_t", TORCH_FN(shifted_chebyshev_polynomial_tFn));
  m.impl("special_shifted_chebyshev_polynomial_t.out", TORCH_FN(shifted_chebyshev_polynomial_tOut));
  m.impl("special_shifted_chebyshev_polynomial_u", TORCH_FN(shifted_chebyshev_polynomial_uFn));
  m.impl("special_shifted_chebyshev_polynomial_u.out", TORCH_FN(shifted_chebyshev_polynomial_uOut));
  m.impl("special_shifted_chebyshev_polynomial_v", TORCH_FN(shifted_chebyshev_polynomial_vFn));
  m.impl("special_shifted_chebyshev_polynomial_v.out", TORCH_FN(shifted_chebyshev_polynomial_vOut));
  m.impl("special_shifted_chebyshev_polynomial_w", TORCH_FN(shifted_chebyshev_polynomial_wFn));
  m.impl("special_shifted_chebyshev_polynomial_w.out", TORCH_FN(shifted_chebyshev_polynomial_wOut));
  m.impl("special_hermite_polynomial_h", TORCH_FN(hermite_polynomial_hFn));
  m.impl("special_hermite_polynomial_h.out", TORCH_FN(hermite_polynomial_hOut));
  m.impl("special_hermite_polynomial_he", TORCH_FN(hermite_polynomial_heFn));
  m.impl("special_hermite_polynomial_he.out", TORCH_FN(hermite_polynomial_heOut));
  m.impl("special_laguerre_polynomial_l", TORCH_FN(laguerre_polynomial_lFn));
  m.impl("special_laguerre_polynomial_l.out", TORCH_FN(laguerre_polynomial_lOut));
  m.impl("special_legendre_polynomial_p", TORCH_FN(legendre_polynomial_pFn));
  m.impl("special_legendre_polynomial_p.out", TORCH_FN(legendre_polynomial_pOut));
}

}  // namespace torch_ocl::aten
