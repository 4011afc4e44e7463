// The host BLAS provider's epilogue (gemm.cpp): activations over rows of C, run inside the same
// native kernel right after the BLAS call while C is still in the caches.
#pragma once

#include <cstdint>

namespace torch_ocl::aten {

// p[j] = max(p[j], 0) with NaN kept, for j < n.
void hostReluRow(float* p, int64_t n);
void hostReluRow(double* p, int64_t n);
// p[j] = p[j] / 2 * (1 + erf(p[j] / sqrt(2))) (the exact gelu), for j < n. The float version uses
// the same branch-free erf polynomial as the kernels (prelude.cl's ocl_erf_float, <= 1 ulp),
// vectorised for AVX-512 / AVX2 where the CPU has them.
void hostGeluRow(float* p, int64_t n);
void hostGeluRow(double* p, int64_t n);

}  // namespace torch_ocl::aten
