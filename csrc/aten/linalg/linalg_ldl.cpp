// linalg.ldl_factor(_ex) and linalg.ldl_solve on the device: LDL^T with Bunch-Kaufman pivoting as
// LAPACK's sytrf computes it for CPU (the lower triangle, LAPACK's pivot encoding), and the
// matching solve (sytrs), through the small-matrix kernels of kernels/linalg_ldl.cl, one source
// for float32, float64 (hermitian is the same for real matrices) and complex (zsytf2/zsytrs, or
// zhetf2/zhetrs with hermitian). Argument checks and output layouts come from
// PyTorch's meta functions.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/ops/linalg_ldl_factor_ex_meta.h>
#include <ATen/ops/linalg_ldl_solve_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/linalg/linalg_scalar.h"
#include "aten/nn_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kLinalgLdlFamily;

cl_kernel ldlKernel(const at::Tensor& like, const char* name) {
  return programs(like.device().index())
      .kernel(linalgScalarProgram(like.device().index(), &kLinalgLdlFamily, "linalg_ldl.cl",
                                  like.scalar_type()),
              name);
}

bool ldlNative(const at::Tensor& t) {
  const c10::ScalarType s = t.scalar_type();
  return s == at::kFloat || s == at::kDouble || s == at::kComplexFloat || s == at::kComplexDouble;
}

void ldlFactorInto(Structured<at::meta::structured_linalg_ldl_factor_ex>& s, const at::Tensor& A,
                   bool hermitian, bool check_errors) {
  s.meta(A, hermitian, check_errors);
  auto& LD = const_cast<at::Tensor&>(s.output(0));
  auto& pivots = const_cast<at::Tensor&>(s.output(1));
  auto& info = const_cast<at::Tensor&>(s.output(2));
  if (A.numel() == 0) {  // CPU's: nothing factored, info zero
    info.zero_();
    return;
  }
  const int64_t n = A.size(-1), batch = at::native::batchCount(A);
  // CPU factors tril(A): the strict upper triangle of LD is zero.
  at::Tensor work = A.tril().resolve_conj().contiguous();
  at::Tensor piv = at::empty(pivots.sizes(), pivots.options()).contiguous();
  at::Tensor inf = at::empty(info.sizes(), info.options()).contiguous();
  const c10::DeviceIndex idx = A.device().index();
  OCL_TRY
  cl_kernel k = ldlKernel(work, "ldl_factor");
  // hermitian is the same as symmetric for real matrices (the kernel ignores it there)
  setArgs(k, bufferOf(work), bufferOf(piv), bufferOf(inf), static_cast<cl_long>(n),
          static_cast<cl_int>(hermitian));
  launchRowGroups(idx, k, batch);
  OCL_CATCH
  LD.copy_(work);
  pivots.copy_(piv);
  info.copy_(inf);
  if (check_errors) at::_linalg_check_errors(info, "torch.linalg.ldl_factor_ex", A.dim() == 2);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ldlFactorEx(const at::Tensor& A, bool hermitian,
                                                           bool check_errors) {
  if (!ldlNative(A)) {
    auto r = runFallback("aten::linalg_ldl_factor_ex", "", {A, hermitian, check_errors});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  Structured<at::meta::structured_linalg_ldl_factor_ex> s(Mode::kFunctional, nullptr);
  ldlFactorInto(s, A, hermitian, check_errors);
  return {s.output(0), s.output(1), s.output(2)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> ldlFactorExOut(const at::Tensor& A,
                                                                 bool hermitian, bool check_errors,
                                                                 at::Tensor& LD, at::Tensor& pivots,
                                                                 at::Tensor& info) {
  if (!ldlNative(A)) {
    runFallback("aten::linalg_ldl_factor_ex", "out",
                {A, hermitian, check_errors, LD, pivots, info});
    return {LD, pivots, info};
  }
  checkSameDevice({A, LD, pivots, info});
  Structured<at::meta::structured_linalg_ldl_factor_ex> s(Mode::kOut, &LD, &pivots, &info);
  ldlFactorInto(s, A, hermitian, check_errors);
  return {LD, pivots, info};
}

void ldlSolveInto(Structured<at::meta::structured_linalg_ldl_solve>& s, const at::Tensor& LD,
                  const at::Tensor& pivots, const at::Tensor& B, bool hermitian) {
  checkSameDevice({LD, pivots, B});
  s.meta(LD, pivots, B, hermitian);
  auto& out = const_cast<at::Tensor&>(s.output(0));
  if (LD.numel() == 0 || pivots.numel() == 0 || out.numel() == 0) return;  // as CPU
  const int64_t n = LD.size(-1), k = out.size(-1);
  // The factors broadcast over B's batch dimensions (the result's shape).
  std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
  std::vector<int64_t> ld_shape = batch, piv_shape = batch;
  ld_shape.insert(ld_shape.end(), {n, n});
  piv_shape.push_back(n);
  const at::Tensor ld = LD.expand(ld_shape).resolve_conj().contiguous();
  const at::Tensor piv = pivots.expand(piv_shape).to(at::kInt).contiguous();
  at::Tensor x = B.expand(out.sizes()).resolve_conj().contiguous().clone();
  const int64_t nbatch = x.numel() / (n * k);
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel kern = ldlKernel(x, "ldl_solve");
  setArgs(kern, bufferOf(ld), bufferOf(piv), bufferOf(x), static_cast<cl_long>(n),
          static_cast<cl_long>(k), static_cast<cl_int>(hermitian));
  const size_t local[2] = {64, 1};
  const size_t global[2] = {static_cast<size_t>((k + 63) / 64 * 64), static_cast<size_t>(nbatch)};
  launch2D(currentQueue(idx), kern, global, local);
  OCL_CATCH
  out.copy_(x);
}

at::Tensor ldlSolve(const at::Tensor& LD, const at::Tensor& pivots, const at::Tensor& B,
                    bool hermitian) {
  if (!ldlNative(LD) || !ldlNative(B))
    return runFallback("aten::linalg_ldl_solve", "", {LD, pivots, B, hermitian})[0].toTensor();
  Structured<at::meta::structured_linalg_ldl_solve> s(Mode::kFunctional, nullptr);
  ldlSolveInto(s, LD, pivots, B, hermitian);
  return s.output(0);
}

at::Tensor& ldlSolveOut(const at::Tensor& LD, const at::Tensor& pivots, const at::Tensor& B,
                        bool hermitian, at::Tensor& out) {
  if (!ldlNative(LD) || !ldlNative(B)) {
    runFallback("aten::linalg_ldl_solve", "out", {LD, pivots, B, hermitian, out});
    return out;
  }
  checkSameDevice({LD, out});
  Structured<at::meta::structured_linalg_ldl_solve> s(Mode::kOut, &out);
  ldlSolveInto(s, LD, pivots, B, hermitian);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("linalg_ldl_factor_ex", TORCH_FN(ldlFactorEx));
  m.impl("linalg_ldl_factor_ex.out", TORCH_FN(ldlFactorExOut));
  m.impl("linalg_ldl_solve", TORCH_FN(ldlSolve));
  m.impl("linalg_ldl_solve.out", TORCH_FN(ldlSolveOut));
}

}  // namespace torch_ocl::aten
