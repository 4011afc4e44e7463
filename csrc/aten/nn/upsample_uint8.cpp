// uint8 resampling (upsample_bilinear2d, upsample_bicubic2d, _upsample_bilinear2d_aa,
// _upsample_bicubic2d_aa) as CPU PyTorch's separable uint8 path (UpSampleKernel.cpp's
// separable_upsample_generic_Nd_kernel_impl with int16 weights): per dimension, the index
// ranges and double weights of HelperInterpBase, scaled to int16 with the largest precision that
// keeps them below 2^15; the passes run on the device (kernels/upsample_uint8.cl).
#include "aten/nn/upsample_uint8.h"

#include <ATen/ATen.h>
#include <ATen/native/UpSample.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

char kUpsampleUint8Family;

cl_kernel resampleKernel(c10::DeviceIndex idx) {
  cl_program prog = programs(idx).get({&kUpsampleUint8Family, 0}, [&] {
    return rt::ProgramSource{"upsample_uint8", withPrelude(kernels::source("upsample_uint8.cl")),
                             ""};
  });
  return programs(idx).kernel(prog, "resample_u8");
}

double linearFilter(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double cubicFilter(double x, double a) {
  x = std::abs(x);
  if (x < 1.0) return at::native::cubic_convolution1<double>(x, a);
  if (x < 2.0) return at::native::cubic_convolution2<double>(x, a);
  return 0.0;
}

// One dimension's index ranges (xmin, xsize) and int16 weights (k per output index) on the
// device, and the weights' precision.
struct Ranges {
  at::Tensor xmin, xsize, weights;
  int64_t k = 0;
  int prec = 0;
};

Ranges ranges(int64_t in, int64_t out, bool cubic, bool aa, bool align, std::optional<double> opt,
              const at::TensorOptions& dev) {
  const int interp = cubic ? 4 : 2;
  const double a = aa ? -0.5 : -0.75;  // Keys' cubic for antialias (PIL), OpenCV's without
  const auto filter = [&](double x) { return cubic ? cubicFilter(x, a) : linearFilter(x); };
  const double scale = at::native::area_pixel_compute_scale<double>(in, out, align, opt);
  double support = interp * 0.5;
  int64_t k = interp;
  if (aa) {
    support = scale >= 1.0 ? (interp * 0.5) * scale : interp * 0.5;
    k = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  }
  std::vector<double> w(static_cast<size_t>(out * k), 0.0);
  std::vector<int32_t> xmin(static_cast<size_t>(out)), xsize(static_cast<size_t>(out));
  double wt_max = 0.0;
  for (int64_t i = 0; i < out; ++i) {
    double* wp = w.data() + i * k;
    int64_t lo = 0, size = 0;
    double m = 0.0;
    if (aa) {  // _compute_indices_min_size_weights_aa
      const double center = scale * (i + 0.5);
      const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
      lo = std::max(static_cast<int64_t>(center - support + 0.5), static_cast<int64_t>(0));
      size = std::min(static_cast<int64_t>(center + support + 0.5), in) - lo;
      size = std::clamp(size, static_cast<int64_t>(0), k);
      double total = 0.0;
      for (int64_t j = 0; j < size; ++j) {
        wp[j] = filter((j + lo - center + 0.5) * invscale);
        total += wp[j];
      }
      if (total != 0.0)
        for (int64_t j = 0; j < size; ++j) {
          wp[j] /= total;
          m = std::max(m, wp[j]);
        }
    } else {  // _compute_indices_min_size_weights: out-of-range taps fold onto the edge
      const double real = at::native::area_pixel_compute_source_index<double>(scale, i, align,
                                                                              /*cubic=*/cubic);
      double lambda = 0.0;
      int64_t index = 0;
      at::native::guard_index_and_lambda(real, in, index, lambda);
      const auto sup = static_cast<int64_t>(k * 0.5);
      const int64_t ub_min = index - sup + 1, ub_max = index + sup + 1;
      lo = std::max(ub_min, static_cast<int64_t>(0));
      size = std::clamp(std::min(ub_max, in) - lo, static_cast<int64_t>(0), k);
      int64_t wi = 0;
      for (int64_t j = 0; j < k; ++j) {
        wp[j] = 0.0;
        const double v = filter(static_cast<double>(j + 1 - sup) - lambda);
        if (ub_min + j <= 0)
          wi = 0;
        else if (ub_min + j >= in - 1)
          wi = size - 1;
        wp[wi] += v;
        m = std::max(m, wp[wi]);
        ++wi;
      }
    }
    wt_max = std::max(wt_max, m);
    xmin[static_cast<size_t>(i)] = static_cast<int32_t>(lo);
    xsize[static_cast<size_t>(i)] = static_cast<int32_t>(size);
  }
  int prec = 0;
  for (prec = 0; prec < 22; ++prec) {
    const int next = static_cast<int>(0.5 + wt_max * (1 << (prec + 1)));
    if (next >= (1 << 15)) break;
  }
  std::vector<int16_t> w16(w.size());
  for (size_t j = 0; j < w.size(); ++j) {
    const double v = w[j] * (1 << prec);
    w16[j] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
  }
  const auto host = [](auto& v, at::ScalarType t) {
    return at::from_blob(v.data(), {static_cast<int64_t>(v.size())}, at::TensorOptions().dtype(t))
        .clone();
  };
  Ranges r;
  r.xmin = host(xmin, at::kInt).to(dev.dtype(at::kInt));
  r.xsize = host(xsize, at::kInt).to(dev.dtype(at::kInt));
  r.weights = host(w16, at::kShort).to(dev.dtype(at::kShort));
  r.k = k;
  r.prec = prec;
  return r;
}

// dst (outer, len_out, inner) from src (outer, len_in, inner), both contiguous.
void pass(const at::Tensor& src, const at::Tensor& dst, const Ranges& r, int64_t outer,
          int64_t len_in, int64_t len_out, int64_t inner) {
  const int64_t n = outer * len_out * inner;
  if (n == 0) return;
  TORCH_INTERNAL_ASSERT(r.prec > 0);
  const c10::DeviceIndex idx = dst.device().index();
  OCL_TRY
  cl_kernel kern = resampleKernel(idx);
  setArgs(kern, bufferOf(src), bufferOf(dst), bufferOf(r.xmin), bufferOf(r.xsize),
          bufferOf(r.weights), static_cast<cl_long>(outer), static_cast<cl_long>(len_in),
          static_cast<cl_long>(len_out), static_cast<cl_long>(inner), static_cast<cl_int>(r.k),
          static_cast<cl_int>(r.prec));
  launch1D(device(idx), currentQueue(idx), kern, n);
  OCL_CATCH
}

}  // namespace

