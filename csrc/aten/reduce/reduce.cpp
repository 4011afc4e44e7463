// Reductions through the reduction generator (codegen/reduce.h): sum, mean, prod, amax/amin,
// max/min (full and .dim with indices), argmax/argmin, any/all, var/std (+ _mean),
// linalg_vector_norm / norm. Output shapes and dtypes come from PyTorch's structured meta
// functions where the op has one, the geometry from TensorIterator's reduction setup.
// Complex sum, mean and prod run in the generator on float2/double2; complex var/std (+ _mean),
// vector norms and logsumexp are composed from native ops exactly as CPU composes them.
// On CPU drivers, one contiguous reduced dim goes to the explicit-vector kernels of row_stats.h
// first where they cover the op (sum, mean, nansum, prod, amax/amin, max/min with indices,
// argmax/argmin, var/std, norms of orders 2, 1, 0 and +-inf, logsumexp; of integer and bool
// inputs sum, prod, amax/amin, max/min with indices, argmax/argmin, and any/all of bool).
#include <ATen/ATen.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/norm_meta.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/sum_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/reduce/row_stats.h"
#include "aten/structured.h"
#include "codegen/reduce.h"

#include <cmath>
#include <limits>

namespace torch_ocl::aten {
namespace {

using codegen::ReduceOp;

// ---- the reductions, as OpenCL C snippets (see codegen/reduce.h) ----
const char* kSumCombine = "return a + b;";

const ReduceOp kSum{"sum", nullptr, "return 0;", "return x;", kSumCombine, "return a;"};
const ReduceOp kMean{"mean", nullptr, "return 0;", "return x;", kSumCombine, "return a / (V)n;"};
const ReduceOp kNanSum{"nansum",    nullptr,    "return 0;", "return V_ISNAN(x) ? (V)0 : x;",
                       kSumCombine, "return a;"};
const ReduceOp kProd{"prod", nullptr, "return 1;", "return x;", "return a * b;", "return a;"};
// Complex sums and products: V is float2 / double2, ocl_cmul comes from kernels/complex.cl.
const ReduceOp kSumComplex{"sum_complex", nullptr,     "return (V)0;",
                           "return x;",   kSumCombine, "return a;"};
const ReduceOp kMeanComplex{"mean_complex", nullptr,     "return (V)0;",
                            "return x;",    kSumCombine, "return a / (V)((CR)n);"};
const ReduceOp kProdComplex{"prod_complex",           nullptr,    "return (V)(1, 0);", "return x;",
                            "return ocl_cmul(a, b);", "return a;"};
// amax/amin carry "a NaN was seen" beside the plain max/min: a NaN test inside the running
// comparison kept CPU drivers from vectorising the loop. Any NaN makes the result NaN, as on CPU.
const char* kFlaggedDecl = "typedef struct { V v; int nan; } ACC;";
const char* kFlaggedFin = "return a.nan ? (V)V_NAN : a.v;";
#define OCL_FLAGGED_IDENT(V0) "ACC r; r.v = " V0 "; r.nan = 0; return r;"
#define OCL_FLAGGED_MAP(X) "ACC r; r.v = " X "; r.nan = V_ISNAN(r.v); return r;"
#define OCL_FLAGGED_COMBINE(CMP) \
  "ACC r; r.v = a.v " CMP " b.v ? a.v : b.v; r.nan = a.nan | b.nan; return r;"
// Contiguous ranges in one work item: lanes of running maxima (minima) where a NaN sticks.
const char* kFlaggedFromLane = "ACC r; r.v = m; r.nan = V_ISNAN(m); return r;";
const codegen::Lanes kMaxLanes{"x", ">", false, kFlaggedFromLane};
const codegen::Lanes kMinLanes{"x", "<", false, kFlaggedFromLane};
const codegen::Lanes kAbsMaxLanes{"fabs(x)", ">", false, kFlaggedFromLane};
const codegen::Lanes kAbsMinLanes{"fabs(x)", "<", false, kFlaggedFromLane};
const ReduceOp kAmax{"amax",
                     kFlaggedDecl,
                     OCL_FLAGGED_IDENT("V_LOWEST"),
                     OCL_FLAGGED_MAP("x"),
                     OCL_FLAGGED_COMBINE(">"),
                     kFlaggedFin,
                     nullptr,
                     false,
                     nullptr,
                     false,
                     &kMaxLanes};
const ReduceOp kAmin{"amin",
                     kFlaggedDecl,
                     OCL_FLAGGED_IDENT("V_HIGHEST"),
                     OCL_FLAGGED_MAP("x"),
                     OCL_FLAGGED_COMBINE("<"),
                     kFlaggedFin,
                     nullptr,
                     false,
                     nullptr,
                     false,
                     &kMinLanes};
const ReduceOp kAny{"any", nullptr, "return 0;", "return x;", "return a | b;", "return a;"};
const ReduceOp kAll{"all", nullptr, "return 1;", "return x;", "return a & b;", "return a;"};

// Values with their index: NaN wins (the first NaN), ties go to the first occurrence, as on CPU.
const char* kIndexedDecl = "typedef struct { V v; long i; } ACC;";
const char* kIndexedMap = "ACC r; r.v = x; r.i = i; return r;";
const codegen::Lanes kMaxIdxLanes{"x", ">", true, nullptr};
const codegen::Lanes kMinIdxLanes{"x", "<", true, nullptr};
const ReduceOp kMaxIdx{"max_idx",
                       kIndexedDecl,
                       "ACC r; r.v = V_LOWEST; r.i = LONG_MAX; return r;",
                       kIndexedMap,
                       "int tb;\n"
                       "  if (V_ISNAN(a.v)) tb = V_ISNAN(b.v) && b.i < a.i;\n"
                       "  else if (V_ISNAN(b.v)) tb = 1;\n"
                       "  else tb = b.v > a.v || (b.v == a.v && b.i < a.i);\n"
                       "  return tb ? b : a;",
                       "return a.v;",
                       "return a.i;",
                       true,
                       nullptr,
                       false,
                       &kMaxIdxLanes};
const ReduceOp kMinIdx{"min_idx",
                       kIndexedDecl,
                       "ACC r; r.v = V_HIGHEST; r.i = LONG_MAX; return r;",
                       kIndexedMap,
                       "int tb;\n"
                       "  if (V_ISNAN(a.v)) tb = V_ISNAN(b.v) && b.i < a.i;\n"
                       "  else if (V_ISNAN(b.v)) tb = 1;\n"
                       "  else tb = b.v < a.v || (b.v == a.v && b.i < a.i);\n"
                       "  return tb ? b : a;",
                       "return a.v;",
                       "return a.i;",
                       true,
                       nullptr,
                       false,
                       &kMinIdxLanes};

// Welford / Chan et al. merging: numerically safe one-pass variance. s0 = correction.
const char* kWelfordDecl = "typedef struct { V mean; V m2; long n; } ACC;";
const char* kWelfordIdent = "ACC r; r.mean = 0; r.m2 = 0; r.n = 0; return r;";
const char* kWelfordMap = "ACC r; r.mean = x; r.m2 = 0; r.n = 1; return r;";
const char* kWelfordCombine =
    "if (a.n == 0) return b;\n  if (b.n == 0) return a;\n"
    "  ACC r; r.n = a.n + b.n;\n  const V d = b.mean - a.mean, f = (V)b.n / (V)r.n;\n"
    "  r.mean = a.mean + d * f;\n  r.m2 = a.m2 + b.m2 + d * d * (V)a.n * f;\n  return r;";
const char* kMeanOrNan = "return n == 0 ? (V)NAN : a.mean;";
// A work item's stretch: the mean, then the centred sums (corrected two-pass: the rounding of
// the mean is taken back out with u; NaN and inf propagate), merged across stretches with
// Chan's formula.
const codegen::TwoPass kWelfordTwoPass{
    "0",
    "return p + x;",
    "return p / (V)n;",
    "return x - p;",
    "const V d = x - p; return d * d;",
    "ACC r; r.n = n; r.mean = p + u / (V)n;\n"
    "  const V m2 = w - u * u / (V)n; r.m2 = m2 < 0 ? (V)0 : m2; return r;"};
const ReduceOp kVar{"var",       kWelfordDecl,    kWelfordIdent,
                    kWelfordMap, kWelfordCombine, "return a.m2 / fmax((V)0, (V)n - s0);",
                    kMeanOrNan,  false,           &kWelfordTwoPass};
const ReduceOp kStd{"std",       kWelfordDecl,    kWelfordIdent,
                    kWelfordMap, kWelfordCombine, "return sqrt(a.m2 / fmax((V)0, (V)n - s0));",
                    kMeanOrNan,  false,           &kWelfordTwoPass};

// Vector norms; s0 = p and s1 = 1/p for the general one. A complex input is read as its moduli
// (modulus_input), which is the norm CPU computes (std::abs of each element).
const ReduceOp kNorm2{"norm2",           nullptr, "return 0;", "return x * x;", kSumCombine,
                      "return sqrt(a);", nullptr, false,       nullptr,         true};
const ReduceOp kNorm1{"norm1",     nullptr, "return 0;", "return fabs(x);", kSumCombine,
                      "return a;", nullptr, false,       nullptr,           true};
const ReduceOp kNorm0{"norm0",     nullptr,     "return 0;", "return x != 0 ? (V)1 : (V)0;",
                      kSumCombine, "return a;", nullptr,     false,
                      nullptr,     true};
const ReduceOp kNormInf{"norm_inf",
                        kFlaggedDecl,
                        OCL_FLAGGED_IDENT("0"),
                        OCL_FLAGGED_MAP("fabs(x)"),
                        OCL_FLAGGED_COMBINE(">"),
                        kFlaggedFin,
                        nullptr,
                        false,
                        nullptr,
                        true,
                        &kAbsMaxLanes};
const ReduceOp kNormNegInf{"norm_neginf",
                           kFlaggedDecl,
                           OCL_FLAGGED_IDENT("V_HIGHEST"),
                           OCL_FLAGGED_MAP("fabs(x)"),
                           OCL_FLAGGED_COMBINE("<"),
                           kFlaggedFin,
                           nullptr,
                           false,
                           nullptr,
                           true,
                           &kAbsMinLanes};
const ReduceOp kNormP{"norm_p",    nullptr,
                      "return 0;", "return pow(fabs(x), s0);",
                      kSumCombine, "return pow(a, s1);",
                      nullptr,     false,
                      nullptr,     true};

// logsumexp in one pass: a running (max, sum of exp(x - max)) pair, rescaled on merge with a
// single exp (of minus the gap; none when the maxima are equal, which keeps inf + inf = inf).
// Two passes per work item: the maximum (NaN skipped; an infinite one shifts by 0, so that
// inf stays inf and all -inf gives -inf), then one exp per element with no rescaling.
const codegen::TwoPass kLogSumExpTwoPass{"-INFINITY",
                                         "return x > p ? x : p;",
                                         "return p == INFINITY || p == -INFINITY ? (V)0 : p;",
                                         "return ocl_exp(x - p);",
                                         "return 0;",
                                         "ACC r; r.m = p; r.s = u; return r;"};
const ReduceOp kLogSumExp{
    "logsumexp",
    "typedef struct { V m; V s; } ACC;",
    "ACC r; r.m = -INFINITY; r.s = 0; return r;",
    "ACC r; r.m = x; r.s = 1; return r;",
    "if (a.s == 0) return b;\n  if (b.s == 0) return a;\n"
    "  const int a_top = V_ISNAN(a.m) || a.m >= b.m;\n"
    "  const V e = a.m == b.m ? (V)1 : ocl_exp(a_top ? b.m - a.m : a.m - b.m);\n"
    "  ACC r; r.m = a_top ? a.m : b.m;\n"
    "  r.s = a_top ? a.s + b.s * e : a.s * e + b.s;\n  return r;",
    "return a.s == 0 ? -INFINITY : a.m + log(a.s);",
    nullptr,
    false,
    &kLogSumExpTwoPass};

// ---- helpers ----
bool isComplex(const at::Tensor& t) {
  return t.defined() && c10::isComplexType(t.scalar_type());
}

// Accumulation type of sums and products with result dtype `out` (ints in int64, as CPU).
c10::ScalarType sumAcc(c10::ScalarType out) {
  if (out == c10::kDouble || c10::isComplexType(out)) return out;
  if (c10::isFloatingType(out)) return c10::kFloat;
  return c10::kLong;
}

// Accumulation type of comparisons: the input's own compute type.
c10::ScalarType cmpAcc(c10::ScalarType in) {
  return in == c10::kHalf || in == c10::kBFloat16 ? c10::kFloat : in;
}

// The complex form of a sum or product (callers let only these reach complex accumulators).
const ReduceOp& complexForm(const ReduceOp& op) {
  if (&op == &kSum) return kSumComplex;
  if (&op == &kMean) return kMeanComplex;
  TORCH_INTERNAL_ASSERT(&op == &kProd, "torch-ocl: no complex form of reduction ", op.name);
  return kProdComplex;
}

void reduce(const ReduceOp& op, const at::Tensor& self, const at::Tensor& out,
            const at::Tensor& out2, at::OptionalIntArrayRef dims, bool keepdim, c10::ScalarType acc,
            std::array<c10::Scalar, 2> scalars = {}) {
  checkSameDevice({self, out, out2});
  auto iter = codegen::reductionIter(self, out, out2, dims, keepdim);
  codegen::launchReduce(c10::isComplexType(acc) ? complexForm(op) : op, iter, acc, scalars);
}

// ---- sum / mean / prod ----
template <class Meta>
void sumLike(const ReduceOp& op, at::Tensor* out, Mode mode, const at::Tensor& self,
             at::OptionalIntArrayRef dim, bool keepdim, std::optional<c10::ScalarType> dtype,
             at::Tensor& result) {
  Structured<Meta> s(mode, out);
  s.meta(self, dim, keepdim, dtype);
  result = s.output();
  if (&op == &kSum || &op == &kMean || &op == &kNanSum) {
    checkSameDevice({self, result});
    const RowStat kind = &op == &kSum    ? RowStat::kSum
                         : &op == &kMean ? RowStat::kMean
                                         : RowStat::kNanSum;
    if (rowStatsCpu(kind, self, dim, 0, result, {})) return;
  }
  reduce(op, self, result, {}, dim, keepdim, sumAcc(result.scalar_type()));
}

// sum and nansum (NaN counted as zero): sum's meta function for shapes and dtypes; complex sums
// accumulate in their own dtype, and nansum refuses complex as CPU does.
template <const ReduceOp* kOp>
at::Tensor sumLikeFn(const char* name, const char* overload, const at::Tensor& self,
                     at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(kOp != &kNanSum || !isComplex(self), "nansum does not support complex inputs");
  at::Tensor result;
  sumLike<at::meta::structured_sum_dim_IntList>(*kOp, nullptr, Mode::kFunctional, self, dim,
                                                keepdim, dtype, result);
  return result;
}

template <const ReduceOp* kOp>
at::Tensor& sumLikeOut(const char* name, const char* overload, const at::Tensor& self,
                       at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  TORCH_CHECK(kOp != &kNanSum || !isComplex(self), "nansum does not support complex inputs");
  at::Tensor result;
  sumLike<at::meta::structured_sum_dim_IntList>(*kOp, &out, Mode::kOut, self, dim, keepdim, dtype,
                                                result);
  return out;
}

at::Tensor sumDim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype) {
  return sumLikeFn<&kSum>("aten::sum", "dim_IntList", self, dim, keepdim, dtype);
}
at::Tensor& sumOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  return sumLikeOut<&kSum>("aten::sum", "IntList_out", self, dim, keepdim, dtype, out);
}
at::Tensor nansumFn(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  return sumLikeFn<&kNanSum>("aten::nansum", "", self, dim, keepdim, dtype);
}
at::Tensor& nansumOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                      std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  return sumLikeOut<&kNanSum>("aten::nansum", "out", self, dim, keepdim, dtype, out);
}

