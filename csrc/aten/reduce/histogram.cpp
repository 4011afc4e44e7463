// histc and histogram (1-D, bin count or edges) on the device: one kernel finds each element's
// bin in the input's precision exactly as CPU's kernel does, then index_add_ sums the (unit or
// given) weights per bin, so the counts do not depend on the order of additions. float32 and
// float64; other dtypes take the counted fallback.
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

// hist (bins,) = the weighted count of the elements of `self` per bin of `edges` (bins + 1).
at::Tensor binCounts(const at::Tensor& self, const at::Tensor& edges,
                     const std::optional<at::Tensor>& weight, BinMode mode) {
  const int64_t nedges = edges.numel();
  at::Tensor hist = at::zeros({nedges - 1}, self.options());
  const at::Tensor x = self.reshape({-1}).contiguous(), e = edges.contiguous();
  const int64_t n = x.numel();
  if (n == 0) return hist;
  at::Tensor pos = at::empty({n}, x.options().dtype(at::kLong));
  const c10::DeviceIndex idx = x.device().index();
  cl_program prog = nnProgram(idx, &kHistogramFamily, "histogram.cl", x.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "hist_bin");
  setArgs(k, bufferOf(pos), bufferOf(x), bufferOf(e), static_cast<cl_long>(n),
          static_cast<cl_long>(nedges), static_cast<cl_int>(mode));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
  const at::Tensor inside = pos.ge(0);
  const at::Tensor w = weight && weight->defined() ? weight->reshape({-1}).to(x.scalar_type())
                                                   : at::ones({n}, x.options());
  return hist.index_add_(0, pos.clamp_min(0), at::where(inside, w, at::zeros({}, w.options())));
}

void density(at::Tensor& hist, const at::Tensor& edges) {
  hist.div_(hist.sum());
  hist.div_(edges.diff());
}

at::Tensor& histcOut(const at::Tensor& self, int64_t bins, const at::Scalar& min,
                     const at::Scalar& max, at::Tensor& out) {
  checkSameDevice({self, out});
  if (!histNative(self)) {
    runFallback("aten::histc", "out", {self, bins, min, max, out});
    return out;
  }
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("histc", TORCH_FN(histcFn));
  m.impl("histc.out", TORCH_FN(histcOut));
  m.impl("histogram.bin_ct", TORCH_FN(histogramBins));
  m.impl("histogram.bin_ct_out", TORCH_FN(histogramBinsOut));
  m.impl("histogram.bins_tensor", TORCH_FN(histogramEdges));
  m.impl("histogram.bins_tensor_out", TORCH_FN(histogramEdgesOut));
}

}  // namespace torch_ocl::aten
