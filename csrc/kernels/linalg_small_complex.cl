// The complex forms of linalg_small.cl's kernels (same arguments, same launch shapes), over CT
// (float2 / double2) and its real type CR, with kernels/complex.cl's ocl_c* helpers, which the
// host places before this text. Cholesky is A = L L^H; LU pivots on |re| + |im| as LAPACK's
// izamax does, so the pivots are CPU's.
#define LS 256  // kRowLocal: launchRowGroups' work-group size

inline CR ocl_cabs1(CT a) { return fabs(a.x) + fabs(a.y); }

__kernel void cholesky_lower(__global char* ab, ulong aoff, __global char* ib, ulong ioff,
                             long n) {
  __global int* info = (__global int*)(ib + ioff);
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  __global CT* a = (__global CT*)(ab + aoff) + g * n * n;
  __local int failed;
  if (lid == 0) failed = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long j = 0; j < n && !failed; ++j) {
    if (lid == 0) {
      CR s = a[j * n + j].x;  // the diagonal of a Hermitian matrix is real
      for (long k = 0; k < j; ++k) {
        const CT l = a[j * n + k];
        s -= l.x * l.x + l.y * l.y;
      }
      if (!(s > 0)) {
        info[g] = (int)(j + 1);
        failed = 1;
      } else {
        a[j * n + j] = (CT)(sqrt(s), 0);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (failed) break;
    const CR d = a[j * n + j].x;
    for (long i = j + 1 + lid; i < n; i += LS) {
      CT s = a[i * n + j];
      for (long k = 0; k < j; ++k) s -= ocl_cmul(a[i * n + k], ocl_cconj(a[j * n + k]));
      a[i * n + j] = s / d;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0 && !failed) info[g] = 0;
}

__kernel void triangular_solve(__global char* ab, ulong aoff, __global char* xb, ulong xoff,
                               long n, long k, int upper, int unit) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global const CT* a = (__global const CT*)(ab + aoff) + g * n * n;
  __global CT* x = (__global CT*)(xb + xoff) + g * n * k;
  for (long s = 0; s < n; ++s) {
    const long i = upper ? n - 1 - s : s;
    CT v = x[i * k + c];
    if (upper) {
      for (long j = i + 1; j < n; ++j) v -= ocl_cmul(a[i * n + j], x[j * k + c]);
    } else {
      for (long j = 0; j < i; ++j) v -= ocl_cmul(a[i * n + j], x[j * k + c]);
    }
    x[i * k + c] = unit ? v : ocl_cdiv(v, a[i * n + i]);
  }
}

__kernel void lu_factor(__global char* ab, ulong aoff, __global char* pb, ulong poff,
                        __global char* ib, ulong ioff, long m, long n) {
  const long g = get_group_id(0);
  const int lid = get_local_id(0);
  const long kmin = min(m, n);
  __global CT* a = (__global CT*)(ab + aoff) + g * m * n;
  __global int* piv = (__global int*)(pb + poff) + g * kmin;
  __local long prow;
  __local int first_zero;
  if (lid == 0) first_zero = 0;
  for (long j = 0; j < kmin; ++j) {
    if (lid == 0) {
      long p = j;
      CR best = ocl_cabs1(a[j * n + j]);
      for (long i = j + 1; i < m; ++i) {
        const CR v = ocl_cabs1(a[i * n + j]);
        if (v > best) {
          best = v;
          p = i;
        }
      }
      piv[j] = (int)(p + 1);
      prow = p;
      if (best == 0 && first_zero == 0) first_zero = (int)(j + 1);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const long p = prow;
    if (p != j)
      for (long c = lid; c < n; c += LS) {
        const CT t = a[j * n + c];
        a[j * n + c] = a[p * n + c];
        a[p * n + c] = t;
      }
    barrier(CLK_GLOBAL_MEM_FENCE);
    const CT d = a[j * n + j];
    if (d.x != 0 || d.y != 0)
      for (long i = j + 1 + lid; i < m; i += LS) a[i * n + j] = ocl_cdiv(a[i * n + j], d);
    barrier(CLK_GLOBAL_MEM_FENCE);
    const long mr = m - j - 1, nc = n - j - 1;
    for (long e = lid; e < mr * nc; e += LS) {
      const long i = j + 1 + e / nc, c = j + 1 + e % nc;
      a[i * n + c] -= ocl_cmul(a[i * n + j], a[j * n + c]);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0) ((__global int*)(ib + ioff))[g] = first_zero;
}

__kernel void lu_permute(__global char* xb, ulong xoff, __global char* pb, ulong poff, long n,
                         long k, int reverse) {
  const long c = get_global_id(0), g = get_global_id(1);
  if (c >= k) return;
  __global CT* x = (__global CT*)(xb + xoff) + g * n * k;
  __global const int* piv = (__global const int*)(pb + poff) + g * n;
  for (long s = 0; s < n; ++s) {
    const long j = reverse ? n - 1 - s : s, p = piv[j] - 1;
    if (p == j) continue;
    const CT t = x[j * k + c];
    x[j * k + c] = x[p * k + c];
    x[p * k + c] = t;
  }
}
