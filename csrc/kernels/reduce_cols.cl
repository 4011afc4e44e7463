// ---- CPU drivers: reductions and softmax over a non-last dimension, in column tiles ----------
// Compiled after softmax.cl in the same program (ACC, ACCV, VW, XT, YT, LOAD_*/STORE_*,
// VLOAD_*/VSTORE_*, v_exp and SM_MAX come from there and from the host's header), or alone for
// integer inputs (RC_INT: the host's header gives the same names).
//
// The input is a contiguous (outer, dim, inner) view, inner > 1. Work item (o, g, t) owns the
// columns [t * tw, t * tw + tw) of outer slice o (up to RC_MAXV vectors: 4 KB of float or
// double per row) and the rows [g * grows, (g + 1) * grows) of dim. It walks its rows in
// sub-chunks of RC_RB, each row read as one contiguous stretch (whole cache lines, and pages the
// prefetchers follow), with per-column statistics in private arrays of vectors (L1). Two-pass
// statistics (var/std: the mean, then the centred sums; logsumexp and softmax: the maximum, then
// the sum of exp) take their second pass over the sub-chunk while it is still in the caches,
// column vector by column vector, and merge the sub-chunk into the running statistics (Chan's
// formula; a rescale by one exp per column and sub-chunk). When there are too few tiles to fill
// the cores the rows are split into groups: the items then store their statistics in a partial
// buffer [o][g][2][innerp] (innerp: inner rounded up to VW) and rc_final merges the groups, after
// which softmax's writes run over the same (o, g, t) items (phase 1). Those writes walk the rows
// as the statistics do (sub-chunks, strips of vectors in registers) and, when the host says the
// tensors overflow the last-level cache (nt), store whole aligned float vectors non-temporally.
//
// The same tiles and groups serve prod, nansum and the vector norms of orders 2, 1, 0 and +-inf
// (rc_reduce, kinds 9-15), and max/min with their indices, argmax and argmin (rc_index).
//
// Integer and bool inputs (RC_INT, reduce_cols.cpp's own program, without softmax.cl) take sum and
// prod (ACC long), amax/amin and max/min with indices (ACC int, or long for int64) on the same
// tiles; the float-only kinds and kernels are left out of that program.
//
// Lanes past the end of a tile's last vector are loaded (from the elements that follow, or as 0
// at the end of the tensor), computed, and never stored.

#define RC_MAXV 64
#define RC_RB 32
#define RC_LSE 0
#define RC_VAR 1
#define RC_STD 2
#define RC_SUM 3
#define RC_MEAN 4
#define RC_AMAX 5
#define RC_AMIN 6
#define RC_SOFTMAX 7
#define RC_SOFTMAX_BWD 8
#define RC_PROD 9
#define RC_NANSUM 10
#define RC_NORM2 11
#define RC_NORM1 12
#define RC_NORMINF 13
#define RC_NORMNEGINF 14
#define RC_NORM0 15
#define RC_MAXI 16
#define RC_MINI 17

// The start values of maxima and minima: +-inf, or an integer program's (RC_INT) type limits.
#ifndef RC_LOWEST
#define RC_LOWEST ((ACC)(-INFINITY))
#define RC_HIGHEST ((ACC)INFINITY)
#endif

// The row index that goes with each lane of an indexed kind (RC_MAXI, RC_MINI), in the integer
// vector type that comparisons of ACCV give (so that select() takes it as a mask and a value).
#if VW == 16
typedef int16 RC_IV;
typedef int RC_I;
typedef long16 RC_LV;
#define RC_IDX_LONG(v) convert_long16(v)
#else
typedef long8 RC_IV;
typedef long RC_I;
typedef long8 RC_LV;
#define RC_IDX_LONG(v) (v)
#endif

#if VW == 16
#define RC_VLOADP(p) vload16(0, p)
#define RC_VSTOREP(v, p) vstore16(v, 0, p)
#else
#define RC_VLOADP(p) vload8(0, p)
#define RC_VSTOREP(v, p) vstore8(v, 0, p)
#endif

// rc_ld<n>(p, k): the k (1..VW) elements at p as a vector; rc_ld<n>_end(p, k, end): the last
// vector of a tile row, a full load when it stays inside the tensor (end: one past its last
// element; the extra lanes read other elements and are never stored), else lane by lane;
// rc_st<n>(p, k, v): stores of the first k lanes. One set per storage type: n = x (XT through
// LOAD_X/VLOAD_X...) and n = y (YT).
#define RC_ACCESS(n, N, T)                                                  \
  inline ACCV rc_ld##n(__global const T* p, int k) {                        \
    if (k == VW) return VLOAD_##N(p, 0);                                    \
    ACC t[VW];                                                              \
    for (int i = 0; i < VW; ++i) t[i] = i < k ? LOAD_##N(p, i) : (ACC)0;    \
    return RC_VLOADP(t);                                                    \
  }                                                                         \
  inline ACCV rc_ld##n##_end(__global const T* p, int k, __global const T* end) { \
    return p + VW <= end ? VLOAD_##N(p, 0) : rc_ld##n(p, k);                \
  }                                                                         \
  inline void rc_st##n(__global T* p, int k, ACCV v) {                      \
    if (k == VW) {                                                          \
      VSTORE_##N(p, 0, v);                                                  \
      return;                                                               \
    }                                                                       \
    ACC t[VW];                                                              \
    RC_VSTOREP(v, t);                                                       \
    for (int i = 0; i < k; ++i) STORE_##N(p, i, t[i]);                      \
  }
