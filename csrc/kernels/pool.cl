// Max/average pooling (fixed and adaptive windows) in 1, 2 or 3 spatial dimensions, forward and
// backward, over contiguous (P, D, H, W) volumes (P = N * C; 2-D pools run with D = OD = 1 and a
// depth window of 1). Backward kernels gather: each input element adds up the outputs whose window
// held it, in a fixed order and without atomics.
typedef struct {
  long P, D, H, W, OD, OH, OW;
  long kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
} PoolGeom;

inline long in_volume(PoolGeom g) { return g.D * g.H * g.W; }
inline long out_volume(PoolGeom g) { return g.OD * g.OH * g.OW; }

// Output coordinates (p, od, oh, ow) of gid.
inline void out_coords(long gid, PoolGeom g, long* p, long* od, long* oh, long* ow) {
  *ow = gid % g.OW;
  *oh = (gid / g.OW) % g.OH;
  *od = (gid / (g.OW * g.OH)) % g.OD;
  *p = gid / out_volume(g);
}
inline void in_coords(long gid, PoolGeom g, long* p, long* d, long* h, long* w) {
  *w = gid % g.W;
  *h = (gid / g.W) % g.H;
  *d = (gid / (g.W * g.H)) % g.D;
  *p = gid / in_volume(g);
}

// First in-range window position from `start` in steps of `dil`.
inline long first_inside(long start, long dil) {
  while (start < 0) start += dil;
  return start;
}

