// multi_margin_loss and multilabel_margin_loss, forward and backward, composed of native ops on
// the device (gather, masks, reductions, scatter_add) with the semantics and checks of PyTorch's
// own decompositions (torch/_decomp/decompositions.py) and CPU kernels: p in {1, 2}, class
// weights, reductions; a multilabel target row ends at its first -1.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

at::Tensor opt(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? *t : at::Tensor();
}

// Per-row factor of the gradient: grad_output spread over the reduction.
at::Tensor rowScale(const at::Tensor& grad_output, int64_t reduction, int64_t n, int64_t dim) {
  if (reduction == at::Reduction::Mean) return grad_output.reshape({1, 1}) / (n * dim);
  if (reduction == at::Reduction::Sum) return grad_output.reshape({1, 1}) / dim;
  return grad_output.reshape({n, 1}) / dim;
}

struct MultiMargin {
  at::Tensor x, y, z_raw, active, w_y;  // x (N, C), y (N, 1)
};

MultiMargin multiMarginTerms(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                             const at::Scalar& margin, const at::Tensor& weight) {
  checkSameDevice({self, target, weight});
  const at::Tensor x = at::atleast_2d(self);
  const at::Tensor t = at::atleast_1d(target);
  const int64_t n = x.size(0), dim = x.size(1);
  TORCH_CHECK(p.toDouble() == 1 || p.toDouble() == 2, "only p == 1 and p == 2 supported");
  TORCH_CHECK(x.dim() == 2 && dim != 0,
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  TORCH_CHECK(t.dim() == 1 && t.numel() == n, "inconsistent target size, expected ", n, " but got ",
              target.sizes());
  if (weight.defined())
    TORCH_CHECK(weight.dim() <= 1 && weight.numel() == dim, "inconsistent weight size, expected ",
                dim, " but got ", weight.sizes());
  MultiMargin m;
  m.x = x;
  m.y = t.to(at::kLong).unsqueeze(1);
  m.z_raw = margin.toDouble() - x.gather(1, m.y) + x;
  m.active = m.z_raw.gt(0).logical_and(at::arange(dim, m.y.options()).ne(m.y));
  if (weight.defined())
    m.w_y = weight.reshape({dim}).to(x.scalar_type()).index_select(0, m.y.squeeze(1)).unsqueeze(1);
  return m;
}

at::Tensor multiMarginLoss(const at::Tensor& self, const at::Tensor& target, const at::Scalar& p,
                           const at::Scalar& margin, const std::optional<at::Tensor>& weight,
                           int64_t reduction) {
  const MultiMargin m = multiMarginTerms(self, target, p, margin, opt(weight));
  at::Tensor z = m.z_raw.clamp_min(0);
  if (p.toDouble() == 2) z = z * z;
  if (m.w_y.defined()) z = z * m.w_y;
  z = z.masked_fill(m.active.logical_not(), 0);
  if (reduction == at::Reduction::Mean) return z.mean();
  if (reduction == at::Reduction::Sum) return z.sum() / z.size(1);
  at::Tensor out = z.mean(1);
  return target.dim() == 0 ? out.reshape({}) : out;
}

at::Tensor multiMarginLossBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                   const at::Tensor& target, const at::Scalar& p,
                                   const at::Scalar& margin,
                                   const std::optional<at::Tensor>& weight, int64_t reduction) {
  const MultiMargin m = multiMarginTerms(self, target, p, margin, opt(weight));
  checkSameDevice({grad_output, self});
  at::Tensor g = p.toDouble() == 2 ? 2 * m.z_raw : at::ones_like(m.z_raw);
  g = g.masked_fill(m.active.logical_not(), 0) *
      rowScale(grad_output, reduction, m.x.size(0), m.x.size(1));
  if (m.w_y.defined()) g = g * m.w_y;
  g = g.scatter_add(1, m.y, -g.sum(1, /*keepdim=*/true));
  return g.reshape(self.sizes());
}

struct MultiLabel {
  at::Tensor x, tidx, valid, is_target, active;  // x (N, C); tidx, valid (N, C); active (N, C, C)
};

