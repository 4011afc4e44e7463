// LDL^T with Bunch-Kaufman pivoting (LAPACK sytf2, uplo = 'L') and its solve (sytrs), on
// contiguous row-major (batch, n, n) matrices of which only the lower triangle is read. Unblocked,
// for batches of small matrices. Written once over kernels/linalg_scalar.cl: real (float,
// double; hermitian is the same there) and complex, where herm = 0 is zsytf2/zsytrs (symmetric)
// and herm = 1 zhetf2/zhetrs (Hermitian: a real diagonal, conjugated transposes). Pivots are
// chosen on |re| + |im| (izamax / cabs1) as LAPACK's are.
#define LS 256  // kRowLocal: launchRowGroups' work-group size

// The element (i, j), i >= j, of the lower triangle of the n x n matrix a.
#define A_(i, j) ((i) * n + (j))

#ifdef OCL_COMPLEX
// LAPACK's (Fortran's) complex division: a zero divisor gives NaN, as on CPU.
inline CT ldl_cdiv(CT a, CT b) {
  return (b.x == 0 && b.y == 0) ? (CT)(NAN, NAN) : ocl_cdiv(a, b);
}
#define LDL_DIV(a, b) ldl_cdiv(a, b)
#else
#define LDL_DIV(a, b) ((a) / (b))
#endif
// x with its imaginary part dropped (a Hermitian diagonal element).
#define LDL_REAL_PART(x) S_REAL(S_RE(x))

// The first index of the largest |re| + |im| over count elements x[first + t * stride] (i?amax).
long iamax(__global const E* a, long first, long stride, long count) {
  long best = 0;
  SR v = -1;
  for (long t = 0; t < count; ++t) {
    const SR x = S_ABS1(S_LD(a, first + t * stride));
    if (x > v) {
      v = x;
      best = t;
    }
  }
  return best;
}