RC_ACCESS(x, X, XT)
RC_ACCESS(y, Y, YT)

// amax/amin (rc_max_nan, rc_min_nan): any NaN makes the result NaN. max/min with indices
// (rc_take_max, rc_take_min): x (at rows r) replaces the running (m, i) where it is strictly
// greater (smaller), so that ties keep the first occurrence, or where it is NaN and m is not, so
// that the first NaN wins and stays, as on CPU. For integers x != x is false and folds away.
#define RC_EXTREMUM(name, OP)                                          \
  inline ACCV rc_##name##_nan(ACCV a, ACCV x) {                        \
    return select(a, x, (x OP a) | (x != x));                          \
  }                                                                    \
  inline void rc_take_##name(ACCV* m, RC_IV* i, ACCV x, RC_IV r) {     \
    const RC_IV t = (x OP *m) | ((x != x) & (*m == *m));              \
    *m = select(*m, x, t);                                             \
    *i = select(*i, r, t);                                             \
  }
RC_EXTREMUM(max, >)
RC_EXTREMUM(min, <)

#ifndef RC_INT
// The shift of a maximum: an infinite one shifts by 0, so that inf stays inf and all -inf gives
// -inf (logsumexp); softmax replaces those columns' sums by NaN, as CPU's exp(inf - inf) does.
inline ACCV rc_shift(ACCV m) {
  return select(m, (ACCV)0, fabs(m) == (ACCV)INFINITY);
}
// (m, s), s = sum of exp(x - rc_shift(m)) (m skips NaN, which s carries), merged with (m2, s2).
inline void rc_lse_merge(ACCV* m, ACCV* s, ACCV m2, ACCV s2) {
  const ACCV mm = SM_MAX(*m, m2), sh = rc_shift(mm);
  const ACCV t1 = select(*s * v_exp(rc_shift(*m) - sh), (ACCV)0, *s == (ACCV)0);
  const ACCV t2 = select(s2 * v_exp(rc_shift(m2) - sh), (ACCV)0, s2 == (ACCV)0);
  *m = mm;
  *s = t1 + t2;
}
// Chan et al.: (mean, m2) over n rows merged with (mean2, m22) over n2 rows.
inline void rc_var_merge(ACCV* mean, ACCV* m2, long n, ACCV mean2, ACCV m22, long n2) {
  if (n == 0) {
    *mean = mean2;
    *m2 = m22;
    return;
  }
  const ACC f = (ACC)n2 / (ACC)(n + n2);
  const ACCV d = mean2 - *mean;
  *mean += d * f;
  *m2 += m22 + d * d * ((ACC)n * f);
}

#endif  // RC_INT

inline void rc_init(int kind, int nv, ACCV* a, ACCV* b) {
  const ACC a0 =
      kind == RC_LSE || kind == RC_AMAX || kind == RC_SOFTMAX || kind == RC_MAXI ? RC_LOWEST
      : kind == RC_AMIN || kind == RC_MINI || kind == RC_NORMNEGINF               ? RC_HIGHEST
      : kind == RC_PROD                                                           ? (ACC)1
                                                                                  : (ACC)0;
  for (int v = 0; v < nv; ++v) {
    a[v] = (ACCV)a0;
    b[v] = (ACCV)0;
  }
}

