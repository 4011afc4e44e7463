// Scaled dot-product attention for float32 on CPU drivers: the kernels of attention.cl (which this
// file follows in one program, sharing SdpaGeom, sdpa_at and the argument lists) with explicit
// float16 vectors. A work item still owns one row (a query row for the forward and dQ, a key row
// for dK/dV), but it takes the other side's rows 16 at a time: the 16 dot products of a block
// are 16 vector products along the head dimension reduced together by a transposing tree
// (av_tree: 15 shuffle-adds for 16 sums), and the softmax, masks and dropout of the block run on
// one float16 of scores. The scalar kernels spend ~40 cycles of bookkeeping per key per row; PoCL
// cannot vectorize their data-dependent control flow across work items, so they run one row at a
// time. Head dimensions are at most AV_MAXC * 16 (the host checks); a partial 16-column chunk of
// the head dimension, like a partial block of rows, loads zeros past its end.
// Launched with work-groups of one work item.
//
// The host builds one program per head-dimension shape: AV_NCE and AV_NCV chunks of 16 columns
// in E and Ev, AV_FULL when both are whole chunks and AV_UNIT when every head-dimension stride is
// 1. The chunk loops then unroll with the rows' chunks in registers, and whole unit-stride chunks
// are plain vload16/vstore16 (a runtime chunk count and a per-chunk choice of load cost ~3x in the
// dot products).

#define AV_MAXC 8
#if AV_NCE > AV_MAXC || AV_NCV > AV_MAXC
#error "attention_vec.cl: head dimension above AV_MAXC chunks"
#endif

// exp of a float16 from the prelude's polynomial (PoCL's builtin runs lane by lane).
OCL_DEFINE_FLOAT_MATH(float16, int16, float16)

// n (<= 16) elements of p from base at element stride st; lanes past n are 0.
inline float16 av_load(__global const float* p, long base, long st, int n) {
  if (n == 16 && st == 1) return vload16(0, p + base);
  float t[16];
  for (int l = 0; l < 16; ++l) t[l] = l < n ? p[base + l * st] : 0.0f;
  return vload16(0, t);
}

inline void av_store(__global float* p, long base, long st, int n, float16 v) {
  if (n == 16 && st == 1) {
    vstore16(v, 0, p + base);
    return;
  }
  float t[16];
  vstore16(v, 0, t);
  for (int l = 0; l < n; ++l) p[base + l * st] = t[l];
}

// Chunk c of a head-dimension row of d columns at base, columns cs apart.
#if AV_FULL && AV_UNIT
#define AV_CHUNK(p, base, cs, d, c) vload16((c), (p) + (base))
#define AV_PUT_CHUNK(p, base, cs, d, c, v) vstore16((v), (c), (p) + (base))
#else
#define AV_CHUNK(p, base, cs, d, c) \
  av_load((p), (base) + 16 * (c) * (cs), (cs), (int)min(16L, (d) - 16 * (c)))
#define AV_PUT_CHUNK(p, base, cs, d, c, v) \
  av_store((p), (base) + 16 * (c) * (cs), (cs), (int)min(16L, (d) - 16 * (c)), (v))
#endif

inline float av_hsum(float16 v) {
  const float8 a = v.lo + v.hi;
  const float4 b = a.lo + a.hi;
  const float2 c = b.lo + b.hi;
  return c.x + c.y;
}

inline float av_hmax(float16 v) {
  const float8 a = fmax(v.lo, v.hi);
  const float4 b = fmax(a.lo, a.hi);
  const float2 c = fmax(b.lo, b.hi);
  return fmax(c.x, c.y);
}

// Lane r of the result is the sum of the lanes of x[r]: each level adds the two halves of every
// group of lanes and packs two vectors' groups into one (16 x 16 -> 8 x (2 x 8) -> 4 x (4 x 4)
// -> 2 x (8 x 2) -> 16 x 1), keeping the rows in order.
inline float16 av_tree(__private const float16* x) {
  float16 y[8], z[4], t[2];
  for (int r = 0; r < 8; ++r)
    y[r] = (float16)(x[2 * r].lo + x[2 * r].hi, x[2 * r + 1].lo + x[2 * r + 1].hi);
  for (int r = 0; r < 4; ++r)
    z[r] = (float16)(y[2 * r].s0123, y[2 * r].s89ab, y[2 * r + 1].s0123, y[2 * r + 1].s89ab) +
           (float16)(y[2 * r].s4567, y[2 * r].scdef, y[2 * r + 1].s4567, y[2 * r + 1].scdef);
  for (int r = 0; r < 2; ++r)
    t[r] = (float16)(z[2 * r].s014589cd, z[2 * r + 1].s014589cd) +
           (float16)(z[2 * r].s2367abef, z[2 * r + 1].s2367abef);
  return (float16)(t[0].even, t[1].even) + (float16)(t[0].odd, t[1].odd);
}

