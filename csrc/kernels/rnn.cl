// Fused LSTM and GRU cells (the kernels PyTorch calls once per time step on accelerators:
// _thnn_fused_lstm_cell / _thnn_fused_gru_cell and their backward), with the gate order and the
// workspace layout of PyTorch's CUDA kernels, so autograd's saved tensors mean the same thing.
// All tensors are contiguous; item e covers batch row e / H, hidden unit e % H. Arithmetic in ACC.
// Macros from nn_common: T, ACC, LD(p, i), ST(p, i, v).

inline ACC rnn_sigmoid(ACC x) { return (ACC)1 / ((ACC)1 + exp(-x)); }

#define BUF(name) __global char *name##b, ulong name##o
#define PTR(name) ((__global T*)(name##b + name##o))

// gates = input_gates + hidden_gates (+ biases), chunks i, f, g, o of H each per batch row.
// workspace keeps the activated gates (i, f, g, o); cy = f * cx + i * g; hy = o * tanh(cy).
__kernel void lstm_cell_forward(BUF(igates), BUF(hgates), BUF(cx), BUF(bih), BUF(bhh), BUF(hy),
                                BUF(cy), BUF(ws), long n, long H, int has_bias) {
  const long e = get_global_id(0);
  if (e >= n) return;
  const long b = e / H, h = e - b * H, row = b * 4 * H;
  __global T* ig = PTR(igates);
  __global T* hg = PTR(hgates);
  ACC g[4];
  for (int k = 0; k < 4; ++k) {
    const long j = k * H + h;
    g[k] = LD(ig, row + j) + LD(hg, row + j);
    if (has_bias) g[k] += LD(PTR(bih), j) + LD(PTR(bhh), j);
  }
  const ACC i = rnn_sigmoid(g[0]), f = rnn_sigmoid(g[1]), c = tanh(g[2]), o = rnn_sigmoid(g[3]);
  const ACC c1 = f * LD(PTR(cx), e) + i * c;
  ST(PTR(cy), e, c1);
  ST(PTR(hy), e, o * tanh(c1));
  __global T* w = PTR(ws);
  ST(w, row + h, i);
  ST(w, row + H + h, f);
  ST(w, row + 2 * H + h, c);
  ST(w, row + 3 * H + h, o);
}

// From the saved activated gates: grad_gates (pre-activation, i, f, g, o) and grad_cx. A missing
// grad_hy or grad_cy (the output was not used) counts as zeros.
__kernel void lstm_cell_backward(BUF(ghy), BUF(gcy), BUF(cx), BUF(cy), BUF(ws), BUF(ggates),
                                 BUF(gcx), long n, long H, int has_ghy, int has_gcy) {
  const long e = get_global_id(0);
  if (e >= n) return;
  const long b = e / H, h = e - b * H, row = b * 4 * H;
  __global T* w = PTR(ws);
  const ACC i = LD(w, row + h), f = LD(w, row + H + h), c = LD(w, row + 2 * H + h),
            o = LD(w, row + 3 * H + h);
  const ACC gh = has_ghy ? LD(PTR(ghy), e) : (ACC)0;
  const ACC gc = has_gcy ? LD(PTR(gcy), e) : (ACC)0;
  const ACC t = tanh(LD(PTR(cy), e));
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
// hy = n + z * (hx - n). Workspace per row: r, z, n, hx, hn (5 H), as CUDA keeps it.
__kernel void gru_cell_forward(BUF(igates), BUF(hgates), BUF(hx), BUF(bih), BUF(bhh), BUF(hy),
                               BUF(ws), long n, long H, int has_bias) {
  const long e = get_global_id(0);
  if (e >= n) return;
  const long b = e / H, h = e - b * H, row = b * 3 * H;
  __global T* ig = PTR(igates);
  __global T* hg = PTR(hgates);
  ACC xg[3], hd[3];
  for (int k = 0; k < 3; ++k) {
    const long j = k * H + h;
    xg[k] = LD(ig, row + j);
    hd[k] = LD(hg, row + j);
    if (has_bias) {
      xg[k] += LD(PTR(bih), j);
      hd[k] += LD(PTR(bhh), j);
    }
  }
  const ACC r = rnn_sigmoid(xg[0] + hd[0]), z = rnn_sigmoid(xg[1] + hd[1]);
  const ACC nn = tanh(xg[2] + r * hd[2]);
  const ACC x = LD(PTR(hx), e);
  ST(PTR(hy), e, nn + z * (x - nn));
  __global T* w = PTR(ws);
  const long wrow = b * 5 * H;
  ST(w, wrow + h, r);
  ST(w, wrow + H + h, z);
  ST(w, wrow + 2 * H + h, nn);
  ST(w, wrow + 3 * H + h, x);
  ST(w, wrow + 4 * H + h, hd[2]);
}

__kernel void gru_cell_backward(BUF(ghy), BUF(ws), BUF(gigates), BUF(ghgates), BUF(ghx), long n,
                                long H) {
  const long e = get_global_id(0);
  if (e >= n) return;
  const long b = e / H, h = e - b * H, row = b * 3 * H, wrow = b * 5 * H;
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
