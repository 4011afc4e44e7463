// softmax / log_softmax forward and backward over the middle dimension of a contiguous
// (outer, dim, inner) view. The host prepends: ACC (accumulation type), XT / YT (storage types
// of the input and of the output), LOAD_X/LOAD_Y(p, i) -> ACC and STORE_X/STORE_Y(p, i, v).
// `log_` picks log_softmax. Forward: x is the input, y the output. Backward: gy and y are of the
// output's type, gx (the gradient of the input) of the input's type.

#define SOFTMAX_LOCAL 256
// fmax without the library call (NaN inputs are skipped as fmax does; they make the sum NaN).
// exp is ocl_exp: the vectorisable float form of the prelude for float ACC.
#define SM_MAX(m, v) ((v) > (m) ? (v) : (m))

// One work item per (outer, inner) line: for inner > 1 neighbouring items read neighbouring
// elements; also the fallback for short rows.
__kernel void softmax_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                          long outer, long dim, long inner, int log_) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const XT* x = (__global const XT*)(xb + xoff) + base;
  __global YT* y = (__global YT*)(yb + yoff) + base;
  ACC m = -INFINITY;
  for (long d = 0; d < dim; ++d) m = SM_MAX(m, LOAD_X(x, d * inner));
  ACC s = 0;
  if (log_) {
    for (long d = 0; d < dim; ++d) s += ocl_exp(LOAD_X(x, d * inner) - m);
    const ACC ls = log(s);  // (x - m) - log(s), as CPU PyTorch rounds it
    for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, (LOAD_X(x, d * inner) - m) - ls);
  } else if (sizeof(YT) >= sizeof(ACC)) {
    // One exp per element (the costly part on CPUs): store exp(x - m), then rescale in place.
    for (long d = 0; d < dim; ++d) {
      const ACC e = ocl_exp(LOAD_X(x, d * inner) - m);
      s += e;
      STORE_Y(y, d * inner, e);
    }
    const ACC r = (ACC)1 / s;
    for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, LOAD_Y(y, d * inner) * r);
  } else {  // a narrower output would round exp(x - m) before the division
    for (long d = 0; d < dim; ++d) s += ocl_exp(LOAD_X(x, d * inner) - m);
    const ACC r = (ACC)1 / s;
    for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, ocl_exp(LOAD_X(x, d * inner) - m) * r);
  }
}

