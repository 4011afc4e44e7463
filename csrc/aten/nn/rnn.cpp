// Fused LSTM and GRU cells (kernels/rnn.cl). PyTorch's recurrent layers on an accelerator call
// _thnn_fused_lstm_cell / _thnn_fused_gru_cell once per time step with the two gate GEMMs already
// done, and autograd calls the backward kernels below with the cells' workspaces; nn.RNN's
// tanh/relu cells are plain pointwise ops. The CPU has no such kernels, so without these the
// recurrent modules could not run at all.
#include <ATen/ATen.h>
#include <ATen/TensorUtils.h>
#include <torch/library.h>

#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kRnnFamily;

at::Tensor opt(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? *t : at::Tensor();
}

// The checks of PyTorch's CUDA cells (gate chunks of `factor` per hidden unit), plus one dtype:
// the kernels read every operand as the gates' type.
void checkCell(const char* op, const at::Tensor& igates, const at::Tensor& hgates,
               const at::Tensor& bih, const at::Tensor& bhh, int64_t factor,
               const at::Tensor& prev) {
  at::CheckedFrom c = op;
  at::TensorArg ig{igates, "input_gates", 1}, hg{hgates, "hidden_gates", 2},
      ib{bih, "input_bias", 4}, hb{bhh, "hidden_bias", 5}, ph{prev, "prev_hidden", 3};
  at::checkDim(c, ig, 2);
  at::checkSameSize(c, ig, hg);
  const int64_t gates = igates.size(1);
  TORCH_CHECK(gates % factor == 0, op, ": expected input_gates.size(1) to be a multiple of ",
              factor, ", got ", gates);
  if (bih.defined() || bhh.defined()) {
    TORCH_CHECK(bih.defined() && bhh.defined(), op,
                ": expected both input_bias and hidden_bias or neither");
    at::checkDim(c, ib, 1);
    at::checkNumel(c, ib, gates);
    at::checkSameSize(c, ib, hb);
  }
  at::checkDim(c, ph, 2);
  at::checkNumel(c, ph, igates.size(0) * gates / factor);
  checkSameDevice({igates, hgates, bih, bhh, prev});
  TORCH_CHECK(nnFloating(igates.scalar_type()), op, " not implemented for '", igates.scalar_type(),
              "'");
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&hgates, &bih, &bhh, &prev})
    TORCH_CHECK(!t->defined() || t->scalar_type() == igates.scalar_type(), op,
                ": expected all tensors to have dtype ", igates.scalar_type(), ", got ",
                t->scalar_type());
}

cl_kernel rnnKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  return programs(idx).kernel(nnProgram(idx, &kRnnFamily, "rnn.cl", like.scalar_type()), name);
}

// A (hidden, batch) range: groups of 64 hidden units of one batch row (one local size, so one
// compile on drivers that compile per local size).
void launchCells(const at::Tensor& like, cl_kernel k, int64_t B, int64_t H) {
  const c10::DeviceIndex idx = like.device().index();
  const size_t local[2] = {64, 1};
  const size_t global[2] = {static_cast<size_t>((H + 63) / 64 * 64), static_cast<size_t>(B)};
  launch2D(currentQueue(idx), k, global, local);
}

