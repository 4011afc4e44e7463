// Convolutions (1-D and 2-D, transposed or not, any stride/padding/dilation/groups) through
// im2col/col2im kernels and batched GEMMs (at::bmm, native through CLBlast for float32).
// PyTorch routes every PrivateUse1 convolution through at::_convolution, whose backend choice
// for a device it does not know is ConvBackend::Overrideable: convolution_overrideable and
// convolution_backward_overrideable (shapes are already checked there). 3-D convolutions and
// integer dtypes go through the counted CPU fallback of aten::convolution.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "aten/fallback.h"
#include "aten/gemm.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kIm2colFamily;

// Mirrors ConvGeom in im2col.cl.
struct alignas(8) ConvGeom {
  cl_long N, C, H, W;
  cl_long KH, KW, OH, OW;
  cl_long sh, sw, ph, pw, dh, dw;
  cl_long sn, sc, sy, sx;
};

// A convolution seen as 2-D: 1-D inputs get H = 1 (kernel 1, stride 1, padding 0).
struct Params {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, oph = 0, opw = 0, groups = 1;
};

Params params2d(at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                at::IntArrayRef output_padding, int64_t groups) {
  Params p;
  auto last = [](at::IntArrayRef v, int64_t dflt) { return v.empty() ? dflt : v.back(); };
  auto first = [](at::IntArrayRef v, int64_t dflt) { return v.size() < 2 ? dflt : v.front(); };
  p.sh = first(stride, 1), p.sw = last(stride, 1);
  p.ph = first(padding, 0), p.pw = last(padding, 0);
  p.dh = first(dilation, 1), p.dw = last(dilation, 1);
  p.oph = first(output_padding, 0), p.opw = last(output_padding, 0);
  p.groups = groups;
  return p;
}

// image: (nb, C, Hi, Wi) with any strides; col spatial size (Hc, Wc).
ConvGeom geometry(const at::Tensor& image, int64_t kh, int64_t kw, int64_t hc, int64_t wc,
                  const Params& p) {
  ConvGeom g{};
  g.N = image.size(0), g.C = image.size(1), g.H = image.size(2), g.W = image.size(3);
  g.KH = kh, g.KW = kw, g.OH = hc, g.OW = wc;
  g.sh = p.sh, g.sw = p.sw, g.ph = p.ph, g.pw = p.pw, g.dh = p.dh, g.dw = p.dw;
  g.sn = image.stride(0), g.sc = image.stride(1), g.sy = image.stride(2), g.sx = image.stride(3);
  return g;
}

