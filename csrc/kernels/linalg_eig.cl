// The nonsymmetric eigensolver (linalg.eig / eigvals) as LAPACK's xGEEV computes it, one work
// item per matrix: scaling of tiny or huge matrices, balancing (xGEBAL 'B': permutations, then
// power-of-2 row/column scaling), Householder reduction to Hessenberg form (xGEHD2), Q formed from
// its reflectors (xUNG2R's product), the small-bulge QR algorithm of xLAHQR (real: Francis double
// shift, 2x2 blocks standardised as DLANV2 does; complex: single shift), eigenvectors of the Schur
// form by back substitution (xTREVC3, no overflow rescaling) transformed back by Q, balancing
// undone (xGEBAK) and each vector normalised as xGEEV does (unit 2-norm, the component of largest
// modulus made real). The steps, their order and their conventions are LAPACK's, so that
// eigenvalue order and vector phases are the CPU's (for matrices below LAPACK's xHSEQR crossover
// to its multishift QR at order 75; above it, the same eigenpairs in another order).
//
// Prepended by the host: CT / CR (float2/float or double2/double), kernels/complex.cl, and
// EIG_REAL for real input matrices (R = CR entries, complex eigenpairs in conjugate pairs).
// Matrices are column-major (batch, n, n) working copies, as in LAPACK; indices below are 1-based
// like LAPACK's (A(i, j) is a[(i - 1) + (j - 1) n]).
#define A_(i, j) a[((i)-1) + (long)((j)-1) * n]
#define Z_(i, j) z[((i)-1) + (long)((j)-1) * n]

#ifdef EIG_REAL
typedef CR E;  // an element of the matrix
#define E_ABS(x) fabs(x)
#define E_ABS1(x) fabs(x)
#define E_NZ(x) ((x) != 0)
#define E_ONE ((CR)1)
#define E_ZERO ((CR)0)
#else
typedef CT E;
#define E_ABS(e) hypot((e).x, (e).y)
#define E_ABS1(e) (fabs((e).x) + fabs((e).y))
#define E_NZ(e) ((e).x != 0 || (e).y != 0)
#define E_ONE ((CT)(1, 0))
#define E_ZERO ((CT)(0, 0))
#endif

// dlamch: 'S' (safe minimum), 'P' (eps * base: the ULP); EIG_DOUBLE is set by the host
#ifdef EIG_DOUBLE
#define SAFMIN 2.2250738585072014e-308
#define ULP 2.220446049250313e-16
#else
#define SAFMIN 1.17549435e-38f
#define ULP 1.1920929e-07f
#endif

inline CT c_mul(CT a, CT b) {
  return ocl_cmul(a, b);
}
inline CT c_conj(CT a) {
  return (CT)(a.x, -a.y);
}
inline CT c_scale(CT a, CR s) {
  return (CT)(a.x * s, a.y * s);
}
inline CR c_abs1(CT a) {
  return fabs(a.x) + fabs(a.y);
}

// LAPACK's dlapy2: sqrt(x^2 + y^2) without needless overflow.
inline CR lapy2(CR x, CR y) {
  const CR xa = fabs(x), ya = fabs(y), w = fmax(xa, ya), zz = fmin(xa, ya);
  if (zz == 0 || isnan(x) || isnan(y)) return isnan(x) ? x : (isnan(y) ? y : w);
  return w * sqrt(1 + (zz / w) * (zz / w));
}
inline CR lapy3(CR x, CR y, CR zv) {
  const CR xa = fabs(x), ya = fabs(y), za = fabs(zv), w = fmax(xa, fmax(ya, za));
  if (w == 0) return xa + ya + za;
  return w * sqrt((xa / w) * (xa / w) + (ya / w) * (ya / w) + (za / w) * (za / w));
}
inline CR sign_of(CR a, CR b) {
  return copysign(fabs(a), b);
}  // Fortran SIGN(a, b)

#ifdef EIG_REAL
// DLARFG on (alpha, x[0..m-2], stride 1): returns tau, alpha becomes beta, x the vector's tail.
CR larfg(long m, __private E* alpha, __global E* x) {
  if (m <= 1) return 0;
  CR ss = 0;
  for (long i = 0; i < m - 1; ++i) ss += x[i] * x[i];
  const CR xnorm = sqrt(ss);
  if (xnorm == 0) return 0;
  const CR beta = -sign_of(lapy2(*alpha, xnorm), *alpha);
  const CR tau = (beta - *alpha) / beta;
  const CR sc = 1 / (*alpha - beta);
  for (long i = 0; i < m - 1; ++i) x[i] *= sc;
  *alpha = beta;
  return tau;
}
#else
// ZLARFG: complex tau, beta real.
CT larfg(long m, __private E* alpha, __global E* x) {
  if (m <= 0) return (CT)(0, 0);
  CR ss = 0;
  for (long i = 0; i < m - 1; ++i) ss += x[i].x * x[i].x + x[i].y * x[i].y;
  const CR xnorm = sqrt(ss), alphr = alpha->x, alphi = alpha->y;
  if (xnorm == 0 && alphi == 0) return (CT)(0, 0);
  const CR beta = -sign_of(lapy3(alphr, alphi, xnorm), alphr);
  const CT tau = (CT)((beta - alphr) / beta, -alphi / beta);
  const CT sc = ocl_cdiv((CT)(1, 0), (CT)(alphr - beta, alphi));
  for (long i = 0; i < m - 1; ++i) x[i] = c_mul(x[i], sc);
  *alpha = (CT)(beta, 0);
  return tau;
}
#endif