at::Tensor sumAll(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sumDim(self, std::nullopt, false, dtype);
}

at::Tensor meanDim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  at::Tensor result;
  sumLike<at::meta::structured_mean_dim>(kMean, nullptr, Mode::kFunctional, self, dim, keepdim,
                                         dtype, result);
  return result;
}

at::Tensor& meanOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  at::Tensor result;
  sumLike<at::meta::structured_mean_dim>(kMean, &out, Mode::kOut, self, dim, keepdim, dtype,
                                         result);
  return out;
}

at::Tensor meanAll(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return meanDim(self, std::nullopt, false, dtype);
}

// prod over one dim into out (of the meta function's shape and dtype): the column tiles on CPU
// drivers where they apply, else the generator.
void prodInto(const at::Tensor& self, int64_t dim, bool keepdim, const at::Tensor& out) {
  checkSameDevice({self, out});
  if (rowStatsCpu(RowStat::kProd, self, at::IntArrayRef{dim}, 0, out, {})) return;
  reduce(kProd, self, out, {}, at::IntArrayRef{dim}, keepdim, sumAcc(out.scalar_type()));
}

at::Tensor prodDim(const at::Tensor& self, int64_t dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  Structured<at::meta::structured_prod_dim_int> s(Mode::kFunctional, nullptr);
  s.meta(self, dim, keepdim, dtype);
  prodInto(self, dim, keepdim, s.output());
  return s.output();
}

