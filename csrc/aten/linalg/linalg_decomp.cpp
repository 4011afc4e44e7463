// QR (geqrf, linalg.qr, householder_product, ormqr), the symmetric eigensolver (linalg.eigh,
// eigvalsh) and the SVD (linalg.svd, svdvals) on the device through the per-matrix kernels of
// kernels/linalg_decomp.cl, for float32 and float64 (the dtypes CPU PyTorch has for them; 16-bit
// gets CPU's error through the fallback), and for complex too (the same file's complex forms:
// Hermitian Jacobi turns each pair's element real before rotating). Argument
// checks and output layouts are PyTorch's (meta functions or its wording). geqrf follows LAPACK's
// conventions, so R's signs, Q and the packed reflectors are CPU's. Small matrices: eigh is
// two-sided Jacobi, the SVD one-sided Jacobi (both in parallel round-robin ordering) whose left
// vectors are re-orthonormalised (and completed for full_matrices) through the Householder QR.
// Large ones, real and complex, go to linalg_eigh.cpp (tridiagonalisation + QL) and
// linalg_svd.cpp (bidiagonalisation + bidiagonal QR). Vectors' signs are not LAPACK's (the
// OpInfo checks compare them sign-free).
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_linalg_eigh_meta.h>
#include <ATen/ops/_linalg_svd_meta.h>
#include <ATen/ops/linalg_qr_meta.h>
#include <torch/library.h>

#include <cfloat>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/linalg/column_major.h"
#include "aten/linalg/linalg_blocked.h"
#include "aten/linalg/linalg_decomp.h"
#include "aten/linalg/linalg_scalar.h"
#include "aten/nn_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {

char kLinalgDecompFamily;

// Real and complex programs of the one kernels/linalg_decomp.cl (its complex Jacobi kernels are
// complex forms of their own).
cl_kernel decompKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  return programs(idx).kernel(
      linalgScalarProgram(idx, &kLinalgDecompFamily, "linalg_decomp.cl", like.scalar_type()), name);
}

// One work group per matrix, of the smallest power of two >= the matrix's parallel extent in
// [32, 256] (kernels/linalg_decomp.cl's LS): small matrices do not idle 256 items per barrier.
void launchPerMatrix(c10::DeviceIndex idx, cl_kernel kernel, int64_t batch, int64_t extent) {
  size_t local = 32;
  while (local < 256 && static_cast<int64_t>(local) < extent) local *= 2;
  launchND(device(idx), currentQueue(idx), kernel, static_cast<size_t>(batch) * local, local);
}

bool decompNative(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble;
}

// The QR family (geqrf, householder_product, ormqr, linalg.qr), eigh and the SVD also run
// complex.
bool qrNative(const at::Tensor& t) {
  return decompNative(t) || t.scalar_type() == at::kComplexFloat ||
         t.scalar_type() == at::kComplexDouble;
}

std::vector<int64_t> batchShape(const at::Tensor& t, int64_t drop) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end() - drop);
}

// (packed reflectors and R, tau) of every matrix of A (..., m, n): LAPACK geqrf's values.
std::tuple<at::Tensor, at::Tensor> geqrfDevice(const at::Tensor& A) {
  return qrBlockedApplies(A) ? geqrfBlocked(A) : geqrfUnblocked(A);
}

std::tuple<at::Tensor, at::Tensor> geqrfUnblocked(const at::Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  at::Tensor a = A.resolve_conj().contiguous().clone();
  std::vector<int64_t> tshape = batchShape(A, 2);
  tshape.push_back(k);
  at::Tensor tau = at::empty(tshape, A.options());
  const int64_t batch = at::native::batchCount(A);
  if (batch > 0 && k > 0) {
    const c10::DeviceIndex idx = A.device().index();
    OCL_TRY
    cl_kernel kern = decompKernel(a, "geqrf");
    setArgs(kern, bufferOf(a), bufferOf(tau), static_cast<cl_long>(m), static_cast<cl_long>(n));
    launchPerMatrix(idx, kern, batch, std::max(m, n));
    OCL_CATCH
  }
  return {a, tau};
}

