// The large-matrix SVD (aten/linalg/linalg_eigh_svd.cpp), real float32/float64 (T == ACC), for a
// tall a (batch, m, ldn) row major (m >= n, rows padded to RW-vectors with zeros): Golub-Kahan
// bidiagonalisation by Householder reflectors from the left (columns) and the right (rows), each
// applied by one kernel whose items own whole columns (left) or rows (right), so that a
// reflector's dot products and its update need no second pass; then the Golub-Kahan implicit
// shifted QR on the upper bidiagonal (EISPACK svd / LINPACK's dsvdc structure) on one work item,
// which records its left and right plane rotations, and their application to U and V in
// parallel (rotate_pairs, one work item per RW rows).
#define TLS 64  // the single-group kernels' work-group size
#define RW 8
#define VCAT(a, b) a##b
#define VTYPE(a, b) VCAT(a, b)
typedef VTYPE(ACC, RW) ACCV;
typedef VTYPE(ACC, 4) ACC4;
#define VLOAD(off, p) VTYPE(vload, RW)(off, p)
#define VSTORE(v, off, p) VTYPE(vstore, RW)(v, off, p)

ACC vsum(ACCV v) {
  const ACC4 h = v.lo + v.hi;
  return h.x + h.y + h.z + h.w;
}

ACC brd_sum(__local ACC* red, ACC v) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = TLS / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// LAPACK dlarfg's reflector for (alpha, x) with |x|^2 = xnorm2: (beta, tau, scale of x).
void brd_larfg(ACC alpha, ACC xnorm2, ACC* beta, ACC* tau, ACC* scale) {
  *beta = alpha;
  *tau = 0;
  *scale = 0;
  if (xnorm2 != 0) {
    *beta = -copysign(hypot(alpha, sqrt(xnorm2)), alpha);
    *tau = (*beta - alpha) / *beta;
    *scale = 1 / (alpha - *beta);
  }
}

// The left reflector of column i (rows i..m-1; one work group per matrix): d[i] = beta, the
// vector (u[i] = 1 implied) packed below the diagonal as geqrf stores it, tau_l[i], and u in
// ub (batch, m; zero outside i..m-1) for brd_apply_left.
__kernel void brd_left(__global char* ab, ulong aoff, __global char* ub, ulong uoff,
                       __global char* db, ulong doff, __global char* tb, ulong toff, long m,
                       long n, long ldn, long i) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global ACC* a = (__global ACC*)(ab + aoff) + g * m * ldn;
  __global ACC* u = (__global ACC*)(ub + uoff) + g * m;
  __local ACC red[TLS];
  ACC part = 0;
  for (long r0 = i + 1; r0 < m; r0 += TLS) {
    const long r = r0 + lid;
    if (r < m) part += a[r * ldn + i] * a[r * ldn + i];
  }
  const ACC xnorm2 = brd_sum(red, part);
  ACC beta, t, scale;
  brd_larfg(a[i * ldn + i], xnorm2, &beta, &t, &scale);
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long r0 = 0; r0 < m; r0 += TLS) {
    const long r = r0 + lid;
    if (r < m) {
      const ACC v = r < i ? 0 : r == i ? 1 : a[r * ldn + i] * scale;
      if (r > i) a[r * ldn + i] = v;
      u[r] = v;
    }
  }
  if (lid == 0) {
    a[i * ldn + i] = beta;
    ((__global ACC*)(db + doff))[g * n + i] = beta;
    ((__global ACC*)(tb + toff))[g * n + i] = t;
  }
}

