// Batch, layer and group normalisation. A "row" is the set of elements sharing one mean/rstd:
// row r holds the elements r*B + a*SA + i (a < A, i < B) of the contiguous input, e.g. batch norm
// channel c: B = H*W, A = N, SA = C*H*W; a layer-norm row: A = 1, B = normalised size. Element e
// uses statistic (e / sdiv) % smod and weight (e / wdiv) % wmod. Statistics, weights and sums are
// ACC arrays; the row reductions run one work group (RL items) per row in a fixed order.
#define RL 256

inline ACC wg_sum(ACC v, __local ACC* red) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 16) {
    ACC t = 0;
    for (int k = lid; k < RL; k += 16) t += red[k];
    red[RL + lid] = t;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    ACC t = 0;
    for (int k = 0; k < 16; ++k) t += red[RL + k];
    red[0] = t;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const ACC r = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// Runs BODY for each element offset e (from the row's start) that work item `lid` owns. Rows of
// at least RL contiguous elements are walked without 64-bit divisions (slow on CPUs).
#define ROW_LOOP(BODY)                                                        \
  if (A == 1 || B >= RL) {                                                    \
    for (long a = 0; a < A; ++a)                                              \
      for (long i = lid; i < B; i += RL) {                                    \
        const long e = a * SA + i;                                            \
        BODY                                                                  \
      }                                                                       \
  } else {                                                                    \
    for (long j = lid; j < A * B; j += RL) {                                  \
      const long e = (j / B) * SA + j % B;                                    \
      BODY                                                                    \
    }                                                                         \
  }

// stat[r] = mean, stat[rows + r] = 1 / sqrt(var + eps), stat[2 * rows + r] = biased var.
__kernel void row_moments(__global const char* xb, ulong xoff, __global char* sb, ulong soff,
                          long rows, long A, long SA, long B, ACC eps) {
  __local ACC red[RL + 16];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* x = (__global const T*)(xb + xoff) + r * B;
  __global ACC* st = (__global ACC*)(sb + soff);
  const long M = A * B;
  ACC s = 0;
  ROW_LOOP(s += LD(x, e);)
  const ACC mean = wg_sum(s, red) / M;
  ACC q = 0;
  ROW_LOOP(const ACC d = LD(x, e) - mean; q += d * d;)
  const ACC var = wg_sum(q, red) / M;
  if (lid == 0) {
    st[r] = mean;
    st[rows + r] = (ACC)1 / sqrt(var + eps);
    st[2 * rows + r] = var;
  }
}

// y = (x - mean) * rstd * w + b.
__kernel void norm_apply(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                         __global const char* mb, ulong moff, __global const char* rb, ulong roff,
                         __global const char* wb, ulong woff, __global const char* bb, ulong boff,
                         long n, long sdiv, long smod, long wdiv, long wmod, int has_w, int has_b) {
  const long e = get_global_id(0);
  if (e >= n) return;
  const long s = (e / sdiv) % smod, c = (e / wdiv) % wmod;
  ACC v = (LD((__global const T*)(xb + xoff), e) - ((__global const ACC*)(mb + moff))[s]) *
          ((__global const ACC*)(rb + roff))[s];
  if (has_w) v *= ((__global const ACC*)(wb + woff))[c];
  if (has_b) v += ((__global const ACC*)(bb + boff))[c];
  ST((__global T*)(yb + yoff), e, v);
}

// norm_apply for CPU drivers: item r takes elements [64 r, 64 r + 64) and steps its statistic
// and weight indices with counters instead of dividing per element (64-bit divisions do not
// vectorise on CPUs).
__kernel void norm_apply_runs(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                              __global const char* mb, ulong moff, __global const char* rb,
                              ulong roff, __global const char* wb, ulong woff,
                              __global const char* bb, ulong boff, long n, long sdiv, long smod,
                              long wdiv, long wmod, int has_w, int has_b) {
  const long e0 = get_global_id(0) * 64;
  if (e0 >= n) return;
  const long e1 = min(e0 + 64, n);
  __global const ACC* mean = (__global const ACC*)(mb + moff);
  __global const ACC* rstd = (__global const ACC*)(rb + roff);
  __global const ACC* wt = (__global const ACC*)(wb + woff);
  __global const ACC* bs = (__global const ACC*)(bb + boff);
  long sq = e0 / sdiv, wq = e0 / wdiv;
  long sr = e0 - sq * sdiv, wr = e0 - wq * wdiv;  // positions inside the current blocks
  long s = sq % smod, c = wq % wmod;
  for (long e = e0; e < e1; ++e) {
    ACC v = (LD((__global const T*)(xb + xoff), e) - mean[s]) * rstd[s];
    if (has_w) v *= wt[c];
    if (has_b) v += bs[c];
    ST((__global T*)(yb + yoff), e, v);
    if (++sr == sdiv) {
      sr = 0;
      s = s + 1 == smod ? 0 : s + 1;
    }
    if (++wr == wdiv) {
      wr = 0;
      c = c + 1 == wmod ? 0 : c + 1;
    }
  }
}

// norm_apply for CPU drivers where the statistics, weight and bias are constant along runs of
// sdiv elements (batch norm's H * W): one run per work item, y = a * x + b in vectors.
__kernel void norm_apply_runv(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                              __global const char* mb, ulong moff, __global const char* rb,
                              ulong roff, __global const char* wb, ulong woff,
                              __global const char* bb, ulong boff, long n, long sdiv, long smod,
                              long wdiv, long wmod, int has_w, int has_b) {
  const long k = get_global_id(0);
  const long e0 = k * sdiv;
  if (e0 >= n) return;
  const long s = k % smod, c = (e0 / wdiv) % wmod;
  const ACC rstd = ((__global const ACC*)(rb + roff))[s];
  const ACC w = has_w ? ((__global const ACC*)(wb + woff))[c] : (ACC)1;
  const ACC bias = has_b ? ((__global const ACC*)(bb + boff))[c] : (ACC)0;
  const ACC a = rstd * w, b = bias - ((__global const ACC*)(mb + moff))[s] * a;
  __global const T* x = (__global const T*)(xb + xoff) + e0;
  __global T* y = (__global T*)(yb + yoff) + e0;
  const long len = min(sdiv, n - e0), nv = len - len % VW;
  for (long i = 0; i < nv; i += VW) VSTORE_T(y, i, a * VLOAD_T(x, i) + b);
  for (long i = nv; i < len; ++i) ST(y, i, a * LD(x, i) + b);
}

// Per row: out[r] = sum(go * w), out[rows + r] = sum(go * w * xhat).
__kernel void row_grad_sums(__global const char* gob, ulong gooff, __global const char* xb,
                            ulong xoff, __global const char* mb, ulong moff,
                            __global const char* rb, ulong roff, __global const char* wb,
                            ulong woff, __global char* ob, ulong ooff, long rows, long A, long SA,
                            long B, long wdiv, long wmod, int has_w) {
  __local ACC red[RL + 16];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* go = (__global const T*)(gob + gooff);
  __global const T* x = (__global const T*)(xb + xoff);
  __global const ACC* w = (__global const ACC*)(wb + woff);
  const ACC mean = ((__global const ACC*)(mb + moff))[r];
  const ACC rstd = ((__global const ACC*)(rb + roff))[r];
  ACC s1 = 0, s2 = 0;
  go += r * B;
  x += r * B;
  ROW_LOOP(ACC g = LD(go, e); if (has_w) g *= w[((r * B + e) / wdiv) % wmod]; s1 += g;
           s2 += g * (LD(x, e) - mean) * rstd;)
  s1 = wg_sum(s1, red);
  s2 = wg_sum(s2, red);
  if (lid == 0) {
    ((__global ACC*)(ob + ooff))[r] = s1;
    ((__global ACC*)(ob + ooff))[rows + r] = s2;
  }
}

// gi = rstd * wpost * (go * wpre - s1 / M - xhat * s2 / M) (training statistics), or
// gi = rstd * wpost * go (running statistics: the mean and rstd are constants).
__kernel void norm_backward(__global char* gib, ulong gioff, __global const char* gob,
                            ulong gooff, __global const char* xb, ulong xoff,
                            __global const char* mb, ulong moff, __global const char* rb,
                            ulong roff, __global const char* sb, ulong soff,
                            __global const char* wb, ulong woff, long n, long sdiv, long smod,
                            long wdiv, long wmod, int w_pre, int w_post, int train, ACC inv_m) {
  const long e = get_global_id(0);
  if (e >= n) return;
  const long s = (e / sdiv) % smod, c = (e / wdiv) % wmod;
  const ACC rstd = ((__global const ACC*)(rb + roff))[s];
  const ACC w = (w_pre || w_post) ? ((__global const ACC*)(wb + woff))[c] : (ACC)1;
  ACC g = LD((__global const T*)(gob + gooff), e);
  if (w_pre) g *= w;
  if (train) {
    __global const ACC* sums = (__global const ACC*)(sb + soff);
    const ACC xhat =
        (LD((__global const T*)(xb + xoff), e) - ((__global const ACC*)(mb + moff))[s]) * rstd;
    g = g - sums[s] * inv_m - xhat * sums[smod + s] * inv_m;
  }
  g *= rstd;
  if (w_post) g *= w;
  ST((__global T*)(gib + gioff), e, g);
}

// Weight and bias gradients: for j < J, gw[j] = sum(go * xhat), gb[j] = sum(go) over the
// elements a*SA + j*SJ + i (a < A, i < B).
__kernel void param_grads(__global char* gwb, ulong gwoff, __global char* gbb, ulong gboff,
                          __global const char* gob, ulong gooff, __global const char* xb,
                          ulong xoff, __global const char* mb, ulong moff,
                          __global const char* rb, ulong roff, long J, long A, long SA, long SJ,
                          long B, long sdiv, long smod) {
  const long j = get_global_id(0);
  if (j >= J) return;
  __global const T* go = (__global const T*)(gob + gooff);
  __global const T* x = (__global const T*)(xb + xoff);
  __global const ACC* mean = (__global const ACC*)(mb + moff);
  __global const ACC* rstd = (__global const ACC*)(rb + roff);
  ACC sw = 0, sb = 0;
  for (long a = 0; a < A; ++a) {
    for (long i = 0; i < B; ++i) {
      const long e = a * SA + j * SJ + i;
      const long s = (e / sdiv) % smod;
      const ACC g = LD(go, e);
      sb += g;
      sw += g * (LD(x, e) - mean[s]) * rstd[s];
    }
  }
  ((__global ACC*)(gwb + gwoff))[j] = sw;
  ((__global ACC*)(gbb + gboff))[j] = sb;
}

// ---- CPU drivers (PoCL): explicit vectors ------------------------------------------------
// A work-group of RL items is a loop on PoCL and wg_sum's barriers split it into regions; these
// kernels give one work item a whole row in the host's vector macros (VW lanes of ACC, VLOAD_T /
// VSTORE_T(p, i[, v]) over T, v_hsum), two passes over the row while it is in cache.

// row_moments for CPU drivers; with write_y (layer norm: A == 1) also y = xhat * w[i] + b[i],
// where w and b are ACC arrays of B (has_w / has_b).
__kernel void row_moments_v(__global const char* xb, ulong xoff, __global char* sb, ulong soff,
                            long rows, long A, long SA, long B, ACC eps, __global char* yb,
                            ulong yoff, __global const char* wb, ulong woff,
                            __global const char* bb, ulong boff, int write_y, int has_w,
                            int has_b) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  __global const T* x = (__global const T*)(xb + xoff) + r * B;
  __global ACC* st = (__global ACC*)(sb + soff);
  const long nv = B - B % VW, M = A * B;
  ACCV sv = 0;
  ACC s = 0;
  for (long a = 0; a < A; ++a) {
    __global const T* p = x + a * SA;
    for (long i = 0; i < nv; i += VW) sv += VLOAD_T(p, i);
    for (long i = nv; i < B; ++i) s += LD(p, i);
  }
  const ACC mean = (s + v_hsum(sv)) / M;
  ACCV qv = 0;
  ACC q = 0;
  for (long a = 0; a < A; ++a) {
    __global const T* p = x + a * SA;
    for (long i = 0; i < nv; i += VW) {
      const ACCV d = VLOAD_T(p, i) - mean;
      qv += d * d;
    }
    for (long i = nv; i < B; ++i) {
      const ACC d = LD(p, i) - mean;
      q += d * d;
    }
  }
  const ACC var = (q + v_hsum(qv)) / M;
  const ACC rstd = (ACC)1 / sqrt(var + eps);
  st[r] = mean;
  st[rows + r] = rstd;
  st[2 * rows + r] = var;
  if (!write_y) return;
  __global T* y = (__global T*)(yb + yoff) + r * B;
  __global const ACC* w = (__global const ACC*)(wb + woff);
  __global const ACC* bs = (__global const ACC*)(bb + boff);
  for (long i = 0; i < nv; i += VW) {
    ACCV v = (VLOAD_T(x, i) - mean) * rstd;
    if (has_w) v *= VLOAD_ACC(w, i);
    if (has_b) v += VLOAD_ACC(bs, i);
    VSTORE_T(y, i, v);
  }
  for (long i = nv; i < B; ++i) {
    ACC v = (LD(x, i) - mean) * rstd;
    if (has_w) v *= w[i];
    if (has_b) v += bs[i];
    ST(y, i, v);
  }
}

