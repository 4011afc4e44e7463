// histc and histogram (1-D, bin count or edges) on the device: one kernel finds each element's
// bin in the input's precision exactly as CPU's kernel does, then index_add_ sums the (unit or
// given) weights per bin, so the counts do not depend on the order of additions; histogramdd
// searches each dimension so and adds the weights at the combined bin. float32 and float64 (and
// float16/bfloat16 for histc, binned with CPU's 16-bit rounding); other dtypes take the counted
// fallback. Integer histc (which CPU lacks) follows CUDA's integer binning.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>

#include "aten/fallback.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kHistogramFamily;

enum BinMode : cl_int { kLinear = 0, kLinearChecked = 1, kSearch = 2 };

bool histNative(const at::Tensor& self) {
  return self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble;
}

// The bin (-1: outside, or NaN) in `edges` of every element of the 1-D contiguous `x`.
at::Tensor binPositions(const at::Tensor& x, const at::Tensor& edges, BinMode mode) {
  const int64_t n = x.numel(), nedges = edges.numel();
  at::Tensor pos = at::empty({n}, x.options().dtype(at::kLong));
  if (n == 0) return pos;
  const at::Tensor e = edges.contiguous();
  const c10::DeviceIndex idx = x.device().index();
  const c10::ScalarType t = x.scalar_type();
  // CPU computes the bin in the input's own type: 16-bit types round after every operation.
  const char* rnd = t == at::kHalf       ? "#define RND(v) ocl_round_to_half(v)\n"
                    : t == at::kBFloat16 ? "#define RND(v) ocl_round_to_bf16(v)\n"
                                         : "#define RND(v) (v)\n";
  cl_program prog = nnProgram(idx, &kHistogramFamily, "histogram.cl", t, rnd);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "hist_bin");
  setArgs(k, bufferOf(pos), bufferOf(x), bufferOf(e), static_cast<cl_long>(n),
          static_cast<cl_long>(nedges), static_cast<cl_int>(mode));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
  return pos;
}

// hist (bins,) = the weighted count of the elements of `self` per bin of `edges` (bins + 1).
at::Tensor binCounts(const at::Tensor& self, const at::Tensor& edges,
                     const std::optional<at::Tensor>& weight, BinMode mode) {
  const int64_t nedges = edges.numel();
  at::Tensor hist = at::zeros({nedges - 1}, self.options());
  const at::Tensor x = self.reshape({-1}).contiguous();
  const int64_t n = x.numel();
  if (n == 0) return hist;
  const at::Tensor pos = binPositions(x, edges, mode);
  const at::Tensor inside = pos.ge(0);
  const at::Tensor w = weight && weight->defined() ? weight->reshape({-1}).to(x.scalar_type())
                                                   : at::ones({n}, x.options());
  return hist.index_add_(0, pos.clamp_min(0), at::where(inside, w, at::zeros({}, w.options())));
}

void density(at::Tensor& hist, const at::Tensor& edges) {
  hist.div_(hist.sum());
  hist.div_(edges.diff());
}

// histc of an integer tensor, as CUDA computes it (CPU has none): the range in int64, each bin
// (v - min) * bins / (max - min) in integer arithmetic. Hugging Face's mixture-of-experts routing
// counts tokens per expert so on accelerators (histc of int32 expert ids).
at::Tensor& histcIntegral(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                          const at::Scalar& max, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input ",
              self.scalar_type(), " and hist ", out.scalar_type());
  int64_t lo = min.to<int64_t>(), hi = max.to<int64_t>();
  if (lo == hi && self.numel() > 0) {
    const auto [mn, mx] = at::aminmax(self);
    const at::Tensor both = at::stack({mn, mx}).to(at::kLong).cpu();
    lo = both[0].item<int64_t>();
    hi = both[1].item<int64_t>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  at::Tensor hist = at::zeros({bins}, self.options());
  if (self.numel() > 0) {
    const at::Tensor x = self.reshape({-1}).to(at::kLong);
    const at::Tensor inside = x.ge(lo).logical_and(x.le(hi));
    // v >= lo inside the range, so the quotient's truncation is a floor.
    const at::Tensor pos = x.sub(lo).mul(bins).div(hi - lo, "trunc").clamp(0, bins - 1);
    hist.index_add_(0, pos, inside.to(self.scalar_type()));
  }
  at::native::resize_output(out, hist.sizes());
  return out.copy_(hist);
}