at::Tensor contig(const at::Tensor& t) {
  return t.defined() ? t.contiguous() : t;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstmCell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx_,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  const at::Tensor bih = contig(opt(input_bias)), bhh = contig(opt(hidden_bias));
  checkCell("_thnn_fused_lstm_cell", input_gates, hidden_gates, bih, bhh, 4, cx_);
  const at::Tensor ig = input_gates.contiguous(), hg = hidden_gates.contiguous(),
                   cx = cx_.contiguous();
  at::Tensor workspace = at::empty_like(ig, at::MemoryFormat::Contiguous);
  at::Tensor hy = at::empty_like(cx, at::MemoryFormat::Contiguous);
  at::Tensor cy = at::empty_like(cx, at::MemoryFormat::Contiguous);
  const int64_t n = cx.numel(), H = ig.size(1) / 4;
  if (n == 0) return {hy, cy, workspace};
  OCL_TRY
  const bool bias = bih.defined();
  cl_kernel k = rnnKernel(ig, bias ? "lstm_cell_forward" : "lstm_cell_forward_nobias");
  cl_uint i = 0;
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ig, &hg, &cx})
    setArg(k, i, bufferOf(*t));
  if (bias) {
    setArg(k, i, bufferOf(bih));
    setArg(k, i, bufferOf(bhh));
  }
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&hy, &cy, &workspace})
    setArg(k, i, bufferOf(*t));
  setArg(k, i, static_cast<cl_long>(H));
  launchCells(ig, k, ig.size(0), H);
  OCL_CATCH
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstmCellBackward(
    const std::optional<at::Tensor>& grad_hy_, const std::optional<at::Tensor>& grad_cy_,
    const at::Tensor& cx_, const at::Tensor& cy_, const at::Tensor& workspace_, bool has_bias) {
  const at::Tensor ghy = contig(opt(grad_hy_)), gcy = contig(opt(grad_cy_));
  if (!ghy.defined() && !gcy.defined()) return {};  // as CUDA: nothing flows back
  const at::Tensor cx = cx_.contiguous(), cy = cy_.contiguous(), ws = workspace_.contiguous();
  checkSameDevice({ghy, gcy, cx, cy, ws});
  at::CheckedFrom c = "_thnn_fused_lstm_cell_backward_impl";
  at::TensorArg wa{ws, "workspace", 5}, ca{cx, "cx", 3}, ya{cy, "cy", 4};
  at::checkDim(c, wa, 2);
  at::checkSameSize(c, ca, ya);
  at::checkNumel(c, ca, ws.numel() / 4);
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ghy, &gcy})
    if (t->defined())
      TORCH_CHECK(t->sizes() == cx.sizes(), c, ": gradient of size ", t->sizes(),
                  " does not match the cell state's ", cx.sizes());
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ghy, &gcy, &cy, &ws})
    TORCH_CHECK(!t->defined() || t->scalar_type() == cx.scalar_type(), c,
                ": expected all tensors to have dtype ", cx.scalar_type());
  at::Tensor grad_gates = at::empty_like(ws, at::MemoryFormat::Contiguous);
  at::Tensor grad_cx = at::empty_like(cx, at::MemoryFormat::Contiguous);
  const int64_t n = cx.numel(), H = ws.size(1) / 4;
  if (n > 0) {
    OCL_TRY
    cl_kernel k = rnnKernel(cx, "lstm_cell_backward");
    cl_uint i = 0;
    setArg(k, i, bufferOrAny(ghy, cx));
    setArg(k, i, bufferOrAny(gcy, cx));
    for (const at::Tensor* t :
         std::initializer_list<const at::Tensor*>{&cx, &cy, &ws, &grad_gates, &grad_cx})
      setArg(k, i, bufferOf(*t));
    setArg(k, i, static_cast<cl_long>(H));
    setArg(k, i, static_cast<cl_int>(ghy.defined()));
    setArg(k, i, static_cast<cl_int>(gcy.defined()));
    launchCells(cx, k, ws.size(0), H);
    OCL_CATCH
  }
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> gruCell(const at::Tensor& input_gates,
                                           const at::Tensor& hidden_gates, const at::Tensor& hx_,
                                           const std::optional<at::Tensor>& input_bias,
                                           const std::optional<at::Tensor>& hidden_bias) {
  const at::Tensor bih = contig(opt(input_bias)), bhh = contig(opt(hidden_bias));
  checkCell("_thnn_fused_gru_cell", input_gates, hidden_gates, bih, bhh, 3, hx_);
  const at::Tensor ig = input_gates.contiguous(), hg = hidden_gates.contiguous(),
                   hx = hx_.contiguous();
  const int64_t n = hx.numel(), H = ig.size(1) / 3;
  at::Tensor hy = at::empty_like(hx, at::MemoryFormat::Contiguous);
  at::Tensor workspace = at::empty({hx.size(0), 5 * H}, ig.options());
  if (n == 0) return {hy, workspace};
  OCL_TRY
  const bool bias = bih.defined();
  cl_kernel k = rnnKernel(ig, bias ? "gru_cell_forward" : "gru_cell_forward_nobias");
  cl_uint i = 0;
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ig, &hg, &hx})
    setArg(k, i, bufferOf(*t));
  if (bias) {
    setArg(k, i, bufferOf(bih));
    setArg(k, i, bufferOf(bhh));
  }
  setArg(k, i, bufferOf(hy));
  setArg(k, i, bufferOf(workspace));
  setArg(k, i, static_cast<cl_long>(H));
  launchCells(ig, k, ig.size(0), H);
  OCL_CATCH
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gruCellBackward(
    const at::Tensor& grad_hy_, const at::Tensor& workspace_, bool has_bias) {
  const at::Tensor ghy = grad_hy_.contiguous(), ws = workspace_.contiguous();
  checkSameDevice({ghy, ws});
  at::CheckedFrom c = "_thnn_fused_gru_cell_backward";
  at::TensorArg ga{ghy, "grad_hy", 1}, wa{ws, "workspace", 2};
  at::checkDim(c, ga, 2);
  at::checkDim(c, wa, 2);
  TORCH_CHECK(ws.size(0) == ghy.size(0) && ws.size(1) == 5 * ghy.size(1), c, ": workspace of size ",
              ws.sizes(), " does not match grad_hy of size ", ghy.sizes());
  TORCH_CHECK(ws.scalar_type() == ghy.scalar_type(), c, ": expected all tensors to have dtype ",
              ghy.scalar_type());
  const int64_t B = ghy.size(0), H = ghy.size(1), n = ghy.numel();
  at::Tensor gi = at::empty({B, 3 * H}, ghy.options());
  at::Tensor gh = at::empty({B, 3 * H}, ghy.options());
  at::Tensor ghx = at::empty_like(ghy, at::MemoryFormat::Contiguous);
  if (n > 0) {
    OCL_TRY
    cl_kernel k = rnnKernel(ghy, "gru_cell_backward");
    cl_uint i = 0;
    for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ghy, &ws, &gi, &gh, &ghx})
      setArg(k, i, bufferOf(*t));
    setArg(k, i, static_cast<cl_long>(H));
    launchCells(ghy, k, B, H);
    OCL_CATCH
  }
  at::Tensor gib = has_bias ? gi.sum(0) : at::Tensor();
  at::Tensor ghb = has_bias ? gh.sum(0) : at::Tensor();
  return {gi, gh, ghx, gib, ghb};
}