// row_grad_sums without a weight for CPU drivers (batch norm's per-channel sums): one row per work
// item, its A runs of B elements in vectors.
__kernel void row_grad_sums_v(__global const char* gob, ulong gooff, __global const char* xb,
                              ulong xoff, __global const char* mb, ulong moff,
                              __global const char* rb, ulong roff, __global char* ob, ulong ooff,
                              long rows, long A, long SA, long B) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  __global const T* go = (__global const T*)(gob + gooff) + r * B;
  __global const T* x = (__global const T*)(xb + xoff) + r * B;
  const ACC mean = ((__global const ACC*)(mb + moff))[r];
  const ACC rstd = ((__global const ACC*)(rb + roff))[r];
  const long nv = B - B % VW;
  ACCV s1v = 0, s2v = 0;
  ACC s1 = 0, s2 = 0;
  for (long a = 0; a < A; ++a) {
    __global const T* pg = go + a * SA;
    __global const T* px = x + a * SA;
    for (long i = 0; i < nv; i += VW) {
      const ACCV g = VLOAD_T(pg, i);
      s1v += g;
      s2v += g * (VLOAD_T(px, i) - mean);
    }
    for (long i = nv; i < B; ++i) {
      const ACC g = LD(pg, i);
      s1 += g;
      s2 += g * (LD(px, i) - mean);
    }
  }
  ((__global ACC*)(ob + ooff))[r] = s1 + v_hsum(s1v);
  ((__global ACC*)(ob + ooff))[rows + r] = (s2 + v_hsum(s2v)) * rstd;
}

