// Scaled dot-product attention, forward and backward, one work item per row (query row for the
// forward and dQ, key row for dK/dV). Scores are recomputed instead of stored, so memory stays
// O(rows), never O(L*S). Accumulation is in ACC (float for float/half/bf16, double for double),
// in private chunks of SDPA_CHUNK columns; a head dimension above the chunk loops over chunks.
//
// The host defines: ST (storage type), ACC, LD(p, i) (element i of p as ACC) and
// STORE(p, i, v). Strides are in elements, dims (batch, head, row, column), for the inputs and
// for the outputs (which the host allocates in the query's / key's layout); the mask is
// an additive bias already expanded (stride 0 on broadcast dims) to (B, H, L, S).
// Dropout: element (b, h, i, j) is kept when the uniform drawn from Philox counter
// (offset, ((b * H + h) * L + i) * S + j) under seed is >= p; kept values are scaled by
// keep_scale. The backward draws the same numbers, so it uses the same mask.

#define SDPA_CHUNK 64

typedef struct {
  long B, H, Hk, L, S, E, Ev;
  long q[4], k[4], v[4], m[4], o[4], go[4];
  long wo[4], wq[4], wk[4], wv[4];  // where the kernels write out, dQ, dK, dV
} SdpaGeom;

inline long sdpa_at(const long* s, long b, long h, long r, long c) {
  return b * s[0] + h * s[1] + r * s[2] + c * s[3];
}

// Score of (i, j) for head h, kv head hk, or -INFINITY when masked out.
inline ACC sdpa_score(__global const ST* q, __global const ST* k, __global const ST* m,
                      int has_mask, int causal, __private const SdpaGeom* g, long b, long h,
                      long hk, long i, long j, ACC scale) {
  if (causal && j > i) return -INFINITY;
  ACC d = 0;
  for (long e = 0; e < g->E; ++e)
    d += LD(q, sdpa_at(g->q, b, h, i, e)) * LD(k, sdpa_at(g->k, b, hk, j, e));
  d *= scale;
  if (has_mask) d += LD(m, sdpa_at(g->m, b, h, i, j));
  return d;
}

inline ACC sdpa_keep(float p, ACC keep_scale, ulong seed, ulong offset, __private const SdpaGeom* g,
                     long b, long h, long i, long j) {
  if (p <= 0.0f) return (ACC)1;
  const uint4 r = ocl_philox_at(seed, offset, ((b * g->H + h) * g->L + i) * g->S + j);
  return ocl_uniform_float(r.x) >= p ? keep_scale : (ACC)0;
}

// The kernels' argument lists (attention_vec.cl's kernels take the same: the host binds both
// families alike), the row of a query-row kernel, and the typed inputs of every kernel.
#define SDPA_TAIL_PARAMS                                                                           \
  __global const char *qb, ulong qoff, __global const char *kb, ulong koff,                        \
      __global const char *vb, ulong voff, __global const char *mb, ulong moff, int has_mask,      \
      SdpaGeom g, ACC scale, int causal, float p, ACC keep_scale, ulong seed, ulong offset
#define SDPA_FWD_PARAMS                                                                            \
  __global char *ob, ulong ooff, __global char *lb, ulong loff, SDPA_TAIL_PARAMS
// The backward's row weights are exp(s - lse) * rinv: sdpa_bwd_q writes rinv (B, H, L), the
// inverse of the row's sum of exp(s - lse) where that sum is not 1 (a row masked on every key by a
// finite minimum: lse = mx + log(l) rounds to mx there, and each key would weigh 1), else 1.
#define SDPA_RINV_TOL 1e-3f
#define SDPA_BWD_Q_PARAMS                                                                          \
  __global char *dqb, ulong dqoff, __global char *db, ulong doff, __global char *rb, ulong roff,   \
      __global char *dsb, ulong dsoff, int want_ds, __global const char *gob, ulong gooff,         \
      __global const char *ob, ulong ooff, __global const char *lb, ulong loff, SDPA_TAIL_PARAMS
