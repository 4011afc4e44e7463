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

// LU with partial pivoting (LAPACK getrf's result) of an (m, n) matrix, one work group of LS
// items per matrix, in place: the unit lower L below the diagonal, U on and above it. piv[j]
// (1-based, min(m, n) of them) is the row swapped with row j; info the first zero pivot
// (1-based), 0 if none (the factorization goes on, as LAPACK's does). The first largest |a| of a
// column is its pivot, as idamax picks it.
__kernel void lu_factor(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                        __global char* ib, ulong ioff, long m, long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long kmin = min(m, n);
  __global T* a = (__global T*)(ab + aoff) + g * m * n;
  __global int* piv = (__global int*)(pb + poff) + g * kmin;
  __local long prow;
  __local int first_zero;
  if (lid == 0) first_zero = 0;
  for (long j = 0; j < kmin; ++j) {
    if (lid == 0) {
      long p = j;
      ACC best = fabs(LD(a, j * n + j));
      for (long i = j + 1; i < m; ++i) {
        const ACC v = fabs(LD(a, i * n + j));
        if (v > best) {
          best = v;
          p = i;
        }
      }
      piv[j] = (int)(p + 1);
      prow = p;
      if (best == 0 && first_zero == 0) first_zero = (int)(j + 1);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const long p = prow;
    if (p != j)
      for (long c = lid; c < n; c += LS) {
        const ACC t = LD(a, j * n + c);
        ST(a, j * n + c, LD(a, p * n + c));
        ST(a, p * n + c, t);
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
    const ACC d = LD(a, j * n + j);
    if (d != 0)
      for (long i = j + 1 + lid; i < m; i += LS) ST(a, i * n + j, LD(a, i * n + j) / d);
    barrier(CLK_GLOBAL_MEM_FENCE);
    const long mr = m - j - 1, nc = n - j - 1;
    for (long e = lid; e < mr * nc; e += LS) {
      const long i = j + 1 + e / nc, c = j + 1 + e % nc;
      ST(a, i * n + c, LD(a, i * n + c) - LD(a, i * n + j) * LD(a, j * n + c));
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0) ((__global int*)(ib + ioff))[g] = first_zero;
}

// The row swaps of lu_factor applied to (n, k) right-hand sides, one work item per (column c,
// matrix g): in order (P^T B) or, with reverse, undone in reverse order (P B).
__kernel void lu_permute(__global char* xb, ulong xoff, __global char* pb, ulong poff, long n,
                         long k, int reverse) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global T* x = (__global T*)(xb + xoff) + g * n * k;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  for (long s = 0; s < n; ++s) {
    const long j = reverse ? n - 1 - s : s, p = piv[j] - 1;
    if (p == j) continue;
    const ACC t = LD(x, j * k + c);
    ST(x, j * k + c, LD(x, p * k + c));
    ST(x, p * k + c, t);
  }
}
