// Blocked factorizations over the GEMM for large matrices (linalg_blocked.cpp), called by the
// op families that register the ops (linalg_small.cpp) above a size measured on PoCL. Everything
// runs on the device: the panels in kernels/linalg_blocked.cl, the trailing updates as GEMMs.
#pragma once

#include <ATen/core/Tensor.h>

#include <tuple>

namespace torch_ocl::aten {

// Whether lu (..., m, n) factors blocked: float32/float64/complex64/complex128 and
// min(m, n) >= kLuBlockedFrom.
bool luBlockedApplies(const at::Tensor& lu);
// Whether a (..., m, n) is column major with the usual batch strides (a.mT() contiguous).
bool denseColumnMajor(const at::Tensor& a);
// Right-looking blocked LU with partial pivoting of every matrix of lu (in place; contiguous or
// column major, as LAPACK's outputs are, so that no transposing copy is needed):
// LAPACK getrf's LU, 1-based int32 pivots piv (..., min(m, n)) and info (one int per matrix,
// zero on entry: the first zero pivot).
void luFactorBlocked(const at::Tensor& lu, const at::Tensor& piv, const at::Tensor& info);

// Whether the left triangular solve with a (..., n, n) and k right-hand sides runs blocked:
// the blocked dtypes, n >= 128, and k >= 8 with n * k >= 8192 or a column major.
bool trsmBlockedApplies(const at::Tensor& a, int64_t k);
// a as the blocked triangular solve with k right-hand sides takes it: itself when it is column
// major and the solve runs blocked, else a contiguous copy.
at::Tensor trsmOperand(const at::Tensor& a, int64_t k);
// x = a^-1 x in place, a ((..., n, n) contiguous or column major, lower or upper, unit diagonal or
// not), x (contiguous (..., n, k), the same batch): the inverses of the 64-wide diagonal blocks in
// one kernel, then per block two GEMMs (apply the inverse, update the rows not yet solved).
void triangularSolveBlocked(const at::Tensor& a, const at::Tensor& x, bool upper, bool unit);

// Whether luPermute's rows of x (..., n, k) are reordered by a gather (blocked dtypes, n >= 64).
bool luPermuteByGather(const at::Tensor& x);
// P^T x (reverse = false) or P x (reverse = true) in place for contiguous x (..., n, k) and
// LAPACK pivots piv (contiguous (..., n), int32): the permutation built from the pivots on the
// device, then one gather of whole rows.
void luPermuteGather(const at::Tensor& x, const at::Tensor& piv, bool reverse);

// Whether geqrf and the reflector products of a (..., m, n) run blocked: the blocked dtypes
// and min(m, n) >= kQrBlockedFrom.
bool qrBlockedApplies(const at::Tensor& a);
// geqrfDevice's result (LAPACK's packed reflectors and R, tau) by panels of the unblocked
// kernel and larfb trailing updates over the GEMM.
std::tuple<at::Tensor, at::Tensor> geqrfBlocked(const at::Tensor& A);
// Whether applyReflectors with k reflectors v (..., m, nv) runs blocked: qrBlockedApplies(v) and
// k >= kQrBlockedFrom.
bool reflectorsBlockedApply(const at::Tensor& v, int64_t k);
// applyReflectors (linalg_decomp.h) a block of reflectors at a time (compact WY, larfb).
void applyReflectorsBlocked(const at::Tensor& v, const at::Tensor& tau, const at::Tensor& c,
                            bool forward);

}  // namespace torch_ocl::aten