#define SDPA_BWD_KV_PARAMS                                                                         \
  __global char *dkb, ulong dkoff, __global char *dvb, ulong dvoff, __global const char *db,       \
      ulong doff, __global const char *rb, ulong roff, __global const char *gob, ulong gooff,      \
      __global const char *lb, ulong loff, SDPA_TAIL_PARAMS
// (b, h, i) of query row `row` and its key/value head hk; returns past the last row.
#define SDPA_QUERY_ROW()                                                                           \
  const long row = get_global_id(0);                                                               \
  if (row >= g.B * g.H * g.L) return;                                                              \
  const long i = row % g.L, bh = row / g.L, h = bh % g.H, b = bh / g.H;                            \
  const long hk = h / (g.H / g.Hk)
// (b, hk, j) of key row `row` and the query heads per key head; returns past the last row.
#define SDPA_KEY_ROW()                                                                             \
  const long row = get_global_id(0);                                                               \
  if (row >= g.B * g.Hk * g.S) return;                                                             \
  const long j = row % g.S, bhk = row / g.S, hk = bhk % g.Hk, b = bhk / g.Hk;                      \
  const long group = g.H / g.Hk
#define SDPA_INPUTS(T)                                                                             \
  __global const T* q = (__global const T*)(qb + qoff);                                            \
  __global const T* k = (__global const T*)(kb + koff);                                            \
  __global const T* v = (__global const T*)(vb + voff);                                            \
  __global const T* m = (__global const T*)(mb + moff)

// out (B, H, L, Ev) and lse (B, H, L) contiguous.
__kernel void sdpa_fwd(SDPA_FWD_PARAMS) {
  SDPA_QUERY_ROW();
  SDPA_INPUTS(ST);
  __global ST* o = (__global ST*)(ob + ooff);
  ACC mx = -INFINITY, l = 0;
  if (g.Ev <= SDPA_CHUNK) {
    // One pass with an online softmax: the running output is rescaled when the maximum grows.
    ACC acc[SDPA_CHUNK];
    for (long c = 0; c < g.Ev; ++c) acc[c] = 0;
    for (long j = 0; j < g.S; ++j) {
      const ACC s = sdpa_score(q, k, m, has_mask, causal, &g, b, h, hk, i, j, scale);
      if (s == -INFINITY) continue;
      if (s > mx) {
        const ACC corr = exp(mx - s);
        l *= corr;
        for (long c = 0; c < g.Ev; ++c) acc[c] *= corr;
        mx = s;
      }
      const ACC e = exp(s - mx);
      l += e;
      const ACC ez = e * sdpa_keep(p, keep_scale, seed, offset, &g, b, h, i, j);
      if (ez == 0) continue;
      for (long c = 0; c < g.Ev; ++c) acc[c] += ez * LD(v, sdpa_at(g.v, b, hk, j, c));
    }
    ((__global ACC*)(lb + loff))[row] = l > 0 ? mx + log(l) : -INFINITY;
    for (long c = 0; c < g.Ev; ++c) STORE(o, sdpa_at(g.wo, b, h, i, c), l > 0 ? acc[c] / l : (ACC)0);
    return;
  }
  // Wider value heads: a first pass for the log-sum-exp, then one pass per column chunk.
  for (long j = 0; j < g.S; ++j) {
    const ACC s = sdpa_score(q, k, m, has_mask, causal, &g, b, h, hk, i, j, scale);
    if (s == -INFINITY) continue;
    if (s > mx) {
      l = l * exp(mx - s) + (ACC)1;
      mx = s;
    } else {
      l += exp(s - mx);
    }
  }
  // A row with every key masked out yields zeros (and lse = -inf), as CPU PyTorch does. The
  // weights are exp(s - mx) / l, not exp(s - lse): where a finite mask (finfo.min, -1e9) masks
  // every key, mx + log(l) rounds to mx and exp(s - lse) would give each key weight 1.
  const ACC lse = l > 0 ? mx + log(l) : -INFINITY;
  const ACC inv_l = l > 0 ? 1 / l : 0;
  ((__global ACC*)(lb + loff))[row] = lse;
  for (long c0 = 0; c0 < g.Ev; c0 += SDPA_CHUNK) {
    const long cn = min((long)SDPA_CHUNK, g.Ev - c0);
    ACC acc[SDPA_CHUNK];
    for (long c = 0; c < cn; ++c) acc[c] = 0;
    if (l > 0) {
      for (long j = 0; j < g.S; ++j) {
        const ACC s = sdpa_score(q, k, m, has_mask, causal, &g, b, h, hk, i, j, scale);
        if (s == -INFINITY) continue;
        const ACC pz =
            exp(s - mx) * inv_l * sdpa_keep(p, keep_scale, seed, offset, &g, b, h, i, j);
        if (pz == 0) continue;
        for (long c = 0; c < cn; ++c) acc[c] += pz * LD(v, sdpa_at(g.v, b, hk, j, c0 + c));
      }
    }
    for (long c = 0; c < cn; ++c) STORE(o, sdpa_at(g.wo, b, h, i, c0 + c), acc[c]);
  }
}

