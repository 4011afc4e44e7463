// Fused LSTM and GRU cells (the kernels PyTorch calls once per time step on accelerators:
// _thnn_fused_lstm_cell / _thnn_fused_gru_cell and their backward), with the gate order and the
// workspace layout of PyTorch's CUDA kernels, so autograd's saved tensors mean the same thing.
// All tensors are contiguous; item (h, b) of the 2-D range covers hidden unit h of batch row b
// (no 64-bit division per item: CPU drivers vectorise across h). Arithmetic in ACC.
// Macros from nn_common: T, ACC, LD(p, i), ST(p, i, v).

// float ACC: the prelude's vectorisable exp (PoCL's exp and tanh are scalar library calls that
// made a cell step 10x slower than its loads and stores); double: the builtins.
inline ACC rnn_exp(ACC x) { return sizeof(ACC) == 4 ? (ACC)ocl_exp_float((float)x) : exp(x); }
inline ACC rnn_sigmoid(ACC x) { return (ACC)1 / ((ACC)1 + rnn_exp(-x)); }
// tanh = (1 - e) / (1 + e) with e = exp(-2|x|) for |x| >= 0.3 (at most one bit lost to the
// cancellation); below, its odd Taylor series to x^13 (remainder < 1e-9 relative). No branch.
inline ACC rnn_tanh(ACC x) {
  if (sizeof(ACC) != 4) return tanh(x);
  const ACC a = fabs(x), e = rnn_exp(-2 * a), s = x * x;
  const ACC big = copysign((1 - e) / (1 + e), x);
  ACC p = (ACC)(-21844.0 / 6081075);
  p = fma(p, s, (ACC)(929569.0 / 638512875));
  p = fma(p, s, (ACC)(-1382.0 / 155925));
  p = fma(p, s, (ACC)(62.0 / 2835));
  p = fma(p, s, (ACC)(-17.0 / 315));
  p = fma(p, s, (ACC)(2.0 / 15));
  p = fma(p, s, (ACC)(-1.0 / 3));
  const ACC small = fma(p * s, x, x);
  return a < (ACC)0.3 ? small : big;
}

#define BUF(name) __global char *name##b, ulong name##o
#define PTR(name) ((__global T*)(name##b + name##o))

// gates = input_gates + hidden_gates (+ biases), chunks i, f, g, o of H each per batch row.
// workspace keeps the activated gates (i, f, g, o); cy = f * cx + i * g; hy = o * tanh(cy).
// Straight-line code, and the bias as a compile-time choice (two kernels): loops over a private
// array and a runtime branch kept PoCL from vectorising it (3x slower).
inline void lstm_forward_item(__global const T* ig, __global const T* hg, __global const T* cx,
                              __global const T* bih, __global const T* bhh, __global T* hy,
                              __global T* cy, __global T* w, long H, const int has_bias) {
  const long h = get_global_id(0), b = get_global_id(1), e = b * H + h;
  if (h >= H) return;
  const long row = b * 4 * H;
#define GATE(k)                                               \
  (LD(ig, row + (k) * H + h) + LD(hg, row + (k) * H + h) +    \
   (has_bias ? LD(bih, (k) * H + h) + LD(bhh, (k) * H + h) : (ACC)0))
  const ACC i = rnn_sigmoid(GATE(0)), f = rnn_sigmoid(GATE(1)), c = rnn_tanh(GATE(2)),
            o = rnn_sigmoid(GATE(3));
#undef GATE
  const ACC c1 = f * LD(cx, e) + i * c;
  ST(cy, e, c1);
  ST(hy, e, o * rnn_tanh(c1));
  ST(w, row + h, i);
  ST(w, row + H + h, f);
  ST(w, row + 2 * H + h, c);
  ST(w, row + 3 * H + h, o);
}
__kernel void lstm_cell_forward(BUF(igates), BUF(hgates), BUF(cx), BUF(bih), BUF(bhh), BUF(hy),
                                BUF(cy), BUF(ws), long H) {
  lstm_forward_item(PTR(igates), PTR(hgates), PTR(cx), PTR(bih), PTR(bhh), PTR(hy), PTR(cy),
                    PTR(ws), H, 1);
}
__kernel void lstm_cell_forward_nobias(BUF(igates), BUF(hgates), BUF(cx), BUF(hy), BUF(cy),
                                       BUF(ws), long H) {
  lstm_forward_item(PTR(igates), PTR(hgates), PTR(cx), 0, 0, PTR(hy), PTR(cy), PTR(ws), H, 0);
}

