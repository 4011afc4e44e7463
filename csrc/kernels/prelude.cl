// Prelude of every torch-ocl program: extensions, index structs, bf16 helpers.
#ifdef TORCH_OCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// Sizes and byte strides of up to two operands, innermost dimension first (TensorIterator's
// order). Only longs, so host and device agree on the layout.
#define OCL_MAX_DIMS 10
typedef struct {
  long sizes[OCL_MAX_DIMS];
  long strides[2][OCL_MAX_DIMS];
} OclStrides2;

// bfloat16 is a storage type everywhere: the top half of a float.
inline float ocl_bf16_to_float(ushort b) { return as_float(((uint)b) << 16); }
inline ushort ocl_float_to_bf16(float f) {
  uint u = as_uint(f);
  if (isnan(f)) return (ushort)0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even, as c10::BFloat16 does
  return (ushort)(u >> 16);
}

// A float rounded to half / bfloat16 precision (for ops whose CPU kernels round an intermediate to
// the dtype): through a private half slot, since half variables need cl_khr_fp16.
inline float ocl_round_to_half(float x) {
  ushort u;
  vstore_half_rte(x, 0, (__private half*)&u);
  return vload_half(0, (__private const half*)&u);
}
inline float ocl_round_to_bf16(float x) { return ocl_bf16_to_float(ocl_float_to_bf16(x)); }

