// 2-D nearest and bilinear upsampling (and 1-d nearest through the 2-d kernels), forward and
// backward, for float/double/half/bfloat16.
// The .vec overloads (F.interpolate) are composite and land here. Shapes and checks come from
// PyTorch's structured metas; source indices follow CPU PyTorch's arithmetic exactly.
#include <ATen/ATen.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/nn_common.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kUpsampleFamily;

// Mirrors UpGeom in upsample.cl.
struct alignas(8) UpGeom {
  cl_long P, H, W, OH, OW;
};

UpGeom upGeom(const at::Tensor& in, const at::Tensor& out) {
  UpGeom g{};
  g.H = in.size(-2), g.W = in.size(-1), g.OH = out.size(-2), g.OW = out.size(-1);
  g.P = in.size(0) * in.size(1);
  return g;
}

template <typename S>
void launchUp(const at::Tensor& anchor, const char* name, int64_t n, const at::Tensor& out,
              const at::Tensor& in, const UpGeom& g, S sh, S sw, std::optional<bool> align) {
  if (n <= 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kUpsampleFamily, "upsample.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  cl_uint i = 0;
  setArg(k, i, bufferOf(out));
  setArg(k, i, bufferOf(in));
  setArg(k, i, g);
  setArg(k, i, sh);
  setArg(k, i, sw);
  if (align) setArg(k, i, static_cast<cl_int>(*align));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

at::Tensor contiguousLike(const at::Tensor& t) {
  return t.is_contiguous() ? t : at::empty(t.sizes(), t.options());
}
void finish(const at::Tensor& dst, const at::Tensor& tmp) {
  if (!tmp.is_same(dst)) dst.copy_(tmp);
}

// CPU's float scale of nearest (compute_scales_value<float>).
cl_float nearestScale(int64_t in, int64_t out, std::optional<double> scale) {
  return at::native::compute_scales_value<float>(scale, in, out);
}

// Bilinear scales in the kernel's ACC precision, computed as CPU does in opmath.
template <typename S>
void linearScales(const UpGeom& g, bool align, std::optional<double> sh, std::optional<double> sw,
                  S* h, S* w) {
  *h = at::native::area_pixel_compute_scale<S>(g.H, g.OH, align, sh);
  *w = at::native::area_pixel_compute_scale<S>(g.W, g.OW, align, sw);
}

void bilinearLaunch(const at::Tensor& anchor, const char* name, int64_t n, const at::Tensor& out,
                    const at::Tensor& in, const UpGeom& g, bool align, std::optional<double> sh,
                    std::optional<double> sw) {
  if (anchor.scalar_type() == at::kDouble) {
    cl_double h, w;
    linearScales(g, align, sh, sw, &h, &w);
    launchUp(anchor, name, n, out, in, g, h, w, align);
  } else {
    cl_float h, w;
    linearScales(g, align, sh, sw, &h, &w);
    launchUp(anchor, name, n, out, in, g, h, w, align);
  }
}

at::Tensor upsampleNearest2d(const at::Tensor& self, at::IntArrayRef output_size,
                             std::optional<double> scales_h, std::optional<double> scales_w) {
  if (!nnFloating(self.scalar_type()))
    return runFallback("aten::upsample_nearest2d", "",
                       {self, output_size.vec(), scales_h, scales_w})[0]
        .toTensor();
  Structured<at::meta::structured_upsample_nearest2d> s(Mode::kFunctional, nullptr);
  s.meta(self, output_size, scales_h, scales_w);
  const at::Tensor x = self.contiguous(), y = contiguousLike(s.output(0));
  const UpGeom g = upGeom(x, y);
  launchUp(x, "nearest_fwd", y.numel(), y, x, g, nearestScale(g.H, g.OH, scales_h),
           nearestScale(g.W, g.OW, scales_w), std::nullopt);
  finish(s.output(0), y);
  return s.output(0);
}

at::Tensor upsampleNearest2dBackward(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                     at::IntArrayRef input_size, std::optional<double> scales_h,
                                     std::optional<double> scales_w) {
  if (!nnFloating(grad_output.scalar_type()))
    return runFallback("aten::upsample_nearest2d_backward", "",
                       {grad_output, output_size.vec(), input_size.vec(), scales_h, scales_w})[0]
        .toTensor();
  Structured<at::meta::structured_upsample_nearest2d_backward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, output_size, input_size, scales_h, scales_w);
  const at::Tensor go = grad_output.contiguous(), gi = contiguousLike(s.output(0));
  const UpGeom g = upGeom(gi, go);
  launchUp(go, "nearest_bwd", gi.numel(), gi, go, g, nearestScale(g.H, g.OH, scales_h),
           nearestScale(g.W, g.OW, scales_w), std::nullopt);
  finish(s.output(0), gi);
  return s.output(0);
}

at::Tensor upsampleBilinear2d(const at::Tensor& self, at::IntArrayRef output_size,
                              bool align_corners, std::optional<double> scales_h,
                              std::optional<double> scales_w) {
  if (!nnFloating(self.scalar_type()))
    return runFallback("aten::upsample_bilinear2d", "",
                       {self, output_size.vec(), align_corners, scales_h, scales_w})[0]
        .toTensor();
  Structured<at::meta::structured_upsample_bilinear2d> s(Mode::kFunctional, nullptr);
  s.meta(self, output_size, align_corners, scales_h, scales_w);
  const at::Tensor x = self.contiguous(), y = contiguousLike(s.output(0));
  bilinearLaunch(x, "bilinear_fwd", y.numel(), y, x, upGeom(x, y), align_corners, scales_h,
                 scales_w);
  finish(s.output(0), y);
  return s.output(0);
}

at::Tensor upsampleBilinear2dBackward(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                      at::IntArrayRef input_size, bool align_corners,
                                      std::optional<double> scales_h,
                                      std::optional<double> scales_w) {
  if (!nnFloating(grad_output.scalar_type()))
    return runFallback("aten::upsample_bilinear2d_backward", "",
                       {grad_output, output_size.vec(), input_size.vec(), align_corners, scales_h,
                        scales_w})[0]
        .toTensor();
  Structured<at::meta::structured_upsample_bilinear2d_backward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, output_size, input_size, align_corners, scales_h, scales_w);
  const at::Tensor go = grad_output.contiguous(), gi = contiguousLike(s.output(0));
  bilinearLaunch(go, "bilinear_bwd", gi.numel(), gi, go, upGeom(gi, go), align_corners, scales_h,
                 scales_w);
  finish(s.output(0), gi);
  return s.output(0);
}

