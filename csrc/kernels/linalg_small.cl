// Small dense factorizations and solves on contiguous row-major (batch, n, n) matrices, in ACC
// (float for 16-bit storage). Unblocked algorithms: correct for every size, fast for the small
// matrices that models factor (covariances, attention-sized systems); large matrices want a
// blocked form over the GEMM, which is not written yet. Macros from nn_common: T, ACC, LD, ST.
#define LS 256  // kRowLocal: launchRowGroups' work-group size

// Cholesky, lower: one work group of LS items per matrix, in place (the lower triangle of a is
// read, L written there; the strict upper triangle is left for the host to zero). info[b] gets
// the order of the first leading minor that is not positive definite, 0 on success (LAPACK's).
__kernel void cholesky_lower(__global char* ab, ulong aoff, __global char* ib, ulong ioff,
                             long n) {
  __global int* info = (__global int*)(ib + ioff);
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global T* a = (__global T*)(ab + aoff) + g * n * n;
  __local int failed;
  if (lid == 0) failed = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long j = 0; j < n && !failed; ++j) {
    if (lid == 0) {
      ACC s = LD(a, j * n + j);
      for (long k = 0; k < j; ++k) {
        const ACC l = LD(a, j * n + k);
        s -= l * l;
      }
      if (!(s > 0)) {
        info[g] = (int)(j + 1);
        failed = 1;
      } else {
        ST(a, j * n + j, sqrt(s));
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (failed) break;
    const ACC d = LD(a, j * n + j);
    for (long i = j + 1 + lid; i < n; i += LS) {
      ACC s = LD(a, i * n + j);
      for (long k = 0; k < j; ++k) s -= LD(a, i * n + k) * LD(a, j * n + k);
      ST(a, i * n + j, s / d);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0 && !failed) info[g] = 0;
}

// Triangular solve A X = B, one work item per (column c, matrix g): forward substitution for
// lower A, backward for upper; unit: the diagonal is taken as 1. X may alias B (in place).
__kernel void triangular_solve(__global char* ab, ulong aoff, __global char* xb, ulong xoff,
                               long n, long k, int upper, int unit) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global const T* a = (__global const T*)(ab + aoff) + g * n * n;
  __global T* x = (__global T*)(xb + xoff) + g * n * k;
  for (long s = 0; s < n; ++s) {
    const long i = upper ? n - 1 - s : s;
    ACC v = LD(x, i * k + c);
    if (upper) {
      for (long j = i + 1; j < n; ++j) v -= LD(a, i * n + j) * LD(x, j * k + c);
    } else {
      for (long j = 0; j < i; ++j) v -= LD(a, i * n + j) * LD(x, j * k + c);
    }
    ST(x, i * k + c, unit ? v : v / LD(a, i * n + i));
  }
}
