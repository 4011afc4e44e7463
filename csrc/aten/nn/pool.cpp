// Pooling, forward and backward: max_pool2d_with_indices, and in 2-D and 3-D avg_pool (ceil_mode,
// count_include_pad, divisor_override), _adaptive_avg_pool and adaptive_max_pool (one template
// each over pool.cl's (D, H, W) geometry), for float/double/half/bfloat16, integers for
// max_pool2d's forward and int64 for avg_pool's (other dtypes take the counted CPU fallback).
// max_pool3d, max_unpool3d: pool3d.cpp; fractional pooling: pool_fractional.cpp.
// max_pool1d/avg_pool1d and adaptive_avg_pool2d decompose onto these. Shapes and argument checks
// come from PyTorch's structured meta functions; inputs are read as contiguous planes and outputs
// that PyTorch makes channels_last are written through a contiguous temporary.
#include <ATen/ATen.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool2d_meta.h>
#include <ATen/ops/adaptive_max_pool3d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool3d_meta.h>
#include <ATen/ops/avg_pool2d_backward_meta.h>
#include <ATen/ops/avg_pool2d_meta.h>
#include <ATen/ops/avg_pool3d_backward_meta.h>
#include <ATen/ops/avg_pool3d_meta.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/pool_common.h"
#include "aten/structured.h"
#include "codegen/reduce.h"

#include <limits>