// c (contiguous (batch..., m, p), in place) = Q c (forward = false) or Q^T c (forward = true),
// Q = H_0 ... H_{k-1} from v (..., m, nv) and tau (..., k) with the same batch as c.
void applyReflectors(const at::Tensor& v, const at::Tensor& tau, const at::Tensor& c,
                     bool forward) {
  const int64_t m = c.size(-2), p = c.size(-1), nv = v.size(-1), k = tau.size(-1);
  const int64_t batch = at::native::batchCount(c);
  if (batch == 0 || m == 0 || p == 0 || k == 0) return;
  if (reflectorsBlockedApply(v, k))
    return applyReflectorsBlocked(v.resolve_conj(), tau.resolve_conj(), c, forward);
  const at::Tensor vc = v.resolve_conj().contiguous(), tc = tau.resolve_conj().contiguous();
  const c10::DeviceIndex idx = c.device().index();
  OCL_TRY
  cl_kernel kern = decompKernel(c, "apply_reflectors");
  setArgs(kern, bufferOf(vc), bufferOf(tc), bufferOf(c), static_cast<cl_long>(m),
          static_cast<cl_long>(nv), static_cast<cl_long>(k), static_cast<cl_long>(p),
          static_cast<cl_int>(forward));
  const size_t local[2] = {64, 1};
  const size_t global[2] = {static_cast<size_t>((p + 63) / 64 * 64), static_cast<size_t>(batch)};
  launch2D(currentQueue(idx), kern, global, local);
  OCL_CATCH
}

// The first p columns of Q (..., m, p) for the reflectors of v (..., m, nv), tau (..., k).
at::Tensor formQ(const at::Tensor& v, const at::Tensor& tau, int64_t p) {
  const int64_t m = v.size(-2);
  std::vector<int64_t> shape = batchShape(v, 2);
  shape.insert(shape.end(), {m, p});
  at::Tensor q = at::eye(m, p, v.options()).expand(shape).contiguous();
  applyReflectors(v, tau, q, /*forward=*/false);
  return q;
}

namespace {

// ---- geqrf ---------------------------------------------------------------------------------
void geqrfCheck(const at::Tensor& self) {
  TORCH_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
}

std::tuple<at::Tensor, at::Tensor> geqrf(const at::Tensor& self) {
  if (!qrNative(self)) {
    auto r = runFallback("aten::geqrf", "", {self});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  geqrfCheck(self);
  return geqrfDevice(self);
}

std::tuple<at::Tensor&, at::Tensor&> geqrfOut(const at::Tensor& self, at::Tensor& a,
                                              at::Tensor& tau) {
  if (!qrNative(self)) {
    runFallback("aten::geqrf", "a", {self, a, tau});
    return {a, tau};
  }
  geqrfCheck(self);
  checkSameDevice({self, a, tau});
  TORCH_CHECK(a.scalar_type() == self.scalar_type(),
              "torch.geqrf: Expected input and a to have the same dtype, but got ",
              self.scalar_type(), " and ", a.scalar_type());
  TORCH_CHECK(tau.scalar_type() == self.scalar_type(),
              "torch.geqrf: Expected input and tau to have the same dtype, but got ",
              self.scalar_type(), " and ", tau.scalar_type());
  auto [ra, rt] = geqrfDevice(self);
  at::native::resize_output(a, ra.sizes());
  at::native::resize_output(tau, rt.sizes());
  a.copy_(ra);
  tau.copy_(rt);
  return {a, tau};
}

// ---- householder_product (orgqr) -----------------------------------------------------------
void householderCheck(const at::Tensor& input, const at::Tensor& tau) {
  const char* f = "torch.linalg.householder_product: ";
  TORCH_CHECK(input.dim() >= 2, f, "input must have at least 2 dimensions.");
  TORCH_CHECK(input.size(-2) >= input.size(-1), f,
              "input.shape[-2] must be greater than or equal to input.shape[-1]");
  TORCH_CHECK(input.size(-1) >= tau.size(-1), f,
              "input.shape[-1] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(input.dim() - tau.dim() == 1, f,
              "Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  if (input.dim() > 2) {
    const auto expected = input.sizes().slice(0, input.dim() - 2);
    const auto actual = tau.sizes().slice(0, tau.dim() - 1);
    TORCH_CHECK(actual.equals(expected), f,
                "Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
                actual);
  }
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), f, "tau dtype ", tau.scalar_type(),
              " does not match input dtype ", input.scalar_type());
  checkSameDevice({input, tau});
}