// The dot products of the row r (nc chunks, d columns) with the n (<= 16) rows of p starting at
// base, rows rs apart, columns cs apart; lanes past n are 0.
// (nc is one of the AV_NC* constants: inlined, its loops unroll.)
__attribute__((always_inline)) inline float16 av_dots(__private const float16* r, int nc, long d,
                                                      __global const float* p, long base, long rs,
                                                      long cs, int n) {
  float16 x[16];
  for (int jj = 0; jj < 16; ++jj) {
    float16 t = 0;
    if (jj < n)
      for (int c = 0; c < nc; ++c) t = fma(r[c], AV_CHUNK(p, base + jj * rs, cs, d, c), t);
    x[jj] = t;
  }
  return av_tree(x);
}

// acc += sum over the n rows jj of p (as in av_dots) of w[jj] * row jj. Rows of weight 0 are
// skipped, as the scalar kernels skip them.
__attribute__((always_inline)) inline void av_axpy(__private float16* acc, int nc, long d,
                                                   float16 w, __global const float* p, long base,
                                                   long rs, long cs, int n) {
  float wl[16];
  vstore16(w, 0, wl);
  for (int jj = 0; jj < n; ++jj) {
    if (wl[jj] == 0) continue;
    const float16 s = (float16)(wl[jj]);
    for (int c = 0; c < nc; ++c) acc[c] = fma(s, AV_CHUNK(p, base + jj * rs, cs, d, c), acc[c]);
  }
}

