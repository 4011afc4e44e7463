// Activations of the host BLAS provider's epilogue (see gemm_host_epilogue.h). The float loops are
// compiled for AVX-512 and AVX2 besides the baseline (the build targets plain x86-64) and picked
// at load time; their bodies are branch-free so that GCC vectorises them.
#include "aten/linalg/gemm_host_epilogue.h"

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OCL_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OCL_VECTOR_CLONES
#endif

namespace torch_ocl::aten {

namespace {

// prelude.cl's ocl_gelu_erf_float, the erf(x / sqrt 2) of the eager gelu kernel: z P(z^2) / Q(z^2)
// on z clamped to [-4, 4], no exp and no branch (selects only, so that NaN reaches the quotient).
inline float geluErf(float x) {
  float z = x * 0.70710678118654752f;
  z = z < -4.0f ? -4.0f : z;
  z = z > 4.0f ? 4.0f : z;
  const float t = z * z;
  float p = 1.912895988e-8f;
  p = std::fma(p, t, -1.974056598e-6f);
  p = std::fma(p, t, 1.533342891e-4f);
  p = std::fma(p, t, 4.220192089e-3f);
  p = std::fma(p, t, 5.222662590e-2f);
  p = std::fma(p, t, 2.123545051e-1f);
  p = std::fma(p, t, 1.128378815f);
  float q = 1.078695145e-3f;
  q = std::fma(q, t, 1.541335040e-2f);
  q = std::fma(q, t, 1.201432060e-1f);
  q = std::fma(q, t, 5.215233162e-1f);
  q = std::fma(q, t, 1.0f);
  const float e = z * p / q;
  return e < -1.0f ? -1.0f : e;
}

}  // namespace

OCL_VECTOR_CLONES void hostReluRow(float* p, int64_t n) {
  for (int64_t j = 0; j < n; ++j) p[j] = p[j] < 0.0f ? 0.0f : p[j];
}

void hostReluRow(double* p, int64_t n) {
  for (int64_t j = 0; j < n; ++j) p[j] = p[j] < 0.0 ? 0.0 : p[j];
}

OCL_VECTOR_CLONES void hostGeluRow(float* p, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float v = p[j];
    p[j] = 0.5f * v * (1.0f + geluErf(v));
  }
}

void hostGeluRow(double* p, int64_t n) {
  for (int64_t j = 0; j < n; ++j) p[j] = 0.5 * p[j] * (1.0 + std::erf(p[j] * M_SQRT1_2));
}

}  // namespace torch_ocl::aten
