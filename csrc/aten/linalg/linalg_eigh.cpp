// The symmetric eigensolver for large real matrices, all on the device (kernels in
// kernels/linalg_eigh.cl): Householder tridiagonalisation in panels of kTrdPanel columns (LAPACK
// dsytrd's blocking: the panel's reflectors and their W by two kernels per column, the
// symmetric rank-2k trailing update A -= V W^T + W V^T as two GEMMs), implicit QL on the
// tridiagonal, and for the eigenvectors Q (formQ: the blocked Householder product over the
// GEMM) rotated by the QL's recorded rotations, one work item per row. Complex Hermitian
// matrices take the same path: the tridiagonalisation by complex reflectors (zhetrd's, whose beta
// is real, so the tridiagonal is real), the real QL unchanged, Q complex from formQ, and the real
// rotations applied to the complex rows as to pairs of real ones. Below kEighTridiagFrom,
// linalg_decomp.cpp's Jacobi kernel runs instead.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>

#include <cfloat>

#include "aten/cl_types.h"
#include "aten/linalg/linalg_decomp.h"
#include "aten/linalg/linalg_scalar.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kLinalgEighFamily;
char kLinalgEighComplexFamily;

// Measured on PoCL (2 shared cores): one matrix, Jacobi is faster up to order 48 (0.7 vs 2.0 ms)
// and slower from 64 (1.7 vs 1.3 ms; 96: 5.0 vs 3.3); in batches of 16 this path wins from 32-48
// (48: 7.5 vs 26 ms, 96: 72 vs 256 ms), Jacobi's one work group per matrix then being the cost.
constexpr int64_t kEighTridiagFrom = 64;
constexpr int64_t kEighTridiagBatchedFrom = 32;  // with at least kEighTridiagBatch matrices
constexpr int64_t kEighTridiagBatch = 8;
// Complex, in batches of 8 (PoCL, shared): order 32 0.33 ms a matrix by Jacobi vs 0.50 here, 48:
// 1.21 vs 0.75; one matrix: 63 (Jacobi) 3.1 ms, 64 (here) 3.3, 96 5.0.
constexpr int64_t kEighTridiagComplexBatchedFrom = 48;
constexpr int64_t kTrdPanel = 32;    // <= TLS / 2 in kernels/linalg_eigh.cl (trd_column's dots)
constexpr size_t kTrdLocal = 64;     // TLS
constexpr size_t kRowsLocal = 8;     // trd_symv: few items (RW rows each) per group
constexpr int64_t kComplexRows = 4;  // CRW: ctrd_symv's rows per item
constexpr int64_t kRotateWidth = 8;  // RW: rows per trd_symv / rotate_rows item
constexpr int64_t kRotationBudget = int64_t{1} << 22;
constexpr size_t kRotateLocal = 8;  // few items per group: even order 128 fills 2 groups

// The real program (real dtypes) or the complex one (only the ctrd_* kernels).
cl_kernel eighKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  if (like.is_complex())
    return programs(idx).kernel(
        linalgScalarProgram(idx, &kLinalgEighComplexFamily, "linalg_eigh.cl", like.scalar_type()),
        name);
  return programs(idx).kernel(
      nnProgram(idx, &kLinalgEighFamily, "linalg_eigh.cl", like.scalar_type()), name);
}

size_t roundUp(int64_t v, int64_t to) {
  return static_cast<size_t>((v + to - 1) / to * to);
}

}  // namespace

at::Tensor powerOfTwoScale(const at::Tensor& amax, bool dbl) {
  const double lim = dbl ? 1022 : 126;  // 2^lim stays finite, even for subnormal amax
  return at::where(amax > 0, at::exp2(-at::floor(at::log2(amax)).clamp_(-lim, lim)),
                   at::ones_like(amax));
}

bool eighTridiagonalApplies(const at::Tensor& a) {
  const int64_t n = a.size(-1);
  const bool cplx = a.scalar_type() == at::kComplexFloat || a.scalar_type() == at::kComplexDouble;
  const int64_t batched_from = cplx ? kEighTridiagComplexBatchedFrom : kEighTridiagBatchedFrom;
  return (decompNative(a) || cplx) &&
         (n >= kEighTridiagFrom ||
          (n >= batched_from && at::native::batchCount(a) >= kEighTridiagBatch));
}

