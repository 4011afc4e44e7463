// 2-D max/average pooling (fixed and adaptive windows), forward and backward, over contiguous
// (P, H, W) planes (P = N * C). Backward kernels gather: each input element adds up the outputs
// whose window held it, in a fixed order and without atomics.
typedef struct {
  long P, H, W, OH, OW;
  long kh, kw, sh, sw, ph, pw, dh, dw;
} PoolGeom;

// Max over the window, NaN-propagating and first-index-wins like CPU PyTorch; indices are
// positions within the plane.
__kernel void max_pool_fwd(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                           __global const char* xb, ulong xoff, PoolGeom g) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  const long ow = gid % g.OW, oh = (gid / g.OW) % g.OH, p = gid / (g.OW * g.OH);
  __global const T* x = (__global const T*)(xb + xoff) + p * g.H * g.W;
  const long hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
  const long he = min(hs + (g.kh - 1) * g.dh + 1, g.H), we = min(ws + (g.kw - 1) * g.dw + 1, g.W);
  long h0 = hs, w0 = ws;
  while (h0 < 0) h0 += g.dh;
  while (w0 < 0) w0 += g.dw;
  ACC best = ACC_LOWEST;
  long bi = h0 * g.W + w0;
  for (long h = h0; h < he; h += g.dh)
    for (long w = w0; w < we; w += g.dw) {
      const ACC v = LD(x, h * g.W + w);
      if (v > best || ACC_ISNAN(v)) {
        best = v;
        bi = h * g.W + w;
      }
    }
  ST((__global T*)(yb + yoff), gid, best);
  ((__global long*)(ib + ioff))[gid] = bi;
}

__kernel void max_pool_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, __global const char* ib, ulong ioff, PoolGeom g) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  const long w = gid % g.W, h = (gid / g.W) % g.H, p = gid / (g.W * g.H);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  __global const long* ind = (__global const long*)(ib + ioff) + p * g.OH * g.OW;
  const long me = h * g.W + w;
  ACC s = 0;
  for (long ki = 0; ki < g.kh; ++ki) {
    const long hh = h + g.ph - ki * g.dh;
    if (hh < 0 || hh % g.sh != 0 || hh / g.sh >= g.OH) continue;
    for (long kj = 0; kj < g.kw; ++kj) {
      const long ww = w + g.pw - kj * g.dw;
      if (ww < 0 || ww % g.sw != 0 || ww / g.sw >= g.OW) continue;
      const long o = (hh / g.sh) * g.OW + ww / g.sw;
      if (ind[o] == me) s += LD(go, o);
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}

// divisor == 0: none given (PyTorch rejects an override of 0; negative ones are allowed).
inline long avg_divisor(long oh, long ow, PoolGeom g, int count_include_pad, long divisor) {
  long hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
  long he = min(hs + g.kh, g.H + g.ph), we = min(ws + g.kw, g.W + g.pw);
  const long pool = (he - hs) * (we - ws);
  hs = max(hs, 0L), ws = max(ws, 0L), he = min(he, g.H), we = min(we, g.W);
  if (divisor != 0) return divisor;
  return count_include_pad ? pool : (he - hs) * (we - ws);
}

__kernel void avg_pool_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                           PoolGeom g, int count_include_pad, long divisor) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  const long ow = gid % g.OW, oh = (gid / g.OW) % g.OH, p = gid / (g.OW * g.OH);
  __global const T* x = (__global const T*)(xb + xoff) + p * g.H * g.W;
  const long hs = max(oh * g.sh - g.ph, 0L), ws = max(ow * g.sw - g.pw, 0L);
  const long he = min(oh * g.sh - g.ph + g.kh, g.H), we = min(ow * g.sw - g.pw + g.kw, g.W);
  ACC s = 0;
  if (hs < he && ws < we) {
    for (long h = hs; h < he; ++h)
      for (long w = ws; w < we; ++w) s += LD(x, h * g.W + w);
    s /= (ACC)avg_divisor(oh, ow, g, count_include_pad, divisor);
  }
  ST((__global T*)(yb + yoff), gid, s);
}

