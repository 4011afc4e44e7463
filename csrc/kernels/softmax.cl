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
    const ACC lse = m + log(s);
    for (long d = 0; d < dim; ++d) STORE_Y(y, d * inner, LOAD_X(x, d * inner) - lse);
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
    const ACC lse = m + log(s);
    for (long d = lid; d < dim; d += L) STORE_Y(y, d, LOAD_X(x, d) - lse);
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