// sym: (..., n, n) real symmetric or complex Hermitian, contiguous, both triangles filled.
// Eigenvalues ascending (real), eigenvectors in the columns (signs, or phases, free, as LAPACK's
// are only by convention).
std::tuple<at::Tensor, at::Tensor> eighTridiagonal(const at::Tensor& sym, bool compute_v) {
  const int64_t n = sym.size(-1);
  const int64_t batch = at::native::batchCount(sym);
  const c10::DeviceIndex idx = sym.device().index();
  const bool cplx = sym.is_complex();
  const bool dbl = sym.scalar_type() == at::kDouble || sym.scalar_type() == at::kComplexDouble;
  const auto opts = sym.options();  // a, V, W, tau, Q: sym's dtype; d, e, rotations: real
  const auto ropts = opts.dtype(c10::toRealValueType(sym.scalar_type()));
  // rows padded to whole RW-vectors (zeros), which the kernels read and write
  const int64_t ldn = static_cast<int64_t>(roundUp(n, kRotateWidth));
  at::Tensor a = at::zeros({batch, n, ldn}, opts);
  // complex: b = conj(A) = A^T, whose rows are A's columns (kernels/linalg_eigh.cl's ctrd_*)
  const at::Tensor sym3 = sym.reshape({batch, n, n});
  a.narrow(2, 0, n).copy_(cplx ? sym3.conj() : sym3);
  // A scaled by a power of two to a largest element near 1 (exact; the eigenvalues are scaled back
  // at the end), so that the reflectors' squared norms neither overflow nor underflow (LAPACK's
  // syevd scales too).
  const at::Tensor ascale = powerOfTwoScale(a.abs().amax({1, 2}), dbl).view({batch, 1, 1});
  a.mul_(ascale);
  const int64_t nb = std::min(kTrdPanel, n);
  at::Tensor vt = at::zeros({batch, nb, ldn}, opts), wt = at::zeros({batch, nb, ldn}, opts);
  at::Tensor d = at::empty({batch, n}, ropts), e = at::zeros({batch, n}, ropts);
  at::Tensor tau = at::zeros({batch, n}, opts), xy = at::empty({batch, 2 * nb}, opts);
  // ---- tridiagonalisation ----
  for (int64_t k = 0; k < n; k += nb) {
    const int64_t jb = std::min(nb, n - k);
    OCL_TRY
    for (int64_t j = 0; j <= jb; ++j) {
      const int64_t i = k + j;
      const bool finish = j == jb;
      if (finish && (k + jb >= n || j == 0)) break;  // nothing left to update
      cl_kernel col = eighKernel(a, cplx ? "ctrd_column" : "trd_column");
      setArgs(col, bufferOf(a), bufferOf(vt), bufferOf(wt), bufferOf(d), bufferOf(e), bufferOf(tau),
              bufferOf(xy), static_cast<cl_long>(n), static_cast<cl_long>(ldn),
              static_cast<cl_long>(nb), static_cast<cl_long>(i), static_cast<cl_long>(j),
              static_cast<cl_int>(finish));
      launchND(device(idx), currentQueue(idx), col, static_cast<size_t>(batch) * kTrdLocal,
               kTrdLocal);
      if (finish || i >= n - 1) continue;
      cl_kernel symv = eighKernel(a, cplx ? "ctrd_symv" : "trd_symv");
      setArgs(symv, bufferOf(a), bufferOf(vt), bufferOf(wt), bufferOf(tau), bufferOf(xy),
              static_cast<cl_long>(n), static_cast<cl_long>(ldn), static_cast<cl_long>(nb),
              static_cast<cl_long>(i), static_cast<cl_long>(j));
      // an item per RW rows (real) or kComplexRows rows (complex)
      const size_t local[2] = {kRowsLocal, 1};
      const size_t global[2] = {roundUp(ldn / (cplx ? kComplexRows : kRotateWidth), kRowsLocal),
                                static_cast<size_t>(batch)};
      launch2D(currentQueue(idx), symv, global, local);
    }
    OCL_CATCH
    const int64_t rest = n - k - jb;
    if (rest > 0) {
      at::Tensor trail = a.narrow(1, k + jb, rest).narrow(2, k + jb, rest);
      const at::Tensor vb = vt.narrow(1, 0, jb).narrow(2, k + jb, rest);  // (batch, jb, rest)
      const at::Tensor wb = wt.narrow(1, 0, jb).narrow(2, k + jb, rest);
      if (cplx) {  // b -= conj(V W^H + W V^H) = conj(W) V^T + conj(V) W^T
        trail.baddbmm_(wb.mT().conj().resolve_conj(), vb, 1, -1);
        trail.baddbmm_(vb.mT().conj().resolve_conj(), wb, 1, -1);
      } else {
        trail.baddbmm_(vb.mT(), wb, 1, -1);
        trail.baddbmm_(wb.mT(), vb, 1, -1);
      }
    }
  }
  // ---- the tridiagonal's eigenvalues (and rotations) ----
  at::Tensor xt;  // X^T, X the eigenvectors so far: Q, then Q times the rotations
  if (compute_v) {
    // Q = diag(1, Q'), Q' the product of the reflectors packed in a[i][i+2..] (v[i+1] = 1), as
    // formQ takes them: column i of the (n-1, n-1) matrix below its diagonal.
    at::Tensor q = at::zeros({batch, n, n}, opts);
    q.select(1, 0).select(1, 0).fill_(1);
    if (n > 1) {
      const at::Tensor packed = a.narrow(1, 0, n - 1).narrow(2, 1, n - 1).mT().contiguous();
      q.narrow(1, 1, n - 1)
          .narrow(2, 1, n - 1)
          .copy_(formQ(packed, tau.narrow(1, 0, n - 1).contiguous(), n - 1));
    }
    xt = at::zeros({batch, n, ldn}, opts);
    xt.narrow(2, 0, n).copy_(q.mT());
  }
  // rotate_rows sees complex rows as real ones twice as long (the rotations are real)
  const at::Tensor xr = compute_v && cplx ? at::view_as_real(xt).view({batch, n, 2 * ldn}) : xt;
  // d and e scaled by a power of two to a norm near 1 (exact), so that the QL's rotations can
  // take plain square roots without overflow or underflow (LAPACK's dsteqr scales too).
  const at::Tensor scale =
      powerOfTwoScale(at::maximum(d.abs().amax(-1), e.abs().amax(-1)), dbl).unsqueeze(-1);
  d.mul_(scale);
  e.mul_(scale);
  // Rotations recorded per matrix and call: QL takes about n^2 in all (one call mostly); a batch
  // shares a budget of kRotationBudget (more calls, each a host wait, instead of more memory).
  // At least 4n, so that any QL step fits.
  const int64_t cap =
      compute_v ? std::max<int64_t>(4 * n, std::min<int64_t>(n * n, kRotationBudget / batch)) : 1;
  at::Tensor rot = at::empty({batch, 2 * cap}, ropts);
  at::Tensor its = at::empty({batch, 2 * cap}, opts.dtype(at::kInt));
  at::Tensor state = at::zeros({batch, 8}, opts.dtype(at::kInt));
  for (;;) {
    OCL_TRY
    cl_kernel ql = eighKernel(d, "tridiag_ql");
    cl_uint ai = 0;
    setArg(ql, ai, bufferOf(d));
    setArg(ql, ai, bufferOf(e));
    setArg(ql, ai, bufferOf(rot));
    setArg(ql, ai, bufferOf(its));
    setArg(ql, ai, bufferOf(state));
    setArg(ql, ai, static_cast<cl_long>(n));
    setArg(ql, ai, static_cast<cl_long>(cap));
    setArg(ql, ai, static_cast<cl_int>(compute_v));
    setArg(ql, ai, static_cast<cl_int>(30 * n));
    if (dbl) {
      setArg(ql, ai, static_cast<cl_double>(DBL_EPSILON));
      setArg(ql, ai, static_cast<cl_double>(DBL_MIN));
    } else {
      setArg(ql, ai, static_cast<cl_float>(FLT_EPSILON));
      setArg(ql, ai, static_cast<cl_float>(FLT_MIN));
    }
    setArg(ql, ai, static_cast<cl_long>(batch));
    launch1D(device(idx), currentQueue(idx), ql, batch);
    if (compute_v) {
      cl_kernel rr = eighKernel(d, "rotate_rows");
      setArgs(rr, bufferOf(xr), bufferOf(rot), bufferOf(its), bufferOf(state),
              static_cast<cl_long>(n), static_cast<cl_long>(xr.size(2)), static_cast<cl_long>(cap));
      const int64_t vectors = xr.size(2) / kRotateWidth;
      const size_t local[2] = {kRotateLocal, 1};
      const size_t global[2] = {roundUp(vectors, kRotateLocal), static_cast<size_t>(batch)};
      launch2D(currentQueue(idx), rr, global, local);
    }
    OCL_CATCH
    const at::Tensor st = state.cpu();
    if (st.select(1, 2).all().item<bool>()) break;
  }
  const at::Tensor info = state.cpu().select(1, 5).contiguous();
  at::_linalg_check_errors(info.reshape(batchShape(sym, 2)), "linalg.eigh", sym.dim() == 2);
  std::vector<int64_t> wshape = batchShape(sym, 2);
  wshape.push_back(n);
  auto [w, order] = d.div_(scale).div_(ascale.view({batch, 1})).sort(/*dim=*/-1);
  if (!compute_v) return {w.reshape(wshape), at::Tensor()};
  const at::Tensor v =
      xt.narrow(2, 0, n).mT().gather(-1, order.unsqueeze(-2).expand({batch, n, n}));
  return {w.reshape(wshape), v.reshape(sym.sizes())};
}

}  // namespace torch_ocl::aten
