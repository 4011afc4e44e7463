// Householder QR, the application of its reflectors, symmetric Jacobi eigensolver and one-sided
// Jacobi SVD on contiguous row-major (batch, rows, cols) matrices, one work group of LS items
// per matrix (or one work item per column where columns are independent). Unblocked: every
// size is correct, the sizes models use (up to a few hundred) are what it is fast for. Macros
// from nn_common: T, ACC, LD, ST. The Jacobi kernels work on ACC buffers (the host passes float
// or double work copies).
#define LS 256  // the largest work-group size the host launches these with (a power of 2)
#define ACC3 CAT3(ACC)
#define CAT3(t) CAT3_(t)
#define CAT3_(t) t##3

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

// The three sums of (x, y, z) over the work group in one pass; red is __local ACC[3 * LS].
ACC3 group_sum3(__local ACC* red, ACC x, ACC y, ACC z) {
  const int lid = get_local_id(0);
  red[lid] = x;
  red[LS + lid] = y;
  red[2 * LS + lid] = z;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = (int)get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) {
      red[lid] += red[lid + s];
      red[LS + lid] += red[LS + lid + s];
      red[2 * LS + lid] += red[2 * LS + lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC3 r = (ACC3)(red[0], red[LS], red[2 * LS]);
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
    const int reflect = xnorm2 > 0;
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

// Cyclic Jacobi on the symmetric a (n, n, ACC, both triangles filled), in place: a becomes
// diagonal (the eigenvalues, unsorted), v (n, n) the eigenvectors in its columns when
// compute_v. A rotation is skipped when |a_pq| is negligible against its diagonal; the sweeps
// stop when one rotates nothing (or after max_sweeps).
__kernel void jacobi_eigh(__global char* ab, ulong aoff, __global char* vb, ulong voff, long n,
                          int compute_v, int max_sweeps, ACC eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global ACC* a = (__global ACC*)(ab + aoff) + g * n * n;
  __global ACC* v = (__global ACC*)(vb + voff) + g * n * n;
  __local ACC cs[2];
  __local int rotate, rotated;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? 1 : 0;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long p = 0; p < n - 1; ++p)
      for (long q = p + 1; q < n; ++q) {
        if (lid == 0) {
          const ACC apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
          rotate = fabs(apq) > eps * (fabs(app) + fabs(aqq)) * (ACC)0.5 && apq != 0;
          if (rotate) {
            const ACC theta = (aqq - app) / (2 * apq);
            const ACC t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
            const ACC c = 1 / sqrt(t * t + 1);
            cs[0] = c;
            cs[1] = t * c;
            a[p * n + p] = app - t * apq;
            a[q * n + q] = aqq + t * apq;
            a[p * n + q] = 0;
            a[q * n + p] = 0;
            rotated = 1;
          }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (rotate) {
          const ACC c = cs[0], s = cs[1];
          for (long r = lid; r < n; r += ls) {
            if (r != p && r != q) {
              const ACC arp = a[r * n + p], arq = a[r * n + q];
              const ACC np = c * arp - s * arq, nq = s * arp + c * arq;
              a[r * n + p] = np;
              a[p * n + r] = np;
              a[r * n + q] = nq;
              a[q * n + r] = nq;
            }
            if (compute_v) {
              const ACC vrp = v[r * n + p], vrq = v[r * n + q];
              v[r * n + p] = c * vrp - s * vrq;
              v[r * n + q] = s * vrp + c * vrq;
            }
          }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      }
    const int again = rotated;  // every item reads it before item 0 resets it
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!again) break;
  }
}

// One-sided (Hestenes) Jacobi on the rows of u (n, m, ACC): the rows (A's columns, m >= n) are
// rotated until pairwise orthogonal; v (n, n) accumulates the rotations in its rows (V^T) when
// compute_v. Afterwards row j of u is sigma_j times the j-th left singular vector.
__kernel void jacobi_svd(__global char* ub, ulong uoff, __global char* vb, ulong voff, long n,
                         long m, int compute_v, int max_sweeps, ACC eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global ACC* u = (__global ACC*)(ub + uoff) + g * n * m;
  __global ACC* v = (__global ACC*)(vb + voff) + g * n * n;
  __local ACC red[3 * LS];
  __local int rotated;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? 1 : 0;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long p = 0; p < n - 1; ++p)
      for (long q = p + 1; q < n; ++q) {
        __global ACC* up = u + p * m;
        __global ACC* uq = u + q * m;
        ACC al = 0, be = 0, ga = 0;
        for (long i = lid; i < m; i += ls) {
          const ACC x = up[i], y = uq[i];
          al += x * x;
          be += y * y;
          ga += x * y;
        }
        const ACC3 sums = group_sum3(red, al, be, ga);
        al = sums.x;
        be = sums.y;
        ga = sums.z;
        if (ga != 0 && fabs(ga) > eps * sqrt(al * be)) {
          const ACC zeta = (be - al) / (2 * ga);
          const ACC t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(zeta * zeta + 1));
          const ACC c = 1 / sqrt(t * t + 1), s = t * c;
          for (long i = lid; i < m; i += ls) {
            const ACC x = up[i], y = uq[i];
            up[i] = c * x - s * y;
            uq[i] = s * x + c * y;
          }
          if (compute_v) {
            __global ACC* vp = v + p * n;
            __global ACC* vq = v + q * n;
            for (long i = lid; i < n; i += ls) {
              const ACC x = vp[i], y = vq[i];
              vp[i] = c * x - s * y;
              vq[i] = s * x + c * y;
            }
          }
          if (lid == 0) rotated = 1;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
      }
    barrier(CLK_LOCAL_MEM_FENCE);
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