at::Tensor& prodOut(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  Structured<at::meta::structured_prod_dim_int> s(Mode::kOut, &out);
  s.meta(self, dim, keepdim, dtype);
  prodInto(self, dim, keepdim, out);
  return out;
}

at::Tensor prodAll(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType t = at::native::get_dtype_from_self(self, dtype, /*promote_integers=*/true);
  at::Tensor out = at::empty({}, self.options().dtype(t));
  reduce(kProd, self, out, {}, std::nullopt, false, sumAcc(t));
  return out;
}

// ---- amax / amin / max / min ----
template <class Meta>
at::Tensor& aminmax(const ReduceOp& op, at::Tensor* out, Mode mode, const at::Tensor& self,
                    at::IntArrayRef dim, bool keepdim, at::Tensor& result) {
  Structured<Meta> s(mode, out);
  s.meta(self, dim, keepdim);
  result = s.output();
  checkSameDevice({self, result});
  if (rowStatsCpu(&op == &kAmax ? RowStat::kAmax : RowStat::kAmin, self, dim, 0, result, {}))
    return result;
  reduce(op, self, result, {}, dim, keepdim, cmpAcc(self.scalar_type()));
  return result;
}

at::Tensor amaxFn(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  at::Tensor r;
  return aminmax<at::meta::structured_amax>(kAmax, nullptr, Mode::kFunctional, self, dim, keepdim,
                                            r);
}
at::Tensor& amaxOut(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  at::Tensor r;
  aminmax<at::meta::structured_amax>(kAmax, &out, Mode::kOut, self, dim, keepdim, r);
  return out;
}
at::Tensor aminFn(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  at::Tensor r;
  return aminmax<at::meta::structured_amin>(kAmin, nullptr, Mode::kFunctional, self, dim, keepdim,
                                            r);
}
at::Tensor& aminOut(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  at::Tensor r;
  aminmax<at::meta::structured_amin>(kAmin, &out, Mode::kOut, self, dim, keepdim, r);
  return out;
}

