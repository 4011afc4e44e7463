// grid_sampler_2d and grid_sampler_3d, forward and backward (bilinear/trilinear, nearest, and
// bicubic in 2-D; zeros, border, reflection padding; align_corners) over contiguous input
// (N, C, [D,] H, W), grid (N, [OD,] OH, OW, dims) and output (N, C, [OD,] OH, OW), with the
// coordinate helpers of ATen/native/GridSampler.h. 2-D runs with D = OD = 1. Forward and the grid
// gradient take one work item per output point (all channels); the input gradient one work item
// per (n, c) plane, adding in CPU's order (output points row by row), without atomics.
typedef struct {
  long N, C, D, H, W, OD, OH, OW;
  int dims, interp, padding, align;  // interp 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
                               // 1 border, 2 reflection
} GridGeom;

inline ACC unnormalize(ACC c, long size, int align, ACC* g) {
  if (align) {
    *g = (ACC)(size - 1) / 2;
    return ((c + 1) / 2) * (ACC)(size - 1);
  }
  *g = (ACC)size / 2;
  return ((c + 1) * (ACC)size - 1) / 2;
}

inline ACC clip_set_grad(ACC in, long limit, ACC* g) {
  if (in <= 0) {
    *g = 0;
    return 0;
  }
  const ACC mx = (ACC)(limit - 1);
  *g = in >= mx ? (ACC)0 : (ACC)1;
  return in >= mx ? mx : in;
}

inline ACC reflect_set_grad(ACC in, long twice_low, long twice_high, ACC* g) {
  if (twice_low == twice_high) {
    *g = 0;
    return 0;
  }
  const ACC mn = (ACC)twice_low / 2, span = (ACC)(twice_high - twice_low) / 2;
  in = in - mn;
  int mult = 1;
  if (in < 0) {
    mult = -1;
    in = -in;
  }
  const ACC extra = fmod(in, span);
  const int flips = (int)floor(in / span);
  *g = (ACC)(flips % 2 == 0 ? mult : -mult);
  return flips % 2 == 0 ? extra + mn : span - extra + mn;
}

// compute_coordinates, with the derivative of the padding step.
inline ACC pad_coord(ACC c, long size, int padding, int align, ACC* g) {
  ACC gc = 1, gr = 1;
  if (padding == 1) {
    c = clip_set_grad(c, size, &gc);
  } else if (padding == 2) {
    c = align ? reflect_set_grad(c, 0, 2 * (size - 1), &gr)
              : reflect_set_grad(c, -1, 2 * size - 1, &gr);
    c = clip_set_grad(c, size, &gc);
  }
  *g = gr * gc;
  return c;
}

// grid_sampler_compute_source_index(_set_grad).
inline ACC source_index(ACC c, long size, GridGeom g, ACC* grad) {
  ACC gu, gp;
  c = unnormalize(c, size, g.align, &gu);
  c = pad_coord(c, size, g.padding, g.align, &gp);
  *grad = gu * gp;
  return c;
}

inline int inside(long y, long x, GridGeom g) { return y >= 0 && y < g.H && x >= 0 && x < g.W; }
inline int inside3(long z, long y, long x, GridGeom g) {
  return z >= 0 && z < g.D && inside(y, x, g);
}
inline long in_plane(GridGeom g) { return g.D * g.H * g.W; }
inline long out_plane(GridGeom g) { return g.OD * g.OH * g.OW; }

// Bicubic taps: the padded, truncated position of tap (x, y), or -1 outside (zeros padding).
inline long cubic_tap(ACC x, ACC y, GridGeom g) {
  ACC d;
  const long ix = (long)pad_coord(x, g.W, g.padding, g.align, &d);
  const long iy = (long)pad_coord(y, g.H, g.padding, g.align, &d);
  return inside(iy, ix, g) ? iy * g.W + ix : -1;
}