// One row into the running value of the NaN-skipping sum and the norms, and the loop over a
// sub-chunk's rows with one of them (a loop per kind, so that the kind is never tested per
// element). Other orders p stay with the reduction generator: here PoCL 3.1's double8 pow gave
// 2^-3 for pow(2, 3) in some lanes when the other lanes held 0, -0.0, +-1 and +-2 (wrong norms
// of order 3 for a third of the columns; the generator's scalar pow is right).
#define RC_F_SUM(a, x, i) ((a) + (x))
#define RC_F_PROD(a, x, i) ((a) * (x))
#define RC_F_AMAX(a, x, i) rc_max_nan((a), (x))
#define RC_F_AMIN(a, x, i) rc_min_nan((a), (x))
#define RC_F_NANSUM(a, x, i) ((a) + select((x), (ACCV)0, (x) != (x)))
#define RC_F_NORM2(a, x, i) ((a) + (x) * (x))
#define RC_F_NORM1(a, x, i) ((a) + fabs(x))
#define RC_F_NORMINF(a, x, i) rc_max_nan((a), fabs(x))
#define RC_F_NORMNEGINF(a, x, i) rc_min_nan((a), fabs(x))
#define RC_F_NORM0(a, x, i) ((a) + select((ACCV)0, (ACCV)1, (x) != (ACCV)0))
#define RC_F_VAR1(a, x, i) ((a) + ((x) - k[i]))
#define RC_F_SMMAX(a, x, i) SM_MAX((a), (x))
// The column vectors of a sub-chunk's rows [rb, re) in strips of RC_S, each strip's running
// values in RC_S vector variables (registers) over the strip's rows, from S[v] and back into
// D[v] once per strip and sub-chunk: with the private arrays indexed in the row loop, PoCL's LLVM
// loaded and stored every accumulator on every row. The strips take the vectors that load whole
// (all but a tile's partial last one); the rest go one vector at a time, in a register too. Each
// column still sees its rows in order, so the results are the same as row by row.
#define RC_S 8
#define RC_REP(M, A) M(0, A) M(1, A) M(2, A) M(3, A) M(4, A) M(5, A) M(6, A) M(7, A)
#define RC_T_LD(j, S) ACCV t##j = (S)[v + j];
#define RC_T_STEP(j, F) t##j = F(t##j, VLOAD_X(p, j * VW), v + j);
#define RC_T_ST(j, D) (D)[v + j] = t##j;
#define RC_STRIP_ROWS(D, S, F)                                                   \
  {                                                                              \
    const int nfull = wl == VW ? nv : nv - 1;                                    \
    int v = 0;                                                                   \
    for (; v + RC_S <= nfull; v += RC_S) {                                       \
      RC_REP(RC_T_LD, S)                                                         \
      for (long r = rb; r < re; ++r) {                                           \
        __global const XT* p = x + r * inner + v * VW;                           \
        RC_REP(RC_T_STEP, F)                                                     \
      }                                                                          \
      RC_REP(RC_T_ST, D)                                                         \
    }                                                                            \
    for (; v < nv; ++v) {                                                        \
      const int lanes = v == nv - 1 ? wl : VW;                                   \
      ACCV t0 = (S)[v];                                                          \
      for (long r = rb; r < re; ++r)                                             \
        t0 = F(t0, rc_ldx_end(x + r * inner + v * VW, lanes, xend), v);          \
      (D)[v] = t0;                                                               \
    }                                                                            \
  }
#define RC_FOLD_ROWS(F) RC_STRIP_ROWS(a, a, F)
// Two partial values of the elementwise kinds (kinds 3-6 and 9-15) merged.
inline ACCV rc_merge(int kind, ACCV a, ACCV a2) {
  switch (kind) {
    case RC_AMAX:
    case RC_NORMINF:
      return rc_max_nan(a, a2);
    case RC_AMIN:
    case RC_NORMNEGINF:
      return rc_min_nan(a, a2);
    case RC_PROD:
      return a * a2;
    default:
      return a + a2;
  }
}

// The statistics of kind (RC_SOFTMAX: logsumexp's) over rows [r0, r1) of the nv vectors at x
// (wl lanes valid in the last; xend: the end of the tensor), into (a, b); c is scratch.
// var/std walk x - k (k: the column's first row, the same for every group), so that the means
// merged between sub-chunks and groups are small: with the absolute means, data at 1e4 +- 0.3 lost
// 3e-4 of the variance to their rounding; the mean gets k back when it is written.
#define RC_E_LD(j, A) const ACCV h##j = rc_shift(c[v + j]); ACCV e##j = 0;
#define RC_E_STEP(j, A) e##j += v_exp(VLOAD_X(p, j * VW) - h##j);
#define RC_E_ST(j, A) d[v + j] = e##j;
inline void rc_walk(int kind, __global const XT* x, __global const XT* xend, long inner, long r0,
                    long r1, int nv, int wl, ACCV* a, ACCV* b, ACCV* c, const ACCV* k, ACCV* d) {
  long n = 0;  // rows merged so far (var/std)
  for (long rb = r0; rb < r1; rb += RC_RB) {
    const long re = min(rb + (long)RC_RB, r1);
    const int cnt = (int)(re - rb);
    if (kind == RC_SUM || kind == RC_MEAN) {
      RC_FOLD_ROWS(RC_F_SUM)
    } else if (kind == RC_AMAX) {
      RC_FOLD_ROWS(RC_F_AMAX)
    } else if (kind == RC_AMIN) {
      RC_FOLD_ROWS(RC_F_AMIN)
    } else if (kind == RC_PROD) {
      RC_FOLD_ROWS(RC_F_PROD)
    }
#ifndef RC_INT
    else if (kind == RC_NANSUM) {
      RC_FOLD_ROWS(RC_F_NANSUM)
    } else if (kind == RC_NORM2) {
      RC_FOLD_ROWS(RC_F_NORM2)
    } else if (kind == RC_NORM1) {
      RC_FOLD_ROWS(RC_F_NORM1)
    } else if (kind == RC_NORMINF) {
      RC_FOLD_ROWS(RC_F_NORMINF)
    } else if (kind == RC_NORMNEGINF) {
      RC_FOLD_ROWS(RC_F_NORMNEGINF)
    } else if (kind == RC_NORM0) {
      RC_FOLD_ROWS(RC_F_NORM0)
    } else if (kind == RC_VAR || kind == RC_STD) {
      for (int v = 0; v < nv; ++v) c[v] = 0;
      RC_STRIP_ROWS(c, c, RC_F_VAR1)
      // Corrected two-pass over the sub-chunk (the rounding of its mean taken back out with u).
      for (int v = 0; v < nv; ++v) {
        const int lanes = v == nv - 1 ? wl : VW;
        const ACCV mc = c[v] / (ACC)cnt;
        ACCV u = 0, q = 0;
        for (long r = rb; r < re; ++r) {
          const ACCV e = (rc_ldx_end(x + r * inner + v * VW, lanes, xend) - k[v]) - mc;
          u += e;
          q += e * e;
        }
        const ACCV m2 = q - u * u / (ACC)cnt;
        rc_var_merge(&a[v], &b[v], n, mc + u / (ACC)cnt, select(m2, (ACCV)0, m2 < (ACCV)0), cnt);
      }
      n += cnt;
    } else {  // RC_LSE, RC_SOFTMAX
      RC_STRIP_ROWS(c, a, RC_F_SMMAX)
      // The sums of exp(x - shift) over the sub-chunk (in the caches now), in strips of RC_S
      // vectors as above, into k (scratch here), then merged into the running sums.
      {
        const int nfull = wl == VW ? nv : nv - 1;
        int v = 0;
        for (; v + RC_S <= nfull; v += RC_S) {
          RC_REP(RC_E_LD, 0)
          for (long r = rb; r < re; ++r) {
            __global const XT* p = x + r * inner + v * VW;
            RC_REP(RC_E_STEP, 0)
          }
          RC_REP(RC_E_ST, 0)
        }
        for (; v < nv; ++v) {
          const int lanes = v == nv - 1 ? wl : VW;
          const ACCV sh = rc_shift(c[v]);
          ACCV s = 0;
          for (long r = rb; r < re; ++r)
            s += v_exp(rc_ldx_end(x + r * inner + v * VW, lanes, xend) - sh);
          d[v] = s;
        }
      }
      for (int v = 0; v < nv; ++v) {
        const ACCV sh = rc_shift(c[v]), s = d[v];
        // The running sum rescaled to the new maximum (nothing to rescale in the first sub-chunk).
        b[v] = rb == r0 ? s
                        : select(b[v] * v_exp(rc_shift(a[v]) - sh), (ACCV)0, b[v] == (ACCV)0) + s;
        a[v] = c[v];
      }
    }
#endif  // RC_INT
  }
}

