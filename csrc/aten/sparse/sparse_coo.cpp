// Sparse COO basics on ocl: construction (sparse_coo_tensor, .to("ocl"), dense.to_sparse()),
// the metadata and indices/values access, coalesce, to_dense, sparse @ dense (mm, addmm,
// torch.sparse.mm with its backward), torch.sparse.sum and clone. A COO tensor's indices and
// values are ordinary ocl tensors, so ATen's own layout-generic sparse code serves the
// metadata; coalesce, to_dense and the products are composed here of native dense kernels (a
// sort, unique_consecutive, index_add_ and index_put_). Every other op on a sparse tensor raises
// the NotImplementedError of core/fallback.cpp, which names it.
#include <ATen/ATen.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/values_native.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

// Row-major strides of the sparse dimensions, as an int64 (sparse_dim, 1) tensor on the device.
at::Tensor sparseStrides(const at::Tensor& self) {
  const int64_t sd = self.sparse_dim();
  std::vector<int64_t> st(sd, 1);
  for (int64_t i = sd - 2; i >= 0; --i) st[i] = st[i + 1] * self.size(i + 1);
  return at::tensor(st, at::kLong).to(self.device()).view({sd, 1});
}

at::Tensor coalesce(const at::Tensor& self) {
  const int64_t nnz = self._nnz(), sd = self.sparse_dim();
  if (self.is_coalesced()) return self;
  const at::Tensor indices = self._indices(), values = self._values();
  if (nnz < 2) {
    return at::_sparse_coo_tensor_with_dims_and_tensors(sd, self.dense_dim(), self.sizes(),
                                                        indices.clone(), values.clone(),
                                                        self.options(), /*is_coalesced=*/true);
  }
  const at::Tensor strides = sparseStrides(self);
  const at::Tensor linear = indices.mul(strides).sum(0);
  auto [sorted, perm] = at::sort(linear, /*stable=*/true, 0, false);
  auto [uniq, inverse, counts] = at::unique_consecutive(sorted, /*return_inverse=*/true);
  std::vector<int64_t> vshape = values.sizes().vec();
  vshape[0] = uniq.numel();
  const at::Tensor new_values =
      at::zeros(vshape, values.options()).index_add_(0, inverse, values.index_select(0, perm));
  std::vector<int64_t> size(self.sizes().begin(), self.sizes().begin() + sd);
  const at::Tensor sizes = at::tensor(size, at::kLong).to(self.device()).view({sd, 1});
  const at::Tensor new_indices = at::floor_divide(uniq.unsqueeze(0), strides).remainder(sizes);
  return at::_sparse_coo_tensor_with_dims_and_tensors(sd, self.dense_dim(), self.sizes(),
                                                      new_indices, new_values, self.options(),
                                                      /*is_coalesced=*/true);
}

at::Tensor toDense(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                   std::optional<bool> masked_grad) {
  const at::Tensor values = self._values();
  at::Tensor out =
      at::zeros(self.sizes(), values.options().dtype(dtype.value_or(values.scalar_type())));
  if (self._nnz() == 0) return out;
  const at::Tensor indices = self._indices();
  c10::List<std::optional<at::Tensor>> idx;
  for (int64_t i = 0; i < self.sparse_dim(); ++i) idx.push_back(indices.select(0, i));
  return out.index_put_(idx, values.to(out.scalar_type()), /*accumulate=*/true);
}

// S (M, K) with sparse_dim 2 and dense_dim 0, times a dense (K, N): each nonzero adds its value
// times a row of `dense` to a row of the result.
at::Tensor sparseDenseMm(const at::Tensor& sparse, const at::Tensor& dense) {
  TORCH_CHECK(sparse.sparse_dim() == 2 && sparse.dense_dim() == 0,
              "torch-ocl: sparse @ dense needs a 2-D sparse COO matrix with no dense dimensions, "
              "but got sparse_dim ",
              sparse.sparse_dim(), " and dense_dim ", sparse.dense_dim());
  TORCH_CHECK(dense.layout() == at::kStrided && dense.dim() == 2,
              "torch-ocl: sparse @ dense needs a 2-D strided second operand, but got ",
              dense.layout(), " with ", dense.dim(), " dimensions");
  TORCH_CHECK(sparse.size(1) == dense.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              sparse.size(0), "x", sparse.size(1), " and ", dense.size(0), "x", dense.size(1), ")");
  TORCH_CHECK(sparse.scalar_type() == dense.scalar_type(),
              "expected mat1 and mat2 to have the same dtype, but got: ", sparse.scalar_type(),
              " != ", dense.scalar_type());
  const at::Tensor sparse_values = sparse._values();
  checkSameDevice({sparse_values, dense});
  at::Tensor out = at::zeros({sparse.size(0), dense.size(1)}, dense.options());
  if (sparse._nnz() == 0 || out.numel() == 0) return out;
  const at::Tensor indices = sparse._indices(), values = sparse._values();
  return out.index_add_(0, indices.select(0, 0),
                        dense.index_select(0, indices.select(0, 1)).mul(values.unsqueeze(1)));
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.is_sparse() && !mat2.is_sparse(),
              "torch-ocl: on a sparse COO tensor, mm supports only sparse @ dense");
  return sparseDenseMm(self, mat2);
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK(!self.is_sparse() && mat1.is_sparse() && !mat2.is_sparse(),
              "torch-ocl: on a sparse COO tensor, addmm supports only dense + sparse @ dense");
  at::Tensor prod = sparseDenseMm(mat1, mat2);
  if (!alpha.equal(1)) prod.mul_(alpha);
  const at::Tensor base = self.expand(prod.sizes());
  return beta.equal(0) ? prod : prod.add_(base, beta);
}

