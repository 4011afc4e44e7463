// arange, linspace, logspace and eye on ocl. arange.start_out and linspace.out are ATen's own
// device-generic functions (their checks, sizes and resizing are CPU's); they call the dispatch
// stubs registered here for PrivateUse1. logspace.out and eye.m_out follow CPU's code.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/RangeFactories.h>
#include <ATen/ops/arange_native.h>
#include <ATen/ops/linspace_native.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"

#include <cmath>
#include <complex>

namespace torch_ocl::aten {
namespace {

char kRangeFamily;

enum Mode : int { kArange = 0, kLinspace = 1, kLogspace = 2 };

// Values are computed in REAL (double where the device has fp64, as CPU's accumulate type) or in
// long for integer arange; then converted to the output dtype.
cl_program rangeProgram(c10::DeviceIndex idx, c10::ScalarType t, bool dbl) {
  return programs(idx).get({&kRangeFamily, dtypeCode(t) | (dbl ? 64u : 0u)}, [&] {
    const std::string real = dbl ? "double" : "float";
    const std::string st = clStorageType(t);
    const std::string to = convertExpr(dbl ? c10::kDouble : c10::kFloat, t, "v");
    const std::string to_long = convertExpr(c10::kLong, t, "v");
    const std::string h = "#define REAL " + real + "\n#define ST " + st +
                          "\n#define STORE_REAL(d, i, v) " + storeStmt(t, "d", "i", to) +
                          "\n#define STORE_LONG(d, i, v) " + storeStmt(t, "d", "i", to_long) +
                          "\n#define LOAD(d, i) ((REAL)" + loadExpr(t, "d", "i") + ")\n";
    const std::string b = h + R"CLC(
__kernel void range_k(__global char* db, ulong doff, long n, int mode, REAL a, REAL step, REAL end,
                      REAL base, int round_terms) {
  const long i = get_global_id(0);
  if (i >= n) return;
  __global ST* d = (__global ST*)(db + doff);
  REAL v;
  if (mode == 0) {
    v = a + step * (REAL)i;
  } else if (round_terms) {
    // CPU's half and bfloat16 linspace rounds step * i to the dtype before the sum: the element
    // itself holds that rounding.
    const bool low = i < n / 2;
    v = step * (REAL)(low ? i : n - i - 1);
    STORE_REAL(d, i, v);
    v = LOAD(d, i);
    v = low ? a + v : end - v;
  } else {
    v = i < n / 2 ? a + step * (REAL)i : end - step * (REAL)(n - i - 1);  // fma, as CPU's
  }
  if (mode == 2) v = pow(base, v);
  STORE_REAL(d, i, v);
}

// Complex logspace into the real view (re, im pairs): base^z = exp(z log(base)) for
// z = a + step i (first half) or e - step (n - 1 - i), as CPU's; lb = log(base) as a complex.
// exp(-inf + i NaN) is 0, as C99's cexp (base 0).
__kernel void logspace_complex_k(__global char* db, ulong doff, long n, REAL ar, REAL ai, REAL sr,
                                 REAL si, REAL er, REAL ei, REAL lr, REAL li) {
  const long i = get_global_id(0);
  if (i >= n) return;
  __global ST* d = (__global ST*)(db + doff);
  REAL zr, zi;
  if (i < n / 2) {
    zr = ar + sr * (REAL)i;
    zi = ai + si * (REAL)i;
  } else {
    const REAL k = (REAL)(n - i - 1);
    zr = er - sr * k;
    zi = ei - si * k;
  }
  const REAL wr = zr * lr - zi * li, wi = zr * li + zi * lr;
  REAL v = 0, w = 0;
  if (!(isinf(wr) && wr < 0)) {
    const REAL m = exp(wr);
    v = m * cos(wi);
    w = m * sin(wi);
  }
  STORE_REAL(d, 2 * i, v);
  STORE_REAL(d, 2 * i + 1, w);
}

__kernel void arange_long_k(__global char* db, ulong doff, long n, long a, long step) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const long v = a + step * i;
  __global ST* d = (__global ST*)(db + doff);
  STORE_LONG(d, i, v);
}
)CLC";
    return rt::ProgramSource{std::string("range<") + c10::toString(t) + ">", withPrelude(b), ""};
  });
}

bool realMath(c10::DeviceIndex idx) {
  return device(idx).info().fp64;
}

// Launches range_k (or arange_long_k) over a contiguous tensor.
void launchRange(const at::Tensor& d, int mode, double a, double step, double end, double base,
                 bool round_terms = false) {
  if (d.numel() == 0) return;
  const c10::DeviceIndex idx = d.device().index();
  checkDtypeSupported(d.scalar_type(), idx);
  const bool dbl = realMath(idx);
  cl_program prog = rangeProgram(idx, d.scalar_type(), dbl);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "range_k");
  cl_uint i = 0;
  setArg(k, i, bufferOf(d));
  setArg(k, i, static_cast<cl_long>(d.numel()));
  setArg(k, i, static_cast<cl_int>(mode));
  for (double v : {a, step, end, base}) {
    if (dbl)
      setArg(k, i, static_cast<cl_double>(v));
    else
      setArg(k, i, static_cast<cl_float>(v));
  }
  setArg(k, i, static_cast<cl_int>(round_terms));
  launch1D(device(idx), currentQueue(idx), k, d.numel());
  OCL_CATCH
}