void fullMinMax(const ReduceOp& op, const char* name, const at::Tensor& self,
                const at::Tensor& out) {
  TORCH_CHECK(self.numel() > 0, name,
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  reduce(op, self, out, {}, std::nullopt, false, cmpAcc(self.scalar_type()));
}

at::Tensor maxAll(const at::Tensor& self) {
  if (isComplex(self)) return runFallback("aten::max", "", {self})[0].toTensor();
  at::Tensor out = at::empty({}, self.options());
  fullMinMax(kAmax, "max", self, out);
  return out;
}
at::Tensor minAll(const at::Tensor& self) {
  if (isComplex(self)) return runFallback("aten::min", "", {self})[0].toTensor();
  at::Tensor out = at::empty({}, self.options());
  fullMinMax(kAmin, "min", self, out);
  return out;
}
at::Tensor& maxAllOut(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "max(): Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {});
  fullMinMax(kAmax, "max", self, out);
  return out;
}
at::Tensor& minAllOut(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "min(): Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, {});
  fullMinMax(kAmin, "min", self, out);
  return out;
}

template <class Meta>
void minmaxDim(const ReduceOp& op, Mode mode, at::Tensor* values, at::Tensor* indices,
               const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& v, at::Tensor& i) {
  if (mode == Mode::kOut) {  // CPU's checks (they live in its kernel, not in the meta function)
    TORCH_CHECK(values->scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ",
                self.scalar_type(), ", but got ", values->scalar_type(), " instead");
    TORCH_CHECK(indices->scalar_type() == c10::kLong,
                "Expected out tensor to have dtype long int, but got ", indices->scalar_type(),
                " instead");
  }
  Structured<Meta> s(mode, values, indices);
  const int64_t wrapped = s.meta(self, dim, keepdim).dim;
  v = s.output(0);
  i = s.output(1);
  checkSameDevice({self, v, i});
  const RowStat kind = &op == &kMaxIdx ? RowStat::kMaxIdx : RowStat::kMinIdx;
  if (v.numel() > 0 && rowStatsCpu(kind, self, at::IntArrayRef{wrapped}, 0, i, v)) return;
  reduce(op, self, v, i, at::IntArrayRef{wrapped}, keepdim, cmpAcc(self.scalar_type()));
}

std::tuple<at::Tensor, at::Tensor> maxDim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v, i;
  minmaxDim<at::meta::structured_max_dim>(kMaxIdx, Mode::kFunctional, nullptr, nullptr, self, dim,
                                          keepdim, v, i);
  return {v, i};
}
std::tuple<at::Tensor&, at::Tensor&> maxDimOut(const at::Tensor& self, int64_t dim, bool keepdim,
                                               at::Tensor& max, at::Tensor& max_values) {
  at::Tensor v, i;
  minmaxDim<at::meta::structured_max_dim>(kMaxIdx, Mode::kOut, &max, &max_values, self, dim,
                                          keepdim, v, i);
  return {max, max_values};
}
std::tuple<at::Tensor, at::Tensor> minDim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor v, i;
  minmaxDim<at::meta::structured_min_dim>(kMinIdx, Mode::kFunctional, nullptr, nullptr, self, dim,
                                          keepdim, v, i);
  return {v, i};
}
std::tuple<at::Tensor&, at::Tensor&> minDimOut(const at::Tensor& self, int64_t dim, bool keepdim,
                                               at::Tensor& min, at::Tensor& min_indices) {
  at::Tensor v, i;
  minmaxDim<at::meta::structured_min_dim>(kMinIdx, Mode::kOut, &min, &min_indices, self, dim,
                                          keepdim, v, i);
  return {min, min_indices};
}