// exp, erf, tanh and sigmoid in float from plain arithmetic. CPU drivers implement the builtins
// as scalar library calls that stop the work-group vectoriser (PoCL 3.1: erf runs at 1/50 of the
// copy bandwidth); these vectorise and stay within 1.3 ulp (exp) and 1 ulp (erf) over all floats,
// measured against double-precision libm. Kernels reach them through ocl_exp / ocl_erf, which the
// pointwise generator maps to the builtins for double.
//
// One definition for float and for float vectors: OCL_DEFINE_FLOAT_MATH(F, I, S) defines
// ocl_exp_S, ocl_exp_inrange_S, ocl_erf_S, ocl_tanh_S, ocl_sigmoid_S and ocl_gelu_erf_S over
// float type F with the int type I of its width (float/int here; the pointwise generator's
// vector kernels on CPU drivers instantiate float16/int16, which PoCL compiles to full AVX-512
// registers where its work-group vectoriser stops at 8 lanes). Only operations that mean the
// same on scalars and vectors: selects whose condition is a comparison, constants cast to F where
// a builtin takes only vectors.
#define OCL_DEFINE_FLOAT_MATH(F, I, S)                                                           \
  /* rint(x / ln2) for |x| < 2^22, inline */                                                     \
  inline F ocl_exp_k_##S(F x) { return (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; } \
  /* e^r for r = x - k ln2, |r| <= ln2 / 2: Cephes' degree-6 polynomial */                       \
  inline F ocl_exp_reduced_##S(F x, F k) {                                                       \
    F r = fma(k, (F)-0.693145751953125f, x);                                                     \
    r = fma(k, (F)-1.428606765330187e-6f, r);                                                    \
    F p = (F)1.9875691500e-4f;                                                                   \
    p = fma(p, r, (F)1.3981999507e-3f);                                                          \
    p = fma(p, r, (F)8.3334519073e-3f);                                                          \
    p = fma(p, r, (F)4.1665795894e-2f);                                                          \
    p = fma(p, r, (F)1.6666665459e-1f);                                                          \
    p = fma(p, r, (F)5.0000001201e-1f);                                                          \
    return fma(p, r * r, r + 1.0f);                                                              \
  }                                                                                              \
  /* e^x: 2^k as two exponent fields, so that k in [-150, 128] neither wraps nor needs a       \
     denormal bit pattern; NaN through x != x (PoCL lowers isnan to a call that blocks          \
     vectorisation) */                                                                           \
  inline F ocl_exp_##S(F x) {                                                                    \
    const F xc = fmin(fmax(x, -104.0f), 89.0f);                                                  \
    const F k = ocl_exp_k_##S(xc);                                                               \
    const I ki = convert_##I(k), k1 = ki >> 1;                                                   \
    const F y = ocl_exp_reduced_##S(xc, k) * as_##F((k1 + 127) << 23) *                          \
                as_##F((ki - k1 + 127) << 23);                                                   \
    return x != x ? x : y;                                                                       \
  }                                                                                              \
  /* The same e^x for x already in [-87, 88] and not NaN (callers clamp): one exponent field,    \
     no clamp and no NaN select, ~8 of ~27 vector instructions fewer where erf and tanh call it */ \
  inline F ocl_exp_inrange_##S(F x) {                                                            \
    const F k = ocl_exp_k_##S(x);                                                                \
    return ocl_exp_reduced_##S(x, k) * as_##F((convert_##I(k) + 127) << 23);                     \
  }                                                                                              \
  /* erf: minimax polynomials for |a| <= 0.9277 and for 1 - erf(|a|) = exp(poly(|a|)) beyond     \
     (N. Juffa's erff), both evaluated and selected so that there is no branch */                \
  inline F ocl_erf_##S(F a) {                                                                    \
    const F t = fabs(a), s = a * a;                                                              \
    const F tt = fmin(t, 8.0f), ss = tt * tt; /* erf(8) is 1 in float; keeps inf - inf out */    \
    F r = fma((F)-1.72853470e-5f, tt, (F)3.83197126e-4f);                                        \
    const F u = fma((F)-3.88396438e-3f, tt, (F)2.42546219e-2f);                                  \
    r = fma(r, ss, u);                                                                           \
    r = fma(r, tt, (F)-1.06777877e-1f);                                                          \
    r = fma(r, tt, (F)-6.34846687e-1f);                                                          \
    r = fma(r, tt, (F)-1.28717512e-1f);                                                          \
    r = fma(r, tt, -tt); /* in [-72, -0.1]; NaN takes the other branch (fmin(NaN, 8) is 8) */    \
    r = copysign(1.0f - ocl_exp_inrange_##S(r), a);                                              \
    F q = (F)-5.96761703e-4f;                                                                    \
    q = fma(q, s, (F)4.99119423e-3f);                                                            \
    q = fma(q, s, (F)-2.67681349e-2f);                                                           \
    q = fma(q, s, (F)1.12819925e-1f);                                                            \
    q = fma(q, s, (F)-3.76125336e-1f);                                                           \
    q = fma(q, s, (F)1.28379166e-1f);                                                            \
    q = fma(q, a, a);                                                                            \
    return t > 0.927734375f ? r : q;                                                             \
  }                                                                                              \
  /* tanh = (1 - e) / (1 + e) with e = exp(-2|x|) for |x| >= 0.3 (at most one bit lost to the    \
     cancellation); below, its odd Taylor series to x^13 (remainder < 1e-9 relative). No branch, \
     so it vectorises (PoCL's tanh is a scalar library call). Both on |x|, the sign put back     \
     last (so that tanh(-0) is -0, as on CPU). e = exp(-2|x|) rounds (1 - e) / (1 + e) to 1     \
     long before -2|x| reaches -40 */                                                            \
  inline F ocl_tanh_##S(F x) {                                                                   \
    const F a = fabs(x), e = ocl_exp_inrange_##S(fmax(-2.0f * a, -40.0f)), s = x * x;            \
    const F big = (1.0f - e) / (1.0f + e);                                                       \
    F p = (F)(-21844.0f / 6081075.0f);                                                           \
    p = fma(p, s, (F)(929569.0f / 638512875.0f));                                                \
    p = fma(p, s, (F)(-1382.0f / 155925.0f));                                                    \
    p = fma(p, s, (F)(62.0f / 2835.0f));                                                         \
    p = fma(p, s, (F)(-17.0f / 315.0f));                                                         \
    p = fma(p, s, (F)(2.0f / 15.0f));                                                            \
    p = fma(p, s, (F)(-1.0f / 3.0f));                                                            \
    const F small = fma(p * s, a, a);                                                            \
    return x != x ? x : copysign(a < 0.3f ? small : big, x);                                     \
  }                                                                                              \
  inline F ocl_sigmoid_##S(F x) { return 1.0f / (1.0f + ocl_exp_##S(-x)); }                      \
  /* erf(x / sqrt 2) for gelu and its gradient, x / 2 (1 + erf(x / sqrt 2)): its own erf(z) =    \
     z P(z^2) / Q(z^2) (degrees 6 and 4, minimax for the absolute error, 1.1 * 2^-24, on z in    \
     [-4, 4]; erf(4) = 1 - 1.5e-8), no exp and no second branch: gelu 2x faster than through     \
     ocl_erf, which keeps its 1 ulp for erf itself. With float rounding the error is up to       \
     7 * 2^-24 (all floats), so where 1 + erf cancels (x << 0) gelu is within                    \
     2^-22 (|x| + |gelu(x)|): 0.86 of it at worst; CPU's float gelu 1.55. The max keeps          \
     1 + erf >= 0 (the rounded quotient fell below -1 near the clamp: gelu(x) > 0 for x < 0).    \
     Selects, not fmin/fmax: a NaN goes through them to the quotient */                          \
  inline F ocl_gelu_erf_##S(F x) {                                                               \
    F z = x * 0.70710678118654752f;                                                              \
    z = z < -4.0f ? (F)-4.0f : z;                                                                \
    z = z > 4.0f ? (F)4.0f : z;                                                                  \
    const F t = z * z;                                                                           \
    F p = (F)1.912895988e-8f;                                                                    \
    p = fma(p, t, (F)-1.974056598e-6f);                                                          \
    p = fma(p, t, (F)1.533342891e-4f);                                                           \
    p = fma(p, t, (F)4.220192089e-3f);                                                           \
    p = fma(p, t, (F)5.222662590e-2f);                                                           \
    p = fma(p, t, (F)2.123545051e-1f);                                                           \
    p = fma(p, t, (F)1.128378815f);                                                              \
    F q = (F)1.078695145e-3f;                                                                    \
    q = fma(q, t, (F)1.541335040e-2f);                                                           \
    q = fma(q, t, (F)1.201432060e-1f);                                                           \
    q = fma(q, t, (F)5.215233162e-1f);                                                           \
    q = fma(q, t, (F)1.0f);                                                                      \
    const F e = z * p / q;                                                                       \
    return e < -1.0f ? (F)-1.0f : e;                                                             \
  }