// inner == 1 and long rows: one work-group per row, trees in local memory.
__kernel void softmax_fwd_rows(__global char* yb, ulong yoff, __global const char* xb,
                               ulong xoff, long dim, int log_) {
  const long row = get_group_id(0);
  const int lid = get_local_id(0), L = get_local_size(0);
  __global const XT* x = (__global const XT*)(xb + xoff) + row * dim;
  __global YT* y = (__global YT*)(yb + yoff) + row * dim;
  __local ACC sh[SOFTMAX_LOCAL];
  ACC m = -INFINITY;
  for (long d = lid; d < dim; d += L) m = SM_MAX(m, LOAD_X(x, d));
  sh[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) sh[lid] = SM_MAX(sh[lid], sh[lid + h]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = sh[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  ACC s = 0;
  for (long d = lid; d < dim; d += L) s += ocl_exp(LOAD_X(x, d) - m);
  sh[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) sh[lid] += sh[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  s = sh[0];
  if (log_) {
    const ACC ls = log(s);  // (x - m) - log(s), as CPU PyTorch rounds it
    for (long d = lid; d < dim; d += L) STORE_Y(y, d, (LOAD_X(x, d) - m) - ls);
  } else {
    const ACC r = (ACC)1 / s;
    for (long d = lid; d < dim; d += L) STORE_Y(y, d, ocl_exp(LOAD_X(x, d) - m) * r);
  }
}

// log_softmax: gx = gy - exp(y) * sum(gy);  softmax: gx = y * (gy - sum(gy * y)).
__kernel void softmax_bwd(__global char* gxb, ulong gxoff, __global const char* gyb, ulong gyoff,
                          __global const char* yb, ulong yoff, long outer, long dim, long inner,
                          int log_) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global XT* gx = (__global XT*)(gxb + gxoff) + base;
  __global const YT* gy = (__global const YT*)(gyb + gyoff) + base;
  __global const YT* y = (__global const YT*)(yb + yoff) + base;
  ACC s = 0;
  if (log_) {
    for (long d = 0; d < dim; ++d) s += LOAD_Y(gy, d * inner);
    for (long d = 0; d < dim; ++d)
      STORE_X(gx, d * inner, LOAD_Y(gy, d * inner) - ocl_exp(LOAD_Y(y, d * inner)) * s);
  } else {
    for (long d = 0; d < dim; ++d) s += LOAD_Y(gy, d * inner) * LOAD_Y(y, d * inner);
    for (long d = 0; d < dim; ++d)
      STORE_X(gx, d * inner, LOAD_Y(y, d * inner) * (LOAD_Y(gy, d * inner) - s));
  }
}

__kernel void softmax_bwd_rows(__global char* gxb, ulong gxoff, __global const char* gyb,
                               ulong gyoff, __global const char* yb, ulong yoff, long dim,
                               int log_) {
  const long row = get_group_id(0);
  const int lid = get_local_id(0), L = get_local_size(0);
  __global XT* gx = (__global XT*)(gxb + gxoff) + row * dim;
  __global const YT* gy = (__global const YT*)(gyb + gyoff) + row * dim;
  __global const YT* y = (__global const YT*)(yb + yoff) + row * dim;
  __local ACC sh[SOFTMAX_LOCAL];
  ACC s = 0;
  if (log_) {
    for (long d = lid; d < dim; d += L) s += LOAD_Y(gy, d);
  } else {
    for (long d = lid; d < dim; d += L) s += LOAD_Y(gy, d) * LOAD_Y(y, d);
  }
  sh[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = L >> 1; h > 0; h >>= 1) {
    if (lid < h) sh[lid] += sh[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  s = sh[0];
  if (log_) {
    for (long d = lid; d < dim; d += L) STORE_X(gx, d, LOAD_Y(gy, d) - ocl_exp(LOAD_Y(y, d)) * s);
  } else {
    for (long d = lid; d < dim; d += L) STORE_X(gx, d, LOAD_Y(y, d) * (LOAD_Y(gy, d) - s));
  }
}

// ---- CPU drivers (PoCL): explicit vectors --------------------------------------------------
// PoCL runs a work-group as a loop over its items; a loop inside one item (a row) stays scalar
// unless it is written in vector types, and the exp builtin is a scalar library call. These
// kernels take one row (inner == 1) per work item (a non-last dim: reduce_cols.cl), in ACCV
// (VW lanes of ACC) with the host's VLOAD_X/VLOAD_Y/VSTORE_X/VSTORE_Y(p, i[, v]) (VW elements
// from p + i) and v_exp, a vector form of ocl_exp_float (rows of 4096 floats: about 5x the
// scalar per-row kernel).
#ifdef ACC_IS_FLOAT
inline ACCV v_exp(ACCV x) {
  const ACCV xc = fmin(fmax(x, (ACCV)-104.0f), (ACCV)89.0f);
  const ACCV k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  ACCV r = fma(k, (ACCV)-0.693145751953125f, xc);
  r = fma(k, (ACCV)-1.428606765330187e-6f, r);
  ACCV p = (ACCV)1.9875691500e-4f;
  p = fma(p, r, (ACCV)1.3981999507e-3f);
  p = fma(p, r, (ACCV)8.3334519073e-3f);
  p = fma(p, r, (ACCV)4.1665795894e-2f);
  p = fma(p, r, (ACCV)1.6666665459e-1f);
  p = fma(p, r, (ACCV)5.0000001201e-1f);
  p = fma(p, r * r, r + 1.0f);
  const ACCI ki = CONVERT_ACCI(k), k1 = ki >> 1;
  const ACCV y = p * AS_ACCV((k1 + 127) << 23) * AS_ACCV((ki - k1 + 127) << 23);
  return x != x ? x : y;
}
#else
#define v_exp exp
#endif

// Horizontal max of an ACCV (VW is 16 or 8); v_hsum comes from the host's macros.
inline ACC v_hmax(ACCV v) {
#if VW == 16
  const ACC8 a = SM_MAX(v.lo, v.hi);
#else
  const ACC8 a = v;
#endif
  const ACC4 b = SM_MAX(a.lo, a.hi);
  const ACC2 c = SM_MAX(b.lo, b.hi);
  return SM_MAX(c.x, c.y);
}

// One row per work item (inner == 1).
__kernel void softmax_fwd_vrows(__global char* yb, ulong yoff, __global const char* xb,
                                ulong xoff, long rows, long dim, int log_) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global const XT* x = (__global const XT*)(xb + xoff) + row * dim;
  __global YT* y = (__global YT*)(yb + yoff) + row * dim;
  const long nv = dim - dim % VW;
  ACCV mv = (ACCV)(-INFINITY);
  for (long d = 0; d < nv; d += VW) mv = SM_MAX(mv, VLOAD_X(x, d));
  ACC m = v_hmax(mv);
  for (long d = nv; d < dim; ++d) m = SM_MAX(m, LOAD_X(x, d));
  ACCV sv = 0;
  ACC s = 0;
  const bool narrow_y = sizeof(YT) < sizeof(ACC);  // (a bool: `||` with a constant warns)
  if (log_ || narrow_y) {
    for (long d = 0; d < nv; d += VW) sv += v_exp(VLOAD_X(x, d) - m);
    for (long d = nv; d < dim; ++d) s += ocl_exp(LOAD_X(x, d) - m);
    s += v_hsum(sv);
    if (log_) {
      const ACC ls = log(s);  // (x - m) - log(s), as CPU PyTorch rounds it
      for (long d = 0; d < nv; d += VW) VSTORE_Y(y, d, (VLOAD_X(x, d) - m) - ls);
      for (long d = nv; d < dim; ++d) STORE_Y(y, d, (LOAD_X(x, d) - m) - ls);
    } else {  // a narrower output would round exp(x - m) before the division
      const ACC r = (ACC)1 / s;
      for (long d = 0; d < nv; d += VW) VSTORE_Y(y, d, v_exp(VLOAD_X(x, d) - m) * r);
      for (long d = nv; d < dim; ++d) STORE_Y(y, d, ocl_exp(LOAD_X(x, d) - m) * r);
    }
  } else {  // one exp per element: store exp(x - m), then rescale in place
    for (long d = 0; d < nv; d += VW) {
      const ACCV e = v_exp(VLOAD_X(x, d) - m);
      sv += e;
      VSTORE_Y(y, d, e);
    }
    for (long d = nv; d < dim; ++d) {
      const ACC e = ocl_exp(LOAD_X(x, d) - m);
      s += e;
      STORE_Y(y, d, e);
    }
    s += v_hsum(sv);
    const ACC r = (ACC)1 / s;
    for (long d = 0; d < nv; d += VW) VSTORE_Y(y, d, VLOAD_Y(y, d) * r);
    for (long d = nv; d < dim; ++d) STORE_Y(y, d, LOAD_Y(y, d) * r);
  }
}

// Narrow non-last-dim lines (inner below kColsMinInner in softmax.cpp; wider ones take
// reduce_cols.cl): work item (o, b) takes the NB * VW lines
// o * dim * inner + b * NB * VW + [0, NB * VW): NB vectors side by side per row of the walk down
// dim, so that each page it strides through yields NB * VW * sizeof(XT) bytes (one vector per
// item measured TLB-bound). A last partial block goes vector by vector, then lane by lane.
#define SM_NB 4
#define SM_REP(X) X(0) X(1) X(2) X(3)

inline void sm_cols_nb(__global const XT* x, __global YT* y, long dim, long inner, int log_) {
#define SM_DECL(k) ACCV m##k = (ACCV)(-INFINITY), s##k = 0;
  SM_REP(SM_DECL)
  for (long d = 0; d < dim; ++d) {
    __global const XT* p = x + d * inner;
#define SM_MAXK(k) m##k = SM_MAX(m##k, VLOAD_X(p, k * VW));
    SM_REP(SM_MAXK)
  }
  for (long d = 0; d < dim; ++d) {
    __global const XT* p = x + d * inner;
#define SM_SUMK(k) s##k += v_exp(VLOAD_X(p, k * VW) - m##k);
    SM_REP(SM_SUMK)
  }
  if (log_) {
#define SM_LOGK(k) s##k = log(s##k);
    SM_REP(SM_LOGK)
    for (long d = 0; d < dim; ++d) {
      __global const XT* p = x + d * inner;
      __global YT* q = y + d * inner;
#define SM_STLK(k) VSTORE_Y(q, k * VW, (VLOAD_X(p, k * VW) - m##k) - s##k);
      SM_REP(SM_STLK)
    }
  } else {
#define SM_INVK(k) s##k = (ACCV)1 / s##k;
    SM_REP(SM_INVK)
    for (long d = 0; d < dim; ++d) {
      __global const XT* p = x + d * inner;
      __global YT* q = y + d * inner;
#define SM_STK(k) VSTORE_Y(q, k * VW, v_exp(VLOAD_X(p, k * VW) - m##k) * s##k);
      SM_REP(SM_STK)
    }
  }
}

inline void sm_cols_v(__global const XT* x, __global YT* y, long dim, long inner, int log_) {
  ACCV m = (ACCV)(-INFINITY);
  for (long d = 0; d < dim; ++d) m = SM_MAX(m, VLOAD_X(x, d * inner));
  ACCV s = 0;
  for (long d = 0; d < dim; ++d) s += v_exp(VLOAD_X(x, d * inner) - m);
  if (log_) {
    const ACCV ls = log(s);
    for (long d = 0; d < dim; ++d) VSTORE_Y(y, d * inner, (VLOAD_X(x, d * inner) - m) - ls);
  } else {
    const ACCV r = (ACCV)1 / s;
    for (long d = 0; d < dim; ++d) VSTORE_Y(y, d * inner, v_exp(VLOAD_X(x, d * inner) - m) * r);
  }
}

inline void sm_cols_1(__global const XT* x, __global YT* y, long dim, long inner, int log_) {
  ACC m = -INFINITY;
  for (long d = 0; d < dim; ++d) m = SM_MAX(m, LOAD_X(x, d * inner));
  ACC s = 0;
  for (long d = 0; d < dim; ++d) s += ocl_exp(LOAD_X(x, d * inner) - m);
  if (log_) {
    const ACC ls = log(s);  // (x - m) - log(s), as CPU PyTorch rounds it
    for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, (LOAD_X(x, d * inner) - m) - ls);
  } else {
    const ACC r = (ACC)1 / s;
    for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, ocl_exp(LOAD_X(x, d * inner) - m) * r);
  }
}

__kernel void softmax_fwd_vcols(__global char* yb, ulong yoff, __global const char* xb,
                                ulong xoff, long outer, long dim, long inner, int log_) {
  const long nb = (inner + SM_NB * VW - 1) / (SM_NB * VW);
  const long gid = get_global_id(0);
  if (gid >= outer * nb) return;
  const long o = gid / nb, i0 = (gid % nb) * SM_NB * VW;
  __global const XT* x = (__global const XT*)(xb + xoff) + o * dim * inner + i0;
  __global YT* y = (__global YT*)(yb + yoff) + o * dim * inner + i0;
  const long n = min((long)(SM_NB * VW), inner - i0);
  if (n == SM_NB * VW) {
    sm_cols_nb(x, y, dim, inner, log_);
    return;
  }
  long i = 0;
  for (; i + VW <= n; i += VW) sm_cols_v(x + i, y + i, dim, inner, log_);
  for (; i < n; ++i) sm_cols_1(x + i, y + i, dim, inner, log_);
}

__kernel void softmax_bwd_vrows(__global char* gxb, ulong gxoff, __global const char* gyb,
                                ulong gyoff, __global const char* yb, ulong yoff, long rows,
                                long dim, int log_) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global XT* gx = (__global XT*)(gxb + gxoff) + row * dim;
  __global const YT* gy = (__global const YT*)(gyb + gyoff) + row * dim;
  __global const YT* y = (__global const YT*)(yb + yoff) + row * dim;
  const long nv = dim - dim % VW;
  ACCV sv = 0;
  ACC s = 0;
  if (log_) {
    for (long d = 0; d < nv; d += VW) sv += VLOAD_Y(gy, d);
    for (long d = nv; d < dim; ++d) s += LOAD_Y(gy, d);
    s += v_hsum(sv);
    for (long d = 0; d < nv; d += VW)
      VSTORE_X(gx, d, VLOAD_Y(gy, d) - v_exp(VLOAD_Y(y, d)) * s);
    for (long d = nv; d < dim; ++d) STORE_X(gx, d, LOAD_Y(gy, d) - ocl_exp(LOAD_Y(y, d)) * s);
  } else {
    for (long d = 0; d < nv; d += VW) sv += VLOAD_Y(gy, d) * VLOAD_Y(y, d);
    for (long d = nv; d < dim; ++d) s += LOAD_Y(gy, d) * LOAD_Y(y, d);
    s += v_hsum(sv);
    for (long d = 0; d < nv; d += VW) VSTORE_X(gx, d, VLOAD_Y(y, d) * (VLOAD_Y(gy, d) - s));
    for (long d = nv; d < dim; ++d) STORE_X(gx, d, LOAD_Y(y, d) * (LOAD_Y(gy, d) - s));
  }
}

