// GEMM for CPU drivers (PoCL and the like): C = alpha * A @ B + beta * C over a batch.
// Each work item (work-group of 1) computes a 6 x 64 tile of C in 24 float16 accumulators: per k,
// 4 vload16 of a row of B, 6 broadcasts of A, 24 fma, which CPU drivers compile to vector FMAs
// (zmm on AVX-512). A is read with any strides (one scalar per row and k); B is read as float
// panels of 64 columns: either B itself (float32, unit column stride, N a multiple of 64) or a
// copy made by pack_b (any dtype or strides; zero-padded past N), which also avoids the cache
// thrashing of row strides that are multiples of 4 KB. Accumulation is in float for every dtype.
// The program is built with a header that defines ST (storage type), LOAD(p, i) (element i of
// ST* p as float) and STORE(p, i, v), and the epilogue: EPI_BIAS (1: add bias_scale * bias[m][n],
// any strides) and gemm_epi(v) (rounding to ST and the activation, identity without one), and
// EPI_ACT (1: C keeps the value before the activation and act receives gemm_epi of it, as a
// training step that keeps the pre-activation needs).

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

// pack_b for a B whose rows run along K (read transposed: x @ W^T, a weight gradient's dy^T): a
// work item takes 64 columns (one panel) by 16 rows of K, reading each column's 16 values in a
// row (one vload16 when they are contiguous floats) and writing a 16 x 64 block of the panel (4
// KB, in the L1 cache). pack_b's one element per item gathers along the stride instead: 11.6 ms
// against 3.0-3.6 ms for 2.4 M floats (a convolution's weight gradient, 2 AVX-512 cores, loaded;
// work-groups of 64 items vectorised by the driver took 10 ms). Global size (panels, ceil(K /
// 16), batches of B), work-groups of 1.
#define PACK_TK 16
#define PACK_STORE(kk) D[kk * TN + j] = v.s##kk;
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void pack_b_t(
    __global char* dst, ulong dst_off, __global const char* b, ulong b_off, long N, long K,
    long sb_b, long sb_k, long sb_n) {
  const long p = get_global_id(0), k0 = get_global_id(1) * PACK_TK, bb = get_global_id(2);
  const long panels = get_global_size(0);
  __global float* D = (__global float*)(dst + dst_off) + ((bb * panels + p) * K + k0) * TN;
  __global const ST* B = (__global const ST*)(b + b_off) + bb * sb_b + k0 * sb_k;
  const int kn = (int)min((long)PACK_TK, K - k0);
  for (int j = 0; j < TN; ++j) {
    const long n = p * TN + j;
    __global const ST* col = B + n * sb_n;
    if (ST_IS_FLOAT && n < N && kn == PACK_TK && sb_k == 1) {
      const float16 v = vload16(0, (__global const float*)col);
      PACK_STORE(0) PACK_STORE(1) PACK_STORE(2) PACK_STORE(3) PACK_STORE(4) PACK_STORE(5)
      PACK_STORE(6) PACK_STORE(7) PACK_STORE(8) PACK_STORE(9)
      D[10 * TN + j] = v.sa; D[11 * TN + j] = v.sb; D[12 * TN + j] = v.sc;
      D[13 * TN + j] = v.sd; D[14 * TN + j] = v.se; D[15 * TN + j] = v.sf;
    } else if (n < N) {
      for (int kk = 0; kk < kn; ++kk) D[kk * TN + j] = LOAD(col, kk * sb_k);
    } else {
      for (int kk = 0; kk < kn; ++kk) D[kk * TN + j] = 0.0f;
    }
  }
}

#define ACC_ROW(i)                                                                         \
  float16 c##i##0 = (float16)(0.0f), c##i##1 = (float16)(0.0f), c##i##2 = (float16)(0.0f), \
          c##i##3 = (float16)(0.0f)