at::Tensor& histcOut(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                     const at::Scalar& max, at::Tensor& out) {
  checkSameDevice({self, out});
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  if (at::isIntegralType(self.scalar_type(), /*includeBool=*/false))
    return histcIntegral(self, bins, min, max, out);
  const bool half = self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16;
  if (!histNative(self) && !half) {
    runFallback("aten::histc", "out", {self, bins, min, max, out});
    return out;
  }
  TORCH_CHECK(out.scalar_type() == self.scalar_type(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
              "input ",
              self.scalar_type(), " and hist ", out.scalar_type());
  double lo = min.to<double>(), hi = max.to<double>();
  if (lo == hi && self.numel() > 0) {
    const auto [mn, mx] = at::aminmax(self);
    const at::Tensor both = at::stack({mn, mx}).to(at::kDouble).cpu();
    lo = both[0].item<double>();
    hi = both[1].item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)),
              "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  // Only the outer edges matter in linear mode: the linspace's first and last values.
  const at::Tensor edges = at::linspace(lo, hi, bins + 1, self.options());
  const at::Tensor hist = binCounts(self, edges, std::nullopt, kLinear);
  at::native::resize_output(out, hist.sizes());
  return out.copy_(hist);
}

at::Tensor histcFn(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                   const at::Scalar& max) {
  at::Tensor out = at::empty({0}, self.options());
  return histcOut(self, bins, min, max, out);
}

void checkWeight(const at::Tensor& self, const std::optional<at::Tensor>& weight) {
  if (!weight || !weight->defined()) return;
  checkSameDevice({self, *weight});
  TORCH_CHECK(self.dtype() == weight->dtype(),
              "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
              "should have the same dtype, but got input(",
              self.dtype(), "), and weight(", weight->dtype(), ")");
  TORCH_CHECK(weight->numel() == self.numel(),
              "torch.histogramdd: if weight tensor is provided it should have the same shape as "
              "the input tensor excluding its innermost dimension, but got input with shape ",
              self.reshape({-1, 1}).sizes(), " and weight with shape ", weight->sizes());
}

std::tuple<at::Tensor&, at::Tensor&> histogramBinsOut(const at::Tensor& self, int64_t bins,
                                                      std::optional<at::ArrayRef<double>> range,
                                                      const std::optional<at::Tensor>& weight,
                                                      bool dens, at::Tensor& hist,
                                                      at::Tensor& bin_edges) {
  checkSameDevice({self, hist, bin_edges});
  if (!histNative(self)) {
    std::optional<std::vector<double>> r;
    if (range) r = range->vec();
    runFallback("aten::histogram", "bin_ct_out", {self, bins, r, weight, dens, hist, bin_edges});
    return {hist, bin_edges};
  }
  checkWeight(self, weight);
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  double lo = 0, hi = 1;
  if (range) {
    TORCH_CHECK(range->size() == 2,
                "torch.histogramdd: for a 1-dimensional histogram range should "
                "have 2 elements, but got ",
                range->size());
    lo = (*range)[0];
    hi = (*range)[1];
  } else if (self.numel() > 0) {
    const auto [mn, mx] = at::aminmax(self);
    const at::Tensor both = at::stack({mn, mx}).to(at::kDouble).cpu();
    lo = both[0].item<double>();
    hi = both[1].item<double>();
  }
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogramdd: dimension 0's range [",
              lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo <= hi, "torch.histogramdd: min should not exceed max, but got min ", lo, " max ",
              hi, " for dimension 0");
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const at::Tensor edges = at::linspace(lo, hi, bins + 1, self.options());
  at::Tensor h = binCounts(self, edges, weight, kLinearChecked);
  if (dens) density(h, edges);
  at::native::resize_output(hist, h.sizes());
  at::native::resize_output(bin_edges, edges.sizes());
  hist.copy_(h);
  bin_edges.copy_(edges);
  return {hist, bin_edges};
}

std::tuple<at::Tensor, at::Tensor> histogramBins(const at::Tensor& self, int64_t bins,
                                                 std::optional<at::ArrayRef<double>> range,
                                                 const std::optional<at::Tensor>& weight,
                                                 bool dens) {
  at::Tensor hist = at::empty({0}, self.options()), edges = at::empty({0}, self.options());
  histogramBinsOut(self, bins, range, weight, dens, hist, edges);
  return {hist, edges};
}

