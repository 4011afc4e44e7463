// im2col / col2im for 2-D convolutions (1-D runs as H = 1). The column matrix is laid out
// (C, KH, KW, N, OH, OW) contiguous, so group g's rows are one (Cg*KH*KW, N*OH*OW) matrix and
// a grouped convolution is one batched GEMM. Image element strides are arguments (the image read
// by im2col may be channels_last or sliced); col2im writes a contiguous image.
typedef struct {
  long N, C, H, W;      // image
  long KH, KW, OH, OW;  // kernel, column spatial size
  long sh, sw, ph, pw, dh, dw;
  long sn, sc, sy, sx;  // image element strides (im2col input)
} ConvGeom;

// One work item per column row segment: (oh, r) with r = ((c * KH + ki) * KW + kj) * N + n writes
// the OW entries of output row oh (the divisions happen once per item, not per element). Global
// size (OH, C * KH * KW * N).
// Row rk = (c * KH + ki) * KW + kj of sample n starts at rk * cs_k + n * cs_n: the
// (C*KH*KW, N, L) layout (cs_k = N * L, cs_n = L) or a per-sample (N, C*KH*KW, L) one.
__kernel void im2col(__global char* colb, ulong coloff, __global const char* xb, ulong xoff,
                     ConvGeom g, long cs_n, long cs_k) {
  const long oh = get_global_id(0), r = get_global_id(1);
  const long n = r % g.N;
  long q = r / g.N;
  const long rk = q;
  const long kj = q % g.KW;
  q /= g.KW;
  const long ki = q % g.KH;
  const long c = q / g.KH;
  __global T* col = (__global T*)(colb + coloff) + rk * cs_k + n * cs_n + oh * g.OW;
  const long h = oh * g.sh - g.ph + ki * g.dh;
  if (h < 0 || h >= g.H) {
    for (long ow = 0; ow < g.OW; ++ow) ST(col, ow, (ACC)0);
    return;
  }
  __global const T* xr = (__global const T*)(xb + xoff) + n * g.sn + c * g.sc + h * g.sy;
  const long w0 = kj * g.dw - g.pw;
  for (long ow = 0; ow < g.OW; ++ow) {
    const long w = ow * g.sw + w0;
    const ACC v = (w >= 0 && w < g.W) ? LD(xr, w * g.sx) : (ACC)0;
    ST(col, ow, v);
  }
}

// The output columns ow in [lo, hi) = (x, y) whose image column ow * sw + w0 lies within [0, W).
inline long2 ow_span(const long w0, const ConvGeom g) {
  long lo = w0 >= 0 ? 0 : (-w0 + g.sw - 1) / g.sw;
  long hi = g.W - 1 - w0 >= 0 ? (g.W - 1 - w0) / g.sw + 1 : 0;
  lo = min(lo, g.OW);
  return (long2)(lo, max(lo, min(hi, g.OW)));
}

// Gathers (no atomics, fixed order): each image element sums the column entries that read it.
// One work item per image row (h, n * C + c) of the contiguous image. Global size (H, N * C).
// Column (row r = (c * KH + ki) * KW + kj, sample n, pixel l) at r * cs_k + n * cs_n + l: the
// (C*KH*KW, N, L) layout im2col writes (cs_k = N * L, cs_n = L) or a per-sample (N, C*KH*KW, L)
// one (cs_n = C*KH*KW * L, cs_k = L).
#define COL_ROW 64
__kernel void col2im(__global char* imb, ulong imoff, __global const char* colb, ulong coloff,
                     ConvGeom g, long cs_n, long cs_k) {
  const long h = get_global_id(0), nc = get_global_id(1);
  const long c = nc % g.C, n = nc / g.C;
  __global T* im = (__global T*)(imb + imoff) + (nc * g.H + h) * g.W;
  __global const T* colc = (__global const T*)(colb + coloff) + c * g.KH * g.KW * cs_k + n * cs_n;
  // The row in blocks of COL_ROW private sums; per tap (ki, kj) the column entries ow whose
  // image column falls in the block, scattered by range (no division per element). Each element
  // still adds its taps in (ki, kj) order.
  for (long w0 = 0; w0 < g.W; w0 += COL_ROW) {
    const int jn = (int)min((long)COL_ROW, g.W - w0);
    ACC acc[COL_ROW];
    for (int j = 0; j < COL_ROW; ++j) acc[j] = 0;
    for (long ki = 0; ki < g.KH; ++ki) {
      const long hh = h + g.ph - ki * g.dh;
      if (hh < 0 || hh % g.sh != 0 || hh / g.sh >= g.OH) continue;
      __global const T* crow = colc + ki * g.KW * cs_k + (hh / g.sh) * g.OW;
      for (long kj = 0; kj < g.KW; ++kj) {
        const long num = w0 + g.pw - kj * g.dw, num_hi = num + jn - 1;
        if (num_hi < 0) continue;
        const long lo = num <= 0 ? 0 : (num + g.sw - 1) / g.sw;
        const long hi = min(g.OW - 1, num_hi / g.sw);
        __global const T* cr = crow + kj * cs_k;
        for (long ow = lo; ow <= hi; ++ow) acc[ow * g.sw - num] += LD(cr, ow);
      }
    }
    for (int j = 0; j < jn; ++j) ST(im, w0 + j, acc[j]);
  }
}