void launchArangeLong(const at::Tensor& d, int64_t a, int64_t step) {
  if (d.numel() == 0) return;
  const c10::DeviceIndex idx = d.device().index();
  cl_program prog = rangeProgram(idx, d.scalar_type(), realMath(idx));
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "arange_long_k");
  setArgs(k, bufferOf(d), static_cast<cl_long>(d.numel()), static_cast<cl_long>(a),
          static_cast<cl_long>(step));
  launch1D(device(idx), currentQueue(idx), k, d.numel());
  OCL_CATCH
}

// Writes through a contiguous temporary when the iterator's output is strided.
template <typename F>
void intoOutput(const at::TensorIterator& iter, F&& fill) {
  at::Tensor out(iter.tensor_base(0));
  if (out.is_contiguous()) return fill(out);
  at::Tensor tmp = at::empty_like(out, at::MemoryFormat::Contiguous);
  fill(tmp);
  out.copy_(tmp);
}

// v rounded to dtype t (float types), as a value of t converted back to double.
double roundToDtype(double v, c10::ScalarType t) {
  switch (t) {
    case c10::kHalf:
      return static_cast<float>(static_cast<c10::Half>(static_cast<float>(v)));
    case c10::kBFloat16:
      return static_cast<float>(static_cast<c10::BFloat16>(static_cast<float>(v)));
    case c10::kFloat:
      return static_cast<float>(v);
    default:
      return v;
  }
}

// CPU casts start and end to the dtype first (integers truncate, floats round).
double inDtype(const at::Scalar& v, c10::ScalarType t) {
  if (at::isIntegralType(t, /*includeBool=*/true)) return static_cast<double>(v.to<int64_t>());
  return roundToDtype(v.to<double>(), t);
}

void arangeStub(at::TensorIterator& iter, const at::Scalar& start, const at::Scalar& size,
                const at::Scalar& step) {
  (void)size;
  const c10::ScalarType t = iter.dtype();
  intoOutput(iter, [&](const at::Tensor& d) {
    if (at::isIntegralType(t, /*includeBool=*/false))
      launchArangeLong(d, start.to<int64_t>(), step.to<int64_t>());
    else
      launchRange(d, kArange, start.to<double>(), step.to<double>(), 0, 0);
  });
}

void linspaceStub(at::TensorIterator& iter, const at::Scalar& start, const at::Scalar& end,
                  int64_t steps) {
  const c10::ScalarType t = iter.dtype();
  if (at::isComplexType(t)) {
    // The real and imaginary parts are two real linspaces (complex steps scale each part).
    const c10::ScalarType rt = c10::toRealValueType(t);
    const auto a = start.to<c10::complex<double>>(), e = end.to<c10::complex<double>>();
    intoOutput(iter, [&](const at::Tensor& d) {
      const at::Tensor parts = at::view_as_real(d);
      const double from[2] = {roundToDtype(a.real(), rt), roundToDtype(a.imag(), rt)};
      const double to[2] = {roundToDtype(e.real(), rt), roundToDtype(e.imag(), rt)};
      for (int c = 0; c < 2; ++c) {
        at::Tensor part = at::empty({d.numel()}, d.options().dtype(rt));
        launchRange(part, kLinspace, from[c], (to[c] - from[c]) / static_cast<double>(steps - 1),
                    to[c], 0, false);
        parts.select(-1, c).view({-1}).copy_(part);
      }
    });
    return;
  }
  const double a = inDtype(start, t), e = inDtype(end, t);
  double step = (e - a) / static_cast<double>(steps - 1);
  // Half and bfloat16 compute in their own precision on CPU: (end - start) and the step are
  // rounded to the dtype, and so is each step * i (see range_k).
  const bool reduced = t == c10::kHalf || t == c10::kBFloat16;
  if (reduced) step = roundToDtype(roundToDtype(e - a, t) / static_cast<double>(steps - 1), t);
  intoOutput(iter, [&](const at::Tensor& d) { launchRange(d, kLinspace, a, step, e, 0, reduced); });
}

