// Nearest (legacy and exact), linear (1-, 2- and 3-D) and bicubic upsampling over contiguous
// (P, D, H, W) volumes, forward and backward, with CPU PyTorch's index arithmetic (float scales
// for nearest; ACC scales and lambdas for linear and cubic). Lower-dimensional ops run with the
// leading spatial sizes 1. Backward kernels gather: each input element adds up the outputs that
// read it, found by binary search (source indices are monotonic in the output index); no atomics.
typedef struct {
  long P, D, H, W, OD, OH, OW;
} UpGeom;

inline long in_volume(UpGeom g) { return g.D * g.H * g.W; }
inline long out_volume(UpGeom g) { return g.OD * g.OH * g.OW; }

inline void split(long gid, long D, long H, long W, long* p, long* d, long* h, long* w) {
  *w = gid % W;
  *h = (gid / W) % H;
  *d = (gid / (W * H)) % D;
  *p = gid / (D * H * W);
}

// nearest_idx (exact == 0) and nearest_exact_idx (exact == 1) of ATen/native/UpSample.h. The
// exact product (o + 0.5) * scale is a float product: o + 0.5 is exact in float and CPU rounds
// the double product of two floats once to float, which is what float multiplication does.
inline long nearest_src(long o, long in, long out, float scale, int exact) {
  if (exact) return min((long)floor(((float)o + 0.5f) * scale), in - 1);
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  return min((long)floor((float)o * scale), in - 1);
}

// First o in [0, out) with nearest_src(o) >= target (out if none).
inline long nearest_first(long target, long in, long out, float scale, int exact) {
  long lo = 0, hi = out;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    if (nearest_src(mid, in, out, scale, exact) >= target) hi = mid; else lo = mid + 1;
  }
  return lo;
}

__kernel void nearest_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                          UpGeom g, float sd, float sh, float sw, int exact) {
  const long gid = get_global_id(0);
  if (gid >= g.P * out_volume(g)) return;
  long p, od, oh, ow;
  split(gid, g.OD, g.OH, g.OW, &p, &od, &oh, &ow);
  const long d = nearest_src(od, g.D, g.OD, sd, exact);
  const long h = nearest_src(oh, g.H, g.OH, sh, exact), w = nearest_src(ow, g.W, g.OW, sw, exact);
  ST((__global T*)(yb + yoff), gid,
     LD((__global const T*)(xb + xoff), p * in_volume(g) + (d * g.H + h) * g.W + w));
}

__kernel void nearest_bwd(__global char* gib, ulong gioff, __global const char* gob, ulong gooff,
                          UpGeom g, float sd, float sh, float sw, int exact) {
  const long gid = get_global_id(0);
  if (gid >= g.P * in_volume(g)) return;
  long p, d, h, w;
  split(gid, g.D, g.H, g.W, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  const long od0 = nearest_first(d, g.D, g.OD, sd, exact);
  const long oh0 = nearest_first(h, g.H, g.OH, sh, exact);
  const long ow0 = nearest_first(w, g.W, g.OW, sw, exact);
  ACC s = 0;
  for (long od = od0; od < g.OD && nearest_src(od, g.D, g.OD, sd, exact) == d; ++od)
    for (long oh = oh0; oh < g.OH && nearest_src(oh, g.H, g.OH, sh, exact) == h; ++oh)
      for (long ow = ow0; ow < g.OW && nearest_src(ow, g.W, g.OW, sw, exact) == w; ++ow)
        s += LD(go, (od * g.OH + oh) * g.OW + ow);
  ST((__global T*)(gib + gioff), gid, s);
}

// area_pixel_compute_source_index.
inline ACC area_src(ACC scale, long o, int align, int cubic) {
  if (align) return scale * (ACC)o;
  const ACC r = scale * ((ACC)o + (ACC)0.5) - (ACC)0.5;
  return (!cubic && r < 0) ? (ACC)0 : r;
}

// compute_source_index_and_lambda: source index i0, neighbour offset (0 at the last index and
// when sizes match) and weight l1 of the neighbour.
inline long linear_src(long o, long in, long out, ACC scale, int align, long* off, ACC* l1) {
  if (in == out) {
    *off = 0;
    *l1 = 0;
    return o;
  }
  const ACC real = area_src(scale, o, align, 0);
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
    if (linear_src(mid, in, out, scale, align, &off, &l) >= target) hi = mid; else lo = mid + 1;
  }
  return lo;
}

