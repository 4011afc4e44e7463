// Rejection samplers (gamma, Poisson, binomial) and the reparameterised-gradient functions of
// ATen/native/Distributions.h. The host prepends REAL (float, or double for double tensors), ST/C
// (storage and compute type of the tensor) and ld/st for it.
//
// A rejection sampler draws a variable number of values, so element i reads a stream: the Philox
// blocks at counters (offset + j, i) for j = 0, 1, ... The host advances the generator's offset by
// 2^18 per call (kStreamBlocks in distributions.cpp), so the streams of two calls could meet only
// past 2^18 blocks of one element (never, in practice: the loops below need a handful). Element i's numbers depend on (seed, offset, i) only.

// Reparameterised gradients accumulate in double where the device has it, as CPU does.
#ifdef TORCH_OCL_FP64
#define ACC double
#else
#define ACC float
#endif

#define R(x) ((REAL)(x))

typedef struct {
  ulong seed, ctr;
  long i;
  uint4 blk;
  int pos;
} rd_stream;

inline rd_stream rd_stream_at(ulong seed, ulong offset, long i) {
  rd_stream s;
  s.seed = seed;
  s.ctr = offset;
  s.i = i;
  s.blk = (uint4)(0);
  s.pos = 4;
  return s;
}

inline uint rd_u32(rd_stream* s) {
  if (s->pos == 4) {
    s->blk = ocl_philox_at(s->seed, s->ctr, s->i);
    s->ctr += 1;
    s->pos = 0;
  }
  const int p = s->pos++;
  return p == 0 ? s->blk.x : p == 1 ? s->blk.y : p == 2 ? s->blk.z : s->blk.w;
}

// [0, 1): 24 random bits for float, 53 for double (CPU's uniform_real_distribution).
inline REAL rd_uniform(rd_stream* s) {
#ifdef RND_DOUBLE
  const uint hi = rd_u32(s), lo = rd_u32(s);
  return (double)(((ulong)hi << 21) ^ (lo >> 11)) * 0x1.0p-53;
#else
  return (float)(rd_u32(s) >> 8) * (1.0f / 16777216.0f);
#endif
}

// Standard normal by Box-Muller (the second value of the pair is not kept).
inline REAL rd_normal(rd_stream* s) {
  const REAL u1 = R(1) - rd_uniform(s);  // (0, 1]
  const REAL u2 = rd_uniform(s);
  return sqrt(R(-2) * log(u1)) * cospi(R(2) * u2);
}

// Marsaglia and Tsang (2000) with the boost for alpha < 1, as sample_gamma in
// ATen/native/Distributions.h. 1 - v + log(v) with v = (1 + t)^3 is evaluated as
// 3 log1p(t) - ((1 + t)^3 - 1), which is the same number without the cancellation that float
// suffers for large alpha. With want_log the log of the sample is returned (Dirichlet normalises
// in log space, so that small alphas do not underflow). Negative or NaN alpha: NaN (CPU never
// returns for most of them).
inline REAL rd_gamma(REAL alpha, rd_stream* s, int want_log) {
  if (!(alpha >= 0)) return NAN;
  REAL scale = 1, log_scale = 0;
  if (alpha < 1) {
    if (alpha == 0) return want_log ? -INFINITY : R(0);
    const REAL u = R(1) - rd_uniform(s);
    if (want_log)
      log_scale = log(u) / alpha;
    else
      scale = pow(u, R(1) / alpha);
    alpha += 1;
  }
  const REAL d = alpha - R(1) / R(3);
  const REAL c = R(1) / sqrt(R(9) * d);
  for (;;) {
    REAL x, t;
    do {
      x = rd_normal(s);
      t = c * x;
    } while (t <= R(-1));
    const REAL vm1 = t * (R(3) + t * (R(3) + t));  // v - 1
    const REAL u = R(1) - rd_uniform(s);
    const REAL xx = x * x;
    if (u < R(1) - R(0.0331) * xx * xx || log(u) < R(0.5) * xx + d * (R(3) * log1p(t) - vm1)) {
      return want_log ? log_scale + log(d) + R(3) * log1p(t) : scale * d * (R(1) + vm1);
    }
  }
}

// Stirling's series remainder: lgamma(k + 1) = (k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2 +
// tail(k) (the table and series of stirling_approx_tail in Distributions.h).
inline REAL rd_stirling_tail(REAL k) {
  const REAL tab[10] = {R(0.0810614667953272),  R(0.0413406959554092), R(0.0276779256849983),
                        R(0.02079067210376509), R(0.0166446911898211), R(0.0138761288230707),
                        R(0.0118967099458917),  R(0.0104112652619720), R(0.00925546218271273),
                        R(0.00833056343336287)};
  if (k >= 0 && k < R(10)) return tab[(int)k];
  const REAL kp1sq = (k + R(1)) * (k + R(1));
  return (R(1) / R(12) - (R(1) / R(360) - R(1) / R(1260) / kp1sq) / kp1sq) / (k + R(1));
}