// CPU drivers: one work item per (sample n = get_global_id(0), channel c = get_global_id(1)),
// writing the KH * KW whole column rows of that channel, each in order: per output row the span
// of in-bounds image columns computed once, zeros either side, and for unit width strides a
// plain copy the compiler vectorises (no test per element). The channel's image rows stay in the
// L1/L2 cache across its taps. Same layouts as im2col above.
__kernel void im2col_rows(__global char* colb, ulong coloff, __global const char* xb, ulong xoff,
                          ConvGeom g, long cs_n, long cs_k) {
  const long n = get_global_id(0), c = get_global_id(1);
  __global const T* xc = (__global const T*)(xb + xoff) + n * g.sn + c * g.sc;
  const bool unit = g.sw == 1 && g.sx == 1;
  for (long ki = 0; ki < g.KH; ++ki) {
    for (long kj = 0; kj < g.KW; ++kj) {
      const long rk = (c * g.KH + ki) * g.KW + kj;
      __global T* col = (__global T*)(colb + coloff) + rk * cs_k + n * cs_n;
      const long w0 = kj * g.dw - g.pw;
      const long2 span = ow_span(w0, g);
      const long lo = span.x, hi = span.y;
      for (long oh = 0; oh < g.OH; ++oh, col += g.OW) {
        const long h = oh * g.sh - g.ph + ki * g.dh;
        if (h < 0 || h >= g.H) {
          for (long ow = 0; ow < g.OW; ++ow) ST(col, ow, (ACC)0);
          continue;
        }
        __global const T* xr = xc + h * g.sy;
        for (long ow = 0; ow < lo; ++ow) ST(col, ow, (ACC)0);
        if (unit) {
          __global const T* xs = xr + w0;
          for (long ow = lo; ow < hi; ++ow) col[ow] = xs[ow];
        } else {
          for (long ow = lo; ow < hi; ++ow) ST(col, ow, LD(xr, (ow * g.sw + w0) * g.sx));
        }
        for (long ow = hi; ow < g.OW; ++ow) ST(col, ow, (ACC)0);
      }
    }
  }
}

// CPU drivers, float32/float64 (the sums run in the image's own dtype): one work item per image
// plane (n * C + c = get_global_id(0)) of the contiguous image, which it zeroes and then adds
// every tap's column row into, tap by tap ((ki, kj) order, as CPU PyTorch's col2im adds them),
// in spans of in-bounds columns (unit width strides: a vectorised add along the row). The plane
// stays in the L1/L2 cache across the taps; the columns are read once, in order.
__kernel void col2im_planes(__global char* imb, ulong imoff, __global const char* colb,
                            ulong coloff, ConvGeom g, long cs_n, long cs_k) {
  const long nc = get_global_id(0);
  const long c = nc % g.C, n = nc / g.C;
  __global T* im = (__global T*)(imb + imoff) + nc * g.H * g.W;
  __global const T* colc = (__global const T*)(colb + coloff) + c * g.KH * g.KW * cs_k + n * cs_n;
  for (long i = 0; i < g.H * g.W; ++i) im[i] = (T)0;
  for (long ki = 0; ki < g.KH; ++ki) {
    for (long kj = 0; kj < g.KW; ++kj) {
      __global const T* cr = colc + (ki * g.KW + kj) * cs_k;
      const long w0 = kj * g.dw - g.pw;
      const long2 span = ow_span(w0, g);
      const long lo = span.x, hi = span.y;
      for (long oh = 0; oh < g.OH; ++oh, cr += g.OW) {
        const long h = oh * g.sh - g.ph + ki * g.dh;
        if (h < 0 || h >= g.H) continue;
        __global T* ir = im + h * g.W + w0;
        if (g.sw == 1) {
          for (long ow = lo; ow < hi; ++ow) ir[ow] += cr[ow];
        } else {
          for (long ow = lo; ow < hi; ++ow) ir[ow * g.sw] += cr[ow];
        }
      }
    }
  }
}

