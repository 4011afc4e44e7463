// nll_loss forward and backward (class indices, optional weights, ignore_index, none/mean/sum)
// for float and double log-probabilities of shape (N, C) or (C). Out-of-range targets raise
// IndexError as on CPU: the kernel flags them and the host reads the flag back.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kNllFamily;

bool native(const at::Tensor& self, const at::Tensor& target, const at::OptionalTensorRef& weight) {
  const bool real = self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble;
  const bool w_ok = !weight || !weight->defined() || weight->scalar_type() == self.scalar_type();
  return real && target.scalar_type() == at::kLong && w_ok && self.dim() <= 2;
}

at::OptionalTensorRef optRef(const std::optional<at::Tensor>& w) {
  return w.has_value() ? at::OptionalTensorRef(*w) : at::OptionalTensorRef();
}

struct NllArgs {
  at::Tensor logp, target, weight;  // contiguous; weight undefined when absent
  int64_t n = 1, c = 1;
};

NllArgs prepare(const at::Tensor& self, const at::Tensor& target,
                const at::OptionalTensorRef& weight) {
  NllArgs a;
  a.logp = self.contiguous();
  a.target = target.contiguous();
  if (weight && weight->defined()) a.weight = weight->contiguous();
  a.n = self.dim() == 2 ? self.size(0) : 1;
  a.c = self.size(-1);
  return a;
}

void setWeight(cl_kernel k, cl_uint& i, const NllArgs& a, const rt::BufferRef& any) {
  setArg(k, i, a.weight.defined() && a.weight.numel() > 0 ? bufferOf(a.weight) : any);
  setArg(k, i, static_cast<cl_int>(a.weight.defined()));
}

// Throws IndexError when the kernel flagged a target outside [0, C).
void checkTargets(const at::Tensor& err, const NllArgs& a, int64_t ignore_index) {
  if (err.item<int>() == 0) return;
  const at::Tensor t = a.target.cpu();
  const int64_t* p = t.const_data_ptr<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    TORCH_CHECK_INDEX(p[i] == ignore_index || (p[i] >= 0 && p[i] < a.c), "Target ", p[i],
                      " is out of bounds.");
}

void forwardImpl(const at::Tensor& output, const at::Tensor& total_weight, const at::Tensor& self,
                 const at::Tensor& target, const at::OptionalTensorRef& weight, int64_t reduction,
                 int64_t ignore_index) {
  const NllArgs a = prepare(self, target, weight);
  const c10::DeviceIndex idx = self.device().index();
  at::Tensor err = at::zeros({1}, self.options().dtype(at::kInt));
  cl_program prog = realProgram(idx, &kNllFamily, "nll_loss.cl", self.scalar_type());
  const rt::BufferRef any = bufferOf(err);
  const rt::BufferRef lp = a.logp.numel() > 0 ? bufferOf(a.logp) : any;
  const rt::BufferRef tg = a.target.numel() > 0 ? bufferOf(a.target) : any;
  OCL_TRY
  if (reduction == at::Reduction::None) {
    if (a.n > 0) {
      cl_kernel k = programs(idx).kernel(prog, "nll_fwd_none");
      cl_uint i = 0;
      setArg(k, i, bufferOf(output));
      setArg(k, i, lp);
      setArg(k, i, tg);
      setWeight(k, i, a, any);
      setArg(k, i, static_cast<cl_long>(a.n));
      setArg(k, i, static_cast<cl_long>(a.c));
      setArg(k, i, static_cast<cl_long>(ignore_index));
      setArg(k, i, any);
      launch1D(device(idx), currentQueue(idx), k, a.n);
    }
    total_weight.zero_();
  } else {
    cl_kernel k = programs(idx).kernel(prog, "nll_fwd_reduce");
    cl_uint i = 0;
    setArg(k, i, bufferOf(output));
    setArg(k, i, bufferOf(total_weight));
    setArg(k, i, lp);
    setArg(k, i, tg);
    setWeight(k, i, a, any);
    setArg(k, i, static_cast<cl_long>(a.n));
    setArg(k, i, static_cast<cl_long>(a.c));
    setArg(k, i, static_cast<cl_long>(ignore_index));
    setArg(k, i, static_cast<cl_int>(reduction == at::Reduction::Mean));
    setArg(k, i, any);
    launch1D(device(idx), currentQueue(idx), k, 1);
  }
  OCL_CATCH
  checkTargets(err, a, ignore_index);
}