std::tuple<at::Tensor&, at::Tensor&> histogramEdgesOut(const at::Tensor& self,
                                                       const at::Tensor& bins,
                                                       const std::optional<at::Tensor>& weight,
                                                       bool dens, at::Tensor& hist,
                                                       at::Tensor& bin_edges) {
  checkSameDevice({self, bins, hist, bin_edges});
  if (!histNative(self)) {
    runFallback("aten::histogram", "bins_tensor_out", {self, bins, weight, dens, hist, bin_edges});
    return {hist, bin_edges};
  }
  checkWeight(self, weight);
  TORCH_CHECK(self.dtype() == bins.dtype(),
              "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
              "got input with dtype ",
              self.dtype(), " and bins for dimension 0 with dtype ", bins.dtype());
  TORCH_CHECK(bins.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
              bins.dim(), " dimensions in the bins tensor for dimension 0");
  TORCH_CHECK(bins.numel() > 0,
              "torch.histogramdd: bins tensor should have at least 1 element, "
              "but got ",
              bins.numel(), " elements in the bins tensor for dimension 0");
  const at::Tensor edges = bins.clone();
  at::Tensor h =
      bins.numel() == 1 ? at::zeros({0}, self.options()) : binCounts(self, edges, weight, kSearch);
  if (dens && h.numel() > 0) density(h, edges);
  at::native::resize_output(hist, h.sizes());
  at::native::resize_output(bin_edges, edges.sizes());
  hist.copy_(h);
  bin_edges.copy_(edges);
  return {hist, bin_edges};
}

std::tuple<at::Tensor, at::Tensor> histogramEdges(const at::Tensor& self, const at::Tensor& bins,
                                                  const std::optional<at::Tensor>& weight,
                                                  bool dens) {
  at::Tensor hist = at::empty({0}, self.options()), edges = at::empty({0}, bins.options());
  histogramEdgesOut(self, bins, weight, dens, hist, edges);
  return {hist, edges};
}

// ---- histogramdd: the 1-D bin search per dimension, then one weighted index_add_ ---------------

void checkDdInputs(const at::Tensor& input, at::TensorList bins,
                   const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(input.dim() >= 2,
              "torch.histogramdd: input tensor should have at least 2 dimensions, but got ",
              input.dim());
  const int64_t N = input.size(-1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == N, "torch.histogramdd: expected ", N,
              " sequences of bin edges for a ", N, "-dimensional histogram but got ", bins.size());
  for (int64_t dim = 0; dim < N; ++dim) {
    const at::Tensor& b = bins[dim];
    TORCH_CHECK(input.dtype() == b.dtype(),
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                "got input with dtype ",
                input.dtype(), " and bins for dimension ", dim, " with dtype ", b.dtype());
    TORCH_CHECK(b.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ",
                b.dim(), " dimensions in the bins tensor for dimension ", dim);
    TORCH_CHECK(b.numel() > 0,
                "torch.histogramdd: bins tensor should have at least 1 element, but got ",
                b.numel(), " elements in the bins tensor for dimension ", dim);
  }
  if (weight && weight->defined()) {
    TORCH_CHECK(input.dtype() == weight->dtype(),
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                "should have the same dtype, but got input(",
                input.dtype(), "), and weight(", weight->dtype(), ")");
    auto input_sizes = input.sizes().vec();
    input_sizes.pop_back();
    auto weight_sizes = weight->sizes().vec();
    if (weight_sizes.empty()) weight_sizes = {1};
    TORCH_CHECK(input_sizes == weight_sizes,
                "torch.histogramdd: if weight tensor is provided it should have the same shape as "
                "the input tensor excluding its innermost dimension, but got input with shape ",
                input.sizes(), " and weight with shape ", weight->sizes());
  }
}

// The histogram of the rows of self (M, N) over the bin edges of each dimension.
at::Tensor histogramddCounts(const at::Tensor& self, at::TensorList bins,
                             const std::optional<at::Tensor>& weight, bool dens, BinMode mode) {
  checkSameDevice({self});
  for (const at::Tensor& b : bins) checkSameDevice({self, b});
  if (weight && weight->defined()) checkSameDevice({self, *weight});
  checkDdInputs(self, bins, weight);
  const int64_t N = self.size(-1);
  std::vector<int64_t> shape;
  for (const at::Tensor& b : bins) shape.push_back(b.numel() - 1);
  at::Tensor hist = at::zeros(shape, self.options());
  const at::Tensor x = self.reshape({-1, N});
  const int64_t M = x.size(0);
  if (M > 0 && hist.numel() > 0) {
    at::Tensor flat = at::zeros({M}, x.options().dtype(at::kLong));
    at::Tensor inside = at::ones({M}, x.options().dtype(at::kBool));
    for (int64_t dim = 0; dim < N; ++dim) {
      const at::Tensor pos = binPositions(x.select(1, dim).contiguous(), bins[dim], mode);
      inside.logical_and_(pos.ge(0));
      flat.add_(pos.clamp_min(0), hist.stride(dim));
    }
    const at::Tensor w =
        weight && weight->defined() ? weight->reshape({-1}) : at::ones({M}, x.options());
    hist.view({-1}).index_add_(0, flat, at::where(inside, w, at::zeros({}, w.options())));
  }
  // Density of an empty input: 0 / 0, NaN as on CPU.
  if (dens) {
    hist.div_(hist.sum());
    for (int64_t dim = 0; dim < N; ++dim) {
      std::vector<int64_t> s(N, 1);
      s[dim] = shape[dim];
      hist.div_(bins[dim].diff().reshape(s));
    }
  }
  return hist;
}

