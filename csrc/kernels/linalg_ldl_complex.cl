// The complex forms of linalg_ldl.cl: LAPACK's zsytf2/zsytrs (symmetric, herm = 0) and
// zhetf2/zhetrs (Hermitian, herm = 1), uplo = 'L', over CT (float2 / double2) and its real type
// CR with kernels/complex.cl's helpers, which the host places before this text. Pivots are
// chosen on |re| + |im| (izamax / cabs1) as LAPACK's are; a Hermitian diagonal is real.
#define LS 256
#define A_(i, j) ((i) * n + (j))

inline CR cabs1(CT a) { return fabs(a.x) + fabs(a.y); }
inline CT creal_(CT a) { return (CT)(a.x, 0); }
// LAPACK's (Fortran's) complex division: a zero divisor gives NaN, as on CPU.
inline CT ldl_cdiv(CT a, CT b) {
  return (b.x == 0 && b.y == 0) ? (CT)(NAN, NAN) : ocl_cdiv(a, b);
}

long iamax_c(__global const CT* a, long first, long stride, long count) {
  long best = 0;
  CR v = -1;
  for (long t = 0; t < count; ++t) {
    const CR x = cabs1(a[first + t * stride]);
    if (x > v) {
      v = x;
      best = t;
    }
  }
  return best;
}

