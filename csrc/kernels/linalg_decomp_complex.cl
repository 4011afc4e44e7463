// The complex forms of linalg_decomp.cl's geqrf, apply_reflectors, jacobi_svd and jacobi_eigh
// (same arguments, same launches), over CT (float2 / double2) and its real type CR with
// kernels/complex.cl's helpers, which the host places before this text. QR follows LAPACK's
// zgeqr2 / zlarfg conventions: beta real (-sign(re alpha) |(alpha, x)|), tau = ((beta - re alpha)
// / beta, -im alpha / beta), no reflection when x = 0 and alpha is real; H_j = I - tau_j v_j v_j^H,
// and zgeqr2 applies H_j^H.
#define LS 256

CR group_sum_r(__local CR* red, CR v) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = (int)get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const CR r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

__kernel void geqrf(__global char* ab, ulong aoff, __global char* tb, ulong toff, long m,
                    long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  const long k = min(m, n);
  __global CT* a = (__global CT*)(ab + aoff) + g * m * n;
  __global CT* tau = (__global CT*)(tb + toff) + g * k;
  __local CR red[LS];
  __local CT tau_j;
  for (long j = 0; j < k; ++j) {
    CR part = 0;
    for (long i = j + 1 + lid; i < m; i += ls) {
      const CT x = a[i * n + j];
      part += x.x * x.x + x.y * x.y;
    }
    const CR xnorm2 = group_sum_r(red, part);
    const CT alpha = a[j * n + j];
    const int reflect = xnorm2 != 0 || alpha.y != 0;
    const CR beta =
        reflect ? -copysign(sqrt(alpha.x * alpha.x + alpha.y * alpha.y + xnorm2), alpha.x) : 0;
    const CT scale = reflect ? ocl_cdiv((CT)(1, 0), alpha - (CT)(beta, 0)) : (CT)(0, 0);
    if (lid == 0) {
      const CT t = reflect ? (CT)((beta - alpha.x) / beta, -alpha.y / beta) : (CT)(0, 0);
      tau_j = t;
      tau[j] = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // alpha read everywhere
    if (reflect) {
      if (lid == 0) a[j * n + j] = (CT)(beta, 0);
      for (long i = j + 1 + lid; i < m; i += ls) a[i * n + j] = ocl_cmul(a[i * n + j], scale);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const CT tj = ocl_cconj(tau_j);  // H_j^H = I - conj(tau_j) v v^H
    if (tj.x != 0 || tj.y != 0)
      for (long c = j + 1 + lid; c < n; c += ls) {
        CT w = a[j * n + c];
        for (long i = j + 1; i < m; ++i) w += ocl_cmul(ocl_cconj(a[i * n + j]), a[i * n + c]);
        w = ocl_cmul(tj, w);
        a[j * n + c] -= w;
        for (long i = j + 1; i < m; ++i) a[i * n + c] -= ocl_cmul(w, a[i * n + j]);
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// C = H_0 ... H_{k-1} C (forward = 0: Q C) or H_{k-1}^H ... H_0^H C (forward = 1: Q^H C).
__kernel void apply_reflectors(__global char* vb, ulong voff, __global char* tb, ulong toff,
                               __global char* cb, ulong coff, long m, long nv, long k, long p,
                               int forward) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= p) return;
  __global const CT* v = (__global const CT*)(vb + voff) + g * m * nv;
  __global const CT* tau = (__global const CT*)(tb + toff) + g * k;
  __global CT* x = (__global CT*)(cb + coff) + g * m * p;
  for (long s = 0; s < k; ++s) {
    const long j = forward ? s : k - 1 - s;
    const CT t = forward ? ocl_cconj(tau[j]) : tau[j];
    if (t.x == 0 && t.y == 0) continue;
    CT w = x[j * p + c];
    for (long i = j + 1; i < m; ++i) w += ocl_cmul(ocl_cconj(v[i * nv + j]), x[i * p + c]);
    w = ocl_cmul(t, w);
    x[j * p + c] -= w;
    for (long i = j + 1; i < m; ++i) x[i * p + c] -= ocl_cmul(w, v[i * nv + j]);
  }
}

long rr_index(long pos, long round, long nn) {
  return pos == 0 ? 0 : 1 + (pos - 1 + round) % (nn - 1);
}

// linalg_decomp.cl's one-sided Jacobi for complex rows: for a pair (x, y) with
// x^H y = |g| e^(i phi), y is turned by e^(-i phi) (so the product is real) and the real kernel's
// rotation follows; v's rows get the same combinations (v = V^T, rows the columns of V).
__kernel void jacobi_svd(__global char* ub, ulong uoff, __global char* vb, ulong voff, long n,
                         long m, int compute_v, int max_sweeps, CR eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global CT* u = (__global CT*)(ub + uoff) + g * n * m;
  __global CT* v = (__global CT*)(vb + voff) + g * n * n;
  __local int rotated;
  const long nn = n + (n & 1), npairs = nn / 2;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? (CT)(1, 0) : (CT)(0, 0);
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long round = 0; round < nn - 1; ++round) {
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        if (q >= n) continue;
        __global CT* up = u + p * m;
        __global CT* uq = u + q * m;
        CR al = 0, be = 0;
        CT ga = (CT)(0, 0);
        for (long i = 0; i < m; ++i) {
          const CT x = up[i], y = uq[i];
          al += x.x * x.x + x.y * x.y;
          be += y.x * y.x + y.y * y.y;
          ga += ocl_cmul(ocl_cconj(x), y);
        }
        const CR gabs = hypot(ga.x, ga.y);
        if (gabs != 0 && gabs > eps * sqrt(al * be)) {
          const CR zeta = (be - al) / (2 * gabs);
          const CR t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(zeta * zeta + 1));
          const CR c = 1 / sqrt(t * t + 1), s = t * c;
          const CT turn = (CT)(ga.x / gabs, -ga.y / gabs);  // e^(-i phi)
          for (long i = 0; i < m; ++i) {
            const CT x = up[i], y = ocl_cmul(turn, uq[i]);
            up[i] = c * x - s * y;
            uq[i] = s * x + c * y;
          }
          if (compute_v) {
            __global CT* vp = v + p * n;
            __global CT* vq = v + q * n;
            for (long i = 0; i < n; ++i) {
              const CT x = vp[i], y = ocl_cmul(turn, vq[i]);
              vp[i] = c * x - s * y;
              vq[i] = s * x + c * y;
            }
          }
          atomic_or(&rotated, 1);
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    const int again = rotated;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!again) break;
  }
}

// linalg_decomp.cl's two-sided Jacobi for a Hermitian a (both triangles filled, real diagonal):
// each pair's transform is J = D R, D turning column q by e^(-i phi) for a_pq = |a_pq| e^(i phi)
// (so the pair's element is real), R the real kernel's rotation; a <- J^H a J, v <- v J. cs
// holds 6 reals per pair: c, s, the new a_pp and a_qq, cos phi, sin phi.
__kernel void jacobi_eigh(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                          __global char* sb, ulong soff, long n, int compute_v, int max_sweeps,
                          CR eps) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long ls = get_local_size(0);
  __global CT* a = (__global CT*)(ab + aoff) + g * n * n;
  __global CT* v = (__global CT*)(vb + voff) + g * n * n;
  const long nn = n + (n & 1), npairs = nn / 2;
  __global CR* cs = (__global CR*)(sb + soff) + g * 6 * npairs;
  __local int rotated;
  if (compute_v)
    for (long e = lid; e < n * n; e += ls) v[e] = e / n == e % n ? (CT)(1, 0) : (CT)(0, 0);
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    if (lid == 0) rotated = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (long round = 0; round < nn - 1; ++round) {
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        CR c = 1, sn = 0, ph_c = 1, ph_s = 0;
        if (q < n) {
          const CT apq = a[p * n + q];
          const CR gam = hypot(apq.x, apq.y), app = a[p * n + p].x, aqq = a[q * n + q].x;
          if (gam != 0 && gam > eps * (fabs(app) + fabs(aqq)) * (CR)0.5) {
            const CR theta = (aqq - app) / (2 * gam);
            const CR t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
            c = 1 / sqrt(t * t + 1);
            sn = t * c;
            ph_c = apq.x / gam;
            ph_s = apq.y / gam;
            cs[6 * pr + 2] = app - t * gam;
            cs[6 * pr + 3] = aqq + t * gam;
            atomic_or(&rotated, 1);
          }
        }
        cs[6 * pr] = c;
        cs[6 * pr + 1] = sn;
        cs[6 * pr + 4] = ph_c;
        cs[6 * pr + 5] = ph_s;
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // rows p, q: a <- J^H a (row q turned by e^(i phi), then rotated)
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        const CR sn = cs[6 * pr + 1];
        if (q >= n || sn == 0) continue;
        const CR c = cs[6 * pr];
        const CT ph = (CT)(cs[6 * pr + 4], cs[6 * pr + 5]);
        for (long col = 0; col < n; ++col) {
          const CT x = a[p * n + col], y = ocl_cmul(ph, a[q * n + col]);
          a[p * n + col] = c * x - sn * y;
          a[q * n + col] = sn * x + c * y;
        }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      // columns p, q: a <- a J, v <- v J (column q turned by e^(-i phi), then rotated)
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        const CR sn = cs[6 * pr + 1];
        if (q >= n || sn == 0) continue;
        const CR c = cs[6 * pr];
        const CT phc = (CT)(cs[6 * pr + 4], -cs[6 * pr + 5]);
        for (long r = 0; r < n; ++r) {
          const CT x = a[r * n + p], y = ocl_cmul(phc, a[r * n + q]);
          a[r * n + p] = c * x - sn * y;
          a[r * n + q] = sn * x + c * y;
        }
        if (compute_v)
          for (long r = 0; r < n; ++r) {
            const CT vx = v[r * n + p], vy = ocl_cmul(phc, v[r * n + q]);
            v[r * n + p] = c * vx - sn * vy;
            v[r * n + q] = sn * vx + c * vy;
          }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      for (long pr = lid; pr < npairs; pr += ls) {
        const long i0 = rr_index(pr, round, nn), i1 = rr_index(nn - 1 - pr, round, nn);
        const long p = min(i0, i1), q = max(i0, i1);
        if (q >= n || cs[6 * pr + 1] == 0) continue;
        a[p * n + p] = (CT)(cs[6 * pr + 2], 0);
        a[q * n + q] = (CT)(cs[6 * pr + 3], 0);
        a[p * n + q] = (CT)(0, 0);
        a[q * n + p] = (CT)(0, 0);
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int again = rotated;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!again) break;
  }
}
