// nll_loss over contiguous (N, C) log-probabilities and N class indices. An out-of-range target
// sets *err (read back by the host, which raises the error); T is float or double.

inline bool nll_target_ok(long t, long C, long ignore, __global int* err) {
  if (t == ignore) return false;
  if (t < 0 || t >= C) {
    *err = 1;
    return false;
  }
  return true;
}

// reduction='none': one work item per sample.
__kernel void nll_fwd_none(__global char* ob, ulong ooff, __global const char* lb, ulong loff,
                           __global const char* tb, ulong toff, __global const char* wb,
                           ulong woff, int has_w, long N, long C, long ignore,
                           __global char* eb, ulong eoff) {
  const long n = get_global_id(0);
  if (n >= N) return;
  __global T* out = (__global T*)(ob + ooff);
  const long t = ((__global const long*)(tb + toff))[n];
  __global int* err = (__global int*)(eb + eoff);
  if (!nll_target_ok(t, C, ignore, err)) {
    out[n] = 0;
    return;
  }
  const T w = has_w ? ((__global const T*)(wb + woff))[t] : (T)1;
  out[n] = -w * ((__global const T*)(lb + loff))[n * C + t];
}

// reduction='sum' or 'mean': a single work item, so the sum has a fixed order (deterministic).
__kernel void nll_fwd_reduce(__global char* ob, ulong ooff, __global char* twb, ulong twoff,
                             __global const char* lb, ulong loff, __global const char* tb,
                             ulong toff, __global const char* wb, ulong woff, int has_w, long N,
                             long C, long ignore, int mean, __global char* eb, ulong eoff) {
  if (get_global_id(0) != 0) return;
  __global const T* lp = (__global const T*)(lb + loff);
  __global const long* tg = (__global const long*)(tb + toff);
  __global int* err = (__global int*)(eb + eoff);
  ACC total = 0, tw = 0;
  for (long n = 0; n < N; ++n) {
    const long t = tg[n];
    if (!nll_target_ok(t, C, ignore, err)) continue;
    const ACC w = has_w ? (ACC)((__global const T*)(wb + woff))[t] : (ACC)1;
    total -= w * (ACC)lp[n * C + t];
    tw += w;
  }
  *(__global T*)(ob + ooff) = (T)(mean ? total / tw : total);
  *(__global T*)(twb + twoff) = (T)tw;
}

// grad_input must be zero on entry; reduction: 0 none, 1 mean, 2 sum.
__kernel void nll_bwd(__global char* gib, ulong gioff, __global const char* gob, ulong gooff,
                      __global const char* tb, ulong toff, __global const char* wb, ulong woff,
                      int has_w, __global const char* twb, ulong twoff, long N, long C,
                      long ignore, int reduction) {
  const long n = get_global_id(0);
  if (n >= N) return;
  const long t = ((__global const long*)(tb + toff))[n];
  if (t == ignore || t < 0 || t >= C) return;
  __global const T* go = (__global const T*)(gob + gooff);
  T g = reduction == 0 ? go[n] : go[0];
  if (reduction == 1) g = g / *(__global const T*)(twb + twoff);
  const T w = has_w ? ((__global const T*)(wb + woff))[t] : (T)1;
  ((__global T*)(gib + gioff))[n * C + t] = -w * g;
}