// 1-d nearest: PyTorch's meta functions check and size; the 2-d kernels run on a height-1 view
// (source row 0 for the single output row).
at::Tensor& upsampleNearest1dOut(const at::Tensor& self, at::IntArrayRef output_size,
                                 std::optional<double> scales, at::Tensor& out) {
  if (!nnFloating(self.scalar_type())) {
    runFallback("aten::upsample_nearest1d", "out", {self, output_size.vec(), scales, out});
    return out;
  }
  Structured<at::meta::structured_upsample_nearest1d> s(Mode::kOut, &out);
  s.meta(self, output_size, scales);
  out.copy_(
      upsampleNearest2d(self.unsqueeze(2), {1, output_size[0]}, std::nullopt, scales).squeeze(2));
  return out;
}

at::Tensor upsampleNearest1d(const at::Tensor& self, at::IntArrayRef output_size,
                             std::optional<double> scales) {
  at::Tensor out = at::empty({0}, self.options());
  return upsampleNearest1dOut(self, output_size, scales, out);
}

at::Tensor& upsampleNearest1dBackwardOut(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                         at::IntArrayRef input_size, std::optional<double> scales,
                                         at::Tensor& grad_input) {
  if (!nnFloating(grad_output.scalar_type())) {
    runFallback("aten::upsample_nearest1d_backward", "grad_input",
                {grad_output, output_size.vec(), input_size.vec(), scales, grad_input});
    return grad_input;
  }
  Structured<at::meta::structured_upsample_nearest1d_backward> s(Mode::kOut, &grad_input);
  s.meta(grad_output, output_size, input_size, scales);
  grad_input.copy_(upsampleNearest2dBackward(grad_output.unsqueeze(2), {1, output_size[0]},
                                             {input_size[0], input_size[1], 1, input_size[2]},
                                             std::nullopt, scales)
                       .squeeze(2));
  return grad_input;
}

at::Tensor upsampleNearest1dBackward(const at::Tensor& grad_output, at::IntArrayRef output_size,
                                     at::IntArrayRef input_size, std::optional<double> scales) {
  at::Tensor gi = at::empty({0}, grad_output.options());
  return upsampleNearest1dBackwardOut(grad_output, output_size, input_size, scales, gi);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_bilinear2d", TORCH_FN(upsampleBilinear2d));
  m.impl("upsample_bilinear2d_backward", TORCH_FN(upsampleBilinear2dBackward));
  m.impl("upsample_nearest2d", TORCH_FN(upsampleNearest2d));
  m.impl("upsample_nearest1d", TORCH_FN(upsampleNearest1d));
  m.impl("upsample_nearest1d.out", TORCH_FN(upsampleNearest1dOut));
  m.impl("upsample_nearest1d_backward", TORCH_FN(upsampleNearest1dBackward));
  m.impl("upsample_nearest1d_backward.grad_input", TORCH_FN(upsampleNearest1dBackwardOut));
  m.impl("upsample_nearest2d_backward", TORCH_FN(upsampleNearest2dBackward));
}

}  // namespace torch_ocl::aten