// norm_backward for CPU drivers where the statistics (and the weight) are constant along runs of
// sdiv elements (batch norm: a channel's H * W): one run per work item, in vectors.
__kernel void norm_backward_runv(__global char* gib, ulong gioff, __global const char* gob,
                                 ulong gooff, __global const char* xb, ulong xoff,
                                 __global const char* mb, ulong moff, __global const char* rb,
                                 ulong roff, __global const char* sb, ulong soff,
                                 __global const char* wb, ulong woff, long n, long sdiv,
                                 long smod, long wdiv, long wmod, int w_pre, int w_post, int train,
                                 ACC inv_m) {
  const long k = get_global_id(0);
  const long e0 = k * sdiv;
  if (e0 >= n) return;
  const long s = k % smod, c = (e0 / wdiv) % wmod;
  const ACC rstd = ((__global const ACC*)(rb + roff))[s];
  const ACC w = (w_pre || w_post) ? ((__global const ACC*)(wb + woff))[c] : (ACC)1;
  __global const ACC* sums = (__global const ACC*)(sb + soff);
  const ACC mean = ((__global const ACC*)(mb + moff))[s];
  // gi = a * go + b * x + d on the run (train), or a * go
  const ACC a = rstd * (w_pre ? w : (ACC)1) * (w_post ? w : (ACC)1);
  const ACC bx = train ? -sums[smod + s] * inv_m * rstd * rstd * (w_post ? w : (ACC)1) : (ACC)0;
  const ACC d = train ? (-sums[s] * inv_m * rstd * (w_post ? w : (ACC)1) - bx * mean) : (ACC)0;
  __global const T* go = (__global const T*)(gob + gooff) + e0;
  __global const T* x = (__global const T*)(xb + xoff) + e0;
  __global T* gi = (__global T*)(gib + gioff) + e0;
  const long len = min(sdiv, n - e0), nv = len - len % VW;
  for (long i = 0; i < nv; i += VW) VSTORE_T(gi, i, a * VLOAD_T(go, i) + bx * VLOAD_T(x, i) + d);
  for (long i = nv; i < len; ++i) ST(gi, i, a * LD(go, i) + bx * LD(x, i) + d);
}

