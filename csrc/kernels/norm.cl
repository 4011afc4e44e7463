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
