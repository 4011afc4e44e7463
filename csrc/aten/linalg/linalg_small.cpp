// linalg.cholesky (linalg_cholesky_ex), linalg.solve_triangular and the forms built on them
// (cholesky, cholesky_solve, cholesky_inverse, triangular_solve), and LU with partial pivoting
// with what is built on it (lu_factor, lu_solve, solve, inv, det, slogdet) on the device through
// the unblocked small-matrix kernels of kernels/linalg_small.cl (real floating and complex
// dtypes, one source over linalg_scalar.cl; complex: A = L L^H, LAPACK's |re| + |im|
// pivoting). Argument
// checks and output layouts are PyTorch's (meta functions, LinearAlgebraUtils.h). cholesky's info
// is written on the device; linalg.cholesky reads it back to raise, as it does on CUDA.
// Large LU, triangular solves and Cholesky run blocked over the GEMM (linalg_blocked.h, here).
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_linalg_det_meta.h>
#include <ATen/ops/_linalg_slogdet_meta.h>
#include <ATen/ops/_linalg_solve_ex_meta.h>
#include <ATen/ops/linalg_cholesky_ex_meta.h>
#include <ATen/ops/linalg_inv_ex_meta.h>
#include <ATen/ops/linalg_lu_factor_ex_meta.h>
#include <ATen/ops/linalg_lu_solve_meta.h>
#include <ATen/ops/triangular_solve_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/linalg/column_major.h"
#include "aten/linalg/linalg_blocked.h"
#include "aten/linalg/linalg_scalar.h"
#include "aten/nn_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kLinalgSmallFamily;

cl_kernel smallKernel(const at::Tensor& like, const char* name) {
  return programs(like.device().index())
      .kernel(linalgScalarProgram(like.device().index(), &kLinalgSmallFamily, "linalg_small.cl",
                                  like.scalar_type()),
              name);
}

// Real floating and complex dtypes.
bool realFloating(const at::Tensor& t) {
  return nnFloating(t.scalar_type()) || c10::isComplexType(t.scalar_type());
}

// L (lower) of every matrix of `a` (contiguous, (..., n, n)), in place; info of shape batch.
void choleskyLowerInPlace(const at::Tensor& a, const at::Tensor& info) {
  const int64_t n = a.size(-1), batch = n == 0 ? 0 : a.numel() / (n * n);
  if (batch == 0) return;
  const c10::DeviceIndex idx = a.device().index();
  OCL_TRY
  cl_kernel k = smallKernel(a, "cholesky_lower");
  cl_uint i = 0;
  setArg(k, i, bufferOf(a));
  setArg(k, i, bufferOf(info));
  setArg(k, i, static_cast<cl_long>(n));
  launchRowGroups(idx, k, batch);
  OCL_CATCH
}

// From this order up, cholesky runs blocked: most of its work then goes to one GEMM per panel.
constexpr int64_t kCholeskyBlockedFrom = 192;
constexpr int64_t kCholeskyPanel = 64;

// Right-looking blocked Cholesky of every matrix of `a` (contiguous, (..., n, n)), in place,
// lower triangle: each diagonal block in the small kernel, the panel below it by a triangular
// solve (L21 = A21 L11^-H), the trailing matrix by one batched GEMM (A22 -= L21 L21^H). info
// (int, one per matrix, zero on entry) gets the first failing order, as LAPACK's potrf reports
// it; the blocks after a failure compute garbage that info then marks as undefined.
void choleskyLowerBlocked(const at::Tensor& a, const at::Tensor& info) {
  const int64_t n = a.size(-1);
  at::Tensor a3 = a.view({-1, n, n});
  for (int64_t k = 0; k < n; k += kCholeskyPanel) {
    const int64_t kb = std::min(kCholeskyPanel, n - k);
    at::Tensor block = a3.narrow(1, k, kb).narrow(2, k, kb);
    at::Tensor d = block.contiguous();
    at::Tensor panel_info = at::zeros_like(info);
    choleskyLowerInPlace(d, panel_info);
    info.copy_(at::where(info.ne(0) | panel_info.eq(0), info, panel_info + k));
    at::Tensor l11 = d.tril();
    block.copy_(l11);
    if (k + kb == n) break;
    const int64_t rest = n - k - kb;
    at::Tensor a21 = a3.narrow(1, k + kb, rest).narrow(2, k, kb);
    at::Tensor l21 = at::linalg_solve_triangular(l11.mH(), a21, /*upper=*/true, /*left=*/false);
    a21.copy_(l21);
    a3.narrow(1, k + kb, rest).narrow(2, k + kb, rest).baddbmm_(l21, l21.mH(), 1, -1);
  }
}