// xGEBAL('B'): permutations isolating eigenvalues, then scaling. perm[j] (1-based) is the
// row/column swapped with j for j < ilo or j > ihi; scale[j] the scaling factor of j in ilo..ihi.
void gebal(__global E* a, long n, __global CR* scale, __global int* perm, long* ilo_out,
           long* ihi_out) {
  long k = 1, l = n;
  for (long j = 1; j <= n; ++j) {
    perm[j - 1] = (int)j;
    scale[j - 1] = 1;
  }
  // rows isolating an eigenvalue, pushed down
  int noconv = 1;
  while (noconv) {
    noconv = 0;
    for (long i = l; i >= 1; --i) {
      int canswap = 1;
      for (long j = 1; j <= l; ++j)
        if (i != j && E_NZ(A_(i, j))) {
          canswap = 0;
          break;
        }
      if (canswap) {
        perm[l - 1] = (int)i;
        if (i != l) {
          for (long r = 1; r <= l; ++r) {
            const E t = A_(r, i);
            A_(r, i) = A_(r, l);
            A_(r, l) = t;
          }
          for (long c = k; c <= n; ++c) {
            const E t = A_(i, c);
            A_(i, c) = A_(l, c);
            A_(l, c) = t;
          }
        }
        noconv = 1;
        if (l == 1) {
          *ilo_out = 1;
          *ihi_out = 1;
          return;
        }
        l = l - 1;
      }
    }
  }
  // columns isolating an eigenvalue, pushed left
  noconv = 1;
  while (noconv) {
    noconv = 0;
    const long kk = k, ll = l;  // Fortran DO bounds are fixed at the loop's start
    for (long j = kk; j <= ll; ++j) {
      int canswap = 1;
      for (long i = k; i <= l; ++i)
        if (i != j && E_NZ(A_(i, j))) {
          canswap = 0;
          break;
        }
      if (canswap) {
        perm[k - 1] = (int)j;
        if (j != k) {
          for (long r = 1; r <= l; ++r) {
            const E t = A_(r, j);
            A_(r, j) = A_(r, k);
            A_(r, k) = t;
          }
          for (long c = k; c <= n; ++c) {
            const E t = A_(j, c);
            A_(j, c) = A_(k, c);
            A_(k, c) = t;
          }
        }
        noconv = 1;
        k = k + 1;
      }
    }
  }
  const CR sclfac = 2, factor = (CR)0.95;
  const CR sfmin1 = SAFMIN / ULP, sfmax1 = 1 / sfmin1, sfmin2 = sfmin1 * sclfac,
           sfmax2 = 1 / sfmin2;
  noconv = 1;
  while (noconv) {
    noconv = 0;
    for (long i = k; i <= l; ++i) {
      CR c2 = 0, r2 = 0;
      for (long t = k; t <= l; ++t) {
        c2 += E_ABS(A_(t, i)) * E_ABS(A_(t, i));
        r2 += E_ABS(A_(i, t)) * E_ABS(A_(i, t));
      }
      CR c = sqrt(c2), r = sqrt(r2);
      // i?amax (|re| + |im| for complex), then the true modulus of that element
      long ica = 1;
      for (long t = 2; t <= l; ++t)
        if (E_ABS1(A_(t, i)) > E_ABS1(A_(ica, i))) ica = t;
      CR ca = E_ABS(A_(ica, i));
      long ira = k;
      for (long t = k + 1; t <= n; ++t)
        if (E_ABS1(A_(i, t)) > E_ABS1(A_(i, ira))) ira = t;
      CR ra = E_ABS(A_(i, ira));
      if (c == 0 || r == 0) continue;
      if (isnan(c + ca + r + ra)) continue;
      CR g = r / sclfac, f = 1;
      const CR s = c + r;
      while (c < g && fmax(f, fmax(c, ca)) < sfmax2 && fmin(r, fmin(g, ra)) > sfmin2) {
        f *= sclfac;
        c *= sclfac;
        ca *= sclfac;
        r /= sclfac;
        g /= sclfac;
        ra /= sclfac;
      }
      g = c / sclfac;
      while (g >= r && fmax(r, ra) < sfmax2 && fmin(fmin(f, c), fmin(g, ca)) > sfmin2) {
        f /= sclfac;
        c /= sclfac;
        g /= sclfac;
        ca /= sclfac;
        r *= sclfac;
        ra *= sclfac;
      }
      if (c + r >= factor * s) continue;
      if (f < 1 && scale[i - 1] < 1 && f * scale[i - 1] <= sfmin1) continue;
      if (f > 1 && scale[i - 1] > 1 && scale[i - 1] >= sfmax1 / f) continue;
      g = 1 / f;
      scale[i - 1] *= f;
      noconv = 1;
      for (long t = k; t <= n; ++t) A_(i, t) *= g;
      for (long t = 1; t <= l; ++t) A_(t, i) *= f;
    }
  }
  *ilo_out = k;
  *ihi_out = l;
}

// xGEHD2 on rows/columns ilo..ihi: reflectors below the subdiagonal, tau[i - 1].
void gehd2(__global E* a, long n, long ilo, long ihi, __global E* tau) {
  for (long i = ilo; i <= ihi - 1; ++i) {
    E alpha = A_(i + 1, i);
    const long m = ihi - i;
    const E t = larfg(m, &alpha, &A_(min(i + 2, n), i));
    tau[i - 1] = t;
    A_(i + 1, i) = E_ONE;
    // right: A(1:ihi, i+1:ihi) (I - tau v v^H)
    for (long r = 1; r <= ihi; ++r) {
#ifdef EIG_REAL
      CR w = 0;
      for (long q = i + 1; q <= ihi; ++q) w += A_(r, q) * A_(q, i);
      w *= t;
      for (long q = i + 1; q <= ihi; ++q) A_(r, q) -= w * A_(q, i);
#else
      CT w = (CT)(0, 0);
      for (long q = i + 1; q <= ihi; ++q) w += c_mul(A_(r, q), A_(q, i));
      w = c_mul(w, t);
      for (long q = i + 1; q <= ihi; ++q) A_(r, q) -= c_mul(w, c_conj(A_(q, i)));
#endif
    }
    // left: (I - tau^H v v^H) A(i+1:ihi, i+1:n)
    for (long c = i + 1; c <= n; ++c) {
#ifdef EIG_REAL
      CR w = 0;
      for (long q = i + 1; q <= ihi; ++q) w += A_(q, i) * A_(q, c);
      w *= t;
      for (long q = i + 1; q <= ihi; ++q) A_(q, c) -= w * A_(q, i);
#else
      CT w = (CT)(0, 0);
      for (long q = i + 1; q <= ihi; ++q) w += c_mul(c_conj(A_(q, i)), A_(q, c));
      w = c_mul(w, c_conj(t));
      for (long q = i + 1; q <= ihi; ++q) A_(q, c) -= c_mul(w, A_(q, i));
#endif
    }
    A_(i + 1, i) = alpha;
  }
}

