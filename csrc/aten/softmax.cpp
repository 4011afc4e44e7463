// _log_softmax and its backward for float and double (contiguous (outer, dim, inner) views);
// half and bfloat16 go through the counted CPU fallback for now.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/_log_softmax_backward_data_meta.h>
#include <ATen/ops/_log_softmax_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kSoftmaxFamily;

struct Geometry {
  int64_t outer = 1, dim = 1, inner = 1;
};

Geometry geometry(const at::Tensor& t, int64_t dim) {
  Geometry g;
  if (t.dim() == 0) return g;
  dim = at::maybe_wrap_dim(dim, t.dim());
  g.dim = t.size(dim);
  for (int64_t d = 0; d < dim; ++d) g.outer *= t.size(d);
  for (int64_t d = dim + 1; d < t.dim(); ++d) g.inner *= t.size(d);
  return g;
}

bool native(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble;
}

void launchRows(const at::Tensor& anchor, const char* kernel, const Geometry& g,
                std::initializer_list<at::Tensor> tensors) {
  if (anchor.numel() == 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = realProgram(idx, &kSoftmaxFamily, "softmax.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, kernel);
  cl_uint a = 0;
  for (const at::Tensor& t : tensors) setArg(k, a, bufferOf(t));
  setArg(k, a, static_cast<cl_long>(g.outer));
  setArg(k, a, static_cast<cl_long>(g.dim));
  setArg(k, a, static_cast<cl_long>(g.inner));
  launch1D(device(idx), currentQueue(idx), k, g.outer * g.inner);
  OCL_CATCH
}

void logSoftmaxImpl(const at::Tensor& out, const at::Tensor& self, int64_t dim) {
  const at::Tensor x = self.contiguous();
  at::Tensor y = out.is_contiguous() ? out : at::empty_like(x);
  launchRows(x, "log_softmax_fwd", geometry(x, dim), {y, x});
  if (!y.is_same(out)) out.copy_(y);
}

at::Tensor logSoftmaxFn(const at::Tensor& self, int64_t dim, bool half_to_float) {
  if (!native(self) || half_to_float)
    return runFallback("aten::_log_softmax", "", {self, dim, half_to_float})[0].toTensor();
  Structured<at::meta::structured__log_softmax> s(Mode::kFunctional, nullptr);
  s.meta(self, dim, half_to_float);
  logSoftmaxImpl(s.output(), self, dim);
  return s.output();
}

at::Tensor& logSoftmaxOut(const at::Tensor& self, int64_t dim, bool half_to_float,
                          at::Tensor& out) {
  if (!native(self) || half_to_float || out.scalar_type() != self.scalar_type()) {
    runFallback("aten::_log_softmax", "out", {self, dim, half_to_float, out});
    return out;
  }
  Structured<at::meta::structured__log_softmax> s(Mode::kOut, &out);
  s.meta(self, dim, half_to_float);
  logSoftmaxImpl(out, self, dim);
  return out;
}

void logSoftmaxBackwardImpl(const at::Tensor& grad_input, const at::Tensor& grad_output,
                            const at::Tensor& output, int64_t dim) {
  const at::Tensor go = grad_output.contiguous(), y = output.contiguous();
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::empty_like(go);
  launchRows(go, "log_softmax_bwd", geometry(go, dim), {gi, go, y});
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
}

at::Tensor logSoftmaxBackwardFn(const at::Tensor& grad_output, const at::Tensor& output,
                                int64_t dim, c10::ScalarType input_dtype) {
  checkSameDevice({grad_output, output});
  if (!native(grad_output) || input_dtype != grad_output.scalar_type())
    return runFallback("aten::_log_softmax_backward_data", "",
                       {grad_output, output, dim, input_dtype})[0]
        .toTensor();
  Structured<at::meta::structured__log_softmax_backward_data> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, output, dim, input_dtype);
  logSoftmaxBackwardImpl(s.output(), grad_output, output, dim);
  return s.output();
}

at::Tensor& logSoftmaxBackwardOut(const at::Tensor& grad_output, const at::Tensor& output,
                                  int64_t dim, c10::ScalarType input_dtype, at::Tensor& out) {
  checkSameDevice({grad_output, output, out});
  if (!native(grad_output) || input_dtype != grad_output.scalar_type() ||
      out.scalar_type() != grad_output.scalar_type()) {
    runFallback("aten::_log_softmax_backward_data", "out",
                {grad_output, output, dim, input_dtype, out});
    return out;
  }
  Structured<at::meta::structured__log_softmax_backward_data> s(Mode::kOut, &out);
  s.meta(grad_output, output, dim, input_dtype);
  logSoftmaxBackwardImpl(out, grad_output, output, dim);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_log_softmax", TORCH_FN(logSoftmaxFn));
  m.impl("_log_softmax.out", TORCH_FN(logSoftmaxOut));
  m.impl("_log_softmax_backward_data", TORCH_FN(logSoftmaxBackwardFn));
  m.impl("_log_softmax_backward_data.out", TORCH_FN(logSoftmaxBackwardOut));
}

}  // namespace torch_ocl::aten