// log P(X = k) for X ~ Poisson(lam), i.e. -lam + k log(lam) - lgamma(k + 1), written through
// the Stirling remainder so that the large terms cancel exactly: with x = lam / (k + 1) - 1,
// k log(lam / (k + 1)) + (k + 1 - lam) = k (log1p(x) - x) - x.
inline REAL rd_poisson_logpmf(REAL k, REAL lam) {
  const REAL x = (lam - (k + R(1))) / (k + R(1));
  return k * (log1p(x) - x) - x - R(0.5) * log(k + R(1)) - R(0.91893853320467274178) -
         rd_stirling_tail(k);
}

// sample_poisson of ATen's CPU Distributions.cpp: Hoermann's transformed rejection (PTRS) for
// lam >= 10, multiplication of uniforms below. The host rejects negative and NaN rates.
inline REAL rd_poisson(REAL lam, rd_stream* s) {
  if (lam >= R(10)) {
    const REAL slam = sqrt(lam);
    const REAL b = R(0.931) + R(2.53) * slam;
    const REAL a = R(-0.059) + R(0.02483) * b;
    const REAL invalpha = R(1.1239) + R(1.1328) / (b - R(3.4));
    const REAL vr = R(0.9277) - R(3.6224) / (b - R(2));
    for (;;) {
      const REAL U = rd_uniform(s) - R(0.5);
      const REAL V = rd_uniform(s);
      const REAL us = R(0.5) - fabs(U);
      const REAL k = floor((R(2) * a / us + b) * U + lam + R(0.43));
      if (us >= R(0.07) && V <= vr) return k;
      if (k < 0 || (us < R(0.013) && V > us)) continue;
      if (log(V) + log(invalpha) - log(a / (us * us) + b) <= rd_poisson_logpmf(k, lam)) return k;
    }
  }
  if (!(lam > 0)) return 0;
  const REAL enlam = exp(-lam);
  REAL prod = 1, x = 0;
  for (;;) {
    prod *= rd_uniform(s);
    if (prod > enlam)
      x += 1;
    else
      return x;
  }
}

inline REAL rd_binomial_inversion(REAL count, REAL prob, rd_stream* s) {
  REAL geom_sum = 0, num_geom = 0;
  const REAL logprob = log1p(-prob);
  for (;;) {
    const REAL geom = ceil(log(rd_uniform(s)) / logprob);
    geom_sum += geom;
    if (geom_sum > count) return num_geom;
    num_geom += 1;
  }
}

// BTRS (Hoermann 1993) as btrs in Distributions.h. Its bound
//   (m + 1/2) log((m + 1) / (r (n - m + 1))) + (n + 1) log((n - m + 1) / (n - k + 1))
//   + (k + 1/2) log(r (n - k + 1) / (k + 1)) + tails
// is regrouped so that no large term cancels another (float would lose it for large n):
//   (m + 1/2) [log1p((m - k) / (k + 1)) - log1p((k - m) / (n - k + 1))]
//   + (k - m) log(r (n - k + 1) / (k + 1)) + (n + 1) log1p((k - m) / (n - k + 1)) + tails.
inline REAL rd_btrs(REAL count, REAL prob, rd_stream* s) {
  const REAL stddev = sqrt(count * prob * (R(1) - prob));
  const REAL b = R(1.15) + R(2.53) * stddev;
  const REAL a = R(-0.0873) + R(0.0248) * b + R(0.01) * prob;
  const REAL c = count * prob + R(0.5);
  const REAL v_r = R(0.92) - R(4.2) / b;
  const REAL r = prob / (R(1) - prob);
  const REAL alpha = (R(2.83) + R(5.1) / b) * stddev;
  const REAL m = floor((count + R(1)) * prob);
  for (;;) {
    const REAL U = rd_uniform(s) - R(0.5);
    REAL V = rd_uniform(s);
    const REAL us = R(0.5) - fabs(U);
    const REAL k = floor((R(2) * a / us + b) * U + c);
    if (k < 0 || k > count) continue;
    if (us >= R(0.07) && V <= v_r) return k;
    V = log(V * alpha / (a / (us * us) + b));
    const REAL nk1 = count - k + R(1);
    const REAL upper = (m + R(0.5)) * (log1p((m - k) / (k + R(1))) - log1p((k - m) / nk1)) +
                       (k - m) * log(r * nk1 / (k + R(1))) + (count + R(1)) * log1p((k - m) / nk1) +
                       rd_stirling_tail(m) + rd_stirling_tail(count - m) - rd_stirling_tail(k) -
                       rd_stirling_tail(count - k);
    if (V <= upper) return k;
  }
}

