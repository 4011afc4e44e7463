// The large-matrix SVD (aten/linalg/linalg_svd.cpp), real float32/float64 (T == ACC), for a
// tall a (batch, m, ldn) row major (m >= n, rows padded to RW-vectors with zeros): Golub-Kahan
// bidiagonalisation by Householder reflectors from the left (columns) and the right (rows) in
// panels (LAPACK dlabrd), the trailing update being two GEMMs; then the Golub-Kahan implicit
// shifted QR on the upper bidiagonal (EISPACK svd / LINPACK's dsvdc structure) on one work item,
// which records its left and right plane rotations, and their application to U and V in
// parallel (rotate_pairs, one work item per RW rows).
#define TLS 64  // the single-group kernels' work-group size
#ifndef OCL_COMPLEX  // the real program: everything but the complex bidiagonalisation
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

// Blocked bidiagonalisation (LAPACK dlabrd's structure): within a panel the matrix is A - U Y^T -
// X V^T, A as the panel started, U, V the panel's left and right reflectors and X, Y their
// partners, all held transposed as vectors: ut, xt (batch, nb, m), yt, vt (batch, nb, ldn). The
// host applies the panel to the trailing matrix by two GEMMs. Four kernels per column i = k + j:
// brd_col (column i up to date, its left reflector, the dots brd_y needs), brd_y (y_j), brd_row
// (row i up to date, its right reflector, the dots brd_x needs), brd_x (x_j).
#define BRD_PTRS                                                \
  const long g = get_group_id(0);                               \
  __global ACC* a = (__global ACC*)(ab + aoff) + g * m * ldn;   \
  __global ACC* ut = (__global ACC*)(ub + uoff) + g * nb * m;   \
  __global ACC* xt = (__global ACC*)(xb + xoff) + g * nb * m;   \
  __global ACC* yt = (__global ACC*)(yb + yoff) + g * nb * ldn; \
  __global ACC* vt = (__global ACC*)(vb + voff) + g * nb * ldn; \
  __global ACC* dots = (__global ACC*)(pb + poff) + g * 2 * nb;

#define BRD_ARGS                                                                                   \
  __global char *ab, ulong aoff, __global char *ub, ulong uoff, __global char *xb, ulong xoff,     \
      __global char *yb, ulong yoff, __global char *vb, ulong voff, __global char *pb, ulong poff, \
      __global char *db, ulong doff, __global char *tb, ulong toff, long m, long n, long ldn,      \
      long nb, long i, long j

