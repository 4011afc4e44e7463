// The SVD for large real matrices, all on the device (kernels in kernels/linalg_svd.cl):
// Golub-Kahan bidiagonalisation by Householder reflectors in panels (LAPACK dlabrd's blocking:
// four kernels per column, the trailing update A -= U Y^T + X V^T as two GEMMs), the implicit
// shifted QR on the bidiagonal recording its rotations, and U, V as the reflectors' products
// (formQ: the blocked Householder product over the GEMM) rotated by the records, one work item per
// 8 rows. Complex matrices take the same path: the bidiagonalisation by complex reflectors
// (zgebrd's, whose betas are real, so the bidiagonal is real), the real bidiagonal QR unchanged,
// Q and P complex from formQ, and the real rotations applied to complex rows as to pairs of real
// ones. Below kSvdBidiagFrom linalg_decomp.cpp's one-sided Jacobi runs.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>

#include <cfloat>
#include <string>

#include "aten/cl_types.h"
#include "aten/linalg/linalg_decomp.h"
#include "aten/linalg/linalg_scalar.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kLinalgSvdFamily;
char kLinalgSvdComplexFamily;

// Measured on PoCL (2 shared cores) against the Jacobi kernel: one matrix, even at order 48
// (1.0 ms each), this path wins from 64-96 (96: 5.3 vs 15.5 ms); in batches of 16 from 48 (10 vs
// 29 ms; 96: 58 vs 309 ms).
constexpr int64_t kSvdBidiagFrom = 64;
constexpr int64_t kSvdBidiagBatchedFrom = 48;  // with at least kSvdBidiagBatch matrices
constexpr int64_t kSvdBidiagBatch = 8;
constexpr int64_t kBrdPanel = 32;  // the bidiagonalisation panel
constexpr size_t kOneGroup = 64;   // TLS in kernels/linalg_svd.cl
constexpr int64_t kRowWidth = 8;   // RW
constexpr size_t kItemsLocal = 8;  // few items per group: order 128 still fills 2 groups
constexpr int64_t kRecordBudget = int64_t{1} << 22;  // per stream, over the batch

// The real program (real dtypes) or the complex one (only the cbrd_* kernels).
cl_kernel svdKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  if (like.is_complex())
    return programs(idx).kernel(
        linalgScalarProgram(idx, &kLinalgSvdComplexFamily, "linalg_svd.cl", like.scalar_type()),
        name);
  return programs(idx).kernel(
      nnProgram(idx, &kLinalgSvdFamily, "linalg_svd.cl", like.scalar_type()), name);
}

size_t roundUp(int64_t v, int64_t to) {
  return static_cast<size_t>((v + to - 1) / to * to);
}

void launchItems(c10::DeviceIndex idx, cl_kernel k, int64_t items, int64_t batch) {
  const size_t local[2] = {kItemsLocal, 1};
  const size_t global[2] = {roundUp(items, kItemsLocal), static_cast<size_t>(batch)};
  launch2D(currentQueue(idx), k, global, local);
}

// The records of one stream (which: 3 for U, 4 for V) applied to xt (batch, p, ldx).
void rotatePairs(c10::DeviceIndex idx, const at::Tensor& xt, const at::Tensor& rot,
                 const at::Tensor& rid, const at::Tensor& state, int64_t cap, int which) {
  cl_kernel k = svdKernel(xt, "rotate_pairs");
  setArgs(k, bufferOf(xt), bufferOf(rot), bufferOf(rid), bufferOf(state),
          static_cast<cl_long>(xt.size(1)), static_cast<cl_long>(xt.size(2)),
          static_cast<cl_long>(cap), static_cast<cl_int>(which));
  launchItems(idx, k, xt.size(2) / kRowWidth, xt.size(0));
}

}  // namespace

bool svdBidiagonalApplies(const at::Tensor& a) {
  const int64_t k = std::min(a.size(-2), a.size(-1));
  const bool cplx = a.scalar_type() == at::kComplexFloat || a.scalar_type() == at::kComplexDouble;
  return (decompNative(a) || cplx) &&
         (k >= kSvdBidiagFrom ||
          (k >= kSvdBidiagBatchedFrom && at::native::batchCount(a) >= kSvdBidiagBatch));
}