MultiLabel multiLabelTerms(const at::Tensor& self, const at::Tensor& target) {
  checkSameDevice({self, target});
  const at::Tensor x = at::atleast_2d(self);
  const at::Tensor t = at::atleast_2d(target).to(at::kLong);
  const int64_t dim = x.size(1);
  TORCH_CHECK(self.dim() <= 2 && dim != 0,
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              self.sizes());
  TORCH_CHECK(target.dim() <= 2 && target.sizes() == self.sizes(),
              "inconsistent target size: ", target.sizes(), " for input of size: ", self.sizes());
  MultiLabel m;
  m.x = x;
  // Entries before the row's first -1 are its targets.
  m.valid = t.ne(-1).cumprod(1).to(at::kBool);
  m.tidx = at::where(m.valid, t, 0);
  m.is_target = at::zeros_like(x, x.options().dtype(at::kLong))
                    .scatter_add(1, m.tidx, m.valid.to(at::kLong))
                    .gt(0);
  const at::Tensor u = x.gather(1, m.tidx);                    // (N, T)
  const at::Tensor z = 1.0 - u.unsqueeze(2) + x.unsqueeze(1);  // (N, T, C)
  m.active =
      z.gt(0).logical_and(m.valid.unsqueeze(2)).logical_and(m.is_target.logical_not().unsqueeze(1));
  m.x = x;
  return m;
}

std::tuple<at::Tensor, at::Tensor> multiLabelMarginForward(const at::Tensor& self,
                                                           const at::Tensor& target,
                                                           int64_t reduction) {
  const MultiLabel m = multiLabelTerms(self, target);
  const at::Tensor x = m.x;
  const at::Tensor z = (1.0 - x.gather(1, m.tidx).unsqueeze(2) + x.unsqueeze(1))
                           .masked_fill(m.active.logical_not(), 0) /
                       x.size(1);
  at::Tensor loss = z.sum({1, 2});
  if (reduction == at::Reduction::Mean)
    loss = loss.mean();
  else if (reduction == at::Reduction::Sum)
    loss = loss.sum();
  else if (target.dim() <= 1)
    loss = loss.reshape({});
  return {loss, m.is_target.to(self.scalar_type()).reshape(target.sizes())};
}

std::tuple<at::Tensor&, at::Tensor&> multiLabelMarginForwardOut(const at::Tensor& self,
                                                                const at::Tensor& target,
                                                                int64_t reduction,
                                                                at::Tensor& output,
                                                                at::Tensor& is_target) {
  auto [loss, it] = multiLabelMarginForward(self, target, reduction);
  at::native::resize_output(output, loss.sizes());
  at::native::resize_output(is_target, it.sizes());
  output.copy_(loss);
  is_target.copy_(it);
  return {output, is_target};
}

at::Tensor multiLabelMarginBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                    const at::Tensor& target, int64_t reduction,
                                    const at::Tensor& is_target) {
  const MultiLabel m = multiLabelTerms(self, target);
  checkSameDevice({grad_output, self, is_target});
  const at::Tensor scale = rowScale(grad_output, reduction, m.x.size(0), m.x.size(1));
  const at::Tensor a = m.active.to(m.x.scalar_type());  // (N, T, C)
  at::Tensor g = a.sum(1) * scale;                      // d/dx_k over every target t
  g = g.scatter_add(1, m.tidx, -(a.sum(2) * scale));    // d/dx_t
  return g.reshape(self.sizes());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("multi_margin_loss", TORCH_FN(multiMarginLoss));
  m.impl("multi_margin_loss_backward", TORCH_FN(multiMarginLossBackward));
  m.impl("multilabel_margin_loss_backward", TORCH_FN(multiLabelMarginBackward));
  m.impl("multilabel_margin_loss_forward", TORCH_FN(multiLabelMarginForward));
  m.impl("multilabel_margin_loss_forward.output", TORCH_FN(multiLabelMarginForwardOut));
}

}  // namespace torch_ocl::aten