// Direct depthwise convolution (one input channel per group, O = C * mult output channels):
// no columns and no GEMM. w is the contiguous (O, 1, KH, KW) weight, g the input's geometry
// (N, C, H, W, strides) with the output size (OH, OW); y and go are contiguous (N, O, OH, OW).
// Row blocks: one work item per (output row, 64 columns of it) accumulates the taps into a row
// of 64 private sums (the inner loop runs along the row, which compilers vectorise), with the
// (n, o) division once per item. Global size (ceil(OW / 64), OH, N * O).
#define DW_ROW 64
__kernel void depthwise_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                            __global const char* wb, ulong woff, ConvGeom g, long O) {
  const long ob = get_global_id(0), oh = get_global_id(1), no = get_global_id(2);
  const long o = no % O, n = no / O, c = o / (O / g.C);
  __global const T* x = (__global const T*)(xb + xoff) + n * g.sn + c * g.sc;
  __global const T* w = (__global const T*)(wb + woff) + o * g.KH * g.KW;
  const long ow0 = ob * DW_ROW;
  const int jn = (int)min((long)DW_ROW, g.OW - ow0);
  ACC acc[DW_ROW];
  for (int j = 0; j < DW_ROW; ++j) acc[j] = 0;
  for (long ki = 0; ki < g.KH; ++ki) {
    const long h = oh * g.sh - g.ph + ki * g.dh;
    if (h < 0 || h >= g.H) continue;
    __global const T* xr = x + h * g.sy;
    for (long kj = 0; kj < g.KW; ++kj) {
      const ACC wv = LD(w, ki * g.KW + kj);
      const long wbase = ow0 * g.sw - g.pw + kj * g.dw;
      for (int j = 0; j < jn; ++j) {
        const long wc = wbase + j * g.sw;
        if (wc >= 0 && wc < g.W) acc[j] += LD(xr, wc * g.sx) * wv;
      }
    }
  }
  __global T* y = (__global T*)(yb + yoff) + (no * g.OH + oh) * g.OW + ow0;
  for (int j = 0; j < jn; ++j) ST(y, j, acc[j]);
}

// grad_input (contiguous (N, C, H, W)) in row blocks, as depthwise_fwd: one work item per
// (input row, 64 columns of it). Global size (ceil(W / 64), H, N * C).
__kernel void depthwise_bwd_input(__global char* gib, ulong gioff, __global const char* gob,
                                  ulong gooff, __global const char* wb, ulong woff, ConvGeom g,
                                  long O) {
  const long wb0 = get_global_id(0), h = get_global_id(1), nc = get_global_id(2);
  const long c = nc % g.C, n = nc / g.C, mult = O / g.C;
  const long w0 = wb0 * DW_ROW;
  const int jn = (int)min((long)DW_ROW, g.W - w0);
  ACC acc[DW_ROW];
  for (int j = 0; j < DW_ROW; ++j) acc[j] = 0;
  for (long m = 0; m < mult; ++m) {
    const long o = c * mult + m;
    __global const T* go = (__global const T*)(gob + gooff) + (n * O + o) * g.OH * g.OW;
    __global const T* w = (__global const T*)(wb + woff) + o * g.KH * g.KW;
    for (long ki = 0; ki < g.KH; ++ki) {
      const long hh = h + g.ph - ki * g.dh;
      if (hh < 0 || hh % g.sh != 0 || hh / g.sh >= g.OH) continue;
      __global const T* gor = go + (hh / g.sh) * g.OW;
      for (long kj = 0; kj < g.KW; ++kj) {
        const ACC wv = LD(w, ki * g.KW + kj);
        // The outputs ow of this tap that read columns w0 .. w0 + jn - 1: ow * sw = w + pw -
        // kj * dw, scattered into the private row (no division per element).
        const long num = w0 + g.pw - kj * g.dw, num_hi = num + jn - 1;
        if (num_hi < 0) continue;
        const long lo = num <= 0 ? 0 : (num + g.sw - 1) / g.sw;
        const long hi = min(g.OW - 1, num_hi / g.sw);
        for (long ow = lo; ow <= hi; ++ow) acc[ow * g.sw - num] += LD(gor, ow) * wv;
      }
    }
  }
  __global T* gi = (__global T*)(gib + gioff) + (nc * g.H + h) * g.W + w0;
  for (int j = 0; j < jn; ++j) ST(gi, j, acc[j]);
}

// grad_weight, first pass: partial sums over one output row each, part[(n * OH + oh)][o][tap]
// (taps KH * KW, in ACC: float for 16-bit floats), each tap's sum running along the row; a sum over the first dimension (fixed
// order) finishes it. Global size (OH, O, N).
__kernel void depthwise_bwd_weight_rows(__global char* pb, ulong poff, __global const char* gob,
                                        ulong gooff, __global const char* xb, ulong xoff,
                                        ConvGeom g, long O) {
  const long oh = get_global_id(0), o = get_global_id(1), n = get_global_id(2);
  const long c = o / (O / g.C), taps = g.KH * g.KW;
  __global const T* go = (__global const T*)(gob + gooff) + ((n * O + o) * g.OH + oh) * g.OW;
  __global const T* x = (__global const T*)(xb + xoff) + n * g.sn + c * g.sc;
  __global ACC* part = (__global ACC*)(pb + poff) + ((n * g.OH + oh) * O + o) * taps;
  for (long ki = 0; ki < g.KH; ++ki) {
    const long h = oh * g.sh - g.ph + ki * g.dh;
    const bool row_in = h >= 0 && h < g.H;
    __global const T* xr = x + (row_in ? h : 0) * g.sy;
    for (long kj = 0; kj < g.KW; ++kj) {
      ACC s = 0;
      if (row_in) {
        // The outputs whose tap (ki, kj) reads a column inside the row.
        const long off = kj * g.dw - g.pw;  // wc = ow * sw + off
        const long lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
        const long hi = min(g.OW - 1, (g.W - 1 - off) < 0 ? -1 : (g.W - 1 - off) / g.sw);
        for (long ow = lo; ow <= hi; ++ow) s += LD(go, ow) * LD(xr, (ow * g.sw + off) * g.sx);
      }
      part[ki * g.KW + kj] = s;
    }
  }
}

