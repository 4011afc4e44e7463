// Linear (upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d), bicubic
// (upsample_bicubic2d) and antialiased (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa,
// _upsample_lanczos2d_aa) upsampling, forward and backward, with align_corners and scale factors,
// for float/double/half/bfloat16, and the 2-d forwards for uint8 as CPU's fixed-point path
// (upsample_uint8.cpp); other dtypes take the counted CPU fallback. Shapes and checks come
// from PyTorch's structured metas; scales are computed as CPU does (area_pixel_compute_scale in the
// arithmetic type) and source indices and weights in upsample.cl follow CPU's helpers.
#include <ATen/ATen.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/_upsample_bicubic2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bicubic2d_aa_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_bilinear2d_aa_meta.h>
#include <ATen/ops/_upsample_lanczos2d_aa_backward_meta.h>
#include <ATen/ops/_upsample_lanczos2d_aa_meta.h>
#include <ATen/ops/upsample_bicubic2d_backward_meta.h>
#include <ATen/ops/upsample_bicubic2d_meta.h>
#include <ATen/ops/upsample_bilinear2d_backward_meta.h>
#include <ATen/ops/upsample_bilinear2d_meta.h>
#include <ATen/ops/upsample_linear1d_backward_meta.h>
#include <ATen/ops/upsample_linear1d_meta.h>
#include <ATen/ops/upsample_trilinear3d_backward_meta.h>
#include <ATen/ops/upsample_trilinear3d_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/nn/upsample_uint8.h"
#include "aten/structured.h"
#include "aten/upsample_common.h"

