// Output layouts of the LAPACK-style ops: CPU PyTorch (LAPACK) and PyTorch's meta functions (what
// fake tensors and torch.compile trace with, and what compiled graphs assert with
// assert_size_stride) return a batch of column-major matrices for these ops.
#pragma once

#include <ATen/ATen.h>
#include <ATen/native/LinearAlgebraUtils.h>

namespace torch_ocl::aten {

// t itself when it already has the strides of a contiguous batch of column-major matrices
// (make_contiguous_strides_for(shape, row_major=False)), else such a copy of it.
inline at::Tensor batchedColumnMajor(const at::Tensor& t) {
  if (t.dim() >= 2 && !t.is_conj() && !t.is_neg() &&
      t.strides() == at::IntArrayRef(at::native::batched_matrix_contiguous_strides(
                         t.sizes(), /*f_contig=*/true)))
    return t;
  return at::native::cloneBatchedColumnMajor(t);
}

}  // namespace torch_ocl::aten
