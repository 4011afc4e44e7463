// LDL^T with Bunch-Kaufman pivoting (LAPACK sytf2, uplo = 'L') and its solve (sytrs), on
// contiguous row-major (batch, n, n) matrices of which only the lower triangle is read. Unblocked,
// for batches of small matrices. Macros from nn_common: T, ACC, LD, ST.
#define LS 256  // kRowLocal: launchRowGroups' work-group size

// The element (i, j), i >= j, of the lower triangle of the n x n matrix a.
#define A_(i, j) ((i) * n + (j))

// The first index of the largest |x| over count elements x[first + t * stride] (BLAS i?amax).
long iamax(__global const T* a, long first, long stride, long count) {
  long best = 0;
  ACC v = -1;
  for (long t = 0; t < count; ++t) {
    const ACC x = fabs(LD(a, first + t * stride));
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
                         __global char* ib, ulong ioff, long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global T* a = (__global T*)(ab + aoff) + g * n * n;
  __global int* piv = (__global int*)(pb + poff) + g * n;
  __local long s_kp;
  __local int s_kstep, s_skip, s_info;
  if (lid == 0) s_info = 0;
  const ACC alpha = (ACC)((1 + sqrt(17.0)) / 8);
  long k = 0;
  while (k < n) {
    if (lid == 0) {
      int kstep = 1, skip = 0;
      long kp = k, imax = k;
      const ACC absakk = fabs(LD(a, A_(k, k)));
      ACC colmax = 0;
      if (k < n - 1) {
        imax = k + 1 + iamax(a, A_(k + 1, k), n, n - k - 1);
        colmax = fabs(LD(a, A_(imax, k)));
      }
      if (max(absakk, colmax) == 0 || isnan(absakk)) {
        if (s_info == 0) s_info = (int)(k + 1);
        skip = 1;
      } else if (absakk < alpha * colmax) {
        // The largest off-diagonal |a| in row/column imax of the trailing matrix.
        long jmax = k + iamax(a, A_(imax, k), 1, imax - k);
        ACC rowmax = fabs(LD(a, A_(imax, jmax)));
        if (imax < n - 1) {
          jmax = imax + 1 + iamax(a, A_(imax + 1, imax), n, n - imax - 1);
          rowmax = max(rowmax, fabs(LD(a, A_(jmax, imax))));
        }
        if (absakk >= alpha * colmax * (colmax / rowmax)) {
          kp = k;
        } else if (fabs(LD(a, A_(imax, imax))) >= alpha * rowmax) {
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
          const ACC v = LD(a, A_(t, kk));
          ST(a, A_(t, kk), LD(a, A_(t, kp)));
          ST(a, A_(t, kp), v);
        }
        for (long t = kk + 1 + lid; t < kp; t += LS) {
          const ACC v = LD(a, A_(t, kk));
          ST(a, A_(t, kk), LD(a, A_(kp, t)));
          ST(a, A_(kp, t), v);
        }
        if (lid == 0) {
          const ACC v = LD(a, A_(kk, kk));
          ST(a, A_(kk, kk), LD(a, A_(kp, kp)));
          ST(a, A_(kp, kp), v);
          if (kstep == 2) {
            const ACC w = LD(a, A_(k + 1, k));
            ST(a, A_(k + 1, k), LD(a, A_(kp, k)));
            ST(a, A_(kp, k), w);
          }
        }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      if (kstep == 1) {
        const long m = n - k - 1;
        const ACC d11 = 1 / LD(a, A_(k, k));
        // A22 -= d11 x x^T (syr), then x *= d11.
        for (long e = lid; e < m * m; e += LS) {
          const long i = k + 1 + e / m, j = k + 1 + e % m;
          if (i < j) continue;
          const ACC t = -d11 * LD(a, A_(j, k));
          ST(a, A_(i, j), LD(a, A_(i, j)) + LD(a, A_(i, k)) * t);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (long i = k + 1 + lid; i < n; i += LS) ST(a, A_(i, k), d11 * LD(a, A_(i, k)));
      } else if (k < n - 2) {
        const long m = n - k - 2;
        const ACC d21r = LD(a, A_(k + 1, k));
        const ACC d11 = LD(a, A_(k + 1, k + 1)) / d21r;
        const ACC d22 = LD(a, A_(k, k)) / d21r;
        const ACC d21 = (1 / (d11 * d22 - 1)) / d21r;
        for (long e = lid; e < m * m; e += LS) {
          const long i = k + 2 + e / m, j = k + 2 + e % m;
          if (i < j) continue;
          const ACC wk = d21 * (d11 * LD(a, A_(j, k)) - LD(a, A_(j, k + 1)));
          const ACC wkp1 = d21 * (d22 * LD(a, A_(j, k + 1)) - LD(a, A_(j, k)));
          ST(a, A_(i, j), LD(a, A_(i, j)) - LD(a, A_(i, k)) * wk - LD(a, A_(i, k + 1)) * wkp1);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (long j = k + 2 + lid; j < n; j += LS) {
          const ACC ajk = LD(a, A_(j, k)), ajk1 = LD(a, A_(j, k + 1));
          ST(a, A_(j, k), d21 * (d11 * ajk - ajk1));
          ST(a, A_(j, k + 1), d21 * (d22 * ajk1 - ajk));
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    k += kstep;
  }
  if (lid == 0) ((__global int*)(ib + ioff))[g] = s_info;
}

// X with A X = B for A = L D L^T as ldl_factor leaves it, in place on x (batch, n, k), one work
// item per (column c, matrix g) (LAPACK sytrs, uplo = 'L').
__kernel void ldl_solve(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                        __global char* xb, ulong xoff, long n, long k) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global const T* a = (__global const T*)(ab + aoff) + g * n * n;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  __global T* x = (__global T*)(xb + xoff) + g * n * k;
#define X_(i) x[(i) * k + c]
#define SWAP_ROWS(r, s)               \
  if ((r) != (s)) {                   \
    const T sw = X_(r);               \
    X_(r) = X_(s);                    \
    X_(s) = sw;                       \
  }
  // L D y = b.
  for (long j = 0; j < n;) {
    if (piv[j] > 0) {
      const long p = piv[j] - 1;
      SWAP_ROWS(j, p);
      const ACC bj = LD(x, j * k + c);
      for (long i = j + 1; i < n; ++i) ST(x, i * k + c, LD(x, i * k + c) - LD(a, A_(i, j)) * bj);
      ST(x, j * k + c, bj * (1 / LD(a, A_(j, j))));
      j += 1;
    } else {
      const long p = -piv[j] - 1;
      SWAP_ROWS(j + 1, p);
      const ACC b0 = LD(x, j * k + c), b1 = LD(x, (j + 1) * k + c);
      for (long i = j + 2; i < n; ++i)
        ST(x, i * k + c, LD(x, i * k + c) - LD(a, A_(i, j)) * b0 - LD(a, A_(i, j + 1)) * b1);
      const ACC akm1k = LD(a, A_(j + 1, j));
      const ACC akm1 = LD(a, A_(j, j)) / akm1k, ak = LD(a, A_(j + 1, j + 1)) / akm1k;
      const ACC denom = akm1 * ak - 1;
      const ACC bkm1 = b0 / akm1k, bk = b1 / akm1k;
      ST(x, j * k + c, (ak * bkm1 - bk) / denom);
      ST(x, (j + 1) * k + c, (akm1 * bk - bkm1) / denom);
      j += 2;
    }
  }
  // L^T x = y.
  for (long j = n - 1; j >= 0;) {
    if (piv[j] > 0) {
      ACC s = LD(x, j * k + c);
      for (long i = j + 1; i < n; ++i) s -= LD(a, A_(i, j)) * LD(x, i * k + c);
      ST(x, j * k + c, s);
      const long p = piv[j] - 1;
      SWAP_ROWS(j, p);
      j -= 1;
    } else {
      ACC s1 = LD(x, j * k + c), s0 = LD(x, (j - 1) * k + c);
      for (long i = j + 1; i < n; ++i) {
        s1 -= LD(a, A_(i, j)) * LD(x, i * k + c);
        s0 -= LD(a, A_(i, j - 1)) * LD(x, i * k + c);
      }
      ST(x, j * k + c, s1);
      ST(x, (j - 1) * k + c, s0);
      const long p = -piv[j] - 1;
      SWAP_ROWS(j, p);
      j -= 2;
    }
  }
#undef SWAP_ROWS
#undef X_
}