// Final value(s) of one vector of outputs (lanes of them valid).
inline void rc_out(int kind, __global YT* o0, __global YT* o1, int lanes, ACCV a, ACCV b,
                   long dim, ACC corr, int has_o1) {
  ACCV r = a;
#ifndef RC_INT
  if (kind == RC_LSE) {
    r = rc_shift(a) + log(b);
  } else if (kind == RC_VAR || kind == RC_STD) {
    r = b / fmax((ACC)0, (ACC)dim - corr);
    if (kind == RC_STD) r = sqrt(r);
    if (has_o1) rc_sty(o1, lanes, a);
  } else if (kind == RC_MEAN) {
    r = a / (ACC)dim;
  } else if (kind == RC_NORM2) {
    r = sqrt(a);
  }
#endif
  rc_sty(o0, lanes, r);
}

// Item geometry shared by the kernels; returns 0 for items past the end.
#define RC_ITEM                                                            \
  const long ntiles = (inner + tw - 1) / tw;                               \
  const long gid = get_global_id(0);                                       \
  if (gid >= outer * groups * ntiles) return;                              \
  const long t = gid % ntiles, g = (gid / ntiles) % groups;                \
  const long o = gid / (ntiles * groups);                                  \
  const long c0 = t * tw, w = min(tw, inner - c0);                         \
  const int nv = (int)((w + VW - 1) / VW), wl = (int)(w - (nv - 1) * VW); \
  const long r0 = g * grows, r1 = min(dim, r0 + grows);                    \
  const long innerp = (inner + VW - 1) / VW * VW;                          \
  __global ACC* part = (__global ACC*)(pb + poff) + (o * groups + g) * 2 * innerp + c0;

inline void rc_store_part(__global ACC* part, long innerp, int nv, const ACCV* a, const ACCV* b) {
  for (int v = 0; v < nv; ++v) {
    RC_VSTOREP(a[v], part + v * VW);
    RC_VSTOREP(b[v], part + innerp + v * VW);
  }
}