__kernel void avg_pool_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, PoolGeom g, int count_include_pad, long divisor) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  const long w = gid % g.W, h = (gid / g.W) % g.H, p = gid / (g.W * g.H);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  ACC s = 0;
  for (long ki = 0; ki < g.kh; ++ki) {
    const long hh = h + g.ph - ki;
    if (hh < 0 || hh % g.sh != 0 || hh / g.sh >= g.OH) continue;
    for (long kj = 0; kj < g.kw; ++kj) {
      const long ww = w + g.pw - kj;
      if (ww < 0 || ww % g.sw != 0 || ww / g.sw >= g.OW) continue;
      const long oh = hh / g.sh, ow = ww / g.sw;
      s += LD(go, oh * g.OW + ow) / (ACC)avg_divisor(oh, ow, g, count_include_pad, divisor);
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}

inline long ad_start(long o, long in, long out) { return (o * in) / out; }
inline long ad_end(long o, long in, long out) { return ((o + 1) * in + out - 1) / out; }

// mode 0: average, 1: max (with indices).
__kernel void adaptive_fwd(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                           __global const char* xb, ulong xoff, PoolGeom g, int mode) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.OH * g.OW) return;
  const long ow = gid % g.OW, oh = (gid / g.OW) % g.OH, p = gid / (g.OW * g.OH);
  __global const T* x = (__global const T*)(xb + xoff) + p * g.H * g.W;
  const long hs = ad_start(oh, g.H, g.OH), he = ad_end(oh, g.H, g.OH);
  const long ws = ad_start(ow, g.W, g.OW), we = ad_end(ow, g.W, g.OW);
  ACC s = mode ? ACC_LOWEST : 0;
  long bi = hs * g.W + ws;
  for (long h = hs; h < he; ++h)
    for (long w = ws; w < we; ++w) {
      const ACC v = LD(x, h * g.W + w);
      if (!mode) {
        s += v;
      } else if (v > s || ACC_ISNAN(v)) {
        s = v;
        bi = h * g.W + w;
      }
    }
  if (!mode) s /= (ACC)((he - hs) * (we - ws));
  ST((__global T*)(yb + yoff), gid, s);
  if (mode) ((__global long*)(ib + ioff))[gid] = bi;
}

__kernel void adaptive_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, __global const char* ib, ulong ioff, PoolGeom g,
                           int mode) {
  const long gid = get_global_id(0);
  if (gid >= g.P * g.H * g.W) return;
  const long w = gid % g.W, h = (gid / g.W) % g.H, p = gid / (g.W * g.H);
  __global const T* go = (__global const T*)(gob + gooff) + p * g.OH * g.OW;
  __global const long* ind = (__global const long*)(ib + ioff) + p * g.OH * g.OW;
  const long oh0 = max(0L, h * g.OH / g.H - 1), oh1 = min(g.OH, (h + 1) * g.OH / g.H + 2);
  const long ow0 = max(0L, w * g.OW / g.W - 1), ow1 = min(g.OW, (w + 1) * g.OW / g.W + 2);
  ACC s = 0;
  for (long oh = oh0; oh < oh1; ++oh) {
    const long hs = ad_start(oh, g.H, g.OH), he = ad_end(oh, g.H, g.OH);
    if (h < hs || h >= he) continue;
    for (long ow = ow0; ow < ow1; ++ow) {
      const long ws = ad_start(ow, g.W, g.OW), we = ad_end(ow, g.W, g.OW);
      if (w < ws || w >= we) continue;
      const long o = oh * g.OW + ow;
      if (!mode)
        s += LD(go, o) / (ACC)((he - hs) * (we - ws));
      else if (ind[o] == h * g.W + w)
        s += LD(go, o);
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}