__kernel void ldl_factor(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                         __global char* ib, ulong ioff, long n, int herm) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global CT* a = (__global CT*)(ab + aoff) + g * n * n;
  __global int* piv = (__global int*)(pb + poff) + g * n;
  __local long s_kp;
  __local int s_kstep, s_skip, s_info;
  if (lid == 0) s_info = 0;
  const CR alpha = (CR)((1 + sqrt(17.0)) / 8);
  long k = 0;
  while (k < n) {
    if (lid == 0) {
      int kstep = 1, skip = 0;
      long kp = k, imax = k;
      const CR absakk = herm ? fabs(a[A_(k, k)].x) : cabs1(a[A_(k, k)]);
      CR colmax = 0;
      if (k < n - 1) {
        imax = k + 1 + iamax_c(a, A_(k + 1, k), n, n - k - 1);
        colmax = cabs1(a[A_(imax, k)]);
      }
      if (max(absakk, colmax) == 0 || isnan(absakk)) {
        if (s_info == 0) s_info = (int)(k + 1);
        skip = 1;
        if (herm) a[A_(k, k)] = creal_(a[A_(k, k)]);
      } else if (absakk < alpha * colmax) {
        long jmax = k + iamax_c(a, A_(imax, k), 1, imax - k);
        CR rowmax = cabs1(a[A_(imax, jmax)]);
        if (imax < n - 1) {
          jmax = imax + 1 + iamax_c(a, A_(imax + 1, imax), n, n - imax - 1);
          rowmax = max(rowmax, cabs1(a[A_(jmax, imax)]));
        }
        const CR aii = herm ? fabs(a[A_(imax, imax)].x) : cabs1(a[A_(imax, imax)]);
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
        for (long t = kp + 1 + lid; t < n; t += LS) {
          const CT v = a[A_(t, kk)];
          a[A_(t, kk)] = a[A_(t, kp)];
          a[A_(t, kp)] = v;
        }
        for (long t = kk + 1 + lid; t < kp; t += LS) {
          const CT v = a[A_(t, kk)];
          a[A_(t, kk)] = herm ? ocl_cconj(a[A_(kp, t)]) : a[A_(kp, t)];
          a[A_(kp, t)] = herm ? ocl_cconj(v) : v;
        }
        if (lid == 0) {
          if (herm) a[A_(kp, kk)] = ocl_cconj(a[A_(kp, kk)]);
          const CT v = a[A_(kk, kk)];
          a[A_(kk, kk)] = herm ? creal_(a[A_(kp, kp)]) : a[A_(kp, kp)];
          a[A_(kp, kp)] = herm ? creal_(v) : v;
          if (kstep == 2) {
            if (herm) a[A_(k, k)] = creal_(a[A_(k, k)]);
            const CT w = a[A_(k + 1, k)];
            a[A_(k + 1, k)] = a[A_(kp, k)];
            a[A_(kp, k)] = w;
          }
        }
      } else if (herm && lid == 0) {
        a[A_(k, k)] = creal_(a[A_(k, k)]);
        if (kstep == 2) a[A_(k + 1, k + 1)] = creal_(a[A_(k + 1, k + 1)]);
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
      if (kstep == 1) {
        const long m = n - k - 1;
        if (herm) {
          const CR r1 = 1 / a[A_(k, k)].x;
          // zher: A22 -= r1 x x^H (the diagonal stays real), then x *= r1.
          for (long e = lid; e < m * m; e += LS) {
            const long i = k + 1 + e / m, j = k + 1 + e % m;
            if (i < j) continue;
            const CT t = -r1 * ocl_cconj(a[A_(j, k)]);
            CT v = a[A_(i, j)] + ocl_cmul(a[A_(i, k)], t);
            if (i == j) v.y = 0;
            a[A_(i, j)] = v;
          }
          barrier(CLK_GLOBAL_MEM_FENCE);
          for (long i = k + 1 + lid; i < n; i += LS) a[A_(i, k)] = r1 * a[A_(i, k)];
        } else {
          const CT r1 = ldl_cdiv((CT)(1, 0), a[A_(k, k)]);
          for (long e = lid; e < m * m; e += LS) {
            const long i = k + 1 + e / m, j = k + 1 + e % m;
            if (i < j) continue;
            const CT t = -ocl_cmul(r1, a[A_(j, k)]);
            a[A_(i, j)] = a[A_(i, j)] + ocl_cmul(a[A_(i, k)], t);
          }
          barrier(CLK_GLOBAL_MEM_FENCE);
          for (long i = k + 1 + lid; i < n; i += LS) a[A_(i, k)] = ocl_cmul(r1, a[A_(i, k)]);
        }
      } else if (k < n - 2) {
        const long m = n - k - 2;
        CT d21, d11, d22, d;
        if (herm) {
          const CR dd = hypot(a[A_(k + 1, k)].x, a[A_(k + 1, k)].y);
          const CR e11 = a[A_(k + 1, k + 1)].x / dd, e22 = a[A_(k, k)].x / dd;
          const CR tt = 1 / (e11 * e22 - 1);
          d11 = (CT)(e11, 0);
          d22 = (CT)(e22, 0);
          d21 = a[A_(k + 1, k)] / dd;
          d = (CT)(tt / dd, 0);
        } else {
          const CT r = a[A_(k + 1, k)];
          d11 = ldl_cdiv(a[A_(k + 1, k + 1)], r);
          d22 = ldl_cdiv(a[A_(k, k)], r);
          const CT t = ldl_cdiv((CT)(1, 0), ocl_cmul(d11, d22) - (CT)(1, 0));
          d = ldl_cdiv(t, r);
          d21 = (CT)(1, 0);
        }
        for (long e = lid; e < m * m; e += LS) {
          const long i = k + 2 + e / m, j = k + 2 + e % m;
          if (i < j) continue;
          const CT ajk = a[A_(j, k)], ajk1 = a[A_(j, k + 1)];
          const CT c21 = herm ? ocl_cconj(d21) : d21;
          const CT wk = ocl_cmul(d, ocl_cmul(d11, ajk) - ocl_cmul(d21, ajk1));
          const CT wkp1 = ocl_cmul(d, ocl_cmul(d22, ajk1) - ocl_cmul(c21, ajk));
          const CT uk = herm ? ocl_cconj(wk) : wk, ukp1 = herm ? ocl_cconj(wkp1) : wkp1;
          CT v = a[A_(i, j)] - ocl_cmul(a[A_(i, k)], uk) - ocl_cmul(a[A_(i, k + 1)], ukp1);
          if (herm && i == j) v.y = 0;
          a[A_(i, j)] = v;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (long j = k + 2 + lid; j < n; j += LS) {
          const CT ajk = a[A_(j, k)], ajk1 = a[A_(j, k + 1)];
          const CT c21 = herm ? ocl_cconj(d21) : d21;
          a[A_(j, k)] = ocl_cmul(d, ocl_cmul(d11, ajk) - ocl_cmul(d21, ajk1));
          a[A_(j, k + 1)] = ocl_cmul(d, ocl_cmul(d22, ajk1) - ocl_cmul(c21, ajk));
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    k += kstep;
  }
  if (lid == 0) ((__global int*)(ib + ioff))[g] = s_info;
}

__kernel void ldl_solve(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                        __global char* xb, ulong xoff, long n, long k, int herm) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global const CT* a = (__global const CT*)(ab + aoff) + g * n * n;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  __global CT* x = (__global CT*)(xb + xoff) + g * n * k;
#define X_(i) x[(i) * k + c]
#define SWAP_ROWS(r, s)   \
  if ((r) != (s)) {       \
    const CT sw = X_(r);  \
    X_(r) = X_(s);        \
    X_(s) = sw;           \
  }
  for (long j = 0; j < n;) {
    if (piv[j] > 0) {
      const long p = piv[j] - 1;
      SWAP_ROWS(j, p);
      const CT bj = X_(j);
      for (long i = j + 1; i < n; ++i) X_(i) -= ocl_cmul(a[A_(i, j)], bj);
      X_(j) = herm ? (1 / a[A_(j, j)].x) * bj : ldl_cdiv(bj, a[A_(j, j)]);
      j += 1;
    } else {
      const long p = -piv[j] - 1;
      SWAP_ROWS(j + 1, p);
      const CT b0 = X_(j), b1 = X_(j + 1);
      for (long i = j + 2; i < n; ++i)
        X_(i) -= ocl_cmul(a[A_(i, j)], b0) + ocl_cmul(a[A_(i, j + 1)], b1);
      const CT akm1k = a[A_(j + 1, j)];
      const CT lo = herm ? ocl_cconj(akm1k) : akm1k;
      const CT akm1 = ldl_cdiv(a[A_(j, j)], lo), ak = ldl_cdiv(a[A_(j + 1, j + 1)], akm1k);
      const CT denom = ocl_cmul(akm1, ak) - (CT)(1, 0);
      const CT bkm1 = ldl_cdiv(b0, lo), bk = ldl_cdiv(b1, akm1k);
      X_(j) = ldl_cdiv(ocl_cmul(ak, bkm1) - bk, denom);
      X_(j + 1) = ldl_cdiv(ocl_cmul(akm1, bk) - bkm1, denom);
      j += 2;
    }
  }
  for (long j = n - 1; j >= 0;) {
    if (piv[j] > 0) {
      CT s = X_(j);
      for (long i = j + 1; i < n; ++i)
        s -= ocl_cmul(herm ? ocl_cconj(a[A_(i, j)]) : a[A_(i, j)], X_(i));
      X_(j) = s;
      const long p = piv[j] - 1;
      SWAP_ROWS(j, p);
      j -= 1;
    } else {
      CT s1 = X_(j), s0 = X_(j - 1);
      for (long i = j + 1; i < n; ++i) {
        s1 -= ocl_cmul(herm ? ocl_cconj(a[A_(i, j)]) : a[A_(i, j)], X_(i));
        s0 -= ocl_cmul(herm ? ocl_cconj(a[A_(i, j - 1)]) : a[A_(i, j - 1)], X_(i));
      }
      X_(j) = s1;
      X_(j - 1) = s0;
      const long p = -piv[j] - 1;
      SWAP_ROWS(j, p);
      j -= 2;
    }
  }
#undef SWAP_ROWS
#undef X_
}
