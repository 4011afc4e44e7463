// Activations of the host BLAS provider's epilogue (see gemm_host_epilogue.h). The float loops are
// compiled for AVX-512 and AVX2 besides the baseline (the build targets plain x86-64) and picked
// at load time; their bodies are branch-free so that GCC vectorises them.
#include "aten/linalg/gemm_host_epilogue.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OCL_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OCL_VECTOR_CLONES
#endif

namespace torch_ocl::aten {

namespace {

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// prelude.cl's ocl_exp_float: Cephes' polynomial on x - k ln2, 2^k as two exponent fields.
inline float expPoly(float x) {
  const float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);  // NaN passes through
  const float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = std::fma(k, -0.693145751953125f, xc);
  r = std::fma(k, -1.428606765330187e-6f, r);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  p = std::fma(p, r * r, r + 1.0f);
  const int ki = static_cast<int>(k), k1 = ki >> 1;
  return p * bitsToFloat(static_cast<uint32_t>(k1 + 127) << 23) *
         bitsToFloat(static_cast<uint32_t>(ki - k1 + 127) << 23);
}

// prelude.cl's ocl_erf_float (N. Juffa's erff): two minimax polynomials, selected without a branch.
inline float erfPoly(float a) {
  const float t = std::fabs(a), s = a * a;
  const float tt = t < 8.0f ? t : 8.0f, ss = tt * tt;
  float r = std::fma(-1.72853470e-5f, tt, 3.83197126e-4f);
  const float u = std::fma(-3.88396438e-3f, tt, 2.42546219e-2f);
  r = std::fma(r, ss, u);
  r = std::fma(r, tt, -1.06777877e-1f);
  r = std::fma(r, tt, -6.34846687e-1f);
  r = std::fma(r, tt, -1.28717512e-1f);
  r = std::fma(r, tt, -tt);
  r = std::copysign(1.0f - expPoly(r), a);
  float q = -5.96761703e-4f;
  q = std::fma(q, s, 4.99119423e-3f);
  q = std::fma(q, s, -2.67681349e-2f);
  q = std::fma(q, s, 1.12819925e-1f);
  q = std::fma(q, s, -3.76125336e-1f);
  q = std::fma(q, s, 1.28379166e-1f);
  q = std::fma(q, a, a);
  return t > 0.927734375f ? r : q;
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
    p[j] = 0.5f * v * (1.0f + erfPoly(v * 0.70710678118654752440f));
  }
}

void hostGeluRow(double* p, int64_t n) {
  for (int64_t j = 0; j < n; ++j) p[j] = 0.5 * p[j] * (1.0 + std::erf(p[j] * M_SQRT1_2));
}

}  // namespace torch_ocl::aten
