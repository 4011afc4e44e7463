// bincount and nonzero_static, composed of native ops. Like CUDA, bincount reads the input's
// minimum and maximum back (its output size depends on them); nonzero_static pads or truncates
// nonzero's result to the static size.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights_,
                    int64_t minlength) {
  const at::Tensor weights = weights_ && weights_->defined() ? *weights_ : at::Tensor();
  checkSameDevice({self, weights});
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1 && c10::isIntegralType(self.scalar_type(), /*includeBool=*/false),
              "bincount only supports 1-d non-negative integral inputs.");
  if (weights.defined())
    TORCH_CHECK(weights.dim() == 1 && weights.size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  // CPU: float weights count in float, any other weights in double, no weights in int64.
  const c10::ScalarType out_type = !weights.defined()                    ? at::kLong
                                   : weights.scalar_type() == at::kFloat ? at::kFloat
                                                                         : at::kDouble;
  int64_t bins = minlength;
  if (self.numel() > 0) {
    const auto [lo, hi] = at::aminmax(self);
    const at::Tensor both = at::stack({lo.to(at::kLong), hi.to(at::kLong)}).cpu();
    TORCH_CHECK(both[0].item<int64_t>() >= 0,
                "bincount only supports 1-d non-negative integral inputs.");
    bins = std::max(bins, both[1].item<int64_t>() + 1);
  }
  at::Tensor out = at::zeros({bins}, self.options().dtype(out_type));
  if (self.numel() == 0) return out;
  const at::Tensor src =
      weights.defined() ? weights.to(out_type) : at::ones_like(self, out.options());
  return out.index_add_(0, self.to(at::kLong), src);
}

at::Tensor nonzeroStatic(const at::Tensor& self, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  const at::Tensor nz = at::nonzero(self);
  const int64_t n = nz.size(0);
  if (n >= size) return nz.narrow(0, 0, size).clone();
  return at::cat({nz, at::full({size - n, nz.size(1)}, fill_value, nz.options())}, 0);
}

at::Tensor& nonzeroStaticOut(const at::Tensor& self, int64_t size, int64_t fill_value,
                             at::Tensor& out) {
  checkSameDevice({self, out});
  const at::Tensor r = nonzeroStatic(self, size, fill_value);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("bincount", TORCH_FN(bincount));
  m.impl("nonzero_static", TORCH_FN(nonzeroStatic));
  m.impl("nonzero_static.out", TORCH_FN(nonzeroStaticOut));
}

}  // namespace torch_ocl::aten
