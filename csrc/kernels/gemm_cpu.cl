// GEMM for CPU drivers (PoCL and the like): C = alpha * A @ B + beta * C over a batch.
// Each work item (work-group of 1) computes a 6 x 64 tile of C in 24 float16 accumulators: per k,
// 4 vload16 of a row of B, 6 broadcasts of A, 24 fma, which CPU drivers compile to vector FMAs
// (zmm on AVX-512). A is read with any strides (one scalar per row and k); B is read as float
// panels of 64 columns: either B itself (float32, unit column stride, N a multiple of 64) or a
// copy made by pack_b (any dtype or strides; zero-padded past N), which also avoids the cache
// thrashing of row strides that are multiples of 4 KB. Accumulation is in float for every dtype.
// The program is built with a header that defines ST (storage type), LOAD(p, i) (element i of
// ST* p as float) and STORE(p, i, v), and the epilogue: EPI_BIAS (1: add bias_scale * bias[m][n],
// any strides) and gemm_epi(v) (rounding to ST and the activation, identity without one).

#define TM 6
#define TN 64

// dst[bb][p][k][j] = B[bb][k][p*64 + j] (0 past N), one element per work item so that drivers
// vectorise across items (contiguous writes; reads contiguous for row-major B, a gather for a
// transposed one). Global size (panels * 64, K, batches of B).
__kernel void pack_b(__global char* dst, ulong dst_off, __global const char* b, ulong b_off, long N,
                     long K, long sb_b, long sb_k, long sb_n) {
  const long n = get_global_id(0), k = get_global_id(1), bb = get_global_id(2);
  const long panels = get_global_size(0) / TN;
  __global float* D = (__global float*)(dst + dst_off);
  __global const ST* B = (__global const ST*)(b + b_off) + bb * sb_b + k * sb_k;
  const long p = n / TN, j = n % TN;
  D[((bb * panels + p) * K + k) * TN + j] = n < N ? LOAD(B, n * sb_n) : 0.0f;
}

#define ACC_ROW(i)                                                                         \
  float16 c##i##0 = (float16)(0.0f), c##i##1 = (float16)(0.0f), c##i##2 = (float16)(0.0f), \
          c##i##3 = (float16)(0.0f)
#define FMA_ROW(i)                                   \
  {                                                  \
    const float16 av = (float16)(LOAD(A, r##i + ka)); \
    c##i##0 = fma(av, b0, c##i##0);                  \
    c##i##1 = fma(av, b1, c##i##1);                  \
    c##i##2 = fma(av, b2, c##i##2);                  \
    c##i##3 = fma(av, b3, c##i##3);                  \
  }
#define STORE_ROW(i)                                                     \
  if (m0 + i < M) {                                                      \
    float t[TN];                                                         \
    vstore16(c##i##0, 0, t);                                             \
    vstore16(c##i##1, 1, t);                                             \
    vstore16(c##i##2, 2, t);                                             \
    vstore16(c##i##3, 3, t);                                             \
    const long base = (m0 + i) * sc_m, bbase = (m0 + i) * sbias_m;      \
    for (int j = 0; j < jn; ++j) {                                       \
      const long idx = base + (n0 + j) * sc_n;                           \
      float v = alpha * t[j];                                            \
      if (beta != 0.0f) v += beta * LOAD(C, idx); /* beta 0 ignores C */ \
      if (EPI_BIAS) v += bias_scale * LOAD(Bias, bbase + (n0 + j) * sbias_n); \
      STORE(C, idx, gemm_epi(v));                                        \
    }                                                                    \
  }

// Global size (ceil(M / 6), ceil(N / 64), batch). B panels: element (k, j) of panel p of batch
// bt at bp[bt * sb_b + p * sb_p + k * sb_k + j] (floats).
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_6x64(
    __global const char* a, ulong a_off, __global const char* bp, ulong bp_off, __global char* c,
    ulong c_off, long M, long N, long K, long sa_b, long sa_m, long sa_k, long sb_b, long sb_k,
    long sb_p, long sc_b, long sc_m, long sc_n, float alpha, float beta, __global const char* bias,
    ulong bias_off, long sbias_b, long sbias_m, long sbias_n, float bias_scale) {
  const long mt = get_global_id(0), p = get_global_id(1), bt = get_global_id(2);
  const long m0 = mt * TM, n0 = p * TN;
  __global const ST* A = (__global const ST*)(a + a_off) + bt * sa_b;
  __global const float* B = (__global const float*)(bp + bp_off) + bt * sb_b + p * sb_p;
  __global ST* C = (__global ST*)(c + c_off) + bt * sc_b;
  __global const ST* Bias = (__global const ST*)(bias + bias_off) + bt * sbias_b;
  // Rows past M repeat row M - 1: computed, never stored.
  const long r0 = min(m0 + 0, M - 1) * sa_m, r1 = min(m0 + 1, M - 1) * sa_m,
             r2 = min(m0 + 2, M - 1) * sa_m, r3 = min(m0 + 3, M - 1) * sa_m,
             r4 = min(m0 + 4, M - 1) * sa_m, r5 = min(m0 + 5, M - 1) * sa_m;
  ACC_ROW(0);
  ACC_ROW(1);
  ACC_ROW(2);
  ACC_ROW(3);
  ACC_ROW(4);
  ACC_ROW(5);
  for (long k = 0; k < K; ++k) {
    __global const float* br = B + k * sb_k;
    const float16 b0 = vload16(0, br), b1 = vload16(1, br), b2 = vload16(2, br),
                  b3 = vload16(3, br);
    const long ka = k * sa_k;
    FMA_ROW(0)
    FMA_ROW(1)
    FMA_ROW(2)
    FMA_ROW(3)
    FMA_ROW(4)
    FMA_ROW(5)
  }
  const int jn = (int)min((long)TN, N - n0);
  STORE_ROW(0)
  STORE_ROW(1)
  STORE_ROW(2)
  STORE_ROW(3)
  STORE_ROW(4)
  STORE_ROW(5)
}
