// Statistics over one dimension on CPU drivers, in explicit-vector kernels: over the last dim
// (inner == 1) kernels/softmax.cl's stats_vrows (logsumexp / var / std: the reduction
// generator's one-item-per-output loops stay scalar on PoCL once an exp or a second pass is in
// them); over a non-last dim the column tiles of kernels/reduce_cols.cl (every kind here, and
// softmax forward and backward; reduce_cols.cpp).
#pragma once

#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <c10/core/SymIntArrayRef.h>

#include "runtime/cl_include.h"

#include <initializer_list>
#include <optional>

namespace torch_ocl::aten {

// A tensor as (outer, len, inner) lines along one dim (the dim of a 0-d tensor is one element).
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};

inline Lines linesOf(const at::Tensor& x, int64_t dim) {
  Lines l;
  if (x.dim() == 0) return l;
  dim = at::maybe_wrap_dim(dim, x.dim());
  l.len = x.size(dim);
  for (int64_t d = 0; d < dim; ++d) l.outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) l.inner *= x.size(d);
  return l;
}

// Kinds as RC_* in kernels/reduce_cols.cl; kSum and later only over a non-last dim.
enum class RowStat {
  kLogSumExp = 0,
  kVar = 1,
  kStd = 2,
  kSum = 3,
  kMean = 4,
  kAmax = 5,
  kAmin = 6,
  kProd = 9,
  kNanSum = 10,
  kNorm2 = 11,
  kNorm1 = 12,
  kNormInf = 13,
  kNormNegInf = 14,
  kNorm0 = 15,
  kMaxIdx = 16,  // max/min with indices: out = the indices (long), out2 = the values or undefined
  kMinIdx = 17,
};

inline bool isIndexed(RowStat k) {
  return k == RowStat::kMaxIdx || k == RowStat::kMinIdx;
}

// Runs the statistic of self over dims into out (and the mean into out2 for var/std when
// defined; for kMaxIdx/kMinIdx the indices into out and the values into out2 when defined) and
// returns true, when the case is one these kernels cover: a CPU driver, one reduced dimension of
// a contiguous, non-empty float/double/half/bfloat16 tensor, contiguous outputs of self's dtype
// (indices: long). Kinds after kAmin only over a non-last dim of at least 32-element lines.
// Integer and bool tensors (int8/uint8/int16/int32/int64/bool) for sum/nansum and prod (outputs
// of any integer dtype, accumulated in long), amax/amin and max/min with indices, only over a
// non-last dim of at least 32-element lines. Returns false (nothing launched) otherwise.
bool rowStatsCpu(RowStat kind, const at::Tensor& self, at::OptionalIntArrayRef dims,
                 double correction, const at::Tensor& out, const at::Tensor& out2);

// The softmax.cl + reduce_cols.cl program for input type x and output type y (softmax.cpp).
cl_program softmaxProgram(c10::DeviceIndex idx, c10::ScalarType x, c10::ScalarType y);

// Over a non-last dim (inner > 1) of contiguous tensors on a CPU driver (reduce_cols.cpp):
// kind over dim of x (outer, dim, inner) into out (and out2), outputs contiguous of x's dtype
// (indexed kinds: out long; integer sums and products: any integer dtype).
void colsReduceCpu(RowStat kind, const at::Tensor& x, int64_t outer, int64_t dim, int64_t inner,
                   double correction, const at::Tensor& out, const at::Tensor& out2);
// softmax / log_softmax forward (tensors {y, x}) or backward ({gx, gy, y}), all contiguous;
// x/gx of type xt, y/gy of type yt.
void colsSoftmaxCpu(bool backward, bool log, int64_t outer, int64_t dim, int64_t inner,
                    c10::ScalarType xt, c10::ScalarType yt,
                    std::initializer_list<at::Tensor> tensors);

}  // namespace torch_ocl::aten