OCL_DEFINE_FLOAT_MATH(float, int, float)

// Philox-4x32-10 (Salmon et al., SC'11): counter-based, so element i of a random op draws from
// counter (offset, i) under key seed on every device, with pure integer arithmetic. Scalar words
// and 64-bit products instead of uint4 and mul_hi: the same numbers, 8x faster on PoCL (whose
// vectoriser gave up on the mul_hi/uint4 form: 1M floats of torch.rand took 80 ms).
inline uint4 ocl_philox(uint4 c, uint2 k) {
  uint c0 = c.x, c1 = c.y, c2 = c.z, c3 = c.w, k0 = k.x, k1 = k.y;
  for (int r = 0; r < 10; ++r) {
    const ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
    const uint n0 = (uint)(p1 >> 32) ^ c1 ^ k0, n2 = (uint)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint)p1;
    c3 = (uint)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (uint4)(c0, c1, c2, c3);
}
inline uint4 ocl_philox_at(ulong seed, ulong offset, long i) {
  return ocl_philox((uint4)((uint)offset, (uint)(offset >> 32), (uint)i, (uint)((ulong)i >> 32)),
                    (uint2)((uint)seed, (uint)(seed >> 32)));
}
// 24 random bits -> [0, 1) float.
inline float ocl_uniform_float(uint x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }

// Sizes and byte strides of up to four operands (pointwise kernels: output + three inputs).
typedef struct {
  long sizes[OCL_MAX_DIMS];
  long strides[4][OCL_MAX_DIMS];
} OclStrides4;

// Geometry of a reduction: kept and reduced dimensions of the input, innermost first, with the
// input's byte strides.
typedef struct {
  long keep_sizes[OCL_MAX_DIMS];
  long keep_strides[OCL_MAX_DIMS];
  long red_sizes[OCL_MAX_DIMS];
  long red_strides[OCL_MAX_DIMS];
} OclReduceGeom;