at::Tensor householderProduct(const at::Tensor& input, const at::Tensor& tau) {
  if (!qrNative(input) || !qrNative(tau))
    return runFallback("aten::linalg_householder_product", "", {input, tau})[0].toTensor();
  householderCheck(input, tau);
  // A batch of column-major matrices, as CPU (LAPACK's orgqr) and PyTorch's meta function return
  // it: compiled graphs assert these strides.
  return batchedColumnMajor(formQ(input, tau, input.size(-1)));
}

at::Tensor& householderProductOut(const at::Tensor& input, const at::Tensor& tau, at::Tensor& out) {
  if (!qrNative(input) || !qrNative(tau)) {
    runFallback("aten::linalg_householder_product", "out", {input, tau, out});
    return out;
  }
  householderCheck(input, tau);
  checkSameDevice({input, out});
  TORCH_CHECK(out.scalar_type() == input.scalar_type(),
              "torch.linalg.householder_product: out dtype ", out.scalar_type(),
              " does not match input dtype ", input.scalar_type());
  const at::Tensor q = formQ(input, tau, input.size(-1));
  at::native::resize_output(out, q.sizes());
  return out.copy_(q);
}

// ---- ormqr ---------------------------------------------------------------------------------
void ormqrCheck(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                bool left) {
  const char* f = "torch.ormqr: ";
  TORCH_CHECK(input.dim() >= 2, f, "input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 2, f, "other must have at least 2 dimensions.");
  const int64_t cond = left ? -2 : -1;
  TORCH_CHECK(other.size(cond) == input.size(-2), f, "other.shape[", cond,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.dim() > 0 && std::min(other.size(cond), input.size(-1)) == tau.size(-1), f,
              "tau.shape[-1] must be equal to min(other.shape[", cond, "], input.shape[-1])");
  TORCH_CHECK(input.dim() - tau.dim() == 1, f,
              "Expected tau to have one dimension less than input, but got tau.ndim equal to ",
              tau.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(input.dim() == other.dim(), f,
              "Expected other to have the same number of dimensions as input, but got "
              "other.ndim equal to ",
              other.dim(), " and input.ndim is equal to ", input.dim());
  if (input.dim() > 2) {
    const auto expected = input.sizes().slice(0, input.dim() - 2);
    const auto tb = tau.sizes().slice(0, tau.dim() - 1);
    TORCH_CHECK(tb.equals(expected), f,
                "Expected batch dimensions of tau to be equal to input.shape[:-2], but got ", tb);
    const auto ob = other.sizes().slice(0, other.dim() - 2);
    TORCH_CHECK(ob.equals(expected), f,
                "Expected batch dimensions of other to be equal to input.shape[:-2], but got ", ob);
  }
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), f,
              "Expected input and tau to have the same dtype, but input has dtype",
              input.scalar_type(), " and tau has dtype ", tau.scalar_type());
  TORCH_CHECK(other.scalar_type() == input.scalar_type(), f,
              "Expected input and other to have the same dtype, but input has dtype",
              input.scalar_type(), " and other has dtype ", other.scalar_type());
  checkSameDevice({input, tau, other});
}

at::Tensor ormqrDevice(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                       bool left, bool transpose) {
  // C Q = (Q^H C^H)^H and C Q^H = (Q C^H)^H (^H is ^T for real matrices).
  at::Tensor c = (left ? other : other.mH()).resolve_conj().contiguous().clone();
  applyReflectors(input, tau, c, /*forward=*/left == transpose);
  // Column-major like CPU's and the meta function's result (c.mH() already is).
  return left ? batchedColumnMajor(c) : c.mH();
}

at::Tensor ormqr(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other, bool left,
                 bool transpose) {
  if (!qrNative(input) || !qrNative(tau) || !qrNative(other))
    return runFallback("aten::ormqr", "", {input, tau, other, left, transpose})[0].toTensor();
  ormqrCheck(input, tau, other, left);
  return ormqrDevice(input, tau, other, left, transpose);
}

