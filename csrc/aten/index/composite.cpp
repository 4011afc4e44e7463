// Ops that PyTorch gives CPU/CUDA-only kernels but that are short compositions of ops native here:
// rsub, equal, trace, count_nonzero, index_fill_, index_copy, index_reduce, take, put_,
// linalg_cross, max_unpool2d, channel_shuffle and embedding_renorm_. Every step runs on the device
// (no host round trip but the one-bool readback of equal and the unique count of
// embedding_renorm_); argument checks are PyTorch's (meta functions) or CUDA's.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/channel_shuffle_native.h>
#include <ATen/ops/index_copy_meta.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/linalg_cross_meta.h>
#include <ATen/ops/rsub_native.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

// Indices for Tensor::index / index_put_ that select `index` along `dim`.
c10::List<std::optional<at::Tensor>> alongDim(int64_t dim, const at::Tensor& index) {
  c10::List<std::optional<at::Tensor>> indices;
  for (int64_t d = 0; d < dim; ++d) indices.push_back(std::nullopt);
  indices.push_back(index);
  return indices;
}

// CUDA's equal (without its named-tensor check): same sizes and every element equal, one bool
// read back.
bool equalFn(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. ",
              "Got: ", self.device(), " and ", other.device());
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  if (self.is_alias_of(other) && self.storage_offset() == other.storage_offset() &&
      self.dtype() == other.dtype() && self.strides() == other.strides() &&
      self.is_neg() == other.is_neg() && self.is_conj() == other.is_conj())
    return true;
  return at::eq(self, other).all().item<bool>();
}

at::Tensor countNonzeroDims(const at::Tensor& self, at::IntArrayRef dims) {
  return self.ne(0).sum(dims);
}

// index_fill_: CPU's checks, then an index_put_ of the value along dim.
at::Tensor& indexFillTensor(at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  TORCH_CHECK(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  checkSameDevice({self, index});
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (index.numel() == 0 || self.numel() == 0) return self;
  at::Tensor target = self.dim() == 0 ? self.view({1}) : self;
  target.index_put_(alongDim(dim, index.reshape({-1})),
                    value.to(self.device(), self.scalar_type()));
  return self;
}

at::Tensor& indexFillScalar(at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Scalar& value) {
  return indexFillTensor(self, dim, index, at::scalar_tensor(value, self.options()));
}

// out = self (unless they are one tensor); target and src: out and source as views of at least
// one dimension. False when there is nothing to write.
bool indexedViews(const at::Tensor& out, const at::Tensor& self, const at::Tensor& index,
                  const at::Tensor& source, at::Tensor& target, at::Tensor& src) {
  checkSameDevice({self, index, source, out});
  if (!out.is_same(self)) out.copy_(self);
  if (index.numel() == 0 || out.numel() == 0) return false;
  target = out.dim() == 0 ? out.view({1}) : out;
  src = source.dim() == 0 ? source.view({1}) : source;
  return true;
}

// index_copy: PyTorch's meta function checks and sizes, then out[..., index, ...] = source.
void indexCopyInto(Structured<at::meta::structured_index_copy>& s, const at::Tensor& self,
                   int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  const auto pre = s.meta(self, dim, index, source);
  at::Tensor target, src;
  if (!indexedViews(s.output(), self, index, source, target, src)) return;
  if (index.dim() == 0 && src.dim() == target.dim() - 1) src = src.unsqueeze(pre.dim);
  target.index_put_(alongDim(pre.dim, index.reshape({-1})), src);
}

at::Tensor indexCopyFn(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source) {
  Structured<at::meta::structured_index_copy> s(Mode::kFunctional, nullptr);
  indexCopyInto(s, self, dim, index, source);
  return s.output();
}

at::Tensor& indexCopyInplace(at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& source) {
  Structured<at::meta::structured_index_copy> s(Mode::kInplace, &self);
  indexCopyInto(s, self, dim, index, source);
  return self;
}

at::Tensor& indexCopyOut(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& source, at::Tensor& out) {
  Structured<at::meta::structured_index_copy> s(Mode::kOut, &out);
  indexCopyInto(s, self, dim, index, source);
  return out;
}

// index_reduce: scatter_reduce_ with the index broadcast along dim over source's shape (the same
// prod/mean/amax/amin and include_self rules, integer means floor-divided on both).
void indexReduceInto(Structured<at::meta::structured_index_reduce>& s, const at::Tensor& self,
                     int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     c10::string_view reduce, bool include_self) {
  const auto pre = s.meta(self, dim, index, source, reduce, include_self);
  at::Tensor target, src;
  if (!indexedViews(s.output(), self, index, source, target, src)) return;
  std::vector<int64_t> shape(src.dim(), 1);
  shape[pre.dim] = -1;
  const at::Tensor idx = index.reshape(shape).expand(src.sizes());
  target.scatter_reduce_(pre.dim, idx, src, reduce, include_self);
}

at::Tensor indexReduceFn(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& source, c10::string_view reduce, bool include_self) {
  Structured<at::meta::structured_index_reduce> s(Mode::kFunctional, nullptr);
  indexReduceInto(s, self, dim, index, source, reduce, include_self);
  return s.output();
}

at::Tensor& indexReduceInplace(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& source, c10::string_view reduce,
                               bool include_self) {
  Structured<at::meta::structured_index_reduce> s(Mode::kInplace, &self);
  indexReduceInto(s, self, dim, index, source, reduce, include_self);
  return self;
}

at::Tensor& indexReduceOut(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, c10::string_view reduce, bool include_self,
                           at::Tensor& out) {
  Structured<at::meta::structured_index_reduce> s(Mode::kOut, &out);
  indexReduceInto(s, self, dim, index, source, reduce, include_self);
  return out;
}

// take / put_: the tensor as its row-major flat sequence (negative indices count from the end).
at::Tensor takeFn(const at::Tensor& self, const at::Tensor& index) {
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "take(): Expected a long tensor for index, but got ", index.scalar_type());
  checkSameDevice({self, index});
  TORCH_CHECK(self.numel() > 0 || index.numel() == 0, "take(): tried to take from an empty tensor");
  if (index.numel() == 0) return at::empty(index.sizes(), self.options());
  return self.reshape({-1}).index({index.reshape({-1})}).view(index.sizes());
}

