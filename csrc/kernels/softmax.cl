// log_softmax forward and backward over the middle dimension of a contiguous (outer, dim, inner)
// view. T is the element type, ACC the accumulation type (float or double), set by the host.
__kernel void log_softmax_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                              long outer, long dim, long inner) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global const T* x = (__global const T*)(xb + xoff) + base;
  __global T* y = (__global T*)(yb + yoff) + base;
  ACC m = -INFINITY;
  for (long d = 0; d < dim; ++d) m = fmax(m, (ACC)x[d * inner]);
  ACC s = 0;
  for (long d = 0; d < dim; ++d) s += exp((ACC)x[d * inner] - m);
  const ACC lse = m + log(s);
  for (long d = 0; d < dim; ++d) y[d * inner] = (T)((ACC)x[d * inner] - lse);
}

// grad_input = grad_output - exp(output) * sum(grad_output)
__kernel void log_softmax_bwd(__global char* gib, ulong gioff, __global const char* gob,
                              ulong gooff, __global const char* yb, ulong yoff, long outer,
                              long dim, long inner) {
  const long gid = get_global_id(0);
  if (gid >= outer * inner) return;
  const long base = (gid / inner) * dim * inner + gid % inner;
  __global T* gi = (__global T*)(gib + gioff) + base;
  __global const T* go = (__global const T*)(gob + gooff) + base;
  __global const T* y = (__global const T*)(yb + yoff) + base;
  ACC s = 0;
  for (long d = 0; d < dim; ++d) s += (ACC)go[d * inner];
  for (long d = 0; d < dim; ++d) gi[d * inner] = (T)((ACC)go[d * inner] - exp((ACC)y[d * inner]) * s);
}
