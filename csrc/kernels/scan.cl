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