// Q = H(ilo) ... H(ihi - 1) into z (xORGHR), then the reflectors cleared from a.
void orghr(__global E* a, __global E* z, long n, long ilo, long ihi, __global const E* tau) {
  for (long c = 1; c <= n; ++c)
    for (long r = 1; r <= n; ++r) Z_(r, c) = r == c ? E_ONE : E_ZERO;
  for (long i = ihi - 1; i >= ilo; --i) {
    const E t = tau[i - 1];
    // v = (1, A(i+2:ihi, i)) on rows i+1..ihi; Z <- (I - tau v v^H) Z on columns i+1..ihi
    for (long c = i + 1; c <= ihi; ++c) {
#ifdef EIG_REAL
      CR w = Z_(i + 1, c);
      for (long q = i + 2; q <= ihi; ++q) w += A_(q, i) * Z_(q, c);
      w *= t;
      Z_(i + 1, c) -= w;
      for (long q = i + 2; q <= ihi; ++q) Z_(q, c) -= w * A_(q, i);
#else
      CT w = Z_(i + 1, c);
      for (long q = i + 2; q <= ihi; ++q) w += c_mul(c_conj(A_(q, i)), Z_(q, c));
      w = c_mul(w, t);
      Z_(i + 1, c) -= w;
      for (long q = i + 2; q <= ihi; ++q) Z_(q, c) -= c_mul(w, A_(q, i));
#endif
    }
  }
}

#ifdef EIG_REAL
// DLANV2: the standardised Schur factorisation of [[a, b], [c, d]], its rotation (cs, sn).
void lanv2(CR* a, CR* b, CR* c, CR* d, CR* rt1r, CR* rt1i, CR* rt2r, CR* rt2i, CR* cs, CR* sn) {
  const CR multpl = 4, eps = ULP;
  if (*c == 0) {
    *cs = 1;
    *sn = 0;
  } else if (*b == 0) {
    *cs = 0;
    *sn = 1;
    const CR temp = *d;
    *d = *a;
    *a = temp;
    *b = -*c;
    *c = 0;
  } else if ((*a - *d) == 0 && sign_of(1, *b) != sign_of(1, *c)) {
    *cs = 1;
    *sn = 0;
  } else {
    CR temp = *a - *d, p = temp / 2;
    const CR bcmax = fmax(fabs(*b), fabs(*c));
    const CR bcmis = fmin(fabs(*b), fabs(*c)) * sign_of(1, *b) * sign_of(1, *c);
    CR scale = fmax(fabs(p), bcmax);
    CR zz = (p / scale) * p + (bcmax / scale) * bcmis;
    if (zz >= multpl * eps) {
      zz = p + sign_of(sqrt(scale) * sqrt(zz), p);
      *a = *d + zz;
      *d = *d - (bcmax / zz) * bcmis;
      const CR tau = lapy2(*c, zz);
      *cs = zz / tau;
      *sn = *c / tau;
      *b = *b - *c;
      *c = 0;
    } else {
      // complex or nearly equal real eigenvalues: make the diagonal equal (no rescaling of
      // sigma and temp: they only need it near overflow or underflow)
      const CR sigma = *b + *c;
      p = temp / 2;
      CR tau = lapy2(sigma, temp);
      *cs = sqrt((1 + fabs(sigma) / tau) / 2);
      *sn = -(p / (tau * *cs)) * sign_of(1, sigma);
      const CR aa = *a * *cs + *b * *sn, bb = -*a * *sn + *b * *cs;
      const CR cc = *c * *cs + *d * *sn, dd = -*c * *sn + *d * *cs;
      *a = aa * *cs + cc * *sn;
      *b = bb * *cs + dd * *sn;
      *c = -aa * *sn + cc * *cs;
      *d = -bb * *sn + dd * *cs;
      temp = (*a + *d) / 2;
      *a = temp;
      *d = temp;
      if (*c != 0) {
        if (*b != 0) {
          if (sign_of(1, *b) == sign_of(1, *c)) {
            const CR sab = sqrt(fabs(*b)), sac = sqrt(fabs(*c));
            p = sign_of(sab * sac, *c);
            tau = 1 / sqrt(fabs(*b + *c));
            *a = temp + p;
            *d = temp - p;
            *b = *b - *c;
            *c = 0;
            const CR cs1 = sab * tau, sn1 = sac * tau;
            temp = *cs * cs1 - *sn * sn1;
            *sn = *cs * sn1 + *sn * cs1;
            *cs = temp;
          }
        } else {
          *b = -*c;
          *c = 0;
          temp = *cs;
          *cs = -*sn;
          *sn = temp;
        }
      }
    }
  }
  *rt1r = *a;
  *rt2r = *d;
  if (*c == 0) {
    *rt1i = 0;
    *rt2i = 0;
  } else {
    *rt1i = sqrt(fabs(*b)) * sqrt(fabs(*c));
    *rt2i = -*rt1i;
  }
}