// Complex logspace as CPU's: start and end rounded to the dtype, the exponents in REAL.
void logspaceComplex(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base,
                     at::Tensor& result) {
  if (steps == 0) return;
  const c10::ScalarType rt = c10::toRealValueType(result.scalar_type());
  const auto a0 = start.to<c10::complex<double>>(), e0 = end.to<c10::complex<double>>();
  const std::complex<double> a(roundToDtype(a0.real(), rt), roundToDtype(a0.imag(), rt));
  const std::complex<double> e(roundToDtype(e0.real(), rt), roundToDtype(e0.imag(), rt));
  if (steps == 1) {
    const std::complex<double> v = std::pow(std::complex<double>(base, 0), a);
    result.fill_(c10::complex<double>(v.real(), v.imag()));
    return;
  }
  at::Tensor r = result.is_contiguous() ? result : result.contiguous();
  const std::complex<double> step = (e - a) / static_cast<double>(steps - 1);
  const std::complex<double> lb = std::log(std::complex<double>(base, 0));
  const c10::DeviceIndex idx = r.device().index();
  checkDtypeSupported(r.scalar_type(), idx);
  const bool dbl = realMath(idx);
  cl_program prog = rangeProgram(idx, rt, dbl);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "logspace_complex_k");
  cl_uint i = 0;
  setArg(k, i, bufferOf(r));
  setArg(k, i, static_cast<cl_long>(steps));
  for (double v :
       {a.real(), a.imag(), step.real(), step.imag(), e.real(), e.imag(), lb.real(), lb.imag()}) {
    if (dbl)
      setArg(k, i, static_cast<cl_double>(v));
    else
      setArg(k, i, static_cast<cl_float>(v));
  }
  launch1D(device(idx), currentQueue(idx), k, steps);
  OCL_CATCH
  if (!r.is_same(result)) result.copy_(r);
}

at::Tensor& logspaceOut(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base,
                        at::Tensor& result) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (result.scalar_type() == at::kComplexHalf) {
    runFallback("aten::logspace", "out", {start, end, steps, base, result});
    return result;
  }
  if (result.numel() != steps) result.resize_({steps});
  if (at::isComplexType(result.scalar_type())) {
    logspaceComplex(start, end, steps, base, result);
    return result;
  }
  if (steps == 0) return result;
  at::Tensor r = result.is_contiguous() ? result : result.contiguous();
  const c10::ScalarType t = r.scalar_type();
  const double a = inDtype(start, t), e = inDtype(end, t);
  if (steps == 1) {
    r.fill_(std::pow(base, start.to<double>()));
  } else {
    launchRange(r, kLogspace, a, (e - a) / static_cast<double>(steps - 1), e, base);
  }
  if (!r.is_same(result)) result.copy_(r);
  return result;
}

at::Tensor& eyeMOut(int64_t n, int64_t m, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  result.resize_({n, m});
  result.zero_();
  if (std::min(n, m) > 0) result.diagonal().fill_(1);
  return result;
}

at::Tensor& eyeOut(int64_t n, at::Tensor& result) {
  return eyeMOut(n, n, result);
}

// tril_indices / triu_indices: the (row, col) pairs of the triangle in row-major order, selected
// from the full index grid on the device.
template <bool kLower>
at::Tensor triangleIndices(int64_t row, int64_t col, int64_t offset,
                           std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                           std::optional<at::Device> dev, std::optional<bool> pin_memory) {
  const char* name = kLower ? "tril_indices" : "triu_indices";
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  TORCH_CHECK(!layout || *layout == at::kStrided, name, " only supports the strided layout");
  const auto opts =
      at::TensorOptions().dtype(dtype.value_or(at::kLong)).device(dev.value_or(at::Device("ocl")));
  TORCH_CHECK(c10::isIntegralType(opts.dtype().toScalarType(), /*includeBool=*/false), name,
              ": dtype must be an integer type, got ", opts.dtype());
  if (row == 0 || col == 0) return at::empty({2, 0}, opts);
  const auto longs = opts.dtype(at::kLong);
  const at::Tensor r = at::arange(row, longs).unsqueeze(1).expand({row, col});
  const at::Tensor c = at::arange(col, longs).unsqueeze(0).expand({row, col});
  const at::Tensor keep = kLower ? c.le(r + offset) : c.ge(r + offset);
  return at::stack({r.masked_select(keep), c.masked_select(keep)}).to(opts.dtype());
}

}  // namespace

}  // namespace torch_ocl::aten

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(arange_stub, &torch_ocl::aten::arangeStub)
REGISTER_PRIVATEUSE1_DISPATCH(linspace_stub, &torch_ocl::aten::linspaceStub)
}  // namespace at::native

namespace torch_ocl::aten {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl(
      "arange.start_out",
      TORCH_FN(static_cast<at::Tensor& (*)(const at::Scalar&, const at::Scalar&, const at::Scalar&,
                                           at::Tensor&)>(at::native::arange_out)));
  m.impl(
      "linspace.out",
      TORCH_FN(
          static_cast<at::Tensor& (*)(const at::Scalar&, const at::Scalar&, int64_t, at::Tensor&)>(
              at::native::linspace_out)));
  m.impl("logspace.out", TORCH_FN(logspaceOut));
  m.impl("eye.m_out", TORCH_FN(eyeMOut));
  m.impl("eye.out", TORCH_FN(eyeOut));
  m.impl("tril_indices", TORCH_FN(triangleIndices<true>));
  m.impl("triu_indices", TORCH_FN(triangleIndices<false>));
}

}  // namespace torch_ocl::aten
