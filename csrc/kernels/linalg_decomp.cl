// Householder QR, the application of its reflectors, Jacobi eigensolver and one-sided Jacobi SVD
// on contiguous row-major (batch, rows, cols) matrices, real and complex, one work group (32..LS
// items, sized by the host to the matrix) per matrix, or one work item per column where columns
// are independent. Unblocked: every size is correct, but they are meant for batches of small
// matrices (n up to about 64; QR up to a few hundred). Written once over
// kernels/linalg_scalar.cl (real: T, ACC, LD, ST from nn_common; complex: CT, CR); the Jacobi
// kernels work on ACC (complex: CT) buffers and, for complex, turn each pair's element real
// before the real rotation. QR follows LAPACK's geqr2 / larfg
// conventions: beta = -sign(re alpha) |(alpha, x)| (real), tau = ((beta - re alpha) / beta,
// -im alpha / beta), no reflection when x = 0 and alpha is real (tau = 0); H_j = I - tau_j v_j
// v_j^H and geqr2 applies H_j^H, so R's signs are LAPACK's.
#define LS 256  // the largest work-group size the host launches these with (a power of 2)

// Sum of v over the work group (all items get it); red is __local SR[LS].
SR group_sum(__local SR* red, SR v) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = (int)get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const SR r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// LAPACK geqrf's result, in place on a (m, n): R on and above the diagonal, the Householder
// vectors v_j (v_j[j] = 1 implied) below it, tau (min(m, n)).
__kernel void geqrf(__global char* ab, ulong aoff, __global char* tb, ulong toff, long m,
                    long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  const long k = min(m, n);
  __global E* a = (__global E*)(ab + aoff) + g * m * n;
  __global E* tau = (__global E*)(tb + toff) + g * k;
  __local SR red[LS];
  __local S tau_j;
  for (long j = 0; j < k; ++j) {
    SR part = 0;
    for (long i = j + 1 + lid; i < m; i += ls) {
      const S x = S_LD(a, i * n + j);
      part += S_ABS2(x);
    }
    const SR xnorm2 = group_sum(red, part);
    const S alpha = S_LD(a, j * n + j);
    // NaN reflects (and spreads), as LAPACK's larfg
    const int reflect = xnorm2 != 0 || S_HAS_IM(alpha);
    const SR beta =
        reflect ? -copysign(sqrt(S_ABS2(alpha) + xnorm2), S_RE(alpha)) : S_RE(alpha);
    const S scale = reflect ? S_DIV(S_REAL(1), alpha - S_REAL(beta)) : S_REAL(0);
    if (lid == 0) {
      const S t =
          reflect ? S_CMPLX((beta - S_RE(alpha)) / beta, -S_IM(alpha) / beta) : S_REAL(0);
      tau_j = t;
      S_ST(tau, j, t);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // alpha read everywhere
    if (reflect) {
      if (lid == 0) S_ST(a, j * n + j, S_REAL(beta));
      for (long i = j + 1 + lid; i < m; i += ls)
        S_ST(a, i * n + j, S_MUL(S_LD(a, i * n + j), scale));
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const S tj = S_CONJ(tau_j);  // H_j^H = I - conj(tau_j) v v^H
    if (S_NONZERO(tj))
      for (long c = j + 1 + lid; c < n; c += ls) {
        S w = S_LD(a, j * n + c);
        for (long i = j + 1; i < m; ++i)
          w += S_MUL(S_CONJ(S_LD(a, i * n + j)), S_LD(a, i * n + c));
        w = S_MUL(tj, w);
        S_ST(a, j * n + c, S_LD(a, j * n + c) - w);
        for (long i = j + 1; i < m; ++i)
          S_ST(a, i * n + c, S_LD(a, i * n + c) - S_MUL(w, S_LD(a, i * n + j)));
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// C = H_0 ... H_{k-1} C (forward = 0: Q C) or H_{k-1}^H ... H_0^H C (forward = 1: Q^H C) for
// the reflectors of v (m, nv) row-major (column j below the diagonal, v_j[j] = 1) and tau (k);
// C (m, p) row-major, one work item per (column c of C, matrix g).
__kernel void apply_reflectors(__global char* vb, ulong voff, __global char* tb, ulong toff,
                               __global char* cb, ulong coff, long m, long nv, long k, long p,
                               int forward) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= p) return;
  __global const E* v = (__global const E*)(vb + voff) + g * m * nv;
  __global const E* tau = (__global const E*)(tb + toff) + g * k;
  __global E* x = (__global E*)(cb + coff) + g * m * p;
  for (long s = 0; s < k; ++s) {
    const long j = forward ? s : k - 1 - s;
    const S t = forward ? S_CONJ(S_LD(tau, j)) : S_LD(tau, j);
    if (!S_NONZERO(t)) continue;
    S w = S_LD(x, j * p + c);
    for (long i = j + 1; i < m; ++i) w += S_MUL(S_CONJ(S_LD(v, i * nv + j)), S_LD(x, i * p + c));
    w = S_MUL(t, w);
    S_ST(x, j * p + c, S_LD(x, j * p + c) - w);
    for (long i = j + 1; i < m; ++i)
      S_ST(x, i * p + c, S_LD(x, i * p + c) - S_MUL(w, S_LD(v, i * nv + j)));
  }
}

// The round-robin pairing of the parallel Jacobi orderings: position pos of round `round` among
// nn (even) indices.
long rr_index(long pos, long round, long nn) {
  return pos == 0 ? 0 : 1 + (pos - 1 + round) % (nn - 1);
}

// The Jacobi kernels' pairs: a pair's element g (eigh: a_pq; SVD: x^H y of the two rows) is
// |g| e^(i phi); complex kernels turn row/column q by the phase so that the element becomes the
// real |g|, then rotate as in the real case. Real kernels rotate on the signed g with no turn.
#ifdef OCL_COMPLEX
#define PAIR_MAG(g) hypot((g).x, (g).y)
#define PAIR_PHASE(g, mag) ((CT)((g).x / (mag), (g).y / (mag)))  // e^(i phi)
#define CS_PER_PAIR 6  // c, s, the new a_pp and a_qq, cos phi, sin phi
#define CS_PHASE_STORE(cs, ph) ((cs)[4] = (ph).x, (cs)[5] = (ph).y)
#define CS_PHASE(cs) ((CT)((cs)[4], (cs)[5]))
#else
#define PAIR_MAG(g) (g)
#define PAIR_PHASE(g, mag) ((ACC)1)
#define CS_PER_PAIR 4  // c, s, the new a_pp and a_qq
#define CS_PHASE_STORE(cs, ph) ((void)0)
#define CS_PHASE(cs) ((ACC)1)
#endif

// Jacobi on the symmetric (Hermitian) a (n, n, ACC or CT, both triangles filled, a real
// diagonal), in place: a becomes diagonal (the eigenvalues, unsorted), v (n, n) the eigenvectors
// in its columns when compute_v. Each pair's transform is J = D R, D turning column q by
// e^(-i phi) (identity for real), R the rotation; a <- J^H a J, v <- v J. Parallel (round-robin,
// rr_index) ordering: each round rotates n / 2 disjoint pairs at once (in a row phase and a
// column phase), cs (CS_PER_PAIR reals per pair) holding their c, s, new diagonal (and phase). A
// rotation is skipped when |a_pq| is negligible against its diagonal; the sweeps stop when one
// rotates nothing (or after max_sweeps).
__kernel void jacobi_eigh(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                          __global char* sb, ulong soff, long n, int compute_v, int max_sweeps,
                          SR eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global S* a = (__global S*)(ab + aoff) + g * n * n;
  __global S* v = (__global S*)(vb + voff) + g * n * n;
  const long nn = n + (n & 1), npairs = nn / 2;
  __global SR* cs = (__global SR*)(sb + soff) + g * CS_PER_PAIR * npairs;
  __local int rotated;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? S_REAL(1) : S_REAL(0);
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long round = 0; round < nn - 1; ++round) {
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        __global SR* cp = cs + CS_PER_PAIR * pr;
        SR c = 1, sn = 0;
        S ph = S_REAL(1);
        if (q < n) {
          const S apq = a[p * n + q];
          const SR gam = PAIR_MAG(apq), app = S_RE(a[p * n + p]), aqq = S_RE(a[q * n + q]);
          if (gam != 0 && fabs(gam) > eps * (fabs(app) + fabs(aqq)) * (SR)0.5) {
            const SR theta = (aqq - app) / (2 * gam);
            const SR t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
            c = 1 / sqrt(t * t + 1);
            sn = t * c;
            ph = PAIR_PHASE(apq, gam);
            cp[2] = app - t * gam;  // the exact new diagonal, set after the phases
            cp[3] = aqq + t * gam;
            atomic_or(&rotated, 1);
          }
        }
        cp[0] = c;
        cp[1] = sn;
        CS_PHASE_STORE(cp, ph);
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // rows p, q of every pair: a <- J^H a (row q turned by e^(i phi), then rotated; one item
      // per pair, whole rows)
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        __global const SR* cp = cs + CS_PER_PAIR * pr;
        const SR sn = cp[1];
        if (q >= n || sn == 0) continue;
        const SR c = cp[0];
        const S ph = CS_PHASE(cp);
        for (long col = 0; col < n; ++col) {
          const S x = a[p * n + col], y = S_MUL(ph, a[q * n + col]);
          a[p * n + col] = c * x - sn * y;
          a[q * n + col] = sn * x + c * y;
        }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // columns p, q: a <- a J, v <- v J (column q turned by e^(-i phi), then rotated)
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        __global const SR* cp = cs + CS_PER_PAIR * pr;
        const SR sn = cp[1];
        if (q >= n || sn == 0) continue;
        const SR c = cp[0];
        const S phc = S_CONJ(CS_PHASE(cp));
        for (long r = 0; r < n; ++r) {
          const S x = a[r * n + p], y = S_MUL(phc, a[r * n + q]);
          a[r * n + p] = c * x - sn * y;
          a[r * n + q] = sn * x + c * y;
        }
        if (compute_v)
          for (long r = 0; r < n; ++r) {
            const S vx = v[r * n + p], vy = S_MUL(phc, v[r * n + q]);
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
        __global const SR* cp = cs + CS_PER_PAIR * pr;
        if (q >= n || cp[1] == 0) continue;
        a[p * n + p] = S_REAL(cp[2]);
        a[q * n + q] = S_REAL(cp[3]);
        a[p * n + q] = S_REAL(0);
        a[q * n + p] = S_REAL(0);
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int again = rotated;  // every item reads it before item 0 resets it
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!again) break;
  }
}

// One-sided (Hestenes) Jacobi on the rows of u (n, m, ACC or CT): the rows (A's columns,
// m >= n) are rotated until pairwise orthogonal; v (n, n) accumulates the rotations in its rows
// (V^T; complex: rows the columns of V) when compute_v. Afterwards row j of u is sigma_j times
// the j-th left singular vector. A pair (x, y) with x^H y = |g| e^(i phi) has y turned by
// e^(-i phi) first (complex), so that the product is real. Parallel (round-robin, rr_index)
// ordering: a sweep is n - 1 rounds (n rounded up to even) of n / 2 disjoint pairs, one work
// item per pair, so a sweep costs n - 1 barriers, not one per pair.
__kernel void jacobi_svd(__global char* ub, ulong uoff, __global char* vb, ulong voff, long n,
                         long m, int compute_v, int max_sweeps, SR eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global S* u = (__global S*)(ub + uoff) + g * n * m;
  __global S* v = (__global S*)(vb + voff) + g * n * n;
  __local int rotated;
  const long nn = n + (n & 1), npairs = nn / 2;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? S_REAL(1) : S_REAL(0);
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long round = 0; round < nn - 1; ++round) {
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        if (q >= n) continue;  // the padding index of an odd n
        __global S* up = u + p * m;
        __global S* uq = u + q * m;
        SR al = 0, be = 0;
        S ga = S_REAL(0);
        for (long i = 0; i < m; ++i) {
          const S x = up[i], y = uq[i];
          al += S_ABS2(x);
          be += S_ABS2(y);
          ga += S_MUL(S_CONJ(x), y);
        }
        const SR gabs = PAIR_MAG(ga);
        if (gabs != 0 && fabs(gabs) > eps * sqrt(al * be)) {
          const SR zeta = (be - al) / (2 * gabs);
          const SR t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(zeta * zeta + 1));
          const SR c = 1 / sqrt(t * t + 1), s = t * c;
          const S turn = S_CONJ(PAIR_PHASE(ga, gabs));  // e^(-i phi)
          for (long i = 0; i < m; ++i) {
            const S x = up[i], y = S_MUL(turn, uq[i]);
            up[i] = c * x - s * y;
            uq[i] = s * x + c * y;
          }
          if (compute_v) {
            __global S* vp = v + p * n;
            __global S* vq = v + q * n;
            for (long i = 0; i < n; ++i) {
              const S x = vp[i], y = S_MUL(turn, vq[i]);
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