// H_i = I - tau u u^T applied to columns i + 1.. of a from the left; one work item per (RW
// columns, matrix): w = u^T a[:, cols] then a[:, cols] -= tau u w (lanes of other columns get
// w = 0 and keep their values exactly).
__kernel void brd_apply_left(__global char* ab, ulong aoff, __global char* ub, ulong uoff,
                             __global char* tb, ulong toff, long m, long n, long ldn, long i) {
  const long c0 = get_global_id(0) * RW, g = get_global_id(1);
  if (c0 >= ldn || c0 + RW <= i + 1) return;
  __global ACC* a = (__global ACC*)(ab + aoff) + g * m * ldn + c0;
  __global const ACC* u = (__global const ACC*)(ub + uoff) + g * m;
  const ACC t = ((__global const ACC*)(tb + toff))[g * n + i];
  if (t == 0) return;
  ACCV w = 0;
  for (long r = i; r < m; ++r) w += u[r] * VLOAD(0, a + r * ldn);
  ACC wl[RW];
  VSTORE(t * w, 0, wl);
  for (int q = 0; q < RW; ++q)
    if (c0 + q <= i || c0 + q >= n) wl[q] = 0;
  w = VLOAD(0, wl);
  for (long r = i; r < m; ++r) VSTORE(VLOAD(0, a + r * ldn) - u[r] * w, 0, a + r * ldn);
}

// The right reflector of row i (columns i + 1..n-1; one work group per matrix): e[i] = beta in
// a[i][i+1], the vector (v[i+1] = 1 implied) packed in a[i][i+2..], tau_r[i], and v in vb
// (batch, ldn; zero outside i + 1..n-1) for brd_apply_right.
__kernel void brd_right(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                        __global char* eb, ulong eoff, __global char* tb, ulong toff, long m,
                        long n, long ldn, long i) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global ACC* ai = (__global ACC*)(ab + aoff) + g * m * ldn + i * ldn;
  __global ACC* v = (__global ACC*)(vb + voff) + g * ldn;
  __local ACC red[TLS];
  ACC part = 0;
  for (long c0 = i + 2; c0 < n; c0 += TLS) {
    const long c = c0 + lid;
    if (c < n) part += ai[c] * ai[c];
  }
  const ACC xnorm2 = brd_sum(red, part);
  ACC beta, t, scale;
  brd_larfg(ai[i + 1], xnorm2, &beta, &t, &scale);
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long c0 = 0; c0 < ldn; c0 += TLS) {
    const long c = c0 + lid;
    if (c < ldn) {
      const ACC x = c <= i || c >= n ? 0 : c == i + 1 ? 1 : ai[c] * scale;
      if (c > i + 1 && c < n) ai[c] = x;
      v[c] = x;
    }
  }
  if (lid == 0) {
    ai[i + 1] = beta;
    ((__global ACC*)(eb + eoff))[g * n + i] = beta;
    ((__global ACC*)(tb + toff))[g * n + i] = t;
  }
}

// G_i = I - tau v v^T applied to rows i + 1.. of a from the right; one work item per (row,
// matrix): z = a[r, :] v then a[r, :] -= tau z v^T (v is zero outside its columns).
__kernel void brd_apply_right(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                              __global char* tb, ulong toff, long m, long n, long ldn, long i) {
  const long r = get_global_id(0), g = get_global_id(1);
  if (r >= m || r <= i) return;
  __global ACC* ar = (__global ACC*)(ab + aoff) + g * m * ldn + r * ldn;
  __global const ACC* v = (__global const ACC*)(vb + voff) + g * ldn;
  const ACC t = ((__global const ACC*)(tb + toff))[g * n + i];
  if (t == 0) return;
  const long c1 = (i + 1) / RW * RW;
  ACCV z = 0;
  for (long c0 = c1; c0 < ldn; c0 += RW) z += VLOAD(0, ar + c0) * VLOAD(0, v + c0);
  const ACC tz = t * vsum(z);
  for (long c0 = c1; c0 < ldn; c0 += RW)
    VSTORE(VLOAD(0, ar + c0) - tz * VLOAD(0, v + c0), 0, ar + c0);
}

