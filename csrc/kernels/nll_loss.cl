// nll_loss / nll_loss2d over contiguous (N, C, inner) log-probabilities and (N, inner) class
// indices (inner = 1 for (N, C) and (C) inputs, H*W for nll_loss2d). An out-of-range target is
// written to the device's error record (ocl_checked_index, device_check.cpp; `op` names
// nll_loss or nll_loss2d), raised by the host at its next synchronisation point: the forward
// never waits for the device. The host defines ST (storage type), ACC (accumulation type),
// LD(p, i) and STORE(p, i, v) and prepends the device-check source.

inline bool nll_target_ok(long t, long C, long ignore, __global int* rec, int op) {
  if (t == ignore) return false;
  return ocl_checked_index(t, C, 0, rec, op, 1) >= 0;
}

// reduction='none': one work item per (sample, position).
__kernel void nll_fwd_none(__global char* ob, ulong ooff, __global const char* lb, ulong loff,
                           __global const char* tb, ulong toff, __global const char* wb,
                           ulong woff, int has_w, long N, long C, long inner, long ignore,
                           __global int* rec, int op) {
  const long gid = get_global_id(0);
  if (gid >= N * inner) return;
  const long n = gid / inner, s = gid % inner;
  __global ST* out = (__global ST*)(ob + ooff);
  __global const ST* lp = (__global const ST*)(lb + loff);
  __global const ST* w = (__global const ST*)(wb + woff);
  const long t = ((__global const long*)(tb + toff))[gid];
  if (!nll_target_ok(t, C, ignore, rec, op)) {
    STORE(out, gid, (ACC)0);
    return;
  }
  const ACC wt = has_w ? LD(w, t) : (ACC)1;
  STORE(out, gid, -wt * LD(lp, (n * C + t) * inner + s));
}

// reduction='sum' or 'mean': a single work item, so the sum has a fixed order (deterministic).
__kernel void nll_fwd_reduce(__global char* ob, ulong ooff, __global char* twb, ulong twoff,
                             __global const char* lb, ulong loff, __global const char* tb,
                             ulong toff, __global const char* wb, ulong woff, int has_w, long N,
                             long C, long inner, long ignore, int mean, __global int* rec,
                             int op) {
  if (get_global_id(0) != 0) return;
  __global const ST* lp = (__global const ST*)(lb + loff);
  __global const ST* w = (__global const ST*)(wb + woff);
  __global const long* tg = (__global const long*)(tb + toff);
  ACC total = 0, tw = 0;
  for (long gid = 0; gid < N * inner; ++gid) {
    const long t = tg[gid];
    if (!nll_target_ok(t, C, ignore, rec, op)) continue;
    const long n = gid / inner, s = gid % inner;
    const ACC wt = has_w ? LD(w, t) : (ACC)1;
    total -= wt * LD(lp, (n * C + t) * inner + s);
    tw += wt;
  }
  __global ST* out = (__global ST*)(ob + ooff);
  __global ST* twp = (__global ST*)(twb + twoff);
  STORE(out, 0, mean ? total / tw : total);
  STORE(twp, 0, tw);
}

// The backward kernels' arguments, and the gradient of the entry of target t at sample
// position ti; reduction: 0 none, 1 mean, 2 sum.
#define NLL_BWD_PARAMS                                                                          \
  __global char *gib, ulong gioff, __global const char *gob, ulong gooff,                       \
      __global const char *tb, ulong toff, __global const char *wb, ulong woff, int has_w,      \
      __global const char *twb, ulong twoff, long N, long C, long inner, long ignore,           \
      int reduction
#define NLL_BWD_VALUE(ti, t)                                                                     \
  (-(has_w ? LD((__global const ST*)(wb + woff), t) : (ACC)1) *                                 \
   (reduction == 0   ? LD((__global const ST*)(gob + gooff), ti)                                \
    : reduction == 1 ? LD((__global const ST*)(gob + gooff), 0) /                               \
                           LD((__global const ST*)(twb + twoff), 0)                             \
                     : LD((__global const ST*)(gob + gooff), 0)))

// nll_bwd_dense for inner == 1 on CPU drivers: a row per work item (its C zeros, then the
// target's entry; per element the dense kernel divided its index by C in 64 bits).
__kernel void nll_bwd_rows(NLL_BWD_PARAMS) {
  const long n = get_global_id(0);
  if (n >= N) return;
  __global ST* gi = (__global ST*)(gib + gioff) + n * C;
  for (long c = 0; c < C; ++c) STORE(gi, c, (ACC)0);
  const long t = ((__global const long*)(tb + toff))[n];
  if (t == ignore || t < 0 || t >= C) return;  // (the forward reported a target out of range)
  STORE(gi, t, NLL_BWD_VALUE(n, t));
}

// grad_input: every element written, one work item each (the target's entry gets its gradient,
// the others zero), so the host needs no zero fill before it.
__kernel void nll_bwd_dense(NLL_BWD_PARAMS) {
  const long gid = get_global_id(0);
  if (gid >= N * C * inner) return;
  const long s = inner == 1 ? 0 : gid % inner;
  const long nc = inner == 1 ? gid : gid / inner;
  const long n = nc / C, c = nc - n * C;
  const long ti = n * inner + s;
  const long t = ((__global const long*)(tb + toff))[ti];
  const ACC v = c == t && t != ignore ? NLL_BWD_VALUE(ti, t) : (ACC)0;
  __global ST* gi = (__global ST*)(gib + gioff);
  STORE(gi, gid, v);
}