// (U, S, Vh) of A (..., m, n) real or complex: U (..., m, m or k), S descending, Vh (..., k or n,
// n); U and Vh undefined without compute_uv.
std::tuple<at::Tensor, at::Tensor, at::Tensor> svdBidiagonal(const at::Tensor& A,
                                                             bool full_matrices, bool compute_uv) {
  const bool tall = A.size(-2) >= A.size(-1);
  // B = A (m >= n) or A^H, tall: B = U_b S V_b^H
  const at::Tensor B = tall ? A : A.mH();
  const int64_t m = B.size(-2), n = B.size(-1);
  const int64_t batch = at::native::batchCount(A);
  const c10::DeviceIndex idx = A.device().index();
  const bool cplx = A.is_complex();
  const bool dbl = A.scalar_type() == at::kDouble || A.scalar_type() == at::kComplexDouble;
  const auto opts = A.options();  // a, reflectors, panels, Q, P: A's dtype; d, e, rotations: real
  const auto ropts = opts.dtype(c10::toRealValueType(A.scalar_type()));
  const int64_t ldn = static_cast<int64_t>(roundUp(n, kRowWidth));
  at::Tensor a = at::zeros({batch, m, ldn}, opts);
  a.narrow(2, 0, n).copy_(B.reshape({batch, m, n}));
  // scaled to a largest element near 1 (exact, undone on S): no overflow or underflow in the
  // reflectors' squared norms
  const at::Tensor ascale = powerOfTwoScale(a.abs().amax({1, 2}), dbl).view({batch, 1, 1});
  a.mul_(ascale);
  at::Tensor d = at::empty({batch, n}, ropts), e = at::zeros({batch, n}, ropts);
  at::Tensor taul = at::zeros({batch, n}, opts), taur = at::zeros({batch, n}, opts);
  // ---- bidiagonalisation, in panels ----
  const int64_t nb = std::min(kBrdPanel, n);
  at::Tensor ut = at::zeros({batch, nb, m}, opts), xt = at::zeros({batch, nb, m}, opts);
  at::Tensor yt = at::zeros({batch, nb, ldn}, opts), vt = at::zeros({batch, nb, ldn}, opts);
  at::Tensor dots = at::zeros({batch, 2 * nb}, opts);
  for (int64_t k = 0; k < n; k += nb) {
    const int64_t jb = std::min(nb, n - k);
    OCL_TRY
    for (int64_t j = 0; j < jb; ++j) {
      const int64_t i = k + j;
      auto step = [&](const char* name, const at::Tensor& out, const at::Tensor& tau) {
        cl_kernel kern = svdKernel(a, (std::string(cplx ? "c" : "") + name).c_str());
        setArgs(kern, bufferOf(a), bufferOf(ut), bufferOf(xt), bufferOf(yt), bufferOf(vt),
                bufferOf(dots), bufferOf(out), bufferOf(tau), static_cast<cl_long>(m),
                static_cast<cl_long>(n), static_cast<cl_long>(ldn), static_cast<cl_long>(nb),
                static_cast<cl_long>(i), static_cast<cl_long>(j));
        return kern;
      };
      launchND(device(idx), currentQueue(idx), step("brd_col", d, taul),
               static_cast<size_t>(batch) * kOneGroup, kOneGroup);
      if (i + 1 >= n) break;
      launchItems(idx, step("brd_y", d, taul), cplx ? ldn : ldn / kRowWidth, batch);
      launchND(device(idx), currentQueue(idx), step("brd_row", e, taur),
               static_cast<size_t>(batch) * kOneGroup, kOneGroup);
      launchItems(idx, step("brd_x", e, taur), m, batch);
    }
    OCL_CATCH
    const int64_t rows = m - k - jb, cols = n - k - jb;
    if (rows > 0 && cols > 0) {
      at::Tensor trail = a.narrow(1, k + jb, rows).narrow(2, k + jb, cols);
      // A -= U Y^H + X V^H
      const at::Tensor yb = yt.narrow(1, 0, jb).narrow(2, k + jb, cols);
      const at::Tensor vb = vt.narrow(1, 0, jb).narrow(2, k + jb, cols);
      trail.baddbmm_(ut.narrow(1, 0, jb).narrow(2, k + jb, rows).mT(),
                     cplx ? yb.conj().resolve_conj() : yb, 1, -1);
      trail.baddbmm_(xt.narrow(1, 0, jb).narrow(2, k + jb, rows).mT(),
                     cplx ? vb.conj().resolve_conj() : vb, 1, -1);
    }
  }
  // ---- U = Q_L (rotated), V = Q_R (rotated), held transposed ----
  at::Tensor ql, xu, xv;
  const int64_t ldm = static_cast<int64_t>(roundUp(m, kRowWidth));
  if (compute_uv) {
    ql = formQ(a.narrow(2, 0, n).contiguous(), taul, full_matrices ? m : n);
    xu = at::zeros({batch, n, ldm}, opts);
    xu.narrow(2, 0, m).copy_(ql.narrow(2, 0, n).mT());
    at::Tensor qr = at::zeros({batch, n, n}, opts);
    qr.select(1, 0).select(1, 0).fill_(1);
    if (n > 1) {
      // G_i acts on columns i + 1..: row i's vector, packed as formQ takes it
      const at::Tensor packed = a.narrow(1, 0, n - 1).narrow(2, 1, n - 1).mT().contiguous();
      qr.narrow(1, 1, n - 1)
          .narrow(2, 1, n - 1)
          .copy_(formQ(packed, taur.narrow(1, 0, n - 1).contiguous(), n - 1));
    }
    xv = at::zeros({batch, n, ldn}, opts);
    xv.narrow(2, 0, n).copy_(qr.mT());
  }
  // rotate_pairs sees complex rows as real ones twice as long (the rotations are real)
  const auto realRows = [&](const at::Tensor& x) {
    return cplx ? at::view_as_real(x).view({batch, x.size(1), 2 * x.size(2)}) : x;
  };
  const at::Tensor xur = compute_uv ? realRows(xu) : xu, xvr = compute_uv ? realRows(xv) : xv;
  // ---- the bidiagonal's QR ----
  at::Tensor sup = at::cat({at::zeros({batch, 1}, ropts), e.narrow(1, 0, n - 1)}, 1).contiguous();
  const at::Tensor scale =
      powerOfTwoScale(at::maximum(d.abs().amax(-1), sup.abs().amax(-1)), dbl).unsqueeze(-1);
  d.mul_(scale);
  sup.mul_(scale);
  const int64_t cap =
      compute_uv ? std::max<int64_t>(4 * n, std::min<int64_t>(2 * n * n, kRecordBudget / batch))
                 : 1;
  at::Tensor urot = at::empty({batch, 2 * cap}, ropts), vrot = at::empty({batch, 2 * cap}, ropts);
  at::Tensor uid = at::empty({batch, 2 * cap}, opts.dtype(at::kInt));
  at::Tensor vid = at::empty({batch, 2 * cap}, opts.dtype(at::kInt));
  at::Tensor state = at::zeros({batch, 8}, opts.dtype(at::kInt));
  state.select(1, 0).fill_(n - 1);
  at::Tensor st;
  for (;;) {
    OCL_TRY
    cl_kernel qr = svdKernel(d, "bidiag_qr");
    cl_uint ai = 0;
    setArg(qr, ai, bufferOf(d));
    setArg(qr, ai, bufferOf(sup));
    setArg(qr, ai, bufferOf(urot));
    setArg(qr, ai, bufferOf(uid));
    setArg(qr, ai, bufferOf(vrot));
    setArg(qr, ai, bufferOf(vid));
    setArg(qr, ai, bufferOf(state));
    setArg(qr, ai, static_cast<cl_long>(n));
    setArg(qr, ai, static_cast<cl_long>(cap));
    setArg(qr, ai, static_cast<cl_int>(compute_uv));
    setArg(qr, ai, static_cast<cl_int>(75));
    if (dbl)
      setArg(qr, ai, static_cast<cl_double>(DBL_EPSILON));
    else
      setArg(qr, ai, static_cast<cl_float>(FLT_EPSILON));
    setArg(qr, ai, static_cast<cl_long>(batch));
    launch1D(device(idx), currentQueue(idx), qr, batch);
    if (compute_uv) {
      rotatePairs(idx, xur, urot, uid, state, cap, 3);
      rotatePairs(idx, xvr, vrot, vid, state, cap, 4);
    }
    OCL_CATCH
    st = state.cpu();
    if (st.select(1, 2).all().item<bool>()) break;
  }
  TORCH_CHECK_LINALG(!st.select(1, 5).any().item<bool>(),
                     "linalg.svd: The algorithm failed to converge because the input matrix is "
                     "ill-conditioned or has too many repeated singular values (error code: ",
                     st.select(1, 5).max().item<int>(), ").");
  const at::Tensor sign = at::where(d < 0, -1.0, 1.0).to(A.scalar_type());  // (batch, n)
  auto [sv, order] =
      d.abs().div_(scale).div_(ascale.view({batch, 1})).sort(/*dim=*/-1, /*descending=*/true);
  std::vector<int64_t> sshape = batchShape(A, 2);
  sshape.push_back(n);
  if (!compute_uv) return {at::Tensor(), sv.reshape(sshape), at::Tensor()};
  // U_b's columns: xu's rows, sorted; V_b's: xv's rows times the signs, sorted
  const at::Tensor ubs = xu.narrow(2, 0, m).gather(1, order.unsqueeze(-1).expand({batch, n, m}));
  const at::Tensor vbs = (xv.narrow(2, 0, n) * sign.unsqueeze(-1))
                             .gather(1, order.unsqueeze(-1).expand({batch, n, n}));
  at::Tensor uf = ubs.mT();  // (batch, m, n)
  if (full_matrices && m > n) uf = at::cat({uf, ql.narrow(2, n, m - n)}, 2);
  std::vector<int64_t> ushape = batchShape(A, 2), vshape = batchShape(A, 2);
  ushape.insert(ushape.end(), {m, uf.size(2)});
  vshape.insert(vshape.end(), {n, n});
  // B = U S Vh, Vh = V^H: vbs's rows are V's columns
  const at::Tensor U = uf.reshape(ushape);
  const at::Tensor Vt = (cplx ? vbs.conj().resolve_conj() : vbs).reshape(vshape);
  if (tall) return {U, sv.reshape(sshape), Vt};
  // A = B^H = Vh^H S U^H
  return {Vt.mH().resolve_conj(), sv.reshape(sshape), U.mH().resolve_conj()};
}

}  // namespace torch_ocl::aten