namespace torch_ocl::aten {
namespace {

enum class Interp { kLinear, kCubic, kAaLinear, kAaCubic, kAaLanczos };

// One interpolating op: its dimensionality, kernel, metas and schema name.
template <int Spatial, Interp Kind, const char* Name, class FwdMeta, class BwdMeta>
struct InterpOp {
  static constexpr int kSpatial = Spatial;
  static constexpr Interp kKind = Kind;
  static constexpr const char* kName = Name;
  using Fwd = FwdMeta;
  using Bwd = BwdMeta;
};
constexpr char kLinear1d[] = "aten::upsample_linear1d";
constexpr char kBilinear2d[] = "aten::upsample_bilinear2d";
constexpr char kTrilinear3d[] = "aten::upsample_trilinear3d";
constexpr char kBicubic2d[] = "aten::upsample_bicubic2d";
constexpr char kBilinear2dAa[] = "aten::_upsample_bilinear2d_aa";
constexpr char kBicubic2dAa[] = "aten::_upsample_bicubic2d_aa";
constexpr char kLanczos2dAa[] = "aten::_upsample_lanczos2d_aa";
using Linear1d = InterpOp<1, Interp::kLinear, kLinear1d, at::meta::structured_upsample_linear1d,
                          at::meta::structured_upsample_linear1d_backward>;
using Bilinear2d =
    InterpOp<2, Interp::kLinear, kBilinear2d, at::meta::structured_upsample_bilinear2d,
             at::meta::structured_upsample_bilinear2d_backward>;
using Trilinear3d =
    InterpOp<3, Interp::kLinear, kTrilinear3d, at::meta::structured_upsample_trilinear3d,
             at::meta::structured_upsample_trilinear3d_backward>;
using Bicubic2d = InterpOp<2, Interp::kCubic, kBicubic2d, at::meta::structured_upsample_bicubic2d,
                           at::meta::structured_upsample_bicubic2d_backward>;
using Bilinear2dAa =
    InterpOp<2, Interp::kAaLinear, kBilinear2dAa, at::meta::structured__upsample_bilinear2d_aa,
             at::meta::structured__upsample_bilinear2d_aa_backward>;
using Bicubic2dAa =
    InterpOp<2, Interp::kAaCubic, kBicubic2dAa, at::meta::structured__upsample_bicubic2d_aa,
             at::meta::structured__upsample_bicubic2d_aa_backward>;
using Lanczos2dAa =
    InterpOp<2, Interp::kAaLanczos, kLanczos2dAa, at::meta::structured__upsample_lanczos2d_aa,
             at::meta::structured__upsample_lanczos2d_aa_backward>;

// CPU's scale of one dimension in the kernel's arithmetic type (exact in the double carrier).
UpArg interpScale(c10::ScalarType t, int64_t in, int64_t out, bool align,
                  std::optional<double> scale) {
  if (t == c10::kDouble)
    return {UpArg::kDouble, at::native::area_pixel_compute_scale<double>(in, out, align, scale)};
  return {UpArg::kFloat, at::native::area_pixel_compute_scale<float>(in, out, align, scale)};
}

// Runs the forward (small -> large) or backward (large -> small) kernel into dst, the meta's
// output, through a contiguous temporary if PyTorch made dst channels_last.
void interpInto(bool backward, int spatial, Interp kind, const at::Tensor& small,
                const at::Tensor& large, const at::Tensor& dst, bool align,
                const UpScales& scales) {
  const UpGeom g = upGeom(small, large, spatial);
  const c10::ScalarType t = dst.scalar_type();
  const at::Tensor src = (backward ? large : small).contiguous();
  const at::Tensor tmp = dst.is_contiguous() ? dst : at::empty(dst.sizes(), dst.options());
  const UpArg sh = interpScale(t, g.H, g.OH, align, scales[1]);
  const UpArg sw = interpScale(t, g.W, g.OW, align, scales[2]);
  const UpArg al{UpArg::kInt, static_cast<double>(align)};
  const bool aa =
      kind == Interp::kAaLinear || kind == Interp::kAaCubic || kind == Interp::kAaLanczos;
  if (aa) {
    // The kernels' filter kind: 0 triangle, 1 cubic, 2 Lanczos-3.
    const int filter = kind == Interp::kAaLanczos ? 2 : kind == Interp::kAaCubic ? 1 : 0;
    launchUpsample(src, backward ? "aa_bwd" : "aa_fwd", tmp.numel(), tmp, src, g,
                   {sh, sw, UpArg{UpArg::kInt, static_cast<double>(filter)}});
  } else if (kind == Interp::kCubic && backward && g.H == g.OH && g.W == g.OW) {
    // CPU's bicubic backward copies the gradient when the sizes match, although its forward
    // interpolates there with a given scale factor; do the same.
    tmp.copy_(src);
  } else if (kind == Interp::kCubic) {
    launchUpsample(src, backward ? "cubic_bwd" : "cubic_fwd", tmp.numel(), tmp, src, g,
                   {sh, sw, al});
  } else {
    launchUpsample(src, backward ? "linear_bwd" : "linear_fwd", tmp.numel(), tmp, src, g,
                   {interpScale(t, g.D, g.OD, align, scales[0]), sh, sw, al,
                    UpArg{UpArg::kInt, static_cast<double>(spatial)}});
  }
  if (!tmp.is_same(dst)) dst.copy_(tmp);
}

template <class Op, class... S>
at::Tensor interpFwd(const at::Tensor& self, at::IntArrayRef output_size, bool align, S... scales) {
  // CPU's int16 fixed-point path (Lanczos' uint8 path is not here yet: the counted fallback)
  if (Op::kSpatial == 2 && self.scalar_type() == at::kByte && Op::kKind != Interp::kAaLanczos) {
    Structured<typename Op::Fwd> s(Mode::kFunctional, nullptr);
    s.meta(self, output_size, align, scales...);
    const UpScales sc = upScales(scales...);
    const bool cubic = Op::kKind == Interp::kCubic || Op::kKind == Interp::kAaCubic;
    const bool aa = Op::kKind == Interp::kAaLinear || Op::kKind == Interp::kAaCubic;
    resampleUint8(self, s.output(0), cubic, aa, align, sc[1], sc[2]);
    return s.output(0);
  }
  if (!nnFloating(self.scalar_type()))
    return runFallback(Op::kName, "", {self, output_size.vec(), align, scales...})[0].toTensor();
  Structured<typename Op::Fwd> s(Mode::kFunctional, nullptr);
  s.meta(self, output_size, align, scales...);
  interpInto(false, Op::kSpatial, Op::kKind, self, s.output(0), s.output(0), align,
             upScales(scales...));
  return s.output(0);
}

template <class Op, class... S>
at::Tensor interpBwd(const at::Tensor& grad_output, at::IntArrayRef output_size,
                     at::IntArrayRef input_size, bool align, S... scales) {
  if (!nnFloating(grad_output.scalar_type())) {
    const std::string name = std::string(Op::kName) + "_backward";
    return runFallback(name.c_str(), "",
                       {grad_output, output_size.vec(), input_size.vec(), align, scales...})[0]
        .toTensor();
  }
  Structured<typename Op::Bwd> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, output_size, input_size, align, scales...);
  interpInto(true, Op::kSpatial, Op::kKind, s.output(0), grad_output, s.output(0), align,
             upScales(scales...));
  return s.output(0);
}

using Scale = std::optional<double>;

at::Tensor linear1d(const at::Tensor& self, at::IntArrayRef size, bool align, Scale w) {
  return interpFwd<Linear1d>(self, size, align, w);
}
at::Tensor linear1dBwd(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, bool align,
                       Scale w) {
  return interpBwd<Linear1d>(go, size, in, align, w);
}
template <class Op>
at::Tensor interp2d(const at::Tensor& self, at::IntArrayRef size, bool align, Scale h, Scale w) {
  return interpFwd<Op>(self, size, align, h, w);
}
template <class Op>
at::Tensor interp2dBwd(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, bool align,
                       Scale h, Scale w) {
  return interpBwd<Op>(go, size, in, align, h, w);
}
at::Tensor trilinear3d(const at::Tensor& self, at::IntArrayRef size, bool align, Scale d, Scale h,
                       Scale w) {
  return interpFwd<Trilinear3d>(self, size, align, d, h, w);
}
at::Tensor trilinear3dBwd(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in,
                          bool align, Scale d, Scale h, Scale w) {
  return interpBwd<Trilinear3d>(go, size, in, align, d, h, w);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_upsample_bicubic2d_aa", TORCH_FN(interp2d<Bicubic2dAa>));
  m.impl("_upsample_bicubic2d_aa_backward", TORCH_FN(interp2dBwd<Bicubic2dAa>));
  m.impl("_upsample_bilinear2d_aa", TORCH_FN(interp2d<Bilinear2dAa>));
  m.impl("_upsample_bilinear2d_aa_backward", TORCH_FN(interp2dBwd<Bilinear2dAa>));
  m.impl("_upsample_lanczos2d_aa", TORCH_FN(interp2d<Lanczos2dAa>));
  m.impl("_upsample_lanczos2d_aa_backward", TORCH_FN(interp2dBwd<Lanczos2dAa>));
  m.impl("upsample_bicubic2d", TORCH_FN(interp2d<Bicubic2d>));
  m.impl("upsample_bicubic2d_backward", TORCH_FN(interp2dBwd<Bicubic2d>));
  m.impl("upsample_bilinear2d", TORCH_FN(interp2d<Bilinear2d>));
  m.impl("upsample_bilinear2d_backward", TORCH_FN(interp2dBwd<Bilinear2d>));
  m.impl("upsample_linear1d", TORCH_FN(linear1d));
  m.impl("upsample_linear1d_backward", TORCH_FN(linear1dBwd));
  m.impl("upsample_trilinear3d", TORCH_FN(trilinear3d));
  m.impl("upsample_trilinear3d_backward", TORCH_FN(trilinear3dBwd));
}

}  // namespace torch_ocl::aten