// 3-D convolutions: the same column layout with a depth axis, (C, KD, KH, KW, N, OD, OH, OW),
// so a 3-D convolution is the same batched GEMM. Used only when the depth axis is real (2-D and
// 1-D convolutions take im2col/col2im above).
typedef struct {
  long N, C, D, H, W;
  long KD, KH, KW, OD, OH, OW;
  long sd, sh, sw, pd, ph, pw, dd, dh, dw;
  long sn, sc, sz, sy, sx;  // volume element strides (vol2col input)
} ConvGeom3;

// One work item per column row segment (od * OH + oh, r), r = (((c * KD + kd) * KH + ki) * KW
// + kj) * N + n, writing OW entries. Global size (OD * OH, C * KD * KH * KW * N).
__kernel void vol2col(__global char* colb, ulong coloff, __global const char* xb, ulong xoff,
                      ConvGeom3 g, long cs_n, long cs_k) {
  const long odh = get_global_id(0), r = get_global_id(1);
  const long od = odh / g.OH, oh = odh % g.OH;
  const long n = r % g.N;
  long q = r / g.N;
  const long rk = q;
  const long kj = q % g.KW;
  q /= g.KW;
  const long ki = q % g.KH;
  q /= g.KH;
  const long kd = q % g.KD;
  const long c = q / g.KD;
  __global T* col = (__global T*)(colb + coloff) + rk * cs_k + n * cs_n + odh * g.OW;
  const long d = od * g.sd - g.pd + kd * g.dd;
  const long h = oh * g.sh - g.ph + ki * g.dh;
  if (d < 0 || d >= g.D || h < 0 || h >= g.H) {
    for (long ow = 0; ow < g.OW; ++ow) ST(col, ow, (ACC)0);
    return;
  }
  __global const T* xr =
      (__global const T*)(xb + xoff) + n * g.sn + c * g.sc + d * g.sz + h * g.sy;
  const long w0 = kj * g.dw - g.pw;
  for (long ow = 0; ow < g.OW; ++ow) {
    const long w = ow * g.sw + w0;
    const ACC v = (w >= 0 && w < g.W) ? LD(xr, w * g.sx) : (ACC)0;
    ST(col, ow, v);
  }
}

// The adjoint of vol2col as a gather into the contiguous volume: one work item per volume row
// (d * H + h, n * C + c). Global size (D * H, N * C).
__kernel void col2vol(__global char* imb, ulong imoff, __global const char* colb, ulong coloff,
                      ConvGeom3 g, long cs_n, long cs_k) {
  const long dh = get_global_id(0), nc = get_global_id(1);
  const long d = dh / g.H, h = dh % g.H;
  const long c = nc % g.C, n = nc / g.C;
  __global T* im = (__global T*)(imb + imoff) + (nc * g.D * g.H + dh) * g.W;
  __global const T* colc =
      (__global const T*)(colb + coloff) + c * g.KD * g.KH * g.KW * cs_k + n * cs_n;
  for (long w = 0; w < g.W; ++w) {
    ACC s = 0;
    for (long kd = 0; kd < g.KD; ++kd) {
      const long zz = d + g.pd - kd * g.dd;
      if (zz < 0 || zz % g.sd != 0) continue;
      const long od = zz / g.sd;
      if (od >= g.OD) continue;
      for (long ki = 0; ki < g.KH; ++ki) {
        const long hh = h + g.ph - ki * g.dh;
        if (hh < 0 || hh % g.sh != 0) continue;
        const long oh = hh / g.sh;
        if (oh >= g.OH) continue;
        __global const T* crow = colc + (kd * g.KH + ki) * g.KW * cs_k + (od * g.OH + oh) * g.OW;
        for (long kj = 0; kj < g.KW; ++kj) {
          const long ww = w + g.pw - kj * g.dw;
          if (ww < 0 || ww % g.sw != 0) continue;
          const long ow = ww / g.sw;
          if (ow >= g.OW) continue;
          s += LD(crow, kj * cs_k + ow);
        }
      }
    }
    ST(im, w, s);
  }
}

