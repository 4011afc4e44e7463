// Blocked LU with partial pivoting and the blocked triangular solve, for the matrices too large
// for the one-work-group-per-matrix kernels of linalg_small.cl: the panel, row swaps and
// diagonal-block solves are kernels of kernels/linalg_blocked.cl, every trailing update is one
// batched GEMM (the matrix engine: host BLAS on PoCL). Nothing runs on the host. The thresholds
// and the panel width were measured on PoCL (2 cores): below them the unblocked kernels win.
#include "aten/linalg/linalg_blocked.h"

#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>

#include <algorithm>
#include <string>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/linalg/linalg_decomp.h"
#include "aten/linalg/linalg_scalar.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kLinalgBlockedFamily;

// Measured on PoCL (2 shared cores): blocked LU is faster from order 48-64 up (batched: 1.6x at
// 64, 9x at 128); a 16-wide panel beat 32 and 64 at 512 and 1024 (the panel kernel's per-column
// barriers, not its arithmetic, bound it). The blocked triangular solve wins from n * k = 8192
// (order 128 with 64 right-hand sides, 512 with 16; 512 x 512 with 512: 1.5 ms, unblocked
// 139 ms); a few right-hand sides stay faster unblocked.
constexpr int64_t kLuBlockedFrom = 64;
constexpr int64_t kLuPanel = 16;
constexpr size_t kLuPanelLocal = 64;  // PLS in kernels/linalg_blocked.cl
constexpr int64_t kTrsmBlockedFrom = 128;
constexpr int64_t kTrsmBlockedRhs = 8;
constexpr int64_t kTrsmBlockedWork = 8192;  // n * k
constexpr int64_t kTrsmBlock = 64;
// Blocked QR wins from order 96 (single: 0.33 ms vs 0.48, 16 batched: 2.9 vs 5.1 ms; at 128:
// 6 vs 40 ms batched); a 32-wide panel.
constexpr int64_t kQrBlockedFrom = 96;
constexpr int64_t kQrPanel = 32;

cl_kernel blockedKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  return programs(idx).kernel(
      linalgScalarProgram(idx, &kLinalgBlockedFamily, "linalg_blocked.cl", like.scalar_type()),
      name);
}

bool blockedDtype(c10::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kComplexFloat || t == at::kComplexDouble;
}

// c -= a @ b (batched views) by one GEMM, in the orientation where c's rows are contiguous
// (c^T -= b^T a^T for a column-major c), so that the GEMM writes c in place without copies.
void subtractProduct(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b) {
  if (c.stride(-1) != 1 && c.stride(-2) == 1) {
    c.mT().baddbmm_(b.mT(), a.mT(), 1, -1);
  } else {
    c.baddbmm_(a, b, 1, -1);
  }
}

// (batch, m, n) matrices m * n apart, each row major or column major.
bool denseMatrices(const at::Tensor& a3) {
  const int64_t m = a3.size(1), n = a3.size(2);
  const bool row = a3.stride(2) == 1 && a3.stride(1) == n;
  const bool col = a3.stride(1) == 1 && a3.stride(2) == m;
  return (row || col) && (a3.size(0) <= 1 || a3.stride(0) == m * n);
}

size_t roundUp(int64_t v, int64_t to) {
  return static_cast<size_t>((v + to - 1) / to * to);
}

}  // namespace

bool luBlockedApplies(const at::Tensor& lu) {
  return blockedDtype(lu.scalar_type()) && lu.dim() >= 2 &&
         std::min(lu.size(-2), lu.size(-1)) >= kLuBlockedFrom;
}