// RMS norm forward: rstd[r] = 1 / sqrt(mean(x^2) + eps) over row r (B contiguous elements),
// y = x * rstd * w[i]. rms_forward_v: one row per work item (CPU drivers); rms_forward_rows:
// one work group of RL items per row (GPUs).
__kernel void rms_forward_v(__global char* yb, ulong yoff, __global const char* xb, ulong xoff,
                            __global const char* wb, ulong woff, __global char* rb, ulong roff,
                            long rows, long B, ACC eps, int has_w) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  __global const T* x = (__global const T*)(xb + xoff) + r * B;
  __global T* y = (__global T*)(yb + yoff) + r * B;
  __global const ACC* w = (__global const ACC*)(wb + woff);
  const long nv = B - B % VW;
  ACCV qv = 0;
  ACC q = 0;
  for (long i = 0; i < nv; i += VW) {
    const ACCV v = VLOAD_T(x, i);
    qv += v * v;
  }
  for (long i = nv; i < B; ++i) {
    const ACC v = LD(x, i);
    q += v * v;
  }
  const ACC rstd = (ACC)1 / sqrt((q + v_hsum(qv)) / B + eps);
  ((__global ACC*)(rb + roff))[r] = rstd;
  for (long i = 0; i < nv; i += VW) {
    ACCV v = VLOAD_T(x, i) * rstd;
    if (has_w) v *= VLOAD_ACC(w, i);
    VSTORE_T(y, i, v);
  }
  for (long i = nv; i < B; ++i) {
    ACC v = LD(x, i) * rstd;
    if (has_w) v *= w[i];
    ST(y, i, v);
  }
}