// sample_binomial of Distributions.h. A NaN or infinite count with 0 < prob < 1 gives NaN (CPU
// never returns for a NaN count).
inline REAL rd_binomial(REAL count, REAL prob, rd_stream* s) {
  if (count <= 0 || prob <= 0) return 0;
  if (prob >= 1) return count;
  if (isnan(prob) || !isfinite(count)) return NAN;
  if (prob <= R(0.5)) {
    return count * prob >= R(10) ? rd_btrs(count, prob, s) : rd_binomial_inversion(count, prob, s);
  }
  const REAL q = R(1) - prob;
  return count - (count * q >= R(10) ? rd_btrs(count, q, s) : rd_binomial_inversion(count, q, s));
}

// _standard_gamma: one sample per alpha, clamped below at the dtype's smallest normal (tiny).
__kernel void gamma_k(__global char* ob, ulong ooff, __global const char* ab, ulong aoff, long n,
                      ulong seed, ulong offset, REAL tiny) {
  const long i = get_global_id(0);
  if (i >= n) return;
  rd_stream s = rd_stream_at(seed, offset, i);
  const REAL v = rd_gamma(ld((__global const ST*)(ab + aoff), i), &s, 0);
  st((__global ST*)(ob + ooff), i, v < tiny ? tiny : v);
}

// log of a standard gamma sample into a REAL buffer, clamped below at log(DBL_MIN) as CPU clamps
// the double sample (a row of zero alphas then normalises to the uniform vector, as on CPU).
__kernel void log_gamma_k(__global char* ob, ulong ooff, __global const char* ab, ulong aoff,
                          long n, ulong seed, ulong offset) {
  const long i = get_global_id(0);
  if (i >= n) return;
  rd_stream s = rd_stream_at(seed, offset, i);
  const REAL v = rd_gamma(ld((__global const ST*)(ab + aoff), i), &s, 1);
  const REAL lo = R(-708.39641853226410622);
  ((__global REAL*)(ob + ooff))[i] = v < lo ? lo : v;
}

__kernel void poisson_k(__global char* ob, ulong ooff, __global const char* lb, ulong loff, long n,
                        ulong seed, ulong offset) {
  const long i = get_global_id(0);
  if (i >= n) return;
  rd_stream s = rd_stream_at(seed, offset, i);
  st((__global ST*)(ob + ooff), i, rd_poisson(ld((__global const ST*)(lb + loff), i), &s));
}

__kernel void binomial_k(__global char* ob, ulong ooff, __global const char* cb, ulong coff,
                         __global const char* pb, ulong poff, long n, ulong seed, ulong offset) {
  const long i = get_global_id(0);
  if (i >= n) return;
  rd_stream s = rd_stream_at(seed, offset, i);
  const REAL count = ld((__global const ST*)(cb + coff), i);
  const REAL prob = ld((__global const ST*)(pb + poff), i);
  st((__global ST*)(ob + ooff), i, rd_binomial(count, prob, &s));
}

// ---- Reparameterised gradients: line-by-line ports of Distributions.h with scalar_t = REAL and
// accscalar_t = ACC, keeping which parts CPU computes in which type. No contraction into fma, so
// that the rounding follows CPU's.
#pragma OPENCL FP_CONTRACT OFF

#define RD_PI 3.14159265358979323846

// digamma_one<XT, AT>: Cephes' digamma with the asymptotic series for x >= 10.
#define RD_DEFINE_DIGAMMA(NAME, XT, AT)                                     \
  inline XT NAME(XT x) {                                                    \
    const AT PSI_10 = 2.25175258906672110764;                               \
    if (x == 0) return INFINITY;                                            \
    AT additional_summand = 0;                                              \
    const int x_is_integer = x == floor(x);                                 \
    if (x < 0) {                                                            \
      if (x_is_integer) return INFINITY;                                    \
      additional_summand = -(XT)RD_PI / tan((XT)RD_PI * x);                 \
      x = 1 - x;                                                            \
    }                                                                       \
    AT result = 0;                                                          \
    while (x < 10) {                                                        \
      result -= 1 / x;                                                      \
      x += 1;                                                               \
    }                                                                       \
    if (x == 10) return (XT)(result + PSI_10 + additional_summand);         \
    const AT A[7] = {8.33333333333333333333E-2, -2.10927960927960927961E-2, \
                     7.57575757575757575758E-3, -4.16666666666666666667E-3, \
                     3.96825396825396825397E-3, -8.33333333333333333333E-3, \
                     8.33333333333333333333E-2};                            \
    AT y = 0;                                                               \
    if (x < 1.0e17f) {                                                      \
      const AT z = (AT)1 / (AT)(x * x);                                     \
      AT p = 0;                                                             \
      for (int j = 0; j <= 6; ++j) p = p * z + A[j];                        \
      y = z * p;                                                            \
    }                                                                       \
    return (XT)(result + log(x) - (0.5f / x) - y + additional_summand);     \
  }
