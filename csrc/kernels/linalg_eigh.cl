// The large-matrix symmetric eigensolver (aten/linalg/linalg_eigh.cpp), real float32/float64
// (T == ACC): Householder tridiagonalisation in panels (LAPACK dsytrd / dlatrd structure; the
// trailing update of each panel is a GEMM enqueued by the host), implicit QL with Wilkinson-like
// shifts on the tridiagonal (EISPACK tql2), which records its plane rotations instead of applying
// them, and the application of the recorded rotations to the eigenvector matrix in parallel, one
// work item per row. The matrix a (batch, n, n) is row major with both triangles filled; since it
// is symmetric, row i stands for column i, so every vector the kernels read runs along
// consecutive addresses (across work items in trd_symv and rotate_rows).
#define TLS 64  // trd_column's work-group size (the host launches it with this)
#define VCAT(a, b) a##b
#define VTYPE(a, b) VCAT(a, b)
#ifndef OCL_COMPLEX  // the real program: everything but the complex tridiagonalisation
#define RW 8    // the vector width over consecutive rows (trd_*, rotate_rows); ldn % RW == 0
typedef VTYPE(ACC, RW) ACCV;
typedef VTYPE(ACC, 4) ACC4;
#define VLOAD(off, p) VTYPE(vload, RW)(off, p)
#define VSTORE(v, off, p) VTYPE(vstore, RW)(v, off, p)

ACC vsum(ACCV v) {
  const ACC4 h = v.lo + v.hi;
  return h.x + h.y + h.z + h.w;
}