__kernel void softmax_bwd_vcols(__global char* gxb, ulong gxoff, __global const char* gyb,
                                ulong gyoff, __global const char* yb, ulong yoff, long outer,
                                long dim, long inner, int log_) {
  const long nb = (inner + VW - 1) / VW;
  const long gid = get_global_id(0);
  if (gid >= outer * nb) return;
  const long o = gid / nb, i0 = (gid % nb) * VW;
  const long base = o * dim * inner + i0;
  __global XT* gx = (__global XT*)(gxb + gxoff) + base;
  __global const YT* gy = (__global const YT*)(gyb + gyoff) + base;
  __global const YT* y = (__global const YT*)(yb + yoff) + base;
  if (i0 + VW <= inner) {
    ACCV s = 0;
    if (log_) {
      for (long d = 0; d < dim; ++d) s += VLOAD_Y(gy, d * inner);
      for (long d = 0; d < dim; ++d)
        VSTORE_X(gx, d * inner, VLOAD_Y(gy, d * inner) - v_exp(VLOAD_Y(y, d * inner)) * s);
    } else {
      for (long d = 0; d < dim; ++d) s += VLOAD_Y(gy, d * inner) * VLOAD_Y(y, d * inner);
      for (long d = 0; d < dim; ++d)
        VSTORE_X(gx, d * inner, VLOAD_Y(y, d * inner) * (VLOAD_Y(gy, d * inner) - s));
    }
    return;
  }
  for (long i = 0; i < inner - i0; ++i) {
    ACC s = 0;
    if (log_) {
      for (long d = 0; d < dim; ++d) s += LOAD_Y(gy, d * inner + i);
      for (long d = 0; d < dim; ++d)
        STORE_X(gx, d * inner + i,
                LOAD_Y(gy, d * inner + i) - ocl_exp(LOAD_Y(y, d * inner + i)) * s);
    } else {
      for (long d = 0; d < dim; ++d) s += LOAD_Y(gy, d * inner + i) * LOAD_Y(y, d * inner + i);
      for (long d = 0; d < dim; ++d)
        STORE_X(gx, d * inner + i, LOAD_Y(y, d * inner + i) * (LOAD_Y(gy, d * inner + i) - s));
    }
  }
}