// ---- Vectorised depthwise kernels for width strides 1 and 2 (the common 3x3 / 5x5 layers). Each
// work item runs down a block of output rows of one (sample, channel) and 32 output columns of
// them, as two ACC16 vectors (the CPU drivers' zmm registers; PoCL vectorises little across work
// items of kernels with inner loops). An input row is staged once into a private ring of rows
// with zeros in the padding, so every tap is an unaligned vector load at a constant offset and
// the output rows of a block reuse the rows their neighbours staged.
#define DWV_CAT_(a, b) a##b
#define DWV_CAT(a, b) DWV_CAT_(a, b)
typedef DWV_CAT(ACC, 16) dwv_t;
#define DWV_COLS 32  // output columns per work item: two vectors
#define DWV_SPAN 64  // staged row width: DWV_COLS + (KW - 1) * dw / sw <= DWV_SPAN
#define DWV_SW 2     // width strides up to this
#define DWV_ROW (DWV_SPAN * DWV_SW)
#define DWV_RING 8   // staged rows: (KH - 1) * dh + 1 <= DWV_RING
#define DWV_TAPS 25  // KH * KW <= DWV_TAPS

// The sum of a vector's 16 lanes as a tree of halves (depth 4; a store and 16 dependent scalar
// adds took longer than the row's multiply-adds in the weight-gradient kernels).
inline ACC dwv_hsum(dwv_t v) {
  const DWV_CAT(ACC, 8) h8 = v.lo + v.hi;
  const DWV_CAT(ACC, 4) h4 = h8.lo + h8.hi;
  const DWV_CAT(ACC, 2) h2 = h4.lo + h4.hi;
  return h2.x + h2.y;
}

// Columns base + p + i * sw (i < DWV_SPAN) of the row xr (element stride sx, width W) into
// buf[p * DWV_SPAN + i] for each phase p < sw (at most DWV_SW), zeros outside the row; so the
// columns a tap at offset q reads for consecutive outputs are consecutive in phase q % sw,
// from q / sw. A contiguous row with unit stride as one plain copy (compilers vectorise it).
inline void dwv_stage(ACC* buf, __global const T* xr, long sx, long W, long base, long sw) {
  if (sw == 1) {
    const int i0 = (int)clamp(-base, 0L, (long)DWV_SPAN);
    const int i1 = (int)clamp(W - base, (long)i0, (long)DWV_SPAN);
    for (int i = 0; i < i0; ++i) buf[i] = (ACC)0;
    if (sx == 1) {
      __global const T* xs = xr + base;
      for (int i = i0; i < i1; ++i) buf[i] = LD(xs, i);
    } else {
      for (int i = i0; i < i1; ++i) buf[i] = LD(xr, (base + i) * sx);
    }
    for (int i = i1; i < DWV_SPAN; ++i) buf[i] = (ACC)0;
    return;
  }
  // Strided: per phase the columns inside the row as one loop without a bounds test (the test
  // per element, with the load behind it, kept this loop scalar and branchy), zeros around it.
  for (long p = 0; p < sw; ++p) {
    ACC* bp = buf + p * DWV_SPAN;
    const long b = base + p;  // the column of i = 0; i is inside the row from i0 to i1
    const int i0 = (int)clamp(b < 0 ? (sw - 1 - b) / sw : 0L, 0L, (long)DWV_SPAN);
    const int i1 = (int)clamp(W > b ? (W - b + sw - 1) / sw : 0L, (long)i0, (long)DWV_SPAN);
    for (int i = 0; i < i0; ++i) bp[i] = (ACC)0;
    for (int i = i0; i < i1; ++i) bp[i] = LD(xr, (b + i * sw) * sx);
    for (int i = i1; i < DWV_SPAN; ++i) bp[i] = (ACC)0;
  }
}