// dQ (B, H, L, E) contiguous, delta (B, H, L) = rowsum(dO * O), and, when dbias is requested,
// dS (B, H, L, S) contiguous in ACC.
__kernel void sdpa_bwd_q(SDPA_BWD_Q_PARAMS) {
  SDPA_QUERY_ROW();
  SDPA_INPUTS(ST);
  __global const ST* go = (__global const ST*)(gob + gooff);
  __global const ST* o = (__global const ST*)(ob + ooff);
  __global ST* dq = (__global ST*)(dqb + dqoff);
  __global ACC* ds = (__global ACC*)(dsb + dsoff);
  const ACC lse = ((__global const ACC*)(lb + loff))[row];
  ACC delta = 0;
  for (long e = 0; e < g.Ev; ++e)
    delta += LD(go, sdpa_at(g.go, b, h, i, e)) * LD(o, sdpa_at(g.o, b, h, i, e));
  ((__global ACC*)(db + doff))[row] = delta;
  ACC rsum = 0, rinv = 1;
  for (long c0 = 0; c0 < g.E; c0 += SDPA_CHUNK) {
    const long cn = min((long)SDPA_CHUNK, g.E - c0);
    ACC acc[SDPA_CHUNK];
    for (long c = 0; c < cn; ++c) acc[c] = 0;
    for (long j = 0; j < g.S; ++j) {
      const ACC s = sdpa_score(q, k, m, has_mask, causal, &g, b, h, hk, i, j, scale);
      ACC dsv = 0;
      if (s != -INFINITY && lse != -INFINITY) {
        const ACC pr = exp(s - lse);
        if (c0 == 0) rsum += pr;
        const ACC z = sdpa_keep(p, keep_scale, seed, offset, &g, b, h, i, j);
        ACC dp = 0;
        if (z != 0)
          for (long e = 0; e < g.Ev; ++e)
            dp += LD(go, sdpa_at(g.go, b, h, i, e)) * LD(v, sdpa_at(g.v, b, hk, j, e));
        dsv = pr * (dp * z - delta);
      }
      if (want_ds && c0 == 0) ds[row * g.S + j] = dsv;
      if (dsv == 0) continue;
      for (long c = 0; c < cn; ++c) acc[c] += dsv * LD(k, sdpa_at(g.k, b, hk, j, c0 + c));
    }
    if (c0 == 0) {  // dS is linear in the weights: rescaled once their sum is known
      if (rsum > 0 && fabs(rsum - 1) > SDPA_RINV_TOL) {
        rinv = 1 / rsum;
        if (want_ds)
          for (long j = 0; j < g.S; ++j) ds[row * g.S + j] *= rinv;
      }
      ((__global ACC*)(rb + roff))[row] = rinv;
    }
    for (long c = 0; c < cn; ++c)
      STORE(dq, sdpa_at(g.wq, b, h, i, c0 + c), acc[c] * rinv * scale);
  }
  if (g.E == 0) ((__global ACC*)(rb + roff))[row] = rinv;
}

