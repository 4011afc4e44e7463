// Nearest and bilinear 2-D upsampling over contiguous (P, H, W) planes, forward and backward,
// with CPU PyTorch's index arithmetic (float scales for nearest; ACC scales and lambdas for
// bilinear). Backward kernels gather: each input element adds up the outputs that read it, found
// by binary search (the source index is monotonic in the output index); no atomics.
typedef struct {
  long P, H, W, OH, OW;
} UpGeom;

inline long nearest_src(long o, long in, long out, float scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  return min((long)floor((float)o * scale), in - 1);
}

// First o in [0, out) with nearest_src(o) >= target (out if none).
inline long nearest_first(long target, long in, long out, float scale) {
  long lo = 0, hi = out;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    if (nearest_src(mid, in, out, scale) >= target) hi = mid; else lo = mid + 1;
  }
  return lo;
}

__kernel void nearest_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                          UpGeom g, float sh, float sw) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  const long ow = gid % g.OW, oh = (gid / g.OW) % g.OH, p = gid / (g.OW * g.OH);
  const long h = nearest_src(oh, g.H, g.OH, sh), w = nearest_src(ow, g.W, g.OW, sw);
  ST((__global T*)(yb + yoff), gid, LD((__global const T*)(xb + xoff), (p * g.H + h) * g.W + w));
}

__kernel void nearest_bwd(__global char* gib, ulong gioff, __global const char* gob, ulong gooff,
                          UpGeom g, float sh, float sw) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  const long w = gid % g.W, h = (gid / g.W) % g.H, p = gid / (g.W * g.H);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  const long oh0 = nearest_first(h, g.H, g.OH, sh), ow0 = nearest_first(w, g.W, g.OW, sw);
  ACC s = 0;
  for (long oh = oh0; oh < g.OH && nearest_src(oh, g.H, g.OH, sh) == h; ++oh)
    for (long ow = ow0; ow < g.OW && nearest_src(ow, g.W, g.OW, sw) == w; ++ow)
      s += LD(go, oh * g.OW + ow);
  ST((__global T*)(gib + gioff), gid, s);
}

// Source index i0, neighbour offset (0 at the last row) and weight l1 of the neighbour.
inline long linear_src(long o, long in, ACC scale, int align, long* off, ACC* l1) {
  ACC real = align ? scale * (ACC)o : scale * ((ACC)o + (ACC)0.5) - (ACC)0.5;
  if (!align && real < 0) real = 0;
  const long i = min((long)floor(real), in - 1);
  *l1 = min(max(real - (ACC)i, (ACC)0), (ACC)1);
  *off = i < in - 1 ? 1 : 0;
  return i;
}

inline long linear_first(long target, long in, long out, ACC scale, int align) {
  long lo = 0, hi = out, off;
  ACC l;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    if (linear_src(mid, in, scale, align, &off, &l) >= target) hi = mid; else lo = mid + 1;
  }
  return lo;
}

__kernel void bilinear_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                           UpGeom g, ACC sh, ACC sw, int align) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  const long ow = gid % g.OW, oh = (gid / g.OW) % g.OH, p = gid / (g.OW * g.OH);
  __global const T* x = (__global const T*)(xb + xoff) + p * g.H * g.W;
  long hp, wp;
  ACC lh, lw;
  const long h = linear_src(oh, g.H, sh, align, &hp, &lh);
  const long w = linear_src(ow, g.W, sw, align, &wp, &lw);
  const ACC v = ((ACC)1 - lh) * (((ACC)1 - lw) * LD(x, h * g.W + w) + lw * LD(x, h * g.W + w + wp)) +
                lh * (((ACC)1 - lw) * LD(x, (h + hp) * g.W + w) +
                      lw * LD(x, (h + hp) * g.W + w + wp));
  ST((__global T*)(yb + yoff), gid, v);
}

// Weight of input index `i` in output o's interpolation (0 when o does not read it).
inline ACC linear_weight(long i, long src, long off, ACC l1) {
  ACC wgt = 0;
  if (src == i) wgt += (ACC)1 - l1;
  if (src + off == i) wgt += l1;
  return wgt;
}

__kernel void bilinear_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, UpGeom g, ACC sh, ACC sw, int align) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  const long w = gid % g.W, h = (gid / g.W) % g.H, p = gid / (g.W * g.H);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  const long oh0 = linear_first(h - 1, g.H, g.OH, sh, align);
  const long ow0 = linear_first(w - 1, g.W, g.OW, sw, align);
  ACC s = 0;
  long off;
  ACC l;
  for (long oh = oh0; oh < g.OH; ++oh) {
    const long hs = linear_src(oh, g.H, sh, align, &off, &l);
    if (hs > h) break;
    const ACC wh = linear_weight(h, hs, off, l);
    if (wh == 0) continue;
    for (long ow = ow0; ow < g.OW; ++ow) {
      const long ws = linear_src(ow, g.W, sw, align, &off, &l);
      if (ws > w) break;
      s += wh * linear_weight(w, ws, off, l) * LD(go, oh * g.OW + ow);
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}
