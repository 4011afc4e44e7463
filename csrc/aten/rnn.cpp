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
  TORCH_CHECK(nnFloating(igates.scalar_type()), op, " not implemented for '",
              igates.scalar_type(), "'");
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&hgates, &bih, &bhh, &prev})
    TORCH_CHECK(!t->defined() || t->scalar_type() == igates.scalar_type(), op,
                ": expected all tensors to have dtype ", igates.scalar_type(), ", got ",
                t->scalar_type());
}

cl_kernel rnnKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  return programs(idx).kernel(nnProgram(idx, &kRnnFamily, "rnn.cl", like.scalar_type()), name);
}

void launchCells(const at::Tensor& like, cl_kernel k, int64_t n) {
  const c10::DeviceIndex idx = like.device().index();
  launch1D(device(idx), currentQueue(idx), k, n);
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
  cl_kernel k = rnnKernel(ig, "lstm_cell_forward");
  cl_uint i = 0;
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ig, &hg, &cx}) setArg(k, i, bufferOf(*t));
  setArg(k, i, bufferOrAny(bih, ig));
  setArg(k, i, bufferOrAny(bhh, ig));
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&hy, &cy, &workspace}) setArg(k, i, bufferOf(*t));
  setArg(k, i, static_cast<cl_long>(n));
  setArg(k, i, static_cast<cl_long>(H));
  setArg(k, i, static_cast<cl_int>(bih.defined()));
  launchCells(ig, k, n);
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
    if (t->defined()) TORCH_CHECK(t->sizes() == cx.sizes(), c, ": gradient of size ", t->sizes(),
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
    for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&cx, &cy, &ws, &grad_gates, &grad_cx}) setArg(k, i, bufferOf(*t));
    setArg(k, i, static_cast<cl_long>(n));
    setArg(k, i, static_cast<cl_long>(H));
    setArg(k, i, static_cast<cl_int>(ghy.defined()));
    setArg(k, i, static_cast<cl_int>(gcy.defined()));
    launchCells(cx, k, n);
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
  cl_kernel k = rnnKernel(ig, "gru_cell_forward");
  cl_uint i = 0;
  for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ig, &hg, &hx}) setArg(k, i, bufferOf(*t));
  setArg(k, i, bufferOrAny(bih, ig));
  setArg(k, i, bufferOrAny(bhh, ig));
  setArg(k, i, bufferOf(hy));
  setArg(k, i, bufferOf(workspace));
  setArg(k, i, static_cast<cl_long>(n));
  setArg(k, i, static_cast<cl_long>(H));
  setArg(k, i, static_cast<cl_int>(bih.defined()));
  launchCells(ig, k, n);
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
  TORCH_CHECK(ws.size(0) == ghy.size(0) && ws.size(1) == 5 * ghy.size(1), c,
              ": workspace of size ", ws.sizes(), " does not match grad_hy of size ",
              ghy.sizes());
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
    for (const at::Tensor* t : std::initializer_list<const at::Tensor*>{&ghy, &ws, &gi, &gh, &ghx}) setArg(k, i, bufferOf(*t));
    setArg(k, i, static_cast<cl_long>(n));
    setArg(k, i, static_cast<cl_long>(H));
    launchCells(ghy, k, n);
    OCL_CATCH
  }
  at::Tensor gib = has_bias ? gi.sum(0) : at::Tensor();
  at::Tensor ghb = has_bias ? gh.sum(0) : at::Tensor();
  return {gi, gh, ghx, gib, ghb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_gru_cell", TORCH_FN(gruCell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(gruCellBackward));
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(lstmCell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(lstmCellBackward));
}

}  // namespace torch_ocl::aten