// Column i: a[r][i] -= U[r, :j] Y[i, :j]^T + X[r, :j] V[i, :j]^T (r >= i); its left reflector
// (d[i] = beta, the vector packed below the diagonal as geqrf stores it, u_j in ut row j, zero
// above i); dots[l] = U_l . u_j, dots[nb + l] = X_l . u_j (l < j). tb: tau_l.
__kernel void brd_col(BRD_ARGS) {
  BRD_PTRS
  const int lid = get_local_id(0);
  __local ACC red[TLS];
  for (long r0 = i; r0 < m; r0 += TLS) {
    const long r = r0 + lid;
    if (r < m) {
      ACC s = 0;
      for (long l = 0; l < j; ++l)
        s += ut[l * m + r] * yt[l * ldn + i] + xt[l * m + r] * vt[l * ldn + i];
      a[r * ldn + i] -= s;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  ACC part = 0;
  for (long r0 = i + 1; r0 < m; r0 += TLS) {
    const long r = r0 + lid;
    if (r < m) part += a[r * ldn + i] * a[r * ldn + i];
  }
  const ACC xnorm2 = brd_sum(red, part);
  ACC beta, t, scale;
  brd_larfg(a[i * ldn + i], xnorm2, &beta, &t, &scale);
  barrier(CLK_GLOBAL_MEM_FENCE);
  __global ACC* u = ut + j * m;
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
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long q = lid; q < 2 * j; q += TLS) {
    const long l = q < j ? q : q - j;
    __global const ACC* src = (q < j ? ut : xt) + l * m;
    ACC s = 0;
    for (long r = i; r < m; ++r) s += src[r] * u[r];
    dots[q < j ? l : nb + l] = s;
  }
}

// y_j = tau_l (A^T u_j - Y (U^T u_j) - V (X^T u_j)) on columns i + 1..n-1 (0 elsewhere); one work
// item per (RW columns, matrix), walking down them. Launched with get_group_id(1) = the matrix.
__kernel void brd_y(BRD_ARGS) {
  const long c0 = get_global_id(0) * RW, g = get_global_id(1);
  if (c0 >= ldn) return;
  __global const ACC* a = (__global const ACC*)(ab + aoff) + g * m * ldn + c0;
  __global const ACC* ut = (__global const ACC*)(ub + uoff) + g * nb * m;
  __global ACC* yt = (__global ACC*)(yb + yoff) + g * nb * ldn;
  __global const ACC* vt = (__global const ACC*)(vb + voff) + g * nb * ldn;
  __global const ACC* dots = (__global const ACC*)(pb + poff) + g * 2 * nb;
  const ACC t = ((__global const ACC*)(tb + toff))[g * n + i];
  __global const ACC* u = ut + j * m;
  ACC w[RW];
  VSTORE((ACCV)0, 0, w);
  if (c0 + RW > i + 1 && t != 0) {
    ACCV s = 0;
    for (long r = i; r < m; ++r) s += u[r] * VLOAD(0, a + r * ldn);
    for (long l = 0; l < j; ++l)
      s -= VLOAD(0, yt + l * ldn + c0) * dots[l] + VLOAD(0, vt + l * ldn + c0) * dots[nb + l];
    VSTORE(t * s, 0, w);
  }
  for (int q = 0; q < RW; ++q) {
    const long c = c0 + q;
    yt[j * ldn + c] = c > i && c < n ? w[q] : 0;
  }
}

// Row i: a[i][c] -= U[i, :j+1] Y[c, :j+1]^T + X[i, :j] V[c, :j]^T (c > i); its right reflector
// (e[i] = beta in a[i][i+1], the vector packed in a[i][i+2..], v_j in vt row j, zero outside
// i + 1..n-1); dots[l] = Y_l . v_j (l <= j), dots[nb + l] = V_l . v_j (l < j). db: e, tb: tau_r.
__kernel void brd_row(BRD_ARGS) {
  BRD_PTRS
  const int lid = get_local_id(0);
  __local ACC red[TLS];
  __global ACC* ai = a + i * ldn;
  for (long c0 = i + 1; c0 < n; c0 += TLS) {
    const long c = c0 + lid;
    if (c < n) {
      ACC s = 0;
      for (long l = 0; l <= j; ++l) s += ut[l * m + i] * yt[l * ldn + c];
      for (long l = 0; l < j; ++l) s += xt[l * m + i] * vt[l * ldn + c];
      ai[c] -= s;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  ACC part = 0;
  for (long c0 = i + 2; c0 < n; c0 += TLS) {
    const long c = c0 + lid;
    if (c < n) part += ai[c] * ai[c];
  }
  const ACC xnorm2 = brd_sum(red, part);
  ACC beta, t, scale;
  brd_larfg(ai[i + 1], xnorm2, &beta, &t, &scale);
  barrier(CLK_GLOBAL_MEM_FENCE);
  __global ACC* v = vt + j * ldn;
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
    ((__global ACC*)(db + doff))[g * n + i] = beta;
    ((__global ACC*)(tb + toff))[g * n + i] = t;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long q = lid; q < 2 * j + 1; q += TLS) {
    const long l = q <= j ? q : q - j - 1;
    __global const ACC* src = (q <= j ? yt : vt) + l * ldn;
    ACC s = 0;
    for (long c = i + 1; c < n; ++c) s += src[c] * v[c];
    dots[q <= j ? l : nb + l] = s;
  }
}

// x_j = tau_r (A v_j - U (Y^T v_j) - X (V^T v_j)) on rows i + 1..m-1 (0 elsewhere); one work item
// per (row, matrix), along it.
__kernel void brd_x(BRD_ARGS) {
  const long r = get_global_id(0), g = get_global_id(1);
  if (r >= m) return;
  __global const ACC* ar = (__global const ACC*)(ab + aoff) + g * m * ldn + r * ldn;
  __global const ACC* ut = (__global const ACC*)(ub + uoff) + g * nb * m;
  __global ACC* xt = (__global ACC*)(xb + xoff) + g * nb * m;
  __global const ACC* vt = (__global const ACC*)(vb + voff) + g * nb * ldn;
  __global const ACC* dots = (__global const ACC*)(pb + poff) + g * 2 * nb;
  const ACC t = ((__global const ACC*)(tb + toff))[g * n + i];
  __global const ACC* v = vt + j * ldn;
  ACC x = 0;
  if (r > i && t != 0) {
    const long c1 = (i + 1) / RW * RW;
    ACCV z = 0;
    for (long c0 = c1; c0 < ldn; c0 += RW) z += VLOAD(0, ar + c0) * VLOAD(0, v + c0);
    ACC s = vsum(z);
    for (long l = 0; l <= j; ++l) s -= ut[l * m + r] * dots[l];
    for (long l = 0; l < j; ++l) s -= xt[l * m + r] * dots[nb + l];
    x = t * s;
  }
  xt[j * m + r] = x;
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
                        __global char* sb, ulong soff, long n, long cap, int record, int max_iter,
                        ACC eps, long batch) {
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
#else  // OCL_COMPLEX: the complex programs hold only the bidiagonalisation

// The complex bidiagonalisation (LAPACK zgebrd / zlabrd's algorithm, m >= n) for complex64 /
// complex128, as brd_col / brd_y / brd_row / brd_x, one scalar per work item: B = Q D P^H with
// zlarfg's reflectors (tau complex, beta real: D is a real bidiagonal, which the real bidiag_qr
// and rotate_pairs of the real program take unchanged). Left: H = I - tau_l u u^H from column i,
// y = tau_l B^H u, B -= u y^H. Right: G = I - tau_r v v^H from zlarfg on the conjugated row i
// (row G = beta e_1^T), x = tau_r B v, B -= x v^H. Within a panel B = A - U Y^H - X V^H.
// a, ut, xt, yt, vt, dots, tau: complex; d, e (db): real.
#define CBRD_PTRS                                             \
  const long g = get_group_id(0);                             \
  __global CT* a = (__global CT*)(ab + aoff) + g * m * ldn;   \
  __global CT* ut = (__global CT*)(ub + uoff) + g * nb * m;   \
  __global CT* xt = (__global CT*)(xb + xoff) + g * nb * m;   \
  __global CT* yt = (__global CT*)(yb + yoff) + g * nb * ldn; \
  __global CT* vt = (__global CT*)(vb + voff) + g * nb * ldn; \
  __global CT* dots = (__global CT*)(pb + poff) + g * 2 * nb;

#define CBRD_ARGS                                                                                  \
  __global char *ab, ulong aoff, __global char *ub, ulong uoff, __global char *xb, ulong xoff,     \
      __global char *yb, ulong yoff, __global char *vb, ulong voff, __global char *pb, ulong poff, \
      __global char *db, ulong doff, __global char *tb, ulong toff, long m, long n, long ldn,      \
      long nb, long i, long j

CR cbrd_sum(__local CR* red, CR v) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = TLS / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const CR r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// LAPACK zlarfg's reflector for (alpha, x), |x|^2 = xnorm2: beta real, tau, the scale of x.
void cbrd_larfg(CT alpha, CR xnorm2, CR* beta, CT* tau, CT* scale) {
  *beta = alpha.x;
  *tau = (CT)(0, 0);
  *scale = (CT)(0, 0);
  if (xnorm2 != 0 || alpha.y != 0) {
    *beta = -copysign(hypot(hypot(alpha.x, alpha.y), sqrt(xnorm2)), alpha.x);
    *tau = (CT)((*beta - alpha.x) / *beta, -alpha.y / *beta);
    *scale = ocl_cdiv((CT)(1, 0), alpha - (CT)(*beta, 0));
  }
}

// Column i up to date (a[r][i] -= U[r, :j] conj(Y[i, :j]) + X[r, :j] conj(V[i, :j])), its left
// reflector (d[i] = beta; u packed below the diagonal, geqrf's form); dots = (U^H u, X^H u).
__kernel void cbrd_col(CBRD_ARGS) {
  CBRD_PTRS
  const int lid = get_local_id(0);
  __local CR red[TLS];
  for (long r = i + lid; r < m; r += TLS) {
    CT s = 0;
    for (long l = 0; l < j; ++l)
      s += ocl_cmul(ut[l * m + r], ocl_cconj(yt[l * ldn + i])) +
           ocl_cmul(xt[l * m + r], ocl_cconj(vt[l * ldn + i]));
    a[r * ldn + i] -= s;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  CR part = 0;
  for (long r = i + 1 + lid; r < m; r += TLS) part += S_ABS2(a[r * ldn + i]);
  const CR xnorm2 = cbrd_sum(red, part);
  CR beta;
  CT t, scale;
  cbrd_larfg(a[i * ldn + i], xnorm2, &beta, &t, &scale);
  barrier(CLK_GLOBAL_MEM_FENCE);
  __global CT* u = ut + j * m;
  for (long r = lid; r < m; r += TLS) {
    const CT v = r < i ? (CT)(0, 0) : r == i ? (CT)(1, 0) : ocl_cmul(a[r * ldn + i], scale);
    if (r > i) a[r * ldn + i] = v;
    u[r] = v;
  }
  if (lid == 0) {
    a[i * ldn + i] = (CT)(beta, 0);
    ((__global CR*)(db + doff))[g * n + i] = beta;
    ((__global CT*)(tb + toff))[g * n + i] = t;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long q = lid; q < 2 * j; q += TLS) {
    const long l = q < j ? q : q - j;
    __global const CT* src = (q < j ? ut : xt) + l * m;
    CT s = 0;
    for (long r = i; r < m; ++r) s += ocl_cmul(ocl_cconj(src[r]), u[r]);
    dots[q < j ? l : nb + l] = s;
  }
}

// y_j = tau_l (A^H u_j - Y (U^H u_j) - V (X^H u_j)) on columns i + 1..n-1 (0 elsewhere); an item
// per (column, matrix).
__kernel void cbrd_y(CBRD_ARGS) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= ldn) return;
  __global const CT* a = (__global const CT*)(ab + aoff) + g * m * ldn + c;
  __global const CT* ut = (__global const CT*)(ub + uoff) + g * nb * m;
  __global CT* yt = (__global CT*)(yb + yoff) + g * nb * ldn;
  __global const CT* vt = (__global const CT*)(vb + voff) + g * nb * ldn;
  __global const CT* dots = (__global const CT*)(pb + poff) + g * 2 * nb;
  const CT t = ((__global const CT*)(tb + toff))[g * n + i];
  __global const CT* u = ut + j * m;
  CT w = 0;
  if (c > i && c < n && (t.x != 0 || t.y != 0)) {
    CT s = 0;
    for (long r = i; r < m; ++r) s += ocl_cmul(ocl_cconj(a[r * ldn]), u[r]);
    for (long l = 0; l < j; ++l)
      s -= ocl_cmul(yt[l * ldn + c], dots[l]) + ocl_cmul(vt[l * ldn + c], dots[nb + l]);
    w = ocl_cmul(t, s);
  }
  yt[j * ldn + c] = w;
}

// Row i up to date (a[i][c] -= U[i, :j+1] conj(Y[c, :j+1]) + X[i, :j] conj(V[c, :j])), its right
// reflector from the conjugated row (e[i] = beta in a[i][i+1], v packed in a[i][i+2..], v_j in
// vt row j); dots = (Y^H v (l <= j), V^H v (l < j)).
__kernel void cbrd_row(CBRD_ARGS) {
  CBRD_PTRS
  const int lid = get_local_id(0);
  __local CR red[TLS];
  __global CT* ai = a + i * ldn;
  for (long c = i + 1 + lid; c < n; c += TLS) {
    CT s = 0;
    for (long l = 0; l <= j; ++l) s += ocl_cmul(ut[l * m + i], ocl_cconj(yt[l * ldn + c]));
    for (long l = 0; l < j; ++l) s += ocl_cmul(xt[l * m + i], ocl_cconj(vt[l * ldn + c]));
    ai[c] -= s;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  CR part = 0;
  for (long c = i + 2 + lid; c < n; c += TLS) part += S_ABS2(ai[c]);
  const CR xnorm2 = cbrd_sum(red, part);
  CR beta;
  CT t, scale;
  cbrd_larfg(ocl_cconj(ai[i + 1]), xnorm2, &beta, &t, &scale);
  barrier(CLK_GLOBAL_MEM_FENCE);
  __global CT* v = vt + j * ldn;
  for (long c = lid; c < ldn; c += TLS) {
    const CT x = c <= i || c >= n  ? (CT)(0, 0)
                 : c == i + 1      ? (CT)(1, 0)
                                   : ocl_cmul(ocl_cconj(ai[c]), scale);
    if (c > i + 1 && c < n) ai[c] = x;
    v[c] = x;
  }
  if (lid == 0) {
    ai[i + 1] = (CT)(beta, 0);
    ((__global CR*)(db + doff))[g * n + i] = beta;
    ((__global CT*)(tb + toff))[g * n + i] = t;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long q = lid; q < 2 * j + 1; q += TLS) {
    const long l = q <= j ? q : q - j - 1;
    __global const CT* src = (q <= j ? yt : vt) + l * ldn;
    CT s = 0;
    for (long c = i + 1; c < n; ++c) s += ocl_cmul(ocl_cconj(src[c]), v[c]);
    dots[q <= j ? l : nb + l] = s;
  }
}

// x_j = tau_r (A v_j - U (Y^H v_j) - X (V^H v_j)) on rows i + 1..m-1 (0 elsewhere); an item per
// (row, matrix).
__kernel void cbrd_x(CBRD_ARGS) {
  const long r = get_global_id(0), g = get_global_id(1);
  if (r >= m) return;
  __global const CT* ar = (__global const CT*)(ab + aoff) + g * m * ldn + r * ldn;
  __global const CT* ut = (__global const CT*)(ub + uoff) + g * nb * m;
  __global CT* xt = (__global CT*)(xb + xoff) + g * nb * m;
  __global const CT* vt = (__global const CT*)(vb + voff) + g * nb * ldn;
  __global const CT* dots = (__global const CT*)(pb + poff) + g * 2 * nb;
  const CT t = ((__global const CT*)(tb + toff))[g * n + i];
  __global const CT* v = vt + j * ldn;
  CT x = 0;
  if (r > i && (t.x != 0 || t.y != 0)) {
    CT s = 0;
    for (long c = i + 1; c < n; ++c) s += ocl_cmul(ar[c], v[c]);
    for (long l = 0; l <= j; ++l) s -= ocl_cmul(ut[l * m + r], dots[l]);
    for (long l = 0; l < j; ++l) s -= ocl_cmul(xt[l * m + r], dots[nb + l]);
    x = ocl_cmul(t, s);
  }
  xt[j * m + r] = x;
}
#endif