// Golub-Kahan implicit shifted QR on the upper bidiagonal (d (n), sup (n): sup[i] couples i - 1
// and i, sup[0] = 0), one work item per matrix, in place: |d| becomes the singular values
// (unsorted; a negative d[k] means V's column k is to be negated). With record, the rotations on
// U's columns and V's columns are appended to their streams (c, s: column p <- c x_p + s x_q,
// column q <- c x_q - s x_p) in runs (p, 2 count + kind): a chain (kind 0: (p, p + 1), (p + 1,
// p + 2), ...; the QR sweep's) or a fan (kind 1: (p, p + 1), (p, p + 2), ...; the cancellation's),
// for rotate_pairs; when a step might not fit in the cap rotations left, the kernel stops and
// keeps its place. state (8 ints per matrix): [0] the k to resume at (the host sets n - 1), [1]
// its iteration count, [2] done, [3] U and [4] V runs of this call, [5] info (as LAPACK's: how
// many did not converge).
__kernel void bidiag_qr(__global char* db, ulong doff, __global char* eb, ulong eoff,
                        __global char* urb, ulong uroff, __global char* uib, ulong uioff,
                        __global char* vrb, ulong vroff, __global char* vib, ulong vioff,
                        __global char* sb, ulong soff, long n, long cap, int record,
                        int max_iter, ACC eps, long batch) {
  const long g = get_global_id(0);
  if (g >= batch) return;
  __global ACC* w = (__global ACC*)(db + doff) + g * n;
  __global ACC* rv1 = (__global ACC*)(eb + eoff) + g * n;
  __global ACC* urot = (__global ACC*)(urb + uroff) + g * 2 * cap;
  __global int* uidx = (__global int*)(uib + uioff) + g * 2 * cap;
  __global ACC* vrot = (__global ACC*)(vrb + vroff) + g * 2 * cap;
  __global int* vidx = (__global int*)(vib + vioff) + g * 2 * cap;
  __global int* st = (__global int*)(sb + soff) + g * 8;
  st[3] = 0;
  st[4] = 0;
  if (st[2]) return;
  long k = st[0];
  int its = st[1];
  long nu = 0, nv = 0, nur = 0, nvr = 0;  // rotations and runs recorded
  ACC anorm = 0;
  for (long i = 0; i < n; ++i) anorm = fmax(anorm, fabs(w[i]) + fabs(rv1[i]));
  const ACC tol = eps * anorm;
  rv1[0] = 0;
  while (k >= 0) {
    int flag = 1;
    long l = k;
    for (; l >= 0; --l) {  // l = 0 always stops here: rv1[0] = 0
      if (fabs(rv1[l]) <= tol) {
        flag = 0;
        break;
      }
      if (fabs(w[l - 1]) <= tol) break;
    }
    if (record && (nu + 2 * (k - l + 1) > cap || nv + (k - l + 1) > cap)) {
      st[0] = (int)k;
      st[1] = its;
      st[3] = (int)nur;
      st[4] = (int)nvr;
      return;
    }
    if (flag) {  // w[l - 1] ~ 0: chase rv1[l] out by rotations from the left
      const long nm = l - 1;
      ACC c = 0, s = 1;
      int cnt = 0;
      for (long i = l; i <= k; ++i) {
        const ACC f = s * rv1[i];
        rv1[i] = c * rv1[i];
        if (fabs(f) <= tol) break;
        const ACC gg = w[i];
        const ACC h = sqrt(f * f + gg * gg);
        w[i] = h;
        c = gg / h;
        s = -f / h;
        if (record) {
          urot[2 * (nu + cnt)] = c;
          urot[2 * (nu + cnt) + 1] = s;
          ++cnt;
        }
      }
      if (cnt > 0) {  // a fan: (nm, l), (nm, l + 1), ...
        uidx[2 * nur] = (int)nm;
        uidx[2 * nur + 1] = 2 * cnt + 1;
        ++nur;
        nu += cnt;
      }
    }
    const ACC z0 = w[k];
    if (l == k) {
      --k;
      its = 0;
      continue;
    }
    if (its++ >= max_iter) {
      st[5] += 1;
      --k;
      its = 0;
      continue;
    }
    // the shift from the trailing 2x2 of B^T B, then one implicit QR sweep from l to k
    ACC x = w[l], y = w[k - 1], gg = rv1[k - 1], h = rv1[k], z = z0;
    ACC f = ((y - z) * (y + z) + (gg - h) * (gg + h)) / (2 * h * y);
    gg = sqrt(f * f + 1);
    f = ((x - z) * (x + z) + h * ((y / (f + copysign(gg, f))) - h)) / x;
    ACC c = 1, s = 1;
    for (long j = l; j <= k - 1; ++j) {
      const long i = j + 1;
      gg = rv1[i];
      y = w[i];
      h = s * gg;
      gg = c * gg;
      z = sqrt(f * f + h * h);
      rv1[j] = z;
      c = f / z;
      s = h / z;
      f = x * c + gg * s;
      gg = gg * c - x * s;
      h = y * s;
      y *= c;
      if (record) {
        vrot[2 * (nv + j - l)] = c;
        vrot[2 * (nv + j - l) + 1] = s;
      }
      z = sqrt(f * f + h * h);
      w[j] = z;
      if (z != 0) {
        c = f / z;
        s = h / z;
      }
      f = c * gg + s * y;
      x = c * y - s * gg;
      if (record) {
        urot[2 * (nu + j - l)] = c;
        urot[2 * (nu + j - l) + 1] = s;
      }
    }
    if (record) {  // two chains: (l, l + 1), (l + 1, l + 2), ...
      uidx[2 * nur] = (int)l;
      uidx[2 * nur + 1] = 2 * (int)(k - l);
      vidx[2 * nvr] = (int)l;
      vidx[2 * nvr + 1] = 2 * (int)(k - l);
      ++nur;
      ++nvr;
      nu += k - l;
      nv += k - l;
    }
    rv1[l] = 0;
    rv1[k] = f;
    w[k] = x;
  }
  st[0] = -1;
  st[2] = 1;
  st[3] = (int)nur;
  st[4] = (int)nvr;
}

