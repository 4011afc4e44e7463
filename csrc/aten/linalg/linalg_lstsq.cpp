// linalg.lstsq (every driver name CPU accepts), lu_unpack and linalg.lu on the device, from the
// QR and SVD of linalg_decomp.cpp and the LU of linalg_small.cpp, for float32, float64 and
// complex (lu_unpack also float16/bfloat16, as on CPU). Complex solves through Q^H and A^H where
// the real forms use the transposes; residuals and singular values are real, as CPU's. Outputs
// follow CPU's: gels solves through QR (full rank assumed, as LAPACK's), gelsy/gelsd/gelss through
// the SVD with rank = #(s > rcond s_max) and the minimum-norm solution; rank for every driver but
// gels, singular values for gelsd and gelss, residuals for m > n and a driver other than gelsy
// (gelsd/gelss: only at full rank).
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/linalg_lu_meta.h>
#include <ATen/ops/lu_unpack_meta.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <string>

#include "aten/fallback.h"
#include "aten/linalg/linalg_decomp.h"
#include "aten/nn_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

// float32, float64 and the complex dtypes over them: what the QR, SVD and LU kernels take.
bool lstsqNative(const at::Tensor& t) {
  return decompNative(t) || t.scalar_type() == at::kComplexFloat ||
         t.scalar_type() == at::kComplexDouble;
}

// ---- lu_unpack, linalg.lu --------------------------------------------------------------------
// perm (..., m) int64 with row i of P^T A = row perm[i] of A, from LAPACK pivots (..., k).
at::Tensor pivotsToPerm(const at::Tensor& pivots, int64_t m, const at::Tensor& like) {
  std::vector<int64_t> shape = batchShape(pivots, 1);
  shape.push_back(m);
  at::Tensor perm = at::empty(shape, pivots.options().dtype(at::kLong));
  const int64_t k = pivots.size(-1), batch = at::native::batchCount(pivots.unsqueeze(-1));
  if (batch == 0 || m == 0) return perm;
  const at::Tensor piv = pivots.contiguous();
  TORCH_CHECK(k == 0 || piv.ge(1).logical_and_(piv.le(m)).all().item<bool>(),
              "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.",
              "Did you properly pass the result of lu_factor?");
  const c10::DeviceIndex idx = like.device().index();
  OCL_TRY
  // the real program has the (dtype-free) permutation kernel
  cl_kernel kern = decompKernel(
      like.is_complex()
          ? at::empty({0}, like.options().dtype(c10::toRealValueType(like.scalar_type())))
          : like,
      "pivots_to_perm");
  setArgs(kern, bufferOrAny(piv, perm), bufferOf(perm), static_cast<cl_long>(m),
          static_cast<cl_long>(k), static_cast<cl_long>(batch));
  launchND(device(idx), currentQueue(idx), kern, static_cast<size_t>((batch + 63) / 64 * 64), 64);
  OCL_CATCH
  return perm;
}