// ---- row statistics for CPU drivers: logsumexp (kind 0), var (1), std (2) ------------------
// Over the last dim (a non-last one: reduce_cols.cl). Two passes over each row in vectors: the
// maximum then one exp per element (logsumexp; an infinite maximum shifts by 0 so that inf stays
// inf and all -inf gives -inf), or the mean then the centred sums (var/std, corrected two-pass;
// corr is the correction, o1 the mean when has_o1). Outputs are of type YT, the input XT.
inline ACC st_finish(int kind, ACC n, ACC corr, ACC q, ACC u, ACC* mean) {
  const ACC m2raw = q - u * u / n;
  const ACC m2 = m2raw < 0 ? (ACC)0 : m2raw;
  *mean += u / n;
  const ACC var = m2 / fmax((ACC)0, n - corr);
  return kind == 2 ? sqrt(var) : var;
}

__kernel void stats_vrows(__global char* o0b, ulong o0off, __global char* o1b, ulong o1off,
                          __global const char* xb, ulong xoff, long rows, long dim, int kind,
                          ACC corr, int has_o1) {
  const long row = get_global_id(0);
  if (row >= rows) return;
  __global const XT* x = (__global const XT*)(xb + xoff) + row * dim;
  const long nv = dim - dim % VW;
  ACC r;
  if (kind == 0) {
    ACCV mv = (ACCV)(-INFINITY);
    for (long d = 0; d < nv; d += VW) mv = SM_MAX(mv, VLOAD_X(x, d));
    ACC m = v_hmax(mv);
    for (long d = nv; d < dim; ++d) m = SM_MAX(m, LOAD_X(x, d));
    const ACC sh = m == INFINITY || m == -INFINITY ? (ACC)0 : m;
    ACCV sv = 0;
    ACC s = 0;
    for (long d = 0; d < nv; d += VW) sv += v_exp(VLOAD_X(x, d) - sh);
    for (long d = nv; d < dim; ++d) s += ocl_exp(LOAD_X(x, d) - sh);
    r = sh + log(s + v_hsum(sv));
  } else {
    ACCV sv = 0;
    ACC s = 0;
    for (long d = 0; d < nv; d += VW) sv += VLOAD_X(x, d);
    for (long d = nv; d < dim; ++d) s += LOAD_X(x, d);
    ACC mean = (s + v_hsum(sv)) / dim;
    ACCV qv = 0, uv = 0;
    ACC q = 0, u = 0;
    for (long d = 0; d < nv; d += VW) {
      const ACCV e = VLOAD_X(x, d) - mean;
      uv += e;
      qv += e * e;
    }
    for (long d = nv; d < dim; ++d) {
      const ACC e = LOAD_X(x, d) - mean;
      u += e;
      q += e * e;
    }
    r = st_finish(kind, (ACC)dim, corr, q + v_hsum(qv), u + v_hsum(uv), &mean);
    if (has_o1) STORE_Y((__global YT*)(o1b + o1off), row, mean);
  }
  STORE_Y((__global YT*)(o0b + o0off), row, r);
}