// out (N, G * og, OH, OW) contiguous = correlation of `in` (geometry g: N, Cin, H, W, strides;
// the output size OH, OW; sw <= DWV_SW) with filters w, in G groups of og output channels: output
// channel o = grp * og + ol sums over m < M the input channel grp * M + m through the filter at
// w + grp * wg + ol * wo + m * wm (KH * KW taps, read flipped when `flip`: the input gradient,
// a correlation of grad_output with the flipped filters). A depthwise forward is G = C, og =
// the channel multiplier, M = 1; a grouped one og = O / G, M = C / G. Each work item computes
// OB output channels of one group (clamped to og) over a block of rb output rows (at most DWV_RB
// where M > 1: their sums over m wait in private memory) and 32 columns: per staged input row
// and tap, two vector loads feed 2 * OB multiply-adds. Global size (ceil(OW / 32), ceil(OH /
// rb), N * G * ceil(og / OB)).
#define DWV_RB 8
#define CONV_ROWS(NAME, OB)                                                                       \
  __kernel void NAME(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,          \
                     __global const char* wb, ulong woff, ConvGeom g, long G, long og, long M,    \
                     long wg, long wo, long wm, long rb, int flip) {                              \
    const long cb = get_global_id(0), blk = get_global_id(1), z = get_global_id(2);               \
    const long nob = (og + OB - 1) / OB, obk = z % nob, q = z / nob;                              \
    const long grp = q % G, n = q / G, ol0 = obk * OB;                                            \
    const long oh0 = blk * rb, oh1 = min(g.OH, oh0 + rb);                                         \
    const long ow0 = cb * DWV_COLS;                                                               \
    const int jn = (int)min((long)DWV_COLS, g.OW - ow0);                                          \
    const long base = ow0 * g.sw - g.pw, taps = g.KH * g.KW;                                      \
    __global const T* wgp = (__global const T*)(wb + woff) + grp * wg;                            \
    ACC wv[(OB) * DWV_TAPS];                                                                      \
    ACC ring[DWV_RING * DWV_ROW];                                                                 \
    long tag[DWV_RING];                                                                           \
    dwv_t acc[DWV_RB * 2 * (OB)];                                                                 \
    ACC tmp[DWV_COLS];                                                                            \
    for (long m = 0; m < M; ++m) {                                                                \
      __global const T* x = (__global const T*)(xb + xoff) + n * g.sn + (grp * M + m) * g.sc;     \
      for (int s = 0; s < DWV_RING; ++s) tag[s] = -1;                                             \
      _Pragma("unroll")                                                                           \
      for (int b = 0; b < (OB); ++b)                                                              \
        for (long t = 0; t < taps; ++t)                                                           \
          wv[b * DWV_TAPS + t] =                                                                  \
              LD(wgp, min(ol0 + b, og - 1) * wo + m * wm + (flip ? taps - 1 - t : t));            \
      for (long oh = oh0; oh < oh1; ++oh) {                                                       \
        dwv_t r[2 * (OB)];                                                                        \
        _Pragma("unroll")                                                                         \
        for (int b = 0; b < 2 * (OB); ++b) r[b] = (dwv_t)0;                                       \
        for (long ki = 0; ki < g.KH; ++ki) {                                                      \
          const long h = oh * g.sh - g.ph + ki * g.dh;                                            \
          if (h < 0 || h >= g.H) continue;                                                        \
          const int s = (int)(h % DWV_RING);                                                      \
          ACC* row = ring + s * DWV_ROW;                                                          \
          if (tag[s] != h) {                                                                      \
            dwv_stage(row, x + h * g.sy, g.sx, g.W, base, g.sw);                                  \
            tag[s] = h;                                                                           \
          }                                                                                       \
          for (long kj = 0; kj < g.KW; ++kj) {                                                    \
            const long t = ki * g.KW + kj;                                                        \
            const long q = kj * g.dw;                                                             \
            const ACC* xq = row + (q % g.sw) * DWV_SPAN + q / g.sw;                               \
            const dwv_t x0 = vload16(0, xq), x1 = vload16(0, xq + 16);                            \
            _Pragma("unroll")                                                                     \
            for (int b = 0; b < (OB); ++b) {                                                      \
              r[2 * b] += x0 * wv[b * DWV_TAPS + t];                                              \
              r[2 * b + 1] += x1 * wv[b * DWV_TAPS + t];                                          \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
        const long i = (M == 1 ? 0 : oh - oh0) * 2 * (OB);                                        \
        _Pragma("unroll")                                                                         \
        for (int b = 0; b < 2 * (OB); ++b) acc[i + b] = (M > 1 && m > 0) ? acc[i + b] + r[b] : r[b]; \
        if (m + 1 < M) continue;                                                                  \
        for (int b = 0; b < (OB) && ol0 + b < og; ++b) {                                          \
          vstore16(acc[i + 2 * b], 0, tmp);                                                       \
          vstore16(acc[i + 2 * b + 1], 0, tmp + 16);                                              \
          __global T* y = (__global T*)(yb + yoff) +                                              \
                          (((n * G + grp) * og + ol0 + b) * g.OH + oh) * g.OW + ow0;              \
          for (int j = 0; j < jn; ++j) ST(y, j, tmp[j]);                                          \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }
CONV_ROWS(conv_rows1, 1)
CONV_ROWS(conv_rows4, 4)
CONV_ROWS(conv_rows8, 8)

// grad_weight partial sums of a convolution in G = O / og groups of M input channels (depthwise:
// og = channel multiplier, M = 1), part[(n * nblk + blk) * O * M + o * M + m][tap] (in ACC). A
// work item takes one (sample, block of rb output rows, group, input channel m of it, block of
// OBW output channels of the group): it stages the input rows of its row block once (channel
// grp * M + m, zeros in the padding; at most DWV_IMG rows), then per output channel keeps two
// vector sums per tap of grad_output rows (staged, zeros past OW) times the shifted input rows,
// over the rows and column blocks. go with element strides gs (n, c, y; unit x); x with
// geometry g (sw <= DWV_SW). A sum over the first dimension finishes it. KHC, KWC: compile-time tap
// counts (loops unrolled, the 2 * KHC * KWC sums in registers), or 0 for the geometry's (at
// most DWV_TAPS taps, sums in private memory). Global size (nblk, G * M * ceil(og / OBW), N).
#define DWV_IMG 40
#define DWV_OBW 16
#define WGRAD_ROWS(NAME, KHC, KWC, U)                                                            \
  __kernel void NAME(__global char* pb, ulong poff, __global const char* gob, ulong gooff,        \
                     __global const char* xb, ulong xoff, ConvGeom g, long O, long og, long M,    \
                     long gsn, long gsc, long gsy, long rb) {                                     \
    const long blk = get_global_id(0), z = get_global_id(1), n = get_global_id(2);                \
    const long nblk = get_global_size(0), nob = (og + DWV_OBW - 1) / DWV_OBW;                     \
    const long obk = z % nob, m = (z / nob) % M, grp = z / nob / M;                               \
    const long KH = (KHC) ? (KHC) : g.KH, KW = (KWC) ? (KWC) : g.KW, taps = KH * KW;              \
    const long oh0 = blk * rb, oh1 = min(g.OH, oh0 + rb), hb = oh0 * g.sh - g.ph;                 \
    const long nrows = (oh1 - oh0 - 1) * g.sh + (KH - 1) * g.dh + 1;                              \
    __global const T* x = (__global const T*)(xb + xoff) + n * g.sn + (grp * M + m) * g.sc;       \
    ACC img[DWV_IMG * DWV_ROW];                                                                   \
    ACC gbuf[DWV_COLS];                                                                           \
    dwv_t acc[2 * ((KHC) ? (KHC) * (KWC) : DWV_TAPS)];                                            \
    const long ol1 = min(og, (obk + 1) * DWV_OBW);                                                \
    for (long ow0 = 0; ow0 < g.OW; ow0 += DWV_COLS) {                                             \
      const int jn = (int)min((long)DWV_COLS, g.OW - ow0);                                        \
      for (long r = 0; r < nrows; ++r) {                                                          \
        const long h = hb + r;                                                                    \
        if (h >= 0 && h < g.H)                                                                    \
          dwv_stage(img + r * DWV_ROW, x + h * g.sy, g.sx, g.W, ow0 * g.sw - g.pw, g.sw);         \
      }                                                                                           \
      for (long ol = obk * DWV_OBW; ol < ol1; ++ol) {                                             \
        const long o = grp * og + ol;                                                             \
        __global const T* go = (__global const T*)(gob + gooff) + n * gsn + o * gsc + ow0;       \
        _Pragma("unroll")                                                                         \
        for (int t = 0; t < 2 * ((KHC) ? (KHC) * (KWC) : DWV_TAPS); ++t) acc[t] = (dwv_t)0;       \
        for (long oh = oh0; oh < oh1; ++oh) {                                                     \
          __global const T* gr = go + oh * gsy;                                                   \
          for (int j = 0; j < jn; ++j) gbuf[j] = LD(gr, j);                                       \
          for (int j = jn; j < DWV_COLS; ++j) gbuf[j] = (ACC)0;                                   \
          const dwv_t g0 = vload16(0, gbuf), g1 = vload16(0, gbuf + 16);                          \
          U                                                                                       \
          for (long ki = 0; ki < KH; ++ki) {                                                      \
            const long r = (oh - oh0) * g.sh + ki * g.dh, h = hb + r;                             \
            if (h < 0 || h >= g.H) continue;                                                      \
            const ACC* row = img + r * DWV_ROW;                                                   \
            U                                                                                     \
            for (long kj = 0; kj < KW; ++kj) {                                                    \
              const long t = ki * KW + kj, q = kj * g.dw;                                         \
              const ACC* xq = row + (q % g.sw) * DWV_SPAN + q / g.sw;                             \
              acc[2 * t] += g0 * vload16(0, xq);                                                  \
              acc[2 * t + 1] += g1 * vload16(0, xq + 16);                                         \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
        __global ACC* part =                                                                      \
            (__global ACC*)(pb + poff) + ((n * nblk + blk) * O * M + o * M + m) * taps;           \
        U                                                                                         \
        for (long t = 0; t < taps; ++t) {                                                         \
          const ACC sum = dwv_hsum(acc[2 * t] + acc[2 * t + 1]);                                  \
          part[t] = ow0 == 0 ? sum : part[t] + sum;                                               \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }
// U: the unroll pragma of the tap loops where their counts are compile-time.
#define DWV_UNROLL _Pragma("unroll")
#define DWV_NO_UNROLL
WGRAD_ROWS(conv_wgrad_rows, 0, 0, DWV_NO_UNROLL)
WGRAD_ROWS(conv_wgrad_rows3x3, 3, 3, DWV_UNROLL)

// grad_weight partial sums of a grouped convolution with 3 x 3 filters (M > 1 input channels
// and 4 to DWV_OBW output channels a group), the layout of WGRAD_ROWS above:
// part[(n * nblk + blk) * O * M + o * M + m][tap]. A work item takes one (sample, block of rb <=
// WG_RB output rows, group): it stages the block's grad_output rows of all og output channels of
// the group once (zeros past OW), then per input channel m its input rows (zeros in the padding),
// and per OB output channels and filter row ki keeps 3 * OB vector sums (registers): per output
// row and 16 columns, 3 shifted input vectors and OB grad_output vectors feed 3 * OB
// multiply-adds. WGRAD_ROWS restaged the same grad_output rows for every input channel, loaded a
// vector for each multiply-add and summed each tap's lanes through memory. Global size (nblk, G,
// N).
#define WG_RB 32
#define WGRAD_G(NAME, OB)                                                                         \
  __kernel void NAME(__global char* pb, ulong poff, __global const char* gob, ulong gooff,        \
                     __global const char* xb, ulong xoff, ConvGeom g, long O, long og, long M,    \
                     long gsn, long gsc, long gsy, long rb) {                                     \
    const long blk = get_global_id(0), grp = get_global_id(1), n = get_global_id(2);              \
    const long nblk = get_global_size(0);                                                         \
    const long oh0 = blk * rb, oh1 = min(g.OH, oh0 + rb), hb = oh0 * g.sh - g.ph;                 \
    const long nrows = (oh1 - oh0 - 1) * g.sh + 2 * g.dh + 1;                                     \
    ACC img[DWV_IMG * DWV_ROW];                                                                   \
    ACC gst[DWV_OBW * WG_RB * DWV_COLS];                                                          \
    dwv_t acc[3 * (OB)];                                                                          \
    for (long ow0 = 0; ow0 < g.OW; ow0 += DWV_COLS) {                                             \
      const int jn = (int)min((long)DWV_COLS, g.OW - ow0);                                        \
      for (long ol = 0; ol < og; ++ol) {                                                          \
        __global const T* go =                                                                    \
            (__global const T*)(gob + gooff) + n * gsn + (grp * og + ol) * gsc + ow0;             \
        for (long oh = oh0; oh < oh1; ++oh) {                                                     \
          ACC* gr = gst + (ol * WG_RB + (oh - oh0)) * DWV_COLS;                                   \
          __global const T* gg = go + oh * gsy;                                                   \
          for (int j = 0; j < jn; ++j) gr[j] = LD(gg, j);                                         \
          for (int j = jn; j < DWV_COLS; ++j) gr[j] = (ACC)0;                                     \
        }                                                                                         \
      }                                                                                           \
      for (long m = 0; m < M; ++m) {                                                              \
        __global const T* x = (__global const T*)(xb + xoff) + n * g.sn + (grp * M + m) * g.sc;   \
        for (long r = 0; r < nrows; ++r) {                                                        \
          const long h = hb + r;                                                                  \
          if (h >= 0 && h < g.H)                                                                  \
            dwv_stage(img + r * DWV_ROW, x + h * g.sy, g.sx, g.W, ow0 * g.sw - g.pw, g.sw);       \
          else                                                                                    \
            for (int i = 0; i < DWV_ROW; ++i) img[r * DWV_ROW + i] = (ACC)0;                      \
        }                                                                                         \
        for (long ob0 = 0; ob0 < og; ob0 += (OB)) {                                               \
          for (int ki = 0; ki < 3; ++ki) {                                                        \
            _Pragma("unroll")                                                                     \
            for (int t = 0; t < 3 * (OB); ++t) acc[t] = (dwv_t)0;                                 \
            for (long oh = oh0; oh < oh1; ++oh) {                                                 \
              const ACC* row = img + ((oh - oh0) * g.sh + ki * g.dh) * DWV_ROW;                   \
              _Pragma("unroll")                                                                   \
              for (int hf = 0; hf < 2; ++hf) {                                                    \
                dwv_t xv[3];                                                                      \
                _Pragma("unroll")                                                                 \
                for (int kj = 0; kj < 3; ++kj) {                                                  \
                  const long q = kj * g.dw;                                                       \
                  xv[kj] = vload16(0, row + hf * 16 + (q % g.sw) * DWV_SPAN + q / g.sw);          \
                }                                                                                 \
                _Pragma("unroll")                                                                 \
                for (int b = 0; b < (OB); ++b) {                                                  \
                  const long ol = min(ob0 + b, og - 1);                                           \
                  const dwv_t gv =                                                                \
                      vload16(0, gst + (ol * WG_RB + (oh - oh0)) * DWV_COLS + hf * 16);           \
                  _Pragma("unroll")                                                               \
                  for (int kj = 0; kj < 3; ++kj) acc[b * 3 + kj] += gv * xv[kj];                  \
                }                                                                                 \
              }                                                                                   \
            }                                                                                     \
            _Pragma("unroll")                                                                     \
            for (int b = 0; b < (OB); ++b) {                                                      \
              if (ob0 + b >= og) break;                                                           \
              const long o = grp * og + ob0 + b;                                                  \
              __global ACC* part = (__global ACC*)(pb + poff) +                                   \
                                   ((n * nblk + blk) * O * M + o * M + m) * 9 + ki * 3;           \
              _Pragma("unroll")                                                                   \
              for (int kj = 0; kj < 3; ++kj) {                                                    \
                const ACC sum = dwv_hsum(acc[b * 3 + kj]);                                        \
                part[kj] = ow0 == 0 ? sum : part[kj] + sum;                                       \
              }                                                                                   \
            }                                                                                     \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }
WGRAD_G(conv_wgrad_grp4, 4)
WGRAD_G(conv_wgrad_grp8, 8)