at::Tensor& takeOut(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  at::Tensor r = takeFn(self, index);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

at::Tensor& putInplace(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                       bool accumulate) {
  TORCH_CHECK(index.scalar_type() == at::kLong,
              "put_(): Expected a long tensor for index, but got ", index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK(index.numel() == source.numel(), "put_(): Expected source and index to have the ",
              "same number of elements, but got source.numel() = ", source.numel(),
              ", index.numel() = ", index.numel());
  checkSameDevice({self, index, source});
  if (index.numel() == 0) return self;
  TORCH_CHECK(self.numel() > 0, "put_(): Tried to put elements into an empty tensor");
  at::Tensor flat = self.is_contiguous() ? self : self.contiguous();
  flat.view({-1}).index_put_({index.reshape({-1})}, source.reshape({-1}), accumulate);
  if (!flat.is_same(self)) self.copy_(flat);
  return self;
}

// linalg_cross: shapes and checks from PyTorch's meta function; the three components from
// slices of the broadcast operands.
void crossInto(const at::Tensor& self, const at::Tensor& other, int64_t dim,
               const at::Tensor& out) {
  checkSameDevice({self, other, out});
  if (out.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, out.dim());
  const at::Tensor a = self.expand(out.sizes()), b = other.expand(out.sizes());
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    out.select(dim, i).copy_(a.select(dim, j) * b.select(dim, k) -
                             a.select(dim, k) * b.select(dim, j));
  }
}

at::Tensor crossFn(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  Structured<at::meta::structured_linalg_cross> s(Mode::kFunctional, nullptr);
  s.meta(self, other, dim);
  crossInto(self, other, dim, s.output());
  return s.output();
}

at::Tensor& crossOut(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                     at::Tensor& out) {
  Structured<at::meta::structured_linalg_cross> s(Mode::kOut, &out);
  s.meta(self, other, dim);
  // The operands may alias out: compute into a fresh tensor first.
  at::Tensor r = at::empty(out.sizes(), out.options());
  crossInto(self, other, dim, r);
  out.copy_(r);
  return out;
}

// max_unpool2d: zeros, then every input value scattered to its index in its output plane. An
// index outside the plane raises the device-side index error (CPU: "Found an invalid max index").
at::Tensor& maxUnpool2dOut(const at::Tensor& self, const at::Tensor& indices,
                           at::IntArrayRef output_size, at::Tensor& out) {
  TORCH_CHECK(indices.scalar_type() == at::kLong, "elements in indices should be type int64 but ",
              "got: ", indices.scalar_type());
  TORCH_CHECK(output_size.size() == 2, "There should be exactly two elements (height, width) in ",
              "output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4,
              "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with ",
              self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(),
              "Expected shape of indices to be same as that of the input tensor (", self.sizes(),
              ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, "max_unpooling2d_forward_out_cpu(): ",
                "Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  checkSameDevice({self, indices, out});
  const int64_t oh = output_size[0], ow = output_size[1];
  std::vector<int64_t> shape = self.sizes().vec();
  shape[shape.size() - 2] = oh;
  shape.back() = ow;
  at::native::resize_output(out, shape);
  out.zero_();
  if (self.numel() == 0) return out;
  const int64_t planes = self.numel() / (self.size(-1) * self.size(-2));
  at::Tensor flat = out.is_contiguous() ? out : at::zeros(shape, out.options());
  flat.view({planes, oh * ow})
      .scatter_(1, indices.reshape({planes, -1}), self.reshape({planes, -1}));
  if (!flat.is_same(out)) out.copy_(flat);
  return out;
}

at::Tensor maxUnpool2dFn(const at::Tensor& self, const at::Tensor& indices,
                         at::IntArrayRef output_size) {
  at::Tensor out = at::empty({0}, self.options());
  return maxUnpool2dOut(self, indices, output_size, out);
}

// embedding_renorm_ (embedding's max_norm): each referenced row once, scaled by
// max_norm / (norm + 1e-7) where its norm exceeds max_norm, as CPU does.
at::Tensor& embeddingRenorm(at::Tensor& self, const at::Tensor& indices, double max_norm,
                            double norm_type) {
  TORCH_CHECK(self.dim() == 2, "'self' must be 2-D, but got ", self.dim(), "-D");
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_renorm_(): Expected indices to have type Long or Int, but got ",
              indices.scalar_type());
  checkSameDevice({self, indices});
  if (indices.numel() == 0) return self;
  const at::Tensor rows = std::get<0>(at::_unique2(indices.reshape({-1}).to(at::kLong)));
  const at::Tensor picked = self.index_select(0, rows);
  const at::Tensor norms = at::linalg_vector_norm(picked, norm_type, {1}, /*keepdim=*/true);
  const at::Tensor scale =
      at::where(norms > max_norm, max_norm / (norms + 1e-7), at::ones_like(norms));
  self.index_copy_(0, rows, picked * scale);
  return self;
}

at::Tensor traceFn(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return self.diagonal().sum();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // ATen's rsub (other - alpha * self) and channel_shuffle (view, permute, copy) are generic.
  m.impl(
      "rsub.Tensor",
      TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, const at::Tensor&, const at::Scalar&)>(
          at::native::rsub)));
  m.impl("channel_shuffle", TORCH_FN(at::native::channel_shuffle));
  m.impl("equal", TORCH_FN(equalFn));
  m.impl("trace", TORCH_FN(traceFn));
  m.impl("embedding_renorm_", TORCH_FN(embeddingRenorm));
  m.impl("count_nonzero.dim_IntList", TORCH_FN(countNonzeroDims));
  m.impl("index_fill_.int_Scalar", TORCH_FN(indexFillScalar));
  m.impl("index_fill_.int_Tensor", TORCH_FN(indexFillTensor));
  m.impl("index_copy", TORCH_FN(indexCopyFn));
  m.impl("index_copy_", TORCH_FN(indexCopyInplace));
  m.impl("index_copy.out", TORCH_FN(indexCopyOut));
  m.impl("index_reduce", TORCH_FN(indexReduceFn));
  m.impl("index_reduce_", TORCH_FN(indexReduceInplace));
  m.impl("index_reduce.out", TORCH_FN(indexReduceOut));
  m.impl("take", TORCH_FN(takeFn));
  m.impl("take.out", TORCH_FN(takeOut));
  m.impl("put_", TORCH_FN(putInplace));
  m.impl("linalg_cross", TORCH_FN(crossFn));
  m.impl("linalg_cross.out", TORCH_FN(crossOut));
  m.impl("max_unpool2d", TORCH_FN(maxUnpool2dFn));
  m.impl("max_unpool2d.out", TORCH_FN(maxUnpool2dOut));
}

}  // namespace torch_ocl::aten