__kernel void rms_forward_rows(__global char* yb, ulong yoff, __global const char* xb,
                               ulong xoff, __global const char* wb, ulong woff, __global char* rb,
                               ulong roff, long rows, long B, ACC eps, int has_w) {
  __local ACC red[RL + 16];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* x = (__global const T*)(xb + xoff) + r * B;
  __global T* y = (__global T*)(yb + yoff) + r * B;
  __global const ACC* w = (__global const ACC*)(wb + woff);
  ACC q = 0;
  for (long i = lid; i < B; i += RL) {
    const ACC v = LD(x, i);
    q += v * v;
  }
  const ACC rstd = (ACC)1 / sqrt(wg_sum(q, red) / B + eps);
  if (lid == 0) ((__global ACC*)(rb + roff))[r] = rstd;
  for (long i = lid; i < B; i += RL) {
    ACC v = LD(x, i) * rstd;
    if (has_w) v *= w[i];
    ST(y, i, v);
  }
}

// Layer-norm (centered) or RMS-norm backward on CPU drivers in one pass over go and x: work
// item c takes rows [c R, c R + R): per row gi = rstd * (g - c1 - xhat * c2) with g = go * w,
// c1 = mean(g) (0 when not centered), c2 = mean(g * xhat) (want_gi), and the chunk's
// partial column sums of go * xhat and go into pw / pb[c B + j] (want_p: a row of B ACCs that
// stays in cache while the chunk streams by), which ln_param_sums_v adds up.
__kernel void ln_backward_chunk_v(__global char* gib, ulong gioff, __global const char* gob,
                                  ulong gooff, __global const char* xb, ulong xoff,
                                  __global const char* mb, ulong moff, __global const char* rb,
                                  ulong roff, __global const char* wb, ulong woff,
                                  __global char* pwb, ulong pwoff, __global char* pbb,
                                  ulong pboff, long rows, long B, long R, int has_w,
                                  int centered, int want_gi, int want_p) {
  const long c = get_global_id(0);
  const long r0 = c * R, r1 = min(r0 + R, rows);
  if (r0 >= rows) return;
  __global const ACC* w = (__global const ACC*)(wb + woff);
  __global ACC* pw = (__global ACC*)(pwb + pwoff) + c * B;
  __global ACC* pb = (__global ACC*)(pbb + pboff) + c * B;
  const long nv = B - B % VW;
  const ACC inv = (ACC)1 / B;
  for (long r = r0; r < r1; ++r) {
    __global const T* go = (__global const T*)(gob + gooff) + r * B;
    __global const T* x = (__global const T*)(xb + xoff) + r * B;
    __global T* gi = (__global T*)(gib + gioff) + r * B;
    const ACC mean = centered ? ((__global const ACC*)(mb + moff))[r] : (ACC)0;
    const ACC rstd = ((__global const ACC*)(rb + roff))[r];
    ACC c1 = 0, c2 = 0;
    if (want_gi) {
      ACCV s1v = 0, s2v = 0;
      ACC s1 = 0, s2 = 0;
      for (long i = 0; i < nv; i += VW) {
        ACCV g = VLOAD_T(go, i);
        if (has_w) g *= VLOAD_ACC(w, i);
        s1v += g;
        s2v += g * ((VLOAD_T(x, i) - mean) * rstd);
      }
      for (long i = nv; i < B; ++i) {
        ACC g = LD(go, i);
        if (has_w) g *= w[i];
        s1 += g;
        s2 += g * ((LD(x, i) - mean) * rstd);
      }
      c1 = centered ? (s1 + v_hsum(s1v)) * inv : (ACC)0;
      c2 = (s2 + v_hsum(s2v)) * inv;
    }
    const int first = r == r0;
    for (long i = 0; i < nv; i += VW) {
      const ACCV g0 = VLOAD_T(go, i);
      const ACCV xhat = (VLOAD_T(x, i) - mean) * rstd;
      if (want_gi) {
        const ACCV g = has_w ? g0 * VLOAD_ACC(w, i) : g0;
        VSTORE_T(gi, i, (g - c1 - xhat * c2) * rstd);
      }
      if (want_p) {
        VSTORE_ACC(pw, i, first ? g0 * xhat : VLOAD_ACC(pw, i) + g0 * xhat);
        VSTORE_ACC(pb, i, first ? g0 : VLOAD_ACC(pb, i) + g0);
      }
    }
    for (long i = nv; i < B; ++i) {
      const ACC g0 = LD(go, i);
      const ACC xhat = (LD(x, i) - mean) * rstd;
      if (want_gi) {
        const ACC g = has_w ? g0 * w[i] : g0;
        ST(gi, i, (g - c1 - xhat * c2) * rstd);
      }
      if (want_p) {
        pw[i] = first ? g0 * xhat : pw[i] + g0 * xhat;
        pb[i] = first ? g0 : pb[i] + g0;
      }
    }
  }
}

