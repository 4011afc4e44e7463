// The device pieces of the blocked factorizations (aten/linalg/linalg_blocked.cpp): the panel
// of a right-looking LU, the row swaps and triangular solve that follow it, and the inverses of
// a triangular matrix's diagonal blocks; the trailing updates are GEMMs enqueued by the host. Written
// once for real and complex element types over kernels/linalg_scalar.cl's scalar layer (E, S, SR,
// S_LD / S_ST, S_MUL, S_DIV, S_ABS1 (LAPACK's pivot measure), S_NONZERO, S_REAL).
// Matrices are dense, row or column major (element (i, j) at i * rs + j * cs, m * n apart);
// sizes, strides and offsets are arguments, never build options.
// lu_panel's work-group size (kLuPanelLocal): few items keep the per-column barriers cheap on
// CPU drivers, and the panel is a small part of the work.
#define PLS 64

// Columns [k, k + kb) of the (m, n) matrix of group g, rows k..m-1, factored in place as
// LAPACK's getf2 does: for each column the first largest SABS1 below the diagonal is the pivot,
// its row is swapped with the diagonal row within the panel columns only (lu_swap_solve does the
// rest of the row), the column below is divided by the pivot (left as is when the pivot is 0) and
// the rest of the panel gets the rank-1 update. piv[k + j] = the 1-based pivot row; info[g],
// zero on entry to the first panel, gets the first zero pivot (1-based) and keeps it.
// The panel is worked on transposed in w (kb rows of mp = m - k, per matrix kb * m elements):
// a column of the panel is then contiguous, so the pivot search and the updates run across
// consecutive work items (vectorised by CPU drivers, coalesced on GPUs) instead of striding by a
// whole matrix row per item.
__kernel void lu_panel(__global char* ab, ulong aoff, __global char* wb, ulong woff,
                       __global char* pb, ulong poff, __global char* ib, ulong ioff, long m,
                       long n, long rs, long cs, long k, long kb) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long mp = m - k;
  __global E* a = (__global E*)(ab + aoff) + g * m * n;
  __global E* w = (__global E*)(wb + woff) + g * kb * m;
  __global int* piv = (__global int*)(pb + poff) + g * min(m, n);
  __global int* info = (__global int*)(ib + ioff) + g;
  __local SR best_v[PLS];
  __local long best_i[PLS];
  __local int first_zero;
  if (lid == 0) first_zero = 0;
  // Loops over rows have a uniform trip count with a guard inside: PoCL 5 miscompiled the
  // final copy-back written as `for (r = lid; r < mp; r += PLS)` (its last work item ran past mp).
  for (long r0 = 0; r0 < mp; r0 += PLS) {
    const long r = r0 + lid;
    if (r < mp)
      for (long c = 0; c < kb; ++c) w[c * mp + r] = a[(k + r) * rs + (k + c) * cs];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (long j = 0; j < kb; ++j) {
    __global E* wj = w + j * mp;
    SR bv = -1;
    long bi = j;
    for (long r0 = j; r0 < mp; r0 += PLS) {
      const long r = r0 + lid;
      const SR v = r < mp ? S_ABS1(S_LD(wj, r)) : -1;
      if (v > bv) {
        bv = v;
        bi = r;
      }
    }
    best_v[lid] = bv;
    best_i[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = PLS / 2; s > 0; s >>= 1) {
      if (lid < s) {
        const SR ov = best_v[lid + s];
        const long oi = best_i[lid + s];
        if (ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid])) {
          best_v[lid] = ov;
          best_i[lid] = oi;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const long p = best_i[0];
    if (lid == 0) {
      piv[k + j] = (int)(k + p + 1);
      if (best_v[0] == 0 && first_zero == 0) first_zero = (int)(k + j + 1);
    }
    if (p != j)
      for (long c = lid; c < kb; c += PLS) {
        const E t = w[c * mp + j];
        w[c * mp + j] = w[c * mp + p];
        w[c * mp + p] = t;
      }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const S d = S_LD(wj, j);
    const int scale = S_NONZERO(d);
    for (long r0 = j + 1; r0 < mp; r0 += PLS) {
      const long r = r0 + lid;
      if (r >= mp) break;
      S l = S_LD(wj, r);
      if (scale) {
        l = S_DIV(l, d);
        S_ST(wj, r, l);
      }
      for (long c = j + 1; c < kb; ++c)
        S_ST(w + c * mp, r, S_LD(w + c * mp, r) - S_MUL(l, S_LD(w + c * mp, j)));
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  for (long r0 = 0; r0 < mp; r0 += PLS) {
    const long r = r0 + lid;
    if (r < mp)
      for (long c = 0; c < kb; ++c) a[(k + r) * rs + (k + c) * cs] = w[c * mp + r];
  }
  if (lid == 0 && *info == 0 && first_zero != 0) *info = first_zero;
}

// After lu_panel: one work item per (column right of the panel, matrix). The panel's row swaps
// (piv[k .. k + kb)) applied to the column in order (LAPACK's laswp), then the rows k .. k + kb of
// the column solved with the panel's unit lower triangle (U12 = L11^-1 A12, LAPACK's trsm). The
// columns left of the panel get their swaps at the end, all at once (lu_swap_left).
__kernel void lu_swap_solve(__global char* ab, ulong aoff, __global char* pb, ulong poff, long m,
                            long n, long rs, long cs, long k, long kb) {
  const long cc = get_global_id(0), g = get_global_id(1);
  if (cc >= n - k - kb) return;
  const long c = k + kb + cc;
  __global E* a = (__global E*)(ab + aoff) + g * m * n;
  __global E* col = a + c * cs;
  __global const int* piv = (__global const int*)(pb + poff) + g * min(m, n);
  for (long j = 0; j < kb; ++j) {
    const long r = k + j, p = piv[r] - 1;
    if (p == r) continue;
    const S t = S_LD(col, r * rs);
    S_ST(col, r * rs, S_LD(col, p * rs));
    S_ST(col, p * rs, t);
  }
  for (long r = 1; r < kb; ++r) {
    S x = S_LD(col, (k + r) * rs);
    for (long q = 0; q < r; ++q)
      x -= S_MUL(S_LD(a, (k + r) * rs + (k + q) * cs), S_LD(col, (k + q) * rs));
    S_ST(col, (k + r) * rs, x);
  }
}

// The swaps of every later panel applied to the columns of each panel (in order), once all the
// panels are factored: what LAPACK's getrf does to them panel by panel, in one launch. One work
// item per (column c < min(m, n), matrix); nb is the panel width.
__kernel void lu_swap_left(__global char* ab, ulong aoff, __global char* pb, ulong poff, long m,
                           long n, long rs, long cs, long nb) {
  const long c = get_global_id(0), g = get_global_id(1);
  const long kmin = min(m, n);
  if (c >= kmin) return;
  __global E* col = (__global E*)(ab + aoff) + g * m * n + c * cs;
  __global const int* piv = (__global const int*)(pb + poff) + g * kmin;
  for (long r = (c / nb + 1) * nb; r < kmin; ++r) {
    const long p = piv[r] - 1;
    if (p == r) continue;
    const S t = S_LD(col, r * rs);
    S_ST(col, r * rs, S_LD(col, p * rs));
    S_ST(col, p * rs, t);
  }
}

// The inverses of the diagonal blocks of a triangular (n, n) matrix (lower or upper, unit
// diagonal or not): one work item per (column c, block, matrix) solves A_bb d = e_c. d gets full
// (nb, nb) blocks, a short last block padded with the identity; the blocked triangular solve then
// applies them by GEMM (as MAGMA's trsm does with its inverted diagonal blocks).
__kernel void trtri_blocks(__global char* ab, ulong aoff, __global char* db, ulong doff, long n,
                           long nb, long rs, long cs, long sa, int upper, int unit) {
  const long c = get_global_id(0), blk = get_global_id(1), g = get_global_id(2);
  if (c >= nb) return;
  const long b0 = blk * nb, bs = min(nb, n - b0);
  __global const E* a = (__global const E*)(ab + aoff) + g * sa + b0 * (rs + cs);
  __global E* d = (__global E*)(db + doff) + (g * get_global_size(1) + blk) * nb * nb;
  for (long i = bs; i < nb; ++i) S_ST(d, i * nb + c, S_REAL(0));
  if (c >= bs) {
    for (long i = 0; i < bs; ++i) S_ST(d, i * nb + c, S_REAL(0));
    S_ST(d, c * nb + c, S_REAL(1));
    return;
  }
  for (long s = 0; s < bs; ++s) {
    const long i = upper ? bs - 1 - s : s;
    const long lo = upper ? i + 1 : 0, hi = upper ? bs : i;
    S v = i == c ? S_REAL(1) : S_REAL(0);
    for (long j = lo; j < hi; ++j) v -= S_MUL(S_LD(a, i * rs + j * cs), S_LD(d, j * nb + c));
    S_ST(d, i * nb + c, unit ? v : S_DIV(v, S_LD(a, i * (rs + cs))));
  }
}

// The row order that LAPACK's pivots (1-based, applied in order) give, one work item per matrix:
// perm[i] = the row of x that row i of P^T x is (reverse = 0), or of P x (reverse = 1: the
// inverse permutation), so that the permutation is one gather over contiguous rows instead of n
// dependent swaps per column.
__kernel void lu_pivots_to_perm(__global char* pb, ulong poff, __global char* qb, ulong qoff,
                                long n, long batch, int reverse) {
  const long g = get_global_id(0);
  if (g >= batch) return;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  __global long* perm = (__global long*)(qb + qoff) + g * n;
  __global long* work = (__global long*)(qb + qoff) + (batch + g) * n;
  for (long i = 0; i < n; ++i) work[i] = i;
  for (long j = 0; j < n; ++j) {
    const long p = piv[j] - 1;
    const long t = work[j];
    work[j] = work[p];
    work[p] = t;
  }
  if (reverse) {
    for (long i = 0; i < n; ++i) perm[work[i]] = i;
  } else {
    for (long i = 0; i < n; ++i) perm[i] = work[i];
  }
}

// LAPACK larft (forward, columnwise) from the Gram matrix s = V^H V of a panel's kb reflectors:
// the upper triangular t with H_0 ... H_{kb-1} = I - V t V^H, t[i][i] = tau[i] and
// t[0:i, i] = -tau[i] t[0:i, 0:i] s[0:i, i]. Row r of t depends only on row r, so one work item
// per (row, matrix) and no barriers; t is zero on entry.
__kernel void larft_gram(__global char* sb, ulong soff, __global char* tb, ulong toff,
                         __global char* ub, ulong uoff, long kb, long ldtau, long batch) {
  const long r = get_global_id(0), g = get_global_id(1);
  if (r >= kb || g >= batch) return;
  __global const E* s = (__global const E*)(sb + soff) + g * kb * kb;
  __global E* t = (__global E*)(tb + toff) + g * kb * kb;
  __global const E* tau = (__global const E*)(ub + uoff) + g * ldtau;
  S_ST(t, r * kb + r, S_LD(tau, r));
  for (long i = r + 1; i < kb; ++i) {
    S acc = S_REAL(0);
    for (long q = r; q < i; ++q) acc += S_MUL(S_LD(t, r * kb + q), S_LD(s, q * kb + i));
    S_ST(t, r * kb + i, S_MUL(S_REAL(0) - S_LD(tau, i), acc));
  }
}