// CPU's select_outer_bin_edges: the range, or each dimension's min and max.
std::vector<at::Tensor> ddBinEdges(const at::Tensor& self, at::IntArrayRef bin_ct,
                                   std::optional<at::ArrayRef<double>> range) {
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  const int64_t N = self.size(-1);
  const at::Tensor x = self.reshape({-1, N});
  std::vector<double> lo(N, 0.), hi(N, 1.);
  if (range) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * N, "torch.histogramdd: for a ", N,
                "-dimensional histogram range should have ", 2 * N, " elements, but got ",
                range->size());
    for (int64_t d = 0; d < N; ++d) {
      lo[d] = (*range)[2 * d];
      hi[d] = (*range)[2 * d + 1];
    }
  } else if (x.numel() > 0) {
    const auto [mn, mx] = at::aminmax(x, 0);
    const at::Tensor both = at::stack({mn, mx}).to(at::kDouble).cpu();
    for (int64_t d = 0; d < N; ++d) {
      lo[d] = both[0][d].item<double>();
      hi[d] = both[1][d].item<double>();
    }
  }
  for (int64_t d = 0; d < N; ++d) {
    TORCH_CHECK(std::isfinite(lo[d]) && std::isfinite(hi[d]), "torch.histogramdd: dimension ", d,
                "'s range [", lo[d], ", ", hi[d], "] is not finite");
    TORCH_CHECK(lo[d] <= hi[d], "torch.histogramdd: min should not exceed max, but got min ", lo[d],
                " max ", hi[d], " for dimension ", d);
    if (lo[d] == hi[d]) {
      lo[d] -= 0.5;
      hi[d] += 0.5;
    }
  }
  TORCH_CHECK(N == static_cast<int64_t>(bin_ct.size()),
              "histogramdd: The size of bins must be equal to the innermost dimension of the "
              "input.");
  std::vector<at::Tensor> edges;
  for (int64_t d = 0; d < N; ++d) {
    TORCH_CHECK(bin_ct[d] > 0, "torch.histogramdd(): bins must be > 0, but got ", bin_ct[d],
                " for dimension ", d);
    edges.push_back(at::linspace(lo[d], hi[d], bin_ct[d] + 1, self.options()));
  }
  return edges;
}

std::vector<at::Tensor> histogramddBinEdges(const at::Tensor& self, at::IntArrayRef bins,
                                            std::optional<at::ArrayRef<double>> range,
                                            const std::optional<at::Tensor>& weight, bool dens) {
  if (!histNative(self)) {
    std::optional<std::vector<double>> r;
    if (range) r = range->vec();
    return runFallback("aten::_histogramdd_bin_edges", "", {self, bins.vec(), r, weight, dens})[0]
        .toTensorVector();
  }
  return ddBinEdges(self, bins, range);
}

at::Tensor histogramddFromBinCts(const at::Tensor& self, at::IntArrayRef bins,
                                 std::optional<at::ArrayRef<double>> range,
                                 const std::optional<at::Tensor>& weight, bool dens) {
  if (!histNative(self)) {
    std::optional<std::vector<double>> r;
    if (range) r = range->vec();
    return runFallback("aten::_histogramdd_from_bin_cts", "",
                       {self, bins.vec(), r, weight, dens})[0]
        .toTensor();
  }
  const std::vector<at::Tensor> edges = ddBinEdges(self, bins, range);
  return histogramddCounts(self, edges, weight, dens, kLinearChecked);
}

at::Tensor histogramddFromBinTensors(const at::Tensor& self, at::TensorList bins,
                                     const std::optional<at::Tensor>& weight, bool dens) {
  if (!histNative(self))
    return runFallback("aten::_histogramdd_from_bin_tensors", "",
                       {self, bins.vec(), weight, dens})[0]
        .toTensor();
  return histogramddCounts(self, bins, weight, dens, kSearch);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_histogramdd_bin_edges", TORCH_FN(histogramddBinEdges));
  m.impl("_histogramdd_from_bin_cts", TORCH_FN(histogramddFromBinCts));
  m.impl("_histogramdd_from_bin_tensors", TORCH_FN(histogramddFromBinTensors));
  m.impl("histc", TORCH_FN(histcFn));
  m.impl("histc.out", TORCH_FN(histcOut));
  m.impl("histogram.bin_ct", TORCH_FN(histogramBins));
  m.impl("histogram.bin_ct_out", TORCH_FN(histogramBinsOut));
  m.impl("histogram.bins_tensor", TORCH_FN(histogramEdges));
  m.impl("histogram.bins_tensor_out", TORCH_FN(histogramEdgesOut));
}

}  // namespace torch_ocl::aten
