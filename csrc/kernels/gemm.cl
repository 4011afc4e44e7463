// Tiled GEMM for the dtypes CLBlast does not cover here (bfloat16; float16 without cl_khr_fp16;
// integers): C = alpha * A @ B + beta * C over a batch, with arbitrary element strides for all
// three operands, so transposed, sliced and broadcast (stride 0) operands need no copies.
// The program is built with a header that defines ST (storage type), ACC (accumulation type),
// LOAD(p, i) (element i of ST* p as ACC) and STORE(p, i, v), and the epilogue: EPI_BIAS (1: add
// bias_scale * bias[b][m][n], any strides) and gemm_epi(v) (rounding to ST, the activation).
// Work-group: OCL_GEMM_TS x OCL_GEMM_TS items, one output element each; dimension 2 is the batch.

#define TS OCL_GEMM_TS

__kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void gemm(
    __global const char* a, ulong a_off, __global const char* b, ulong b_off, __global char* c,
    ulong c_off, long M, long N, long K, long sa_b, long sa_m, long sa_k, long sb_b, long sb_k,
    long sb_n, long sc_b, long sc_m, long sc_n, ACC alpha, ACC beta, __global const char* bias,
    ulong bias_off, long sbias_b, long sbias_m, long sbias_n, ACC bias_scale) {
  const int lr = get_local_id(1), lc = get_local_id(0);
  const long row = (long)get_group_id(1) * TS + lr;
  const long col = (long)get_group_id(0) * TS + lc;
  const long batch = get_global_id(2);
  __global const ST* A = (__global const ST*)(a + a_off) + batch * sa_b;
  __global const ST* B = (__global const ST*)(b + b_off) + batch * sb_b;
  __global ST* C = (__global ST*)(c + c_off) + batch * sc_b;
  __local ACC As[TS][TS];
  __local ACC Bs[TS][TS + 1];
  ACC acc = (ACC)0;
  for (long k0 = 0; k0 < K; k0 += TS) {
    const long ka = k0 + lc, kb = k0 + lr;
    As[lr][lc] = (row < M && ka < K) ? LOAD(A, row * sa_m + ka * sa_k) : (ACC)0;
    Bs[lr][lc] = (kb < K && col < N) ? LOAD(B, kb * sb_k + col * sb_n) : (ACC)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; ++k) acc += As[lr][k] * Bs[k][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    const long i = row * sc_m + col * sc_n;
    ACC r = alpha * acc;
    if (beta != (ACC)0) r += beta * LOAD(C, i);  // beta == 0 ignores C, NaN included
    if (EPI_BIAS) {
      __global const ST* Bias = (__global const ST*)(bias + bias_off) + batch * sbias_b;
      r += bias_scale * LOAD(Bias, row * sbias_m + col * sbias_n);
    }
    STORE(C, i, gemm_epi(r));
  }
}