// Narrow non-last-dim lines (inner below kColsMinInner; wider: reduce_cols.cl): work item (o, b)
// takes the VW lines o * dim * inner + b * VW + [0, VW); outputs
// o * inner + b * VW + [0, VW). A last partial block runs lane by lane.
__kernel void stats_vcols(__global char* o0b, ulong o0off, __global char* o1b, ulong o1off,
                          __global const char* xb, ulong xoff, long outer, long dim, long inner,
                          int kind, ACC corr, int has_o1) {
  const long nb = (inner + VW - 1) / VW;
  const long gid = get_global_id(0);
  if (gid >= outer * nb) return;
  const long o = gid / nb, i0 = (gid % nb) * VW;
  __global const XT* x = (__global const XT*)(xb + xoff) + o * dim * inner + i0;
  __global YT* o0 = (__global YT*)(o0b + o0off) + o * inner + i0;
  __global YT* o1 = (__global YT*)(o1b + o1off) + o * inner + i0;
  if (i0 + VW <= inner) {
    if (kind == 0) {
      ACCV m = (ACCV)(-INFINITY);
      for (long d = 0; d < dim; ++d) m = SM_MAX(m, VLOAD_X(x, d * inner));
      const ACCV sh = (m == (ACCV)INFINITY || m == (ACCV)(-INFINITY)) ? (ACCV)0 : m;
      ACCV s = 0;
      for (long d = 0; d < dim; ++d) s += v_exp(VLOAD_X(x, d * inner) - sh);
      VSTORE_Y(o0, 0, sh + log(s));
    } else {
      ACCV s = 0;
      for (long d = 0; d < dim; ++d) s += VLOAD_X(x, d * inner);
      const ACCV mean = s / (ACC)dim;
      ACCV q = 0, u = 0;
      for (long d = 0; d < dim; ++d) {
        const ACCV e = VLOAD_X(x, d * inner) - mean;
        u += e;
        q += e * e;
      }
      const ACCV m2raw = q - u * u / (ACC)dim;
      const ACCV m2 = m2raw < (ACCV)0 ? (ACCV)0 : m2raw;
      const ACCV var = m2 / fmax((ACC)0, (ACC)dim - corr);
      VSTORE_Y(o0, 0, kind == 2 ? sqrt(var) : var);
      if (has_o1) VSTORE_Y(o1, 0, mean + u / (ACC)dim);
    }
    return;
  }
  for (long i = 0; i < inner - i0; ++i) {
    ACC r;
    if (kind == 0) {
      ACC m = -INFINITY;
      for (long d = 0; d < dim; ++d) m = SM_MAX(m, LOAD_X(x, d * inner + i));
      const ACC sh = m == INFINITY || m == -INFINITY ? (ACC)0 : m;
      ACC s = 0;
      for (long d = 0; d < dim; ++d) s += ocl_exp(LOAD_X(x, d * inner + i) - sh);
      r = sh + log(s);
    } else {
      ACC s = 0;
      for (long d = 0; d < dim; ++d) s += LOAD_X(x, d * inner + i);
      ACC mean = s / dim, q = 0, u = 0;
      for (long d = 0; d < dim; ++d) {
        const ACC e = LOAD_X(x, d * inner + i) - mean;
        u += e;
        q += e * e;
      }
      r = st_finish(kind, (ACC)dim, corr, q, u, &mean);
      if (has_o1) STORE_Y(o1, i, mean);
    }
    STORE_Y(o0, i, r);
  }
}