RD_DEFINE_DIGAMMA(rd_digamma_s, REAL, ACC)
RD_DEFINE_DIGAMMA(rd_digamma_a, ACC, ACC)

// standard_gamma_grad_one<REAL, ACC>: -(d/dalpha cdf(x; alpha)) / pdf(x; alpha).
inline REAL rd_standard_gamma_grad(REAL alpha_in, REAL x_in) {
  const ACC x = x_in, alpha = alpha_in;
  if (x < 0.8f) {
    ACC numer = 1, denom = alpha;
    ACC series1 = numer / denom, series2 = numer / (denom * denom);
    for (int i = 1; i <= 5; ++i) {
      numer *= -x / (ACC)i;
      denom += 1;
      series1 += numer / denom;
      series2 += numer / (denom * denom);
    }
    const ACC pow_x_alpha = pow(x, alpha);
    const ACC gamma_pdf = pow(x, alpha - 1) * exp(-x);
    const ACC gamma_cdf = pow_x_alpha * series1;
    const ACC gamma_cdf_alpha = (log(x) - rd_digamma_a(alpha)) * gamma_cdf - pow_x_alpha * series2;
    const ACC result = -gamma_cdf_alpha / gamma_pdf;
    return isnan(result) ? (REAL)0 : (REAL)result;
  }
  if (alpha > 8.0f) {
    if (0.9f * alpha <= x && x <= 1.1f * alpha) {
      const ACC numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
      const ACC numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha +
                          alpha * (107 + 3600 * x);
      const ACC denom = 1244160 * (alpha * alpha) * (alpha * alpha);
      return (REAL)(numer_1 * numer_2 / denom);
    }
    const ACC denom = sqrt(8 * alpha);
    const ACC term2 = denom / (alpha - x);
    const ACC term3 = pow(x - alpha - alpha * log(x / alpha), (ACC)-1.5);
    const ACC term23 = (x < alpha) ? term2 - term3 : term2 + term3;
    const ACC term1 =
        log(x / alpha) * term23 - sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const ACC stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
    const ACC numer = x * term1;
    return (REAL)(-stirling * numer / denom);
  }
  const ACC u = log(x / alpha);
  const ACC v = log(alpha);
  const ACC coef_uv[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089,
       0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
       -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
       0.00085092367, -1.5247877e-07},
  };
  ACC coef_v[8];
  for (int i = 0; i < 8; ++i) coef_v[i] = coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]);
  const ACC p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]));
  const ACC q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]));
  return (REAL)exp(p / q);
}

inline REAL rd_beta_grad_alpha_small(REAL x, REAL alpha, REAL beta) {
  const REAL factor = rd_digamma_s(alpha) - rd_digamma_s(alpha + beta) - log(x);
  REAL numer = 1;
  REAL series = numer / alpha * (factor + 1 / alpha);
  for (int i = 1; i <= 10; ++i) {
    const REAL ci = (REAL)i;
    numer *= (ci - beta) * x / ci;
    const REAL denom = alpha + ci;
    series += numer / denom * (factor + 1 / denom);
  }
  const REAL result = x * pow(1 - x, -beta) * series;
  return isnan(result) ? (REAL)0 : result;
}

inline REAL rd_beta_grad_beta_small(REAL x, REAL alpha, REAL beta) {
  const REAL factor = rd_digamma_s(alpha + beta) - rd_digamma_s(beta);
  REAL numer = 1, betas = 1, dbetas = 0, series = factor / alpha;
  for (int i = 1; i <= 8; ++i) {
    const REAL ci = (REAL)i;
    numer *= -x / ci;
    dbetas = dbetas * (beta - ci) + betas;
    betas = betas * (beta - ci);
    series += numer / (alpha + ci) * (dbetas + factor * betas);
  }
  const REAL result = -pow(1 - x, 1 - beta) * series;
  return isnan(result) ? (REAL)0 : result;
}

