// Fractional max pooling, 2-D and 3-D, forward and backward (fractional_max_pool{2,3}d and their
// backward), for float/double/half/bfloat16, on pool.cl's kernels. The windows come from the
// _random_samples tensor that nn.FractionalMaxPool2d/3d draws on the device (torch.rand with the
// ocl generator); starts are computed as CPU does, in the input's dtype, so outputs and indices
// equal CPU's for the same samples. Other dtypes take the counted CPU fallback.
#include <ATen/ATen.h>
#include <ATen/native/FractionalMaxPooling.h>
#include <ATen/ops/fractional_max_pool2d_backward_meta.h>
#include <ATen/ops/fractional_max_pool2d_meta.h>
#include <ATen/ops/fractional_max_pool3d_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/pool_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

// Mantissa width of the storage type the window starts are rounded to (0: no rounding).
cl_int storageBits(c10::ScalarType t) {
  return t == c10::kHalf ? 10 : t == c10::kBFloat16 ? 7 : 0;
}

void fractionalInto(const at::Tensor& self, const at::Tensor& samples, at::IntArrayRef kernel_size,
                    int spatial, const at::Tensor& out, const at::Tensor& indices) {
  const at::Tensor x = self.contiguous(), smp = samples.contiguous();
  const at::Tensor y = contiguousLike(out), ind = contiguousLike(indices);
  launchPoolKernel(x, "fractional_fwd", y.numel(), {y, ind, x, smp},
                   poolGeom(x, y, spatial, kernel_size), {spatial, storageBits(x.scalar_type())},
                   {});
  finishInto(out, y);
  finishInto(indices, ind);
}

// grad_input of the max at `indices` (positions within each input plane or volume).
at::Tensor scatterGrad(const at::Tensor& grad_output, const at::Tensor& indices,
                       const at::Tensor& grad_input, int spatial) {
  const at::Tensor go = grad_output.contiguous(), ind = indices.contiguous();
  const at::Tensor gi = contiguousLike(grad_input);
  const PoolGeom g = poolGeom(gi, go, spatial);
  launchPoolKernel(go, "index_scatter_bwd", gi.numel() > 0 ? g.P : 0, {gi, go, ind}, g, {}, {});
  finishInto(grad_input, gi);
  return grad_input;
}

template <int Spatial>
std::tuple<at::Tensor, at::Tensor> fractionalMaxPool(const at::Tensor& self,
                                                     at::IntArrayRef kernel_size,
                                                     at::IntArrayRef output_size,
                                                     const at::Tensor& random_samples) {
  checkSameDevice({self, random_samples});
  if (!nnFloating(self.scalar_type())) {
    auto r =
        runFallback(Spatial == 2 ? "aten::fractional_max_pool2d" : "aten::fractional_max_pool3d",
                    "", ivalues({self, kernel_size.vec(), output_size.vec(), random_samples}));
    return {r[0].toTensor(), r[1].toTensor()};
  }
  using Meta = std::conditional_t<Spatial == 2, at::meta::structured_fractional_max_pool2d,
                                  at::meta::structured_fractional_max_pool3d>;
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(self, kernel_size, output_size, random_samples);
  at::native::fractional_max_pool_check_shape<Spatial>(self, random_samples);
  if constexpr (Spatial == 2) {  // checked by CPU's kernel, not by the 2-D meta
    const char* what[] = {"height", "width"};
    for (int i = 0; i < 2; ++i)
      TORCH_CHECK(output_size[i] + kernel_size[i] - 1 <= self.size(i - 2),
                  "fractional_max_pool2d(): pool ", what[i], " ", kernel_size[i],
                  " too large relative to input ", what[i], " ", self.size(i - 2));
  }
  fractionalInto(self, random_samples, kernel_size, Spatial, s.output(0), s.output(1));
  return {s.output(0), s.output(1)};
}

at::Tensor fractionalMaxPool2dBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                       at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                       const at::Tensor& indices) {
  checkSameDevice({grad_output, self, indices});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(
               "aten::fractional_max_pool2d_backward", "",
               ivalues({grad_output, self, kernel_size.vec(), output_size.vec(), indices}))[0]
        .toTensor();
  Structured<at::meta::structured_fractional_max_pool2d_backward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, self, kernel_size, output_size, indices);
  return scatterGrad(grad_output, indices, s.output(0), 2);
}

at::Tensor fractionalMaxPool3dBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                       at::IntArrayRef kernel_size, at::IntArrayRef output_size,
                                       const at::Tensor& indices) {
  checkSameDevice({grad_output, self, indices});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(
               "aten::fractional_max_pool3d_backward", "",
               ivalues({grad_output, self, kernel_size.vec(), output_size.vec(), indices}))[0]
        .toTensor();
  // CPU's checks and messages (fractional_max_pool3d_backward_out).
  TORCH_CHECK(output_size.size() == 3, "fractional_max_pool3d_backward: output_size must be 3");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "fractional_max_pool3d_backward(): Expected 4D or 5D input, but got ", self.dim());
  const int64_t t = self.dim() - 3;
  const char* what[] = {"time", "height", "width"};
  for (int i = 0; i < 3; ++i)
    TORCH_CHECK(grad_output.dim() == self.dim() && output_size[i] == grad_output.size(t + i),
                "fractional_max_pool3d_backward_out(): gradOutput ", what[i], " unexpected");
  TORCH_CHECK(indices.sizes() == grad_output.sizes(),
              "fractional_max_pool3d_backward(): indices must have the shape of grad_output");
  at::Tensor gi = at::empty(self.sizes(), self.options());
  return scatterGrad(grad_output, indices, gi, 3);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fractional_max_pool2d", TORCH_FN(fractionalMaxPool<2>));
  m.impl("fractional_max_pool2d_backward", TORCH_FN(fractionalMaxPool2dBackward));
  m.impl("fractional_max_pool3d", TORCH_FN(fractionalMaxPool<3>));
  m.impl("fractional_max_pool3d_backward", TORCH_FN(fractionalMaxPool3dBackward));
}

}  // namespace torch_ocl::aten