// Max over the window, NaN-propagating and first-index-wins like CPU PyTorch; indices are
// positions within the (D, H, W) volume.
__kernel void max_pool_fwd(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                           __global const char* xb, ulong xoff, PoolGeom g) {
  const long gid = get_global_id(0);
  if (gid >= g.P * out_volume(g)) return;
  long p, od, oh, ow;
  out_coords(gid, g, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * in_volume(g);
  const long ds = od * g.sd - g.pd, hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
  const long de = min(ds + (g.kd - 1) * g.dd + 1, g.D);
  const long he = min(hs + (g.kh - 1) * g.dh + 1, g.H), we = min(ws + (g.kw - 1) * g.dw + 1, g.W);
  const long d0 = first_inside(ds, g.dd), h0 = first_inside(hs, g.dh), w0 = first_inside(ws, g.dw);
  ACC best = ACC_LOWEST;
  long bi = (d0 * g.H + h0) * g.W + w0;
  for (long d = d0; d < de; d += g.dd)
    for (long h = h0; h < he; h += g.dh)
      for (long w = w0; w < we; w += g.dw) {
        const long i = (d * g.H + h) * g.W + w;
        const ACC v = LD(x, i);
        if (v > best || ACC_ISNAN(v)) {
          best = v;
          bi = i;
        }
      }
  ST((__global T*)(yb + yoff), gid, best);
  ((__global long*)(ib + ioff))[gid] = bi;
}

// Output index along one dimension whose window (kernel offset k) holds input i; -1 if none.
inline long window_out(long i, long pad, long k, long dil, long stride, long out) {
  const long t = i + pad - k * dil;
  if (t < 0 || t % stride != 0 || t / stride >= out) return -1;
  return t / stride;
}

__kernel void max_pool_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, __global const char* ib, ulong ioff, PoolGeom g) {
  const long gid = get_global_id(0);
  if (gid >= g.P * in_volume(g)) return;
  long p, d, h, w;
  in_coords(gid, g, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  __global const long* ind = (__global const long*)(ib + ioff) + p * out_volume(g);
  const long me = (d * g.H + h) * g.W + w;
  ACC s = 0;
  for (long kt = 0; kt < g.kd; ++kt) {
    const long od = window_out(d, g.pd, kt, g.dd, g.sd, g.OD);
    if (od < 0) continue;
    for (long ki = 0; ki < g.kh; ++ki) {
      const long oh = window_out(h, g.ph, ki, g.dh, g.sh, g.OH);
      if (oh < 0) continue;
      for (long kj = 0; kj < g.kw; ++kj) {
        const long ow = window_out(w, g.pw, kj, g.dw, g.sw, g.OW);
        if (ow < 0) continue;
        const long o = (od * g.OH + oh) * g.OW + ow;
        if (ind[o] == me) s += LD(go, o);
      }
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}

// CPU drivers (PoCL): one work item per row, so the 64-bit divisions that place an element run
// once per row instead of once per element (they dominated both kernels above: 29 ms for the
// peer's mnist CNN's two pools at batch 64). Forward: row (p, od, oh) of the output, the same
// window scan per output as max_pool_fwd (same results, NaNs and ties included).
__kernel void max_pool_fwd_rows(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                                __global const char* xb, ulong xoff, PoolGeom g) {
  const long r = get_global_id(0);
  if (r >= g.P * g.OD * g.OH) return;
  const long oh = r % g.OH, od = (r / g.OH) % g.OD, p = r / (g.OH * g.OD);
  __global const T* x = (__global const T*)(xb + xoff) + p * in_volume(g);
  __global T* y = (__global T*)(yb + yoff) + r * g.OW;
  __global long* ind = (__global long*)(ib + ioff) + r * g.OW;
  const long ds = od * g.sd - g.pd, hs = oh * g.sh - g.ph;
  const long de = min(ds + (g.kd - 1) * g.dd + 1, g.D);
  const long he = min(hs + (g.kh - 1) * g.dh + 1, g.H);
  const long d0 = first_inside(ds, g.dd), h0 = first_inside(hs, g.dh);
  for (long ow = 0; ow < g.OW; ++ow) {
    const long ws = ow * g.sw - g.pw;
    const long we = min(ws + (g.kw - 1) * g.dw + 1, g.W), w0 = first_inside(ws, g.dw);
    ACC best = ACC_LOWEST;
    long bi = (d0 * g.H + h0) * g.W + w0;
    for (long d = d0; d < de; d += g.dd)
      for (long h = h0; h < he; h += g.dh)
        for (long w = w0; w < we; w += g.dw) {
          const long i = (d * g.H + h) * g.W + w;
          const ACC v = LD(x, i);
          if (v > best || ACC_ISNAN(v)) {
            best = v;
            bi = i;
          }
        }
    ST(y, ow, best);
    ind[ow] = bi;
  }
}

// 2x2 windows with stride 2, no padding, no dilation (the usual max_pool2d(2)), 2-D planes:
// straight-line code that vectorises across work items on CPU drivers and coalesces on GPUs.
// dim 0: the output column, dim 1: the output row (p, oh). Windows lie inside the input (the
// host checks 2 * OH <= H and 2 * OW <= W). The same order and rule as max_pool_fwd. Index math
// in 32 bits (the host checks P * H * W < 2^31): 3.5x faster on PoCL than in 64.
__kernel void max_pool2_fwd(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                            __global const char* xb, ulong xoff, PoolGeom g) {
  const int OW = (int)g.OW, OH = (int)g.OH, W = (int)g.W, H = (int)g.H;
  const int ow = get_global_id(0), r = get_global_id(1);
  if (ow >= OW || r >= (int)g.P * OH) return;
  const int oh = r % OH, p = r / OH;
  const int i0 = (2 * oh) * W + 2 * ow;
  __global const T* x = (__global const T*)(xb + xoff) + p * H * W;
  ACC best = LD(x, i0);
  int bi = i0;
  const ACC v1 = LD(x, i0 + 1), v2 = LD(x, i0 + W), v3 = LD(x, i0 + W + 1);
  if (v1 > best || ACC_ISNAN(v1)) {
    best = v1;
    bi = i0 + 1;
  }
  if (v2 > best || ACC_ISNAN(v2)) {
    best = v2;
    bi = i0 + W;
  }
  if (v3 > best || ACC_ISNAN(v3)) {
    best = v3;
    bi = i0 + W + 1;
  }
  const int o = r * OW + ow;
  ST((__global T*)(yb + yoff), o, best);
  ((__global long*)(ib + ioff))[o] = bi;
}

// max_pool2_fwd for float32 on CPU drivers: a work item per output row (p, oh), 16 outputs at a
// time, each window's four values deinterleaved from two 16-float loads of each input row (PoCL
// did not vectorise max_pool2_fwd's stride-2 loads across work items). The same order and rule.
__kernel void max_pool2_fwd_v(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                              __global const char* xb, ulong xoff, PoolGeom g) {
  const int OW = (int)g.OW, OH = (int)g.OH, W = (int)g.W, H = (int)g.H;
  const int r = get_global_id(0);
  if (r >= (int)g.P * OH) return;
  const int oh = r % OH, p = r / OH;
  __global const float* x = (__global const float*)(xb + xoff) + p * H * W;
  __global const float* x0 = x + (2 * oh) * W;
  __global const float* x1 = x0 + W;
  __global float* y = (__global float*)(yb + yoff) + r * OW;
  __global long* ind = (__global long*)(ib + ioff) + r * OW;
  const int16 lanes = (int16)(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  // whole vectors, the last one overlapping the one before where OW is not a multiple of 16
  // (its outputs written twice, alike); the host sends rows of 16 outputs or more (OW >= 16)
  for (int o = 0; o < OW; o += 16) {
    const int ow = min(o, OW - 16);
    const float16 a0 = vload16(0, x0 + 2 * ow), a1 = vload16(0, x0 + 2 * ow + 16);
    const float16 b0 = vload16(0, x1 + 2 * ow), b1 = vload16(0, x1 + 2 * ow + 16);
    const float16 v1 = (float16)(a0.odd, a1.odd), v2 = (float16)(b0.even, b1.even);
    const float16 v3 = (float16)(b0.odd, b1.odd);
    const int16 i0 = (2 * oh) * W + 2 * ow + lanes;
    float16 best = (float16)(a0.even, a1.even);
    int16 bi = i0;
    int16 m = isgreater(v1, best) | isnan(v1);
    best = select(best, v1, m);
    bi = select(bi, i0 + 1, m);
    m = isgreater(v2, best) | isnan(v2);
    best = select(best, v2, m);
    bi = select(bi, i0 + W, m);
    m = isgreater(v3, best) | isnan(v3);
    best = select(best, v3, m);
    bi = select(bi, i0 + W + 1, m);
    vstore16(best, 0, y + ow);
    vstore16(convert_long16(bi), 0, ind + ow);
  }
}

// Its backward: each input element lies in at most one window. dim 0: the input column, dim 1:
// the input row (p, h). 32-bit index math as above.
__kernel void max_pool2_bwd(__global char* gib, ulong gioff, __global const char* gob,
                            ulong gooff, __global const char* ib, ulong ioff, PoolGeom g) {
  const int OW = (int)g.OW, OH = (int)g.OH, W = (int)g.W, H = (int)g.H;
  const int w = get_global_id(0), r = get_global_id(1);
  if (w >= W || r >= (int)g.P * H) return;
  const int h = r % H, p = r / H;
  const int oh = h >> 1, ow = w >> 1;
  ACC s = 0;
  if (oh < OH && ow < OW) {
    const int o = (p * OH + oh) * OW + ow;
    if (((__global const long*)(ib + ioff))[o] == h * W + w)
      s = LD((__global const T*)(gob + gooff), o);
  }
  ST((__global T*)(gib + gioff), r * W + w, s);
}

// max_pool2_bwd for float32 on CPU drivers: a work item per input row (p, h), 16 columns at a
// time; each of the 8 outputs above them (their gradient and argmax) feeds two lanes, kept where
// the argmax is that lane's element. Columns past the last window and rows below it get zeros.
__kernel void max_pool2_bwd_v(__global char* gib, ulong gioff, __global const char* gob,
                              ulong gooff, __global const char* ib, ulong ioff, PoolGeom g) {
  const int OW = (int)g.OW, OH = (int)g.OH, W = (int)g.W, H = (int)g.H;
  const int r = get_global_id(0);
  if (r >= (int)g.P * H) return;
  const int h = r % H, p = r / H, oh = h >> 1;
  __global float* gi = (__global float*)(gib + gioff) + r * W;
  int covered = 0;  // columns inside windows (2 * OW), where the row has windows
  if (oh < OH) {
    covered = 2 * OW;
    __global const float* go = (__global const float*)(gob + gooff) + (p * OH + oh) * OW;
    __global const long* ind = (__global const long*)(ib + ioff) + (p * OH + oh) * OW;
    const uint16 pairs = (uint16)(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    const long16 lanes = (long16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // whole vectors of 16 columns (8 outputs), the last one overlapping the one before (the host
    // sends rows of 8 outputs or more: covered >= 16)
    for (int c = 0; c < covered; c += 16) {
      const int w0 = min(c, covered - 16);
      const float16 g16 = shuffle(vload8(0, go + w0 / 2), pairs);
      const long16 i16 = shuffle(vload8(0, ind + w0 / 2), convert_ulong16(pairs));
      const long16 here = (long)(h * W + w0) + lanes;
      vstore16(select((float16)0, g16, convert_int16(i16 == here)), 0, gi + w0);
    }
  }
  for (int w = covered; w < W; ++w) gi[w] = 0.0f;
}

// Backward on CPU drivers: row (p, d, h) of the input. For each output row whose windows cover
// it, every output whose argmax lies in this row adds its gradient there (the work item owns the
// row: no atomics, a fixed order). Only for T == ACC (float, double): the sums go through memory.
__kernel void max_pool_bwd_rows(__global char* gib, ulong gioff, __global const char* gob,
                                ulong gooff, __global const char* ib, ulong ioff, PoolGeom g) {
  const long r = get_global_id(0);
  if (r >= g.P * g.D * g.H) return;
  const long h = r % g.H, d = (r / g.H) % g.D, p = r / (g.H * g.D);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  __global const long* ind = (__global const long*)(ib + ioff) + p * out_volume(g);
  __global T* gi = (__global T*)(gib + gioff) + r * g.W;
  const long row0 = (d * g.H + h) * g.W;
  for (long w = 0; w < g.W; ++w) gi[w] = 0;
  for (long kt = 0; kt < g.kd; ++kt) {
    const long od = window_out(d, g.pd, kt, g.dd, g.sd, g.OD);
    if (od < 0) continue;
    for (long ki = 0; ki < g.kh; ++ki) {
      const long oh = window_out(h, g.ph, ki, g.dh, g.sh, g.OH);
      if (oh < 0) continue;
      const long o0 = (od * g.OH + oh) * g.OW;
      for (long ow = 0; ow < g.OW; ++ow) {
        const long i = ind[o0 + ow] - row0;
        if (i >= 0 && i < g.W) gi[i] += go[o0 + ow];
      }
    }
  }
}

// Window [*s, *e) along one dimension, clamped to the input; returns its unclamped size within
// the padded input (count_include_pad's divisor factor).
inline long avg_window(long o, long stride, long pad, long k, long in, long* s, long* e) {
  const long st = o * stride - pad, en = min(st + k, in + pad);
  *s = max(st, 0L);
  *e = min(en, in);
  return en - st;
}

// divisor == 0: none given (PyTorch rejects an override of 0; negative ones are allowed).
inline long avg_divisor(long od, long oh, long ow, PoolGeom g, int count_include_pad,
                        long divisor) {
  long ds, de, hs, he, ws, we;
  const long pool = avg_window(od, g.sd, g.pd, g.kd, g.D, &ds, &de) *
                    avg_window(oh, g.sh, g.ph, g.kh, g.H, &hs, &he) *
                    avg_window(ow, g.sw, g.pw, g.kw, g.W, &ws, &we);
  if (divisor != 0) return divisor;
  return count_include_pad ? pool : (de - ds) * (he - hs) * (we - ws);
}

__kernel void avg_pool_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                           PoolGeom g, int count_include_pad, long divisor) {
  const long gid = get_global_id(0);
  if (gid >= g.P * out_volume(g)) return;
  long p, od, oh, ow;
  out_coords(gid, g, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * in_volume(g);
  long ds, de, hs, he, ws, we;
  avg_window(od, g.sd, g.pd, g.kd, g.D, &ds, &de);
  avg_window(oh, g.sh, g.ph, g.kh, g.H, &hs, &he);
  avg_window(ow, g.sw, g.pw, g.kw, g.W, &ws, &we);
  ACC s = 0;
  if (ds < de && hs < he && ws < we) {
    for (long d = ds; d < de; ++d)
      for (long h = hs; h < he; ++h)
        for (long w = ws; w < we; ++w) s += LD(x, (d * g.H + h) * g.W + w);
    s /= (ACC)avg_divisor(od, oh, ow, g, count_include_pad, divisor);
  }
  ST((__global T*)(yb + yoff), gid, s);
}

__kernel void avg_pool_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, PoolGeom g, int count_include_pad, long divisor) {
  const long gid = get_global_id(0);
  if (gid >= g.P * in_volume(g)) return;
  long p, d, h, w;
  in_coords(gid, g, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  ACC s = 0;
  for (long kt = 0; kt < g.kd; ++kt) {
    const long od = window_out(d, g.pd, kt, 1, g.sd, g.OD);
    if (od < 0) continue;
    for (long ki = 0; ki < g.kh; ++ki) {
      const long oh = window_out(h, g.ph, ki, 1, g.sh, g.OH);
      if (oh < 0) continue;
      for (long kj = 0; kj < g.kw; ++kj) {
        const long ow = window_out(w, g.pw, kj, 1, g.sw, g.OW);
        if (ow < 0) continue;
        s += LD(go, (od * g.OH + oh) * g.OW + ow) /
             (ACC)avg_divisor(od, oh, ow, g, count_include_pad, divisor);
      }
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
  if (gid >= g.P * out_volume(g)) return;
  long p, od, oh, ow;
  out_coords(gid, g, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * in_volume(g);
  const long ds = ad_start(od, g.D, g.OD), de = ad_end(od, g.D, g.OD);
  const long hs = ad_start(oh, g.H, g.OH), he = ad_end(oh, g.H, g.OH);
  const long ws = ad_start(ow, g.W, g.OW), we = ad_end(ow, g.W, g.OW);
  ACC s = mode ? ACC_LOWEST : 0;
  long bi = (ds * g.H + hs) * g.W + ws;
  for (long d = ds; d < de; ++d)
    for (long h = hs; h < he; ++h)
      for (long w = ws; w < we; ++w) {
        const long i = (d * g.H + h) * g.W + w;
        const ACC v = LD(x, i);
        if (!mode) {
          s += v;
        } else if (v > s || ACC_ISNAN(v)) {
          s = v;
          bi = i;
        }
      }
  if (!mode) s /= (ACC)((de - ds) * (he - hs) * (we - ws));
  ST((__global T*)(yb + yoff), gid, s);
  if (mode) ((__global long*)(ib + ioff))[gid] = bi;
}

// Outputs along one dimension whose adaptive window holds input i: [*o0, *o1) (ad_start(o) <= i
// and ad_end(o) > i).
inline void ad_candidates(long i, long in, long out, long* o0, long* o1) {
  *o0 = i * out / in;
  *o1 = min(out, ((i + 1) * out - 1) / in + 1);
}

__kernel void adaptive_bwd(__global char* gib, ulong gioff, __global const char* gob,
                           ulong gooff, __global const char* ib, ulong ioff, PoolGeom g,
                           int mode) {
  const long gid = get_global_id(0);
  if (gid >= g.P * in_volume(g)) return;
  long p, d, h, w;
  in_coords(gid, g, &p, &d, &h, &w);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  __global const long* ind = (__global const long*)(ib + ioff) + p * out_volume(g);
  long od0, od1, oh0, oh1, ow0, ow1;
  ad_candidates(d, g.D, g.OD, &od0, &od1);
  ad_candidates(h, g.H, g.OH, &oh0, &oh1);
  ad_candidates(w, g.W, g.OW, &ow0, &ow1);
  const long me = (d * g.H + h) * g.W + w;
  ACC s = 0;
  for (long od = od0; od < od1; ++od) {
    const long ds = ad_start(od, g.D, g.OD), de = ad_end(od, g.D, g.OD);
    if (d < ds || d >= de) continue;
    for (long oh = oh0; oh < oh1; ++oh) {
      const long hs = ad_start(oh, g.H, g.OH), he = ad_end(oh, g.H, g.OH);
      if (h < hs || h >= he) continue;
      for (long ow = ow0; ow < ow1; ++ow) {
        const long ws = ad_start(ow, g.W, g.OW), we = ad_end(ow, g.W, g.OW);
        if (w < ws || w >= we) continue;
        const long o = (od * g.OH + oh) * g.OW + ow;
        if (!mode)
          s += LD(go, o) / (ACC)((de - ds) * (he - hs) * (we - ws));
        else if (ind[o] == me)
          s += LD(go, o);
      }
    }
  }
  ST((__global T*)(gib + gioff), gid, s);
}

// Fractional max pooling. CPU computes the pseudo-random window starts in the storage type
// (generate_intervals<scalar_t>), so for half/bfloat16 every step rounds to it: `bits` is the
// storage mantissa width (10, 7) or 0 for no rounding. Values that matter are normal numbers.
inline ACC storage_round(ACC v, int bits) {
  if (bits == 0) return v;
  uint u = as_uint((float)v);
  const uint shift = 23 - bits;
  u += ((1u << (shift - 1)) - 1) + ((u >> shift) & 1);
  return (ACC)as_float(u & ~((1u << shift) - 1));
}

// Start of output o's window along one dimension (sample in [0, 1)).
inline long frac_start(long o, ACC sample, long in, long out, long pool, int bits) {
  if (o == out - 1) return in - pool;
  const ACC alpha =
      storage_round(storage_round((ACC)(in - pool), bits) / storage_round((ACC)(out - 1), bits),
                    bits);
  const ACC a = storage_round(storage_round(storage_round((ACC)o, bits) + sample, bits) * alpha,
                              bits);
  return (long)(int)a - (long)(int)storage_round(sample * alpha, bits);
}

// samples: (P, spatial) in the input dtype; 2-D takes (W, H) from them, 3-D (D, H, W), as CPU.
__kernel void fractional_fwd(__global char* yb, ulong yoff, __global char* ib, ulong ioff,
                             __global const char* xb, ulong xoff, __global const char* sb,
                             ulong soff, PoolGeom g, int spatial, int bits) {
  const long gid = get_global_id(0);
  if (gid >= g.P * out_volume(g)) return;
  long p, od, oh, ow;
  out_coords(gid, g, &p, &od, &oh, &ow);
  __global const T* x = (__global const T*)(xb + xoff) + p * in_volume(g);
  __global const T* smp = (__global const T*)(sb + soff) + p * spatial;
  const ACC sd = spatial == 3 ? LD(smp, 0) : 0;
  const ACC sh = LD(smp, 1), sw = spatial == 3 ? LD(smp, 2) : LD(smp, 0);
  const long ds = spatial == 3 ? frac_start(od, sd, g.D, g.OD, g.kd, bits) : 0;
  const long hs = frac_start(oh, sh, g.H, g.OH, g.kh, bits);
  const long ws = frac_start(ow, sw, g.W, g.OW, g.kw, bits);
  ACC best = ACC_LOWEST;
  long bi = (ds * g.H + hs) * g.W + ws;
  for (long d = ds; d < ds + g.kd; ++d)
    for (long h = hs; h < hs + g.kh; ++h)
      for (long w = ws; w < ws + g.kw; ++w) {
        const long i = (d * g.H + h) * g.W + w;
        const ACC v = LD(x, i);
        if (v > best || ACC_ISNAN(v)) {
          best = v;
          bi = i;
        }
      }
  ST((__global T*)(yb + yoff), gid, best);
  ((__global long*)(ib + ioff))[gid] = bi;
}

// One work item per volume, adding in CPU's order and precision (the storage type), so results
// are bit-identical. Indices outside the volume (only from tampered indices) are skipped.
__kernel void index_scatter_bwd(__global char* gib, ulong gioff, __global const char* gob,
                                ulong gooff, __global const char* ib, ulong ioff, PoolGeom g) {
  const long p = get_global_id(0);
  if (p >= g.P) return;
  __global T* gi = (__global T*)(gib + gioff) + p * in_volume(g);
  __global const T* go = (__global const T*)(gob + gooff) + p * out_volume(g);
  __global const long* ind = (__global const long*)(ib + ioff) + p * out_volume(g);
  for (long i = 0; i < in_volume(g); ++i) ST(gi, i, (ACC)0);
  for (long o = 0; o < out_volume(g); ++o) {
    const long i = ind[o];
    if (i >= 0 && i < in_volume(g)) ST(gi, i, LD(gi, i) + LD(go, o));
  }
}