// Reductions (kinds 0-6 and 9-15) into o0 (and the mean into o1 for var/std when has_o1), outputs of
// the contiguous (outer, inner) shape.
__kernel void rc_reduce(__global char* o0b, ulong o0off, __global char* o1b, ulong o1off,
                        __global const char* xb, ulong xoff, __global char* pb, ulong poff,
                        long outer, long dim, long inner, long tw, long groups, long grows,
                        int kind, ACC corr, int has_o1) {
  RC_ITEM
  __global const XT* x = (__global const XT*)(xb + xoff) + o * dim * inner + c0;
  __global const XT* xend = (__global const XT*)(xb + xoff) + outer * dim * inner;
  ACCV a[RC_MAXV], b[RC_MAXV], c[RC_MAXV], k[RC_MAXV];
  const bool var = kind == RC_VAR || kind == RC_STD;
  if (var)
    for (int v = 0; v < nv; ++v) k[v] = rc_ldx_end(x + v * VW, v == nv - 1 ? wl : VW, xend);
  rc_init(kind, nv, a, b);
  rc_walk(kind, x, xend, inner, r0, r1, nv, wl, a, b, c, k, k);  // LSE: k is scratch
  if (groups > 1) {
    rc_store_part(part, innerp, nv, a, b);  // var/std: means relative to k (rc_final adds it)
    return;
  }
  if (var)
    for (int v = 0; v < nv; ++v) a[v] += k[v];
  __global YT* o0 = (__global YT*)(o0b + o0off) + o * inner + c0;
  __global YT* o1 = (__global YT*)(o1b + o1off) + o * inner + c0;
  for (int v = 0; v < nv; ++v)
    rc_out(kind, o0 + v * VW, o1 + v * VW, v == nv - 1 ? wl : VW, a[v], b[v], dim, corr, has_o1);
}

// The indices (as long) and, when has_v, the values of one vector of outputs (lanes valid).
inline void rc_out_idx(__global long* oi, __global YT* ov, int has_v, int lanes, ACCV m,
                       RC_IV i) {
  const RC_LV l = RC_IDX_LONG(i);
  if (lanes == VW) {
    RC_VSTOREP(l, oi);
  } else {
    long t[VW];
    RC_VSTOREP(l, t);
    for (int k = 0; k < lanes; ++k) oi[k] = t[k];
  }
  if (has_v) rc_sty(ov, lanes, m);
}

// max/min with indices (RC_MAXI, RC_MINI; argmax/argmin without values) into o0 (indices, long)
// and, when has_o1, o1 (values); geometry and groups as rc_reduce. The rows are counted in
// RC_IV's lanes: int for float (the host keeps dim below 2^31 there), long for double.
__kernel void rc_index(__global char* o0b, ulong o0off, __global char* o1b, ulong o1off,
                       __global const char* xb, ulong xoff, __global char* pb, ulong poff,
                       long outer, long dim, long inner, long tw, long groups, long grows,
                       int kind, int has_o1) {
  RC_ITEM
  __global const XT* x = (__global const XT*)(xb + xoff) + o * dim * inner + c0;
  __global const XT* xend = (__global const XT*)(xb + xoff) + outer * dim * inner;
  ACCV m[RC_MAXV];
  RC_IV ix[RC_MAXV];
  const int k = nv - 1;
  for (int v = 0; v < nv; ++v) {
    m[v] = kind == RC_MAXI ? (ACCV)RC_LOWEST : (ACCV)RC_HIGHEST;
    ix[v] = (RC_IV)((RC_I)r0);
  }
  // In sub-chunks of RC_RB rows, strips of RC_S vectors in registers (as RC_STRIP_ROWS).
#define RC_I_LD(j, A) ACCV t##j = m[v + j]; RC_IV i##j = ix[v + j];
#define RC_I_STEP(j, TAKE) TAKE(&t##j, &i##j, VLOAD_X(p, j * VW), rv);
#define RC_I_ST(j, A) m[v + j] = t##j; ix[v + j] = i##j;
#define RC_INDEX_ROWS(TAKE)                                                      \
  for (long rb = r0; rb < r1; rb += RC_RB) {                                     \
    const long re = min(rb + (long)RC_RB, r1);                                   \
    int v = 0;                                                                   \
    for (; v + RC_S <= nfull; v += RC_S) {                                       \
      RC_REP(RC_I_LD, 0)                                                         \
      for (long r = rb; r < re; ++r) {                                           \
        __global const XT* p = x + r * inner + v * VW;                           \
        const RC_IV rv = (RC_IV)((RC_I)r);                                       \
        RC_REP(RC_I_STEP, TAKE)                                                  \
      }                                                                          \
      RC_REP(RC_I_ST, 0)                                                         \
    }                                                                            \
    for (; v < nv; ++v) {                                                        \
      const int lanes = v == k ? wl : VW;                                        \
      ACCV t0 = m[v];                                                            \
      RC_IV i0 = ix[v];                                                          \
      for (long r = rb; r < re; ++r)                                             \
        TAKE(&t0, &i0, rc_ldx_end(x + r * inner + v * VW, lanes, xend), (RC_IV)((RC_I)r)); \
      m[v] = t0;                                                                 \
      ix[v] = i0;                                                                \
    }                                                                            \
  }
  const int nfull = wl == VW ? nv : nv - 1;
  if (kind == RC_MAXI) {
    RC_INDEX_ROWS(rc_take_max)
  } else {
    RC_INDEX_ROWS(rc_take_min)
  }
#undef RC_INDEX_ROWS
  if (groups > 1) {
    for (int v = 0; v < nv; ++v) {
      RC_VSTOREP(m[v], part + v * VW);
      RC_VSTOREP(ix[v], (__global RC_I*)(part + innerp) + v * VW);
    }
    return;
  }
  __global long* oi = (__global long*)(o0b + o0off) + o * inner + c0;
  __global YT* ov = (__global YT*)(o1b + o1off) + o * inner + c0;
  for (int v = 0; v < nv; ++v)
    rc_out_idx(oi + v * VW, ov + v * VW, has_o1, v == k ? wl : VW, m[v], ix[v]);
}