inline int16 av_lane_ids(void) { return (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }

// Dropout factors of 16 elements whose Philox counters start at ctr and step by step: the
// prelude's ocl_philox on 16 lanes at once (word x of each draw, as the scalar kernels use). The
// scalar form, one draw per lane in a loop, made dropout cost 1.6x the whole forward at T = 16.
inline float16 av_keep(float p, float keep_scale, ulong seed, ulong offset, long ctr, long step) {
  const ulong16 i = as_ulong16((long16)(ctr) + convert_long16(av_lane_ids()) * step);
  uint16 c0 = (uint16)((uint)offset), c1 = (uint16)((uint)(offset >> 32));
  uint16 c2 = convert_uint16(i), c3 = convert_uint16(i >> 32);
  uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    const ulong16 p0 = convert_ulong16(c0) * 0xD2511F53ul, p1 = convert_ulong16(c2) * 0xCD9E8D57ul;
    const uint16 n0 = convert_uint16(p1 >> 32) ^ c1 ^ k0, n2 = convert_uint16(p0 >> 32) ^ c3 ^ k1;
    c1 = convert_uint16(p1);
    c3 = convert_uint16(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  const float16 u = convert_float16(c0 >> 8) * (1.0f / 16777216.0f);
  return select((float16)(0.0f), (float16)(keep_scale), u >= p);
}

inline float16 av_lanes(void) {
  return (float16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

__kernel void sdpa_fwd_vec(SDPA_FWD_PARAMS) {
  SDPA_QUERY_ROW();
  SDPA_INPUTS(float);
  __global float* o = (__global float*)(ob + ooff);
  const int nce = AV_NCE, ncv = AV_NCV;
  float16 qr[AV_NCE], acc[AV_NCV];
  const long qbase = sdpa_at(g.q, b, h, i, 0);
  for (int c = 0; c < nce; ++c)
    qr[c] = AV_CHUNK(q, qbase, g.q[3], g.E, c);
  for (int c = 0; c < ncv; ++c) acc[c] = 0;
  float mx = -INFINITY, l = 0;
  const long send = causal ? min(g.S, i + 1) : g.S;
  for (long j0 = 0; j0 < send; j0 += 16) {
    const int n = (int)min(16L, send - j0);
    float16 s = av_dots(qr, nce, g.E, k, sdpa_at(g.k, b, hk, j0, 0), g.k[2], g.k[3], n) * scale;
    if (has_mask) s += av_load(m, sdpa_at(g.m, b, h, i, j0), g.m[3], n);
    const int16 dead = av_lanes() >= (float)n || s == (float16)(-INFINITY);
    s = select(s, (float16)(-INFINITY), dead);
    const float bm = av_hmax(s);
    if (bm == -INFINITY) continue;
    const float mn = fmax(mx, bm);
    const float corr = exp(mx - mn);
    float16 pr = select(ocl_exp_float16(s - mn), (float16)0, dead);
    l = l * corr + av_hsum(pr);
    if (p > 0)
      pr *= av_keep(p, keep_scale, seed, offset, ((b * g.H + h) * g.L + i) * g.S + j0, 1);
    for (int c = 0; c < ncv; ++c) acc[c] *= corr;
    av_axpy(acc, ncv, g.Ev, pr, v, sdpa_at(g.v, b, hk, j0, 0), g.v[2], g.v[3], n);
    mx = mn;
  }
  // A row with every key masked out yields zeros (and lse = -inf), as CPU PyTorch does.
  ((__global float*)(lb + loff))[row] = l > 0 ? mx + log(l) : -INFINITY;
  const float inv = l > 0 ? 1.0f / l : 0.0f;
  const long obase = sdpa_at(g.wo, b, h, i, 0);
  for (int c = 0; c < ncv; ++c)
    AV_PUT_CHUNK(o, obase, g.wo[3], g.Ev, c, acc[c] * inv);
}

__kernel void sdpa_bwd_q_vec(SDPA_BWD_Q_PARAMS) {
  SDPA_QUERY_ROW();
  SDPA_INPUTS(float);
  __global const float* go = (__global const float*)(gob + gooff);
  __global const float* o = (__global const float*)(ob + ooff);
  __global float* dq = (__global float*)(dqb + dqoff);
  __global float* ds = (__global float*)(dsb + dsoff);
  const int nce = AV_NCE, ncv = AV_NCV;
  const float lse = ((__global const float*)(lb + loff))[row];
  float16 qr[AV_NCE], gr[AV_NCV], acc[AV_NCE];
  const long qbase = sdpa_at(g.q, b, h, i, 0), gbase = sdpa_at(g.go, b, h, i, 0);
  const long obase = sdpa_at(g.o, b, h, i, 0);
  float16 dsum = 0;
  for (int c = 0; c < ncv; ++c) {
    gr[c] = AV_CHUNK(go, gbase, g.go[3], g.Ev, c);
    dsum = fma(gr[c], AV_CHUNK(o, obase, g.o[3], g.Ev, c), dsum);
  }
  const float delta = av_hsum(dsum);
  ((__global float*)(db + doff))[row] = delta;
  for (int c = 0; c < nce; ++c) {
    qr[c] = AV_CHUNK(q, qbase, g.q[3], g.E, c);
    acc[c] = 0;
  }
  // Keys past send (causal) or of a row with every key masked (lse = -inf) have dS = 0.
  const long send = lse == -INFINITY ? 0 : causal ? min(g.S, i + 1) : g.S;
  float16 rsum = 0;
  for (long j0 = 0; j0 < send; j0 += 16) {
    const int n = (int)min(16L, send - j0);
    float16 s = av_dots(qr, nce, g.E, k, sdpa_at(g.k, b, hk, j0, 0), g.k[2], g.k[3], n) * scale;
    if (has_mask) s += av_load(m, sdpa_at(g.m, b, h, i, j0), g.m[3], n);
    const int16 dead = av_lanes() >= (float)n || s == (float16)(-INFINITY);
    const float16 pr = select(ocl_exp_float16(s - lse), (float16)0, dead);
    rsum += pr;
    float16 dp = av_dots(gr, ncv, g.Ev, v, sdpa_at(g.v, b, hk, j0, 0), g.v[2], g.v[3], n);
    if (p > 0) dp *= av_keep(p, keep_scale, seed, offset, ((b * g.H + h) * g.L + i) * g.S + j0, 1);
    const float16 dsv = select(pr * (dp - delta), (float16)0, dead);
    if (want_ds) av_store(ds, row * g.S + j0, 1, n, dsv);
    av_axpy(acc, nce, g.E, dsv, k, sdpa_at(g.k, b, hk, j0, 0), g.k[2], g.k[3], n);
  }
  if (want_ds)
    for (long j = send; j < g.S; ++j) ds[row * g.S + j] = 0;
  // The row's weights sum to rsum (attention.cl's SDPA_RINV_TOL): dS, so dQ, scale with them.
  const float r = av_hsum(rsum);
  float rinv = 1;
  if (r > 0 && fabs(r - 1) > SDPA_RINV_TOL) {
    rinv = 1 / r;
    if (want_ds)
      for (long j = 0; j < send; ++j) ds[row * g.S + j] *= rinv;
  }
  ((__global float*)(rb + roff))[row] = rinv;
  const long wbase = sdpa_at(g.wq, b, h, i, 0);
  for (int c = 0; c < nce; ++c)
    AV_PUT_CHUNK(dq, wbase, g.wq[3], g.E, c, acc[c] * (rinv * scale));
}

__kernel void sdpa_bwd_kv_vec(SDPA_BWD_KV_PARAMS) {
  SDPA_KEY_ROW();
  SDPA_INPUTS(float);
  __global const float* go = (__global const float*)(gob + gooff);
  __global const float* lse = (__global const float*)(lb + loff);
  __global const float* delta = (__global const float*)(db + doff);
  __global const float* rinv = (__global const float*)(rb + roff);
  __global float* dk = (__global float*)(dkb + dkoff);
  __global float* dv = (__global float*)(dvb + dvoff);
  const int nce = AV_NCE, ncv = AV_NCV;
  float16 kr[AV_NCE], vr[AV_NCV], dka[AV_NCE], dva[AV_NCV];
  const long kbase = sdpa_at(g.k, b, hk, j, 0), vbase = sdpa_at(g.v, b, hk, j, 0);
  for (int c = 0; c < nce; ++c) {
    kr[c] = AV_CHUNK(k, kbase, g.k[3], g.E, c);
    dka[c] = 0;
  }
  for (int c = 0; c < ncv; ++c) {
    vr[c] = AV_CHUNK(v, vbase, g.v[3], g.Ev, c);
    dva[c] = 0;
  }
  for (long h = hk * group; h < (hk + 1) * group; ++h) {
    const long qrow0 = (b * g.H + h) * g.L;
    for (long i0 = causal ? j : 0; i0 < g.L; i0 += 16) {
      const int n = (int)min(16L, g.L - i0);
      float16 s =
          av_dots(kr, nce, g.E, q, sdpa_at(g.q, b, h, i0, 0), g.q[2], g.q[3], n) * scale;
      if (has_mask) s += av_load(m, sdpa_at(g.m, b, h, i0, j), g.m[2], n);
      const float16 l16 = av_load(lse, qrow0 + i0, 1, n);
      const int16 dead = av_lanes() >= (float)n || s == (float16)(-INFINITY) ||
                         l16 == (float16)(-INFINITY);
      const float16 pr =
          select(ocl_exp_float16(s - l16) * av_load(rinv, qrow0 + i0, 1, n), (float16)0, dead);
      float16 dp =
          av_dots(vr, ncv, g.Ev, go, sdpa_at(g.go, b, h, i0, 0), g.go[2], g.go[3], n);
      float16 pz = pr;
      if (p > 0) {
        const float16 z = av_keep(p, keep_scale, seed, offset, (qrow0 + i0) * g.S + j, g.S);
        pz *= z;
        dp *= z;
      }
      const float16 dsv =
          select(pr * (dp - av_load(delta, qrow0 + i0, 1, n)), (float16)0, dead);
      av_axpy(dva, ncv, g.Ev, pz, go, sdpa_at(g.go, b, h, i0, 0), g.go[2], g.go[3], n);
      av_axpy(dka, nce, g.E, dsv, q, sdpa_at(g.q, b, h, i0, 0), g.q[2], g.q[3], n);
    }
  }
  const long wk = sdpa_at(g.wk, b, hk, j, 0), wv = sdpa_at(g.wv, b, hk, j, 0);
  for (int c = 0; c < ncv; ++c)
    AV_PUT_CHUNK(dv, wv, g.wv[3], g.Ev, c, dva[c]);
  for (int c = 0; c < nce; ++c)
    AV_PUT_CHUNK(dk, wk, g.wk[3], g.E, c, dka[c] * scale);
}
