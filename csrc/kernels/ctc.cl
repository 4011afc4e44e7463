// CTC loss (Graves et al. 2006) in log space, as CPU's LossCTC computes it. One work group per
// batch element walks the time steps (a barrier between them); its items share the 2L+1 states
// of the extended target (blank, l1, blank, l2, ..., blank). log_probs (TT, N, C) has element
// strides (st, sn, sc); log_alpha and log_beta are contiguous (N, T, S2) with S2 = 2*maxL + 1.
// Targets are int64, the batch element's at tg + tg_off[b].

#define LP(t, c) ((ACC)lp[(t) * st + (c) * sc])

static ACC lse3(ACC a, ACC b, ACC c) {
  ACC m = fmax(a, fmax(b, c));
  if (m == -INFINITY) m = 0;
  return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

__kernel void ctc_alpha(__global char* lab, ulong laoff, __global char* nllb, ulong nlloff,
                        __global const char* lpb, ulong lpoff, __global const char* tgb,
                        ulong tgoff, __global const char* ob, ulong ooff, __global const char* ilb,
                        ulong iloff, __global const char* tlb, ulong tloff, long TT, long S2,
                        long st, long sn, long sc, long blank) {
  const long b = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
  const long Tb = ((__global const long*)(ilb + iloff))[b];
  const long L = ((__global const long*)(tlb + tloff))[b];
  __global const long* tg =
      (__global const long*)(tgb + tgoff) + ((__global const long*)(ob + ooff))[b];
  __global const T* lp = (__global const T*)(lpb + lpoff) + b * sn;
  __global T* la = (__global T*)(lab + laoff) + b * TT * S2;
  const long Sb = 2 * L + 1;
  for (long s = lid; TT > 0 && s < S2; s += ls) {
    ACC v = -INFINITY;
    if (Tb > 0 && s == 0) v = LP(0, blank);
    if (Tb > 0 && s == 1 && L > 0) v = LP(0, tg[0]);
    la[s] = v;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long t = 1; t < Tb; ++t) {
    __global const T* prev = la + (t - 1) * S2;
    for (long s = lid; s < S2; s += ls) {
      ACC v = -INFINITY;
      if (s < Sb) {
        const long lbl = (s & 1) ? tg[s / 2] : blank;
        const ACC a1 = prev[s], a2 = s > 0 ? (ACC)prev[s - 1] : -INFINITY;
        const ACC a3 = ((s & 1) && s > 1 && tg[s / 2] != tg[s / 2 - 1]) ? (ACC)prev[s - 2]
                                                                         : -INFINITY;
        v = lse3(a1, a2, a3) + LP(t, lbl);
      }
      la[t * S2 + s] = v;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  for (long i = max(Tb, 1L) * S2 + lid; i < TT * S2; i += ls) la[i] = -INFINITY;
  if (lid == 0) {
    ACC ll;
    if (Tb == 0) {
      ll = L == 0 ? 0 : -INFINITY;
    } else {
      __global const T* last = la + (Tb - 1) * S2;
      ll = L > 0 ? lse3(last[2 * L], last[2 * L - 1], -INFINITY) : (ACC)last[0];
    }
    ((__global T*)(nllb + nlloff))[b] = -ll;
  }
}

__kernel void ctc_beta(__global char* lbb, ulong lboff, __global const char* lpb, ulong lpoff,
                       __global const char* tgb, ulong tgoff, __global const char* ob, ulong ooff,
                       __global const char* ilb, ulong iloff, __global const char* tlb,
                       ulong tloff, long TT, long S2, long st, long sn, long sc, long blank) {
  const long b = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
  const long Tb = ((__global const long*)(ilb + iloff))[b];
  const long L = ((__global const long*)(tlb + tloff))[b];
  __global const long* tg =
      (__global const long*)(tgb + tgoff) + ((__global const long*)(ob + ooff))[b];
  __global const T* lp = (__global const T*)(lpb + lpoff) + b * sn;
  __global T* lb = (__global T*)(lbb + lboff) + b * TT * S2;
  const long Sb = 2 * L + 1;
  if (Tb == 0) return;
  for (long s = lid; s < S2; s += ls) {
    ACC v = -INFINITY;
    if (s == 2 * L) v = LP(Tb - 1, blank);
    if (L > 0 && s == 2 * L - 1) v = LP(Tb - 1, tg[L - 1]);
    lb[(Tb - 1) * S2 + s] = v;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long t = Tb - 2; t >= 0; --t) {
    __global const T* next = lb + (t + 1) * S2;
    for (long s = lid; s < S2; s += ls) {
      ACC v = -INFINITY;
      if (s < Sb) {
        const long lbl = (s & 1) ? tg[s / 2] : blank;
        const ACC b1 = next[s], b2 = s < 2 * L ? (ACC)next[s + 1] : -INFINITY;
        const ACC b3 = ((s & 1) && s < 2 * L - 1 && tg[s / 2] != tg[s / 2 + 1])
                           ? (ACC)next[s + 2]
                           : -INFINITY;
        v = lse3(b1, b2, b3) + LP(t, lbl);
      }
      lb[t * S2 + s] = v;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

// One work item per (t, b): the gradient row grad[t][b][:] (contiguous (T, N, C)).
__kernel void ctc_grad(__global char* gb, ulong goff, __global const char* lab, ulong laoff,
                       __global const char* lbb, ulong lboff, __global const char* lpb,
                       ulong lpoff, __global const char* tgb, ulong tgoff, __global const char* ob,
                       ulong ooff, __global const char* ilb, ulong iloff, __global const char* tlb,
                       ulong tloff, __global const char* nllb, ulong nlloff,
                       __global const char* gob, ulong gooff, long TT, long N, long C, long S2,
                       long st, long sn, long sc, long blank, int zero_infinity) {
  const long gid = get_global_id(0);
  if (gid >= TT * N) return;
  const long t = gid / N, b = gid % N;
  __global T* g = (__global T*)(gb + goff) + (t * N + b) * C;
  const long Tb = ((__global const long*)(ilb + iloff))[b];
  const long L = ((__global const long*)(tlb + tloff))[b];
  const ACC nll = ((__global const T*)(nllb + nlloff))[b];
  if (t >= Tb || (zero_infinity && nll == INFINITY)) {
    for (long c = 0; c < C; ++c) g[c] = 0;
    return;
  }
  __global const long* tg =
      (__global const long*)(tgb + tgoff) + ((__global const long*)(ob + ooff))[b];
  __global const T* lp = (__global const T*)(lpb + lpoff) + b * sn;
  __global const T* la = (__global const T*)(lab + laoff) + (b * TT + t) * S2;
  __global const T* lb = (__global const T*)(lbb + lboff) + (b * TT + t) * S2;
  for (long c = 0; c < C; ++c) g[c] = -INFINITY;
  for (long s = 0; s < 2 * L + 1; ++s) {
    const long lbl = (s & 1) ? tg[s / 2] : blank;
    const ACC ab = (ACC)la[s] + (ACC)lb[s];
    const ACC cur = g[lbl];
    if (cur == -INFINITY) {
      g[lbl] = ab;
    } else {
      const ACC m = fmax(cur, ab);
      g[lbl] = log(exp(cur - m) + exp(ab - m)) + m;
    }
  }
  const ACC gr = ((__global const T*)(gob + gooff))[b];
  for (long c = 0; c < C; ++c) {
    const ACC lpv = LP(t, c);
    g[c] = (exp(lpv) - exp((ACC)g[c] + nll - lpv)) * gr;
  }
}