// Direct depthwise kernels (see im2col.cl): out, two inputs, the input's geometry and O.
void launchDepthwise(const char* name, const at::Tensor& out, const at::Tensor& a,
                     const at::Tensor& b, const ConvGeom& g, int64_t o, int64_t n) {
  if (n == 0) return;
  const c10::DeviceIndex idx = out.device().index();
  cl_program prog = nnProgram(idx, &kIm2colFamily, "im2col.cl", out.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  setArgs(k, bufferOf(out), bufferOf(a), bufferOf(b), g, static_cast<cl_long>(o));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

// One input channel per group: a direct kernel beats G tiny GEMMs by far.
bool depthwise(const at::Tensor& x, const Params& p, bool transposed) {
  return !transposed && p.groups > 1 && x.size(1) == p.groups;
}

// A 2-D launch (d0, d1) of the im2col/col2im kernels; the driver picks the local size. `extra`
// are further cl_long arguments after the geometry.
void launchGeom2D(const at::Tensor& anchor, const char* name, const at::Tensor& out,
                  const at::Tensor& in, const ConvGeom& g, int64_t d0, int64_t d1,
                  std::initializer_list<cl_long> extra = {}) {
  if (d0 == 0 || d1 == 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kIm2colFamily, "im2col.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  setArgs(k, bufferOf(out), bufferOf(in), g);
  cl_uint i = 5;  // out (mem, offset), in (mem, offset), geometry
  for (cl_long v : extra) setArg(k, i, v);
  const size_t global[2] = {static_cast<size_t>(d0), static_cast<size_t>(d1)};
  launchKernel(currentQueue(idx), k, 2, global, nullptr);
  OCL_CATCH
}

// Columns (G, Cg*KH*KW, nb*Hc*Wc) of `image` (nb, C, Hi, Wi), or per sample (nb, C*KH*KW, Hc*Wc)
// (groups == 1), where each sample's columns are one matrix with a short row stride.
at::Tensor im2col(const at::Tensor& image, int64_t kh, int64_t kw, int64_t hc, int64_t wc,
                  const Params& p, bool per_sample = false) {
  const int64_t g = p.groups, cgk = image.size(1) / g * kh * kw, nb = image.size(0), l = hc * wc;
  TORCH_INTERNAL_ASSERT(!per_sample || g == 1);
  at::Tensor col = per_sample ? at::empty({nb, cgk, l}, image.options())
                              : at::empty({g, cgk, nb * l}, image.options());
  if (col.numel() == 0) return col;
  const cl_long cs_n = per_sample ? cgk * l : l, cs_k = per_sample ? l : nb * l;
  launchGeom2D(image, "im2col", col, image, geometry(image, kh, kw, hc, wc, p), hc,
               image.size(1) * kh * kw * nb, {cs_n, cs_k});
  return col;
}

// Adds up columns into the contiguous `image` (nb, C, Hi, Wi), which it overwrites. `col` is
// contiguous, (G, Cg*KH*KW, nb*Hc*Wc) as im2col writes it, or per sample (nb, C*KH*KW, Hc*Wc).
void col2im(const at::Tensor& col, const at::Tensor& image, int64_t kh, int64_t kw, int64_t hc,
            int64_t wc, const Params& p, bool per_sample = false) {
  TORCH_INTERNAL_ASSERT(image.is_contiguous() && col.is_contiguous());
  if (image.numel() == 0) return;
  const int64_t l = hc * wc, rows = image.size(1) * kh * kw;
  const cl_long cs_n = per_sample ? rows * l : l, cs_k = per_sample ? l : image.size(0) * l;
  launchGeom2D(image, "col2im", image, col, geometry(image, kh, kw, hc, wc, p), image.size(2),
               image.size(0) * image.size(1), {cs_n, cs_k});
}

// Samples per chunk so that one chunk's columns stay near 128 MiB (and below the device's
// single-allocation limit).
int64_t batchChunk(int64_t n, int64_t col_elems_per_sample, int64_t elem_size) {
  const int64_t budget = int64_t{128} << 20;
  const int64_t per = std::max<int64_t>(1, col_elems_per_sample * elem_size);
  return std::max<int64_t>(1, std::min<int64_t>(n, budget / per));
}

// (nb, G*Cg, S) -> (G, Cg, nb*S), a copy.
at::Tensor groupMajor(const at::Tensor& t, int64_t g) {
  const int64_t nb = t.size(0), cg = t.size(1) / g;
  return t.reshape({nb, g, cg, -1}).permute({1, 2, 0, 3}).reshape({g, cg, -1});
}

// Writes (G, Cg, nb*S) into the contiguous (nb, G*Cg, ...) `dst`.
void fromGroupMajor(const at::Tensor& src, const at::Tensor& dst) {
  const int64_t nb = dst.size(0), g = src.size(0), cg = src.size(1);
  dst.view({nb, g, cg, -1}).copy_(src.view({g, cg, nb, -1}).permute({2, 0, 1, 3}));
}

at::Tensor as2d(const at::Tensor& t) {
  return t.dim() == 3 ? t.unsqueeze(2) : t;
}

bool native(const at::Tensor& input, const at::Tensor& weight) {
  return nnFloating(input.scalar_type()) && (input.dim() == 3 || input.dim() == 4) &&
         weight.scalar_type() == input.scalar_type();
}

at::Tensor convForward(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, const Params& p, bool transposed) {
  const at::Tensor x = as2d(input), w = as2d(weight);
  const int64_t n = x.size(0), h = x.size(2), wd = x.size(3), kh = w.size(2), kw = w.size(3);
  const int64_t g = p.groups, k = kh * kw;
  at::Tensor out;
  if (!transposed) {
    const int64_t o = w.size(0), og = o / g, cg = x.size(1) / g;
    const int64_t oh = (h + 2 * p.ph - p.dh * (kh - 1) - 1) / p.sh + 1;
    const int64_t ow = (wd + 2 * p.pw - p.dw * (kw - 1) - 1) / p.sw + 1;
    out = at::empty({n, o, oh, ow}, x.options());
    if (depthwise(x, p, transposed)) {
      const at::Tensor wc = w.contiguous();
      launchDepthwise("depthwise_fwd", out, x, wc, geometry(x, kh, kw, oh, ow, p), o, out.numel());
      if (bias && bias->defined()) out.add_(bias->view({1, -1, 1, 1}));
      return input.dim() == 3 ? out.squeeze(2) : out;
    }
    const at::Tensor w_r = w.reshape({g, og, cg * k});
    const int64_t step = batchChunk(n, x.size(1) * k * oh * ow, x.element_size());
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t nb = std::min(step, n - n0);
      if (g == 1) {
        // One GEMM per sample straight into out (nb, O, L) from per-sample columns, the weight
        // broadcast over the batch. No group-major copy.
        const int64_t l = oh * ow;
        const at::Tensor col = im2col(x.narrow(0, n0, nb), kh, kw, oh, ow, p, /*per_sample=*/true);
        at::Tensor o3 = out.narrow(0, n0, nb).view({nb, o, l});
        at::bmm_out(o3, w_r.expand({nb, og, cg * k}), col);
      } else {
        const at::Tensor col = im2col(x.narrow(0, n0, nb), kh, kw, oh, ow, p);
        fromGroupMajor(at::bmm(w_r, col), out.narrow(0, n0, nb));
      }
    }
  } else {
    const int64_t cin_g = x.size(1) / g, cout_g = w.size(1), cout = cout_g * g;
    const int64_t oh = (h - 1) * p.sh - 2 * p.ph + p.dh * (kh - 1) + p.oph + 1;
    const int64_t ow = (wd - 1) * p.sw - 2 * p.pw + p.dw * (kw - 1) + p.opw + 1;
    out = at::empty({n, cout, oh, ow}, x.options());
    const at::Tensor w_t = w.reshape({g, cin_g, cout_g * k}).transpose(1, 2);
    const int64_t step = batchChunk(n, cout * k * h * wd, x.element_size());
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t nb = std::min(step, n - n0);
      const at::Tensor col = at::bmm(w_t, groupMajor(x.narrow(0, n0, nb), g)).contiguous();
      col2im(col, out.narrow(0, n0, nb), kh, kw, h, wd, p);
    }
  }
  if (bias && bias->defined()) out.add_(bias->view({1, -1, 1, 1}));
  return input.dim() == 3 ? out.squeeze(2) : out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convBackward(const at::Tensor& grad_output,
                                                            const at::Tensor& input,
                                                            const at::Tensor& weight,
                                                            const Params& p, bool transposed,
                                                            std::array<bool, 3> mask) {
  const at::Tensor x = as2d(input), w = as2d(weight), go = as2d(grad_output);
  const int64_t n = x.size(0), h = x.size(2), wd = x.size(3), kh = w.size(2), kw = w.size(3);
  const int64_t oh = go.size(2), ow = go.size(3), g = p.groups, k = kh * kw;
  at::Tensor gi = mask[0] ? at::empty(x.sizes(), x.options()) : at::Tensor();
  at::Tensor gw_r;
  auto accumulate = [&](at::Tensor t) { gw_r = gw_r.defined() ? gw_r.add_(t) : t; };
  if (depthwise(x, p, transposed)) {
    const at::Tensor goc = go.contiguous(), wc = w.contiguous();
    const ConvGeom geom = geometry(x, kh, kw, oh, ow, p);
    if (mask[0]) launchDepthwise("depthwise_bwd_input", gi, goc, wc, geom, w.size(0), gi.numel());
    if (mask[1]) {
      gw_r = at::empty(w.sizes(), w.options());
      launchDepthwise("depthwise_bwd_weight", gw_r, goc, x, geom, w.size(0), gw_r.numel());
    }
  } else if (!transposed) {
    const int64_t og = w.size(0) / g, cg = x.size(1) / g;
    const at::Tensor w_r = w.reshape({g, og, cg * k});
    const int64_t step = batchChunk(n, x.size(1) * k * oh * ow, x.element_size());
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t nb = std::min(step, n - n0);
      const bool need_go_r = g != 1 && (mask[0] || mask[1]);
      const at::Tensor go_r =
          need_go_r ? groupMajor(go.narrow(0, n0, nb), g) : at::Tensor();  // (G, Og, nb*L)
      if (mask[1] && g == 1) {
        // Sum over samples of grad_output[n] (O x L) @ columns[n]^T, accumulated in place over the
        // chunks: no group-major copy of grad_output.
        const int64_t l = oh * ow;
        const at::Tensor col = im2col(x.narrow(0, n0, nb), kh, kw, oh, ow, p, /*per_sample=*/true);
        const bool first = !gw_r.defined();
        if (first) gw_r = at::empty({1, og, cg * k}, w.options());
        gemmBatchSum(gw_r.select(0, 0), go.narrow(0, n0, nb).reshape({nb, og, l}),
                     col.transpose(1, 2), 1, first ? 0 : 1);
      } else if (mask[1]) {
        accumulate(at::bmm(go_r, im2col(x.narrow(0, n0, nb), kh, kw, oh, ow, p).transpose(1, 2)));
      }
      if (mask[0] && g == 1) {
        // Per-sample columns (nb, Cg*K, L) = W^T @ grad_output[n]: no group-major copy.
        const int64_t l = oh * ow;
        at::Tensor gcol = at::empty({nb, cg * k, l}, x.options());
        at::bmm_out(gcol, w_r.transpose(1, 2).expand({nb, cg * k, og}),
                    go.narrow(0, n0, nb).reshape({nb, og, l}));
        col2im(gcol, gi.narrow(0, n0, nb), kh, kw, oh, ow, p, /*per_sample=*/true);
      } else if (mask[0]) {
        const at::Tensor gcol = at::bmm(w_r.transpose(1, 2), go_r).contiguous();
        col2im(gcol, gi.narrow(0, n0, nb), kh, kw, oh, ow, p);
      }
    }
  } else {
    const int64_t cin_g = x.size(1) / g, cout_g = w.size(1), cout = cout_g * g;
    const at::Tensor w_r = w.reshape({g, cin_g, cout_g * k});
    const int64_t step = batchChunk(n, cout * k * h * wd, x.element_size());
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      const int64_t nb = std::min(step, n - n0);
      // The transposed convolution's adjoint is an ordinary one over grad_output.
      const at::Tensor col =
          im2col(go.narrow(0, n0, nb), kh, kw, h, wd, p);  // (G, Cout_g*K, nb*HW)
      if (mask[0]) fromGroupMajor(at::bmm(w_r, col), gi.narrow(0, n0, nb));
      if (mask[1]) accumulate(at::bmm(groupMajor(x.narrow(0, n0, nb), g), col.transpose(1, 2)));
    }
  }
  at::Tensor gw;
  if (mask[1]) gw = gw_r.defined() ? gw_r.view(w.sizes()) : at::zeros(w.sizes(), w.options());
  if (gw.defined() && weight.dim() == 3) gw = gw.squeeze(2);
  if (gi.defined() && input.dim() == 3) gi = gi.squeeze(2);
  at::Tensor gb;
  if (mask[2]) {
    // Sum over pixels as a batched GEMV through the matrix engine, then over the batch.
    const int64_t l = oh * ow;
    const at::Tensor ones = at::ones({l, 1}, go.options());
    gb = go.numel() == 0 ? at::zeros({go.size(1)}, go.options())
                         : at::bmm(go.reshape({n, go.size(1), l}), ones.expand({n, l, 1}))
                               .sum(0)
                               .view({go.size(1)});
  }
  return {gi, gw, gb};
}

