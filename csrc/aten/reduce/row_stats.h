// logsumexp / var / std over one dimension on CPU drivers, in the explicit-vector kernels of
// kernels/softmax.cl (stats_vrows / stats_vcols): the reduction generator's one-item-per-output
// loops stay scalar on PoCL once an exp or a second pass is in them.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymIntArrayRef.h>

#include <optional>

namespace torch_ocl::aten {

enum class RowStat { kLogSumExp = 0, kVar = 1, kStd = 2 };

// Runs the statistic of self over dims into out (and the mean into out2 for var/std when
// defined) and returns true, when the case is one these kernels cover: a CPU driver, one
// reduced dimension of a contiguous, non-empty float/double/half/bfloat16 tensor, contiguous
// outputs of self's dtype. Returns false (nothing launched) otherwise.
bool rowStatsCpu(RowStat kind, const at::Tensor& self, at::OptionalIntArrayRef dims,
                 double correction, const at::Tensor& out, const at::Tensor& out2);

}  // namespace torch_ocl::aten