// dK (B, Hk, S, E) and dV (B, Hk, S, Ev) at strides wk / wv; one work item per key row, summing over
// the query heads that share it (GQA) and over query rows. Needs delta from sdpa_bwd_q.
__kernel void sdpa_bwd_kv(SDPA_BWD_KV_PARAMS) {
  SDPA_KEY_ROW();
  SDPA_INPUTS(ST);
  __global const ST* go = (__global const ST*)(gob + gooff);
  __global const ACC* lse = (__global const ACC*)(lb + loff);
  __global const ACC* delta = (__global const ACC*)(db + doff);
  __global const ACC* rinv = (__global const ACC*)(rb + roff);
  __global ST* dk = (__global ST*)(dkb + dkoff);
  __global ST* dv = (__global ST*)(dvb + dvoff);
  // dV_j = sum_i P_ij Z_ij dO_i
  for (long c0 = 0; c0 < g.Ev; c0 += SDPA_CHUNK) {
    const long cn = min((long)SDPA_CHUNK, g.Ev - c0);
    ACC acc[SDPA_CHUNK];
    for (long c = 0; c < cn; ++c) acc[c] = 0;
    for (long h = hk * group; h < (hk + 1) * group; ++h) {
      for (long i = causal ? j : 0; i < g.L; ++i) {
        const long qrow = (b * g.H + h) * g.L + i;
        const ACC s = sdpa_score(q, k, m, has_mask, causal, &g, b, h, hk, i, j, scale);
        if (s == -INFINITY || lse[qrow] == -INFINITY) continue;
        const ACC pz = exp(s - lse[qrow]) * rinv[qrow] *
                       sdpa_keep(p, keep_scale, seed, offset, &g, b, h, i, j);
        if (pz == 0) continue;
        for (long c = 0; c < cn; ++c) acc[c] += pz * LD(go, sdpa_at(g.go, b, h, i, c0 + c));
      }
    }
    for (long c = 0; c < cn; ++c) STORE(dv, sdpa_at(g.wv, b, hk, j, c0 + c), acc[c]);
  }
  // dK_j = scale * sum_i dS_ij Q_i, dS_ij = P_ij (Z_ij dO_i . V_j - delta_i)
  for (long c0 = 0; c0 < g.E; c0 += SDPA_CHUNK) {
    const long cn = min((long)SDPA_CHUNK, g.E - c0);
    ACC acc[SDPA_CHUNK];
    for (long c = 0; c < cn; ++c) acc[c] = 0;
    for (long h = hk * group; h < (hk + 1) * group; ++h) {
      for (long i = causal ? j : 0; i < g.L; ++i) {
        const long qrow = (b * g.H + h) * g.L + i;
        const ACC s = sdpa_score(q, k, m, has_mask, causal, &g, b, h, hk, i, j, scale);
        if (s == -INFINITY || lse[qrow] == -INFINITY) continue;
        const ACC pr = exp(s - lse[qrow]) * rinv[qrow];
        const ACC z = sdpa_keep(p, keep_scale, seed, offset, &g, b, h, i, j);
        ACC dp = 0;
        if (z != 0)
          for (long e = 0; e < g.Ev; ++e)
            dp += LD(go, sdpa_at(g.go, b, h, i, e)) * LD(v, sdpa_at(g.v, b, hk, j, e));
        const ACC dsv = pr * (dp * z - delta[qrow]);
        for (long c = 0; c < cn; ++c) acc[c] += dsv * LD(q, sdpa_at(g.q, b, h, i, c0 + c));
      }
    }
    for (long c = 0; c < cn; ++c) STORE(dk, sdpa_at(g.wk, b, hk, j, c0 + c), acc[c] * scale);
  }
}