void choleskyLower(const at::Tensor& a, const at::Tensor& info) {
  if (a.size(-1) >= kCholeskyBlockedFrom) {
    choleskyLowerBlocked(a, info);
  } else {
    choleskyLowerInPlace(a, info);
  }
}

void choleskyExInto(Structured<at::meta::structured_linalg_cholesky_ex>& s, const at::Tensor& A,
                    bool upper, bool check_errors) {
  s.meta(A, upper, check_errors);
  const at::Tensor& L = s.output(0);
  const at::Tensor& info = s.output(1);
  // Lower factor of A, or of A^T (whose lower triangle is A's upper one) for upper = True.
  // The upper factor U (A = U^H U) is the conjugate transpose of A^H's lower one.
  at::Tensor work = (upper ? A.mH() : A).resolve_conj().contiguous().clone();
  at::Tensor info_c = at::zeros(info.sizes(), info.options());  // n == 0: nothing to fail
  choleskyLower(work, info_c.reshape({-1}));
  work = work.tril();
  const_cast<at::Tensor&>(L).copy_(upper ? work.mH() : work);
  const_cast<at::Tensor&>(info).copy_(info_c);
  if (check_errors) at::_linalg_check_errors(info, "linalg.cholesky_ex", A.dim() == 2);
}

std::tuple<at::Tensor, at::Tensor> choleskyEx(const at::Tensor& A, bool upper, bool check_errors) {
  if (!realFloating(A)) {
    auto r = runFallback("aten::linalg_cholesky_ex", "", {A, upper, check_errors});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_linalg_cholesky_ex> s(Mode::kFunctional, nullptr);
  choleskyExInto(s, A, upper, check_errors);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> choleskyExOut(const at::Tensor& A, bool upper,
                                                   bool check_errors, at::Tensor& L,
                                                   at::Tensor& info) {
  if (!realFloating(A)) {
    runFallback("aten::linalg_cholesky_ex", "L", {A, upper, check_errors, L, info});
    return {L, info};
  }
  Structured<at::meta::structured_linalg_cholesky_ex> s(Mode::kOut, &L, &info);
  choleskyExInto(s, A, upper, check_errors);
  return {L, info};
}

// X with A X = B (left) or X A = B, batch dimensions broadcast.
at::Tensor solveTriangular(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                           bool unitriangular) {
  checkSameDevice({A, B});
  at::native::checkInputsSolver(A, B, left, "linalg.solve_triangular");
  TORCH_CHECK(A.scalar_type() == B.scalar_type(),
              "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of "
              "type ",
              A.scalar_type(), " and B of type ", B.scalar_type(), " instead");
  at::native::checkFloatingOrComplex(A, "linalg.solve_triangular");
  auto [B_, A_] = at::native::_linalg_broadcast_batch_dims(B, A, /*name=*/nullptr);
  // X A = B  <=>  A^T X^T = B^T (the triangle flips).
  at::Tensor x = (left ? B_ : B_.mT()).resolve_conj().contiguous().clone();
  const at::Tensor a = trsmOperand((left ? A_ : A_.mT()).resolve_conj(), x.size(-1));
  const bool up = left ? upper : !upper;
  const int64_t n = a.size(-1), k = x.size(-1);
  const int64_t batch = n == 0 || k == 0 ? 0 : x.numel() / (n * k);
  if (batch > 0 && trsmBlockedApplies(a, k)) {
    triangularSolveBlocked(a, x, up, unitriangular);
  } else if (batch > 0) {
    const c10::DeviceIndex idx = a.device().index();
    OCL_TRY
    cl_kernel kern = smallKernel(a, "triangular_solve");
    setArgs(kern, bufferOf(a), bufferOf(x), static_cast<cl_long>(n), static_cast<cl_long>(k),
            static_cast<cl_int>(up), static_cast<cl_int>(unitriangular));
    const size_t local[2] = {64, 1};
    const size_t global[2] = {static_cast<size_t>((k + 63) / 64 * 64), static_cast<size_t>(batch)};
    launch2D(currentQueue(idx), kern, global, local);
    OCL_CATCH
  }
  return left ? x : x.mT();
}

at::Tensor solveTriangularFn(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                             bool unitriangular) {
  if (!realFloating(A) || !realFloating(B))
    return runFallback("aten::linalg_solve_triangular", "", {A, B, upper, left, unitriangular})[0]
        .toTensor();
  return solveTriangular(A, B, upper, left, unitriangular);
}

at::Tensor& solveTriangularOut(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                               bool unitriangular, at::Tensor& out) {
  if (!realFloating(A) || !realFloating(B)) {
    runFallback("aten::linalg_solve_triangular", "out", {A, B, upper, left, unitriangular, out});
    return out;
  }
  checkSameDevice({A, out});
  const at::Tensor x = solveTriangular(A, B, upper, left, unitriangular);
  at::native::resize_output(out, x.sizes());
  return out.copy_(x);
}

// The legacy and derived forms, on the two kernels above.
at::Tensor cholesky(const at::Tensor& self, bool upper) {
  if (!realFloating(self)) return runFallback("aten::cholesky", "", {self, upper})[0].toTensor();
  at::native::squareCheckInputs(self, "cholesky");
  // CPU and the meta function: an empty input gives a row-major empty result.
  if (self.numel() == 0) return at::empty_like(self, at::MemoryFormat::Contiguous);
  auto [L, info] = at::linalg_cholesky_ex(self, upper, /*check_errors=*/false);
  at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  return L;
}

// X with (L L^T) X = B for a lower factor, (U^T U) X = B for an upper one.
at::Tensor choleskySolveWith(const at::Tensor& B, const at::Tensor& factor, bool upper) {
  const at::Tensor y = solveTriangular(factor.mH(), B, !upper, true, false);
  return upper ? solveTriangular(factor, y, true, true, false)
               : solveTriangular(factor.mH(), solveTriangular(factor, B, false, true, false), true,
                                 true, false);
}

at::Tensor choleskySolveHelper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  if (!realFloating(self) || !realFloating(A))
    return runFallback("aten::_cholesky_solve_helper", "", {self, A, upper})[0].toTensor();
  // Column-major, as CPU and the meta function return it (cholesky_solve returns this tensor).
  return batchedColumnMajor(choleskySolveWith(self, A, upper));
}

at::Tensor choleskyInverse(const at::Tensor& self, bool upper) {
  if (!realFloating(self))
    return runFallback("aten::cholesky_inverse", "", {self, upper})[0].toTensor();
  at::native::squareCheckInputs(self, "cholesky_inverse");
  const int64_t n = self.size(-1);
  return batchedColumnMajor(
      choleskySolveWith(at::eye(n, self.options()).expand(self.sizes()), self, upper));
}

at::Tensor& choleskyInverseOut(const at::Tensor& self, bool upper, at::Tensor& out) {
  if (!realFloating(self)) {
    runFallback("aten::cholesky_inverse", "out", {self, upper, out});
    return out;
  }
  checkSameDevice({self, out});
  const at::Tensor r = choleskyInverse(self, upper);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

// triangular_solve(b, A): (solution of op(A) X = b with op = transpose or not, a copy of A).
void triangularSolveInto(Structured<at::meta::structured_triangular_solve>& s, const at::Tensor& b,
                         const at::Tensor& A, bool upper, bool transpose, bool unitriangular) {
  s.meta(b, A, upper, transpose, unitriangular);
  auto [b_, A_] = at::native::_linalg_broadcast_batch_dims(b, A, /*name=*/nullptr);
  const at::Tensor x =
      solveTriangular(transpose ? A_.mT() : A_, b_, upper != transpose, true, unitriangular);
  const_cast<at::Tensor&>(s.output(0)).copy_(x);
  const_cast<at::Tensor&>(s.output(1)).copy_(A_);
}

std::tuple<at::Tensor, at::Tensor> triangularSolve(const at::Tensor& b, const at::Tensor& A,
                                                   bool upper, bool transpose, bool unitriangular) {
  if (!realFloating(b) || !realFloating(A)) {
    auto r = runFallback("aten::triangular_solve", "", {b, A, upper, transpose, unitriangular});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_triangular_solve> s(Mode::kFunctional, nullptr);
  triangularSolveInto(s, b, A, upper, transpose, unitriangular);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> triangularSolveOut(const at::Tensor& b, const at::Tensor& A,
                                                        bool upper, bool transpose,
                                                        bool unitriangular, at::Tensor& X,
                                                        at::Tensor& M) {
  if (!realFloating(b) || !realFloating(A)) {
    runFallback("aten::triangular_solve", "X", {b, A, upper, transpose, unitriangular, X, M});
    return {X, M};
  }
  Structured<at::meta::structured_triangular_solve> s(Mode::kOut, &X, &M);
  triangularSolveInto(s, b, A, upper, transpose, unitriangular);
  return {X, M};
}

// ---- LU with partial pivoting and what is built on it ------------------------------------------
// The same results as LAPACK's getrf/getrs (LU packed, 1-based int32 pivots, info), so autograd's
// formulas, which reuse LU and pivots, hold. Real matrices (lu_factor rectangular ones too); the
// rest keeps the fallback.

void luFactorInPlace(const at::Tensor& lu, const at::Tensor& piv, const at::Tensor& info) {
  const int64_t m = lu.size(-2), n = lu.size(-1), batch = at::native::batchCount(lu);
  if (batch == 0 || m == 0 || n == 0) return;
  if (luBlockedApplies(lu)) return luFactorBlocked(lu, piv, info);
  const c10::DeviceIndex idx = lu.device().index();
  OCL_TRY
  cl_kernel k = smallKernel(lu, "lu_factor");
  setArgs(k, bufferOf(lu), bufferOf(piv), bufferOf(info), static_cast<cl_long>(m),
          static_cast<cl_long>(n));
  launchRowGroups(idx, k, batch);
  OCL_CATCH
}

// P^T x (reverse = false) or P x (reverse = true) for contiguous x (batch, n, k), piv (batch, n).
void luPermute(const at::Tensor& x, const at::Tensor& piv, bool reverse) {
  const int64_t n = x.size(-2), k = x.size(-1);
  const int64_t batch = n == 0 || k == 0 ? 0 : x.numel() / (n * k);
  if (batch == 0) return;
  if (luPermuteByGather(x)) return luPermuteGather(x, piv, reverse);
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel kern = smallKernel(x, "lu_permute");
  setArgs(kern, bufferOf(x), bufferOf(piv), static_cast<cl_long>(n), static_cast<cl_long>(k),
          static_cast<cl_int>(reverse));
  const size_t local[2] = {64, 1};
  const size_t global[2] = {static_cast<size_t>((k + 63) / 64 * 64), static_cast<size_t>(batch)};
  launch2D(currentQueue(idx), kern, global, local);
  OCL_CATCH
}

bool luNative(const at::Tensor& A) {
  return realFloating(A) && A.dim() >= 2 && A.size(-1) == A.size(-2);
}

void luFactorExInto(Structured<at::meta::structured_linalg_lu_factor_ex>& s, const at::Tensor& A,
                    bool pivot, bool check_errors) {
  s.meta(A, pivot, check_errors);
  // One copy, in the output's column-major layout where the blocked kernels take it.
  const at::Tensor& out_lu = s.output(0);
  at::Tensor work = luBlockedApplies(out_lu) && denseColumnMajor(out_lu)
                        ? at::empty_like(out_lu).copy_(A.resolve_conj())
                        : A.resolve_conj().clone(at::MemoryFormat::Contiguous);
  at::Tensor piv = at::empty(s.output(1).sizes(), s.output(1).options());
  at::Tensor info = at::zeros(s.output(2).sizes(), s.output(2).options());
  luFactorInPlace(work, piv, info);
  const_cast<at::Tensor&>(s.output(0)).copy_(work);
  const_cast<at::Tensor&>(s.output(1)).copy_(piv);
  const_cast<at::Tensor&>(s.output(2)).copy_(info);
  if (check_errors)
    at::_linalg_check_errors(s.output(2), "torch.linalg.lu_factor_ex", A.dim() == 2);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> luFactorEx(const at::Tensor& A, bool pivot,
                                                          bool check_errors) {
  if (!realFloating(A) || !pivot) {
    auto r = runFallback("aten::linalg_lu_factor_ex", "", {A, pivot, check_errors});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  Structured<at::meta::structured_linalg_lu_factor_ex> s(Mode::kFunctional, nullptr);
  luFactorExInto(s, A, pivot, check_errors);
  return {s.output(0), s.output(1), s.output(2)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> luFactorExOut(const at::Tensor& A, bool pivot,
                                                                bool check_errors, at::Tensor& LU,
                                                                at::Tensor& pivots,
                                                                at::Tensor& info) {
  if (!realFloating(A) || !pivot) {
    runFallback("aten::linalg_lu_factor_ex", "out", {A, pivot, check_errors, LU, pivots, info});
    return {LU, pivots, info};
  }
  Structured<at::meta::structured_linalg_lu_factor_ex> s(Mode::kOut, &LU, &pivots, &info);
  luFactorExInto(s, A, pivot, check_errors);
  return {LU, pivots, info};
}

// X with A X = B (left) or X A = B, op(A) = A or A^T (adjoint), A = P L U given as LU, pivots.
at::Tensor luSolve(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B, bool left,
                   bool adjoint, at::IntArrayRef out_shape) {
  // X op(A) = B  <=>  op(A)^H X^H = B^H.
  if (!left) return luSolve(LU, pivots, B.mH(), true, !adjoint, {}).mH();
  const int64_t n = LU.size(-1);
  std::vector<int64_t> batch(B.sizes().begin(), B.sizes().end() - 2);
  if (!out_shape.empty()) batch.assign(out_shape.begin(), out_shape.end() - 2);
  std::vector<int64_t> lu_shape = batch, piv_shape = batch, b_shape = batch;
  lu_shape.insert(lu_shape.end(), {n, n});
  piv_shape.push_back(n);
  b_shape.insert(b_shape.end(), {n, B.size(-1)});
  const at::Tensor lu = LU.expand(lu_shape);
  const at::Tensor piv = pivots.expand(piv_shape).contiguous();
  at::Tensor x = B.expand(b_shape).resolve_conj().contiguous().clone();
  // LU (column major from lu_factor) made row major once for both triangular solves.
  if (!adjoint) {  // P^T A = L U: x = U^-1 L^-1 P^T b
    const at::Tensor luc = trsmOperand(lu, x.size(-1));
    luPermute(x, piv, /*reverse=*/false);
    x = solveTriangular(luc, x, /*upper=*/false, true, /*unitriangular=*/true);
    return solveTriangular(luc, x, /*upper=*/true, true, false);
  }
  // A^H = U^H L^H P^T: x = P L^-H U^-H b
  const at::Tensor luh = lu.mH().resolve_conj().contiguous();
  x = solveTriangular(luh, x, /*upper=*/false, true, false);
  x = solveTriangular(luh, x, /*upper=*/true, true, /*unitriangular=*/true).contiguous();
  luPermute(x, piv, /*reverse=*/true);
  return x;
}

void luSolveInto(Structured<at::meta::structured_linalg_lu_solve>& s, const at::Tensor& LU,
                 const at::Tensor& pivots, const at::Tensor& B, bool left, bool adjoint) {
  s.meta(LU, pivots, B, left, adjoint);
  const at::Tensor& out = s.output(0);
  if (out.numel() == 0) return;
  const_cast<at::Tensor&>(out).copy_(luSolve(LU, pivots, B, left, adjoint, out.sizes()));
}

at::Tensor luSolveFn(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B, bool left,
                     bool adjoint) {
  if (!luNative(LU) || !realFloating(B))
    return runFallback("aten::linalg_lu_solve", "", {LU, pivots, B, left, adjoint})[0].toTensor();
  Structured<at::meta::structured_linalg_lu_solve> s(Mode::kFunctional, nullptr);
  luSolveInto(s, LU, pivots, B, left, adjoint);
  return s.output(0);
}

at::Tensor& luSolveOut(const at::Tensor& LU, const at::Tensor& pivots, const at::Tensor& B,
                       bool left, bool adjoint, at::Tensor& out) {
  if (!luNative(LU) || !realFloating(B)) {
    runFallback("aten::linalg_lu_solve", "out", {LU, pivots, B, left, adjoint, out});
    return out;
  }
  Structured<at::meta::structured_linalg_lu_solve> s(Mode::kOut, &out);
  luSolveInto(s, LU, pivots, B, left, adjoint);
  return out;
}

// CPU's _linalg_solve_ex in 2.13: A itself is factored (LU and pivots are outputs that the
// backward solves with again), then lu_solve.
void solveExInto(Structured<at::meta::structured__linalg_solve_ex>& s, const at::Tensor& A,
                 const at::Tensor& B, bool left, bool check_errors) {
  s.meta(A, B, left, check_errors);
  auto& result = const_cast<at::Tensor&>(s.output(0));
  auto& LU = const_cast<at::Tensor&>(s.output(1));
  auto& pivots = const_cast<at::Tensor&>(s.output(2));
  auto& info = const_cast<at::Tensor&>(s.output(3));
  at::linalg_lu_factor_ex_out(LU, pivots, info, A);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.solve_ex", A.dim() == 2);
  const bool vector_case = at::native::linalg_solve_is_vector_rhs(LU, B);
  at::Tensor result_ = vector_case ? result.unsqueeze(-1) : result;
  const at::Tensor B_ = vector_case ? B.unsqueeze(-1) : B;
  at::linalg_lu_solve_out(result_, LU, pivots, B_, left, /*adjoint=*/false);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> solveEx(const at::Tensor& A,
                                                                   const at::Tensor& B, bool left,
                                                                   bool check_errors) {
  if (!luNative(A) || !realFloating(B)) {
    auto r = runFallback("aten::_linalg_solve_ex", "", {A, B, left, check_errors});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor(), r[3].toTensor()};
  }
  Structured<at::meta::structured__linalg_solve_ex> s(Mode::kFunctional, nullptr);
  solveExInto(s, A, B, left, check_errors);
  return {s.output(0), s.output(1), s.output(2), s.output(3)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> solveExOut(
    const at::Tensor& A, const at::Tensor& B, bool left, bool check_errors, at::Tensor& result,
    at::Tensor& LU, at::Tensor& pivots, at::Tensor& info) {
  if (!luNative(A) || !realFloating(B)) {
    runFallback("aten::_linalg_solve_ex", "result",
                {A, B, left, check_errors, result, LU, pivots, info});
    return {result, LU, pivots, info};
  }
  Structured<at::meta::structured__linalg_solve_ex> s(Mode::kOut, &result, &LU, &pivots, &info);
  solveExInto(s, A, B, left, check_errors);
  return {result, LU, pivots, info};
}

// inv(A) = solve(A, I), as CPU computes it.
void invExInto(Structured<at::meta::structured_linalg_inv_ex>& s, const at::Tensor& A,
               bool check_errors) {
  s.meta(A, check_errors);
  auto& inverse = const_cast<at::Tensor&>(s.output(0));
  auto& info = const_cast<at::Tensor&>(s.output(1));
  inverse.zero_();
  inverse.diagonal(0, -2, -1).fill_(1.);
  at::linalg_solve_ex_out(inverse, info, A, inverse.clone(), /*left=*/true);
  if (check_errors) at::_linalg_check_errors(info, "linalg.inv_ex", A.dim() == 2);
}

std::tuple<at::Tensor, at::Tensor> invEx(const at::Tensor& A, bool check_errors) {
  if (!luNative(A)) {
    auto r = runFallback("aten::linalg_inv_ex", "", {A, check_errors});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_linalg_inv_ex> s(Mode::kFunctional, nullptr);
  invExInto(s, A, check_errors);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> invExOut(const at::Tensor& A, bool check_errors,
                                              at::Tensor& inverse, at::Tensor& info) {
  if (!luNative(A)) {
    runFallback("aten::linalg_inv_ex", "inverse", {A, check_errors, inverse, info});
    return {inverse, info};
  }
  Structured<at::meta::structured_linalg_inv_ex> s(Mode::kOut, &inverse, &info);
  invExInto(s, A, check_errors);
  return {inverse, info};
}

// det(A) and slogdet(A) from LU: a contiguous A is factored as A^T (det(A^T) = det(A)), as CPU
// does, since the backward reuses LU and pivots. det(P) = (-1)^(rows swapped).
void detFactor(const at::Tensor& A, at::Tensor& LU, at::Tensor& pivots) {
  at::Tensor info = at::empty({0}, A.options().dtype(at::kInt));
  at::linalg_lu_factor_ex_out(LU, pivots, info, A.is_contiguous() ? A.mT() : A);
}

at::Tensor permutationSign(const at::Tensor& pivots) {
  const int64_t n = pivots.size(-1);
  return at::arange(1, n + 1, pivots.options())
      .ne(pivots)
      .sum(-1, /*keepdim=*/false, at::kLong)
      .fmod_(2)
      .mul_(-2)
      .add_(1);
}

void detInto(Structured<at::meta::structured__linalg_det>& s, const at::Tensor& A) {
  s.meta(A);
  auto& result = const_cast<at::Tensor&>(s.output(0));
  auto& LU = const_cast<at::Tensor&>(s.output(1));
  auto& pivots = const_cast<at::Tensor&>(s.output(2));
  detFactor(A, LU, pivots);
  at::mul_out(result, permutationSign(pivots), at::linalg_diagonal(LU).prod(-1));
}

void slogdetInto(Structured<at::meta::structured__linalg_slogdet>& s, const at::Tensor& A) {
  s.meta(A);
  auto& sign = const_cast<at::Tensor&>(s.output(0));
  auto& logabsdet = const_cast<at::Tensor&>(s.output(1));
  auto& LU = const_cast<at::Tensor&>(s.output(2));
  auto& pivots = const_cast<at::Tensor&>(s.output(3));
  detFactor(A, LU, pivots);
  const at::Tensor diag = LU.diagonal(0, -2, -1);
  at::mul_out(sign, diag.sgn().prod(-1), permutationSign(pivots));
  at::sum_out(logabsdet, diag.abs().log_(), -1);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> slogdet(const at::Tensor& A) {
  if (!luNative(A)) {
    auto r = runFallback("aten::_linalg_slogdet", "", {A});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor(), r[3].toTensor()};
  }
  Structured<at::meta::structured__linalg_slogdet> s(Mode::kFunctional, nullptr);
  slogdetInto(s, A);
  return {s.output(0), s.output(1), s.output(2), s.output(3)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> slogdetOut(const at::Tensor& A,
                                                                          at::Tensor& sign,
                                                                          at::Tensor& logabsdet,
                                                                          at::Tensor& LU,
                                                                          at::Tensor& pivots) {
  if (!luNative(A)) {
    runFallback("aten::_linalg_slogdet", "sign", {A, sign, logabsdet, LU, pivots});
    return {sign, logabsdet, LU, pivots};
  }
  Structured<at::meta::structured__linalg_slogdet> s(Mode::kOut, &sign, &logabsdet, &LU, &pivots);
  slogdetInto(s, A);
  return {sign, logabsdet, LU, pivots};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> det(const at::Tensor& A) {
  if (!luNative(A)) {
    auto r = runFallback("aten::_linalg_det", "", {A});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  Structured<at::meta::structured__linalg_det> s(Mode::kFunctional, nullptr);
  detInto(s, A);
  return {s.output(0), s.output(1), s.output(2)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> detOut(const at::Tensor& A, at::Tensor& result,
                                                         at::Tensor& LU, at::Tensor& pivots) {
  if (!luNative(A)) {
    runFallback("aten::_linalg_det", "result", {A, result, LU, pivots});
    return {result, LU, pivots};
  }
  Structured<at::meta::structured__linalg_det> s(Mode::kOut, &result, &LU, &pivots);
  detInto(s, A);
  return {result, LU, pivots};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_cholesky_solve_helper", TORCH_FN(choleskySolveHelper));
  m.impl("_linalg_det", TORCH_FN(det));
  m.impl("_linalg_det.result", TORCH_FN(detOut));
  m.impl("_linalg_slogdet", TORCH_FN(slogdet));
  m.impl("_linalg_slogdet.sign", TORCH_FN(slogdetOut));
  m.impl("_linalg_solve_ex", TORCH_FN(solveEx));
  m.impl("_linalg_solve_ex.result", TORCH_FN(solveExOut));
  m.impl("cholesky", TORCH_FN(cholesky));
  m.impl("cholesky_inverse", TORCH_FN(choleskyInverse));
  m.impl("cholesky_inverse.out", TORCH_FN(choleskyInverseOut));
  m.impl("linalg_cholesky_ex", TORCH_FN(choleskyEx));
  m.impl("linalg_cholesky_ex.L", TORCH_FN(choleskyExOut));
  m.impl("linalg_inv_ex", TORCH_FN(invEx));
  m.impl("linalg_inv_ex.inverse", TORCH_FN(invExOut));
  m.impl("linalg_lu_factor_ex", TORCH_FN(luFactorEx));
  m.impl("linalg_lu_factor_ex.out", TORCH_FN(luFactorExOut));
  m.impl("linalg_lu_solve", TORCH_FN(luSolveFn));
  m.impl("linalg_lu_solve.out", TORCH_FN(luSolveOut));
  m.impl("linalg_solve_triangular", TORCH_FN(solveTriangularFn));
  m.impl("linalg_solve_triangular.out", TORCH_FN(solveTriangularOut));
  m.impl("triangular_solve", TORCH_FN(triangularSolve));
  m.impl("triangular_solve.X", TORCH_FN(triangularSolveOut));
}

}  // namespace torch_ocl::aten