void resampleUint8(const at::Tensor& src, const at::Tensor& dst, bool cubic, bool antialias,
                   bool align_corners, std::optional<double> scale_h,
                   std::optional<double> scale_w) {
  const int64_t nc = src.size(0) * src.size(1), h = src.size(2), w = src.size(3);
  const int64_t oh = dst.size(2), ow = dst.size(3);
  if (h == oh && w == ow) {  // CPU copies when the shapes match
    dst.copy_(src);
    return;
  }
  at::Tensor cur = src.contiguous();
  const at::Tensor out = dst.is_contiguous()
                             ? dst
                             : at::empty(dst.sizes(), dst.options(), at::MemoryFormat::Contiguous);
  if (w != ow) {  // horizontal first, into the output when it is the only pass
    at::Tensor tmp = h == oh ? out : at::empty({src.size(0), src.size(1), h, ow}, src.options());
    pass(cur, tmp, ranges(w, ow, cubic, antialias, align_corners, scale_w, src.options()), nc * h,
         w, ow, 1);
    cur = tmp;
  }
  if (h != oh)
    pass(cur, out, ranges(h, oh, cubic, antialias, align_corners, scale_h, src.options()), nc, h,
         oh, ow);
  if (!out.is_same(dst)) dst.copy_(out);
}

}  // namespace torch_ocl::aten