// gw[j] = sum over the chunks of pw[c B + j] (gb likewise); VW columns per work item.
__kernel void ln_param_sums_v(__global char* gwb, ulong gwoff, __global char* gbb, ulong gboff,
                              __global const char* pwb, ulong pwoff, __global const char* pbb,
                              ulong pboff, long chunks, long B) {
  const long j0 = get_global_id(0) * VW;
  if (j0 >= B) return;
  __global const ACC* pw = (__global const ACC*)(pwb + pwoff);
  __global const ACC* pb = (__global const ACC*)(pbb + pboff);
  __global ACC* gw = (__global ACC*)(gwb + gwoff);
  __global ACC* gb = (__global ACC*)(gbb + gboff);
  if (j0 + VW <= B) {
    ACCV sw = 0, sb = 0;
    for (long c = 0; c < chunks; ++c) {
      sw += VLOAD_ACC(pw, c * B + j0);
      sb += VLOAD_ACC(pb, c * B + j0);
    }
    VSTORE_ACC(gw, j0, sw);
    VSTORE_ACC(gb, j0, sb);
    return;
  }
  for (long j = j0; j < B; ++j) {
    ACC sw = 0, sb = 0;
    for (long c = 0; c < chunks; ++c) {
      sw += pw[c * B + j];
      sb += pb[c * B + j];
    }
    gw[j] = sw;
    gb[j] = sb;
  }
}
