// Batch, layer and group normalisation, forward and backward, and batch_norm_update_stats, for
// float/double/half/bfloat16 (statistics and sums accumulate in float for half/bfloat16). Inputs
// are made contiguous (channels_last batch-norm inputs are copied once, as several CUDA paths do).
// Statistics come from one work group per row (fixed order: results do not depend on timing);
// weights and biases travel as ACC-typed copies, which also covers float parameters with half
// inputs.
#include <ATen/ATen.h>
#include <ATen/native/layer_norm.h>
#include <torch/library.h>

#include <limits>

#include "aten/fallback.h"
#include "aten/nn_common.h"
#include "aten/vector_macros.h"
#include "codegen/reduce.h"

namespace torch_ocl::aten {
namespace {

char kNormFamily;

// Row r holds elements r*B + a*SA + i (a < A, i < B); see norm.cl.
struct Rows {
  int64_t rows, A, SA, B;
};
// Element e uses index (e / div) % mod.
struct Index {
  int64_t div, mod;
};

cl_kernel normKernel(const at::Tensor& x, const char* name) {
  const c10::DeviceIndex idx = x.device().index();
  const c10::ScalarType t = x.scalar_type(), acc = nnAccType(t);
  const std::string vec =
      vectorTypeMacros(acc) + vectorAccessMacros("T", t, acc) + vectorAccessMacros("ACC", acc, acc);
  return programs(idx).kernel(nnProgram(idx, &kNormFamily, "norm.cl", t, vec), name);
}

// CPU drivers (PoCL) get the *_v kernels of norm.cl: a whole row per work item in vector types.
bool cpuDriver(c10::DeviceIndex idx) {
  return codegen::preferItemReductions(device(idx).info());
}

// n work items, each a whole row: small groups keep both cores busy when there are few rows.
void launchItems(c10::DeviceIndex idx, cl_kernel k, int64_t n) {
  if (n <= 0) return;
  const size_t local = n >= 1024 ? 16 : 1;
  launchND(device(idx), currentQueue(idx), k, (static_cast<size_t>(n) + local - 1) / local * local,
           local);
}

void setAcc(cl_kernel k, cl_uint& i, c10::ScalarType t, double v) {
  if (t == c10::kDouble)
    setArg(k, i, static_cast<cl_double>(v));
  else
    setArg(k, i, static_cast<cl_float>(v));
}

at::Tensor accOf(const at::Tensor& t, c10::ScalarType acc) {
  return t.defined() ? t.to(acc).contiguous() : t;
}

// Parameter dtype as CPU PyTorch reports it: float for half/bfloat16 inputs with float params.
c10::ScalarType paramType(const at::Tensor& x, std::initializer_list<at::Tensor> params) {
  const auto t = x.scalar_type();
  if (t != c10::kHalf && t != c10::kBFloat16) return t;
  for (const auto& p : params)
    if (p.defined() && p.scalar_type() == c10::kFloat) return c10::kFloat;
  return t;
}

at::Tensor opt(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? *t : at::Tensor();
}

// (3, rows) ACC: mean, rstd, biased variance. With y defined (layer norm rows: A == 1, w and b
// ACC arrays of B or undefined) CPU drivers also write y = xhat * w + b from the same kernel
// and set *applied.
at::Tensor moments(const at::Tensor& x, const Rows& g, double eps, const at::Tensor& y = {},
                   const at::Tensor& w = {}, const at::Tensor& b = {}, bool* applied = nullptr) {
  const auto acc = nnAccType(x.scalar_type());
  at::Tensor st = at::empty({3, g.rows}, x.options().dtype(acc));
  if (g.rows == 0) return st;
  const c10::DeviceIndex idx = x.device().index();
  const bool cpu = cpuDriver(idx);
  const bool write_y = cpu && y.defined() && g.A == 1;
  OCL_TRY
  cl_kernel k = normKernel(x, cpu ? "row_moments_v" : "row_moments");
  cl_uint i = 0;
  setArg(k, i, bufferOrAny(x, st));
  setArg(k, i, bufferOf(st));
  setArg(k, i, static_cast<cl_long>(g.rows));
  setArg(k, i, static_cast<cl_long>(g.A));
  setArg(k, i, static_cast<cl_long>(g.SA));
  setArg(k, i, static_cast<cl_long>(g.B));
  setAcc(k, i, acc, eps);
  if (cpu) {
    setArg(k, i, write_y ? bufferOrAny(y, st) : bufferOf(st));
    setArg(k, i, bufferOrAny(w, st));
    setArg(k, i, bufferOrAny(b, st));
    setArg(k, i, static_cast<cl_int>(write_y));
    setArg(k, i, static_cast<cl_int>(w.defined()));
    setArg(k, i, static_cast<cl_int>(b.defined()));
    launchItems(idx, k, g.rows);
  } else {
    launchRowGroups(idx, k, g.rows);
  }
  OCL_CATCH
  if (applied) *applied = write_y;
  return st;
}

// Whether the *_runv kernels apply (CPU drivers): the statistics s, and the per-channel
// parameters c where there are any, are constant along whole runs of s.div >= 64 elements (batch
// norm's H * W), one run per work item in vectors with no division per element.
bool vectorRuns(const at::Tensor& x, Index s, Index c, bool has_params) {
  return codegen::preferItemReductions(device(x.device().index()).info()) && s.div >= 64 &&
         x.numel() % s.div == 0 && (!has_params || (c.div == s.div && c.mod == s.mod));
}

void apply(const at::Tensor& y, const at::Tensor& x, const at::Tensor& mean, const at::Tensor& rstd,
           const at::Tensor& w, const at::Tensor& b, Index s, Index c) {
  if (x.numel() == 0) return;
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  // CPU drivers: a run per item in vectors (vectorRuns), else 64 elements per item
  // (norm_apply_runs); GPUs: one item per element.
  const bool runs = codegen::preferItemReductions(device(idx).info());
  const bool runv = vectorRuns(x, s, c, w.defined() || b.defined());
  cl_kernel k = normKernel(x, runv ? "norm_apply_runv" : runs ? "norm_apply_runs" : "norm_apply");
  cl_uint i = 0;
  setArg(k, i, bufferOf(y));
  setArg(k, i, bufferOf(x));
  setArg(k, i, bufferOf(mean));
  setArg(k, i, bufferOf(rstd));
  setArg(k, i, bufferOrAny(w, x));
  setArg(k, i, bufferOrAny(b, x));
  for (int64_t v : {x.numel(), s.div, s.mod, c.div, c.mod}) setArg(k, i, static_cast<cl_long>(v));
  setArg(k, i, static_cast<cl_int>(w.defined()));
  setArg(k, i, static_cast<cl_int>(b.defined()));
  if (runv) {
    launchND(device(idx), currentQueue(idx), k, static_cast<size_t>(x.numel() / s.div), 1);
  } else {
    launch1D(device(idx), currentQueue(idx), k, runs ? (x.numel() + 63) / 64 : x.numel());
  }
  OCL_CATCH
}

// (2, rows) ACC: sum(go * w), sum(go * w * xhat) per row.
at::Tensor gradSums(const at::Tensor& go, const at::Tensor& x, const at::Tensor& mean,
                    const at::Tensor& rstd, const at::Tensor& w, const Rows& g, Index c) {
  at::Tensor out = at::empty({2, g.rows}, mean.options());
  if (g.rows == 0) return out;
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  // CPU drivers, no weight: a row per work item in vectors (row_grad_sums_v; the work-group tree
  // strides its row for PoCL to vectorise across items: batch norm's 64 channels of 32 x 56 x
  // 56 took 7.7 ms)
  const bool vec = !w.defined() && codegen::preferItemReductions(device(idx).info());
  cl_kernel k = normKernel(x, vec ? "row_grad_sums_v" : "row_grad_sums");
  cl_uint i = 0;
  setArg(k, i, bufferOrAny(go, out));
  setArg(k, i, bufferOrAny(x, out));
  setArg(k, i, bufferOf(mean));
  setArg(k, i, bufferOf(rstd));
  if (!vec) setArg(k, i, bufferOrAny(w, out));
  setArg(k, i, bufferOf(out));
  for (int64_t v : {g.rows, g.A, g.SA, g.B}) setArg(k, i, static_cast<cl_long>(v));
  if (vec) {
    launchND(device(idx), currentQueue(idx), k, static_cast<size_t>(g.rows), 1);
    return out;
  }
  for (int64_t v : {c.div, c.mod}) setArg(k, i, static_cast<cl_long>(v));
  setArg(k, i, static_cast<cl_int>(w.defined()));
  launchRowGroups(idx, k, g.rows);
  OCL_CATCH
  return out;
}

void backwardApply(const at::Tensor& gi, const at::Tensor& go, const at::Tensor& x,
                   const at::Tensor& mean, const at::Tensor& rstd, const at::Tensor& sums,
                   const at::Tensor& w, Index s, Index c, bool w_pre, bool train, int64_t m) {
  if (x.numel() == 0) return;
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  // CPU drivers: a run per item in vectors (vectorRuns: norm_backward_runv).
  const bool runv = vectorRuns(x, s, c, w.defined());
  cl_kernel k = normKernel(x, runv ? "norm_backward_runv" : "norm_backward");
  cl_uint i = 0;
  setArg(k, i, bufferOf(gi));
  setArg(k, i, bufferOf(go));
  setArg(k, i, bufferOf(x));
  setArg(k, i, bufferOf(mean));
  setArg(k, i, bufferOf(rstd));
  setArg(k, i, bufferOrAny(sums, mean));
  setArg(k, i, bufferOrAny(w, mean));
  for (int64_t v : {x.numel(), s.div, s.mod, c.div, c.mod}) setArg(k, i, static_cast<cl_long>(v));
  setArg(k, i, static_cast<cl_int>(w.defined() && w_pre));
  setArg(k, i, static_cast<cl_int>(w.defined() && !w_pre));
  setArg(k, i, static_cast<cl_int>(train));
  setAcc(k, i, mean.scalar_type(), 1.0 / static_cast<double>(m));
  if (runv) {
    launchND(device(idx), currentQueue(idx), k, static_cast<size_t>(x.numel() / s.div), 1);
  } else {
    launch1D(device(idx), currentQueue(idx), k, x.numel());
  }
  OCL_CATCH
}

// Weight and bias gradients (ACC, J each); see param_grads in norm.cl.
std::pair<at::Tensor, at::Tensor> paramGrads(const at::Tensor& go, const at::Tensor& x,
                                             const at::Tensor& mean, const at::Tensor& rstd,
                                             int64_t J, int64_t A, int64_t SA, int64_t SJ,
                                             int64_t B, Index s) {
  at::Tensor gw = at::empty({J}, mean.options()), gb = at::empty({J}, mean.options());
  if (J == 0) return {gw, gb};
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel k = normKernel(x, "param_grads");
  cl_uint i = 0;
  setArg(k, i, bufferOf(gw));
  setArg(k, i, bufferOf(gb));
  setArg(k, i, bufferOrAny(go, gw));
  setArg(k, i, bufferOrAny(x, gw));
  setArg(k, i, bufferOrAny(mean, gw));
  setArg(k, i, bufferOrAny(rstd, gw));
  for (int64_t v : {J, A, SA, SJ, B, s.div, s.mod}) setArg(k, i, static_cast<cl_long>(v));
  launch1D(device(idx), currentQueue(idx), k, J);
  OCL_CATCH
  return {gw, gb};
}

// Layer-norm (centered) or RMS-norm backward of rows of m contiguous elements on CPU drivers,
// one pass over go and x (ln_backward_chunk_v): gi when defined, and (want_p) the column sums
// of go * xhat and go, returned as (gw, gb) ACC tensors of m.
std::pair<at::Tensor, at::Tensor> rowBackwardFusedCpu(const at::Tensor& gi, const at::Tensor& go,
                                                      const at::Tensor& x, const at::Tensor& mean,
                                                      const at::Tensor& rstd, const at::Tensor& w,
                                                      int64_t rows, int64_t m, bool centered,
                                                      bool want_p) {
  const c10::DeviceIndex idx = x.device().index();
  const auto opts = rstd.options();
  at::Tensor gw = at::empty({m}, opts), gb = at::empty({m}, opts);
  if (rows == 0 || m == 0) {
    gw.zero_();
    gb.zero_();
    return {gw, gb};
  }
  // About 128 chunks: enough items for the cores, partials small against the input.
  const int64_t per = std::max<int64_t>(1, (rows + 127) / 128);
  const int64_t chunks = (rows + per - 1) / per;
  at::Tensor pw, pb;
  if (want_p) pw = at::empty({chunks, m}, opts), pb = at::empty({chunks, m}, opts);
  OCL_TRY
  cl_kernel k = normKernel(x, "ln_backward_chunk_v");
  cl_uint i = 0;
  setArg(k, i, bufferOrAny(gi, rstd));
  setArg(k, i, bufferOf(go));
  setArg(k, i, bufferOf(x));
  setArg(k, i, bufferOrAny(mean, rstd));
  setArg(k, i, bufferOf(rstd));
  setArg(k, i, bufferOrAny(w, rstd));
  setArg(k, i, bufferOrAny(pw, rstd));
  setArg(k, i, bufferOrAny(pb, rstd));
  for (int64_t v : {rows, m, per}) setArg(k, i, static_cast<cl_long>(v));
  setArg(k, i, static_cast<cl_int>(w.defined()));
  setArg(k, i, static_cast<cl_int>(centered));
  setArg(k, i, static_cast<cl_int>(gi.defined()));
  setArg(k, i, static_cast<cl_int>(want_p));
  launchItems(idx, k, chunks);
  if (want_p) {
    const int64_t vw = rstd.scalar_type() == c10::kDouble ? 8 : 16;
    cl_kernel f = normKernel(x, "ln_param_sums_v");
    i = 0;
    for (const at::Tensor* t : {&gw, &gb, &pw, &pb}) setArg(f, i, bufferOf(*t));
    setArg(f, i, static_cast<cl_long>(chunks));
    setArg(f, i, static_cast<cl_long>(m));
    launchItems(idx, f, (m + vw - 1) / vw);
  }
  OCL_CATCH
  return {gw, gb};
}

// ---- batch norm ----

struct BnShape {
  int64_t n, c, hw;
};
BnShape bnShape(const at::Tensor& x) {
  BnShape s{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) s.hw *= x.size(d);
  return s;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batchNorm(const at::Tensor& input,
                                                         const at::Tensor& weight,
                                                         const at::Tensor& bias,
                                                         const at::Tensor& running_mean,
                                                         const at::Tensor& running_var, bool train,
                                                         double momentum, double eps) {
  checkSameDevice({input, weight, bias, running_mean, running_var});
  TORCH_CHECK(input.dim() >= 2, "batch_norm: expected an input with at least 2 dimensions");
  TORCH_CHECK(train || (running_mean.defined() && running_var.defined()),
              "running_mean and running_var must be defined in evaluation mode");
  const at::Tensor x = input.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const BnShape sh = bnShape(x);
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  // save_mean and save_invstd follow PyTorch's convention for non-CPU devices (CUDA's
  // batch_norm_cuda, and the meta function that fake tensors and torch.compile trace with):
  // always (C,) in the accumulation dtype (float for half/bfloat16); in evaluation mode a copy
  // of running_mean and 1 / sqrt(running_var + eps). (CPU instead returns the parameters' dtype
  // and, in evaluation mode, empty tensors.)
  at::Tensor mean, rstd, save_mean, save_invstd;
  if (train) {
    const at::Tensor st = moments(x, {sh.c, sh.n, sh.c * sh.hw, sh.hw}, eps);
    mean = st[0], rstd = st[1];
    const int64_t m = sh.n * sh.hw;
    if (running_mean.defined())
      running_mean.mul_(1 - momentum).add_(mean.to(running_mean.scalar_type()), momentum);
    if (running_var.defined()) {
      const at::Tensor unbiased = st[2] * (static_cast<double>(m) / static_cast<double>(m - 1));
      running_var.mul_(1 - momentum).add_(unbiased.to(running_var.scalar_type()), momentum);
    }
    save_mean = mean, save_invstd = rstd;
  } else {
    // A copy: accOf() returns running_mean itself when it is contiguous ACC already.
    mean = running_mean.to(acc, /*non_blocking=*/false, /*copy=*/true).contiguous();
    rstd = (accOf(running_var, acc) + eps).rsqrt();
    save_mean = mean, save_invstd = rstd;
  }
  apply(out, x, mean, rstd, accOf(weight, acc), accOf(bias, acc), {sh.hw, sh.c}, {sh.hw, sh.c});
  // In the input's suggested memory format, as CPU and the meta function return it
  // (channels_last stays channels_last).
  return {out.contiguous(input.suggest_memory_format()), save_mean, save_invstd};
}

// batch_norm_update_stats (SyncBatchNorm-style code): the batch mean and biased variance per
// channel, and the running statistics updated with the unbiased variance, as CPU's
// batch_norm_cpu_update_stats_template (Var transform). Outputs in the parameters' dtype (float
// for half/bfloat16 inputs with float running stats), else the input's.
std::tuple<at::Tensor, at::Tensor> batchNormUpdateStats(const at::Tensor& input,
                                                        const std::optional<at::Tensor>& rm_opt,
                                                        const std::optional<at::Tensor>& rv_opt,
                                                        double momentum) {
  const at::Tensor running_mean = opt(rm_opt), running_var = opt(rv_opt);
  checkSameDevice({input, running_mean, running_var});
  TORCH_CHECK(input.dim() >= 2,
              "batch_norm_update_stats: expected an input with at least 2 "
              "dimensions");
  TORCH_CHECK(input.numel() != 0,
              "input tensor must have at least one element, but got "
              "input_sizes = ",
              input.sizes());
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::batch_norm_update_stats", "", {input, rm_opt, rv_opt, momentum});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  const at::Tensor x = input.contiguous();
  const BnShape sh = bnShape(x);
  const auto pdt = paramType(x, {running_mean, running_var});
  const at::Tensor st = moments(x, {sh.c, sh.n, sh.c * sh.hw, sh.hw}, 0.0);
  const int64_t m = sh.n * sh.hw;
  if (running_mean.defined())
    running_mean.mul_(1 - momentum).add_(st[0].to(running_mean.scalar_type()), momentum);
  if (running_var.defined()) {
    const at::Tensor unbiased = st[2] * (static_cast<double>(m) / static_cast<double>(m - 1));
    running_var.mul_(1 - momentum).add_(unbiased.to(running_var.scalar_type()), momentum);
  }
  return {st[0].to(pdt), st[2].to(pdt)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batchNormBackward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
    const at::Tensor& running_mean, const at::Tensor& running_var, const at::Tensor& save_mean,
    const at::Tensor& save_invstd, bool train, double eps, std::array<bool, 3> mask) {
  checkSameDevice({grad_out, input, weight, running_mean, running_var, save_mean, save_invstd});
  const at::Tensor x = input.contiguous(), go = grad_out.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const BnShape sh = bnShape(x);
  at::Tensor mean, rstd;
  if (train) {
    mean = accOf(save_mean, acc), rstd = accOf(save_invstd, acc);
  } else {
    mean = accOf(running_mean, acc);
    rstd = (accOf(running_var, acc) + eps).rsqrt();
  }
  const at::Tensor w = accOf(weight, acc);
  const Rows rows{sh.c, sh.n, sh.c * sh.hw, sh.hw};
  at::Tensor sums;
  if ((train && mask[0]) || mask[1] || mask[2])
    sums = gradSums(go, x, mean, rstd, at::Tensor(), rows, {1, 1});
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    backwardApply(gi, go, x, mean, rstd, sums, w, {sh.hw, sh.c}, {sh.hw, sh.c}, false, train,
                  sh.n * sh.hw);
    gi = gi.contiguous(input.suggest_memory_format());  // CPU's layout, as in the forward
  }
  const auto pdt = weight.defined() ? weight.scalar_type() : x.scalar_type();
  if (mask[1]) gw = sums[1].to(pdt);
  if (mask[2]) gb = sums[0].to(pdt);
  return {gi, gw, gb};
}

bool bnNative(const at::Tensor& input) {
  return nnFloating(input.scalar_type()) && input.dim() >= 2;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeBatchNorm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, bool training, double momentum, double eps) {
  if (!bnNative(input)) {
    auto r = runFallback("aten::native_batch_norm", "",
                         {input, weight, bias, running_mean, running_var, training, momentum, eps});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  return batchNorm(input, opt(weight), opt(bias), opt(running_mean), opt(running_var), training,
                   momentum, eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeBatchNormBackward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd,
    bool train, double eps, std::array<bool, 3> mask) {
  if (!bnNative(input)) {
    auto r = runFallback("aten::native_batch_norm_backward", "",
                         {grad_out, input, weight, running_mean, running_var, save_mean,
                          save_invstd, train, eps, c10::List<bool>({mask[0], mask[1], mask[2]})});
    auto get = [&](size_t i) { return r[i].isTensor() ? r[i].toTensor() : at::Tensor(); };
    return {get(0), get(1), get(2)};
  }
  return batchNormBackward(grad_out, input, opt(weight), opt(running_mean), opt(running_var),
                           opt(save_mean), opt(save_invstd), train, eps, mask);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeBatchNormLegit(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    bool training, double momentum, double eps) {
  if (!bnNative(input)) {
    auto r = runFallback("aten::_native_batch_norm_legit", "",
                         {input, weight, bias, running_mean, running_var, training, momentum, eps});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  return batchNorm(input, opt(weight), opt(bias), running_mean, running_var, training, momentum,
                   eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeBatchNormLegitNoStats(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, bool training, double momentum, double eps) {
  if (!bnNative(input)) {
    auto r = runFallback("aten::_native_batch_norm_legit", "no_stats",
                         {input, weight, bias, training, momentum, eps});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  return batchNorm(input, opt(weight), opt(bias), at::Tensor(), at::Tensor(), training, momentum,
                   eps);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> batchNormWithUpdate(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    double momentum, double eps) {
  if (!bnNative(input)) {
    auto r = runFallback("aten::_batch_norm_with_update", "",
                         {input, weight, bias, running_mean, running_var, momentum, eps});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor(), r[3].toTensor()};
  }
  auto [out, m, v] =
      batchNorm(input, opt(weight), opt(bias), running_mean, running_var, true, momentum, eps);
  return {out, m, v, at::empty({0}, input.options().dtype(at::kByte))};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batchNormBackwardNew(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_var,
    bool update, double eps, std::array<bool, 3> mask, const at::Tensor& reserve) {
  return nativeBatchNormBackward(grad_out, input, weight, running_mean, running_var, save_mean,
                                 save_var, update, eps, mask);
}

// ---- layer norm ----

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeLayerNorm(
    const at::Tensor& input, at::IntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight_opt, const std::optional<at::Tensor>& bias_opt,
    double eps) {
  const at::Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  checkSameDevice({input, weight, bias});
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::native_layer_norm", "",
                         {input, normalized_shape.vec(), weight_opt, bias_opt, eps});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  auto [rows, m] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, bias);
  const at::Tensor x = input.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const auto pdt = paramType(x, {weight, bias});
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.resize(input.dim(), 1);
  if (rows * m == 0) {
    return {out, at::empty(stat_shape, x.options().dtype(pdt)),
            at::empty(stat_shape, x.options().dtype(pdt))};
  }
  const at::Tensor w = accOf(weight, acc), b = accOf(bias, acc);
  bool applied = false;
  const at::Tensor st = moments(x, {rows, 1, 0, m}, eps, out, w, b, &applied);
  if (!applied) apply(out, x, st[0], st[1], w, b, {m, rows}, {1, m});
  return {out, st[0].to(pdt).view(stat_shape), st[1].to(pdt).view(stat_shape)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeLayerNormBackward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& mean, const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& bias_opt, std::array<bool, 3> mask) {
  const at::Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  checkSameDevice({grad_out, input, mean, rstd, weight, bias});
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::native_layer_norm_backward", "",
                         {grad_out, input, normalized_shape.vec(), mean, rstd, weight_opt, bias_opt,
                          c10::List<bool>({mask[0], mask[1], mask[2]})});
    auto get = [&](size_t i) { return r[i].isTensor() ? r[i].toTensor() : at::Tensor(); };
    return {get(0), get(1), get(2)};
  }
  auto [rows, m] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, bias);
  const at::Tensor x = input.contiguous(), go = grad_out.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const at::Tensor mu = accOf(mean, acc).view({-1}), rs = accOf(rstd, acc).view({-1});
  const at::Tensor w = accOf(weight, acc);
  const c10::DeviceIndex idx = x.device().index();
  const bool cpu = cpuDriver(idx);
  at::Tensor gi, gw, gb;
  const bool want_p = (mask[1] && weight.defined()) || (mask[2] && bias.defined());
  if (cpu) {
    if (mask[0]) gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    auto [sw, sb] = rowBackwardFusedCpu(gi, go, x, mu, rs, w, rows, m, true, want_p);
    const auto pdt = weight.defined() ? weight.scalar_type() : x.scalar_type();
    if (mask[1] && weight.defined()) gw = sw.to(pdt).view(weight.sizes());
    if (mask[2] && bias.defined()) gb = sb.to(bias.scalar_type()).view(bias.sizes());
    return {gi, gw, gb};
  }
  if (mask[0]) {
    gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    if (rows * m > 0) {
      const at::Tensor sums = gradSums(go, x, mu, rs, w, {rows, 1, 0, m}, {1, m});
      backwardApply(gi, go, x, mu, rs, sums, w, {m, rows}, {1, m}, true, true, m);
    }
  }
  if (want_p) {
    auto [sw, sb] = paramGrads(go, x, mu, rs, m, rows, m, 1, 1, {m, std::max<int64_t>(rows, 1)});
    const auto pdt = weight.defined() ? weight.scalar_type() : bias.scalar_type();
    if (mask[1] && weight.defined()) gw = sw.to(pdt).view(weight.sizes());
    if (mask[2] && bias.defined()) gb = sb.to(pdt).view(bias.sizes());
  }
  return {gi, gw, gb};
}

// ---- RMS norm (_fused_rms_norm, which F.rms_norm calls once a backend registers it) ----

std::tuple<at::Tensor, at::Tensor> fusedRmsNorm(const at::Tensor& input,
                                                at::IntArrayRef normalized_shape,
                                                const std::optional<at::Tensor>& weight_opt,
                                                std::optional<double> eps_opt) {
  const at::Tensor weight = opt(weight_opt);
  checkSameDevice({input, weight});
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::_fused_rms_norm", "",
                         {input, normalized_shape.vec(), weight_opt, eps_opt});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  auto [rows, m] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, {});
  const auto acc = nnAccType(input.scalar_type());
  // No eps: the epsilon of the accumulation type, as CPU PyTorch's rms_norm takes it.
  const double eps = eps_opt ? *eps_opt
                     : acc == c10::kDouble
                         ? std::numeric_limits<double>::epsilon()
                         : static_cast<double>(std::numeric_limits<float>::epsilon());
  if (weight.defined() && weight.scalar_type() != input.scalar_type()) {
    // Mixed dtypes (half input, float weight): PyTorch's composite, on native ops.
    const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
    std::vector<int64_t> dims;
    for (int64_t d = axis; d < input.dim(); ++d) dims.push_back(d);
    const at::Tensor up = input.to(acc);
    const at::Tensor rstd = at::rsqrt(up.pow(2).mean(dims, /*keepdim=*/true).add_(eps));
    return {up.mul(rstd).type_as(input).mul(weight), rstd};
  }
  const at::Tensor x = input.contiguous();
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.resize(input.dim(), 1);
  at::Tensor rstd = at::empty({rows}, x.options().dtype(acc));
  if (rows * m > 0) {
    const c10::DeviceIndex idx = x.device().index();
    const bool cpu = cpuDriver(idx);
    const at::Tensor w = accOf(weight, acc);
    OCL_TRY
    cl_kernel k = normKernel(x, cpu ? "rms_forward_v" : "rms_forward_rows");
    cl_uint i = 0;
    setArg(k, i, bufferOf(out));
    setArg(k, i, bufferOf(x));
    setArg(k, i, bufferOrAny(w, rstd));
    setArg(k, i, bufferOf(rstd));
    setArg(k, i, static_cast<cl_long>(rows));
    setArg(k, i, static_cast<cl_long>(m));
    setAcc(k, i, acc, eps);
    setArg(k, i, static_cast<cl_int>(w.defined()));
    if (cpu)
      launchItems(idx, k, rows);
    else
      launchRowGroups(idx, k, rows);
    OCL_CATCH
  }
  return {out, rstd.view(stat_shape)};
}

std::tuple<at::Tensor, at::Tensor> fusedRmsNormBackward(
    const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt, std::array<bool, 2> mask) {
  const at::Tensor weight = opt(weight_opt);
  checkSameDevice({grad_out, input, rstd, weight});
  if (nnFloating(input.scalar_type()) && weight.defined() &&
      weight.scalar_type() != input.scalar_type()) {
    // Mixed dtypes: the gradient of the composite above, on native ops.
    const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
    std::vector<int64_t> dims, lead;
    for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? lead : dims).push_back(d);
    const auto acc = nnAccType(input.scalar_type());
    const at::Tensor xhat = input.to(acc).mul(rstd);
    at::Tensor gi, gw;
    if (mask[1]) {
      const at::Tensor p = grad_out.mul(xhat.type_as(input));
      gw = (lead.empty() ? p : p.sum(lead)).to(weight.scalar_type());
    }
    if (mask[0]) {
      const at::Tensor g = grad_out.mul(weight).to(acc);
      gi = rstd.mul(g.sub(xhat.mul(g.mul(xhat).mean(dims, /*keepdim=*/true))))
               .to(input.scalar_type());
    }
    return {gi, gw};
  }
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::_fused_rms_norm_backward", "",
                         {grad_out, input, normalized_shape.vec(), rstd, weight_opt,
                          c10::List<bool>({mask[0], mask[1]})});
    auto get = [&](size_t i) { return r[i].isTensor() ? r[i].toTensor() : at::Tensor(); };
    return {get(0), get(1)};
  }
  auto [rows, m] = at::native::_check_layer_norm_inputs(input, normalized_shape, weight, {});
  const at::Tensor x = input.contiguous(), go = grad_out.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const at::Tensor rs = accOf(rstd, acc).view({-1});
  const at::Tensor w = accOf(weight, acc);
  const c10::DeviceIndex idx = x.device().index();
  const bool cpu = cpuDriver(idx);
  at::Tensor gi, gw;
  const bool want_w = mask[1] && weight.defined();
  if (cpu) {
    if (mask[0]) gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    auto sums = rowBackwardFusedCpu(gi, go, x, at::Tensor(), rs, w, rows, m, false, want_w);
    if (want_w) gw = sums.first.to(weight.scalar_type()).view(weight.sizes());
    return {gi, gw};
  }
  if (mask[0]) {
    gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    if (rows * m > 0) {
      // The layer-norm kernels with a zero mean and without the sum(g) term.
      const at::Tensor zero = at::zeros({rows}, rs.options());
      at::Tensor sums = gradSums(go, x, zero, rs, w, {rows, 1, 0, m}, {1, m});
      sums[0].zero_();
      backwardApply(gi, go, x, zero, rs, sums, w, {m, rows}, {1, m}, true, true, m);
    }
  }
  if (want_w) {
    const at::Tensor zero = at::zeros({std::max<int64_t>(rows, 1)}, rs.options());
    auto sw = paramGrads(go, x, zero, rs, m, rows, m, 1, 1, {m, std::max<int64_t>(rows, 1)}).first;
    gw = sw.to(weight.scalar_type()).view(weight.sizes());
  }
  return {gi, gw};
}

// ---- group norm ----

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeGroupNorm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& bias_opt, int64_t n, int64_t c, int64_t hw, int64_t group,
    double eps) {
  const at::Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  checkSameDevice({input, weight, bias});
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::native_group_norm", "",
                         {input, weight_opt, bias_opt, n, c, hw, group, eps});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  TORCH_CHECK(group > 0 && c % group == 0, "Expected number of channels in input to be divisible ",
              "by num_groups, but got input of shape ", input.sizes(), " and num_groups=", group);
  TORCH_CHECK(input.numel() == n * c * hw, "Expected input of ", n * c * hw, " elements, got ",
              input.numel());
  const at::Tensor x = input.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const auto pdt = paramType(x, {weight, bias});
  const int64_t rows = n * group, b = c / group * hw;
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  if (rows * b == 0)
    return {out, at::empty({n, group}, x.options().dtype(pdt)),
            at::empty({n, group}, x.options().dtype(pdt))};
  const at::Tensor st = moments(x, {rows, 1, 0, b}, eps);
  apply(out, x, st[0], st[1], accOf(weight, acc), accOf(bias, acc), {b, rows}, {hw, c});
  return {out, st[0].to(pdt).view({n, group}), st[1].to(pdt).view({n, group})};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> nativeGroupNormBackward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight_opt, int64_t n, int64_t c,
    int64_t hw, int64_t group, std::array<bool, 3> mask) {
  const at::Tensor weight = opt(weight_opt);
  checkSameDevice({grad_out, input, mean, rstd, weight});
  if (!nnFloating(input.scalar_type())) {
    auto r = runFallback("aten::native_group_norm_backward", "",
                         {grad_out, input, mean, rstd, weight_opt, n, c, hw, group,
                          c10::List<bool>({mask[0], mask[1], mask[2]})});
    auto get = [&](size_t i) { return r[i].isTensor() ? r[i].toTensor() : at::Tensor(); };
    return {get(0), get(1), get(2)};
  }
  const at::Tensor x = input.contiguous(), go = grad_out.contiguous();
  const auto acc = nnAccType(x.scalar_type());
  const int64_t rows = n * group, b = c / group * hw;
  const at::Tensor mu = accOf(mean, acc).view({-1}), rs = accOf(rstd, acc).view({-1});
  const at::Tensor w = accOf(weight, acc);
  at::Tensor gi, gw, gb;
  if (mask[0]) {
    gi = at::empty_like(x, at::MemoryFormat::Contiguous);
    if (rows * b > 0) {
      const at::Tensor sums = gradSums(go, x, mu, rs, w, {rows, 1, 0, b}, {hw, c});
      backwardApply(gi, go, x, mu, rs, sums, w, {b, rows}, {hw, c}, true, true, b);
    }
  }
  if (mask[1] || mask[2]) {
    auto [sw, sb] = paramGrads(go, x, mu, rs, c, n, c * hw, hw, hw,
                               {std::max<int64_t>(b, 1), std::max<int64_t>(rows, 1)});
    const auto pdt = weight.defined() ? weight.scalar_type() : x.scalar_type();
    if (mask[1]) gw = sw.to(pdt);
    if (mask[2]) gb = sb.to(pdt);
  }
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_batch_norm_with_update", TORCH_FN(batchNormWithUpdate));
  m.impl("_fused_rms_norm", TORCH_FN(fusedRmsNorm));
  m.impl("_fused_rms_norm_backward", TORCH_FN(fusedRmsNormBackward));
  m.impl("_native_batch_norm_legit", TORCH_FN(nativeBatchNormLegit));
  m.impl("_native_batch_norm_legit.no_stats", TORCH_FN(nativeBatchNormLegitNoStats));
  m.impl("batch_norm_backward", TORCH_FN(batchNormBackwardNew));
  m.impl("batch_norm_update_stats", TORCH_FN(batchNormUpdateStats));
  m.impl("native_batch_norm", TORCH_FN(nativeBatchNorm));
  m.impl("native_batch_norm_backward", TORCH_FN(nativeBatchNormBackward));
  m.impl("native_group_norm", TORCH_FN(nativeGroupNorm));
  m.impl("native_group_norm_backward", TORCH_FN(nativeGroupNormBackward));
  m.impl("native_layer_norm", TORCH_FN(nativeLayerNorm));
  m.impl("native_layer_norm_backward", TORCH_FN(nativeLayerNormBackward));
}

}  // namespace torch_ocl::aten