// argmax/argmin: the indexed reduction with a scratch values output; dim=None flattens.
template <class Meta>
at::Tensor& argReduce(const ReduceOp& op, Mode mode, at::Tensor* out, const at::Tensor& self,
                      std::optional<int64_t> dim, bool keepdim, at::Tensor& result) {
  Structured<Meta> s(mode, out);
  s.meta(self, dim, keepdim);
  result = s.output();
  if (result.numel() == 0) return result;
  if (dim) {
    checkSameDevice({self, result});
    const RowStat kind = &op == &kMaxIdx ? RowStat::kMaxIdx : RowStat::kMinIdx;
    if (rowStatsCpu(kind, self, at::IntArrayRef{*dim}, 0, result, {})) return result;
    at::Tensor values = at::empty(result.sizes(), self.options());
    reduce(op, self, values, result, at::IntArrayRef{*dim}, keepdim, cmpAcc(self.scalar_type()));
  } else {
    const at::Tensor flat = self.reshape({-1});
    const at::Tensor scalar_out = result.as_strided({}, {});
    at::Tensor values = at::empty({}, self.options());
    reduce(op, flat, values, scalar_out, at::IntArrayRef{0}, false, cmpAcc(self.scalar_type()));
  }
  return result;
}

at::Tensor argmaxFn(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor r;
  return argReduce<at::meta::structured_argmax>(kMaxIdx, Mode::kFunctional, nullptr, self, dim,
                                                keepdim, r);
}
at::Tensor& argmaxOut(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                      at::Tensor& out) {
  at::Tensor r;
  argReduce<at::meta::structured_argmax>(kMaxIdx, Mode::kOut, &out, self, dim, keepdim, r);
  return out;
}
at::Tensor argminFn(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  at::Tensor r;
  return argReduce<at::meta::structured_argmin>(kMinIdx, Mode::kFunctional, nullptr, self, dim,
                                                keepdim, r);
}
at::Tensor& argminOut(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                      at::Tensor& out) {
  at::Tensor r;
  argReduce<at::meta::structured_argmin>(kMinIdx, Mode::kOut, &out, self, dim, keepdim, r);
  return out;
}

// ---- any / all ----
template <class Meta, class... A>
at::Tensor& boolReduce(const ReduceOp& op, Mode mode, at::Tensor* out, at::Tensor& result,
                       const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                       const A&... meta_args) {
  Structured<Meta> s(mode, out);
  s.meta(self, meta_args...);
  result = s.output();
  // Bool over one dim: any is amax and all is amin (the column tiles on CPU drivers).
  if (self.scalar_type() == c10::kBool && result.scalar_type() == c10::kBool) {
    checkSameDevice({self, result});
    if (rowStatsCpu(&op == &kAny ? RowStat::kAmax : RowStat::kAmin, self, dims, 0, result, {}))
      return result;
  }
  // Complex: truth is "not zero"; ne decides itself whether it runs natively.
  const at::Tensor in = isComplex(self) ? self.ne(0) : self;
  reduce(op, in, result, {}, dims, keepdim, c10::kBool);
  return result;
}

at::Tensor anyAll(const at::Tensor& self) {
  at::Tensor r;
  return boolReduce<at::meta::structured_any>(kAny, Mode::kFunctional, nullptr, r, self,
                                              std::nullopt, false);
}
at::Tensor& anyAllOut(const at::Tensor& self, at::Tensor& out) {
  at::Tensor r;
  return boolReduce<at::meta::structured_any>(kAny, Mode::kOut, &out, r, self, std::nullopt, false);
}
at::Tensor anyDim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor r;
  return boolReduce<at::meta::structured_any_dim>(kAny, Mode::kFunctional, nullptr, r, self,
                                                  at::IntArrayRef{dim}, keepdim, dim, keepdim);
}
at::Tensor& anyDimOut(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  at::Tensor r;
  return boolReduce<at::meta::structured_any_dim>(kAny, Mode::kOut, &out, r, self,
                                                  at::IntArrayRef{dim}, keepdim, dim, keepdim);
}
at::Tensor anyDims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  at::Tensor r;
  return boolReduce<at::meta::structured_any_dims>(kAny, Mode::kFunctional, nullptr, r, self, dim,
                                                   keepdim, dim, keepdim);
}
at::Tensor& anyDimsOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       at::Tensor& out) {
  at::Tensor r;
  return boolReduce<at::meta::structured_any_dims>(kAny, Mode::kOut, &out, r, self, dim, keepdim,
                                                   dim, keepdim);
}
at::Tensor allAll(const at::Tensor& self) {
  at::Tensor r;
  return boolReduce<at::meta::structured_all>(kAll, Mode::kFunctional, nullptr, r, self,
                                              std::nullopt, false);
}
at::Tensor& allAllOut(const at::Tensor& self, at::Tensor& out) {
  at::Tensor r;
  return boolReduce<at::meta::structured_all>(kAll, Mode::kOut, &out, r, self, std::nullopt, false);
}
at::Tensor allDim(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor r;
  return boolReduce<at::meta::structured_all_dim>(kAll, Mode::kFunctional, nullptr, r, self,
                                                  at::IntArrayRef{dim}, keepdim, dim, keepdim);
}
at::Tensor& allDimOut(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  at::Tensor r;
  return boolReduce<at::meta::structured_all_dim>(kAll, Mode::kOut, &out, r, self,
                                                  at::IntArrayRef{dim}, keepdim, dim, keepdim);
}
at::Tensor allDims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  at::Tensor r;
  return boolReduce<at::meta::structured_all_dims>(kAll, Mode::kFunctional, nullptr, r, self, dim,
                                                   keepdim, dim, keepdim);
}
at::Tensor& allDimsOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       at::Tensor& out) {
  at::Tensor r;
  return boolReduce<at::meta::structured_all_dims>(kAll, Mode::kOut, &out, r, self, dim, keepdim,
                                                   dim, keepdim);
}

// ---- var / std ----
void checkVarDtype(const at::Tensor& self, const char* fn) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()), fn,
              " only support floating point and complex dtypes");
}

c10::ScalarType floatAcc(c10::ScalarType t) {
  return t == c10::kDouble ? c10::kDouble : c10::kFloat;
}