// sparse_mask(dense, mask): the dense tensor's entries at the mask's coalesced positions.
at::Tensor sparseMask(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.sizes() == self.sizes(),
              "sparse_mask(): operands have incompatible sizes; self has size ", self.sizes(),
              " but mask has size ", mask.sizes());
  const at::Tensor m = mask.coalesce();
  const at::Tensor indices = m._indices();
  c10::List<std::optional<at::Tensor>> idx;
  for (int64_t i = 0; i < m.sparse_dim(); ++i) idx.push_back(indices.select(0, i));
  const at::Tensor values =
      m._nnz() == 0 ? at::empty(m._values().sizes(), self.options()) : self.index(idx);
  return at::_sparse_coo_tensor_with_dims_and_tensors(m.sparse_dim(), m.dense_dim(), m.sizes(),
                                                      indices.clone(), values,
                                                      self.options().layout(at::kSparse),
                                                      /*is_coalesced=*/true);
}

// torch.sparse.sum over the given dims (all sparse dims summed: a dense result).
at::Tensor sparseSumDim(const at::Tensor& self, at::IntArrayRef dim) {
  const int64_t sd = self.sparse_dim();
  std::vector<bool> reduce(self.dim(), false);
  for (int64_t d : dim) reduce[at::maybe_wrap_dim(d, self.dim())] = true;
  for (int64_t d = 0; d < sd; ++d)
    TORCH_CHECK_NOT_IMPLEMENTED(
        reduce[d] || std::count(reduce.begin(), reduce.begin() + sd, true) == 0,
        "torch-ocl: torch.sparse.sum over some but not all sparse "
        "dimensions of a sparse COO tensor is not supported on ocl yet");
  std::vector<int64_t> dense_dims;
  for (int64_t d = sd; d < self.dim(); ++d)
    if (reduce[d]) dense_dims.push_back(d - sd + 1);
  at::Tensor v = self._values();
  at::Tensor total = v.sum(0);  // over the nonzeros: every sparse dim is reduced
  if (!dense_dims.empty()) {
    for (auto& d : dense_dims) d -= 1;
    total = total.sum(dense_dims);
  }
  return total;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_coalesce", TORCH_FN(coalesce));
  m.impl("_coalesced_", TORCH_FN(at::native::_coalesced_sparse_));
  m.impl("_dimI", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("_dimV", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("_indices", TORCH_FN(at::native::_indices_sparse));
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse));
  m.impl("_sparse_coo_tensor_with_dims", TORCH_FN(at::native::new_with_dims_sparse));
  m.impl("_sparse_coo_tensor_with_dims_and_tensors",
         TORCH_FN(at::native::new_with_dims_and_tensor_sparse_symint));
  m.impl("_sparse_sum.dim", TORCH_FN(sparseSumDim));
  m.impl("_to_dense", TORCH_FN(toDense));
  m.impl("_values", TORCH_FN(at::native::_values_sparse));
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("clone", TORCH_FN(at::native::clone_sparse));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_wrapper_));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse));
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse));
  m.impl("indices", TORCH_FN(at::native::indices_sparse));
  m.impl("is_coalesced", TORCH_FN(at::native::is_coalesced_sparse));
  m.impl("mm", TORCH_FN(mm));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse));
  m.impl("sparse_mask", TORCH_FN(sparseMask));
  m.impl("sparse_resize_", TORCH_FN(at::native::sparse_resize_));
  m.impl("sparse_resize_and_clear_", TORCH_FN(at::native::sparse_resize_and_clear_));
  m.impl("values", TORCH_FN(at::native::values_sparse));
}

// dense.to_sparse() on ocl: ATen's generic conversion over native nonzero and indexing.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_to_sparse",
         TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, std::optional<at::Layout>,
                                             at::OptionalIntArrayRef, std::optional<int64_t>)>(
             at::native::dense_to_sparse)));
  m.impl("_to_sparse.sparse_dim", TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, int64_t)>(
                                      at::native::dense_to_sparse)));
  m.impl("sparse_mask", TORCH_FN(sparseMask));
}

}  // namespace torch_ocl::aten