// The runs of one stream (their count at state[g * 8 + which]) applied in order to the columns of
// X held transposed: xt (batch, p, ldx), xt[col][row], ldx a multiple of RW; one work item per
// (RW rows of X, matrix). The column a run keeps coming back to (a chain's next p, a fan's p)
// stays in a register.
__kernel void rotate_pairs(__global char* xb, ulong xoff, __global char* rb, ulong roff,
                           __global char* ib, ulong ioff, __global char* sb, ulong soff, long p,
                           long ldx, long cap, int which) {
  const long kv = get_global_id(0), g = get_global_id(1);
  if (kv * RW >= ldx) return;
  __global ACC* xt = (__global ACC*)(xb + xoff) + g * p * ldx + kv * RW;
  __global const ACC* rot = (__global const ACC*)(rb + roff) + g * 2 * cap;
  __global const int* idx = (__global const int*)(ib + ioff) + g * 2 * cap;
  const int runs = ((__global const int*)(sb + soff))[g * 8 + which];
  const long lv = ldx / RW;
  long pos = 0;
  for (int r = 0; r < runs; ++r) {
    const long pc = idx[2 * r], cnt = idx[2 * r + 1] >> 1;
    const int fan = idx[2 * r + 1] & 1;
    ACCV x = VLOAD(pc * lv, xt);
    for (long t = 0; t < cnt; ++t) {
      const ACC c = rot[2 * (pos + t)], s = rot[2 * (pos + t) + 1];
      const long qc = pc + 1 + t;
      const ACCV y = VLOAD(qc * lv, xt);
      const ACCV xn = c * x + s * y, yn = c * y - s * x;
      if (fan) {
        VSTORE(yn, qc * lv, xt);
        x = xn;
      } else {
        VSTORE(xn, (qc - 1) * lv, xt);
        x = yn;
      }
    }
    VSTORE(x, (fan ? pc : pc + cnt) * lv, xt);
    pos += cnt;
  }
}