// var or std (op) into out and, when defined, the mean into out2.
void varStd(const ReduceOp& op, const at::Tensor& self, at::OptionalIntArrayRef dim,
            const std::optional<at::Scalar>& correction, bool keepdim, const at::Tensor& out,
            const at::Tensor& out2) {
  const double c = correction ? correction->toDouble() : 1.0;
  checkSameDevice({self, out, out2});
  if (rowStatsCpu(&op == &kStd ? RowStat::kStd : RowStat::kVar, self, dim, c, out, out2)) return;
  reduce(op, self, out, out2, dim, keepdim, floatAcc(self.scalar_type()), {c, 0});
}

at::Tensor varStdResult(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                        c10::ScalarType dtype) {
  const auto mask = at::native::make_dim_mask(dim, self.dim());
  return at::empty(at::native::shape_from_dim_mask(self, mask, keepdim),
                   self.options().dtype(dtype));
}
at::Tensor varStdResult(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return varStdResult(self, dim, keepdim, self.scalar_type());
}

// Complex var/std as CPU computes them: the variances of the real and imaginary parts (same
// correction) added, i.e. E|x - mean|^2; std its square root; the mean (out2, complex) built from
// the two parts' means.
void complexVarStd(bool take_sqrt, const at::Tensor& self, at::OptionalIntArrayRef dim,
                   const std::optional<at::Scalar>& correction, bool keepdim, const at::Tensor& out,
                   const at::Tensor& out2) {
  const at::Tensor re = at::real(self), im = at::imag(self);
  at::Tensor vr = varStdResult(re, dim, keepdim), vi = varStdResult(im, dim, keepdim);
  at::Tensor mr, mi;
  if (out2.defined()) {
    mr = varStdResult(re, dim, keepdim);
    mi = varStdResult(im, dim, keepdim);
  }
  varStd(kVar, re, dim, correction, keepdim, vr, mr);
  varStd(kVar, im, dim, correction, keepdim, vi, mi);
  at::add_out(const_cast<at::Tensor&>(out), vr, vi);
  if (take_sqrt) const_cast<at::Tensor&>(out).sqrt_();
  if (out2.defined()) const_cast<at::Tensor&>(out2).copy_(at::complex(mr, mi));
}

c10::ScalarType realOf(const at::Tensor& t) {
  return c10::toRealValueType(t.scalar_type());
}

at::Tensor varFn(const at::Tensor& self, at::OptionalIntArrayRef dim,
                 const std::optional<at::Scalar>& correction, bool keepdim) {
  checkVarDtype(self, "std and var");
  at::Tensor out = varStdResult(self, dim, keepdim, realOf(self));
  if (isComplex(self)) {
    complexVarStd(false, self, dim, correction, keepdim, out, {});
    return out;
  }
  varStd(kVar, self, dim, correction, keepdim, out, {});
  return out;
}
at::Tensor stdFn(const at::Tensor& self, at::OptionalIntArrayRef dim,
                 const std::optional<at::Scalar>& correction, bool keepdim) {
  checkVarDtype(self, "std and var");
  at::Tensor out = varStdResult(self, dim, keepdim, realOf(self));
  if (isComplex(self)) {
    complexVarStd(true, self, dim, correction, keepdim, out, {});
    return out;
  }
  varStd(kStd, self, dim, correction, keepdim, out, {});
  return out;
}
at::Tensor& varStdOut(const ReduceOp& op, const char* name, const at::Tensor& self,
                      at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                      bool keepdim, at::Tensor& out) {
  checkVarDtype(self, "std and var");
  const auto mask = at::native::make_dim_mask(dim, self.dim());
  if (isComplex(self)) {
    // As CPU: the out dtype's real precision, and a complex out takes the real result.
    const c10::ScalarType rt = c10::toRealValueType(out.scalar_type());
    TORCH_CHECK(c10::isFloatingType(rt), name,
                ": Expected a floating point or complex out dtype, got ", out.scalar_type());
    checkSameDevice({self, out});
    const at::Tensor src = self.to(c10::toComplexType(rt));
    at::Tensor r = varStdResult(src, dim, keepdim, rt);
    complexVarStd(&op == &kStd, src, dim, correction, keepdim, r, {});
    at::native::resize_output(out, r.sizes());
    out.copy_(r);
    return out;
  }
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), name, ": Expected out dtype ",
              self.scalar_type(), " but got ", out.scalar_type());
  at::native::resize_output(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  varStd(op, self, dim, correction, keepdim, out, {});
  return out;
}
at::Tensor& varOut(const at::Tensor& self, at::OptionalIntArrayRef dim,
                   const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return varStdOut(kVar, "aten::var", self, dim, correction, keepdim, out);
}
at::Tensor& stdOut(const at::Tensor& self, at::OptionalIntArrayRef dim,
                   const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return varStdOut(kStd, "aten::std", self, dim, correction, keepdim, out);
}
std::tuple<at::Tensor, at::Tensor> varMean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                           const std::optional<at::Scalar>& correction,
                                           bool keepdim) {
  checkVarDtype(self, "std and var");
  at::Tensor v = varStdResult(self, dim, keepdim, realOf(self)),
             m = varStdResult(self, dim, keepdim);
  if (isComplex(self)) {
    complexVarStd(false, self, dim, correction, keepdim, v, m);
    return {v, m};
  }
  varStd(kVar, self, dim, correction, keepdim, v, m);
  return {v, m};
}
std::tuple<at::Tensor, at::Tensor> stdMean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                           const std::optional<at::Scalar>& correction,
                                           bool keepdim) {
  checkVarDtype(self, "std and var");
  at::Tensor v = varStdResult(self, dim, keepdim, realOf(self)),
             m = varStdResult(self, dim, keepdim);
  if (isComplex(self)) {
    complexVarStd(true, self, dim, correction, keepdim, v, m);
    return {v, m};
  }
  varStd(kStd, self, dim, correction, keepdim, v, m);
  return {v, m};
}