// From the saved activated gates: grad_gates (pre-activation, i, f, g, o) and grad_cx. A missing
// grad_hy or grad_cy (the output was not used) counts as zeros.
__kernel void lstm_cell_backward(BUF(ghy), BUF(gcy), BUF(cx), BUF(cy), BUF(ws), BUF(ggates),
                                 BUF(gcx), long H, int has_ghy, int has_gcy) {
  const long h = get_global_id(0), b = get_global_id(1), e = b * H + h;
  if (h >= H) return;
  const long row = b * 4 * H;
  __global T* w = PTR(ws);
  const ACC i = LD(w, row + h), f = LD(w, row + H + h), c = LD(w, row + 2 * H + h),
            o = LD(w, row + 3 * H + h);
  const ACC gh = has_ghy ? LD(PTR(ghy), e) : (ACC)0;
  const ACC gc = has_gcy ? LD(PTR(gcy), e) : (ACC)0;
  const ACC t = rnn_tanh(LD(PTR(cy), e));
  const ACC go = gh * t * (1 - o) * o;
  const ACC gcs = (1 - t * t) * o * gh + gc;  // gradient reaching the new cell state
  __global T* gg = PTR(ggates);
  ST(gg, row + h, gcs * c * (1 - i) * i);
  ST(gg, row + H + h, gcs * LD(PTR(cx), e) * (1 - f) * f);
  ST(gg, row + 2 * H + h, gcs * i * (1 - c * c));
  ST(gg, row + 3 * H + h, go);
  ST(PTR(gcx), e, gcs * f);
}

// Chunks r, z, n of H each. r = s(ir + hr), z = s(iz + hz), n = tanh(in + r * hn),
// hy = n + z * (hx - n). Workspace per row: r, z, n, hx, hn (5 H), as CUDA keeps it. Bias as a
// compile-time choice, as for the LSTM.
inline void gru_forward_item(__global const T* ig, __global const T* hg, __global const T* hx,
                             __global const T* bih, __global const T* bhh, __global T* hy,
                             __global T* w, long H, const int has_bias) {
  const long h = get_global_id(0), b = get_global_id(1), e = b * H + h;
  if (h >= H) return;
  const long row = b * 3 * H, wrow = b * 5 * H;
#define IN(k) (LD(ig, row + (k) * H + h) + (has_bias ? LD(bih, (k) * H + h) : (ACC)0))
#define HID(k) (LD(hg, row + (k) * H + h) + (has_bias ? LD(bhh, (k) * H + h) : (ACC)0))
  const ACC hn = HID(2);
  const ACC r = rnn_sigmoid(IN(0) + HID(0)), z = rnn_sigmoid(IN(1) + HID(1));
  const ACC nn = rnn_tanh(IN(2) + r * hn);
#undef IN
#undef HID
  const ACC x = LD(hx, e);
  ST(hy, e, nn + z * (x - nn));
  ST(w, wrow + h, r);
  ST(w, wrow + H + h, z);
  ST(w, wrow + 2 * H + h, nn);
  ST(w, wrow + 3 * H + h, x);
  ST(w, wrow + 4 * H + h, hn);
}
__kernel void gru_cell_forward(BUF(igates), BUF(hgates), BUF(hx), BUF(bih), BUF(bhh), BUF(hy),
                               BUF(ws), long H) {
  gru_forward_item(PTR(igates), PTR(hgates), PTR(hx), PTR(bih), PTR(bhh), PTR(hy), PTR(ws), H, 1);
}
__kernel void gru_cell_forward_nobias(BUF(igates), BUF(hgates), BUF(hx), BUF(hy), BUF(ws),
                                      long H) {
  gru_forward_item(PTR(igates), PTR(hgates), PTR(hx), 0, 0, PTR(hy), PTR(ws), H, 0);
}

__kernel void gru_cell_backward(BUF(ghy), BUF(ws), BUF(gigates), BUF(ghgates), BUF(ghx),
                                long H) {
  const long h = get_global_id(0), b = get_global_id(1), e = b * H + h;
  if (h >= H) return;
  const long row = b * 3 * H, wrow = b * 5 * H;
  __global T* w = PTR(ws);
  const ACC r = LD(w, wrow + h), z = LD(w, wrow + H + h), nn = LD(w, wrow + 2 * H + h),
            x = LD(w, wrow + 3 * H + h), hn = LD(w, wrow + 4 * H + h);
  const ACC go = LD(PTR(ghy), e);
  const ACC gz = go * (x - nn) * (1 - z) * z;
  const ACC gn = go * (1 - z) * (1 - nn * nn);
  const ACC gr = gn * hn * (1 - r) * r;
  __global T* gi = PTR(gigates);
  __global T* gh = PTR(ghgates);
  ST(gi, row + h, gr);
  ST(gi, row + H + h, gz);
  ST(gi, row + 2 * H + h, gn);
  ST(gh, row + h, gr);
  ST(gh, row + H + h, gz);
  ST(gh, row + 2 * H + h, gn * r);
  ST(PTR(ghx), e, go * z);
}
