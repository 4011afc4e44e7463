// linalg.cholesky (linalg_cholesky_ex), linalg.solve_triangular and the forms built on them
// (cholesky, cholesky_solve, cholesky_inverse, triangular_solve) on the device through the
// unblocked small-matrix kernels of kernels/linalg_small.cl (real floating dtypes; complex keeps
// the counted CPU fallback). Argument checks and output layouts are PyTorch's (meta functions,
// LinearAlgebraUtils.h). cholesky's info is written on the device; linalg.cholesky reads it back
// to raise, as it does on CUDA.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/linalg_cholesky_ex_meta.h>
#include <ATen/ops/triangular_solve_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/nn_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kLinalgSmallFamily;

cl_kernel smallKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  return programs(idx).kernel(
      nnProgram(idx, &kLinalgSmallFamily, "linalg_small.cl", like.scalar_type()), name);
}

bool realFloating(const at::Tensor& t) {
  return nnFloating(t.scalar_type());
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

void choleskyExInto(Structured<at::meta::structured_linalg_cholesky_ex>& s, const at::Tensor& A,
                    bool upper, bool check_errors) {
  s.meta(A, upper, check_errors);
  const at::Tensor& L = s.output(0);
  const at::Tensor& info = s.output(1);
  // Lower factor of A, or of A^T (whose lower triangle is A's upper one) for upper = True.
  at::Tensor work = (upper ? A.mT() : A).contiguous().clone();
  at::Tensor info_c = at::zeros(info.sizes(), info.options());  // n == 0: nothing to fail
  choleskyLowerInPlace(work, info_c.reshape({-1}));
  work = work.tril();
  const_cast<at::Tensor&>(L).copy_(upper ? work.mT() : work);
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
  const at::Tensor a = (left ? A_ : A_.mT()).contiguous();
  at::Tensor x = (left ? B_ : B_.mT()).contiguous().clone();
  const bool up = left ? upper : !upper;
  const int64_t n = a.size(-1), k = x.size(-1);
  const int64_t batch = n == 0 || k == 0 ? 0 : x.numel() / (n * k);
  if (batch > 0) {
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
  auto [L, info] = at::linalg_cholesky_ex(self, upper, /*check_errors=*/false);
  at::_linalg_check_errors(info, "cholesky", self.dim() == 2);
  return L;
}

// X with (L L^T) X = B for a lower factor, (U^T U) X = B for an upper one.
at::Tensor choleskySolveWith(const at::Tensor& B, const at::Tensor& factor, bool upper) {
  const at::Tensor y = solveTriangular(factor.mT(), B, !upper, true, false);
  return upper ? solveTriangular(factor, y, true, true, false)
               : solveTriangular(factor.mT(), solveTriangular(factor, B, false, true, false), true,
                                 true, false);
}

at::Tensor choleskySolveHelper(const at::Tensor& self, const at::Tensor& A, bool upper) {
  if (!realFloating(self) || !realFloating(A))
    return runFallback("aten::_cholesky_solve_helper", "", {self, A, upper})[0].toTensor();
  return upper ? choleskySolveWith(self, A, true) : choleskySolveWith(self, A, false);
}

at::Tensor choleskyInverse(const at::Tensor& self, bool upper) {
  if (!realFloating(self))
    return runFallback("aten::cholesky_inverse", "", {self, upper})[0].toTensor();
  at::native::squareCheckInputs(self, "cholesky_inverse");
  const int64_t n = self.size(-1);
  return choleskySolveWith(at::eye(n, self.options()).expand(self.sizes()), self, upper);
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_cholesky_solve_helper", TORCH_FN(choleskySolveHelper));
  m.impl("cholesky", TORCH_FN(cholesky));
  m.impl("cholesky_inverse", TORCH_FN(choleskyInverse));
  m.impl("cholesky_inverse.out", TORCH_FN(choleskyInverseOut));
  m.impl("linalg_cholesky_ex", TORCH_FN(choleskyEx));
  m.impl("linalg_cholesky_ex.L", TORCH_FN(choleskyExOut));
  m.impl("linalg_solve_triangular", TORCH_FN(solveTriangularFn));
  m.impl("linalg_solve_triangular.out", TORCH_FN(solveTriangularOut));
  m.impl("triangular_solve", TORCH_FN(triangularSolve));
  m.impl("triangular_solve.X", TORCH_FN(triangularSolveOut));
}

}  // namespace torch_ocl::aten
