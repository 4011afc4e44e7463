// Nearest and nearest-exact upsampling in 1, 2 and 3 dimensions (upsample_nearest{1,2,3}d,
// _upsample_nearest_exact{1,2,3}d), forward and backward, for float/double/half/bfloat16 (and
// uint8 forward, as CPU); other dtypes take the counted CPU fallback. Also upsample.cl's shared
// launch (upsample_common.h). The .vec overloads (F.interpolate) are composite and land here.
// Shapes and checks come from PyTorch's structured metas; source indices follow CPU PyTorch's
// arithmetic exactly.
#include <ATen/ATen.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/structured.h"
#include "aten/upsample_common.h"

namespace torch_ocl::aten {

namespace {
char kUpsampleFamily;
}  // namespace

UpGeom upGeom(const at::Tensor& in, const at::Tensor& out, int spatial) {
  UpGeom g{};
  g.D = spatial >= 3 ? in.size(-3) : 1, g.H = spatial >= 2 ? in.size(-2) : 1, g.W = in.size(-1);
  g.OD = spatial >= 3 ? out.size(-3) : 1, g.OH = spatial >= 2 ? out.size(-2) : 1;
  g.OW = out.size(-1);
  g.P = in.size(0) * in.size(1);
  return g;
}

void launchUpsample(const at::Tensor& anchor, const char* name, int64_t n, const at::Tensor& out,
                    const at::Tensor& in, const UpGeom& g, std::initializer_list<UpArg> args) {
  if (n <= 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kUpsampleFamily, "upsample.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  cl_uint i = 0;
  setArg(k, i, bufferOf(out));
  setArg(k, i, bufferOf(in));
  setArg(k, i, g);
  for (const UpArg& a : args) {
    if (a.kind == UpArg::kFloat)
      setArg(k, i, static_cast<cl_float>(a.value));
    else if (a.kind == UpArg::kDouble)
      setArg(k, i, static_cast<cl_double>(a.value));
    else
      setArg(k, i, static_cast<cl_int>(a.value));
  }
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

namespace {

// One nearest op: its dimensionality, index rule, metas and schema name (for the fallback).
template <int Spatial, bool Exact, const char* Name, class FwdMeta, class BwdMeta>
struct NearestOp {
  static constexpr int kSpatial = Spatial;
  static constexpr bool kExact = Exact;
  static constexpr const char* kName = Name;
  using Fwd = FwdMeta;
  using Bwd = BwdMeta;
};
constexpr char kNearest1d[] = "aten::upsample_nearest1d";
constexpr char kNearest2d[] = "aten::upsample_nearest2d";
constexpr char kNearest3d[] = "aten::upsample_nearest3d";
constexpr char kExact1d[] = "aten::_upsample_nearest_exact1d";
constexpr char kExact2d[] = "aten::_upsample_nearest_exact2d";
constexpr char kExact3d[] = "aten::_upsample_nearest_exact3d";
using Nearest1d = NearestOp<1, false, kNearest1d, at::meta::structured_upsample_nearest1d,
                            at::meta::structured_upsample_nearest1d_backward>;
using Nearest2d = NearestOp<2, false, kNearest2d, at::meta::structured_upsample_nearest2d,
                            at::meta::structured_upsample_nearest2d_backward>;
using Nearest3d = NearestOp<3, false, kNearest3d, at::meta::structured_upsample_nearest3d,
                            at::meta::structured_upsample_nearest3d_backward>;
using NearestExact1d = NearestOp<1, true, kExact1d, at::meta::structured__upsample_nearest_exact1d,
                                 at::meta::structured__upsample_nearest_exact1d_backward>;
using NearestExact2d = NearestOp<2, true, kExact2d, at::meta::structured__upsample_nearest_exact2d,
                                 at::meta::structured__upsample_nearest_exact2d_backward>;
using NearestExact3d = NearestOp<3, true, kExact3d, at::meta::structured__upsample_nearest_exact3d,
                                 at::meta::structured__upsample_nearest_exact3d_backward>;

// Runs nearest_fwd (small -> large) or nearest_bwd (large -> small) into dst, the meta's
// output, through a contiguous temporary if PyTorch made dst channels_last.
void nearestInto(bool backward, int spatial, bool exact, const at::Tensor& small,
                 const at::Tensor& large, const at::Tensor& dst, const UpScales& scales) {
  const UpGeom g = upGeom(small, large, spatial);
  auto scale = [&](int64_t in, int64_t out, int i) {
    return UpArg{UpArg::kFloat, at::native::compute_scales_value<float>(scales[i], in, out)};
  };
  const at::Tensor src = (backward ? large : small).contiguous();
  const at::Tensor tmp = dst.is_contiguous() ? dst : at::empty(dst.sizes(), dst.options());
  launchUpsample(src, backward ? "nearest_bwd" : "nearest_fwd", tmp.numel(), tmp, src, g,
                 {scale(g.D, g.OD, 0), scale(g.H, g.OH, 1), scale(g.W, g.OW, 2),
                  UpArg{UpArg::kInt, static_cast<double>(exact)}});
  if (!tmp.is_same(dst)) dst.copy_(tmp);
}

// uint8 (no floating kernel program): one index_select per spatial dimension on the device,
// with the source indices of CPU's own nearest_idx / nearest_exact_idx.
void nearestBytes(const at::Tensor& self, const at::Tensor& dst, int spatial, bool exact,
                  const UpScales& scales) {
  at::Tensor r = self;
  for (int i = 0; i < spatial; ++i) {
    const int64_t d = self.dim() - spatial + i, in = self.size(d), n = dst.size(d);
    const std::optional<double> scale = scales[3 - spatial + i];
    std::vector<int64_t> src(n);
    for (int64_t o = 0; o < n; ++o)
      src[o] = exact ? at::native::nearest_exact_idx(o, in, n, scale)
                     : at::native::nearest_idx(o, in, n, scale);
    r = r.index_select(d, at::tensor(src, at::kLong).to(self.device()));
  }
  dst.copy_(r);
}

// out == nullptr: the functional form; else the .out form writing `*out`.
// The checks of the generated structured out= kernels (resize_out): the result's device and dtype.
void checkOut(const at::Tensor* out, const at::Tensor& like) {
  if (!out) return;
  TORCH_CHECK(out->device() == like.device(), "Expected out tensor to have device ", like.device(),
              ", but got ", out->device(), " instead");
  TORCH_CHECK(out->scalar_type() == like.scalar_type(), "Expected out tensor to have dtype ",
              like.dtype(), ", but got ", out->dtype(), " instead");
}

template <class Op, class... S>
at::Tensor nearestFwd(at::Tensor* out, const at::Tensor& self, at::IntArrayRef output_size,
                      S... scales) {
  // uint8 as CPU has it; other integers get CPU's error there
  if (!nnFloating(self.scalar_type()) && self.scalar_type() != at::kByte) {
    std::vector<c10::IValue> args{self, output_size.vec(), scales...};
    if (out) args.emplace_back(*out);
    return runFallback(Op::kName, out ? "out" : "", std::move(args))[0].toTensor();
  }
  checkOut(out, self);
  Structured<typename Op::Fwd> s(out ? Mode::kOut : Mode::kFunctional, out);
  s.meta(self, output_size, scales...);
  if (self.scalar_type() == at::kByte) {
    nearestBytes(self, s.output(0), Op::kSpatial, Op::kExact, upScales(scales...));
    return s.output(0);
  }
  nearestInto(false, Op::kSpatial, Op::kExact, self, s.output(0), s.output(0), upScales(scales...));
  return s.output(0);
}

template <class Op, class... S>
at::Tensor nearestBwd(at::Tensor* grad_input, const at::Tensor& grad_output,
                      at::IntArrayRef output_size, at::IntArrayRef input_size, S... scales) {
  const std::string name = std::string(Op::kName) + "_backward";
  if (!nnFloating(grad_output.scalar_type())) {
    std::vector<c10::IValue> args{grad_output, output_size.vec(), input_size.vec(), scales...};
    if (grad_input) args.emplace_back(*grad_input);
    return runFallback(name.c_str(), grad_input ? "grad_input" : "", std::move(args))[0].toTensor();
  }
  checkOut(grad_input, grad_output);
  Structured<typename Op::Bwd> s(grad_input ? Mode::kOut : Mode::kFunctional, grad_input);
  s.meta(grad_output, output_size, input_size, scales...);
  nearestInto(true, Op::kSpatial, Op::kExact, s.output(0), grad_output, s.output(0),
              upScales(scales...));
  return s.output(0);
}

using Scale = std::optional<double>;

template <class Op>
at::Tensor nearest1d(const at::Tensor& self, at::IntArrayRef size, Scale s) {
  return nearestFwd<Op>(nullptr, self, size, s);
}
template <class Op>
at::Tensor& nearest1dOut(const at::Tensor& self, at::IntArrayRef size, Scale s, at::Tensor& out) {
  nearestFwd<Op>(&out, self, size, s);
  return out;
}
template <class Op>
at::Tensor nearest1dBwd(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, Scale s) {
  return nearestBwd<Op>(nullptr, go, size, in, s);
}
template <class Op>
at::Tensor& nearest1dBwdOut(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, Scale s,
                            at::Tensor& gi) {
  nearestBwd<Op>(&gi, go, size, in, s);
  return gi;
}
template <class Op>
at::Tensor nearest2d(const at::Tensor& self, at::IntArrayRef size, Scale h, Scale w) {
  return nearestFwd<Op>(nullptr, self, size, h, w);
}
template <class Op>
at::Tensor nearest2dBwd(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, Scale h,
                        Scale w) {
  return nearestBwd<Op>(nullptr, go, size, in, h, w);
}
template <class Op>
at::Tensor& nearest2dOut(const at::Tensor& self, at::IntArrayRef size, Scale h, Scale w,
                         at::Tensor& out) {
  nearestFwd<Op>(&out, self, size, h, w);
  return out;
}
template <class Op>
at::Tensor& nearest2dBwdOut(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, Scale h,
                            Scale w, at::Tensor& gi) {
  nearestBwd<Op>(&gi, go, size, in, h, w);
  return gi;
}
template <class Op>
at::Tensor& nearest3dOut(const at::Tensor& self, at::IntArrayRef size, Scale d, Scale h, Scale w,
                         at::Tensor& out) {
  nearestFwd<Op>(&out, self, size, d, h, w);
  return out;
}
template <class Op>
at::Tensor& nearest3dBwdOut(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, Scale d,
                            Scale h, Scale w, at::Tensor& gi) {
  nearestBwd<Op>(&gi, go, size, in, d, h, w);
  return gi;
}
template <class Op>
at::Tensor nearest3d(const at::Tensor& self, at::IntArrayRef size, Scale d, Scale h, Scale w) {
  return nearestFwd<Op>(nullptr, self, size, d, h, w);
}
template <class Op>
at::Tensor nearest3dBwd(const at::Tensor& go, at::IntArrayRef size, at::IntArrayRef in, Scale d,
                        Scale h, Scale w) {
  return nearestBwd<Op>(nullptr, go, size, in, d, h, w);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_upsample_nearest_exact1d", TORCH_FN(nearest1d<NearestExact1d>));
  m.impl("_upsample_nearest_exact1d.out", TORCH_FN(nearest1dOut<NearestExact1d>));
  m.impl("_upsample_nearest_exact1d_backward", TORCH_FN(nearest1dBwd<NearestExact1d>));
  m.impl("_upsample_nearest_exact1d_backward.grad_input",
         TORCH_FN(nearest1dBwdOut<NearestExact1d>));
  m.impl("_upsample_nearest_exact2d", TORCH_FN(nearest2d<NearestExact2d>));
  m.impl("_upsample_nearest_exact2d.out", TORCH_FN(nearest2dOut<NearestExact2d>));
  m.impl("_upsample_nearest_exact2d_backward", TORCH_FN(nearest2dBwd<NearestExact2d>));
  m.impl("_upsample_nearest_exact2d_backward.grad_input",
         TORCH_FN(nearest2dBwdOut<NearestExact2d>));
  m.impl("_upsample_nearest_exact3d", TORCH_FN(nearest3d<NearestExact3d>));
  m.impl("_upsample_nearest_exact3d.out", TORCH_FN(nearest3dOut<NearestExact3d>));
  m.impl("_upsample_nearest_exact3d_backward", TORCH_FN(nearest3dBwd<NearestExact3d>));
  m.impl("_upsample_nearest_exact3d_backward.grad_input",
         TORCH_FN(nearest3dBwdOut<NearestExact3d>));
  m.impl("upsample_nearest1d", TORCH_FN(nearest1d<Nearest1d>));
  m.impl("upsample_nearest1d.out", TORCH_FN(nearest1dOut<Nearest1d>));
  m.impl("upsample_nearest1d_backward", TORCH_FN(nearest1dBwd<Nearest1d>));
  m.impl("upsample_nearest1d_backward.grad_input", TORCH_FN(nearest1dBwdOut<Nearest1d>));
  m.impl("upsample_nearest2d", TORCH_FN(nearest2d<Nearest2d>));
  m.impl("upsample_nearest2d.out", TORCH_FN(nearest2dOut<Nearest2d>));
  m.impl("upsample_nearest2d_backward", TORCH_FN(nearest2dBwd<Nearest2d>));
  m.impl("upsample_nearest2d_backward.grad_input", TORCH_FN(nearest2dBwdOut<Nearest2d>));
  m.impl("upsample_nearest3d", TORCH_FN(nearest3d<Nearest3d>));
  m.impl("upsample_nearest3d.out", TORCH_FN(nearest3dOut<Nearest3d>));
  m.impl("upsample_nearest3d_backward", TORCH_FN(nearest3dBwd<Nearest3d>));
  m.impl("upsample_nearest3d_backward.grad_input", TORCH_FN(nearest3dBwdOut<Nearest3d>));
}

}  // namespace torch_ocl::aten