at::Tensor& ormqrOut(const at::Tensor& input, const at::Tensor& tau, const at::Tensor& other,
                     bool left, bool transpose, at::Tensor& out) {
  if (!qrNative(input) || !qrNative(tau) || !qrNative(other)) {
    runFallback("aten::ormqr", "out", {input, tau, other, left, transpose, out});
    return out;
  }
  ormqrCheck(input, tau, other, left);
  TORCH_CHECK(out.scalar_type() == input.scalar_type(),
              "torch.ormqr: Expected input and result to have the same dtype, but input has dtype",
              input.scalar_type(), " and result has dtype ", out.scalar_type());
  checkSameDevice({input, out});
  const at::Tensor r = ormqrDevice(input, tau, other, left, transpose);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

// ---- linalg.qr -----------------------------------------------------------------------------
void qrInto(Structured<at::meta::structured_linalg_qr>& s, const at::Tensor& A,
            c10::string_view mode) {
  s.meta(A, mode);
  auto [compute_q, reduced] = at::native::_parse_qr_mode(mode);
  auto& Q = const_cast<at::Tensor&>(s.output(0));
  auto& R = const_cast<at::Tensor&>(s.output(1));
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto [a, tau] = geqrfDevice(A);
  const int64_t rrows = reduced ? k : m;
  R.copy_(a.narrow(-2, 0, rrows).triu());
  if (compute_q) Q.copy_(formQ(a, tau, reduced ? k : m));
}

std::tuple<at::Tensor, at::Tensor> qr(const at::Tensor& A, c10::string_view mode) {
  if (!qrNative(A)) {
    auto r = runFallback("aten::linalg_qr", "", {A, std::string(mode)});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_linalg_qr> s(Mode::kFunctional, nullptr);
  qrInto(s, A, mode);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> qrOut(const at::Tensor& A, c10::string_view mode,
                                           at::Tensor& Q, at::Tensor& R) {
  if (!qrNative(A)) {
    runFallback("aten::linalg_qr", "out", {A, std::string(mode), Q, R});
    return {Q, R};
  }
  checkSameDevice({A, Q, R});
  Structured<at::meta::structured_linalg_qr> s(Mode::kOut, &Q, &R);
  qrInto(s, A, mode);
  return {Q, R};
}

// ---- linalg.eigh ---------------------------------------------------------------------------
// Eigenvalues ascending (LAPACK's order), eigenvectors in the columns.
std::tuple<at::Tensor, at::Tensor> eighDevice(const at::Tensor& A, bool lower, bool compute_v) {
  const int64_t n = A.size(-1);
  // Hermitian (symmetric) from the given triangle; a complex diagonal's imaginary part is
  // ignored, as LAPACK does.
  at::Tensor sym = lower ? A.tril(-1) + A.tril(-1).mH() : A.triu(1) + A.triu(1).mH();
  sym = sym.add_(at::diag_embed(at::real(A.diagonal(0, -2, -1)).to(A.scalar_type())))
            .resolve_conj()
            .contiguous();
  if (eighTridiagonalApplies(sym) && sym.numel() > 0) {
    auto [w, v] = eighTridiagonal(sym, compute_v);
    return {w, compute_v ? v : at::empty({0}, sym.options())};
  }
  at::Tensor v = at::empty(compute_v ? sym.sizes() : at::IntArrayRef{0}, sym.options());
  const int64_t batch = at::native::batchCount(sym);
  // (c, s, new a_pp, new a_qq; complex: and the pair's phase) of each round's n / 2 rotations
  const bool cplx = sym.is_complex();
  at::Tensor cs = at::empty({batch, (cplx ? 6 : 4) * ((n + 1) / 2)},
                            sym.options().dtype(c10::toRealValueType(sym.scalar_type())));
  if (batch > 0 && n > 0) {
    const c10::DeviceIndex idx = A.device().index();
    const bool dbl = A.scalar_type() == at::kDouble || A.scalar_type() == at::kComplexDouble;
    OCL_TRY
    cl_kernel kern = decompKernel(sym, "jacobi_eigh");
    cl_uint i = 0;
    setArg(kern, i, bufferOf(sym));
    setArg(kern, i, bufferOrAny(v, sym));
    setArg(kern, i, bufferOf(cs));
    setArg(kern, i, static_cast<cl_long>(n));
    setArg(kern, i, static_cast<cl_int>(compute_v));
    setArg(kern, i, static_cast<cl_int>(dbl ? 100 : 60));
    if (dbl)
      setArg(kern, i, static_cast<cl_double>(DBL_EPSILON));
    else
      setArg(kern, i, static_cast<cl_float>(FLT_EPSILON));
    launchPerMatrix(idx, kern, batch, (n + 1) / 2);  // one item per pair of a round
    OCL_CATCH
  }
  auto [w, order] = at::real(sym.diagonal(0, -2, -1)).sort(/*dim=*/-1);
  if (!compute_v) return {w, v};
  return {w, v.gather(-1, order.unsqueeze(-2).expand(sym.sizes()))};
}

void eighInto(Structured<at::meta::structured__linalg_eigh>& s, const at::Tensor& A,
              c10::string_view uplo, bool compute_v) {
  s.meta(A, uplo, compute_v);
  // LAPACK fails on non-finite input (CPU raises from its info); Jacobi would not notice.
  if (A.numel() > 0) {
    const bool lower = uplo == "L" || uplo == "l";
    const at::Tensor tri = lower ? A.tril() : A.triu();
    const at::Tensor info = tri.isfinite().logical_not_().flatten(-2).any(-1).to(at::kInt);
    at::_linalg_check_errors(info, "linalg.eigh", A.dim() == 2);
  }
  auto [w, v] = eighDevice(A, uplo == "L" || uplo == "l", compute_v);
  const_cast<at::Tensor&>(s.output(0)).copy_(w);
  if (compute_v) const_cast<at::Tensor&>(s.output(1)).copy_(v);
}

std::tuple<at::Tensor, at::Tensor> eigh(const at::Tensor& A, c10::string_view uplo,
                                        bool compute_v) {
  if (!qrNative(A)) {
    auto r = runFallback("aten::_linalg_eigh", "", {A, std::string(uplo), compute_v});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured__linalg_eigh> s(Mode::kFunctional, nullptr);
  eighInto(s, A, uplo, compute_v);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> eighOut(const at::Tensor& A, c10::string_view uplo,
                                             bool compute_v, at::Tensor& w, at::Tensor& v) {
  if (!qrNative(A)) {
    runFallback("aten::_linalg_eigh", "eigenvalues", {A, std::string(uplo), compute_v, w, v});
    return {w, v};
  }
  checkSameDevice({A, w, v});
  Structured<at::meta::structured__linalg_eigh> s(Mode::kOut, &w, &v);
  eighInto(s, A, uplo, compute_v);
  return {w, v};
}

// ---- linalg.svd ----------------------------------------------------------------------------
// One-sided Jacobi on B = A (m >= n: on A's columns) or A^T (m < n), then the left vectors of B
// orthonormalised and, for full_matrices, completed by a Householder QR of them.
void svdInto(Structured<at::meta::structured__linalg_svd>& s, const at::Tensor& A,
             bool full_matrices, bool compute_uv, std::optional<c10::string_view> driver) {
  s.meta(A, full_matrices, compute_uv, driver);
  TORCH_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
              "cuSOLVER backend.");
  TORCH_CHECK_LINALG(A.numel() == 0 || A.isfinite().all().item<bool>(),
                     "linalg.svd: The algorithm failed to converge because the input matrix "
                     "contained non-finite values.");
  auto& U = const_cast<at::Tensor&>(s.output(0));
  auto& S = const_cast<at::Tensor&>(s.output(1));
  auto& Vh = const_cast<at::Tensor&>(s.output(2));
  if (svdBidiagonalApplies(A) && A.numel() > 0) {
    auto [u, sv, vh] = svdBidiagonal(A, full_matrices, compute_uv);
    S.copy_(sv);
    if (compute_uv) {
      U.copy_(u);
      Vh.copy_(vh);
    }
    return;
  }
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), L = std::max(m, n);
  const bool tall = m >= n;
  // (..., k, L): B's columns, B = A or A^H.
  at::Tensor work = (tall ? A.mT() : A.conj()).resolve_conj().contiguous().clone();
  std::vector<int64_t> vshape = batchShape(A, 2);
  vshape.insert(vshape.end(), {k, k});
  at::Tensor vt = compute_uv ? at::empty(vshape, A.options()) : at::empty({0}, A.options());
  const int64_t batch = at::native::batchCount(A);
  if (batch > 0 && k > 0) {
    const c10::DeviceIndex idx = A.device().index();
    const bool dbl = A.scalar_type() == at::kDouble || A.scalar_type() == at::kComplexDouble;
    OCL_TRY
    cl_kernel kern = decompKernel(work, "jacobi_svd");
    cl_uint i = 0;
    setArg(kern, i, bufferOf(work));
    setArg(kern, i, bufferOrAny(vt, work));
    setArg(kern, i, static_cast<cl_long>(k));
    setArg(kern, i, static_cast<cl_long>(L));
    setArg(kern, i, static_cast<cl_int>(compute_uv));
    setArg(kern, i, static_cast<cl_int>(dbl ? 100 : 60));
    if (dbl)
      setArg(kern, i, static_cast<cl_double>(DBL_EPSILON));
    else
      setArg(kern, i, static_cast<cl_float>(FLT_EPSILON));
    launchPerMatrix(idx, kern, batch, (k + 1) / 2);  // one item per pair of a round
    OCL_CATCH
  }
  const at::Tensor norms = work.is_complex()
                               ? at::view_as_real(work).square().sum({-1, -2}).sqrt()
                               : at::linalg_vector_norm(work, 2, {-1}, /*keepdim=*/false);
  auto [sv, order] = norms.sort(/*dim=*/-1, /*descending=*/true);
  S.copy_(sv);
  if (!compute_uv) return;
  // Rows of work sorted: sigma_j times B's j-th left singular vector; rows of vt: B's V^T.
  const at::Tensor rows = work.gather(-2, order.unsqueeze(-1).expand(work.sizes()));
  const at::Tensor vb_t = vt.gather(-2, order.unsqueeze(-1).expand(vt.sizes()));
  const at::Tensor inv = at::where(sv > 0, sv.reciprocal(), at::zeros_like(sv));
  const at::Tensor ub = (rows * inv.unsqueeze(-1)).mT();  // (..., L, k)
  // Orthonormal (completed) columns: Q of ub's QR, its first k columns signed like ub's.
  auto [a, tau] = geqrfDevice(ub);
  at::Tensor q = formQ(a, tau, full_matrices ? L : k);
  const at::Tensor sign =
      at::where(at::real(a.diagonal(0, -2, -1)) < 0, -1.0, 1.0).to(A.scalar_type());
  q.narrow(-1, 0, k).mul_(sign.unsqueeze(-2));
  // vt's rows are V's columns: V^H = conj(vt) (B = A), and A = V_b S U_b^H (B = A^H).
  if (tall) {
    U.copy_(q);
    Vh.copy_(vb_t.conj());
  } else {
    U.copy_(vb_t.mT());
    Vh.copy_(q.mH());
  }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> svd(const at::Tensor& A, bool full_matrices,
                                                   bool compute_uv,
                                                   std::optional<c10::string_view> driver) {
  if (!qrNative(A)) {
    auto r = runFallback(
        "aten::_linalg_svd", "",
        {A, full_matrices, compute_uv, driver ? c10::IValue(std::string(*driver)) : c10::IValue()});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  Structured<at::meta::structured__linalg_svd> s(Mode::kFunctional, nullptr);
  svdInto(s, A, full_matrices, compute_uv, driver);
  return {s.output(0), s.output(1), s.output(2)};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> svdOut(const at::Tensor& A, bool full_matrices,
                                                         bool compute_uv,
                                                         std::optional<c10::string_view> driver,
                                                         at::Tensor& U, at::Tensor& S,
                                                         at::Tensor& Vh) {
  if (!qrNative(A)) {
    runFallback("aten::_linalg_svd", "U",
                {A, full_matrices, compute_uv,
                 driver ? c10::IValue(std::string(*driver)) : c10::IValue(), U, S, Vh});
    return {U, S, Vh};
  }
  checkSameDevice({A, U, S, Vh});
  Structured<at::meta::structured__linalg_svd> s(Mode::kOut, &U, &S, &Vh);
  svdInto(s, A, full_matrices, compute_uv, driver);
  return {U, S, Vh};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_linalg_eigh", TORCH_FN(eigh));
  m.impl("_linalg_eigh.eigenvalues", TORCH_FN(eighOut));
  m.impl("_linalg_svd", TORCH_FN(svd));
  m.impl("_linalg_svd.U", TORCH_FN(svdOut));
  m.impl("geqrf", TORCH_FN(geqrf));
  m.impl("geqrf.a", TORCH_FN(geqrfOut));
  m.impl("linalg_householder_product", TORCH_FN(householderProduct));
  m.impl("linalg_householder_product.out", TORCH_FN(householderProductOut));
  m.impl("linalg_qr", TORCH_FN(qr));
  m.impl("linalg_qr.out", TORCH_FN(qrOut));
  m.impl("ormqr", TORCH_FN(ormqr));
  m.impl("ormqr.out", TORCH_FN(ormqrOut));
}

}  // namespace torch_ocl::aten