inline REAL rd_beta_grad_alpha_mid(ACC x, ACC alpha, ACC beta) {
  const ACC total = alpha + beta;
  const ACC mean = alpha / total;
  const ACC std = sqrt(alpha * beta / (total + 1)) / total;
  if (mean - 0.1 * std <= x && x <= mean + 0.1 * std) {
    const ACC poly = 47 * x * (beta * beta) * (beta * beta) +
                     alpha * ((43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta +
                              alpha * (3 * (59 + 180 * beta - 90 * x) * (beta * beta) +
                                       alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta +
                                                alpha * (8 * (1 - x) * (135 * beta - 11)))));
    const ACC prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
    const ACC prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
    return (REAL)(prefactor_num / (1 - x) * poly / prefactor_den);
  }
  const ACC prefactor = -x / sqrt(2 * alpha * beta / total);
  const ACC stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                       (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                       (1 + 1 / (12 * total) + 1 / (288 * total * total));
  const ACC term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
  const ACC axbx = alpha * (x - 1) + beta * x;
  const ACC term1_den = sqrt(2 * alpha / beta) * pow(total, (ACC)1.5f) * axbx * axbx;
  const ACC term1 = term1_num / term1_den;
  const ACC term2 = 0.5f * log(alpha / (total * x));
  const ACC term3_num = sqrt(8 * alpha * beta / total);
  const ACC term3_den = beta * x + alpha * (x - 1);
  const ACC term3 = term3_num / term3_den;
  const ACC term4_base = beta * log(beta / (total * (1 - x))) + alpha * log(alpha / (total * x));
  const ACC term4 = pow(term4_base, (ACC)-1.5f);
  const ACC term1234 = term1 + term2 * (term3 + (x < mean ? term4 : -term4));
  return (REAL)(stirling * prefactor * term1234);
}

// dirichlet_grad_one<REAL, ACC>.
inline REAL rd_dirichlet_grad(REAL x, REAL alpha, REAL total) {
  const ACC x_ = x, alpha_ = alpha, total_ = total;
  const REAL beta = total - alpha;
  const ACC beta_ = total_ - alpha_;
  const REAL boundary = total * x * (1 - x);
  if (x <= 0.5f && boundary < 2.5f) return rd_beta_grad_alpha_small(x, alpha, beta);
  if (x >= 0.5f && boundary < 0.75f) return -rd_beta_grad_beta_small(1 - x, beta, alpha);
  if (alpha > 6 && beta > 6) return rd_beta_grad_alpha_mid(x_, alpha_, beta_);
  const ACC c[2][3][3][4] = {
      {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
        {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
        {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
       {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
        {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
        {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
       {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
        {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
        {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
      {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
        {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
        {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
       {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
        {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
        {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
       {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
        {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
        {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
  };
  const ACC u = log(x_);
  const ACC a = log(alpha_) - u;
  const ACC b = log(total_) - a;
  const ACC pow_u[3] = {1, u, u * u};
  const ACC pow_a[3] = {1, a, a * a};
  ACC p = 0, q = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const ACC ua = pow_u[i] * pow_a[j];
      p += ua * (c[0][i][j][0] + b * (c[0][i][j][1] + b * (c[0][i][j][2] + b * c[0][i][j][3])));
      q += ua * (c[1][i][j][0] + b * (c[1][i][j][1] + b * (c[1][i][j][2] + b * c[1][i][j][3])));
    }
  }
  const ACC approx = x_ * (rd_digamma_s((REAL)total_) - rd_digamma_s((REAL)alpha_)) / beta_;
  return (REAL)(p / q * approx);
}

// Both grads over contiguous operands of the output's dtype.
__kernel void standard_gamma_grad_k(__global char* ob, ulong ooff, __global const char* ab,
                                    ulong aoff, __global const char* xb, ulong xoff, long n) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL alpha = ld((__global const ST*)(ab + aoff), i);
  const REAL x = ld((__global const ST*)(xb + xoff), i);
  st((__global ST*)(ob + ooff), i, rd_standard_gamma_grad(alpha, x));
}

__kernel void dirichlet_grad_k(__global char* ob, ulong ooff, __global const char* xb, ulong xoff,
                               __global const char* ab, ulong aoff, __global const char* tb,
                               ulong toff, long n) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const REAL x = ld((__global const ST*)(xb + xoff), i);
  const REAL alpha = ld((__global const ST*)(ab + aoff), i);
  const REAL total = ld((__global const ST*)(tb + toff), i);
  st((__global ST*)(ob + ooff), i, rd_dirichlet_grad(x, alpha, total));
}
