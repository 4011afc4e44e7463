// Random kernels beyond uniform_/normal_ (those are generated in random.cpp). Element i of a call
// draws from Philox counter (offset, i) under key seed, like uniform_/normal_, so a seed gives the
// same numbers on every device. The host prepends REAL (float, or double for double tensors),
// ST/C (storage and compute type of the tensor) and ld/st for it.

// [0, 1): 24 random bits for float, 53 for double.
inline REAL rnd_uniform(uint4 r) {
#ifdef RND_DOUBLE
  return (double)(((ulong)r.x << 21) ^ (r.y >> 11)) * 0x1.0p-53;
#else
  return ocl_uniform_float(r.x);
#endif
}
// (0, 1]: for logarithms.
inline REAL rnd_uniform_open0(uint4 r) {
#ifdef RND_DOUBLE
  return ((double)(((ulong)r.x << 21) ^ (r.y >> 11)) + 1.0) * 0x1.0p-53;
#else
  return ((float)(r.x >> 8) + 1.0f) * (1.0f / 16777216.0f);
#endif
}

__kernel void bernoulli_scalar_k(__global char* db, ulong doff, long n, ulong seed, ulong offset,
                                 REAL p) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL u = rnd_uniform(ocl_philox_at(seed, offset, i));
  st((__global ST*)(db + doff), i, (C)(u < p ? 1 : 0));
}

// p: contiguous REAL values, one per element of the (contiguous) output.
__kernel void bernoulli_tensor_k(__global char* db, ulong doff, __global const char* pb, ulong poff,
                                 long n, ulong seed, ulong offset) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL p = ((__global const REAL*)(pb + poff))[i];
  const REAL u = rnd_uniform(ocl_philox_at(seed, offset, i));
  st((__global ST*)(db + doff), i, (C)(u < p ? 1 : 0));
}

// native_dropout: keep with probability keep; output = x * mask * scale, mask as bool.
__kernel void dropout_k(__global char* ob, ulong ooff, __global char* mb, ulong moff,
                        __global const char* xb, ulong xoff, long n, ulong seed, ulong offset,
                        REAL keep, REAL scale) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL u = rnd_uniform(ocl_philox_at(seed, offset, i));
  const uchar m = u < keep ? 1 : 0;
  ((__global uchar*)(mb + moff))[i] = m;
  const C x = ld((__global ST*)(xb + xoff), i);
  st((__global ST*)(ob + ooff), i, x * (C)m * (C)scale);
}

// native_dropout_backward: grad * mask * scale (mask bool).
__kernel void dropout_bwd_k(__global char* ob, ulong ooff, __global const char* gb, ulong goff,
                            __global const char* mb, ulong moff, long n, REAL scale) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const C g = ld((__global ST*)(gb + goff), i);
  const uchar m = ((__global const uchar*)(mb + moff))[i];
  st((__global ST*)(ob + ooff), i, g * (C)m * (C)scale);
}

// random_: base + (bits % range); 32 random bits when range < 2^32 (as ATen's CPU kernel), 64
// otherwise; full != 0: all 64 bits as a signed value.
__kernel void random_k(__global char* db, ulong doff, long n, ulong seed, ulong offset,
                       ulong range, long base, int full) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const uint4 r = ocl_philox_at(seed, offset, i);
  const ulong bits64 = ((ulong)r.x << 32) | r.y;
  long v;
  if (full)
    v = (long)bits64;
  else if (range >= 0x100000000UL)
    v = base + (long)(bits64 % range);
  else
    v = base + (long)(r.x % (uint)range);
  st((__global ST*)(db + doff), i, (C)v);
}

// exponential_: -log(u) / lambda with u in (0, 1].
__kernel void exponential_k(__global char* db, ulong doff, long n, ulong seed, ulong offset,
                            REAL lambda) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL u = rnd_uniform_open0(ocl_philox_at(seed, offset, i));
  st((__global ST*)(db + doff), i, (C)(-log(u) / lambda));
}

// (0, 1): for transformations that diverge at both ends.
inline REAL rnd_uniform_open(uint4 r) {
#ifdef RND_DOUBLE
  return ((double)(((ulong)r.x << 21) ^ (r.y >> 11)) + 0.5) * 0x1.0p-53;
#else
  return ((float)(r.x >> 8) + 0.5f) * (1.0f / 16777216.0f);
#endif
}

// cauchy_: median + sigma tan(pi (u - 1/2)), u in (0, 1) so that the tails stay finite.
__kernel void cauchy_k(__global char* db, ulong doff, long n, ulong seed, ulong offset,
                       REAL median, REAL sigma) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL u = rnd_uniform_open(ocl_philox_at(seed, offset, i));
  st((__global ST*)(db + doff), i, (C)(median + sigma * tanpi(u - (REAL)0.5)));
}

// log_normal_: exp(mean + std z), z standard normal by Box-Muller as normal_.
__kernel void log_normal_k(__global char* db, ulong doff, long n, ulong seed, ulong offset,
                           REAL mean, REAL stdv) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const uint4 r = ocl_philox_at(seed, offset, i);
#ifdef RND_DOUBLE
  const double u1 = ((double)(((ulong)r.x << 21) ^ (r.y >> 11)) + 1.0) * 0x1.0p-53;
  const double u2 = (double)(((ulong)r.z << 21) ^ (r.w >> 11)) * 0x1.0p-53;
#else
  const float u1 = ((float)(r.x >> 8) + 1.0f) * (1.0f / 16777216.0f);
  const float u2 = ocl_uniform_float(r.y);
#endif
  const REAL z = sqrt((REAL)-2 * log(u1)) * cospi((REAL)2 * u2);
  st((__global ST*)(db + doff), i, (C)exp(mean + stdv * z));
}

// geometric_: trials up to the first success, ceil(log(u) / log1p(-p)) >= 1 for u in (0, 1);
// inv_log1m_p = 1 / log1p(-p), from the host.
__kernel void geometric_k(__global char* db, ulong doff, long n, ulong seed, ulong offset,
                          REAL inv_log1m_p) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL u = rnd_uniform_open(ocl_philox_at(seed, offset, i));
  st((__global ST*)(db + doff), i, (C)ceil(log(u) * inv_log1m_p));
}

// rrelu_with_noise in training: x * r with r uniform in [lower, upper) where x <= 0, r kept in
// noise (1 where x > 0).
__kernel void rrelu_k(__global char* ob, ulong ooff, __global char* nb, ulong noff,
                      __global const char* xb, ulong xoff, long n, ulong seed, ulong offset,
                      REAL lower, REAL upper) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const C x = ld((__global const ST*)(xb + xoff), i);
  if (x <= 0) {
    const REAL r = lower + (upper - lower) * rnd_uniform(ocl_philox_at(seed, offset, i));
    st((__global ST*)(ob + ooff), i, (C)(x * r));
    st((__global ST*)(nb + noff), i, (C)r);
  } else {
    st((__global ST*)(ob + ooff), i, x);
    st((__global ST*)(nb + noff), i, (C)1);
  }
}
