// 3-D max pooling with indices (forward for float/double/half/bfloat16 and integers, backward
// for the floating dtypes) on pool.cl's kernels, with CPU's argument checks and messages
// (ATen/native/Pool.h; the op has no structured meta), channels_last_3d outputs as CPU makes them;
// and max_unpool3d (a scatter). Other dtypes take the counted CPU fallback. The 3-D average and
// adaptive pools share pool.cpp's templates with the 2-D ones.
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/pool_common.h"

namespace torch_ocl::aten {
namespace {

// CPU's argument checks of max_pool3d_with_indices (forward and backward): kernel, stride,
// padding and dilation as (T, H, W), each given once or per dimension.
struct Window3d {
  int k[3], s[3], p[3], d[3];
};

Window3d maxPool3dWindow(at::IntArrayRef kernel_size, at::IntArrayRef stride,
                         at::IntArrayRef padding, at::IntArrayRef dilation) {
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
              "max_pool3d: kernel_size must either be a single int, or a tuple of three ints")
  TORCH_CHECK(stride.size() == 0 || stride.size() == 1 || stride.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints")
  TORCH_CHECK(padding.size() == 1 || padding.size() == 3,
              "max_pool3d: padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  auto at3 = [](at::IntArrayRef v, int i) {
    return at::native::safe_downcast<int, int64_t>(v.size() == 1 ? v[0] : v[i]);
  };
  Window3d w{};
  for (int i = 0; i < 3; ++i) {
    w.k[i] = at3(kernel_size, i);
    w.s[i] = stride.empty() ? w.k[i] : at3(stride, i);
    w.p[i] = at3(padding, i);
    w.d[i] = at3(dilation, i);
  }
  return w;
}

std::tuple<at::Tensor, at::Tensor> maxPool3d(const at::Tensor& self, at::IntArrayRef kernel_size,
                                             at::IntArrayRef stride, at::IntArrayRef padding,
                                             at::IntArrayRef dilation, bool ceil_mode) {
  if (!nnFloating(self.scalar_type()) && !nnInteger(self.scalar_type())) {
    auto r = runFallback(
        "aten::max_pool3d_with_indices", "",
        ivalues({self, kernel_size.vec(), stride.vec(), padding.vec(), dilation.vec(), ceil_mode}));
    return {r[0].toTensor(), r[1].toTensor()};
  }
  const Window3d w = maxPool3dWindow(kernel_size, stride, padding, dilation);
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "non-empty 4D or 5D (batch mode) tensor expected for input");
  int64_t in[3], out[3];
  for (int i = 0; i < 3; ++i) {
    in[i] = self.size(i - 3);
    out[i] =
        at::native::pooling_output_shape<int64_t>(in[i], w.k[i], w.p[i], w.s[i], w.d[i], ceil_mode);
  }
  at::native::pool3d_shape_check(self, self.size(-4), w.k[0], w.k[1], w.k[2], w.s[0], w.s[1],
                                 w.s[2], w.p[0], w.p[1], w.p[2], w.d[0], w.d[1], w.d[2], in[0],
                                 in[1], in[2], out[0], out[1], out[2],
                                 "max_pool3d_with_indices_out_cpu_template()");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 3);
  shape.insert(shape.end(), out, out + 3);
  const auto format = self.dim() == 5 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  at::Tensor y = at::empty(shape, self.options().memory_format(format));
  at::Tensor ind = at::empty(shape, self.options().dtype(at::kLong).memory_format(format));
  const at::Tensor x = self.contiguous(), yc = contiguousLike(y), ic = contiguousLike(ind);
  launchPoolKernel(x, "max_pool_fwd", yc.numel(), {yc, ic, x},
                   poolGeom(x, yc, 3, kernel_size, stride, padding, dilation), {}, {});
  finishInto(y, yc);
  finishInto(ind, ic);
  return {y, ind};
}