at::Tensor convolutionOverrideable(const at::Tensor& input, const at::Tensor& weight,
                                   const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                   at::IntArrayRef padding, at::IntArrayRef dilation,
                                   bool transposed, at::IntArrayRef output_padding,
                                   int64_t groups) {
  const at::Tensor no_bias;
  checkSameDevice({input, weight, bias ? *bias : no_bias});
  if (!native(input, weight))
    return runFallback("aten::convolution", "",
                       {input, weight, bias, stride.vec(), padding.vec(), dilation.vec(),
                        transposed, output_padding.vec(), groups})[0]
        .toTensor();
  // im2col reads any strides; channels_last inputs are read in place (no .contiguous()).
  return convForward(input, weight, bias,
                     params2d(stride, padding, dilation, output_padding, groups), transposed);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolutionBackwardOverrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  checkSameDevice({grad_output, input, weight});
  if (!native(input, weight) || grad_output.scalar_type() != input.scalar_type()) {
    const int64_t out_channels = transposed ? weight.size(1) * groups : weight.size(0);
    auto r =
        runFallback("aten::convolution_backward", "",
                    {grad_output, input, weight,
                     std::optional<std::vector<int64_t>>(std::vector<int64_t>{out_channels}),
                     stride.vec(), padding.vec(), dilation.vec(), transposed, output_padding.vec(),
                     groups, c10::List<bool>({output_mask[0], output_mask[1], output_mask[2]})});
    auto get = [&](size_t i) { return r[i].isTensor() ? r[i].toTensor() : at::Tensor(); };
    return {get(0), get(1), get(2)};
  }
  return convBackward(grad_output, input, weight,
                      params2d(stride, padding, dilation, output_padding, groups), transposed,
                      output_mask);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_backward_overrideable", TORCH_FN(convolutionBackwardOverrideable));
  m.impl("convolution_overrideable", TORCH_FN(convolutionOverrideable));
}

}  // namespace torch_ocl::aten