// PyTorch's lu_unpack_out, with the pivots' permutation built on the device.
void luUnpackCore(const at::Tensor& LU, const at::Tensor& pivots, bool unpack_data,
                  bool unpack_pivots, const at::Tensor& P, const at::Tensor& L,
                  const at::Tensor& U) {
  const int64_t m = LU.size(-2), n = LU.size(-1);
  if (unpack_data) {
    if (m > n || LU.is_same(L)) {
      at::triu_out(const_cast<at::Tensor&>(U), m == n ? LU : LU.narrow(-2, 0, n), 0);
      at::tril_out(const_cast<at::Tensor&>(L), LU, -1);
      L.diagonal(0, -2, -1).fill_(1.);
    } else {
      at::tril_out(const_cast<at::Tensor&>(L), m == n ? LU : LU.narrow(-1, 0, m), -1);
      L.diagonal(0, -2, -1).fill_(1.);
      at::triu_out(const_cast<at::Tensor&>(U), LU, 0);
    }
  }
  if (unpack_pivots) {
    const at::Tensor perm = pivotsToPerm(pivots, m, LU);
    P.zero_();
    P.scatter_(-2, perm.unsqueeze(-2), 1.);
  }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> luUnpack(const at::Tensor& LU,
                                                        const at::Tensor& pivots, bool unpack_data,
                                                        bool unpack_pivots) {
  if (!nnFloating(LU.scalar_type()) && !lstsqNative(LU)) {
    auto r = runFallback("aten::lu_unpack", "", {LU, pivots, unpack_data, unpack_pivots});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  Structured<at::meta::structured_lu_unpack> s(Mode::kFunctional, nullptr);
  s.meta(LU, pivots, unpack_data, unpack_pivots);
  checkSameDevice({LU, pivots});
  luUnpackCore(LU, pivots, unpack_data, unpack_pivots, s.output(0), s.output(1), s.output(2));
  return {s.output(0), s.output(1), s.output(2)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> luUnpackOut(const at::Tensor& LU,
                                                              const at::Tensor& pivots,
                                                              bool unpack_data, bool unpack_pivots,
                                                              at::Tensor& P, at::Tensor& L,
                                                              at::Tensor& U) {
  if (!nnFloating(LU.scalar_type()) && !lstsqNative(LU)) {
    runFallback("aten::lu_unpack", "out", {LU, pivots, unpack_data, unpack_pivots, P, L, U});
    return {P, L, U};
  }
  checkSameDevice({LU, pivots, P, L, U});
  Structured<at::meta::structured_lu_unpack> s(Mode::kOut, &P, &L, &U);
  s.meta(LU, pivots, unpack_data, unpack_pivots);
  luUnpackCore(LU, pivots, unpack_data, unpack_pivots, P, L, U);
  return {P, L, U};
}

// PyTorch's linalg_lu_out: lu_factor_ex into L (m > n) or U, then lu_unpack.
void linalgLuCore(const at::Tensor& A, bool pivot, const at::Tensor& P, const at::Tensor& L,
                  const at::Tensor& U) {
  const bool use_L = A.size(-2) > A.size(-1);
  at::Tensor pivots = at::empty({0}, A.options().dtype(at::kInt));
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::Tensor& lu = const_cast<at::Tensor&>(use_L ? L : U);
  at::linalg_lu_factor_ex_out(lu, pivots, info, A, pivot, /*check_errors=*/false);
  at::lu_unpack_out(const_cast<at::Tensor&>(P), const_cast<at::Tensor&>(L),
                    const_cast<at::Tensor&>(U), lu, pivots, /*unpack_data=*/true,
                    /*unpack_pivots=*/pivot);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> linalgLu(const at::Tensor& A, bool pivot) {
  if (!lstsqNative(A) || !pivot) {
    auto r = runFallback("aten::linalg_lu", "", {A, pivot});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  Structured<at::meta::structured_linalg_lu> s(Mode::kFunctional, nullptr);
  s.meta(A, pivot);
  linalgLuCore(A, pivot, s.output(0), s.output(1), s.output(2));
  return {s.output(0), s.output(1), s.output(2)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalgLuOut(const at::Tensor& A, bool pivot,
                                                              at::Tensor& P, at::Tensor& L,
                                                              at::Tensor& U) {
  if (!lstsqNative(A) || !pivot) {
    runFallback("aten::linalg_lu", "out", {A, pivot, P, L, U});
    return {P, L, U};
  }
  checkSameDevice({A, P, L, U});
  Structured<at::meta::structured_linalg_lu> s(Mode::kOut, &P, &L, &U);
  s.meta(A, pivot);
  linalgLuCore(A, pivot, P, L, U);
  return {P, L, U};
}

// ---- linalg.lstsq ----------------------------------------------------------------------------
std::string lstsqDriver(std::optional<c10::string_view> driver) {
  if (!driver.has_value()) return "gelsy";  // CPU's default (the results compared against)
  std::string d(*driver);
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return std::tolower(c); });
  TORCH_CHECK(d == "gels" || d == "gelsy" || d == "gelsd" || d == "gelss",
              "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
              "gelss)");
  return d;
}

void copyOut(at::Tensor& out, const at::Tensor& r, const char* name) {
  TORCH_CHECK(out.scalar_type() == r.scalar_type(), "torch.linalg.lstsq: Expected ", name,
              " to have ", r.scalar_type(), " dtype, but got ", out.scalar_type());
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> lstsqOut(
    const at::Tensor& input, const at::Tensor& other, std::optional<double> rcond,
    std::optional<c10::string_view> driver, at::Tensor& solution, at::Tensor& residuals,
    at::Tensor& rank, at::Tensor& singular_values) {
  if (!lstsqNative(input) || !lstsqNative(other)) {
    runFallback("aten::linalg_lstsq", "out",
                {input, other, rcond ? c10::IValue(*rcond) : c10::IValue(),
                 driver ? c10::IValue(std::string(*driver)) : c10::IValue(), solution, residuals,
                 rank, singular_values});
    return {solution, residuals, rank, singular_values};
  }
  TORCH_CHECK(input.dim() >= 2, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 1, "torch.linalg.lstsq: other must have at least 1 dimension.");
  TORCH_CHECK(input.scalar_type() == other.scalar_type(),
              "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
              "input's dtype ",
              input.scalar_type(), " and other's dtype ", other.scalar_type());
  const int64_t dim_diff = input.dim() - other.dim();
  TORCH_CHECK(0 <= dim_diff && dim_diff <= 1,
              "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
              "(input.dim() - other.dim()) <= 1");
  const at::Tensor other_2d = dim_diff ? other.unsqueeze(-1) : other;
  TORCH_CHECK(input.size(-2) == other_2d.size(-2),
              dim_diff ? "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                       : "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  checkSameDevice({input, other, solution, residuals, rank, singular_values});
  const std::string drv = lstsqDriver(driver);
  const int64_t m = input.size(-2), n = input.size(-1), k = std::min(m, n);
  const c10::ScalarType real = c10::toRealValueType(input.scalar_type());
  const double rc = rcond.has_value() ? *rcond
                                      : (real == at::kDouble ? DBL_EPSILON : FLT_EPSILON) *
                                            static_cast<double>(std::max(m, n));
  auto [b, A] = at::native::_linalg_broadcast_batch_dims(other_2d, input, /*name=*/nullptr);
  const auto batch = batchShape(A, 2);
  at::Tensor x, res = at::empty({0}, input.options().dtype(real));
  at::Tensor rk = at::empty({0}, input.options().dtype(at::kLong));
  at::Tensor sv = at::empty({0}, input.options().dtype(real));
  // |v|^2 summed over the rows: the residuals (real for complex v).
  const auto sumSquares = [](const at::Tensor& v) {
    return (v.is_complex() ? at::view_as_real(v.resolve_conj()).pow(2).sum(-1) : v.pow(2)).sum(-2);
  };
  if (drv == "gels") {
    if (m >= n) {  // x = R^-1 (Q^H b)[:n]
      auto [a, tau] = geqrfDevice(A);
      at::Tensor qtb = b.contiguous().clone();
      applyReflectors(a, tau, qtb, /*forward=*/true);
      x = at::linalg_solve_triangular(a.narrow(-2, 0, n).triu(), qtb.narrow(-2, 0, n),
                                      /*upper=*/true);
      if (m > n) res = sumSquares(qtb.narrow(-2, n, m - n));
    } else {  // A^H = Q R: x = Q R^-H b (the minimum-norm solution)
      auto [a, tau] = geqrfDevice(A.mH());
      const at::Tensor y = at::linalg_solve_triangular(a.narrow(-2, 0, m).triu().mH(), b,
                                                       /*upper=*/false);
      std::vector<int64_t> zs = batch;
      zs.insert(zs.end(), {n, b.size(-1)});
      at::Tensor z = at::zeros(zs, b.options());
      z.narrow(-2, 0, m).copy_(y);
      applyReflectors(a, tau, z, /*forward=*/false);
      x = z;
    }
  } else {
    auto [U, S, Vh] = at::_linalg_svd(A, /*full_matrices=*/false, /*compute_uv=*/true);
    const at::Tensor smax = k > 0 ? S.narrow(-1, 0, 1) : S;
    const at::Tensor keep = S > smax * rc;
    rk = keep.sum(-1, /*keepdim=*/false, at::kLong);
    const at::Tensor sinv = at::where(keep, S.reciprocal(), at::zeros_like(S));
    x = at::matmul(Vh.mH(), sinv.unsqueeze(-1) * at::matmul(U.mH(), b));
    if (drv != "gelsy") sv = S;
    if (m > n && drv != "gelsy" && rk.eq(n).all().item<bool>())
      res = sumSquares(at::matmul(A, x) - b);
  }
  if (m == 0) x = x.zero_();
  if (dim_diff) x = x.squeeze(-1);
  copyOut(solution, x, "solution");
  copyOut(residuals, res, "residuals");
  copyOut(rank, rk, "rank");
  copyOut(singular_values, sv, "singular_values");
  return {solution, residuals, rank, singular_values};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_lstsq.out", TORCH_FN(lstsqOut));
  m.impl("linalg_lu", TORCH_FN(linalgLu));
  m.impl("linalg_lu.out", TORCH_FN(linalgLuOut));
  m.impl("lu_unpack", TORCH_FN(luUnpack));
  m.impl("lu_unpack.out", TORCH_FN(luUnpackOut));
}

}  // namespace torch_ocl::aten