// For each panel of kLuPanel columns: lu_panel factors it (pivot search, swaps and rank-1
// updates within the panel), lu_swap_solve applies its swaps to the columns right of it and forms
// U12 = L11^-1 A12, and A22 -= L21 U12 is one batched GEMM; at the end lu_swap_left applies each
// panel's swaps to the columns left of it (nothing reads those columns in between).
void luFactorBlocked(const at::Tensor& lu, const at::Tensor& piv, const at::Tensor& info) {
  const int64_t m = lu.size(-2), n = lu.size(-1), kmin = std::min(m, n);
  const int64_t batch = at::native::batchCount(lu);
  if (batch == 0 || kmin == 0) return;
  const c10::DeviceIndex idx = lu.device().index();
  at::Tensor a3 = lu.view({batch, m, n});
  TORCH_INTERNAL_ASSERT(denseMatrices(a3), "luFactorBlocked: dense row- or column-major matrices");
  const cl_long rs = a3.stride(1), cs = a3.stride(2);
  const at::Tensor w = at::empty({batch, std::min(kLuPanel, kmin) * m}, lu.options());
  for (int64_t k = 0; k < kmin; k += kLuPanel) {
    const int64_t kb = std::min(kLuPanel, kmin - k);
    OCL_TRY
    cl_kernel panel = blockedKernel(lu, "lu_panel");
    setArgs(panel, bufferOf(lu), bufferOf(w), bufferOf(piv), bufferOf(info),
            static_cast<cl_long>(m), static_cast<cl_long>(n), rs, cs, static_cast<cl_long>(k),
            static_cast<cl_long>(kb));
    launchND(device(idx), currentQueue(idx), panel, static_cast<size_t>(batch) * kLuPanelLocal,
             kLuPanelLocal);
    if (n > k + kb) {
      cl_kernel swap = blockedKernel(lu, "lu_swap_solve");
      setArgs(swap, bufferOf(lu), bufferOf(piv), static_cast<cl_long>(m), static_cast<cl_long>(n),
              rs, cs, static_cast<cl_long>(k), static_cast<cl_long>(kb));
      const size_t local[2] = {64, 1};
      const size_t global[2] = {roundUp(n - k - kb, 64), static_cast<size_t>(batch)};
      launch2D(currentQueue(idx), swap, global, local);
    }
    OCL_CATCH
    const int64_t rows = m - k - kb, cols = n - k - kb;
    if (rows > 0 && cols > 0)
      subtractProduct(a3.narrow(1, k + kb, rows).narrow(2, k + kb, cols),
                      a3.narrow(1, k + kb, rows).narrow(2, k, kb),
                      a3.narrow(1, k, kb).narrow(2, k + kb, cols));
  }
  if (kmin > kLuPanel) {
    OCL_TRY
    cl_kernel left = blockedKernel(lu, "lu_swap_left");
    setArgs(left, bufferOf(lu), bufferOf(piv), static_cast<cl_long>(m), static_cast<cl_long>(n), rs,
            cs, static_cast<cl_long>(kLuPanel));
    const size_t local[2] = {64, 1};
    const size_t global[2] = {roundUp(kmin, 64), static_cast<size_t>(batch)};
    launch2D(currentQueue(idx), left, global, local);
    OCL_CATCH
  }
}

bool denseColumnMajor(const at::Tensor& a) {
  return a.dim() >= 2 && a.mT().is_contiguous() && a.size(-2) > 1 && a.size(-1) > 1;
}

at::Tensor trsmOperand(const at::Tensor& a, int64_t k) {
  return trsmBlockedApplies(a, k) && denseColumnMajor(a) ? a : a.contiguous();
}

// A column-major a (lu_solve's LU) always goes blocked from order 128: the unblocked kernel would
// first need a transposing copy, which costs more than the blocked solve of even one column.
bool trsmBlockedApplies(const at::Tensor& a, int64_t k) {
  const int64_t n = a.size(-1);
  return blockedDtype(a.scalar_type()) && n >= kTrsmBlockedFrom && k > 0 &&
         (denseColumnMajor(a) || (k >= kTrsmBlockedRhs && n * k >= kTrsmBlockedWork));
}

