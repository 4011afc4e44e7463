// _int_mm: C (M x N, int32) = A (M x K, int8) @ B (K x N, int8), any strides (in elements).
// 16 x 16 tiles of C per work-group, A and B staged through local memory one K-tile at a time;
// products accumulate in int32 (exact; wraps on overflow as CPU's int32 accumulation does).
#define IMM_TILE 16

__kernel void int_mm(__global char* cb, ulong coff, __global const char* ab, ulong aoff,
                     __global const char* bb, ulong boff, long M, long N, long K, long sam,
                     long sak, long sbk, long sbn, long scm, long scn) {
  const int lc = get_local_id(0), lr = get_local_id(1);
  const long col = get_group_id(0) * IMM_TILE + lc, row = get_group_id(1) * IMM_TILE + lr;
  __global const char* A = ab + aoff;
  __global const char* B = bb + boff;
  __local int As[IMM_TILE][IMM_TILE + 1];
  __local int Bs[IMM_TILE][IMM_TILE + 1];
  int acc = 0;
  for (long k0 = 0; k0 < K; k0 += IMM_TILE) {
    As[lr][lc] = (row < M && k0 + lc < K) ? (int)A[row * sam + (k0 + lc) * sak] : 0;
    Bs[lr][lc] = (k0 + lr < K && col < N) ? (int)B[(k0 + lr) * sbk + col * sbn] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < IMM_TILE; ++kk) acc += As[lr][kk] * Bs[kk][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) ((__global int*)(cb + coff))[row * scm + col * scn] = acc;
}