at::Tensor maxPool3dBackward(const at::Tensor& grad_output, const at::Tensor& self,
                             at::IntArrayRef kernel_size, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                             const at::Tensor& indices) {
  checkSameDevice({grad_output, self, indices});
  if (!nnFloating(self.scalar_type()) || grad_output.scalar_type() != self.scalar_type())
    return runFallback("aten::max_pool3d_with_indices_backward", "",
                       ivalues({grad_output, self, kernel_size.vec(), stride.vec(), padding.vec(),
                                dilation.vec(), ceil_mode, indices}))[0]
        .toTensor();
  const Window3d w = maxPool3dWindow(kernel_size, stride, padding, dilation);
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "non-empty 4D or 5D (batch mode) tensor expected for input");
  TORCH_CHECK(grad_output.dim() == self.dim() && indices.dim() == self.dim(),
              "max_pool3d_with_indices_backward: grad_output and indices must have ", self.dim(),
              " dimensions like the input");
  at::native::max_pool3d_backward_shape_check(
      self, grad_output, indices, self.size(-4), w.k[0], w.k[1], w.k[2], w.s[0], w.s[1], w.s[2],
      w.p[0], w.p[1], w.p[2], w.d[0], w.d[1], w.d[2], self.size(-3), self.size(-2), self.size(-1),
      grad_output.size(-3), grad_output.size(-2), grad_output.size(-1),
      "max_pool3d_with_indices_backward_out_cpu_template()");
  const auto format = self.dim() == 5 ? self.suggest_memory_format() : at::MemoryFormat::Contiguous;
  at::Tensor gi = at::empty(self.sizes(), self.options().memory_format(format));
  const at::Tensor go = grad_output.contiguous(), ind = indices.contiguous();
  const at::Tensor gc = contiguousLike(gi);
  launchPoolKernel(go, "max_pool_bwd", gc.numel(), {gc, go, ind},
                   poolGeom(gc, go, 3, kernel_size, stride, padding, dilation), {}, {});
  finishInto(gi, gc);
  return gi;
}

// max_unpool3d: zeros, then every input value scattered to its index in its output volume (as
// composite.cpp's max_unpool2d). An index outside the volume raises scatter's device-side index
// error (CPU: "Found an invalid max index").
at::Tensor& maxUnpool3dOut(const at::Tensor& self, const at::Tensor& indices,
                           at::IntArrayRef output_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5,
              "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with ",
              self.dim(), " dimensions.");
  TORCH_CHECK(output_size.size() == 3,
              "There should be exactly three elements (depth, height, width) in output_size, but "
              "got ",
              output_size.size(), " elements.");
  TORCH_CHECK(stride.size() == 3,
              "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3,
              "There should be exactly three elements (depth, height, width) in padding, but got: ",
              padding.size(), " elements.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, "max_unpooling3d_forward_out_cpu(): ",
                "Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
              "strides should be greater than zero, but got stride: ", stride);
  checkSameDevice({self, indices, out});
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 3);
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  at::native::resize_output(out, shape);
  out.zero_();
  if (self.numel() == 0) return out;
  const int64_t volumes = self.numel() / (self.size(-1) * self.size(-2) * self.size(-3));
  at::Tensor flat = out.is_contiguous() ? out : at::zeros(shape, out.options());
  flat.view({volumes, -1}).scatter_(1, indices.reshape({volumes, -1}), self.reshape({volumes, -1}));
  finishInto(out, flat);
  return out;
}

at::Tensor maxUnpool3d(const at::Tensor& self, const at::Tensor& indices,
                       at::IntArrayRef output_size, at::IntArrayRef stride,
                       at::IntArrayRef padding) {
  at::Tensor out = at::empty({0}, self.options());
  return maxUnpool3dOut(self, indices, output_size, stride, padding, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool3d_with_indices", TORCH_FN(maxPool3d));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(maxPool3dBackward));
  m.impl("max_unpool3d", TORCH_FN(maxUnpool3d));
  m.impl("max_unpool3d.out", TORCH_FN(maxUnpool3dOut));
}

}  // namespace torch_ocl::aten
