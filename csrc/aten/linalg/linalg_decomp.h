// Shared by linalg_decomp.cpp and linalg_lstsq.cpp: the device QR pieces (kernels in
// kernels/linalg_decomp.cl) on float32/float64 tensors of one device.
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>
#include <vector>

#include "aten/launch.h"

namespace torch_ocl::aten {

// float32 or float64: the dtypes the decomposition kernels take (CPU PyTorch's too).
bool decompNative(const at::Tensor& t);
cl_kernel decompKernel(const at::Tensor& like, const char* name);
// t's sizes without the last `drop`.
std::vector<int64_t> batchShape(const at::Tensor& t, int64_t drop);
// (packed reflectors and R (..., m, n) contiguous, tau (..., min(m, n))): LAPACK geqrf's values.
// Blocked from order 96 up (linalg_blocked.h); geqrfUnblocked is the per-matrix kernel alone.
std::tuple<at::Tensor, at::Tensor> geqrfDevice(const at::Tensor& A);
std::tuple<at::Tensor, at::Tensor> geqrfUnblocked(const at::Tensor& A);
// c (contiguous (..., m, p), in place) = Q c (forward = false) or Q^T c (forward = true) for
// Q = H_0 ... H_{k-1} of the reflectors v (..., m, nv), tau (..., k) (same batch as c).
void applyReflectors(const at::Tensor& v, const at::Tensor& tau, const at::Tensor& c, bool forward);
// The first p columns of Q (..., m, p) for the reflectors of v, tau.
at::Tensor formQ(const at::Tensor& v, const at::Tensor& tau, int64_t p);

// The large-matrix eigensolver (linalg_eigh.cpp): whether it takes a (real or complex, order
// >= 64, or >= 32 (complex: 48) in batches of 8 or more), and (eigenvalues ascending, real;
// eigenvectors in the columns or undefined) of sym (..., n, n) real symmetric or complex
// Hermitian with both triangles filled.
bool eighTridiagonalApplies(const at::Tensor& a);
// 2^-floor(log2(amax)) elementwise (1 where amax is 0), clamped to stay finite: a scale that
// brings amax near 1 exactly.
at::Tensor powerOfTwoScale(const at::Tensor& amax, bool dbl);
std::tuple<at::Tensor, at::Tensor> eighTridiagonal(const at::Tensor& sym, bool compute_v);

// The large-matrix SVD (linalg_svd.cpp): whether it takes a (real or complex, min(m, n) >= 64,
// or >= 48 in batches of 8 or more), and (U, S descending, Vh) of A (..., m, n) as linalg.svd
// returns them (U and Vh undefined without compute_uv).
bool svdBidiagonalApplies(const at::Tensor& a);
std::tuple<at::Tensor, at::Tensor, at::Tensor> svdBidiagonal(const at::Tensor& A,
                                                             bool full_matrices, bool compute_uv);

}  // namespace torch_ocl::aten