// Merges the groups' partials, one item per (o, vector of columns): reductions write their
// outputs; the softmax statistics (RC_SOFTMAX, RC_SOFTMAX_BWD) go back to group 0's slots.
__kernel void rc_final(__global char* o0b, ulong o0off, __global char* o1b, ulong o1off,
                       __global char* pb, ulong poff, long outer, long dim, long inner,
                       long groups, long grows, int kind, ACC corr, int has_o1,
                       __global const char* xb, ulong xoff) {
  const long innerp = (inner + VW - 1) / VW * VW, nvo = innerp / VW;
  const long gid = get_global_id(0);
  if (gid >= outer * nvo) return;
  const long o = gid / nvo, col = (gid % nvo) * VW;
  __global ACC* p = (__global ACC*)(pb + poff) + o * groups * 2 * innerp + col;
  if (kind == RC_MAXI || kind == RC_MINI) {  // the groups in order: ties keep the earlier one
    __global const RC_I* pi = (__global const RC_I*)p;
    ACCV m = RC_VLOADP(p);
    RC_IV i = RC_VLOADP(pi + innerp);
    for (long g = 1; g < groups; ++g) {
      const ACCV m2 = RC_VLOADP(p + g * 2 * innerp);
      const RC_IV i2 = RC_VLOADP(pi + (g * 2 + 1) * innerp);
      if (kind == RC_MAXI)
        rc_take_max(&m, &i, m2, i2);
      else
        rc_take_min(&m, &i, m2, i2);
    }
    rc_out_idx((__global long*)(o0b + o0off) + o * inner + col,
               (__global YT*)(o1b + o1off) + o * inner + col, has_o1,
               (int)min((long)VW, inner - col), m, i);
    return;
  }
  ACCV a = RC_VLOADP(p), b = RC_VLOADP(p + innerp);
  long n = min(grows, dim);
  for (long g = 1; g < groups; ++g) {
    const ACCV a2 = RC_VLOADP(p + g * 2 * innerp), b2 = RC_VLOADP(p + (g * 2 + 1) * innerp);
    const long ng = min(grows, dim - g * grows);
    if (kind == RC_SOFTMAX_BWD) {
      a += a2;
    } else if (kind >= RC_SUM && kind != RC_SOFTMAX) {  // the elementwise kinds
      a = rc_merge(kind, a, a2);
    }
#ifndef RC_INT
    else if (kind == RC_VAR || kind == RC_STD) {
      rc_var_merge(&a, &b, n, a2, b2, ng);
    } else {
      rc_lse_merge(&a, &b, a2, b2);
    }
#endif
    n += ng;
  }
  if (kind == RC_SOFTMAX || kind == RC_SOFTMAX_BWD) {
    RC_VSTOREP(a, p);
    RC_VSTOREP(b, p + innerp);
    return;
  }
  const int lanes = (int)min((long)VW, inner - col);
#ifndef RC_INT
  if (kind == RC_VAR || kind == RC_STD) {  // the groups' means are relative to the first row
    __global const XT* x0 = (__global const XT*)(xb + xoff);
    a += rc_ldx_end(x0 + o * dim * inner + col, lanes, x0 + outer * dim * inner);
  }
#endif
  rc_out(kind, (__global YT*)(o0b + o0off) + o * inner + col,
         (__global YT*)(o1b + o1off) + o * inner + col, lanes, a, b, dim, corr, has_o1);
}