// The recurrent layers themselves (lstm/gru/rnn_tanh/rnn_relu.input). PyTorch's composite runs
// both gate GEMMs inside every time step on accelerators (it precomputes the input projection on
// the CPU only); here the input projection of all time steps of a layer is one GEMM, and each
// step is one hidden GEMM plus one fused cell kernel. Every op is differentiable and native, so
// autograd derives the backward; unbind/stack make the per-step gradients one op each instead of
// T full-size zero-filled select gradients. Packed sequences keep PyTorch's composite.
enum class CellKind { kLstm, kGru, kTanh, kRelu };

struct LayerParams {
  at::Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

// PyTorch's flat weight order: per layer and direction w_ih, w_hh, [b_ih, b_hh], [w_hr].
std::vector<LayerParams> layerParams(at::TensorList params, bool has_biases, bool has_proj) {
  const size_t stride = 2 + (has_biases ? 2 : 0) + (has_proj ? 1 : 0);
  TORCH_CHECK(params.size() % stride == 0, "got an incorrect number of RNN parameters");
  std::vector<LayerParams> out;
  for (size_t i = 0; i < params.size(); i += stride) {
    LayerParams p{params[i], params[i + 1]};
    if (has_biases) p.b_ih = params[i + 2], p.b_hh = params[i + 3];
    if (has_proj) p.w_hr = params[i + stride - 1];
    out.push_back(std::move(p));
  }
  return out;
}

struct State {
  at::Tensor h, c;  // c only for LSTM
};

State cellStep(CellKind kind, const at::Tensor& in_proj, const State& s, const LayerParams& p) {
  const at::Tensor hg = at::linear(s.h, p.w_hh, p.b_hh);
  switch (kind) {
    case CellKind::kLstm: {
      auto r = at::_thnn_fused_lstm_cell(in_proj, hg, s.c);
      at::Tensor hy = std::get<0>(r);
      if (p.w_hr.defined()) hy = at::linear(hy, p.w_hr);
      return {hy, std::get<1>(r)};
    }
    case CellKind::kGru:
      return {std::get<0>(at::_thnn_fused_gru_cell(in_proj, hg, s.h))};
    case CellKind::kTanh:
      return {at::tanh(at::add(hg, in_proj))};
    case CellKind::kRelu:
      return {at::relu(at::add(hg, in_proj))};
  }
  TORCH_INTERNAL_ASSERT(false);
}

// Returns (output, final h, final c) with h/c stacked over layers and directions.
std::tuple<at::Tensor, at::Tensor, at::Tensor> runLayers(CellKind kind, const at::Tensor& input_,
                                                         const at::Tensor& hx, const at::Tensor& cx,
                                                         at::TensorList params, bool has_biases,
                                                         int64_t num_layers, double dropout,
                                                         bool train, bool bidirectional,
                                                         bool batch_first) {
  const int64_t dirs = bidirectional ? 2 : 1;
  const bool has_proj = cx.defined() && hx.size(2) != cx.size(2);
  const auto lp = layerParams(params, has_biases, has_proj);
  TORCH_CHECK(static_cast<int64_t>(lp.size()) == num_layers * dirs,
              "got an incorrect number of RNN parameters");
  at::Tensor input = batch_first ? input_.transpose(0, 1) : input_;
  TORCH_CHECK(input.dim() == 3, "RNN: expected input of 3 dimensions, got ", input.dim());
  const int64_t T = input.size(0);
  TORCH_CHECK(T > 0, "Expected sequence length to be larger than 0 in RNN");
  std::vector<at::Tensor> final_h, final_c;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<at::Tensor> dir_out;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t li = layer * dirs + d;
      const LayerParams& p = lp[li];
      const auto steps = at::linear(input, p.w_ih, p.b_ih).unbind(0);
      State s{hx[li], cx.defined() ? cx[li] : at::Tensor()};
      std::vector<at::Tensor> outs(T);
      for (int64_t k = 0; k < T; ++k) {
        const int64_t t = d == 0 ? k : T - 1 - k;
        s = cellStep(kind, steps[t], s, p);
        outs[t] = s.h;
      }
      dir_out.push_back(at::stack(outs, 0));
      final_h.push_back(s.h);
      if (s.c.defined()) final_c.push_back(s.c);
    }
    input = dirs == 1 ? dir_out[0] : at::cat(dir_out, -1);
    if (dropout != 0 && train && layer + 1 < num_layers) input = at::dropout(input, dropout, train);
  }
  at::Tensor output = batch_first ? input.transpose(0, 1) : input;
  return {output, at::stack(final_h, 0), final_c.empty() ? at::Tensor() : at::stack(final_c, 0)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstmLayers(const at::Tensor& input,
                                                          at::TensorList hx, at::TensorList params,
                                                          bool has_biases, int64_t num_layers,
                                                          double dropout, bool train,
                                                          bool bidirectional, bool batch_first) {
  TORCH_CHECK(hx.size() == 2, "lstm expects two hidden states");
  return runLayers(CellKind::kLstm, input, hx[0], hx[1], params, has_biases, num_layers, dropout,
                   train, bidirectional, batch_first);
}

template <CellKind kind>
std::tuple<at::Tensor, at::Tensor> singleStateLayers(const at::Tensor& input, const at::Tensor& hx,
                                                     at::TensorList params, bool has_biases,
                                                     int64_t num_layers, double dropout, bool train,
                                                     bool bidirectional, bool batch_first) {
  auto r = runLayers(kind, input, hx, at::Tensor(), params, has_biases, num_layers, dropout, train,
                     bidirectional, batch_first);
  return {std::get<0>(r), std::get<1>(r)};
}

}  // namespace

// Both keys: AutogradPrivateUse1 replaces the composite when gradients are recorded (the ops it
// calls record them), PrivateUse1 under inference mode.
#define OCL_RNN_LAYERS(m)                                                 \
  m.impl("gru.input", TORCH_FN(singleStateLayers<CellKind::kGru>));       \
  m.impl("lstm.input", TORCH_FN(lstmLayers));                             \
  m.impl("rnn_relu.input", TORCH_FN(singleStateLayers<CellKind::kRelu>)); \
  m.impl("rnn_tanh.input", TORCH_FN(singleStateLayers<CellKind::kTanh>));

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m){OCL_RNN_LAYERS(m)}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  OCL_RNN_LAYERS(m)
  m.impl("_thnn_fused_gru_cell", TORCH_FN(gruCell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(gruCellBackward));
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(lstmCell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstmCellBackward));
}

}  // namespace torch_ocl::aten