// ---- norms ----
void vectorNorm(const at::Tensor& input, double p, at::OptionalIntArrayRef dim, bool keepdim,
                const at::Tensor& out) {
  // A complex input's norm is the norm of its moduli, which the kernels read (modulus_input) in
  // the complex type of the result's precision (a dtype= argument converts first, as on CPU).
  at::Tensor self = input;
  if (isComplex(input)) {
    const c10::ScalarType ct = c10::toComplexType(out.scalar_type());
    if (input.scalar_type() != ct) self = input.to(ct);
  }
  const c10::ScalarType acc =
      self.scalar_type() == c10::kDouble || out.scalar_type() == c10::kDouble ? c10::kDouble
                                                                              : c10::kFloat;
  // Over a non-last dim of a real input with out of its dtype: the column tiles on CPU drivers
  // (orders 2, 1, 0 and +-inf; other orders take the generator's scalar pow).
  const bool tiled_order = p == 2.0 || p == 1.0 || p == 0.0 || std::isinf(p);
  if (tiled_order && !isComplex(self) && self.scalar_type() == out.scalar_type()) {
    checkSameDevice({self, out});
    const RowStat kind = p == 2.0   ? RowStat::kNorm2
                         : p == 1.0 ? RowStat::kNorm1
                         : p == 0.0 ? RowStat::kNorm0
                         : p > 0    ? RowStat::kNormInf
                                    : RowStat::kNormNegInf;
    if (rowStatsCpu(kind, self, dim, 0, out, {})) return;
  }
  // linalg_vector_norm's dim=[] means all dims, like None.
  if (p == 2.0) return reduce(kNorm2, self, out, {}, dim, keepdim, acc);
  if (p == 1.0) return reduce(kNorm1, self, out, {}, dim, keepdim, acc);
  if (p == 0.0) return reduce(kNorm0, self, out, {}, dim, keepdim, acc);
  if (std::isinf(p) && p > 0) return reduce(kNormInf, self, out, {}, dim, keepdim, acc);
  if (std::isinf(p)) return reduce(kNormNegInf, self, out, {}, dim, keepdim, acc);
  reduce(kNormP, self, out, {}, dim, keepdim, acc, {p, 1.0 / p});
}

at::Tensor linalgVectorNorm(const at::Tensor& self, const at::Scalar& ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<c10::ScalarType> dtype) {
  Structured<at::meta::structured_linalg_vector_norm> s(Mode::kFunctional, nullptr);
  s.meta(self, ord, dim, keepdim, dtype);
  vectorNorm(self, ord.toDouble(), dim, keepdim, s.output());
  return s.output();
}
at::Tensor& linalgVectorNormOut(const at::Tensor& self, const at::Scalar& ord,
                                at::OptionalIntArrayRef dim, bool keepdim,
                                std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  Structured<at::meta::structured_linalg_vector_norm> s(Mode::kOut, &out);
  s.meta(self, ord, dim, keepdim, dtype);
  vectorNorm(self, ord.toDouble(), dim, keepdim, out);
  return out;
}

at::OptionalScalarRef scalarRef(const std::optional<at::Scalar>& p) {
  return p ? at::OptionalScalarRef(&*p) : at::OptionalScalarRef();
}

at::Tensor normDim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                   bool keepdim) {
  Structured<at::meta::structured_norm_ScalarOpt_dim> s(Mode::kFunctional, nullptr);
  s.meta(self, scalarRef(p), dim, keepdim);
  vectorNorm(self, p ? p->toDouble() : 2.0, dim, keepdim, s.output());
  return s.output();
}
at::Tensor& normDimOut(const at::Tensor& self, const std::optional<at::Scalar>& p,
                       at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  Structured<at::meta::structured_norm_ScalarOpt_dim> s(Mode::kOut, &out);
  s.meta(self, scalarRef(p), dim, keepdim);
  vectorNorm(self, p ? p->toDouble() : 2.0, dim, keepdim, out);
  return out;
}
at::Tensor normDimDtype(const at::Tensor& self, const std::optional<at::Scalar>& p,
                        at::IntArrayRef dim, bool keepdim, c10::ScalarType dtype) {
  Structured<at::meta::structured_norm_ScalarOpt_dim_dtype> s(Mode::kFunctional, nullptr);
  s.meta(self, scalarRef(p), dim, keepdim, dtype);
  vectorNorm(self, p ? p->toDouble() : 2.0, dim, keepdim, s.output());
  return s.output();
}
at::Tensor& normDimDtypeOut(const at::Tensor& self, const std::optional<at::Scalar>& p,
                            at::IntArrayRef dim, bool keepdim, c10::ScalarType dtype,
                            at::Tensor& out) {
  Structured<at::meta::structured_norm_ScalarOpt_dim_dtype> s(Mode::kOut, &out);
  s.meta(self, scalarRef(p), dim, keepdim, dtype);
  vectorNorm(self, p ? p->toDouble() : 2.0, dim, keepdim, out);
  return out;
}

// ---- logsumexp ----
c10::ScalarType logSumExpType(const at::Tensor& self) {
  return c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)
             ? c10::typeMetaToScalarType(c10::get_default_dtype())
             : self.scalar_type();
}

// Complex logsumexp, CPU's composition: the maximum of the real parts (an infinite one shifts
// by 0) taken out before exp, the sum of exp, its log, the maximum added back.
at::Tensor& complexLogSumExpOut(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                                at::Tensor& out) {
  if (self.numel() != 0) {
    const at::Tensor maxes = at::amax(at::real(self), dim, true);
    at::Tensor maxes_squeezed = keepdim ? maxes : at::squeeze(maxes, dim);
    maxes_squeezed.masked_fill_(maxes_squeezed.abs() == INFINITY, 0);
    at::sum_out(out, (self - maxes).exp_(), dim, keepdim);
    out.log_().add_(maxes_squeezed);
  } else {
    at::sum_out(out, at::exp(self), dim, keepdim);
    out.log_();
  }
  return out;
}

