// segment_reduce and its backward over contiguous (outer, len, inner) data with int64 offsets
// (outer, nseg + 1), one work item per (outer, segment, inner) output element. Arithmetic as
// CPU's kernel does it: sequential over the segment, rounded to the storage type after each step
// (RND: identity for float/double). Macros from nn_common: T, ACC, LD, ST; RND from the host.
// reduce: 0 max, 1 mean, 2 min, 3 sum, 4 prod (at::native::ReductionType).

__kernel void segment_reduce_fwd(__global char* ob, ulong ooff, __global const char* db, ulong doff,
                                 __global const char* fb, ulong foff, long outer, long nseg,
                                 long len, long inner, int reduce, int has_init, ACC init) {
  const long gid = get_global_id(0);
  if (gid >= outer * nseg * inner) return;
  const long in = gid % inner, s = (gid / inner) % nseg, o = gid / (inner * nseg);
  __global T* out = (__global T*)(ob + ooff);
  __global const T* data = (__global const T*)(db + doff) + o * len * inner + in;
  __global const long* off = (__global const long*)(fb + foff) + o * (nseg + 1);
  // Clamped to the data: unsafe offsets past the end read nothing outside the buffer.
  const long start = clamp(off[s], 0L, len), end = clamp(off[s + 1], start, len);
  ACC v = has_init ? init
          : reduce == 0 ? (ACC)(-INFINITY)
          : reduce == 2 ? (ACC)INFINITY
          : reduce == 4 ? (ACC)1
                        : (ACC)0;
  for (long j = start; j < end; ++j) {
    const ACC d = LD(data, j * inner);
    if (reduce == 0)
      v = isnan(d) ? d : (v < d ? d : v);
    else if (reduce == 2)
      v = isnan(d) ? d : (d < v ? d : v);
    else if (reduce == 4)
      v = RND(v * d);
    else
      v = RND(v + d);
  }
  // An empty segment's mean is NaN, or the initial value when there is one.
  if (reduce == 1 && end > start) v = RND(v / (ACC)(end - start));
  if (reduce == 1 && end == start && !has_init) v = (ACC)NAN;
  ST(out, gid, v);
}

// grad_input (outer, len, inner), zero on entry: each segment's share of grad.
__kernel void segment_reduce_bwd(__global char* gib, ulong gioff, __global const char* gb,
                                 ulong goff, __global const char* ob, ulong ooff,
                                 __global const char* db, ulong doff, __global const char* fb,
                                 ulong foff, long outer, long nseg, long len, long inner,
                                 int reduce, int has_init, ACC init) {
  const long gid = get_global_id(0);
  if (gid >= outer * nseg * inner) return;
  const long in = gid % inner, s = (gid / inner) % nseg, o = gid / (inner * nseg);
  __global T* gi = (__global T*)(gib + gioff) + o * len * inner + in;
  __global const T* data = (__global const T*)(db + doff) + o * len * inner + in;
  __global const long* off = (__global const long*)(fb + foff) + o * (nseg + 1);
  // Clamped to the data: unsafe offsets past the end read nothing outside the buffer.
  const long start = clamp(off[s], 0L, len), end = clamp(off[s + 1], start, len);
  const ACC g = LD((__global const T*)(gb + goff), gid);
  const ACC out = LD((__global const T*)(ob + ooff), gid);
  if (reduce == 3) {
    for (long j = start; j < end; ++j) ST(gi, j * inner, g);
  } else if (reduce == 1) {
    if (end > start) {
      const ACC share = RND(g / (ACC)(end - start));
      for (long j = start; j < end; ++j) ST(gi, j * inner, share);
    }
  } else if (reduce == 0 || reduce == 2) {
    // The elements equal to the result (or NaN) share grad; CPU divides only the positive shares.
    long count = 0;
    for (long j = start; j < end; ++j) {
      const ACC d = LD(data, j * inner);
      if (isnan(d) || d == out) {
        ST(gi, j * inner, g);
        ++count;
      }
    }
    if (count >= 2)
      for (long j = start; j < end; ++j) {
        const ACC v = LD(gi, j * inner);
        if (v > 0) ST(gi, j * inner, RND(v / (ACC)count));
      }
  } else {
    const ACC gv = RND(g * out);
    for (long j = start; j < end; ++j) {
      const ACC d = LD(data, j * inner);
      if (isnan(d) || d == 0) {
        ACC excl = has_init ? init : (ACC)1;
        for (long t = start; t < end; ++t)
          if (t != j) excl = RND(excl * LD(data, t * inner));
        ST(gi, j * inner, RND(g * excl));
      } else {
        ST(gi, j * inner, RND(gv / d));
      }
    }
  }
}