inline void cubic_coeffs(ACC t, ACC* c) {
  const ACC A = (ACC)-0.75;
  const ACC x1 = t, x2 = (ACC)1 - t;
  c[0] = ((A * (x1 + 1) - 5 * A) * (x1 + 1) + 8 * A) * (x1 + 1) - 4 * A;
  c[1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;
  c[2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;
  c[3] = ((A * (x2 + 1) - 5 * A) * (x2 + 1) + 8 * A) * (x2 + 1) - 4 * A;
}

inline void cubic_coeffs_grad(ACC t, ACC* c) {
  const ACC A = (ACC)-0.75;
  ACC x = -1 - t;
  c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = -t;
  c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

// The (up to 16) input positions and weights output point (n, oh, ow) reads; pos -1: none.
// Also the derivative weights of the bilinear/bicubic taps along x and y (for the grid
// gradient) and the unnormalisation multipliers.
typedef struct {
  long pos[16];
  ACC w[16], wx[16], wy[16], wz[16];
  ACC cx[4], cy[4];  // bicubic: the separate coefficients (forward nests rows, then columns)
  int taps;
  ACC gx, gy, gz;
} Taps;

// Trilinear: the 8 corners in CPU's order (tnw, tne, tsw, tse, bnw, bne, bsw, bse), each weight
// the product of its per-dimension weights, whose derivatives are +-1.
inline void trilinear_taps(ACC ix, ACC iy, ACC iz, GridGeom g, Taps* t) {
  const ACC fx = floor(ix), fy = floor(iy), fz = floor(iz);
  const long x0 = (long)fx, y0 = (long)fy, z0 = (long)fz;
  const ACC ax = ix - fx, ay = iy - fy, az = iz - fz;
  const ACC ex = fx + 1 - ix, ey = fy + 1 - iy, ez = fz + 1 - iz;
  t->taps = 8;
  for (int k = 0; k < 8; ++k) {
    const int bx = k & 1, by = (k >> 1) & 1, bz = k >> 2;
    const long x = x0 + bx, y = y0 + by, z = z0 + bz;
    const ACC wx = bx ? ax : ex, wy = by ? ay : ey, wz = bz ? az : ez;
    t->pos[k] = inside3(z, y, x, g) ? (z * g.H + y) * g.W + x : -1;
    t->w[k] = wx * wy * wz;
    t->wx[k] = (bx ? 1 : -1) * wy * wz;
    t->wy[k] = (by ? 1 : -1) * wx * wz;
    t->wz[k] = (bz ? 1 : -1) * wx * wy;
  }
}

inline void taps_of(__global const T* grid, long pt, GridGeom g, Taps* t) {
  const ACC x = LD(grid, g.dims * pt), y = LD(grid, g.dims * pt + 1);
  t->gz = 0;
  if (g.dims == 3) {
    const ACC ix = source_index(x, g.W, g, &t->gx), iy = source_index(y, g.H, g, &t->gy);
    const ACC iz = source_index(LD(grid, 3 * pt + 2), g.D, g, &t->gz);
    if (g.interp == 0) {
      trilinear_taps(ix, iy, iz, g, t);
    } else {
      const long nx = (long)rint(ix), ny = (long)rint(iy), nz = (long)rint(iz);
      t->taps = 1;
      t->pos[0] = inside3(nz, ny, nx, g) ? (nz * g.H + ny) * g.W + nx : -1;
      t->w[0] = 1;
      t->wx[0] = t->wy[0] = t->wz[0] = 0;
    }
    return;
  }
  for (int k = 0; k < 16; ++k) t->wz[k] = 0;
  if (g.interp == 2) {
    const ACC ix = unnormalize(x, g.W, g.align, &t->gx), iy = unnormalize(y, g.H, g.align, &t->gy);
    const ACC x0 = floor(ix), y0 = floor(iy), tx = ix - x0, ty = iy - y0;
    ACC cx[4], cy[4], dx[4], dy[4];
    cubic_coeffs(tx, cx);
    cubic_coeffs(ty, cy);
    for (int i = 0; i < 4; ++i) t->cx[i] = cx[i], t->cy[i] = cy[i];
    cubic_coeffs_grad(tx, dx);
    cubic_coeffs_grad(ty, dy);
    t->taps = 16;
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        const int k = j * 4 + i;
        t->pos[k] = cubic_tap(x0 - 1 + i, y0 - 1 + j, g);
        t->w[k] = cx[i] * cy[j];
        t->wx[k] = -dx[i] * cy[j];
        t->wy[k] = -dy[j] * cx[i];
      }
    return;
  }
  const ACC ix = source_index(x, g.W, g, &t->gx), iy = source_index(y, g.H, g, &t->gy);
  if (g.interp == 1) {
    const long nx = (long)rint(ix), ny = (long)rint(iy);
    t->taps = 1;
    t->pos[0] = inside(ny, nx, g) ? ny * g.W + nx : -1;
    t->w[0] = 1;
    t->wx[0] = t->wy[0] = 0;
    return;
  }
  const ACC fx = floor(ix), fy = floor(iy);
  const long x0 = (long)fx, y0 = (long)fy;
  const ACC e = fx + 1 - ix, f = fy + 1 - iy, a = ix - fx, b = iy - fy;  // (se - i), (i - nw)
  t->taps = 4;
  // nw, ne, sw, se as CPU orders them
  t->pos[0] = inside(y0, x0, g) ? y0 * g.W + x0 : -1;
  t->pos[1] = inside(y0, x0 + 1, g) ? y0 * g.W + x0 + 1 : -1;
  t->pos[2] = inside(y0 + 1, x0, g) ? (y0 + 1) * g.W + x0 : -1;
  t->pos[3] = inside(y0 + 1, x0 + 1, g) ? (y0 + 1) * g.W + x0 + 1 : -1;
  t->w[0] = e * f, t->w[1] = a * f, t->w[2] = e * b, t->w[3] = a * b;
  t->wx[0] = -f, t->wx[1] = f, t->wx[2] = -b, t->wx[3] = b;
  t->wy[0] = -e, t->wy[1] = -a, t->wy[2] = e, t->wy[3] = a;
}

__kernel void grid_fwd(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                       __global const char* gb, ulong goff, GridGeom g) {
  const long pt = get_global_id(0);
  if (pt >= g.N * out_plane(g)) return;
  const long n = pt / out_plane(g), o = pt % out_plane(g);
  Taps t;
  taps_of((__global const T*)(gb + goff), pt, g, &t);
  __global T* y = (__global T*)(yb + yoff);
  for (long c = 0; c < g.C; ++c) {
    __global const T* x = (__global const T*)(xb + xoff) + (n * g.C + c) * in_plane(g);
    ACC s = 0;
    if (g.interp == 2) {  // rows first, then across them, as cubic_interp1d nests
      for (int j = 0; j < 4; ++j) {
        ACC r = 0;
        for (int i = 0; i < 4; ++i) {
          const long p = t.pos[j * 4 + i];
          r += (p >= 0 ? LD(x, p) : (ACC)0) * t.cx[i];
        }
        s += r * t.cy[j];
      }
    } else {
      for (int k = 0; k < t.taps; ++k)
        if (t.pos[k] >= 0) s += LD(x, t.pos[k]) * t.w[k];
    }
    ST(y, (n * g.C + c) * out_plane(g) + o, s);
  }
}

// Grid gradient: d out / d (x, y) summed over channels, times the coordinate multipliers.
__kernel void grid_bwd_grid(__global char* ggb, ulong ggoff, __global const char* gob,
                            ulong gooff, __global const char* xb, ulong xoff,
                            __global const char* gb, ulong goff, GridGeom g) {
  const long pt = get_global_id(0);
  if (pt >= g.N * out_plane(g)) return;
  const long n = pt / out_plane(g), o = pt % out_plane(g);
  Taps t;
  taps_of((__global const T*)(gb + goff), pt, g, &t);
  ACC gx = 0, gy = 0, gz = 0;
  for (long c = 0; c < g.C; ++c) {
    __global const T* x = (__global const T*)(xb + xoff) + (n * g.C + c) * in_plane(g);
    const ACC go = LD((__global const T*)(gob + gooff), (n * g.C + c) * out_plane(g) + o);
    for (int k = 0; k < t.taps; ++k)
      if (t.pos[k] >= 0) {
        const ACC v = LD(x, t.pos[k]);
        gx += v * t.wx[k] * go;
        gy += v * t.wy[k] * go;
        gz += v * t.wz[k] * go;
      }
  }
  __global T* gg = (__global T*)(ggb + ggoff);
  ST(gg, g.dims * pt, t.gx * gx);
  ST(gg, g.dims * pt + 1, t.gy * gy);
  if (g.dims == 3) ST(gg, 3 * pt + 2, t.gz * gz);
}

// Input gradient of plane (n, c): every output point adds its weights times its gradient.
__kernel void grid_bwd_input(__global char* gib, ulong gioff, __global const char* gob,
                             ulong gooff, __global const char* gb, ulong goff, GridGeom g) {
  const long plane = get_global_id(0);
  if (plane >= g.N * g.C) return;
  const long n = plane / g.C;
  __global T* gi = (__global T*)(gib + gioff) + plane * in_plane(g);
  __global const T* go = (__global const T*)(gob + gooff) + plane * out_plane(g);
  for (long i = 0; i < in_plane(g); ++i) ST(gi, i, (ACC)0);
  for (long o = 0; o < out_plane(g); ++o) {
    Taps t;
    taps_of((__global const T*)(gb + goff), n * out_plane(g) + o, g, &t);
    const ACC v = LD(go, o);
    for (int k = 0; k < t.taps; ++k)
      if (t.pos[k] >= 0) ST(gi, t.pos[k], LD(gi, t.pos[k]) + t.w[k] * v);
  }
}
