// cdist (_cdist_forward/_cdist_backward) and pdist (_pdist_forward/_pdist_backward), composed of
// native ops over the (..., R1, R2, M) differences, with CPU's p-norm cases (0, 1, 2, inf,
// general p) and its zero-distance gradient rules. torch.cdist itself sends p == 2 with more than
// 25 rows to _euclidean_dist (matrix products, already native) before reaching these.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <torch/library.h>

#include <cmath>

#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

void checkCdist(const at::Tensor& x1, const at::Tensor& x2) {
  checkSameDevice({x1, x2});
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1),
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type());
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(),
              "cdist only supports floating-point dtypes, X2 got: ", x2.scalar_type());
}

// x1 (..., R1, M) and x2 (..., R2, M) with their batch dimensions broadcast to each other.
std::pair<at::Tensor, at::Tensor> expandBatch(const at::Tensor& x1, const at::Tensor& x2) {
  const auto b1 = x1.sizes().slice(0, x1.dim() - 2), b2 = x2.sizes().slice(0, x2.dim() - 2);
  std::vector<int64_t> batch = at::infer_size(b1, b2);
  std::vector<int64_t> s1 = batch, s2 = batch;
  s1.insert(s1.end(), {x1.size(-2), x1.size(-1)});
  s2.insert(s2.end(), {x2.size(-2), x2.size(-1)});
  return {x1.expand(s1), x2.expand(s2)};
}

at::Tensor differences(const at::Tensor& x1, const at::Tensor& x2) {
  return x1.unsqueeze(-2) - x2.unsqueeze(-3);  // (..., R1, R2, M)
}

at::Tensor pNorm(const at::Tensor& diff, double p) {
  if (p == 0) return diff.ne(0).sum(-1).to(diff.scalar_type());
  if (std::isinf(p)) return diff.abs().amax(-1);
  if (p == 1) return diff.abs().sum(-1);
  if (p == 2) return diff.pow(2).sum(-1).sqrt();
  return diff.abs().pow(p).sum(-1).pow(1.0 / p);
}

// d dist(i, j) / d x1(i, :) for every pair, times grad, summed over j: CPU's cdist backward terms.
at::Tensor distanceGrad(const at::Tensor& grad, const at::Tensor& diff, const at::Tensor& dist,
                        double p) {
  const at::Tensor d = dist.unsqueeze(-1);
  const at::Tensor zero = d.eq(0);
  at::Tensor term;
  if (p == 0) return at::zeros_like(diff).sum(-2);
  if (p == 1) {
    term = diff.sign();
  } else if (std::isinf(p)) {
    term = diff.sign() * diff.abs().eq(d);
  } else if (p == 2) {
    term = (diff / d).masked_fill(zero, 0);
  } else if (p < 2) {
    const at::Tensor skip = p < 1 ? zero.logical_or(diff.eq(0)) : zero;
    term = (diff.sign() * diff.abs().pow(p - 1) / d.pow(p - 1)).masked_fill(skip, 0);
  } else {
    term = (diff * diff.abs().pow(p - 2) / d.pow(p - 1)).masked_fill(zero, 0);
  }
  return (term * grad.unsqueeze(-1)).sum(-2);
}

at::Tensor cdistForward(const at::Tensor& x1_, const at::Tensor& x2_, double p,
                        std::optional<int64_t> compute_mode) {
  checkCdist(x1_, x2_);
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  TORCH_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2),
              "possible modes: 0, 1, 2, but was: ", *compute_mode);
  auto [x1, x2] = expandBatch(x1_, x2_);
  const int64_t mode = compute_mode.value_or(0);
  if (p == 2 && (mode == 1 || (mode == 0 && (x1.size(-2) > 25 || x2.size(-2) > 25))) &&
      x1.numel() > 0 && x2.numel() > 0)
    return at::_euclidean_dist(x1, x2);
  return pNorm(differences(x1, x2), p);
}

at::Tensor cdistBackward(const at::Tensor& grad, const at::Tensor& x1_, const at::Tensor& x2_,
                         double p, const at::Tensor& cdist) {
  checkCdist(x1_, x2_);
  checkSameDevice({grad, x1_, cdist});
  auto [x1, x2] = expandBatch(x1_, x2_);
  at::Tensor g = distanceGrad(grad, differences(x1, x2), cdist, p);
  // The batch dimensions that x1 was broadcast along are summed away.
  return at::sum_to(g, x1_.sizes());
}

at::Tensor pdistFull(const at::Tensor& self, double p) {
  return pNorm(differences(self, self), p);
}

// The pairs i < j of an (n, n) matrix, in pdist's (row-major) order.
at::Tensor upperPairs(const at::Tensor& self) {
  const int64_t n = self.size(0);
  return at::ones({n, n}, self.options().dtype(at::kBool)).triu(1);
}

at::Tensor pdistForward(const at::Tensor& self, double p) {
  TORCH_CHECK(self.is_contiguous(), "_pdist_forward requires contiguous input");
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  const int64_t n = self.size(0);
  if (n <= 1) return at::empty({0}, self.options());
  return pdistFull(self, p).masked_select(upperPairs(self));
}

at::Tensor pdistBackward(const at::Tensor& grad, const at::Tensor& self, double p,
                         const at::Tensor& pdist) {
  checkSameDevice({grad, self, pdist});
  const int64_t n = self.size(0);
  if (n <= 1 || self.size(1) == 0) return at::zeros_like(self);
  const at::Tensor upper = upperPairs(self);
  // Pair (i, j), i < j, moves x_i along +term and x_j along -term = term of (x_j - x_i).
  at::Tensor g = at::zeros({n, n}, grad.options()).masked_scatter(upper, grad);
  g = g + g.t();
  at::Tensor d = at::zeros({n, n}, pdist.options()).masked_scatter(upper, pdist);
  d = d + d.t();
  return distanceGrad(g, differences(self, self), d, p);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_cdist_backward", TORCH_FN(cdistBackward));
  m.impl("_cdist_forward", TORCH_FN(cdistForward));
  m.impl("_pdist_backward", TORCH_FN(pdistBackward));
  m.impl("_pdist_forward", TORCH_FN(pdistForward));
}

}  // namespace torch_ocl::aten