// The inverses of all diagonal blocks in one launch (trtri_blocks), then block by block in
// dependency order (lower: top down, upper: bottom up) x[block] = inv(A_bb) x[block] and the
// rows not yet solved updated, x[rest] -= A[rest, block] x[block]: two GEMMs per block.
void triangularSolveBlocked(const at::Tensor& a, const at::Tensor& x, bool upper, bool unit) {
  const int64_t n = a.size(-1), k = x.size(-1);
  const int64_t batch = n == 0 || k == 0 ? 0 : x.numel() / (n * k);
  if (batch == 0) return;
  const at::Tensor a3 = a.view({batch, n, n});
  at::Tensor x3 = x.view({batch, n, k});
  const int64_t blocks = (n + kTrsmBlock - 1) / kTrsmBlock;
  const at::Tensor dinv = at::empty({batch, blocks, kTrsmBlock, kTrsmBlock}, a.options());
  const c10::DeviceIndex idx = a.device().index();
  OCL_TRY
  cl_kernel kern = blockedKernel(a, "trtri_blocks");
  setArgs(kern, bufferOf(a3), bufferOf(dinv), static_cast<cl_long>(n),
          static_cast<cl_long>(kTrsmBlock), static_cast<cl_long>(a3.stride(1)),
          static_cast<cl_long>(a3.stride(2)), static_cast<cl_long>(a3.stride(0)),
          static_cast<cl_int>(upper), static_cast<cl_int>(unit));
  const size_t local[3] = {static_cast<size_t>(kTrsmBlock), 1, 1};
  const size_t global[3] = {static_cast<size_t>(kTrsmBlock), static_cast<size_t>(blocks),
                            static_cast<size_t>(batch)};
  launchKernel(currentQueue(idx), kern, 3, global, local);
  OCL_CATCH
  for (int64_t s = 0; s < blocks; ++s) {
    const int64_t blk = upper ? blocks - 1 - s : s;
    const int64_t b = blk * kTrsmBlock, bs = std::min(kTrsmBlock, n - b);
    at::Tensor xb = x3.narrow(1, b, bs);
    xb.copy_(at::bmm(dinv.select(1, blk).narrow(1, 0, bs).narrow(2, 0, bs), xb));
    if (upper && b > 0) {
      subtractProduct(x3.narrow(1, 0, b), a3.narrow(1, 0, b).narrow(2, b, bs), xb);
    } else if (!upper && b + bs < n) {
      const int64_t rest = n - b - bs;
      subtractProduct(x3.narrow(1, b + bs, rest), a3.narrow(1, b + bs, rest).narrow(2, b, bs), xb);
    }
  }
}

bool luPermuteByGather(const at::Tensor& x) {
  return blockedDtype(x.scalar_type()) && x.size(-2) >= kLuBlockedFrom;
}

// Rows reordered by one gather from the permutation lu_pivots_to_perm builds.
void luPermuteGather(const at::Tensor& x, const at::Tensor& piv, bool reverse) {
  const int64_t n = x.size(-2), k = x.size(-1);
  const int64_t batch = n == 0 || k == 0 ? 0 : x.numel() / (n * k);
  if (batch == 0) return;
  at::Tensor x3 = x.view({batch, n, k});
  const at::Tensor perm = at::empty({2, batch, n}, x.options().dtype(at::kLong));  // + work
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel kern = blockedKernel(x, "lu_pivots_to_perm");
  setArgs(kern, bufferOf(piv), bufferOf(perm), static_cast<cl_long>(n), static_cast<cl_long>(batch),
          static_cast<cl_int>(reverse));
  launch1D(device(idx), currentQueue(idx), kern, batch);
  OCL_CATCH
  x3.copy_(x3.gather(1, perm[0].unsqueeze(-1).expand({batch, n, k})));
}

// ---- Householder QR ----------------------------------------------------------------------------

bool qrBlockedApplies(const at::Tensor& a) {
  return blockedDtype(a.scalar_type()) && a.dim() >= 2 &&
         std::min(a.size(-2), a.size(-1)) >= kQrBlockedFrom;
}

bool reflectorsBlockedApply(const at::Tensor& v, int64_t k) {
  return qrBlockedApplies(v) && k >= kQrBlockedFrom;
}

