// Small dense factorizations and solves on contiguous row-major (batch, n, n) matrices, real (in
// ACC: float for 16-bit storage) and complex, written once over kernels/linalg_scalar.cl's
// scalar layer. Unblocked algorithms: correct for every size, fast for the small matrices that
// models factor (covariances, attention-sized systems); large ones go blocked on the host side
// (cholesky), over these kernels and the GEMM. Complex Cholesky is A = L L^H; LU pivots on
// |re| + |im| as LAPACK's izamax does, so the pivots are CPU's.
#define LS 256  // kRowLocal: launchRowGroups' work-group size

// Cholesky, lower: one work group of LS items per matrix, in place (the lower triangle of a is
// read, L written there; the strict upper triangle is left for the host to zero). info[b] gets
// the order of the first leading minor that is not positive definite, 0 on success (LAPACK's).
__kernel void cholesky_lower(__global char* ab, ulong aoff, __global char* ib, ulong ioff,
                             long n) {
  __global int* info = (__global int*)(ib + ioff);
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global E* a = (__global E*)(ab + aoff) + g * n * n;
  __local int failed;
  if (lid == 0) failed = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long j = 0; j < n && !failed; ++j) {
    if (lid == 0) {
      SR s = S_RE(S_LD(a, j * n + j));  // the diagonal of a Hermitian matrix is real
      for (long k = 0; k < j; ++k) {
        const S l = S_LD(a, j * n + k);
        s -= S_ABS2(l);
      }
      if (!(s > 0)) {
        info[g] = (int)(j + 1);
        failed = 1;
      } else {
        S_ST(a, j * n + j, S_REAL(sqrt(s)));
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (failed) break;
    const SR d = S_RE(S_LD(a, j * n + j));
    for (long i = j + 1 + lid; i < n; i += LS) {
      S s = S_LD(a, i * n + j);
      for (long k = 0; k < j; ++k) s -= S_MUL(S_LD(a, i * n + k), S_CONJ(S_LD(a, j * n + k)));
      S_ST(a, i * n + j, s / d);
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
  __global const E* a = (__global const E*)(ab + aoff) + g * n * n;
  __global E* x = (__global E*)(xb + xoff) + g * n * k;
  for (long s = 0; s < n; ++s) {
    const long i = upper ? n - 1 - s : s;
    S v = S_LD(x, i * k + c);
    if (upper) {
      for (long j = i + 1; j < n; ++j) v -= S_MUL(S_LD(a, i * n + j), S_LD(x, j * k + c));
    } else {
      for (long j = 0; j < i; ++j) v -= S_MUL(S_LD(a, i * n + j), S_LD(x, j * k + c));
    }
    S_ST(x, i * k + c, unit ? v : S_DIV(v, S_LD(a, i * n + i)));
  }
}

// LU with partial pivoting (LAPACK getrf's result) of an (m, n) matrix, one work group of LS
// items per matrix, in place: the unit lower L below the diagonal, U on and above it. piv[j]
// (1-based, min(m, n) of them) is the row swapped with row j; info the first zero pivot
// (1-based), 0 if none (the factorization goes on, as LAPACK's does). The first largest
// S_ABS1 of a column is its pivot, as i?amax picks it.
__kernel void lu_factor(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                        __global char* ib, ulong ioff, long m, long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long kmin = min(m, n);
  __global E* a = (__global E*)(ab + aoff) + g * m * n;
  __global int* piv = (__global int*)(pb + poff) + g * kmin;
  __local long prow;
  __local int first_zero;
  if (lid == 0) first_zero = 0;
  for (long j = 0; j < kmin; ++j) {
    if (lid == 0) {
      long p = j;
      SR best = S_ABS1(S_LD(a, j * n + j));
      for (long i = j + 1; i < m; ++i) {
        const SR v = S_ABS1(S_LD(a, i * n + j));
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
        const S t = S_LD(a, j * n + c);
        S_ST(a, j * n + c, S_LD(a, p * n + c));
        S_ST(a, p * n + c, t);
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
    const S d = S_LD(a, j * n + j);
    if (S_NONZERO(d))
      for (long i = j + 1 + lid; i < m; i += LS) S_ST(a, i * n + j, S_DIV(S_LD(a, i * n + j), d));
    barrier(CLK_GLOBAL_MEM_FENCE);
    const long mr = m - j - 1, nc = n - j - 1;
    for (long e = lid; e < mr * nc; e += LS) {
      const long i = j + 1 + e / nc, c = j + 1 + e % nc;
      S_ST(a, i * n + c, S_LD(a, i * n + c) - S_MUL(S_LD(a, i * n + j), S_LD(a, j * n + c)));
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
  __global E* x = (__global E*)(xb + xoff) + g * n * k;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  for (long s = 0; s < n; ++s) {
    const long j = reverse ? n - 1 - s : s, p = piv[j] - 1;
    if (p == j) continue;
    const S t = S_LD(x, j * k + c);
    S_ST(x, j * k + c, S_LD(x, p * k + c));
    S_ST(x, p * k + c, t);
  }
}