// Sum of v over the work group (all items get it); red is __local ACC[TLS].
ACC trd_sum(__local ACC* red, ACC v) {
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

// Step j of the panel starting at column i - j (one work group per matrix):
//  - finishes w_{j-1} (w += -(tau/2) (w . v) v), which needed trd_symv's full vector;
//  - unless finish_only: brings row i of a up to date with the panel's earlier reflectors
//    (a_i -= V W^T_i + W V^T_i over l < j), sets d[i], and (i < n - 1) forms the reflector that
//    zeroes a[i][i+2..]: LAPACK's dlarfg (beta = -sign(alpha) |x|, tau = (beta - alpha) / beta,
//    v = x / (alpha - beta) with v[i+1] = 1; tau = 0 when x[1..] = 0), e[i] = beta, v stored in
//    vt row j (zeros before i + 1) and in a[i][i+2..] (the packed form the back-transformation
//    takes), and the dots W_l . v, V_l . v (l < j) that trd_symv's corrections need (xy).
// a (batch, n, ldn), vt, wt (batch, nb, ldn): the panel's V and W, a vector per row, zero in
// the padding columns n..ldn-1 and below each vector's start (so that whole RW-vectors from an
// aligned start give the dot products). Row i's entries left of i are dead (nothing reads them
// again): the row update writes whole vectors over them.
__kernel void trd_column(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                         __global char* wb, ulong woff, __global char* db, ulong doff,
                         __global char* eb, ulong eoff, __global char* tb, ulong toff,
                         __global char* xb, ulong xoff, long n, long ldn, long nb, long i, long j,
                         int finish_only) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global ACC* a = (__global ACC*)(ab + aoff) + g * n * ldn;
  __global ACC* vt = (__global ACC*)(vb + voff) + g * nb * ldn;
  __global ACC* wt = (__global ACC*)(wb + woff) + g * nb * ldn;
  __global ACC* d = (__global ACC*)(db + doff) + g * n;
  __global ACC* e = (__global ACC*)(eb + eoff) + g * n;
  __global ACC* tau = (__global ACC*)(tb + toff) + g * n;
  __global ACC* xy = (__global ACC*)(xb + xoff) + g * 2 * nb;
  __local ACC red[TLS];
  const long i0 = i / RW * RW;  // the aligned start of the vectors from i on
  if (j > 0) {
    __global ACC* wp = wt + (j - 1) * ldn;
    __global const ACC* vp = vt + (j - 1) * ldn;  // zero before i
    ACCV part = 0;
    for (long r0 = i0 + lid * RW; r0 < ldn; r0 += TLS * RW)
      part += VLOAD(0, wp + r0) * VLOAD(0, vp + r0);
    const ACC alpha = -(ACC)0.5 * tau[i - 1] * trd_sum(red, vsum(part));
    for (long r0 = i0 + lid * RW; r0 < ldn; r0 += TLS * RW)
      VSTORE(VLOAD(0, wp + r0) + alpha * VLOAD(0, vp + r0), 0, wp + r0);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (finish_only) return;
  __global ACC* ai = a + i * ldn;
  for (long r0 = i0 + lid * RW; r0 < ldn; r0 += TLS * RW) {
    ACCV s = 0;
    for (long l = 0; l < j; ++l)
      s += vt[l * ldn + i] * VLOAD(0, wt + l * ldn + r0) +
           wt[l * ldn + i] * VLOAD(0, vt + l * ldn + r0);
    VSTORE(VLOAD(0, ai + r0) - s, 0, ai + r0);
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) d[i] = ai[i];
  if (i == n - 1) return;
  ACC part = 0;
  for (long r0 = i + 2; r0 < n; r0 += TLS) {
    const long r = r0 + lid;
    if (r < n) part += ai[r] * ai[r];
  }
  const ACC xnorm2 = trd_sum(red, part);
  const ACC alpha = ai[i + 1];
  ACC beta = alpha, t = 0, scale = 0;
  if (xnorm2 != 0) {
    beta = -copysign(hypot(alpha, sqrt(xnorm2)), alpha);
    t = (beta - alpha) / beta;
    scale = 1 / (alpha - beta);
  }
  if (lid == 0) {
    e[i] = beta;
    tau[i] = t;
  }
  __global ACC* vj = vt + j * ldn;
  for (long r0 = 0; r0 < ldn; r0 += TLS) {
    const long r = r0 + lid;
    if (r < ldn) {
      const ACC v = r <= i || r >= n ? 0 : r == i + 1 ? 1 : ai[r] * scale;
      if (r > i + 1 && r < n) ai[r] = v;
      vj[r] = v;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  const long i1 = (i + 1) / RW * RW;
  for (long q = lid; q < 2 * j; q += TLS) {
    const long l = q < j ? q : q - j;
    __global const ACC* src = (q < j ? wt : vt) + l * ldn;
    ACCV s = 0;
    for (long r0 = i1; r0 < ldn; r0 += RW) s += VLOAD(0, src + r0) * VLOAD(0, vj + r0);
    xy[q < j ? l : nb + l] = vsum(s);
  }
}

// w_j = tau_i (A v - V (W^T v) - W (V^T v)) on rows i + 1.. (0 elsewhere), A the matrix as the
// panel started (rows and columns i + 1.. are untouched until the trailing update): one work
// item per (RW consecutive rows, matrix); A's symmetry turns the rows' dot products into a walk
// down RW columns at once.
__kernel void trd_symv(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                       __global char* wb, ulong woff, __global char* tb, ulong toff,
                       __global char* xb, ulong xoff, long n, long ldn, long nb, long i, long j) {
  const long r0 = get_global_id(0) * RW, g = get_global_id(1);
  if (r0 >= ldn) return;
  __global const ACC* a = (__global const ACC*)(ab + aoff) + g * n * ldn;
  __global const ACC* vt = (__global const ACC*)(vb + voff) + g * nb * ldn;
  __global ACC* wt = (__global ACC*)(wb + woff) + g * nb * ldn;
  __global const ACC* xy = (__global const ACC*)(xb + xoff) + g * 2 * nb;
  const ACC t = ((__global const ACC*)(tb + toff))[g * n + i];
  __global const ACC* vj = vt + j * ldn;
  ACC w[RW];
  VSTORE((ACCV)0, 0, w);
  if (r0 + RW > i + 1 && t != 0) {
    ACCV s = 0;
    for (long c = i + 1; c < n; ++c) s += VLOAD(0, a + c * ldn + r0) * vj[c];
    for (long l = 0; l < j; ++l)
      s -= VLOAD(0, vt + l * ldn + r0) * xy[l] + VLOAD(0, wt + l * ldn + r0) * xy[nb + l];
    VSTORE(t * s, 0, w);
  }
  for (int u = 0; u < RW; ++u) {
    const long r = r0 + u;
    wt[j * ldn + r] = r > i && r < n ? w[u] : 0;
  }
}

// Implicit QL with shifts on the symmetric tridiagonal (d (n), e (n): e[i] couples i and i + 1,
// e[n - 1] scratch), one work item per matrix, in place: d becomes the eigenvalues (unsorted).
// With record, each rotation G(i, i + 1; c, s) that tql2 would apply to the eigenvector columns
// i, i + 1 is appended to rot (c, s pairs) and each QL step's run of them to its (first i, count;
// the run goes i, i - 1, ...), for rotate_rows; when a step might not fit in the cap rotations
// left, the kernel stops and keeps its place in state, and the host calls it again after
// rotate_rows has used the records. state (8 ints per matrix): [0] the l to resume at, [1] its
// iteration count, [2] done, [3] rotations and [4] steps recorded in this call, [5] info (l + 1
// of an eigenvalue that did not converge in max_iter steps, as LAPACK's).
__kernel void tridiag_ql(__global char* db, ulong doff, __global char* eb, ulong eoff,
                         __global char* rb, ulong roff, __global char* ib, ulong ioff,
                         __global char* sb, ulong soff, long n, long cap, int record, int max_iter,
                         ACC eps, ACC tiny, long batch) {
  const long g = get_global_id(0);
  if (g >= batch) return;
  __global ACC* d = (__global ACC*)(db + doff) + g * n;
  __global ACC* e = (__global ACC*)(eb + eoff) + g * n;
  __global ACC* rot = (__global ACC*)(rb + roff) + g * 2 * cap;
  __global int* its = (__global int*)(ib + ioff) + g * 2 * cap;
  __global int* st = (__global int*)(sb + soff) + g * 8;
  st[3] = 0;
  st[4] = 0;
  if (st[2]) return;
  long l = st[0];
  int iter = st[1];
  long nrot = 0, nit = 0;
  e[n - 1] = 0;
  while (l < n) {
    long m = l;
    for (; m < n - 1; ++m) {
      const ACC dd = fabs(d[m]) + fabs(d[m + 1]);
      if (fabs(e[m]) <= eps * dd || fabs(e[m]) <= tiny) break;
    }
    if (m == l) {
      ++l;
      iter = 0;
      continue;
    }
    if (record && nrot + (m - l) > cap) {  // the records are full: resume here next call
      st[0] = (int)l;
      st[1] = iter;
      st[3] = (int)nrot;
      st[4] = (int)nit;
      return;
    }
    if (iter++ >= max_iter) {
      if (st[5] == 0) st[5] = (int)(l + 1);
      ++l;
      iter = 0;
      continue;
    }
    ACC gg = (d[l + 1] - d[l]) / (2 * e[l]);
    ACC r = sqrt(gg * gg + 1);
    gg = d[m] - d[l] + e[l] / (gg + copysign(r, gg));
    ACC s = 1, c = 1, p = 0;
    int cnt = 0, early = 0;
    for (long i = m - 1; i >= l; --i) {
      const ACC f = s * e[i], b = c * e[i];
      r = sqrt(f * f + gg * gg);
      e[i + 1] = r;
      if (r == 0) {  // deflates: restart the search from l
        d[i + 1] -= p;
        e[m] = 0;
        early = 1;
        break;
      }
      s = f / r;
      c = gg / r;
      gg = d[i + 1] - p;
      r = (d[i] - gg) * s + 2 * c * b;
      p = s * r;
      d[i + 1] = gg + p;
      gg = c * r - b;
      if (record) {
        rot[2 * (nrot + cnt)] = c;
        rot[2 * (nrot + cnt) + 1] = s;
        ++cnt;
      }
    }
    if (cnt > 0) {
      its[2 * nit] = (int)(m - 1);
      its[2 * nit + 1] = cnt;
      ++nit;
      nrot += cnt;
    }
    if (early) continue;
    d[l] -= p;
    e[l] = gg;
    e[m] = 0;
  }
  st[0] = (int)n;
  st[2] = 1;
  st[3] = (int)nrot;
  st[4] = (int)nit;
}

// The rotations tridiag_ql recorded in this call, in order, applied to the columns of X (the
// eigenvectors so far, X = Q then X G_1 G_2 ...) held transposed: xt (batch, n, ldx), xt[i][k] =
// X[k][i], ldx a multiple of RW; one work item per (RW consecutive rows k of X, matrix), as one
// vector, so each rotation's c and s are read once for RW rows. Within a step the rotations run
// down i, i - 1, ..., sharing one column each time: that column's value stays in a register.
__kernel void rotate_rows(__global char* xb, ulong xoff, __global char* rb, ulong roff,
                          __global char* ib, ulong ioff, __global char* sb, ulong soff, long n,
                          long ldx, long cap) {
  const long kv = get_global_id(0), g = get_global_id(1);
  if (kv * RW >= ldx) return;
  __global ACC* xt = (__global ACC*)(xb + xoff) + g * n * ldx + kv * RW;
  __global const ACC* rot = (__global const ACC*)(rb + roff) + g * 2 * cap;
  __global const int* its = (__global const int*)(ib + ioff) + g * 2 * cap;
  const int nit = ((__global const int*)(sb + soff))[g * 8 + 4];
  const long lv = ldx / RW;  // a row of xt in vectors
  long pos = 0;
  for (int it = 0; it < nit; ++it) {
    const long start = its[2 * it], cnt = its[2 * it + 1];
    ACCV z1 = VLOAD((start + 1) * lv, xt);  // column i + 1, already rotated by the previous step
    for (long t = 0; t < cnt; ++t) {
      const long i = start - t;
      const ACC c = rot[2 * (pos + t)], s = rot[2 * (pos + t) + 1];
      const ACCV z0 = VLOAD(i * lv, xt);
      VSTORE(s * z0 + c * z1, (i + 1) * lv, xt);
      z1 = c * z0 - s * z1;
    }
    VSTORE(z1, (start - cnt + 1) * lv, xt);
    pos += cnt;
  }
}
#else  // OCL_COMPLEX: the complex programs hold only the Hermitian tridiagonalisation

// The Hermitian tridiagonalisation (LAPACK zhetrd / zlatrd, lower) for complex64/complex128: the
// same steps as trd_column / trd_symv, one scalar per work item. The matrix is held as
// b = conj(A) (row major), whose row i is A's column i, so that the column LAPACK works on runs
// along consecutive addresses. The reflectors are zlarfg's (H = I - tau v v^H, tau complex,
// beta real), so the tridiagonal comes out real (d real, e = beta real) and the real QL and
// rotation kernels of the real program take it unchanged. vt, wt, tau, xy complex; d, e real.

// Sum of v over the work group (all items get it); red is __local CT[TLS].
CT ctrd_sum(__local CT* red, CT v) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = TLS / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const CT r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// Step j of the panel at column i - j (one work group per matrix), as trd_column: finishes
// w_{j-1} (w += -(tau/2) (w^H v) v); unless finish_only, brings A's column i (b's row i) up to
// date (a_i -= V conj(W_i) + W conj(V_i) over l < j), sets d[i] = re a_ii and forms zlarfg's
// reflector for a[i+1..][i]: beta = -sign(re alpha) |(alpha, x)|, tau = ((beta - re alpha) / beta,
// -im alpha / beta), v = x / (alpha - beta), tau = 0 when x = 0 and alpha is real; e[i] = beta;
// v into vt row j and b[i][i+2..]; xy = (W^H v, V^H v) over the panel's earlier columns.
__kernel void ctrd_column(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                          __global char* wb, ulong woff, __global char* db, ulong doff,
                          __global char* eb, ulong eoff, __global char* tb, ulong toff,
                          __global char* xb, ulong xoff, long n, long ldn, long nb, long i,
                          long j, int finish_only) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global CT* a = (__global CT*)(ab + aoff) + g * n * ldn;
  __global CT* vt = (__global CT*)(vb + voff) + g * nb * ldn;
  __global CT* wt = (__global CT*)(wb + woff) + g * nb * ldn;
  __global CR* d = (__global CR*)(db + doff) + g * n;
  __global CR* e = (__global CR*)(eb + eoff) + g * n;
  __global CT* tau = (__global CT*)(tb + toff) + g * n;
  __global CT* xy = (__global CT*)(xb + xoff) + g * 2 * nb;
  __local CT red[TLS];
  if (j > 0) {
    __global CT* wp = wt + (j - 1) * ldn;
    __global const CT* vp = vt + (j - 1) * ldn;  // zero before i
    CT part = 0;
    for (long r = i + lid; r < n; r += TLS) part += ocl_cmul(ocl_cconj(wp[r]), vp[r]);
    const CT alpha = (CR)-0.5 * ocl_cmul(tau[i - 1], ctrd_sum(red, part));
    for (long r = i + lid; r < n; r += TLS) wp[r] += ocl_cmul(alpha, vp[r]);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (finish_only) return;
  __global CT* ai = a + i * ldn;
  for (long r = i + lid; r < n; r += TLS) {
    CT s = 0;
    for (long l = 0; l < j; ++l)
      s += ocl_cmul(ocl_cconj(wt[l * ldn + i]), vt[l * ldn + r]) +
           ocl_cmul(ocl_cconj(vt[l * ldn + i]), wt[l * ldn + r]);
    ai[r] -= s;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) d[i] = ai[i].x;
  if (i == n - 1) return;
  CT part = 0;
  for (long r = i + 2 + lid; r < n; r += TLS) part.x += S_ABS2(ai[r]);
  const CR xnorm2 = ctrd_sum(red, part).x;
  const CT alpha = ai[i + 1];
  CR beta = alpha.x;
  CT t = 0, scale = 0;
  if (xnorm2 != 0 || alpha.y != 0) {
    beta = -copysign(hypot(hypot(alpha.x, alpha.y), sqrt(xnorm2)), alpha.x);
    t = (CT)((beta - alpha.x) / beta, -alpha.y / beta);
    scale = ocl_cdiv((CT)(1, 0), alpha - (CT)(beta, 0));
  }
  if (lid == 0) {
    e[i] = beta;
    tau[i] = t;
  }
  __global CT* vj = vt + j * ldn;
  for (long r = lid; r < ldn; r += TLS) {
    const CT v = r <= i || r >= n ? (CT)(0, 0) : r == i + 1 ? (CT)(1, 0) : ocl_cmul(ai[r], scale);
    if (r > i + 1 && r < n) ai[r] = v;
    vj[r] = v;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long q = lid; q < 2 * j; q += TLS) {
    const long l = q < j ? q : q - j;
    __global const CT* src = (q < j ? wt : vt) + l * ldn;
    CT s = 0;
    for (long r = i + 1; r < n; ++r) s += ocl_cmul(ocl_cconj(src[r]), vj[r]);
    xy[q < j ? l : nb + l] = s;
  }
}

// w_j = tau_i (A v - V (W^H v) - W (V^H v)) on rows i + 1.. (0 elsewhere), A as the panel
// started: one work item per (CRW consecutive rows, matrix); (A v)[r] = sum_c b[c][r] v[c] walks
// down CRW columns of b at once, so that each v[c] is read once for CRW rows.
#define CRW 4  // ldn % CRW == 0
__kernel void ctrd_symv(__global char* ab, ulong aoff, __global char* vb, ulong voff,
                        __global char* wb, ulong woff, __global char* tb, ulong toff,
                        __global char* xb, ulong xoff, long n, long ldn, long nb, long i, long j) {
  const long r0 = get_global_id(0) * CRW, g = get_global_id(1);
  if (r0 >= ldn) return;
  __global const CT* a = (__global const CT*)(ab + aoff) + g * n * ldn + r0;
  __global const CT* vt = (__global const CT*)(vb + voff) + g * nb * ldn;
  __global CT* wt = (__global CT*)(wb + woff) + g * nb * ldn;
  __global const CT* xy = (__global const CT*)(xb + xoff) + g * 2 * nb;
  const CT t = ((__global const CT*)(tb + toff))[g * n + i];
  __global const CT* vj = vt + j * ldn;
  CT s[CRW];
  for (int u = 0; u < CRW; ++u) s[u] = 0;
  if (r0 + CRW > i + 1 && (t.x != 0 || t.y != 0)) {
    for (long c = i + 1; c < n; ++c) {
      const CT v = vj[c];
      __global const CT* ac = a + c * ldn;
      for (int u = 0; u < CRW; ++u) s[u] += ocl_cmul(ac[u], v);
    }
    for (long l = 0; l < j; ++l) {
      const CT x = xy[l], y = xy[nb + l];
      __global const CT* vl = vt + l * ldn + r0;
      __global const CT* wl = wt + l * ldn + r0;
      for (int u = 0; u < CRW; ++u) s[u] -= ocl_cmul(vl[u], x) + ocl_cmul(wl[u], y);
    }
  }
  for (int u = 0; u < CRW; ++u) {
    const long r = r0 + u;
    wt[j * ldn + r] = r > i && r < n ? ocl_cmul(t, s[u]) : (CT)(0, 0);
  }
}
#endif