#define FMA_ROW(i)                                    \
  {                                                   \
    const float16 av = (float16)(LOAD(A, r##i + ka)); \
    c##i##0 = fma(av, b0, c##i##0);                   \
    c##i##1 = fma(av, b1, c##i##1);                   \
    c##i##2 = fma(av, b2, c##i##2);                   \
    c##i##3 = fma(av, b3, c##i##3);                   \
  }
// C[m0 + i][n0 + j] for j < jn: alpha * acc + beta * C (beta 0 ignores C) + the epilogue.
// Whole panels of a float C with unit column stride (and a bias read contiguously or broadcast)
// store as vectors; the rest element by element.
#define STORE_ROW(i)                                                                     \
  if (m0 + i < M) {                                                                      \
    const long base = (m0 + i) * sc_m, bbase = (m0 + i) * sbias_m;                       \
    if (EPI_VEC && jn == TN && sc_n == 1 && (!EPI_BIAS || sbias_n <= 1) &&                \
        (!EPI_ACT || sact_n == 1)) {                                                     \
      __global float* cr = (__global float*)(C + base + n0);                             \
      float16 v0 = alpha * c##i##0, v1 = alpha * c##i##1, v2 = alpha * c##i##2,          \
              v3 = alpha * c##i##3;                                                      \
      if (beta != 0.0f) {                                                                \
        v0 = fma((float16)beta, vload16(0, cr), v0);                                     \
        v1 = fma((float16)beta, vload16(1, cr), v1);                                     \
        v2 = fma((float16)beta, vload16(2, cr), v2);                                     \
        v3 = fma((float16)beta, vload16(3, cr), v3);                                     \
      }                                                                                  \
      if (EPI_BIAS) {                                                                    \
        __global const float* br = (__global const float*)(Bias + bbase + n0 * sbias_n); \
        if (sbias_n == 1) {                                                              \
          v0 = fma((float16)bias_scale, vload16(0, br), v0);                             \
          v1 = fma((float16)bias_scale, vload16(1, br), v1);                             \
          v2 = fma((float16)bias_scale, vload16(2, br), v2);                             \
          v3 = fma((float16)bias_scale, vload16(3, br), v3);                             \
        } else {                                                                         \
          const float16 bb = (float16)(bias_scale * br[0]);                              \
          v0 += bb, v1 += bb, v2 += bb, v3 += bb;                                        \
        }                                                                                \
      }                                                                                  \
      if (EPI_ACT) {                                                                     \
        __global float* ar = (__global float*)(Act + (m0 + i) * sact_m + n0);            \
        vstore16(v0, 0, cr);                                                             \
        vstore16(v1, 1, cr);                                                             \
        vstore16(v2, 2, cr);                                                             \
        vstore16(v3, 3, cr);                                                             \
        cr = ar;                                                                         \
      }                                                                                  \
      vstore16(gemm_epi16(v0), 0, cr);                                                   \
      vstore16(gemm_epi16(v1), 1, cr);                                                   \
      vstore16(gemm_epi16(v2), 2, cr);                                                   \
      vstore16(gemm_epi16(v3), 3, cr);                                                   \
    } else {                                                                             \
      float t[TN];                                                                       \
      vstore16(c##i##0, 0, t);                                                           \
      vstore16(c##i##1, 1, t);                                                           \
      vstore16(c##i##2, 2, t);                                                           \
      vstore16(c##i##3, 3, t);                                                           \
      for (int j = 0; j < jn; ++j) {                                                     \
        const long idx = base + (n0 + j) * sc_n;                                         \
        float v = alpha * t[j];                                                          \
        if (beta != 0.0f) v += beta * LOAD(C, idx);                                      \
        if (EPI_BIAS) v += bias_scale * LOAD(Bias, bbase + (n0 + j) * sbias_n);          \
        if (EPI_ACT) {                                                                   \
          STORE(C, idx, v);                                                              \
          STORE(Act, (m0 + i) * sact_m + (n0 + j) * sact_n, gemm_epi(v));                \
        } else {                                                                         \
          STORE(C, idx, gemm_epi(v));                                                    \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }

#define GEMM_ARGS                                                                              \
  __global const char *a, ulong a_off, __global const char *bp, ulong bp_off, __global char *c, \
      ulong c_off, long M, long N, long K, long sa_b, long sa_m, long sa_k, long sb_b,          \
      long sb_k, long sb_p, long sc_b, long sc_m, long sc_n, float alpha, float beta,           \
      __global const char *bias, ulong bias_off, long sbias_b, long sbias_m, long sbias_n,      \
      float bias_scale, __global char *act, ulong act_off, long sact_b, long sact_m,          \
      long sact_n, long nsum

#define GEMM_POINTERS                                                                   \
  __global const ST* A = (__global const ST*)(a + a_off) + bt * sa_b;                   \
  __global const float* B = (__global const float*)(bp + bp_off) + bt * sb_b + p * sb_p; \
  __global ST* C = (__global ST*)(c + c_off) + bt * sc_b;                               \
  __global const ST* Bias = (__global const ST*)(bias + bias_off) + bt * sbias_b;       \
  __global ST* Act = (__global ST*)(act + act_off) + bt * sact_b;                       \
  const int jn = (int)min((long)TN, N - n0)

// Rows past M repeat row M - 1: computed, never stored.
#define ROW_OFFSETS                                                                       \
  const long r0 = min(m0 + 0, M - 1) * sa_m, r1 = min(m0 + 1, M - 1) * sa_m,             \
             r2 = min(m0 + 2, M - 1) * sa_m, r3 = min(m0 + 3, M - 1) * sa_m,             \
             r4 = min(m0 + 4, M - 1) * sa_m, r5 = min(m0 + 5, M - 1) * sa_m

#define K_LOOP_FROM(K0, K1, BSPACE, BPTR, BSTRIDE)                                     \
  for (long k = (K0); k < (K1); ++k) {                                                 \
    BSPACE const float* br = (BPTR) + (k - (K0)) * (BSTRIDE);                          \
    const float16 b0 = vload16(0, br), b1 = vload16(1, br), b2 = vload16(2, br),       \
                  b3 = vload16(3, br);                                                 \
    const long ka = k * sa_k;                                                          \
    FMA_ROW(0)                                                                         \
    FMA_ROW(1)                                                                         \
    FMA_ROW(2)                                                                         \
    FMA_ROW(3)                                                                         \
    FMA_ROW(4)                                                                         \
    FMA_ROW(5)                                                                         \
  }

#define K_LOOP(K0, K1) K_LOOP_FROM(K0, K1, __global, B + (K0) * sb_k, sb_k)

#define STORE_TILE \
  STORE_ROW(0)     \
  STORE_ROW(1)     \
  STORE_ROW(2)     \
  STORE_ROW(3)     \
  STORE_ROW(4)     \
  STORE_ROW(5)

// Global size (ceil(M / 6), ceil(N / 64), batch; 1 when summing nsum products). B panels: element (k, j) of panel p of batch
// bt at bp[bt * sb_b + p * sb_p + k * sb_k + j] (floats).
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_6x64(GEMM_ARGS) {
  const long mt = get_global_id(0), p = get_global_id(1), bt = get_global_id(2);
  const long m0 = mt * TM, n0 = p * TN;
  GEMM_POINTERS;
  ROW_OFFSETS;
  ACC_ROW(0);
  ACC_ROW(1);
  ACC_ROW(2);
  ACC_ROW(3);
  ACC_ROW(4);
  ACC_ROW(5);
  // nsum > 1: C = the sum of nsum products (A and B advance by their batch strides), one batch.
  for (long s = 0; s < nsum; ++s) {
    K_LOOP(0, K)
    A += sa_b;
    B += sb_b;
  }
  STORE_TILE
}

// The same tiles, K in blocks: a work item owns rt <= RT row tiles (6 * rt rows) of one panel;
// for each block of KB <= KBMAX rows of K it copies that slice of the panel into local memory
// (contiguous, so it stays in the L1 cache) and runs every tile over it, keeping the partial sums
// in local memory too. B is read once per rt tiles instead of once per tile, in place even when
// its row stride maps a whole panel onto a few cache sets (N a multiple of 1024 floats), with no
// packing pass. Global size (ceil(M / (6 * rt)), ceil(N / 64), batch); nsum is 1.
#define RT 11
#define KBMAX 128
#define SAVE_ROW(i)                     \
  part[(t * TM + i) * 4 + 0] = c##i##0; \
  part[(t * TM + i) * 4 + 1] = c##i##1; \
  part[(t * TM + i) * 4 + 2] = c##i##2; \
  part[(t * TM + i) * 4 + 3] = c##i##3;
#define LOAD_ROW(i)                                                                   \
  float16 c##i##0 = part[(t * TM + i) * 4 + 0], c##i##1 = part[(t * TM + i) * 4 + 1], \
          c##i##2 = part[(t * TM + i) * 4 + 2], c##i##3 = part[(t * TM + i) * 4 + 3];
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_6x64_kblocks(GEMM_ARGS,
                                                                               long KB, int rt) {
  const long chunk = get_global_id(0), p = get_global_id(1), bt = get_global_id(2);
  const long n0 = p * TN, mbase = chunk * (rt * TM);
  GEMM_POINTERS;
  __local float16 part[RT * TM * 4];
  __local float16 bl[KBMAX * 4];
  const int tiles = (int)min((long)rt, (M - mbase + TM - 1) / TM);
  for (int t = 0; t < tiles * TM * 4; ++t) part[t] = (float16)(0.0f);
  for (long k0 = 0; k0 < K; k0 += KB) {
    const long k1 = min(K, k0 + KB);
    for (long k = k0; k < k1; ++k) {
      __global const float* src = B + k * sb_k;
      bl[(k - k0) * 4 + 0] = vload16(0, src);
      bl[(k - k0) * 4 + 1] = vload16(1, src);
      bl[(k - k0) * 4 + 2] = vload16(2, src);
      bl[(k - k0) * 4 + 3] = vload16(3, src);
    }
    for (int t = 0; t < tiles; ++t) {
      const long m0 = mbase + t * TM;
      ROW_OFFSETS;
      LOAD_ROW(0)
      LOAD_ROW(1)
      LOAD_ROW(2)
      LOAD_ROW(3)
      LOAD_ROW(4)
      LOAD_ROW(5)
      K_LOOP_FROM(k0, k1, __local, (__local const float*)bl, TN)
      if (k1 < K) {
        SAVE_ROW(0)
        SAVE_ROW(1)
        SAVE_ROW(2)
        SAVE_ROW(3)
        SAVE_ROW(4)
        SAVE_ROW(5)
      } else {
        STORE_TILE
      }
    }
  }
}