// DLAHQR (wantz = wantt): returns info (0, or the 1-based row of the unconverged part).
long lahqr(__global CR* a, __global CR* z, long n, long ilo, long ihi, __global CR* wr,
           __global CR* wi, int wantt) {
  if (ilo == ihi) {
    wr[ilo - 1] = A_(ilo, ilo);
    wi[ilo - 1] = 0;
    return 0;
  }
  for (long j = ilo; j <= ihi - 3; ++j) {
    A_(j + 2, j) = 0;
    A_(j + 3, j) = 0;
  }
  if (ilo <= ihi - 2) A_(ihi, ihi - 2) = 0;
  const long nh = ihi - ilo + 1;
  const CR smlnum = SAFMIN * ((CR)nh / ULP);
  long i1 = 1, i2 = n;
  const long itmax = 30 * max(10L, nh);
  long kdefl = 0;
  const CR dat1 = (CR)0.75, dat2 = (CR)-0.4375;
  const int kexsh = 10;
  long i = ihi;
  while (i >= ilo) {
    long l = ilo;
    int converged = 0;
    for (long its = 0; its <= itmax; ++its) {
      long k;
      for (k = i; k >= l + 1; --k) {
        if (fabs(A_(k, k - 1)) <= smlnum) break;
        CR tst = fabs(A_(k - 1, k - 1)) + fabs(A_(k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += fabs(A_(k - 1, k - 2));
          if (k + 1 <= ihi) tst += fabs(A_(k + 1, k));
        }
        if (fabs(A_(k, k - 1)) <= ULP * tst) {
          const CR ab = fmax(fabs(A_(k, k - 1)), fabs(A_(k - 1, k)));
          const CR ba = fmin(fabs(A_(k, k - 1)), fabs(A_(k - 1, k)));
          const CR aa = fmax(fabs(A_(k, k)), fabs(A_(k - 1, k - 1) - A_(k, k)));
          const CR bb = fmin(fabs(A_(k, k)), fabs(A_(k - 1, k - 1) - A_(k, k)));
          const CR s = aa + ab;
          if (ba * (ab / s) <= fmax(smlnum, ULP * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) A_(l, l - 1) = 0;
      if (l >= i - 1) {
        converged = 1;
        break;
      }
      kdefl++;
      if (!wantt) {
        i1 = l;
        i2 = i;
      }
      CR h11, h12, h21, h22;
      if (kdefl % (2 * kexsh) == 0) {
        const CR s = fabs(A_(i, i - 1)) + fabs(A_(i - 1, i - 2));
        h11 = dat1 * s + A_(i, i);
        h12 = dat2 * s;
        h21 = s;
        h22 = h11;
      } else if (kdefl % kexsh == 0) {
        const CR s = fabs(A_(l + 1, l)) + fabs(A_(l + 2, l + 1));
        h11 = dat1 * s + A_(l, l);
        h12 = dat2 * s;
        h21 = s;
        h22 = h11;
      } else {
        h11 = A_(i - 1, i - 1);
        h21 = A_(i, i - 1);
        h12 = A_(i - 1, i);
        h22 = A_(i, i);
      }
      CR rt1r, rt1i, rt2r, rt2i;
      {
        const CR s = fabs(h11) + fabs(h12) + fabs(h21) + fabs(h22);
        if (s == 0) {
          rt1r = rt1i = rt2r = rt2i = 0;
        } else {
          h11 /= s;
          h21 /= s;
          h12 /= s;
          h22 /= s;
          const CR tr = (h11 + h22) / 2;
          const CR det = (h11 - tr) * (h22 - tr) - h12 * h21;
          const CR rtdisc = sqrt(fabs(det));
          if (det >= 0) {
            rt1r = tr * s;
            rt2r = rt1r;
            rt1i = rtdisc * s;
            rt2i = -rt1i;
          } else {
            rt1r = tr + rtdisc;
            rt2r = tr - rtdisc;
            if (fabs(rt1r - h22) <= fabs(rt2r - h22)) {
              rt1r = rt1r * s;
              rt2r = rt1r;
            } else {
              rt2r = rt2r * s;
              rt1r = rt2r;
            }
            rt1i = rt2i = 0;
          }
        }
      }
      long m;
      CR v[3];
      for (m = i - 2; m >= l; --m) {
        CR h21s = A_(m + 1, m);
        CR s = fabs(A_(m, m) - rt2r) + fabs(rt2i) + fabs(h21s);
        h21s = A_(m + 1, m) / s;
        v[0] =
            h21s * A_(m, m + 1) + (A_(m, m) - rt1r) * ((A_(m, m) - rt2r) / s) - rt1i * (rt2i / s);
        v[1] = h21s * (A_(m, m) + A_(m + 1, m + 1) - rt1r - rt2r);
        v[2] = h21s * A_(m + 2, m + 1);
        s = fabs(v[0]) + fabs(v[1]) + fabs(v[2]);
        v[0] /= s;
        v[1] /= s;
        v[2] /= s;
        if (m == l) break;
        const CR h00 = fabs(A_(m, m - 1)) * (fabs(v[1]) + fabs(v[2]));
        const CR h01 =
            ULP * fabs(v[0]) * (fabs(A_(m - 1, m - 1)) + fabs(A_(m, m)) + fabs(A_(m + 1, m + 1)));
        if (h00 <= h01) break;
      }
      for (long kk = m; kk <= i - 1; ++kk) {
        const long nr = min(3L, i - kk + 1);
        if (kk > m)
          for (long q = 0; q < nr; ++q) v[q] = A_(kk + q, kk - 1);
        // DLARFG on v (private)
        CR t1 = 0;
        {
          CR ss = 0;
          for (long q = 1; q < nr; ++q) ss += v[q] * v[q];
          const CR xnorm = sqrt(ss);
          if (xnorm != 0) {
            const CR beta = -sign_of(lapy2(v[0], xnorm), v[0]);
            t1 = (beta - v[0]) / beta;
            const CR sc = 1 / (v[0] - beta);
            for (long q = 1; q < nr; ++q) v[q] *= sc;
            v[0] = beta;
          }
        }
        if (kk > m) {
          A_(kk, kk - 1) = v[0];
          A_(kk + 1, kk - 1) = 0;
          if (kk < i - 1) A_(kk + 2, kk - 1) = 0;
        } else if (m > l) {
          A_(kk, kk - 1) = A_(kk, kk - 1) * (1 - t1);
        }
        const CR v2 = v[1], t2 = t1 * v2;
        if (nr == 3) {
          const CR v3 = v[2], t3 = t1 * v3;
          for (long j = kk; j <= i2; ++j) {
            const CR sum = A_(kk, j) + v2 * A_(kk + 1, j) + v3 * A_(kk + 2, j);
            A_(kk, j) -= sum * t1;
            A_(kk + 1, j) -= sum * t2;
            A_(kk + 2, j) -= sum * t3;
          }
          for (long j = i1; j <= min(kk + 3, i); ++j) {
            const CR sum = A_(j, kk) + v2 * A_(j, kk + 1) + v3 * A_(j, kk + 2);
            A_(j, kk) -= sum * t1;
            A_(j, kk + 1) -= sum * t2;
            A_(j, kk + 2) -= sum * t3;
          }
          if (wantt)
            for (long j = 1; j <= n; ++j) {
              const CR sum = Z_(j, kk) + v2 * Z_(j, kk + 1) + v3 * Z_(j, kk + 2);
              Z_(j, kk) -= sum * t1;
              Z_(j, kk + 1) -= sum * t2;
              Z_(j, kk + 2) -= sum * t3;
            }
        } else if (nr == 2) {
          for (long j = kk; j <= i2; ++j) {
            const CR sum = A_(kk, j) + v2 * A_(kk + 1, j);
            A_(kk, j) -= sum * t1;
            A_(kk + 1, j) -= sum * t2;
          }
          for (long j = i1; j <= i; ++j) {
            const CR sum = A_(j, kk) + v2 * A_(j, kk + 1);
            A_(j, kk) -= sum * t1;
            A_(j, kk + 1) -= sum * t2;
          }
          if (wantt)
            for (long j = 1; j <= n; ++j) {
              const CR sum = Z_(j, kk) + v2 * Z_(j, kk + 1);
              Z_(j, kk) -= sum * t1;
              Z_(j, kk + 1) -= sum * t2;
            }
        }
      }
    }
    if (!converged) return i;
    if (l == i) {
      wr[i - 1] = A_(i, i);
      wi[i - 1] = 0;
    } else if (l == i - 1) {
      CR aa = A_(i - 1, i - 1), bb = A_(i - 1, i), cc = A_(i, i - 1), dd = A_(i, i);
      CR cs, sn, r1r, r1i, r2r, r2i;
      lanv2(&aa, &bb, &cc, &dd, &r1r, &r1i, &r2r, &r2i, &cs, &sn);
      wr[i - 2] = r1r;
      wi[i - 2] = r1i;
      wr[i - 1] = r2r;
      wi[i - 1] = r2i;
      A_(i - 1, i - 1) = aa;
      A_(i - 1, i) = bb;
      A_(i, i - 1) = cc;
      A_(i, i) = dd;
      if (wantt) {
        for (long j = i + 1; j <= i2; ++j) {  // DROT on rows i-1, i
          const CR x = A_(i - 1, j), y = A_(i, j);
          A_(i - 1, j) = cs * x + sn * y;
          A_(i, j) = cs * y - sn * x;
        }
        for (long j = i1; j <= i - 2; ++j) {  // columns i-1, i
          const CR x = A_(j, i - 1), y = A_(j, i);
          A_(j, i - 1) = cs * x + sn * y;
          A_(j, i) = cs * y - sn * x;
        }
        for (long j = 1; j <= n; ++j) {
          const CR x = Z_(j, i - 1), y = Z_(j, i);
          Z_(j, i - 1) = cs * x + sn * y;
          Z_(j, i) = cs * y - sn * x;
        }
      }
    }
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}
#else
// ZLAHQR (wantz = wantt).
long lahqr(__global CT* a, __global CT* z, long n, long ilo, long ihi, __global CT* w, int wantt) {
  if (ilo == ihi) {
    w[ilo - 1] = A_(ilo, ilo);
    return 0;
  }
  for (long j = ilo; j <= ihi - 3; ++j) {
    A_(j + 2, j) = (CT)(0, 0);
    A_(j + 3, j) = (CT)(0, 0);
  }
  if (ilo <= ihi - 2) A_(ihi, ihi - 2) = (CT)(0, 0);
  const long jlo = wantt ? 1 : ilo, jhi = wantt ? n : ihi;
  // make the subdiagonal real
  for (long i = ilo + 1; i <= ihi; ++i) {
    if (A_(i, i - 1).y != 0) {
      CT sc = c_scale(A_(i, i - 1), 1 / c_abs1(A_(i, i - 1)));
      sc = c_scale(c_conj(sc), 1 / hypot(sc.x, sc.y));
      A_(i, i - 1) = (CT)(hypot(A_(i, i - 1).x, A_(i, i - 1).y), 0);
      for (long j = i; j <= jhi; ++j) A_(i, j) = c_mul(sc, A_(i, j));
      for (long j = jlo; j <= min(jhi, i + 1); ++j) A_(j, i) = c_mul(c_conj(sc), A_(j, i));
      if (wantt)
        for (long j = 1; j <= n; ++j) Z_(j, i) = c_mul(c_conj(sc), Z_(j, i));
    }
  }
  const long nh = ihi - ilo + 1;
  const CR smlnum = SAFMIN * ((CR)nh / ULP);
  long i1 = 1, i2 = n;
  const long itmax = 30 * max(10L, nh);
  long kdefl = 0;
  const CR dat1 = (CR)0.75;
  const int kexsh = 10;
  long i = ihi;
  while (i >= ilo) {
    long l = ilo;
    int converged = 0;
    for (long its = 0; its <= itmax; ++its) {
      long k;
      for (k = i; k >= l + 1; --k) {
        if (c_abs1(A_(k, k - 1)) <= smlnum) break;
        CR tst = c_abs1(A_(k - 1, k - 1)) + c_abs1(A_(k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += fabs(A_(k - 1, k - 2).x);
          if (k + 1 <= ihi) tst += fabs(A_(k + 1, k).x);
        }
        if (fabs(A_(k, k - 1).x) <= ULP * tst) {
          const CR ab = fmax(c_abs1(A_(k, k - 1)), c_abs1(A_(k - 1, k)));
          const CR ba = fmin(c_abs1(A_(k, k - 1)), c_abs1(A_(k - 1, k)));
          const CR aa = fmax(c_abs1(A_(k, k)), c_abs1(A_(k - 1, k - 1) - A_(k, k)));
          const CR bb = fmin(c_abs1(A_(k, k)), c_abs1(A_(k - 1, k - 1) - A_(k, k)));
          const CR s = aa + ab;
          if (ba * (ab / s) <= fmax(smlnum, ULP * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) A_(l, l - 1) = (CT)(0, 0);
      if (l >= i) {
        converged = 1;
        break;
      }
      kdefl++;
      if (!wantt) {
        i1 = l;
        i2 = i;
      }
      CT t;
      if (kdefl % (2 * kexsh) == 0) {
        const CR s = dat1 * fabs(A_(i, i - 1).x);
        t = A_(i, i) + (CT)(s, 0);
      } else if (kdefl % kexsh == 0) {
        const CR s = dat1 * fabs(A_(l + 1, l).x);
        t = A_(l, l) + (CT)(s, 0);
      } else {
        t = A_(i, i);
        const CT u = c_mul(ocl_csqrt(A_(i - 1, i)), ocl_csqrt(A_(i, i - 1)));
        CR s = c_abs1(u);
        if (s != 0) {
          const CT x = c_scale(A_(i - 1, i - 1) - t, (CR)0.5);
          const CR sx = c_abs1(x);
          s = fmax(s, c_abs1(x));
          const CT xs = c_scale(x, 1 / s), us = c_scale(u, 1 / s);
          CT y = c_scale(ocl_csqrt(c_mul(xs, xs) + c_mul(us, us)), s);
          if (sx > 0) {
            const CT xx = c_scale(x, 1 / sx);
            if (xx.x * y.x + xx.y * y.y < 0) y = -y;
          }
          t = t - c_mul(u, ocl_cdiv(u, x + y));
        }
      }
      long m;
      CT v0, v1;
      for (m = i - 1; m >= l + 1; --m) {
        const CT h11 = A_(m, m), h22 = A_(m + 1, m + 1);
        CT h11s = h11 - t;
        CR h21 = A_(m + 1, m).x;
        const CR s = c_abs1(h11s) + fabs(h21);
        h11s = c_scale(h11s, 1 / s);
        h21 = h21 / s;
        v0 = h11s;
        v1 = (CT)(h21, 0);
        const CR h10 = A_(m, m - 1).x;
        if (fabs(h10) * fabs(h21) <= ULP * (c_abs1(h11s) * (c_abs1(h11) + c_abs1(h22)))) break;
      }
      if (m == l) {
        const CT h11 = A_(l, l);
        CT h11s = h11 - t;
        CR h21 = A_(l + 1, l).x;
        const CR s = c_abs1(h11s) + fabs(h21);
        v0 = c_scale(h11s, 1 / s);
        v1 = (CT)(h21 / s, 0);
      }
      for (long kk = m; kk <= i - 1; ++kk) {
        if (kk > m) {
          v0 = A_(kk, kk - 1);
          v1 = A_(kk + 1, kk - 1);
        }
        // ZLARFG(2, v0, v1)
        CT t1 = (CT)(0, 0);
        {
          const CR xnorm = hypot(v1.x, v1.y), alphr = v0.x, alphi = v0.y;
          if (!(xnorm == 0 && alphi == 0)) {
            const CR beta = -sign_of(lapy3(alphr, alphi, xnorm), alphr);
            t1 = (CT)((beta - alphr) / beta, -alphi / beta);
            v1 = c_mul(v1, ocl_cdiv((CT)(1, 0), (CT)(alphr - beta, alphi)));
            v0 = (CT)(beta, 0);
          }
        }
        if (kk > m) {
          A_(kk, kk - 1) = v0;
          A_(kk + 1, kk - 1) = (CT)(0, 0);
        }
        const CT v2 = v1;
        const CR t2 = c_mul(t1, v2).x;
        for (long j = kk; j <= i2; ++j) {
          const CT sum = c_mul(c_conj(t1), A_(kk, j)) + c_scale(A_(kk + 1, j), t2);
          A_(kk, j) -= sum;
          A_(kk + 1, j) -= c_mul(sum, v2);
        }
        for (long j = i1; j <= min(kk + 2, i); ++j) {
          const CT sum = c_mul(t1, A_(j, kk)) + c_scale(A_(j, kk + 1), t2);
          A_(j, kk) -= sum;
          A_(j, kk + 1) -= c_mul(sum, c_conj(v2));
        }
        if (wantt)
          for (long j = 1; j <= n; ++j) {
            const CT sum = c_mul(t1, Z_(j, kk)) + c_scale(Z_(j, kk + 1), t2);
            Z_(j, kk) -= sum;
            Z_(j, kk + 1) -= c_mul(sum, c_conj(v2));
          }
        if (kk == m && m > l) {
          CT temp = (CT)(1, 0) - t1;
          temp = c_scale(temp, 1 / hypot(temp.x, temp.y));
          A_(m + 1, m) = c_mul(A_(m + 1, m), c_conj(temp));
          if (m + 2 <= i) A_(m + 2, m + 1) = c_mul(A_(m + 2, m + 1), temp);
          for (long j = m; j <= i; ++j) {
            if (j != m + 1) {
              for (long q = j + 1; q <= i2; ++q) A_(j, q) = c_mul(temp, A_(j, q));
              for (long q = i1; q <= j - 1; ++q) A_(q, j) = c_mul(c_conj(temp), A_(q, j));
              if (wantt)
                for (long q = 1; q <= n; ++q) Z_(q, j) = c_mul(c_conj(temp), Z_(q, j));
            }
          }
        }
      }
      CT temp = A_(i, i - 1);
      if (temp.y != 0) {
        const CR rtemp = hypot(temp.x, temp.y);
        A_(i, i - 1) = (CT)(rtemp, 0);
        temp = c_scale(temp, 1 / rtemp);
        for (long q = i + 1; q <= i2; ++q) A_(i, q) = c_mul(c_conj(temp), A_(i, q));
        for (long q = i1; q <= i - 1; ++q) A_(q, i) = c_mul(temp, A_(q, i));
        if (wantt)
          for (long q = 1; q <= n; ++q) Z_(q, i) = c_mul(temp, Z_(q, i));
      }
    }
    if (!converged) return i;
    w[i - 1] = A_(i, i);
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}
#endif

// x = b / (d - lam), d - lam replaced by smin when smaller (xLALN2 / xTREVC3's perturbation).
inline CT solve1(CT d, CT b, CR smin) {
  if (c_abs1(d) < smin) d = (CT)(smin, 0);
  return ocl_cdiv(b, d);
}

#ifdef EIG_REAL
// (C - lam I) x = b for the 2x2 diagonal block C = [[c11, c12], [c21, c22]] by complete
// pivoting, tiny pivots replaced by smin (DLALN2 without its overflow scaling).
void solve2(CR c11, CR c12, CR c21, CR c22, CT lam, CT b1, CT b2, CR smin, CT* x1, CT* x2) {
  CT m[2][2] = {{(CT)(c11 - lam.x, -lam.y), (CT)(c12, 0)},
                {(CT)(c21, 0), (CT)(c22 - lam.x, -lam.y)}};
  CT rhs[2] = {b1, b2};
  // pivot: the largest |re| + |im| entry
  int pr = 0, pc = 0;
  CR best = -1;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      if (c_abs1(m[r][c]) > best) {
        best = c_abs1(m[r][c]);
        pr = r;
        pc = c;
      }
  if (best < smin) {
    *x1 = c_scale(b1, 1 / smin);
    *x2 = c_scale(b2, 1 / smin);
    return;
  }
  const int qr = 1 - pr, qc = 1 - pc;
  const CT l = ocl_cdiv(m[qr][pc], m[pr][pc]);
  CT u22 = m[qr][qc] - c_mul(l, m[pr][qc]);
  if (c_abs1(u22) < smin) u22 = (CT)(smin, 0);
  const CT r2 = rhs[qr] - c_mul(l, rhs[pr]);
  const CT xq = ocl_cdiv(r2, u22);
  const CT xp = ocl_cdiv(rhs[pr] - c_mul(m[pr][qc], xq), m[pr][pc]);
  CT xs[2];
  xs[pc] = xp;
  xs[qc] = xq;
  *x1 = xs[0];
  *x2 = xs[1];
}
#endif

// xTREVC3 (right vectors, back-transformed): z becomes Q times the eigenvectors of the upper
// (quasi-)triangular a, column by column from the last; x (n) is complex scratch. Real input:
// for a 2x2 block (ki - 1, ki) columns ki - 1, ki get the real and imaginary parts of the
// vector of the eigenvalue of positive imaginary part.
void trevc(__global E* a, __global E* z, long n, __global CT* x) {
  const CR smlnum = SAFMIN * ((CR)n / ULP);
  for (long ki = n; ki >= 1; --ki) {
#ifdef EIG_REAL
    const int pair = ki > 1 && A_(ki, ki - 1) != 0;
    CT lam = (CT)(A_(ki, ki), 0);
    if (pair) lam.y = sqrt(fabs(A_(ki, ki - 1))) * sqrt(fabs(A_(ki - 1, ki)));
    const CR smin = fmax(ULP * (fabs(lam.x) + fabs(lam.y)), smlnum);
    long top;  // the last row of the part still to solve
    if (!pair) {
      x[ki - 1] = (CT)(1, 0);
      for (long k = 1; k <= ki - 1; ++k) x[k - 1] = (CT)(-A_(k, ki), 0);
      top = ki - 1;
    } else {
      CR xr1, xi2;  // x(ki - 1) = xr1, x(ki) = i xi2
      if (fabs(A_(ki - 1, ki)) >= fabs(A_(ki, ki - 1))) {
        xr1 = 1;
        xi2 = lam.y / A_(ki - 1, ki);
      } else {
        xr1 = -lam.y / A_(ki, ki - 1);
        xi2 = 1;
      }
      x[ki - 2] = (CT)(xr1, 0);
      x[ki - 1] = (CT)(0, xi2);
      for (long k = 1; k <= ki - 2; ++k) x[k - 1] = (CT)(-xr1 * A_(k, ki - 1), -xi2 * A_(k, ki));
      top = ki - 2;
    }
    for (long j = top; j >= 1;) {
      if (j > 1 && A_(j, j - 1) != 0) {
        CT x1, x2;
        solve2(A_(j - 1, j - 1), A_(j - 1, j), A_(j, j - 1), A_(j, j), lam, x[j - 2], x[j - 1],
               smin, &x1, &x2);
        x[j - 2] = x1;
        x[j - 1] = x2;
        for (long k = 1; k <= j - 2; ++k)
          x[k - 1] -= c_scale(x1, A_(k, j - 1)) + c_scale(x2, A_(k, j));
        j -= 2;
      } else {
        const CT xj = solve1((CT)(A_(j, j) - lam.x, -lam.y), x[j - 1], smin);
        x[j - 1] = xj;
        for (long k = 1; k <= j - 1; ++k) x[k - 1] -= c_scale(xj, A_(k, j));
        j -= 1;
      }
    }
    // back-transform: column(s) of Q x over Q's first ki columns
    for (long r = 1; r <= n; ++r) {
      CT s = (CT)(0, 0);
      for (long k = 1; k <= ki; ++k) s += c_scale(x[k - 1], Z_(r, k));
      if (pair) {
        Z_(r, ki - 1) = s.x;
        Z_(r, ki) = s.y;
      } else {
        Z_(r, ki) = s.x;
      }
    }
    if (pair) --ki;
#else
    const CT lam = A_(ki, ki);
    const CR smin = fmax(ULP * c_abs1(lam), smlnum);
    x[ki - 1] = (CT)(1, 0);
    for (long k = 1; k <= ki - 1; ++k) x[k - 1] = -A_(k, ki);
    for (long j = ki - 1; j >= 1; --j) {
      const CT xj = solve1(A_(j, j) - lam, x[j - 1], smin);
      x[j - 1] = xj;
      for (long k = 1; k <= j - 1; ++k) x[k - 1] -= c_mul(xj, A_(k, j));
    }
    for (long r = 1; r <= n; ++r) {
      CT s = (CT)(0, 0);
      for (long k = 1; k <= ki; ++k) s += c_mul(Z_(r, k), x[k - 1]);
      Z_(r, ki) = s;
    }
#endif
  }
}

// Eigenvalues (and vectors) of each matrix of a (batch, n, n), column-major, destroyed.
// z: (batch, n, n) scratch (E) for Q and the vectors; rw: (batch, 3n) real scratch
// (wr, wi, scale); eb: (batch, n) E scratch (tau); xb: (batch, n) CT scratch; pb: (batch, n) int.
// Outputs: w (batch, n) CT; v (batch, n, n) CT row-major (vectors in columns) when compute_v;
// info (batch) int: 0, or LAPACK's info (the QR algorithm did not converge).
__kernel void geev(__global char* ab, ulong aoff, __global char* zb, ulong zoff, __global char* rb,
                   ulong roff, __global char* eb, ulong eoff, __global char* xb, ulong xoff,
                   __global char* pb, ulong poff, __global char* wb, ulong woff, __global char* vb,
                   ulong voff, __global char* ib, ulong ioff, long n, long batch, int compute_v) {
  const long g = get_global_id(0);
  if (g >= batch) return;
  __global E* a = (__global E*)(ab + aoff) + g * n * n;
  __global E* z = (__global E*)(zb + zoff) + g * n * n;
  __global CR* wr = (__global CR*)(rb + roff) + g * 3 * n;
  __global CR* wi = wr + n;
  __global CR* scale = wr + 2 * n;
  __global E* tau = (__global E*)(eb + eoff) + g * n;
  __global CT* x = (__global CT*)(xb + xoff) + g * n;
  __global int* perm = (__global int*)(pb + poff) + g * n;
  __global CT* w = (__global CT*)(wb + woff) + g * n;
  __global CT* v = (__global CT*)(vb + voff) + g * n * n;
  __global int* info = (__global int*)(ib + ioff) + g;

  // scale A into [smlnum, bignum] when its largest entry is outside (xGEEV)
  const CR smlnum = sqrt(SAFMIN) / ULP, bignum = 1 / smlnum;
  CR anrm = 0;
  for (long e = 0; e < n * n; ++e) {
    const CR m = E_ABS(a[e]);
    if (m > anrm || isnan(m)) anrm = m;
  }
  CR cscale = 1;
  const int scalea = (anrm > 0 && anrm < smlnum) || anrm > bignum;
  if (scalea) {
    cscale = anrm < smlnum ? smlnum : bignum;
    for (long e = 0; e < n * n; ++e) a[e] *= cscale / anrm;
  }
  long ilo, ihi;
  gebal(a, n, scale, perm, &ilo, &ihi);
  gehd2(a, n, ilo, ihi, tau);
  if (compute_v) orghr(a, z, n, ilo, ihi, tau);
  // xHSEQR: clear below the subdiagonal, eigenvalues isolated by the balancing
  for (long c = 1; c <= n; ++c)
    for (long r = c + 2; r <= n; ++r) A_(r, c) = E_ZERO;
#ifdef EIG_REAL
  for (long i = 1; i <= n; ++i)
    if (i < ilo || i > ihi) {
      wr[i - 1] = A_(i, i);
      wi[i - 1] = 0;
    }
  const long inf = lahqr(a, z, n, ilo, ihi, wr, wi, compute_v);
#else
  for (long i = 1; i <= n; ++i)
    if (i < ilo || i > ihi) w[i - 1] = A_(i, i);
  const long inf = lahqr(a, z, n, ilo, ihi, w, compute_v);
#endif
  *info = (int)inf;
  if (inf != 0) return;
  if (compute_v) {
    trevc(a, z, n, x);
    // xGEBAK: undo the scaling, then the permutations
    for (long i = ilo; i <= ihi; ++i)
      for (long c = 1; c <= n; ++c) Z_(i, c) *= scale[i - 1];
    for (long ii = 1; ii <= n; ++ii) {
      long i = ii;
      if (i >= ilo && i <= ihi) continue;
      if (i < ilo) i = ilo - ii;
      const long k = perm[i - 1];
      if (k == i) continue;
      for (long c = 1; c <= n; ++c) {
        const E t = Z_(i, c);
        Z_(i, c) = Z_(k, c);
        Z_(k, c) = t;
      }
    }
    // xGEEV's normalisation, written out as complex columns of v (row-major)
#ifdef EIG_REAL
    for (long j = 1; j <= n; ++j) {
      if (wi[j - 1] == 0) {
        CR ss = 0;
        for (long r = 1; r <= n; ++r) ss += Z_(r, j) * Z_(r, j);
        const CR scl = 1 / sqrt(ss);
        for (long r = 1; r <= n; ++r) v[(r - 1) * n + (j - 1)] = (CT)(Z_(r, j) * scl, 0);
      } else if (wi[j - 1] > 0 && j < n) {
        CR s1 = 0, s2 = 0;
        for (long r = 1; r <= n; ++r) {
          s1 += Z_(r, j) * Z_(r, j);
          s2 += Z_(r, j + 1) * Z_(r, j + 1);
        }
        const CR scl = 1 / lapy2(sqrt(s1), sqrt(s2));
        long kmax = 1;
        CR best = -1;
        for (long r = 1; r <= n; ++r) {
          Z_(r, j) *= scl;
          Z_(r, j + 1) *= scl;
          const CR m2 = Z_(r, j) * Z_(r, j) + Z_(r, j + 1) * Z_(r, j + 1);
          if (m2 > best) {
            best = m2;
            kmax = r;
          }
        }
        // DLARTG(f, g): r = sign(f) sqrt(f^2 + g^2), c = |f| / |r|, s = g / r
        const CR f = Z_(kmax, j), gg = Z_(kmax, j + 1);
        CR cs = 1, sn = 0;
        if (gg != 0) {
          if (f == 0) {
            cs = 0;
            sn = sign_of(1, gg);
          } else {
            const CR d = sqrt(f * f + gg * gg), rr = sign_of(d, f);
            cs = fabs(f) / d;
            sn = gg / rr;
          }
        }
        for (long r = 1; r <= n; ++r) {
          const CR xr = Z_(r, j), yr = Z_(r, j + 1);
          CR re = cs * xr + sn * yr, im = cs * yr - sn * xr;
          if (r == kmax) im = 0;
          v[(r - 1) * n + (j - 1)] = (CT)(re, im);
          v[(r - 1) * n + j] = (CT)(re, -im);
        }
      }
    }
#else
    for (long j = 1; j <= n; ++j) {
      CR ss = 0;
      for (long r = 1; r <= n; ++r) ss += Z_(r, j).x * Z_(r, j).x + Z_(r, j).y * Z_(r, j).y;
      const CR scl = 1 / sqrt(ss);
      long kmax = 1;
      CR best = -1;
      for (long r = 1; r <= n; ++r) {
        Z_(r, j) = c_scale(Z_(r, j), scl);
        const CR m2 = Z_(r, j).x * Z_(r, j).x + Z_(r, j).y * Z_(r, j).y;
        if (m2 > best) {
          best = m2;
          kmax = r;
        }
      }
      const CT tmp = c_scale(c_conj(Z_(kmax, j)), 1 / sqrt(best));
      for (long r = 1; r <= n; ++r) {
        CT e = c_mul(tmp, Z_(r, j));
        if (r == kmax) e.y = 0;
        v[(r - 1) * n + (j - 1)] = e;
      }
    }
#endif
  }
#ifdef EIG_REAL
  for (long i = 0; i < n; ++i) {
    CR re = wr[i], im = wi[i];
    if (scalea) {
      re *= anrm / cscale;
      im *= anrm / cscale;
    }
    w[i] = (CT)(re, im);
  }
#else
  if (scalea)
    for (long i = 0; i < n; ++i) w[i] = c_scale(w[i], anrm / cscale);
#endif
}