namespace torch_ocl::aten {

namespace {
char kPoolFamily;

int64_t pick(at::IntArrayRef v, size_t i, int64_t dflt) {
  if (v.empty()) return dflt;
  return v.size() == 1 ? v[0] : v[i];
}
}  // namespace

PoolGeom poolGeom(const at::Tensor& in, const at::Tensor& out, int spatial,
                  at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                  at::IntArrayRef dilation) {
  PoolGeom g{};
  const bool vol = spatial == 3;
  g.D = vol ? in.size(-3) : 1, g.H = in.size(-2), g.W = in.size(-1);
  g.OD = vol ? out.size(-3) : 1, g.OH = out.size(-2), g.OW = out.size(-1);
  g.P = 1;
  for (int64_t d = 0; d < in.dim() - spatial; ++d) g.P *= in.size(d);
  const size_t h = vol ? 1 : 0;  // position of the height entry in the argument lists
  g.kd = vol ? pick(kernel_size, 0, 1) : 1, g.kh = pick(kernel_size, h, 1);
  g.kw = pick(kernel_size, h + 1, 1);
  g.sd = vol ? pick(stride, 0, g.kd) : 1, g.sh = pick(stride, h, g.kh);
  g.sw = pick(stride, h + 1, g.kw);
  g.pd = vol ? pick(padding, 0, 0) : 0, g.ph = pick(padding, h, 0), g.pw = pick(padding, h + 1, 0);
  g.dd = vol ? pick(dilation, 0, 1) : 1, g.dh = pick(dilation, h, 1);
  g.dw = pick(dilation, h + 1, 1);
  return g;
}

void launchPoolKernel(const at::Tensor& anchor, const char* name, int64_t n,
                      std::initializer_list<at::Tensor> tensors, const PoolGeom& g,
                      std::initializer_list<cl_int> ints, std::initializer_list<cl_long> longs) {
  if (n <= 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kPoolFamily, "pool.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  cl_uint i = 0;
  for (const at::Tensor& t : tensors) setArg(k, i, bufferOf(t));
  setArg(k, i, g);
  for (cl_int v : ints) setArg(k, i, v);
  for (cl_long v : longs) setArg(k, i, v);
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

namespace {

// ---- max pool ----

// CPU drivers take the row kernels of max pooling (pool.cl says why); TORCH_OCL_TREE_REDUCTIONS=1
// gives them the GPU kernels, so both are tested on PoCL.
bool rowKernels(const at::Tensor& t) {
  return codegen::preferItemReductions(device(t.device().index()).info());
}

// A 2-D pool with 2x2 windows, stride 2, no padding or dilation, whose indices fit 32 bits:
// max_pool2_fwd/bwd.
bool window2(const PoolGeom& g) {
  return g.D == 1 && g.OD == 1 && g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 &&
         g.pw == 0 && g.dh == 1 && g.dw == 1 &&
         g.P * g.H * g.W < std::numeric_limits<int32_t>::max();
}

// Launches a pool.cl kernel over (cols, rows) work items in 16 x 16 work-groups; with
// `vector_rows`, over rows work items in work-groups of one (kernels that walk their row in
// explicit vectors: max_pool2_fwd_v, max_pool2_bwd_v).
void launchPool2D(const at::Tensor& anchor, const char* name, int64_t cols, int64_t rows,
                  std::initializer_list<at::Tensor> tensors, const PoolGeom& g,
                  bool vector_rows = false) {
  if (rows <= 0 || (cols <= 0 && !vector_rows)) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kPoolFamily, "pool.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  cl_uint i = 0;
  for (const at::Tensor& t : tensors) setArg(k, i, bufferOf(t));
  setArg(k, i, g);
  if (vector_rows) {
    launchND(device(idx), currentQueue(idx), k, static_cast<size_t>(rows), 1);
  } else {
    const size_t local[2] = {16, 16};
    const size_t global[2] = {(static_cast<size_t>(cols) + 15) / 16 * 16,
                              (static_cast<size_t>(rows) + 15) / 16 * 16};
    launch2D(currentQueue(idx), k, global, local);
  }
  OCL_CATCH
}

std::tuple<at::Tensor, at::Tensor> maxPool2d(const at::Tensor& self, at::IntArrayRef kernel_size,
                                             at::IntArrayRef stride, at::IntArrayRef padding,
                                             at::IntArrayRef dilation, bool ceil_mode) {
  if (!nnFloating(self.scalar_type()) && !nnInteger(self.scalar_type())) {
    auto r = runFallback(
        "aten::max_pool2d_with_indices", "",
        ivalues({self, kernel_size.vec(), stride.vec(), padding.vec(), dilation.vec(), ceil_mode}));
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_max_pool2d_with_indices> s(Mode::kFunctional, nullptr);
  s.meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  const at::Tensor x = self.contiguous();
  const at::Tensor y = contiguousLike(s.output(0)), ind = contiguousLike(s.output(1));
  const PoolGeom g = poolGeom(x, y, 2, kernel_size, stride, padding, dilation);
  if (window2(g) && 2 * g.OH <= g.H && 2 * g.OW <= g.W && g.OW >= 16 &&
      x.scalar_type() == at::kFloat && rowKernels(x))
    launchPool2D(x, "max_pool2_fwd_v", 0, g.P * g.OH, {y, ind, x}, g, true);
  else if (window2(g) && 2 * g.OH <= g.H && 2 * g.OW <= g.W)
    launchPool2D(x, "max_pool2_fwd", g.OW, g.P * g.OH, {y, ind, x}, g);
  else if (rowKernels(x))
    launchPoolKernel(x, "max_pool_fwd_rows", g.P * g.OD * g.OH, {y, ind, x}, g, {}, {});
  else
    launchPoolKernel(x, "max_pool_fwd", y.numel(), {y, ind, x}, g, {}, {});
  finishInto(s.output(0), y);
  finishInto(s.output(1), ind);
  return {s.output(0), s.output(1)};
}

at::Tensor maxPool2dBackward(const at::Tensor& grad_output, const at::Tensor& self,
                             at::IntArrayRef kernel_size, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                             const at::Tensor& indices) {
  checkSameDevice({grad_output, self, indices});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback("aten::max_pool2d_with_indices_backward", "",
                       ivalues({grad_output, self, kernel_size.vec(), stride.vec(), padding.vec(),
                                dilation.vec(), ceil_mode, indices}))[0]
        .toTensor();
  Structured<at::meta::structured_max_pool2d_with_indices_backward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  const at::Tensor go = grad_output.contiguous(), ind = indices.contiguous();
  const at::Tensor gi = contiguousLike(s.output(0));
  const PoolGeom g = poolGeom(gi, go, 2, kernel_size, stride, padding, dilation);
  const at::ScalarType t = go.scalar_type();
  if (window2(g) && 2 * g.OH <= g.H && 2 * g.OW <= g.W && g.OW >= 8 && t == at::kFloat &&
      rowKernels(go))
    launchPool2D(go, "max_pool2_bwd_v", 0, g.P * g.H, {gi, go, ind}, g, true);
  else if (window2(g))
    launchPool2D(go, "max_pool2_bwd", g.W, g.P * g.H, {gi, go, ind}, g);
  else if (rowKernels(go) && (t == at::kFloat || t == at::kDouble))
    launchPoolKernel(go, "max_pool_bwd_rows", g.P * g.D * g.H, {gi, go, ind}, g, {}, {});
  else
    launchPoolKernel(go, "max_pool_bwd", gi.numel(), {gi, go, ind}, g, {}, {});
  finishInto(s.output(0), gi);
  return s.output(0);
}

// ---- average and adaptive pools, 2-D and 3-D (the same code over the depth-1 geometry) ----

// The structured metas and schema names of the 2-D or 3-D ops.
template <int S>
struct PoolOps;
template <>
struct PoolOps<2> {
  using Avg = at::meta::structured_avg_pool2d;
  using AvgBackward = at::meta::structured_avg_pool2d_backward;
  using AdaptiveMax = at::meta::structured_adaptive_max_pool2d;
  using AdaptiveMaxBackward = at::meta::structured_adaptive_max_pool2d_backward;
  static constexpr const char* kAvg = "aten::avg_pool2d";
  static constexpr const char* kAvgBackward = "aten::avg_pool2d_backward";
  static constexpr const char* kAdaptiveAvg = "aten::_adaptive_avg_pool2d";
  static constexpr const char* kAdaptiveAvgBackward = "aten::_adaptive_avg_pool2d_backward";
  static constexpr const char* kAdaptiveMax = "aten::adaptive_max_pool2d";
  static constexpr const char* kAdaptiveMaxBackward = "aten::adaptive_max_pool2d_backward";
  static constexpr const char* kAdaptiveAvgMsg = "adaptive_avg_pool2d";
  // CPU's backward dimension check, before and after the expected count.
  static constexpr const char* kAdaptiveAvgBackwardMsg[2] = {
      "adaptive_avg_pool2d_backward(): Expected dimensions ", " for `grad_output`"};
};
template <>
struct PoolOps<3> {
  using Avg = at::meta::structured_avg_pool3d;
  using AvgBackward = at::meta::structured_avg_pool3d_backward;
  using AdaptiveMax = at::meta::structured_adaptive_max_pool3d;
  using AdaptiveMaxBackward = at::meta::structured_adaptive_max_pool3d_backward;
  static constexpr const char* kAvg = "aten::avg_pool3d";
  static constexpr const char* kAvgBackward = "aten::avg_pool3d_backward";
  static constexpr const char* kAdaptiveAvg = "aten::_adaptive_avg_pool3d";
  static constexpr const char* kAdaptiveAvgBackward = "aten::_adaptive_avg_pool3d_backward";
  static constexpr const char* kAdaptiveMax = "aten::adaptive_max_pool3d";
  static constexpr const char* kAdaptiveMaxBackward = "aten::adaptive_max_pool3d_backward";
  static constexpr const char* kAdaptiveAvgMsg = "adaptive_avg_pool3d";
  static constexpr const char* kAdaptiveAvgBackwardMsg[2] = {
      "adaptive_avg_pool3d_backward_out_cpu_template: Expected dimensions ", " for `gradOutput_`"};
};

template <int S>
at::Tensor avgPool(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                   at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  // int64 as CPU has it (an int64 sum, truncating division); other integers get CPU's error
  if (!nnFloating(self.scalar_type()) && self.scalar_type() != at::kLong)
    return runFallback(PoolOps<S>::kAvg, "",
                       ivalues({self, kernel_size.vec(), stride.vec(), padding.vec(), ceil_mode,
                                count_include_pad, divisor_override}))[0]
        .toTensor();
  Structured<typename PoolOps<S>::Avg> s(Mode::kFunctional, nullptr);
  s.meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  const at::Tensor x = self.contiguous();
  const at::Tensor y = contiguousLike(s.output(0));
  launchPoolKernel(x, "avg_pool_fwd", y.numel(), {y, x},
                   poolGeom(x, y, S, kernel_size, stride, padding), {count_include_pad},
                   {divisor_override.value_or(0)});
  finishInto(s.output(0), y);
  return s.output(0);
}

template <int S>
at::Tensor avgPoolBackward(const at::Tensor& grad_output, const at::Tensor& self,
                           at::IntArrayRef kernel_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  checkSameDevice({grad_output, self});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(PoolOps<S>::kAvgBackward, "",
                       ivalues({grad_output, self, kernel_size.vec(), stride.vec(), padding.vec(),
                                ceil_mode, count_include_pad, divisor_override}))[0]
        .toTensor();
  Structured<typename PoolOps<S>::AvgBackward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
         divisor_override);
  const at::Tensor go = grad_output.contiguous();
  const at::Tensor gi = contiguousLike(s.output(0));
  launchPoolKernel(go, "avg_pool_bwd", gi.numel(), {gi, go},
                   poolGeom(gi, go, S, kernel_size, stride, padding), {count_include_pad},
                   {divisor_override.value_or(0)});
  finishInto(s.output(0), gi);
  return s.output(0);
}

// Not structured in PyTorch: CPU's checks and messages, a contiguous output as CPU returns.
template <int S>
at::Tensor adaptiveAvgPool(const at::Tensor& self, at::IntArrayRef output_size) {
  const char* op = PoolOps<S>::kAdaptiveAvgMsg;
  TORCH_CHECK(static_cast<int>(output_size.size()) == S, op, ": output_size must be ", S);
  bool nonnegative = true;
  for (int64_t o : output_size) nonnegative = nonnegative && o >= 0;
  TORCH_CHECK(nonnegative, op, ": elements of output_size must be greater than or equal to 0 ",
              "but received {", c10::Join(", ", output_size), "}");
  TORCH_CHECK(self.dim() == S + 1 || self.dim() == S + 2, op, "(): Expected ", S + 1, "D or ",
              S + 2, "D tensor, but got ", self.sizes());
  for (int64_t d = 1; d < self.dim(); ++d)
    TORCH_CHECK(self.size(d) > 0, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ",
                self.sizes(), " with dimension ", d, " being empty");
  if (!nnFloating(self.scalar_type()))
    return runFallback(PoolOps<S>::kAdaptiveAvg, "", ivalues({self, output_size.vec()}))[0]
        .toTensor();
  const at::Tensor x = self.contiguous();
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end() - S);
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  at::Tensor y = at::empty(shape, x.options());
  launchPoolKernel(x, "adaptive_fwd", y.numel(), {y, y, x}, poolGeom(x, y, S), {0}, {});
  return y;
}

template <int S>
at::Tensor adaptiveAvgPoolBackward(const at::Tensor& grad_output, const at::Tensor& self) {
  checkSameDevice({grad_output, self});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(PoolOps<S>::kAdaptiveAvgBackward, "", ivalues({grad_output, self}))[0]
        .toTensor();
  TORCH_CHECK(grad_output.dim() == self.dim() && (self.dim() == S + 1 || self.dim() == S + 2),
              PoolOps<S>::kAdaptiveAvgBackwardMsg[0], self.dim(),
              PoolOps<S>::kAdaptiveAvgBackwardMsg[1], " but got dimensions ", grad_output.dim());
  const at::Tensor go = grad_output.contiguous();
  at::Tensor gi = at::empty(self.sizes(), self.options());
  launchPoolKernel(go, "adaptive_bwd", gi.numel(), {gi, go, go}, poolGeom(gi, go, S), {0}, {});
  return gi;
}

template <int S>
std::tuple<at::Tensor, at::Tensor> adaptiveMaxPool(const at::Tensor& self,
                                                   at::IntArrayRef output_size) {
  if (!nnFloating(self.scalar_type())) {  // integers: CPU's error, through the fallback
    auto r = runFallback(PoolOps<S>::kAdaptiveMax, "", ivalues({self, output_size.vec()}));
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<typename PoolOps<S>::AdaptiveMax> s(Mode::kFunctional, nullptr);
  s.meta(self, output_size);
  const at::Tensor x = self.contiguous();
  const at::Tensor y = contiguousLike(s.output(0)), ind = contiguousLike(s.output(1));
  launchPoolKernel(x, "adaptive_fwd", y.numel(), {y, ind, x}, poolGeom(x, y, S), {1}, {});
  finishInto(s.output(0), y);
  finishInto(s.output(1), ind);
  return {s.output(0), s.output(1)};
}

template <int S>
at::Tensor adaptiveMaxPoolBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                   const at::Tensor& indices) {
  checkSameDevice({grad_output, self, indices});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(PoolOps<S>::kAdaptiveMaxBackward, "",
                       ivalues({grad_output, self, indices}))[0]
        .toTensor();
  Structured<typename PoolOps<S>::AdaptiveMaxBackward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, self, indices);
  const at::Tensor go = grad_output.contiguous(), ind = indices.contiguous();
  const at::Tensor gi = contiguousLike(s.output(0));
  launchPoolKernel(go, "adaptive_bwd", gi.numel(), {gi, go, ind}, poolGeom(gi, go, S), {1}, {});
  finishInto(s.output(0), gi);
  return s.output(0);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptiveAvgPool<2>));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(adaptiveAvgPoolBackward<2>));
  m.impl("_adaptive_avg_pool3d", TORCH_FN(adaptiveAvgPool<3>));
  m.impl("_adaptive_avg_pool3d_backward", TORCH_FN(adaptiveAvgPoolBackward<3>));
  m.impl("adaptive_max_pool2d", TORCH_FN(adaptiveMaxPool<2>));
  m.impl("adaptive_max_pool2d_backward", TORCH_FN(adaptiveMaxPoolBackward<2>));
  m.impl("adaptive_max_pool3d", TORCH_FN(adaptiveMaxPool<3>));
  m.impl("adaptive_max_pool3d_backward", TORCH_FN(adaptiveMaxPoolBackward<3>));
  m.impl("avg_pool2d", TORCH_FN(avgPool<2>));
  m.impl("avg_pool2d_backward", TORCH_FN(avgPoolBackward<2>));
  m.impl("avg_pool3d", TORCH_FN(avgPool<3>));
  m.impl("avg_pool3d_backward", TORCH_FN(avgPoolBackward<3>));
  m.impl("max_pool2d_with_indices", TORCH_FN(maxPool2d));
  m.impl("max_pool2d_with_indices_backward", TORCH_FN(maxPool2dBackward));
}

}  // namespace torch_ocl::aten
