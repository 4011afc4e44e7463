// linalg.eig and linalg.eigvals (the nonsymmetric eigensolver) on the device for float32,
// float64, complex64 and complex128 through kernels/linalg_eig.cl: LAPACK's xGEEV steps (scaling,
// balancing, Hessenberg reduction, the small-bulge QR algorithm, back substitution, back
// transformation and its normalisation) in its order and conventions, one work item per matrix,
// so that eigenvalue order and eigenvector phases are the CPU's (below order 75, where LAPACK
// switches to its multishift QR). Argument checks and messages are PyTorch's (the CPU's
// linalg_eig_out / linalg_eigvals_out); other dtypes go to the CPU, which raises for them. The
// backward (linalg_eig_backward) is composite and runs on the device's other ops.
#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/linalg/column_major.h"
#include "kernels/embedded.h"

namespace torch_ocl::aten {
namespace {

char kLinalgEigFamily;

bool eigNative(const at::Tensor& t) {
  const auto s = t.scalar_type();
  return s == at::kFloat || s == at::kDouble || s == at::kComplexFloat || s == at::kComplexDouble;
}

cl_kernel geevKernel(c10::DeviceIndex idx, c10::ScalarType t) {
  checkDtypeSupported(t, idx);
  cl_program p = programs(idx).get({&kLinalgEigFamily, dtypeCode(t)}, [&] {
    const bool dbl = t == at::kDouble || t == at::kComplexDouble;
    const std::string real = dbl ? "double" : "float";
    std::string h = "typedef " + real + "2 CT;\ntypedef " + real + " CR;\n";
    if (dbl) h += "#define EIG_DOUBLE 1\n";
    if (!c10::isComplexType(t)) h += "#define EIG_REAL 1\n";
    return rt::ProgramSource{
        std::string("linalg_eig.cl<") + c10::toString(t) + ">",
        withPrelude(h + kernels::source("complex.cl") + kernels::source("linalg_eig.cl")), ""};
  });
  return programs(idx).kernel(p, "geev");
}

// (eigenvalues (..., n), eigenvectors (..., n, n) or an empty tensor, info (...)) of A, complex.
std::tuple<at::Tensor, at::Tensor, at::Tensor> geevDevice(const at::Tensor& A, bool compute_v) {
  const int64_t n = A.size(-1);
  const int64_t batch = at::native::batchCount(A);
  const c10::ScalarType ct = c10::toComplexType(A.scalar_type());
  const c10::ScalarType rt = c10::toRealValueType(A.scalar_type());
  std::vector<int64_t> bshape(A.sizes().begin(), A.sizes().end() - 2);
  std::vector<int64_t> wshape = bshape;
  wshape.push_back(n);
  at::Tensor w = at::empty(wshape, A.options().dtype(ct));
  at::Tensor v = at::empty(compute_v ? A.sizes() : at::IntArrayRef{0}, A.options().dtype(ct));
  at::Tensor info = at::zeros(bshape, A.options().dtype(at::kInt));
  if (batch == 0 || n == 0) return {w, v, info};
  // LAPACK's column-major working copy (always a copy: the kernel overwrites it)
  const at::Tensor a = A.resolve_conj().mT().clone(at::MemoryFormat::Contiguous);
  const at::Tensor z = at::empty(
      compute_v ? std::vector<int64_t>{batch, n, n} : std::vector<int64_t>{1}, A.options());
  const at::Tensor rw = at::empty({batch, 3 * n}, A.options().dtype(rt));
  const at::Tensor tau = at::empty({batch, n}, A.options());
  const at::Tensor x = at::empty({batch, n}, A.options().dtype(ct));
  const at::Tensor perm = at::empty({batch, n}, A.options().dtype(at::kInt));
  const c10::DeviceIndex idx = A.device().index();
  OCL_TRY
  cl_kernel k = geevKernel(idx, A.scalar_type());
  cl_uint i = 0;
  setArg(k, i, bufferOf(a));
  setArg(k, i, bufferOf(z));
  setArg(k, i, bufferOf(rw));
  setArg(k, i, bufferOf(tau));
  setArg(k, i, bufferOf(x));
  setArg(k, i, bufferOf(perm));
  setArg(k, i, bufferOf(w));
  setArg(k, i, compute_v ? bufferOf(v) : bufferOf(x));
  setArg(k, i, bufferOf(info));
  setArg(k, i, static_cast<cl_long>(n));
  setArg(k, i, static_cast<cl_long>(batch));
  setArg(k, i, static_cast<cl_int>(compute_v));
  // One work item per matrix; a small fixed local size (one compile per size on PoCL), less
  // where the kernel's register use allows less.
  rt::Device& dev = device(idx);
  size_t kwg = 0;
  OCL_CHECK(
      clGetKernelWorkGroupInfo(k, dev.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof(kwg), &kwg, nullptr));
  size_t local = 16;
  while (local > 1 && local > kwg) local /= 2;
  const size_t global = (static_cast<size_t>(batch) + local - 1) / local * local;
  launchND(dev, currentQueue(idx), k, global, local);
  OCL_CATCH
  return {w, v, info};
}

void eigChecks(const at::Tensor& A) {
  // the CPU's order: finiteness, shape, then the complex dtype
  TORCH_CHECK(A.isfinite().all().item<bool>(),
              "torch.linalg.eig: input tensor should not contain infs or NaNs.");
  at::native::squareCheckInputs(A, "linalg.eig");
  at::native::checkFloatingOrComplex(A, "linalg.eig");
}

std::tuple<at::Tensor, at::Tensor> eigFunctional(const at::Tensor& A) {
  if (!eigNative(A)) {
    auto r = runFallback("aten::linalg_eig", "", {A});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  eigChecks(A);
  auto [w, v, info] = geevDevice(A, /*compute_v=*/true);
  at::_linalg_check_errors(info, "torch.linalg.eig", A.dim() == 2);
  // Eigenvectors column-major, as CPU (geev) and the meta function return them.
  return {w, batchedColumnMajor(v)};
}

std::tuple<at::Tensor&, at::Tensor&> eigOut(const at::Tensor& A, at::Tensor& values,
                                            at::Tensor& vectors) {
  if (!eigNative(A)) {
    runFallback("aten::linalg_eig", "out", {A, values, vectors});
    return {values, vectors};
  }
  eigChecks(A);
  at::native::checkSameDevice("torch.linalg.eig", values, A, "eigenvalues");
  at::native::checkSameDevice("torch.linalg.eig", vectors, A, "eigenvectors");
  const c10::ScalarType ct = c10::toComplexType(A.scalar_type());
  at::native::checkLinalgCompatibleDtype("torch.linalg.eig", values.scalar_type(), ct,
                                         "eigenvalues");
  at::native::checkLinalgCompatibleDtype("torch.linalg.eig", vectors.scalar_type(), ct,
                                         "eigenvectors");
  auto [w, v, info] = geevDevice(A, /*compute_v=*/true);
  at::_linalg_check_errors(info, "torch.linalg.eig", A.dim() == 2);
  at::native::resize_output(values, w.sizes());
  at::native::resize_output(vectors, v.sizes());
  values.copy_(w);
  vectors.copy_(v);
  return {values, vectors};
}

void eigvalsChecks(const at::Tensor& A, const at::Tensor* values) {
  at::native::squareCheckInputs(A, "linalg.eigvals");
  at::native::checkFloatingOrComplex(A, "linalg.eigvals");
  if (values) {
    at::native::checkSameDevice("torch.linalg.eigvals", *values, A, "eigenvalues");
    at::native::checkLinalgCompatibleDtype("torch.linalg.eigvals", values->scalar_type(),
                                           c10::toComplexType(A.scalar_type()), "eigenvalues");
  }
}

at::Tensor eigvals(const at::Tensor& A) {
  if (!eigNative(A)) return runFallback("aten::_linalg_eigvals", "", {A})[0].toTensor();
  eigvalsChecks(A, nullptr);
  auto [w, v, info] = geevDevice(A, /*compute_v=*/false);
  at::_linalg_check_errors(info, "torch.linalg.eigvals", A.dim() == 2);
  return w;
}

at::Tensor& eigvalsOut(const at::Tensor& A, at::Tensor& values) {
  if (!eigNative(A)) {
    runFallback("aten::linalg_eigvals", "out", {A, values});
    return values;
  }
  eigvalsChecks(A, &values);
  auto [w, v, info] = geevDevice(A, /*compute_v=*/false);
  at::_linalg_check_errors(info, "torch.linalg.eigvals", A.dim() == 2);
  at::native::resize_output(values, w.sizes());
  return values.copy_(w);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_linalg_eigvals", TORCH_FN(eigvals));
  m.impl("linalg_eig", TORCH_FN(eigFunctional));
  m.impl("linalg_eig.out", TORCH_FN(eigOut));
  m.impl("linalg_eigvals.out", TORCH_FN(eigvalsOut));
}

}  // namespace torch_ocl::aten