// ---- _masked_softmax / _masked_softmax_backward ----------------------------------------------
// One work item per (outer, inner) line of the contiguous input, as softmax_fwd. The mask (bool,
// one byte an element, true = left out) is a strided view expanded to the input's sizes:
// masked_base finds a line's first mask element from the input's sizes and the mask's strides,
// and msd steps it along the softmax dim. CPU's semantics: the maximum over the kept elements,
// exp(x - max) stored and summed, masked elements 0, and a row with nothing kept gives NaN
// (1 / 0 replaced by NaN as CPU does).
typedef struct {
  long sizes[OCL_MAX_DIMS];
  long mstrides[OCL_MAX_DIMS];
  long ndim, msd;
} MaskGeom;

inline long masked_base(__private const MaskGeom* g, long linear) {
  long off = 0;
  for (long k = g->ndim - 1; k >= 0; --k) {
    off += (linear % g->sizes[k]) * g->mstrides[k];
    linear /= g->sizes[k];
  }
  return off;
}

__kernel void masked_softmax_fwd(__global char* yb, ulong yoff, __global const char* xb,
                                 ulong xoff, __global const char* mb, ulong moff, long outer,
                                 long dim, long inner, MaskGeom g) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const XT* x = (__global const XT*)(xb + xoff) + base;
  __global YT* y = (__global YT*)(yb + yoff) + base;
  __global const uchar* mk = (__global const uchar*)(mb + moff) + masked_base(&g, base);
  ACC m = 0;
  int any = 0;
  for (long d = 0; d < dim; ++d) {
    if (mk[d * g.msd]) continue;
    const ACC v = LOAD_X(x, d * inner);
    m = any ? SM_MAX(m, v) : v;
    any = 1;
  }
  ACC s = 0;
  for (long d = 0; d < dim; ++d) {
    const ACC e = mk[d * g.msd] ? (ACC)0 : ocl_exp(LOAD_X(x, d * inner) - m);
    STORE_Y(y, d * inner, e);
    s += LOAD_Y(y, d * inner);  // the stored (rounded) value, as CPU sums it
  }
  const ACC r = s == (ACC)0 ? (ACC)NAN : (ACC)1 / s;
  for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, LOAD_Y(y, d * inner) * r);
}

// gx = masked ? 0 : y * (gy - sum over the kept elements of gy * y); gx, gy and y share XT.
__kernel void masked_softmax_bwd(__global char* gxb, ulong gxoff, __global const char* gyb,
                                 ulong gyoff, __global const char* yb, ulong yoff,
                                 __global const char* mb, ulong moff, long outer, long dim,
                                 long inner, MaskGeom g) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global XT* gx = (__global XT*)(gxb + gxoff) + base;
  __global const XT* gy = (__global const XT*)(gyb + gyoff) + base;
  __global const XT* y = (__global const XT*)(yb + yoff) + base;
  __global const uchar* mk = (__global const uchar*)(mb + moff) + masked_base(&g, base);
  ACC s = 0;
  for (long d = 0; d < dim; ++d)
    if (!mk[d * g.msd]) s += LOAD_X(gy, d * inner) * LOAD_X(y, d * inner);
  for (long d = 0; d < dim; ++d)
    STORE_X(gx, d * inner,
            mk[d * g.msd] ? (ACC)0 : LOAD_X(y, d * inner) * (LOAD_X(gy, d * inner) - s));
}
