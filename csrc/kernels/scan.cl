// Inclusive scans (cumsum, cumprod) along the middle dimension of a contiguous
// (outer, dim, inner) view, one work item per line; neighbouring items take neighbouring inner
// positions. The host prepends ACC, XT/YT, LOAD_X(p, i), STORE_Y(p, i, v), SCAN_IDENT and
// SCAN_OP(a, b).
__kernel void scan_lines(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                         long outer, long dim, long inner) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const XT* x = (__global const XT*)(xb + xoff) + base;
  __global YT* y = (__global YT*)(yb + yoff) + base;
  ACC a = SCAN_IDENT;
  for (long d = 0; d < dim; ++d) {
    a = SCAN_OP(a, LOAD_X(x, d * inner));
    STORE_Y(y, d * inner, a);
  }
}

#ifndef SCAN_COMPLEX  // complex values have no order
// cummax / cummin with indices, as CPU's cummax_cummin_helper: a NaN, or a value at least as
// large (small), takes over, so ties and NaNs move the index forward. X and Y share one dtype.
__kernel void scan_extreme_lines(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                                 __global const char* xb, ulong xoff, long outer, long dim,
                                 long inner, int is_max) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const XT* x = (__global const XT*)(xb + xoff) + base;
  __global YT* y = (__global YT*)(yb + yoff) + base;
  __global long* ind = (__global long*)(ib + ioff) + base;
  ACC out = LOAD_X(x, 0);
  long at = 0;
  for (long d = 0; d < dim; ++d) {
    const ACC v = LOAD_X(x, d * inner);
    if (v != v || (out == out && (is_max ? v >= out : v <= out))) {
      out = v;
      at = d;
    }
    STORE_Y(y, d * inner, out);
    ind[d * inner] = at;
  }
}
#endif

// logcumsumexp, as CPU's: a running log(exp(x) + exp(acc)) from -inf, NaN propagating and
// equal infinities kept as they are. Floating ACC only (SCAN_FLOAT from the host).
#ifdef SCAN_FLOAT
__kernel void scan_logsumexp_lines(__global char* yb, ulong yoff, __global const char* xb,
                                   ulong xoff, long outer, long dim, long inner) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const XT* x = (__global const XT*)(xb + xoff) + base;
  __global YT* y = (__global YT*)(yb + yoff) + base;
  ACC a = -INFINITY;
  for (long d = 0; d < dim; ++d) {
    const ACC v = LOAD_X(x, d * inner);
    const ACC lo = a != a ? a : fmin(v, a), hi = a != a ? a : fmax(v, a);
    if (lo != hi || isfinite(lo)) a = log1p(exp(lo - hi)) + hi;
    else a = v;
    STORE_Y(y, d * inner, a);
  }
}
#endif

// logcumsumexp of complex values, as CPU's _log_add_exp_helper: the operands ordered by their
// real parts, NaN infectious, equal infinite real parts handled apart.
#ifdef SCAN_COMPLEX
__kernel void scan_logsumexp_lines(__global char* yb, ulong yoff, __global const char* xb,
                                   ulong xoff, long outer, long dim, long inner) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const XT* x = (__global const XT*)(xb + xoff) + base;
  __global YT* y = (__global YT*)(yb + yoff) + base;
  ACC a = (ACC)(-INFINITY, 0);
  for (long d = 0; d < dim; ++d) {
    const ACC v = LOAD_X(x, d * inner);
    const int swap = v.x < a.x;
    const ACC lo = swap ? v : a, hi = swap ? a : v;
    if (isnan(lo.x) || isnan(lo.y))
      a = (ACC)(NAN, NAN);
    else if (!isfinite(lo.x) && lo.x == hi.x)
      a = lo.x < 0 ? lo : ocl_clog(ocl_cexp(lo) + ocl_cexp(hi));
    else
      a = ocl_clog1p(ocl_cexp(lo - hi)) + hi;
    STORE_Y(y, d * inner, a);
  }
}
#endif