#ifndef RC_INT
// After an item's non-temporal stores: they are weakly ordered (x86 write-combining buffers),
// so an SFENCE makes them visible before the item's end is signalled, as memcpy does after its
// non-temporal loops; other targets take OpenCL's fence.
#if defined(__x86_64__) || defined(__i386__)
#define RC_NT_FENCE() __builtin_ia32_sfence()
#else
#define RC_NT_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
// Non-temporal stores where the compiler has clang's builtin; a plain store elsewhere (this
// file is also built into the softmax program of every device, GPUs included).
#if defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define RC_NT_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#endif
#ifndef RC_NT_STORE
#define RC_NT_STORE(v, p) (*(p) = (v))
#endif
// softmax / log_softmax forward, y (YT) from x (XT). Phase 0: the statistics (and, with one
// group, the writes); phase 1: the writes from the merged statistics in group 0's slots.
__kernel void rc_softmax(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                         __global char* pb, ulong poff, long outer, long dim, long inner, long tw,
                         long groups, long grows, int log_, int phase, int nt) {
  RC_ITEM
  __global const XT* x = (__global const XT*)(xb + xoff) + o * dim * inner + c0;
  __global const XT* xend = (__global const XT*)(xb + xoff) + outer * dim * inner;
  __global YT* y = (__global YT*)(yb + yoff) + o * dim * inner + c0;
  ACCV a[RC_MAXV], b[RC_MAXV], c[RC_MAXV];
  if (phase == 0) {
    ACCV d[RC_MAXV];
    rc_init(RC_SOFTMAX, nv, a, b);
    rc_walk(RC_SOFTMAX, x, xend, inner, r0, r1, nv, wl, a, b, c, c, d);
    if (groups > 1) {
      rc_store_part(part, innerp, nv, a, b);
      return;
    }
  } else {
    __global const ACC* p0 = (__global const ACC*)(pb + poff) + o * groups * 2 * innerp + c0;
    for (int v = 0; v < nv; ++v) {
      a[v] = RC_VLOADP(p0 + v * VW);
      b[v] = RC_VLOADP(p0 + innerp + v * VW);
    }
  }
  // A finite maximum is its own shift; an infinite one gives NaN columns, as on CPU.
  for (int v = 0; v < nv; ++v) {
    const ACCV s = select(b[v], (ACCV)NAN, fabs(a[v]) == (ACCV)INFINITY);
    c[v] = log_ ? log(s) : (ACCV)1 / s;  // (x - m) - log(s), as CPU PyTorch rounds it
  }
  // The writes in sub-chunks of RC_RB rows and strips of RC_S vectors, each strip's statistics
  // in registers and each load and store instruction stepping by a row (as RC_STRIP_ROWS: the
  // prefetchers follow such strides; a row at a time the loads stalled on memory). nt: whole,
  // aligned vectors of a float output stored past the caches (no read for ownership).
  const int nfull = wl == VW ? nv : nv - 1;
  const bool ntv = sizeof(YT) == sizeof(ACC) ? nt && inner % VW == 0 &&
                                                     ((ulong)y % (VW * sizeof(ACC))) == 0
                                               : false;
#define RC_W_LD(j, A) const ACCV m##j = a[v + j], s##j = c[v + j];
#define RC_W_LOG(j) ((VLOAD_X(p, j * VW) - m##j) - s##j)
#define RC_W_EXP(j) (v_exp(VLOAD_X(p, j * VW) - m##j) * s##j)
#define RC_W_ST(j, F) VSTORE_Y(q, j * VW, F(j));
#define RC_W_NT(j, F) RC_NT_STORE(F(j), (__global ACCV*)q + j);
#define RC_WRITE_ROWS(ST, F)                                                     \
  for (long rb = r0; rb < r1; rb += RC_RB) {                                     \
    const long re = min(rb + (long)RC_RB, r1);                                   \
    int v = 0;                                                                   \
    for (; v + RC_S <= nfull; v += RC_S) {                                       \
      RC_REP(RC_W_LD, 0)                                                         \
      for (long r = rb; r < re; ++r) {                                           \
        __global const XT* p = x + r * inner + v * VW;                           \
        __global YT* q = y + r * inner + v * VW;                                 \
        RC_REP(ST, F)                                                            \
      }                                                                          \
    }                                                                            \
    for (; v < nv; ++v) {                                                        \
      const int lanes = v == nv - 1 ? wl : VW;                                   \
      const ACCV m0 = a[v], s0 = c[v];                                           \
      for (long r = rb; r < re; ++r) {                                           \
        const long off = r * inner + v * VW;                                     \
        const ACCV t = rc_ldx_end(x + off, lanes, xend);                         \
        rc_sty(y + off, lanes, log_ ? (t - m0) - s0 : v_exp(t - m0) * s0);       \
      }                                                                          \
    }                                                                            \
  }
  if (log_) {
    if (ntv) {
      RC_WRITE_ROWS(RC_W_NT, RC_W_LOG)
    } else {
      RC_WRITE_ROWS(RC_W_ST, RC_W_LOG)
    }
  } else {
    if (ntv) {
      RC_WRITE_ROWS(RC_W_NT, RC_W_EXP)
    } else {
      RC_WRITE_ROWS(RC_W_ST, RC_W_EXP)
    }
  }
#undef RC_WRITE_ROWS
  if (ntv) RC_NT_FENCE();
}