at::Tensor& logSumExpOut(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                         at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == logSumExpType(self),
              "logsumexp(): Expected out tensor to have dtype ", logSumExpType(self), ", but got ",
              out.scalar_type(), " instead");
  const auto mask = at::native::make_dim_mask(dim, self.dim());
  at::native::resize_output(out, at::native::shape_from_dim_mask(self, mask, keepdim));
  checkSameDevice({self, out});
  if (isComplex(self)) return complexLogSumExpOut(self, dim, keepdim, out);
  if (rowStatsCpu(RowStat::kLogSumExp, self, dim, 0, out, {})) return out;
  reduce(kLogSumExp, self, out, {}, dim, keepdim, floatAcc(out.scalar_type()));
  return out;
}

at::Tensor logSumExp(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  at::Tensor out = at::empty({0}, self.options().dtype(logSumExpType(self)));
  return logSumExpOut(self, dim, keepdim, out);
}

}  // namespace

// aminmax: shapes and checks from PyTorch's meta function, values from the native amin/amax.
std::tuple<at::Tensor&, at::Tensor&> aminmaxOut(const at::Tensor& self, std::optional<int64_t> dim,
                                                bool keepdim, at::Tensor& min, at::Tensor& max) {
  // The CPU kernel's checks first (the meta function's message for empty inputs differs).
  if (dim.has_value()) {
    at::native::zero_numel_check_dims(self, *dim, "aminmax");
  } else {
    TORCH_CHECK(self.numel() != 0,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                "identity.");
  }
  const auto [min_meta, max_meta] = at::aminmax(self.to(at::kMeta), dim, keepdim);
  at::Tensor mn, mx;
  if (dim.has_value()) {
    mn = at::amin(self, {*dim}, keepdim);
    mx = at::amax(self, {*dim}, keepdim);
  } else {
    mn = at::amin(self, {}, false).reshape(min_meta.sizes());
    mx = at::amax(self, {}, false).reshape(max_meta.sizes());
  }
  at::native::resize_output(min, min_meta.sizes());
  at::native::resize_output(max, max_meta.sizes());
  min.copy_(mn);
  max.copy_(mx);
  return {min, max};
}

std::tuple<at::Tensor, at::Tensor> aminmaxFn(const at::Tensor& self, std::optional<int64_t> dim,
                                             bool keepdim) {
  at::Tensor min = at::empty({0}, self.options()), max = at::empty({0}, self.options());
  aminmaxOut(self, dim, keepdim, min, max);
  return {min, max};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("aminmax", TORCH_FN(aminmaxFn));
  m.impl("aminmax.out", TORCH_FN(aminmaxOut));
  m.impl("all", TORCH_FN(allAll));
  m.impl("all.all_out", TORCH_FN(allAllOut));
  m.impl("all.dim", TORCH_FN(allDim));
  m.impl("all.dims", TORCH_FN(allDims));
  m.impl("all.dims_out", TORCH_FN(allDimsOut));
  m.impl("all.out", TORCH_FN(allDimOut));
  m.impl("amax", TORCH_FN(amaxFn));
  m.impl("amax.out", TORCH_FN(amaxOut));
  m.impl("amin", TORCH_FN(aminFn));
  m.impl("amin.out", TORCH_FN(aminOut));
  m.impl("any", TORCH_FN(anyAll));
  m.impl("any.all_out", TORCH_FN(anyAllOut));
  m.impl("any.dim", TORCH_FN(anyDim));
  m.impl("any.dims", TORCH_FN(anyDims));
  m.impl("any.dims_out", TORCH_FN(anyDimsOut));
  m.impl("any.out", TORCH_FN(anyDimOut));
  m.impl("argmax", TORCH_FN(argmaxFn));
  m.impl("argmax.out", TORCH_FN(argmaxOut));
  m.impl("argmin", TORCH_FN(argminFn));
  m.impl("argmin.out", TORCH_FN(argminOut));
  m.impl("linalg_vector_norm", TORCH_FN(linalgVectorNorm));
  m.impl("linalg_vector_norm.out", TORCH_FN(linalgVectorNormOut));
  m.impl("logsumexp", TORCH_FN(logSumExp));
  m.impl("logsumexp.out", TORCH_FN(logSumExpOut));
  m.impl("max", TORCH_FN(maxAll));
  m.impl("max.dim", TORCH_FN(maxDim));
  m.impl("max.dim_max", TORCH_FN(maxDimOut));
  m.impl("max.unary_out", TORCH_FN(maxAllOut));
  m.impl("mean", TORCH_FN(meanAll));
  m.impl("mean.dim", TORCH_FN(meanDim));
  m.impl("mean.out", TORCH_FN(meanOut));
  m.impl("min", TORCH_FN(minAll));
  m.impl("min.dim", TORCH_FN(minDim));
  m.impl("min.dim_min", TORCH_FN(minDimOut));
  m.impl("min.unary_out", TORCH_FN(minAllOut));
  m.impl("norm.ScalarOpt_dim", TORCH_FN(normDim));
  m.impl("norm.ScalarOpt_dim_dtype", TORCH_FN(normDimDtype));
  m.impl("norm.dtype_out", TORCH_FN(normDimDtypeOut));
  m.impl("norm.out", TORCH_FN(normDimOut));
  m.impl("prod", TORCH_FN(prodAll));
  m.impl("prod.dim_int", TORCH_FN(prodDim));
  m.impl("prod.int_out", TORCH_FN(prodOut));
  m.impl("std.correction", TORCH_FN(stdFn));
  m.impl("std.correction_out", TORCH_FN(stdOut));
  m.impl("std_mean.correction", TORCH_FN(stdMean));
  m.impl("sum", TORCH_FN(sumAll));
  m.impl("sum.IntList_out", TORCH_FN(sumOut));
  m.impl("sum.dim_IntList", TORCH_FN(sumDim));
  m.impl("nansum", TORCH_FN(nansumFn));
  m.impl("nansum.out", TORCH_FN(nansumOut));
  m.impl("var.correction", TORCH_FN(varFn));
  m.impl("var.correction_out", TORCH_FN(varOut));
  m.impl("var_mean.correction", TORCH_FN(varMean));
}

}  // namespace torch_ocl::aten