// In place, one work group of LS items per matrix: the lower triangle of a becomes L (unit, below
// the diagonal and the 2x2 blocks) and D (diagonal and the subdiagonal of 2x2 blocks), piv (n,
// 1-based) LAPACK's: piv[k] = p > 0, rows/columns k and p - 1 swapped with a 1x1 block;
// piv[k] = piv[k + 1] = -p, rows/columns k + 1 and p - 1 swapped with a 2x2 block at k. info:
// the first (1-based) zero column found (D singular), 0 if none.
__kernel void ldl_factor(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                         __global char* ib, ulong ioff, long n, int herm_arg) {
  const int herm = S_IS_COMPLEX && herm_arg;
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global E* a = (__global E*)(ab + aoff) + g * n * n;
  __global int* piv = (__global int*)(pb + poff) + g * n;
  __local long s_kp;
  __local int s_kstep, s_skip, s_info;
  if (lid == 0) s_info = 0;
  const SR alpha = (SR)((1 + sqrt(17.0)) / 8);
  long k = 0;
  while (k < n) {
    if (lid == 0) {
      int kstep = 1, skip = 0;
      long kp = k, imax = k;
      const SR absakk = herm ? fabs(S_RE(S_LD(a, A_(k, k)))) : S_ABS1(S_LD(a, A_(k, k)));
      SR colmax = 0;
      if (k < n - 1) {
        imax = k + 1 + iamax(a, A_(k + 1, k), n, n - k - 1);
        colmax = S_ABS1(S_LD(a, A_(imax, k)));
      }
      if (max(absakk, colmax) == 0 || isnan(absakk)) {
        if (s_info == 0) s_info = (int)(k + 1);
        skip = 1;
        if (herm) S_ST(a, A_(k, k), LDL_REAL_PART(S_LD(a, A_(k, k))));
      } else if (absakk < alpha * colmax) {
        // The largest off-diagonal |a| in row/column imax of the trailing matrix.
        long jmax = k + iamax(a, A_(imax, k), 1, imax - k);
        SR rowmax = S_ABS1(S_LD(a, A_(imax, jmax)));
        if (imax < n - 1) {
          jmax = imax + 1 + iamax(a, A_(imax + 1, imax), n, n - imax - 1);
          rowmax = max(rowmax, S_ABS1(S_LD(a, A_(jmax, imax))));
        }
        const SR aii =
            herm ? fabs(S_RE(S_LD(a, A_(imax, imax)))) : S_ABS1(S_LD(a, A_(imax, imax)));
        if (absakk >= alpha * colmax * (colmax / rowmax)) {
          kp = k;
        } else if (aii >= alpha * rowmax) {
          kp = imax;
        } else {
          kp = imax;
          kstep = 2;
        }
      }
      s_kp = kp;
      s_kstep = kstep;
      s_skip = skip;
      if (kstep == 1) {
        piv[k] = (int)(kp + 1);
      } else {
        piv[k] = (int)(-(kp + 1));
        piv[k + 1] = (int)(-(kp + 1));
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const long kp = s_kp;
    const int kstep = s_kstep;
    if (!s_skip) {
      const long kk = k + kstep - 1;
      if (kp != kk) {
        // Rows and columns kk and kp of the trailing matrix trade places (lower triangle).
        for (long t = kp + 1 + lid; t < n; t += LS) {
          const S v = S_LD(a, A_(t, kk));
          S_ST(a, A_(t, kk), S_LD(a, A_(t, kp)));
          S_ST(a, A_(t, kp), v);
        }
        for (long t = kk + 1 + lid; t < kp; t += LS) {
          const S v = S_LD(a, A_(t, kk));
          const S w = S_LD(a, A_(kp, t));
          S_ST(a, A_(t, kk), herm ? S_CONJ(w) : w);
          S_ST(a, A_(kp, t), herm ? S_CONJ(v) : v);
        }
        if (lid == 0) {
          if (herm) S_ST(a, A_(kp, kk), S_CONJ(S_LD(a, A_(kp, kk))));
          const S v = S_LD(a, A_(kk, kk));
          const S w = S_LD(a, A_(kp, kp));
          S_ST(a, A_(kk, kk), herm ? LDL_REAL_PART(w) : w);
          S_ST(a, A_(kp, kp), herm ? LDL_REAL_PART(v) : v);
          if (kstep == 2) {
            if (herm) S_ST(a, A_(k, k), LDL_REAL_PART(S_LD(a, A_(k, k))));
            const S u = S_LD(a, A_(k + 1, k));
            S_ST(a, A_(k + 1, k), S_LD(a, A_(kp, k)));
            S_ST(a, A_(kp, k), u);
          }
        }
      } else if (herm && lid == 0) {
        S_ST(a, A_(k, k), LDL_REAL_PART(S_LD(a, A_(k, k))));
        if (kstep == 2) S_ST(a, A_(k + 1, k + 1), LDL_REAL_PART(S_LD(a, A_(k + 1, k + 1))));
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      if (kstep == 1) {
        const long m = n - k - 1;
        if (herm) {
          const SR r1 = 1 / S_RE(S_LD(a, A_(k, k)));
          // her: A22 -= r1 x x^H (the diagonal stays real), then x *= r1.
          for (long e = lid; e < m * m; e += LS) {
            const long i = k + 1 + e / m, j = k + 1 + e % m;
            if (i < j) continue;
            const S t = -r1 * S_CONJ(S_LD(a, A_(j, k)));
            const S v = S_LD(a, A_(i, j)) + S_MUL(S_LD(a, A_(i, k)), t);
            S_ST(a, A_(i, j), i == j ? LDL_REAL_PART(v) : v);
          }
          barrier(CLK_GLOBAL_MEM_FENCE);
          for (long i = k + 1 + lid; i < n; i += LS) S_ST(a, A_(i, k), r1 * S_LD(a, A_(i, k)));
        } else {
          // syr: A22 -= r1 x x^T, then x *= r1, r1 = 1 / d.
          const S r1 = LDL_DIV(S_REAL(1), S_LD(a, A_(k, k)));
          for (long e = lid; e < m * m; e += LS) {
            const long i = k + 1 + e / m, j = k + 1 + e % m;
            if (i < j) continue;
            const S t = -S_MUL(r1, S_LD(a, A_(j, k)));
            S_ST(a, A_(i, j), S_LD(a, A_(i, j)) + S_MUL(S_LD(a, A_(i, k)), t));
          }
          barrier(CLK_GLOBAL_MEM_FENCE);
          for (long i = k + 1 + lid; i < n; i += LS)
            S_ST(a, A_(i, k), S_MUL(r1, S_LD(a, A_(i, k))));
        }
      } else if (k < n - 2) {
        const long m = n - k - 2;
        // The 2x2 block's inverse as LAPACK's: d (d11, -d21; -c21, d22), c21 = conj(d21) for
        // Hermitian, d21 = 1 for symmetric.
        S d21, d11, d22, d;
        if (herm) {
          const SR dd = S_ABS(S_LD(a, A_(k + 1, k)));
          const SR e11 = S_RE(S_LD(a, A_(k + 1, k + 1))) / dd, e22 = S_RE(S_LD(a, A_(k, k))) / dd;
          const SR tt = 1 / (e11 * e22 - 1);
          d11 = S_REAL(e11);
          d22 = S_REAL(e22);
          d21 = S_LD(a, A_(k + 1, k)) / dd;
          d = S_REAL(tt / dd);
        } else {
          const S r = S_LD(a, A_(k + 1, k));
          d11 = LDL_DIV(S_LD(a, A_(k + 1, k + 1)), r);
          d22 = LDL_DIV(S_LD(a, A_(k, k)), r);
          const S t = LDL_DIV(S_REAL(1), S_MUL(d11, d22) - S_REAL(1));
          d = LDL_DIV(t, r);
          d21 = S_REAL(1);
        }
        const S c21 = herm ? S_CONJ(d21) : d21;
        for (long e = lid; e < m * m; e += LS) {
          const long i = k + 2 + e / m, j = k + 2 + e % m;
          if (i < j) continue;
          const S ajk = S_LD(a, A_(j, k)), ajk1 = S_LD(a, A_(j, k + 1));
          const S wk = S_MUL(d, S_MUL(d11, ajk) - S_MUL(d21, ajk1));
          const S wkp1 = S_MUL(d, S_MUL(d22, ajk1) - S_MUL(c21, ajk));
          const S uk = herm ? S_CONJ(wk) : wk, ukp1 = herm ? S_CONJ(wkp1) : wkp1;
          const S v = S_LD(a, A_(i, j)) - S_MUL(S_LD(a, A_(i, k)), uk) -
                      S_MUL(S_LD(a, A_(i, k + 1)), ukp1);
          S_ST(a, A_(i, j), herm && i == j ? LDL_REAL_PART(v) : v);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (long j = k + 2 + lid; j < n; j += LS) {
          const S ajk = S_LD(a, A_(j, k)), ajk1 = S_LD(a, A_(j, k + 1));
          S_ST(a, A_(j, k), S_MUL(d, S_MUL(d11, ajk) - S_MUL(d21, ajk1)));
          S_ST(a, A_(j, k + 1), S_MUL(d, S_MUL(d22, ajk1) - S_MUL(c21, ajk)));
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    k += kstep;
  }
  if (lid == 0) ((__global int*)(ib + ioff))[g] = s_info;
}

// X with A X = B for A = L D L^T (L D L^H with herm) as ldl_factor leaves it, in place on x
// (batch, n, k), one work item per (column c, matrix g) (LAPACK sytrs / hetrs, uplo = 'L').
__kernel void ldl_solve(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                        __global char* xb, ulong xoff, long n, long k, int herm_arg) {
  const int herm = S_IS_COMPLEX && herm_arg;
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global const E* a = (__global const E*)(ab + aoff) + g * n * n;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  __global E* x = (__global E*)(xb + xoff) + g * n * k;
#define X_(i) ((i) * k + c)
#define SWAP_ROWS(r, s)              \
  if ((r) != (s)) {                  \
    const S sw = S_LD(x, X_(r));     \
    S_ST(x, X_(r), S_LD(x, X_(s)));  \
    S_ST(x, X_(s), sw);              \
  }
  // L D y = b.
  for (long j = 0; j < n;) {
    if (piv[j] > 0) {
      const long p = piv[j] - 1;
      SWAP_ROWS(j, p);
      const S bj = S_LD(x, X_(j));
      for (long i = j + 1; i < n; ++i)
        S_ST(x, X_(i), S_LD(x, X_(i)) - S_MUL(S_LD(a, A_(i, j)), bj));
      // times 1 / d, as LAPACK's scal
      S_ST(x, X_(j), herm ? (1 / S_RE(S_LD(a, A_(j, j)))) * bj
                          : S_MUL(bj, LDL_DIV(S_REAL(1), S_LD(a, A_(j, j)))));
      j += 1;
    } else {
      const long p = -piv[j] - 1;
      SWAP_ROWS(j + 1, p);
      const S b0 = S_LD(x, X_(j)), b1 = S_LD(x, X_(j + 1));
      for (long i = j + 2; i < n; ++i)
        S_ST(x, X_(i),
             S_LD(x, X_(i)) - S_MUL(S_LD(a, A_(i, j)), b0) - S_MUL(S_LD(a, A_(i, j + 1)), b1));
      const S akm1k = S_LD(a, A_(j + 1, j));
      const S lo = herm ? S_CONJ(akm1k) : akm1k;
      const S akm1 = LDL_DIV(S_LD(a, A_(j, j)), lo);
      const S ak = LDL_DIV(S_LD(a, A_(j + 1, j + 1)), akm1k);
      const S denom = S_MUL(akm1, ak) - S_REAL(1);
      const S bkm1 = LDL_DIV(b0, lo), bk = LDL_DIV(b1, akm1k);
      S_ST(x, X_(j), LDL_DIV(S_MUL(ak, bkm1) - bk, denom));
      S_ST(x, X_(j + 1), LDL_DIV(S_MUL(akm1, bk) - bkm1, denom));
      j += 2;
    }
  }
  // L^T x = y (L^H with herm).
  for (long j = n - 1; j >= 0;) {
    if (piv[j] > 0) {
      S s = S_LD(x, X_(j));
      for (long i = j + 1; i < n; ++i) {
        const S l = S_LD(a, A_(i, j));
        s -= S_MUL(herm ? S_CONJ(l) : l, S_LD(x, X_(i)));
      }
      S_ST(x, X_(j), s);
      const long p = piv[j] - 1;
      SWAP_ROWS(j, p);
      j -= 1;
    } else {
      S s1 = S_LD(x, X_(j)), s0 = S_LD(x, X_(j - 1));
      for (long i = j + 1; i < n; ++i) {
        const S l1 = S_LD(a, A_(i, j)), l0 = S_LD(a, A_(i, j - 1));
        s1 -= S_MUL(herm ? S_CONJ(l1) : l1, S_LD(x, X_(i)));
        s0 -= S_MUL(herm ? S_CONJ(l0) : l0, S_LD(x, X_(i)));
      }
      S_ST(x, X_(j), s1);
      S_ST(x, X_(j - 1), s0);
      const long p = -piv[j] - 1;
      SWAP_ROWS(j, p);
      j -= 2;
    }
  }
#undef SWAP_ROWS
#undef X_
}