// Backward: gx (XT) from gy and y (YT). log_softmax: gx = gy - exp(y) * sum(gy); softmax:
// gx = y * (gy - sum(gy * y)). Phases as rc_softmax.
__kernel void rc_softmax_bwd(__global char* gxb, ulong gxoff, __global const char* gyb,
                             ulong gyoff, __global const char* yb, ulong yoff, __global char* pb,
                             ulong poff, long outer, long dim, long inner, long tw, long groups,
                             long grows, int log_, int phase, int nt) {
  RC_ITEM
  const long base = o * dim * inner + c0;
  __global XT* gx = (__global XT*)(gxb + gxoff) + base;
  __global const YT* gy = (__global const YT*)(gyb + gyoff) + base;
  __global const YT* y = (__global const YT*)(yb + yoff) + base;
  __global const YT* gyend = (__global const YT*)(gyb + gyoff) + outer * dim * inner;
  __global const YT* yend = (__global const YT*)(yb + yoff) + outer * dim * inner;
  ACCV a[RC_MAXV];
  const int k = nv - 1;
  if (phase == 0) {
    for (int v = 0; v < nv; ++v) a[v] = 0;
    // The sums in sub-chunks of RC_RB rows and strips of RC_S vectors in registers (as
    // RC_STRIP_ROWS); LP: the product to add, from a strip's offset j (VW elements) of row r.
#define RC_B_LD(j, A) ACCV t##j = a[v + j];
#define RC_B_STEP(j, LP) t##j += LP(j * VW);
#define RC_B_ST(j, A) a[v + j] = t##j;
#define RC_B_LOG(i) VLOAD_Y(pg, i)
#define RC_B_SM(i) (VLOAD_Y(pg, i) * VLOAD_Y(py, i))
#define RC_BWD_ROWS(LP, LAST)                                                    \
  for (long rb = r0; rb < r1; rb += RC_RB) {                                     \
    const long re = min(rb + (long)RC_RB, r1);                                   \
    int v = 0;                                                                   \
    for (; v + RC_S <= nfull; v += RC_S) {                                       \
      RC_REP(RC_B_LD, 0)                                                         \
      for (long r = rb; r < re; ++r) {                                           \
        __global const YT* pg = gy + r * inner + v * VW;                         \
        __global const YT* py = y + r * inner + v * VW;                          \
        RC_REP(RC_B_STEP, LP)                                                    \
      }                                                                          \
      RC_REP(RC_B_ST, 0)                                                         \
    }                                                                            \
    for (; v < nv; ++v) {                                                        \
      const int lanes = v == k ? wl : VW;                                        \
      ACCV t0 = a[v];                                                            \
      for (long r = rb; r < re; ++r) {                                           \
        __global const YT* pg = gy + r * inner + v * VW;                         \
        __global const YT* py = y + r * inner + v * VW;                          \
        t0 += LAST;                                                              \
      }                                                                          \
      a[v] = t0;                                                                 \
    }                                                                            \
  }
    const int nfull = wl == VW ? nv : nv - 1;
    if (log_) {
      RC_BWD_ROWS(RC_B_LOG, rc_ldy_end(pg, lanes, gyend))
    } else {
      RC_BWD_ROWS(RC_B_SM, rc_ldy_end(pg, lanes, gyend) * rc_ldy_end(py, lanes, yend))
    }
#undef RC_BWD_ROWS
    if (groups > 1) {
      rc_store_part(part, innerp, nv, a, a);
      return;
    }
  } else {
    __global const ACC* p0 = (__global const ACC*)(pb + poff) + o * groups * 2 * innerp + c0;
    for (int v = 0; v < nv; ++v) a[v] = RC_VLOADP(p0 + v * VW);
  }
  // The writes as rc_softmax's: sub-chunks, strips in registers, nt stores where they fit.
  const int nfull = wl == VW ? nv : nv - 1;
  const bool ntv = sizeof(XT) == sizeof(ACC) ? nt && inner % VW == 0 &&
                                                     ((ulong)gx % (VW * sizeof(ACC))) == 0
                                               : false;
#define RC_G_LD(j, A) const ACCV s##j = a[v + j];
#define RC_G_LOG(j) (VLOAD_Y(pg, j * VW) - v_exp(VLOAD_Y(py, j * VW)) * s##j)
#define RC_G_SM(j) (VLOAD_Y(py, j * VW) * (VLOAD_Y(pg, j * VW) - s##j))
#define RC_G_ST(j, F) VSTORE_X(q, j * VW, F(j));
#define RC_G_NT(j, F) RC_NT_STORE(F(j), (__global ACCV*)q + j);
#define RC_GRAD_ROWS(ST, F)                                                      \
  for (long rb = r0; rb < r1; rb += RC_RB) {                                     \
    const long re = min(rb + (long)RC_RB, r1);                                   \
    int v = 0;                                                                   \
    for (; v + RC_S <= nfull; v += RC_S) {                                       \
      RC_REP(RC_G_LD, 0)                                                         \
      for (long r = rb; r < re; ++r) {                                           \
        const long off = r * inner + v * VW;                                     \
        __global const YT* pg = gy + off;                                        \
        __global const YT* py = y + off;                                         \
        __global XT* q = gx + off;                                               \
        RC_REP(ST, F)                                                            \
      }                                                                          \
    }                                                                            \
    for (; v < nv; ++v) {                                                        \
      const int lanes = v == k ? wl : VW;                                        \
      const ACCV s0 = a[v];                                                      \
      for (long r = rb; r < re; ++r) {                                           \
        const long off = r * inner + v * VW;                                     \
        const ACCV g = rc_ldy_end(gy + off, lanes, gyend);                       \
        const ACCV t = rc_ldy_end(y + off, lanes, yend);                         \
        rc_stx(gx + off, lanes, log_ ? g - v_exp(t) * s0 : t * (g - s0));        \
      }                                                                          \
    }                                                                            \
  }
  if (log_) {
    if (ntv) {
      RC_GRAD_ROWS(RC_G_NT, RC_G_LOG)
    } else {
      RC_GRAD_ROWS(RC_G_ST, RC_G_LOG)
    }
  } else {
    if (ntv) {
      RC_GRAD_ROWS(RC_G_NT, RC_G_SM)
    } else {
      RC_GRAD_ROWS(RC_G_ST, RC_G_SM)
    }
  }
#undef RC_GRAD_ROWS
  if (ntv) RC_NT_FENCE();
}
#endif  // RC_INT