// Linear interpolation over the last `spatial` dimensions (1: linear, 2: bilinear, 3:
// trilinear), nested from the outermost dimension in as CPU does; the leading size-1 dimensions
// of lower-dimensional ops take no part.
__kernel void linear_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                         UpGeom g, ACC sd, ACC sh, ACC sw, int align, int spatial) {
  const long gid = get_global_id(0);
  if (gid >= g.P * out_volume(g)) return;
  long p, od, oh, ow;
  split(gid, g.OD, g.OH, g.OW, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * in_volume(g);
  long d = 0, dp = 0, h = 0, hp = 0, wp;
  ACC ld = 0, lh = 0, lw;
  const long w = linear_src(ow, g.W, g.OW, sw, align, &wp, &lw);
  if (spatial >= 2) h = linear_src(oh, g.H, g.OH, sh, align, &hp, &lh);
  if (spatial >= 3) d = linear_src(od, g.D, g.OD, sd, align, &dp, &ld);
  ACC v = 0;
  for (int a = 0; a < (spatial >= 3 ? 2 : 1); ++a) {
    ACC vd = 0;
    for (int b = 0; b < (spatial >= 2 ? 2 : 1); ++b) {
      const long row = ((d + a * dp) * g.H + h + b * hp) * g.W + w;
      const ACC vh = ((ACC)1 - lw) * LD(x, row) + lw * LD(x, row + wp);
      vd += spatial >= 2 ? (b ? lh : (ACC)1 - lh) * vh : vh;
    }
    v += spatial >= 3 ? (a ? ld : (ACC)1 - ld) * vd : vd;
  }
  ST((__global T*)(yb + yoff), gid, v);
}

// Weight of input index `i` in output o's interpolation (0 when o does not read it).
inline ACC linear_weight(long i, long src, long off, ACC l1) {
  ACC wgt = 0;
  if (src == i) wgt += (ACC)1 - l1;
  if (src + off == i) wgt += l1;
  return wgt;
}

__kernel void linear_bwd(__global char* gib, ulong gioff, __global const char* gob, ulong gooff,
                         UpGeom g, ACC sd, ACC sh, ACC sw, int align, int spatial) {
  const long gid = get_global_id(0);
  if (gid >= g.P * in_volume(g)) return;
  long p, d, h, w;
  split(gid, g.D, g.H, g.W, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  const long od0 = linear_first(d - 1, g.D, g.OD, sd, align);
  const long oh0 = linear_first(h - 1, g.H, g.OH, sh, align);
  const long ow0 = linear_first(w - 1, g.W, g.OW, sw, align);
  ACC s = 0;
  long off;
  ACC l;
  for (long od = od0; od < g.OD; ++od) {
    const long ds = linear_src(od, g.D, g.OD, sd, align, &off, &l);
    if (ds > d) break;
    const ACC wd = linear_weight(d, ds, off, l);
    if (wd == 0) continue;
    for (long oh = oh0; oh < g.OH; ++oh) {
      const long hs = linear_src(oh, g.H, g.OH, sh, align, &off, &l);
      if (hs > h) break;
      const ACC wh = linear_weight(h, hs, off, l);
      if (wh == 0) continue;
      for (long ow = ow0; ow < g.OW; ++ow) {
        const long ws = linear_src(ow, g.W, g.OW, sw, align, &off, &l);
        if (ws > w) break;
        s += wd * wh * linear_weight(w, ws, off, l) * LD(go, (od * g.OH + oh) * g.OW + ow);
      }
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}

// Bicubic (A = -0.75): source index i (taps i-1..i+2, clamped to the input) and the four tap
// coefficients, as HelperInterpCubic / get_cubic_upsample_coefficients compute them.
inline ACC cubic1(ACC x, ACC A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
inline ACC cubic2(ACC x, ACC A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

inline long cubic_src(long o, long in, ACC scale, int align, ACC* c) {
  const ACC real = area_src(scale, o, align, 1);
  const long i = min((long)floor(real), in - 1);
  const ACC t = min(max(real - (ACC)i, (ACC)0), (ACC)1), A = (ACC)-0.75;
  c[0] = cubic2(t + (ACC)1, A);
  c[1] = cubic1(t, A);
  c[2] = cubic1((ACC)1 - t, A);
  c[3] = cubic2((ACC)1 - t + (ACC)1, A);
  return i;
}

inline long clamp_index(long i, long n) { return max(min(i, n - 1), 0L); }

__kernel void cubic_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                        UpGeom g, ACC sh, ACC sw, int align) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  long p, od, oh, ow;
  split(gid, 1, g.OH, g.OW, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * g.H * g.W;
  ACC ch[4], cw[4];
  const long h = cubic_src(oh, g.H, sh, align, ch), w = cubic_src(ow, g.W, sw, align, cw);
  ACC v = 0;
  for (int a = 0; a < 4; ++a) {
    const long row = clamp_index(h - 1 + a, g.H) * g.W;
    ACC r = 0;
    for (int b = 0; b < 4; ++b) r += cw[b] * LD(x, row + clamp_index(w - 1 + b, g.W));
    v += ch[a] * r;
  }
  ST((__global T*)(yb + yoff), gid, v);
}

// Outputs whose taps reach input i: source index in [i - 2, i + 1], widened to the ends at the
// borders (clamped taps); [*o0, end) with end found by the caller when the source passes *hi.
inline long cubic_first(long i, long in, long out, ACC scale, int align, long* hi) {
  const long lo_src = i == 0 ? LONG_MIN : i - 2;
  *hi = i == in - 1 ? LONG_MAX : i + 1;
  long lo = 0, hi_o = out;
  ACC c[4];
  while (lo < hi_o) {
    const long mid = (lo + hi_o) / 2;
    if (cubic_src(mid, in, scale, align, c) >= lo_src) hi_o = mid; else lo = mid + 1;
  }
  return lo;
}

// Sum of the coefficients of output o's taps that land on input i after clamping.
inline ACC cubic_weight(long i, long in, long src, const ACC* c) {
  ACC wgt = 0;
  for (int k = 0; k < 4; ++k)
    if (clamp_index(src - 1 + k, in) == i) wgt += c[k];
  return wgt;
}

__kernel void cubic_bwd(__global char* gib, ulong gioff, __global const char* gob, ulong gooff,
                        UpGeom g, ACC sh, ACC sw, int align) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  long p, d, h, w;
  split(gid, 1, g.H, g.W, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  long hmax, wmax;
  const long oh0 = cubic_first(h, g.H, g.OH, sh, align, &hmax);
  const long ow0 = cubic_first(w, g.W, g.OW, sw, align, &wmax);
  ACC ch[4], cw[4], s = 0;
  for (long oh = oh0; oh < g.OH; ++oh) {
    const long hs = cubic_src(oh, g.H, sh, align, ch);
    if (hs > hmax) break;
    const ACC wh = cubic_weight(h, g.H, hs, ch);
    for (long ow = ow0; ow < g.OW; ++ow) {
      const long ws = cubic_src(ow, g.W, sw, align, cw);
      if (ws > wmax) break;
      s += wh * cubic_weight(w, g.W, ws, cw) * LD(go, oh * g.OW + ow);
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}

// Antialiased bilinear/bicubic/Lanczos (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa,
// _upsample_lanczos2d_aa): each output averages a window of inputs with a triangle (kind 0),
// Keys a = -0.5 cubic (kind 1) or Lanczos-3 (kind 2) filter stretched by the downscale factor and
// normalised to sum 1, as CPU's HelperInterpBase computes them. A dimension whose size does not
// change is left as is (CPU skips it).
#ifdef M_PI
#define OCL_AA_PI ((ACC)M_PI)
#else
#define OCL_AA_PI ((ACC)M_PI_F)
#endif
inline ACC aa_sinc(ACC x) {
  if (x == 0) return 1;
  x *= OCL_AA_PI;
  return sin(x) / x;
}

inline ACC aa_filter(ACC x, int cubic) {
  x = fabs(x);
  if (cubic == 2) return x < 3 ? aa_sinc(x) * aa_sinc(x / (ACC)3) : (ACC)0;
  if (!cubic) return x < 1 ? (ACC)1 - x : (ACC)0;
  const ACC a = (ACC)-0.5;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

typedef struct {
  long xmin, xsize;
  ACC center, invscale, total;
} AaWindow;

inline AaWindow aa_window(long o, long in, long out, ACC scale, int cubic) {
  AaWindow r;
  if (in == out) {
    r.xmin = o, r.xsize = 1, r.center = 0, r.invscale = 0, r.total = 0;
    return r;
  }
  const ACC support = (scale >= 1 ? scale : (ACC)1) * (cubic == 2 ? 3 : cubic ? 2 : 1);
  const long max_size = (long)ceil(support) * 2 + 1;
  r.center = scale * ((ACC)o + (ACC)0.5);
  r.invscale = scale >= 1 ? (ACC)1 / scale : (ACC)1;
  r.xmin = max((long)(r.center - support + (ACC)0.5), 0L);
  r.xsize = clamp(min((long)(r.center + support + (ACC)0.5), in) - r.xmin, 0L, max_size);
  r.total = 0;
  for (long j = 0; j < r.xsize; ++j)
    r.total += aa_filter(((ACC)(j + r.xmin) - r.center + (ACC)0.5) * r.invscale, cubic);
  return r;
}

// Weight of input xmin + j.
inline ACC aa_weight(AaWindow r, long j, int cubic) {
  if (r.invscale == 0) return 1;  // unchanged dimension
  const ACC w = aa_filter(((ACC)(j + r.xmin) - r.center + (ACC)0.5) * r.invscale, cubic);
  return r.total != 0 ? w / r.total : w;
}

__kernel void aa_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                     UpGeom g, ACC sh, ACC sw, int cubic) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  long p, od, oh, ow;
  split(gid, 1, g.OH, g.OW, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * g.H * g.W;
  const AaWindow wh = aa_window(oh, g.H, g.OH, sh, cubic), ww = aa_window(ow, g.W, g.OW, sw, cubic);
  ACC v = 0;
  for (long a = 0; a < wh.xsize; ++a) {
    ACC r = 0;
    for (long b = 0; b < ww.xsize; ++b)
      r += aa_weight(ww, b, cubic) * LD(x, (wh.xmin + a) * g.W + ww.xmin + b);
    v += aa_weight(wh, a, cubic) * r;
  }
  ST((__global T*)(yb + yoff), gid, v);
}

// First output whose window ends after input i (windows move monotonically with o).
inline long aa_first(long i, long in, long out, ACC scale, int cubic) {
  long lo = 0, hi = out;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    const AaWindow r = aa_window(mid, in, out, scale, cubic);
    if (r.xmin + r.xsize > i) hi = mid; else lo = mid + 1;
  }
  return lo;
}

__kernel void aa_bwd(__global char* gib, ulong gioff, __global const char* gob, ulong gooff,
                     UpGeom g, ACC sh, ACC sw, int cubic) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  long p, d, h, w;
  split(gid, 1, g.H, g.W, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  const long oh0 = aa_first(h, g.H, g.OH, sh, cubic), ow0 = aa_first(w, g.W, g.OW, sw, cubic);
  ACC s = 0;
  for (long oh = oh0; oh < g.OH; ++oh) {
    const AaWindow wh = aa_window(oh, g.H, g.OH, sh, cubic);
    if (wh.xmin > h) break;
    if (h >= wh.xmin + wh.xsize) continue;
    const ACC weight_h = aa_weight(wh, h - wh.xmin, cubic);
    for (long ow = ow0; ow < g.OW; ++ow) {
      const AaWindow ww = aa_window(ow, g.W, g.OW, sw, cubic);
      if (ww.xmin > w) break;
      if (w >= ww.xmin + ww.xsize) continue;
      s += weight_h * aa_weight(ww, w - ww.xmin, cubic) * LD(go, oh * g.OW + ow);
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}
