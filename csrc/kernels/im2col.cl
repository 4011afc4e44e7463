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

__kernel void im2col(__global char* colb, ulong coloff, __global const char* xb, ulong xoff,
                     ConvGeom g) {
  const long gid = get_global_id(0);
  const long L = g.OH * g.OW;
  if (gid >= g.C * g.KH * g.KW * g.N * L) return;
  __global T* col = (__global T*)(colb + coloff);
  __global const T* x = (__global const T*)(xb + xoff);
  const long l = gid % L;
  long r = gid / L;
  const long n = r % g.N;
  r /= g.N;
  const long kj = r % g.KW;
  r /= g.KW;
  const long ki = r % g.KH;
  const long c = r / g.KH;
  const long h = (l / g.OW) * g.sh - g.ph + ki * g.dh;
  const long w = (l % g.OW) * g.sw - g.pw + kj * g.dw;
  ACC v = 0;
  if (h >= 0 && h < g.H && w >= 0 && w < g.W) v = LD(x, n * g.sn + c * g.sc + h * g.sy + w * g.sx);
  ST(col, gid, v);
}

// Gathers (no atomics, fixed order): each image element sums the column entries that read it.
__kernel void col2im(__global char* imb, ulong imoff, __global const char* colb, ulong coloff,
                     ConvGeom g) {
  const long gid = get_global_id(0);
  if (gid >= g.N * g.C * g.H * g.W) return;
  __global T* im = (__global T*)(imb + imoff);
  __global const T* col = (__global const T*)(colb + coloff);
  const long w = gid % g.W;
  long r = gid / g.W;
  const long h = r % g.H;
  r /= g.H;
  const long c = r % g.C;
  const long n = r / g.C;
  const long L = g.OH * g.OW, NL = g.N * L;
  ACC s = 0;
  for (long ki = 0; ki < g.KH; ++ki) {
    const long hh = h + g.ph - ki * g.dh;
    if (hh < 0 || hh % g.sh != 0 || hh / g.sh >= g.OH) continue;
    const long oh = hh / g.sh;
    for (long kj = 0; kj < g.KW; ++kj) {
      const long ww = w + g.pw - kj * g.dw;
      if (ww < 0 || ww % g.sw != 0 || ww / g.sw >= g.OW) continue;
      s += LD(col, ((c * g.KH + ki) * g.KW + kj) * NL + n * L + oh * g.OW + ww / g.sw);
    }
  }
  ST(im, gid, s);
}
