// Householder QR, the application of its reflectors, symmetric Jacobi eigensolver and one-sided
// Jacobi SVD on contiguous row-major (batch, rows, cols) matrices, one work group (32..LS
// items, sized by the host to the matrix) per matrix, or one work item per column where
// columns are independent. Unblocked: every size is correct, but they are meant for batches of
// small matrices (n up to about 64; QR up to a few hundred); large matrices want blocked
// algorithms over the GEMM, not written yet. Macros from nn_common: T, ACC, LD, ST. The Jacobi kernels work on ACC buffers (the host passes float or double).
#define LS 256  // the largest work-group size the host launches these with (a power of 2)

// Sum of v over the work group (all items get it); red is __local ACC[LS].
ACC group_sum(__local ACC* red, ACC v) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = (int)get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// LAPACK geqrf's result, in place on a (m, n): R on and above the diagonal, the Householder
// vectors v_j (v_j[j] = 1 implied) below it, tau (min(m, n)) with H_j = I - tau_j v_j v_j^T and
// LAPACK dlarfg's conventions (beta = -sign(alpha) |x|, tau = 0 when the column below the
// diagonal is zero), so R's signs are LAPACK's.
__kernel void geqrf(__global char* ab, ulong aoff, __global char* tb, ulong toff, long m,
                    long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  const long k = min(m, n);
  __global T* a = (__global T*)(ab + aoff) + g * m * n;
  __global T* tau = (__global T*)(tb + toff) + g * k;
  __local ACC red[LS];
  __local ACC tau_j;
  for (long j = 0; j < k; ++j) {
    ACC part = 0;
    for (long i = j + 1 + lid; i < m; i += ls) {
      const ACC x = LD(a, i * n + j);
      part += x * x;
    }
    const ACC xnorm2 = group_sum(red, part);
    const ACC alpha = LD(a, j * n + j);
    const int reflect = xnorm2 != 0;  // NaN reflects (and spreads), as LAPACK's dlarfg
    const ACC beta = reflect ? -copysign(sqrt(alpha * alpha + xnorm2), alpha) : alpha;
    const ACC scale = reflect ? 1 / (alpha - beta) : 0;
    if (lid == 0) {
      const ACC t = reflect ? (beta - alpha) / beta : 0;
      tau_j = t;
      ST(tau, j, t);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // alpha read everywhere
    if (reflect) {
      if (lid == 0) ST(a, j * n + j, beta);
      for (long i = j + 1 + lid; i < m; i += ls) ST(a, i * n + j, LD(a, i * n + j) * scale);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const ACC tj = tau_j;
    if (tj != 0)
      for (long c = j + 1 + lid; c < n; c += ls) {
        ACC w = LD(a, j * n + c);
        for (long i = j + 1; i < m; ++i) w += LD(a, i * n + j) * LD(a, i * n + c);
        w *= tj;
        ST(a, j * n + c, LD(a, j * n + c) - w);
        for (long i = j + 1; i < m; ++i) ST(a, i * n + c, LD(a, i * n + c) - w * LD(a, i * n + j));
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// C = H_0 ... H_{k-1} C (forward = 0) or H_{k-1} ... H_0 C (forward = 1, i.e. Q^T C) for the
// reflectors of v (m, nv) row-major (column j below the diagonal, v_j[j] = 1) and tau (k);
// C (m, p) row-major, one work item per (column c of C, matrix g).
__kernel void apply_reflectors(__global char* vb, ulong voff, __global char* tb, ulong toff,
                               __global char* cb, ulong coff, long m, long nv, long k, long p,
                               int forward) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= p) return;
  __global const T* v = (__global const T*)(vb + voff) + g * m * nv;
  __global const T* tau = (__global const T*)(tb + toff) + g * k;
  __global T* x = (__global T*)(cb + coff) + g * m * p;
  for (long s = 0; s < k; ++s) {
    const long j = forward ? s : k - 1 - s;
    const ACC t = LD(tau, j);
    if (t == 0) continue;
    ACC w = LD(x, j * p + c);
    for (long i = j + 1; i < m; ++i) w += LD(v, i * nv + j) * LD(x, i * p + c);
    w *= t;
    ST(x, j * p + c, LD(x, j * p + c) - w);
    for (long i = j + 1; i < m; ++i) ST(x, i * p + c, LD(x, i * p + c) - w * LD(v, i * nv + j));
  }
}

// Jacobi on the symmetric a (n, n, ACC, both triangles filled), in place: a becomes diagonal
// (the eigenvalues, unsorted), v (n, n) the eigenvectors in its columns when compute_v. Parallel
// (round-robin, rr_index) ordering: each round rotates n / 2 disjoint pairs at once (a <- J^T a J
// in a row phase and a column phase), cs (4 per pair, ACC scratch) holding their c, s and new
// diagonal. A
// rotation is skipped when |a_pq| is negligible against its diagonal; the sweeps stop when one
// rotates nothing (or after max_sweeps).
long rr_index(long pos, long round, long nn) {
  return pos == 0 ? 0 : 1 + (pos - 1 + round) % (nn - 1);
}

__kernel void jacobi_eigh(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                          __global char* sb, ulong soff, long n, int compute_v, int max_sweeps,
                          ACC eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global ACC* a = (__global ACC*)(ab + aoff) + g * n * n;
  __global ACC* v = (__global ACC*)(vb + voff) + g * n * n;
  const long nn = n + (n & 1), npairs = nn / 2;
  __global ACC* cs = (__global ACC*)(sb + soff) + g * 4 * npairs;
  __local int rotated;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? 1 : 0;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long round = 0; round < nn - 1; ++round) {
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        ACC c = 1, sn = 0;
        if (q < n) {
          const ACC apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
          if (apq != 0 && fabs(apq) > eps * (fabs(app) + fabs(aqq)) * (ACC)0.5) {
            const ACC theta = (aqq - app) / (2 * apq);
            const ACC t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
            c = 1 / sqrt(t * t + 1);
            sn = t * c;
            cs[4 * pr + 2] = app - t * apq;  // the exact new diagonal, set after the phases
            cs[4 * pr + 3] = aqq + t * apq;
            atomic_or(&rotated, 1);
          }
        }
        cs[4 * pr] = c;
        cs[4 * pr + 1] = sn;
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // rows p, q of every pair: a <- J^T a (one item per pair, whole rows)
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        const ACC sn = cs[4 * pr + 1];
        if (q >= n || sn == 0) continue;
        const ACC c = cs[4 * pr];
        for (long col = 0; col < n; ++col) {
          const ACC x = a[p * n + col], y = a[q * n + col];
          a[p * n + col] = c * x - sn * y;
          a[q * n + col] = sn * x + c * y;
        }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // columns p, q: a <- a J, v <- v J
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        const ACC sn = cs[4 * pr + 1];
        if (q >= n || sn == 0) continue;
        const ACC c = cs[4 * pr];
        for (long r = 0; r < n; ++r) {
          const ACC x = a[r * n + p], y = a[r * n + q];
          a[r * n + p] = c * x - sn * y;
          a[r * n + q] = sn * x + c * y;
        }
        if (compute_v)
          for (long r = 0; r < n; ++r) {
            const ACC vx = v[r * n + p], vy = v[r * n + q];
            v[r * n + p] = c * vx - sn * vy;
            v[r * n + q] = sn * vx + c * vy;
          }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // what the rotation makes exact: a_pq = 0 and the diagonal from t (rounding left in a_pq
      // would keep the sweeps going)
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        if (q >= n || cs[4 * pr + 1] == 0) continue;
        a[p * n + p] = cs[4 * pr + 2];
        a[q * n + q] = cs[4 * pr + 3];
        a[p * n + q] = 0;
        a[q * n + p] = 0;
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int again = rotated;  // every item reads it before item 0 resets it
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!again) break;
  }
}

// One-sided (Hestenes) Jacobi on the rows of u (n, m, ACC): the rows (A's columns, m >= n) are
// rotated until pairwise orthogonal; v (n, n) accumulates the rotations in its rows (V^T) when
// compute_v. Afterwards row j of u is sigma_j times the j-th left singular vector. Parallel
// (round-robin, rr_index) ordering: a sweep is n - 1 rounds (n rounded up to even) of n / 2 disjoint
// pairs, one work item per pair, so a sweep costs n - 1 barriers, not one per pair.
__kernel void jacobi_svd(__global char* ub, ulong uoff, __global char* vb, ulong voff, long n,
                         long m, int compute_v, int max_sweeps, ACC eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global ACC* u = (__global ACC*)(ub + uoff) + g * n * m;
  __global ACC* v = (__global ACC*)(vb + voff) + g * n * n;
  __local int rotated;
  const long nn = n + (n & 1), npairs = nn / 2;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? 1 : 0;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long round = 0; round < nn - 1; ++round) {
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        if (q >= n) continue;  // the padding index of an odd n
        __global ACC* up = u + p * m;
        __global ACC* uq = u + q * m;
        ACC al = 0, be = 0, ga = 0;
        for (long i = 0; i < m; ++i) {
          const ACC x = up[i], y = uq[i];
          al += x * x;
          be += y * y;
          ga += x * y;
        }
        if (ga != 0 && fabs(ga) > eps * sqrt(al * be)) {
          const ACC zeta = (be - al) / (2 * ga);
          const ACC t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(zeta * zeta + 1));
          const ACC c = 1 / sqrt(t * t + 1), s = t * c;
          for (long i = 0; i < m; ++i) {
            const ACC x = up[i], y = uq[i];
            up[i] = c * x - s * y;
            uq[i] = s * x + c * y;
          }
          if (compute_v) {
            __global ACC* vp = v + p * n;
            __global ACC* vq = v + q * n;
            for (long i = 0; i < n; ++i) {
              const ACC x = vp[i], y = vq[i];
              vp[i] = c * x - s * y;
              vq[i] = s * x + c * y;
            }
          }
          atomic_or(&rotated, 1);
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    const int again = rotated;  // every item reads it before item 0 resets it
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!again) break;
  }
}

// P^T A = L U's permutation from LAPACK pivots (1-based, k of them): perm (m) with row i of
// P^T A being row perm[i] of A. One work item per matrix.
__kernel void pivots_to_perm(__global char* pb, ulong poff, __global char* qb, ulong qoff, long m,
                             long k, long batch) {
  const long g = get_global_id(0);
  if (g >= batch) return;
  __global const int* piv = (__global const int*)(pb + poff) + g * k;
  __global long* perm = (__global long*)(qb + qoff) + g * m;
  for (long i = 0; i < m; ++i) perm[i] = i;
  for (long j = 0; j < k; ++j) {
    const long p = piv[j] - 1;
    if (p < 0 || p >= m) continue;  // the host has checked; never write out of bounds
    const long t = perm[j];
    perm[j] = perm[p];
    perm[p] = t;
  }
}