namespace {

// The unit lower (rows, kb) reflector block V of a packed panel view (batch, rows, kb).
at::Tensor unitLower(const at::Tensor& panel) {
  at::Tensor v = panel.tril(-1);
  v.diagonal(0, -2, -1).fill_(1);
  return v;
}

// t (batch, kb, kb) with H_0 ... H_{kb-1} = I - V t V^H for v (batch, rows, kb) and tau
// (batch, kb) (a view: its batch stride is passed).
at::Tensor larft(const at::Tensor& v, const at::Tensor& tau) {
  const int64_t batch = v.size(0), kb = v.size(2);
  const at::Tensor gram = at::bmm(v.mH(), v).resolve_conj().contiguous();
  const at::Tensor tc = tau.contiguous();
  at::Tensor t = at::zeros({batch, kb, kb}, v.options());
  if (batch == 0 || kb == 0) return t;
  const c10::DeviceIndex idx = v.device().index();
  OCL_TRY
  cl_kernel kern = blockedKernel(v, "larft_gram");
  setArgs(kern, bufferOf(gram), bufferOf(t), bufferOf(tc), static_cast<cl_long>(kb),
          static_cast<cl_long>(kb), static_cast<cl_long>(batch));
  const size_t local[2] = {64, 1};
  const size_t global[2] = {roundUp(kb, 64), static_cast<size_t>(batch)};
  launch2D(currentQueue(idx), kern, global, local);
  OCL_CATCH
  return t;
}

// c (batch, rows, p) -= V op(t) (V^H c), op(t) = t (apply Q) or t^H (apply Q^H): LAPACK larfb.
void larfb(const at::Tensor& v, const at::Tensor& t, const at::Tensor& c, bool adjoint) {
  if (c.size(2) == 0) return;
  const at::Tensor w = at::bmm(adjoint ? t.mH() : t, at::bmm(v.mH(), c));
  c.baddbmm_(v, w, 1, -1);
}

}  // namespace

// Right-looking blocked geqrf: each kQrPanel-wide panel by the unblocked geqrf kernel, its
// reflectors' T by larft_gram, the trailing columns by larfb (three GEMMs).
std::tuple<at::Tensor, at::Tensor> geqrfBlocked(const at::Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), kmin = std::min(m, n);
  const int64_t batch = at::native::batchCount(A);
  at::Tensor a = A.resolve_conj().clone(at::MemoryFormat::Contiguous);
  std::vector<int64_t> tshape = batchShape(A, 2);
  tshape.push_back(kmin);
  at::Tensor tau = at::empty(tshape, A.options());
  if (batch == 0) return {a, tau};
  at::Tensor a3 = a.view({batch, m, n});
  at::Tensor tau2 = tau.view({batch, kmin});
  for (int64_t k = 0; k < kmin; k += kQrPanel) {
    const int64_t kb = std::min(kQrPanel, kmin - k);
    at::Tensor panel = a3.narrow(1, k, m - k).narrow(2, k, kb);
    auto [pa, ptau] = geqrfUnblocked(panel);
    panel.copy_(pa);
    tau2.narrow(1, k, kb).copy_(ptau);
    if (k + kb < n) {
      const at::Tensor v = unitLower(pa);
      larfb(v, larft(v, ptau), a3.narrow(1, k, m - k).narrow(2, k + kb, n - k - kb),
            /*adjoint=*/true);
    }
  }
  return {a, tau};
}

// Q c (forward = false: blocks last to first) or Q^H c (forward = true: first to last), a block
// of kQrPanel reflectors at a time as I - V T V^H.
void applyReflectorsBlocked(const at::Tensor& v, const at::Tensor& tau, const at::Tensor& c,
                            bool forward) {
  const int64_t m = c.size(-2), p = c.size(-1), nv = v.size(-1), k = tau.size(-1);
  const int64_t batch = at::native::batchCount(c);
  if (batch == 0 || m == 0 || p == 0 || k == 0) return;
  const at::Tensor v3 = v.reshape({batch, m, nv});
  const at::Tensor tau2 = tau.reshape({batch, k});
  at::Tensor c3 = c.view({batch, m, p});
  const int64_t blocks = (k + kQrPanel - 1) / kQrPanel;
  for (int64_t s = 0; s < blocks; ++s) {
    const int64_t j = (forward ? s : blocks - 1 - s) * kQrPanel, jb = std::min(kQrPanel, k - j);
    const at::Tensor vb = unitLower(v3.narrow(1, j, m - j).narrow(2, j, jb));
    larfb(vb, larft(vb, tau2.narrow(1, j, jb)), c3.narrow(1, j, m - j), /*adjoint=*/forward);
  }
}

}  // namespace torch_ocl::aten
