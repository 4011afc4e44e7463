// Shared by the 2-D and 3-D pooling files (pool.cpp, pool3d.cpp): the geometry struct of
// pool.cl and its launch. 2-D pools run as 3-D ones with depth 1.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <vector>

#include "aten/nn_common.h"

namespace torch_ocl::aten {

// Mirrors PoolGeom in pool.cl.
struct alignas(8) PoolGeom {
  cl_long P, D, H, W, OD, OH, OW;
  cl_long kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
};

// `in` and `out` are (..., [D,] H, W) and (..., [OD,] OH, OW) with `spatial` (2 or 3) trailing
// spatial dimensions; window arguments follow PyTorch's conventions (one value for all
// dimensions, stride empty = kernel size).
PoolGeom poolGeom(const at::Tensor& in, const at::Tensor& out, int spatial,
                  at::IntArrayRef kernel_size = {}, at::IntArrayRef stride = {},
                  at::IntArrayRef padding = {}, at::IntArrayRef dilation = {});

// Binds `tensors` (buffers), then g, then the scalar arguments, and runs pool.cl's `name` with
// one work item per element of n.
void launchPoolKernel(const at::Tensor& anchor, const char* name, int64_t n,
                      std::initializer_list<at::Tensor> tensors, const PoolGeom& g,
                      std::initializer_list<cl_int> ints, std::initializer_list<cl_long> longs);

// A contiguous tensor to write into for `t`, and the copy back when they differ.
inline at::Tensor contiguousLike(const at::Tensor& t) {
  return t.is_contiguous() ? t : at::empty(t.sizes(), t.options());
}
inline void finishInto(const at::Tensor& dst, const at::Tensor& tmp) {
  if (!tmp.is_same(dst)) dst.copy_(tmp);
}
inline std::vector<c10::IValue> ivalues(std::initializer_list<c10::IValue> v) {
  return std::vector<c10::IValue>(v);
}

}  // namespace torch_ocl::aten
