// The host BLAS provider's epilogue (gemm.cpp): activations over rows of C, run inside the same
// native kernel right after the BLAS call while C is still in the caches.
#pragma once

#include <cstdint>

namespace torch_ocl::aten {

// p[j] = max(p[j], 0) with NaN kept, for j < n.
void hostReluRow(float* p, int64_t n);
void hostReluRow(double* p, int64_t n);
// p[j] = p[j] / 2 * (1 + erf(p[j] / sqrt(2))) (the exact gelu), for j < n. The float version uses
// the erf(x / sqrt 2) of the eager gelu kernel and of the cpu_tile epilogue (prelude.cl's
// ocl_gelu_erf_float, branch-free), vectorised for AVX-512 / AVX2 where the CPU has them.
void hostGeluRow(float* p, int64_t n);
void hostGeluRow(double* p, int64_t n);

}  // namespace torch_ocl::aten
