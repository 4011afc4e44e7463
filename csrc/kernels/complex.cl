// Complex arithmetic for generated kernels, written over CT (float2 or double2: .x real, .y
// imaginary) and its real type CR, which the generator typedefs before this text. The formulas
// follow c10::complex / std::complex closely enough that results agree with CPU PyTorch within
// the dtype's tolerance; special values (zeros, infinities) where noted.

inline CT ocl_cmul(CT a, CT b) {
  return (CT)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// c10::complex's division (numpy's scaling): no overflow for large divisors, 0/0 gives NaN.
inline CT ocl_cdiv(CT a, CT b) {
  const CR ac = fabs(b.x), ad = fabs(b.y);
  if (ac >= ad) {
    if (ac == (CR)0 && ad == (CR)0) return (CT)(a.x / ac, a.y / ad);
    const CR rat = b.y / b.x, scl = (CR)1 / (b.x + b.y * rat);
    return (CT)((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }
  const CR rat = b.x / b.y, scl = (CR)1 / (b.y + b.x * rat);
  return (CT)((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
inline CT ocl_cconj(CT a) { return (CT)(a.x, -a.y); }
inline CR ocl_cabs(CT a) { return hypot(a.x, a.y); }
inline CR ocl_carg(CT a) { return atan2(a.y, a.x); }
inline int ocl_cisnan(CT a) { return isnan(a.x) || isnan(a.y); }
inline int ocl_cisinf(CT a) { return isinf(a.x) || isinf(a.y); }
inline int ocl_cisfinite(CT a) { return isfinite(a.x) && isfinite(a.y); }
inline int ocl_ceq(CT a, CT b) { return a.x == b.x && a.y == b.y; }
// sgn: z / |z|, 0 for 0.
inline CT ocl_csgn(CT a) {
  const CR r = ocl_cabs(a);
  return r == (CR)0 ? (CT)(0, 0) : (CT)(a.x / r, a.y / r);
}
inline CT ocl_cexp(CT a) {
  const CR e = exp(a.x);
  if (a.y == (CR)0) return (CT)(e, a.y);  // real arguments stay exact (exp(inf) = inf, not NaN)
  // exp(-inf + iy) is 0 for every y, infinite or NaN too (C99), not 0 * NaN
  if (a.x == -(CR)INFINITY && !isfinite(a.y)) return (CT)(0, 0);
  return (CT)(e * cos(a.y), e * sin(a.y));
}
inline CT ocl_clog(CT a) { return (CT)(log(ocl_cabs(a)), ocl_carg(a)); }
// Principal square root (Kahan's branch choice, so that cancellation never occurs).
inline CT ocl_csqrt(CT a) {
  if (a.x == (CR)0 && a.y == (CR)0) return (CT)(0, a.y);
  if (isinf(a.y)) return (CT)(INFINITY, a.y);
  const CR r = ocl_cabs(a);
  if (a.x >= (CR)0) {
    const CR t = sqrt((r + a.x) * (CR)0.5);
    return (CT)(t, a.y / (2 * t));
  }
  const CR t = sqrt((r - a.x) * (CR)0.5);
  return (CT)(fabs(a.y) / (2 * t), copysign(t, a.y));
}
inline CT ocl_crecip(CT a) { return ocl_cdiv((CT)(1, 0), a); }
inline CT ocl_crsqrt(CT a) { return ocl_crecip(ocl_csqrt(a)); }
// pow = exp(b log a) in polar form, |a|^b.x through the real pow (more accurate than
// exp(b.x log|a|) for large results); x ** 0 = 1 and 0 ** b = 0 for b of positive real part.
inline CT ocl_cpow(CT a, CT b) {
  if (b.x == (CR)0 && b.y == (CR)0) return (CT)(1, 0);
  if (a.x == (CR)0 && a.y == (CR)0 && b.x > (CR)0) return (CT)(0, 0);
  if (b.y == (CR)0 && b.x == (CR)1) return a;
  if (b.y == (CR)0 && b.x == (CR)2) return ocl_cmul(a, a);
  const CR r = ocl_cabs(a), th = ocl_carg(a);
  const CR mag = b.y == (CR)0 ? pow(r, b.x) : pow(r, b.x) * exp(-b.y * th);
  const CR ang = b.y == (CR)0 ? b.x * th : b.x * th + b.y * log(r);
  if (ang == (CR)0) return (CT)(mag, 0);
  return (CT)(mag * cos(ang), mag * sin(ang));
}
inline CT ocl_csin(CT a) { return (CT)(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y)); }
inline CT ocl_ccos(CT a) { return (CT)(cos(a.x) * cosh(a.y), -sin(a.x) * sinh(a.y)); }
inline CT ocl_csinh(CT a) { return (CT)(sinh(a.x) * cos(a.y), cosh(a.x) * sin(a.y)); }
inline CT ocl_ccosh(CT a) { return (CT)(cosh(a.x) * cos(a.y), sinh(a.x) * sin(a.y)); }
// tanh after Kahan ("Branch cuts for complex elementary functions"): no overflow for large |x|.
inline CT ocl_ctanh(CT a) {
  if (fabs(a.x) > (CR)22) {
    const CR e = exp(-2 * fabs(a.x));
    return (CT)(copysign((CR)1, a.x), 4 * sin(a.y) * cos(a.y) * e);
  }
  const CR t = tan(a.y), beta = 1 + t * t, s = sinh(a.x), rho = sqrt(1 + s * s);
  const CR den = 1 + beta * s * s;
  return (CT)(beta * rho * s / den, t / den);
}
// tan z = -i tanh(i z).
inline CT ocl_ctan(CT a) {
  const CT t = ocl_ctanh((CT)(-a.y, a.x));
  return (CT)(t.y, -t.x);
}
inline CT ocl_csigmoid(CT a) { return ocl_crecip((CT)(1, 0) + ocl_cexp(-a)); }
// expm1 and log1p as c10::complex computes them (no cancellation near 0).
inline CT ocl_cexpm1(CT a) {
  const CR h = sin(a.y * (CR)0.5);
  return (CT)(expm1(a.x) * cos(a.y) - 2 * h * h, exp(a.x) * sin(a.y));
}
inline CT ocl_clog1p(CT a) {
  const CR theta = atan2(a.y, a.x + 1);
  if (ocl_cabs(a) < (CR)0.5) {
    const CR r = a.x * (2 + a.x) + a.y * a.y;
    return r == (CR)0 ? (CT)(a.x, theta) : (CT)((CR)0.5 * log1p(r), theta);
  }
  return (CT)(log(hypot(a.x + 1, a.y)), theta);
}
// Inverse trigonometric and hyperbolic functions on the principal branches (std::complex's):
// asinh from the half plane Re >= +0 (odd symmetry avoids the cancellation in z + sqrt(z^2 + 1)),
// atanh through log1p, the others by the identities asin z = -i asinh(iz), atan z = -i atanh(iz),
// acos z = pi/2 - asin z, acosh z = log(z + sqrt(z + 1) sqrt(z - 1)); infinities as C99 has them.
inline CT ocl_casinh(CT a) {
  const int neg = signbit(a.x);
  const CT z = neg ? -a : a;
  // sqrt(z - i) sqrt(z + i) rather than sqrt(z^2 + 1): right on the cut (Re z = 0, |Im z| > 1)
  const CT s = ocl_cmul(ocl_csqrt((CT)(z.x, z.y - 1)), ocl_csqrt((CT)(z.x, z.y + 1)));
  // an infinite z: (inf, arg z), C99's values
  const CT r = ocl_cisinf(z) ? ocl_clog(z) : ocl_clog(z + s);
  return neg ? -r : r;
}
inline CT ocl_casin(CT a) {
  const CT t = ocl_casinh((CT)(-a.y, a.x));
  return (CT)(t.y, -t.x);
}
inline CT ocl_cacos(CT a) {
  const CT s = ocl_casin(a);
  return (CT)((CR)M_PI_2 - s.x, -s.y);
}
inline CT ocl_catanh(CT a) {
  if (ocl_cisinf(a)) return (CT)(copysign((CR)0, a.x), copysign((CR)M_PI_2, a.y));
  return (CR)0.5 * (ocl_clog1p(a) - ocl_clog1p(-a));
}
inline CT ocl_catan(CT a) {
  const CT t = ocl_catanh((CT)(-a.y, a.x));
  return (CT)(t.y, -t.x);
}
inline CT ocl_cacosh(CT a) {
  // (a.x +- 1, a.y), not a +- (1, 0): adding (+0) would lose the sign of a zero imaginary part
  const CT s = ocl_cmul(ocl_csqrt((CT)(a.x + 1, a.y)), ocl_csqrt((CT)(a.x - 1, a.y)));
  if (ocl_cisinf(a)) return (CT)(INFINITY, atan2(a.y, a.x));
  return ocl_clog(a + s);
}