std::tuple<at::Tensor, at::Tensor> nllForwardFn(const at::Tensor& self, const at::Tensor& target,
                                                const std::optional<at::Tensor>& weight,
                                                int64_t reduction, int64_t ignore_index) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w)) {
    auto r =
        runFallback("aten::nll_loss_forward", "", {self, target, weight, reduction, ignore_index});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_nll_loss_forward> s(Mode::kFunctional, nullptr);
  s.meta(self, target, w, reduction, ignore_index);
  forwardImpl(s.output(0), s.output(1), self, target, w, reduction, ignore_index);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> nllForwardOut(const at::Tensor& self, const at::Tensor& target,
                                                   const std::optional<at::Tensor>& weight,
                                                   int64_t reduction, int64_t ignore_index,
                                                   at::Tensor& output, at::Tensor& total_weight) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || output.scalar_type() != self.scalar_type()) {
    runFallback("aten::nll_loss_forward", "output",
                {self, target, weight, reduction, ignore_index, output, total_weight});
    return {output, total_weight};
  }
  Structured<at::meta::structured_nll_loss_forward> s(Mode::kOut, &output, &total_weight);
  s.meta(self, target, w, reduction, ignore_index);
  forwardImpl(output, total_weight, self, target, w, reduction, ignore_index);
  return {output, total_weight};
}

void backwardImpl(const at::Tensor& grad_input, const at::Tensor& grad_output,
                  const at::Tensor& self, const at::Tensor& target,
                  const at::OptionalTensorRef& weight, int64_t reduction, int64_t ignore_index,
                  const at::Tensor& total_weight) {
  const NllArgs a = prepare(self, target, weight);
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::empty_like(a.logp);
  gi.zero_();
  if (a.n > 0 && a.c > 0) {
    const c10::DeviceIndex idx = self.device().index();
    const at::Tensor go = grad_output.contiguous();
    const at::Tensor tw = total_weight.contiguous();
    cl_program prog = realProgram(idx, &kNllFamily, "nll_loss.cl", self.scalar_type());
    const rt::BufferRef any = bufferOf(gi);
    OCL_TRY
    cl_kernel k = programs(idx).kernel(prog, "nll_bwd");
    cl_uint i = 0;
    setArg(k, i, bufferOf(gi));
    setArg(k, i, go.numel() > 0 ? bufferOf(go) : any);
    setArg(k, i, bufferOf(a.target));
    setWeight(k, i, a, any);
    setArg(k, i, bufferOf(tw));
    setArg(k, i, static_cast<cl_long>(a.n));
    setArg(k, i, static_cast<cl_long>(a.c));
    setArg(k, i, static_cast<cl_long>(ignore_index));
    const int r = reduction == at::Reduction::None ? 0 : reduction == at::Reduction::Mean ? 1 : 2;
    setArg(k, i, static_cast<cl_int>(r));
    launch1D(device(idx), currentQueue(idx), k, a.n);
    OCL_CATCH
  }
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
}

at::Tensor nllBackwardFn(const at::Tensor& grad_output, const at::Tensor& self,
                         const at::Tensor& target, const std::optional<at::Tensor>& weight,
                         int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(
               "aten::nll_loss_backward", "",
               {grad_output, self, target, weight, reduction, ignore_index, total_weight})[0]
        .toTensor();
  Structured<at::meta::structured_nll_loss_backward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, self, target, w, reduction, ignore_index, total_weight);
  backwardImpl(s.output(), grad_output, self, target, w, reduction, ignore_index, total_weight);
  return s.output();
}

at::Tensor& nllBackwardOut(const at::Tensor& grad_output, const at::Tensor& self,
                           const at::Tensor& target, const std::optional<at::Tensor>& weight,
                           int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight,
                           at::Tensor& grad_input) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || grad_output.scalar_type() != self.scalar_type() ||
      grad_input.scalar_type() != self.scalar_type()) {
    runFallback(
        "aten::nll_loss_backward", "grad_input",
        {grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input});
    return grad_input;
  }
  Structured<at::meta::structured_nll_loss_backward> s(Mode::kOut, &grad_input);
  s.meta(grad_output, self, target, w, reduction, ignore_index, total_weight);
  backwardImpl(grad_input, grad_output, self, target, w, reduction, ignore_index, total_weight);
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_backward", TORCH_FN(nllBackwardFn));
  m.impl("nll_loss_backward.grad_input", TORCH_FN(nllBackwardOut));
  m.impl("nll_loss_forward", TORCH_FN(nllForwardFn));
  m.impl("nll_loss_forward.output", TORCH_FN(nllForwardOut));
}

}  // namespace torch_ocl::aten
