// Indexing ops: gather, scatter (src, value, reduce), scatter_add, scatter_reduce, index_select,
// index_add, embedding_dense_backward. The structured ones run PyTorch's own meta and impl
// functions (all argument checks as on CPU); the impls reach our kernels through ATen's dispatch
// stubs for PrivateUse1. Every index is checked on the device (device_check.h).
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorAdvancedIndexing.h>
#include <ATen/ops/gather_native.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/scatter_add_native.h>
#include <ATen/ops/scatter_native.h>
#include <ATen/ops/scatter_reduce_native.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/index_kernels.h"
#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

using at::native::ReductionType;

GsMode modeOf(ReductionType r) {
  switch (r) {
    case ReductionType::SUM:
    case ReductionType::MEAN:  // the impl divides by the counts afterwards
      return GsMode::kAdd;
    case ReductionType::PROD:
      return GsMode::kMul;
    case ReductionType::MAX:
      return GsMode::kMax;
    case ReductionType::MIN:
      return GsMode::kMin;
  }
  TORCH_INTERNAL_ASSERT(false);
}

at::Tensor longIndex(const at::Tensor& index) {
  return index.scalar_type() == c10::kLong ? index : index.to(c10::kLong);
}

// A scalar as a tensor of self's dtype on its device, broadcast to `shape` (stride 0).
at::Tensor broadcastScalar(const c10::Scalar& v, const at::Tensor& self, at::IntArrayRef shape) {
  return at::scalar_tensor(v, self.options()).expand(shape);
}

// ---- dispatch stubs ---------------------------------------------------------------------------

void gatherStub(const at::Tensor& result, const at::Tensor& self, int64_t dim,
                const at::Tensor& index) {
  launchGatherScatter(GsMode::kGather, CheckedOp::kGather, result, index, self, dim, false);
}
void scatterStub(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                 const at::Tensor& src) {
  launchGatherScatter(GsMode::kScatter, CheckedOp::kScatter, src, index, self, dim, false);
}
void scatterFillStub(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const c10::Scalar& value) {
  launchGatherScatter(GsMode::kScatter, CheckedOp::kScatter,
                      broadcastScalar(value, self, index.sizes()), index, self, dim, false);
}
void scatterAddStub(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                    const at::Tensor& src) {
  launchGatherScatter(GsMode::kAdd, CheckedOp::kScatterAdd, src, index, self, dim, false);
}
void scatterReduceStub(const at::Tensor& self, const int64_t dim, const at::Tensor& index,
                       const at::Tensor& src, const ReductionType& reduce) {
  launchGatherScatter(modeOf(reduce), CheckedOp::kScatterReduce, src, index, self, dim, false);
}
void scatterScalarReduceStub(const at::Tensor& self, const int64_t dim, const at::Tensor& index,
                             const c10::Scalar& value, const ReductionType& reduce) {
  launchGatherScatter(modeOf(reduce), CheckedOp::kScatterReduce,
                      broadcastScalar(value, self, index.sizes()), index, self, dim, false);
}

}  // namespace

OCL_REGISTER_STUB(gather_stub, &gatherStub)
OCL_REGISTER_STUB(scatter_stub, &scatterStub)
OCL_REGISTER_STUB(scatter_fill_stub, &scatterFillStub)
OCL_REGISTER_STUB(scatter_add_stub, &scatterAddStub)
OCL_REGISTER_STUB(scatter_reduce_stub, &scatterReduceStub)
OCL_REGISTER_STUB(scatter_scalar_reduce_stub, &scatterScalarReduceStub)
OCL_REGISTER_STUB(scatter_reduce_two_stub, &scatterReduceStub)

namespace {

// ---- structured ops: PyTorch's meta + impl, our stubs -----------------------------------------

// Runs meta then impl for functional (out == nullptr), in-place (out == &self) or out= forms.
template <class Impl, typename... Args>
at::Tensor runStructured(Mode mode, at::Tensor* out, const Args&... args) {
  Structured<Impl> s(mode, out);
  s.meta(args...);
  s.impl(args..., s.output());
  return s.output();
}

bool rmwOk(GsMode mode, const at::Tensor& self) {
  return self.device().type() != kOcl ||
         gatherScatterSupported(mode, self.scalar_type(), self.device().index());
}

GsMode modeOfName(c10::string_view reduce) {
  if (reduce == "add" || reduce == "sum" || reduce == "mean") return GsMode::kAdd;
  if (reduce == "multiply" || reduce == "prod") return GsMode::kMul;
  if (reduce == "amax") return GsMode::kMax;
  return GsMode::kMin;
}

using GatherImpl = at::native::structured_gather_out;
at::Tensor gatherFn(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse) {
  return runStructured<GatherImpl>(Mode::kFunctional, nullptr, self, dim, index, sparse);
}
at::Tensor& gatherOut(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse,
                      at::Tensor& out) {
  runStructured<GatherImpl>(Mode::kOut, &out, self, dim, index, sparse);
  return out;
}

// scatter / scatter_add / scatter_reduce in their three forms; RMW dtypes the device cannot
// accumulate go through the counted fallback.
#define OCL_SCATTER_FORMS(NAME, OP, OVL, OUT_OVL, IMPL, MODE_EXPR, PARAMS, ARGS)             \
  at::Tensor NAME##Fn(const at::Tensor& self, int64_t dim, const at::Tensor& index PARAMS) { \
    if (!rmwOk(MODE_EXPR, self))                                                             \
      return runFallback("aten::" OP, OVL, {self, dim, index ARGS})[0].toTensor();           \
    return runStructured<IMPL>(Mode::kFunctional, nullptr, self, dim, index ARGS);           \
  }                                                                                          \
  at::Tensor& NAME##Inplace(at::Tensor& self, int64_t dim, const at::Tensor& index PARAMS) { \
    if (!rmwOk(MODE_EXPR, self)) {                                                           \
      runFallback("aten::" OP "_", OVL, {self, dim, index ARGS});                            \
      return self;                                                                           \
    }                                                                                        \
    runStructured<IMPL>(Mode::kInplace, &self, self, dim, index ARGS);                       \
    return self;                                                                             \
  }                                                                                          \
  at::Tensor& NAME##Out(const at::Tensor& self, int64_t dim, const at::Tensor& index PARAMS, \
                        at::Tensor& out) {                                                   \
    if (!rmwOk(MODE_EXPR, self)) {                                                           \
      runFallback("aten::" OP, OUT_OVL, {self, dim, index ARGS, out});                       \
      return out;                                                                            \
    }                                                                                        \
    runStructured<IMPL>(Mode::kOut, &out, self, dim, index ARGS);                            \
    return out;                                                                              \
  }

#define OCL_COMMA ,
OCL_SCATTER_FORMS(scatterSrc, "scatter", "src", "src_out", at::native::structured_scatter_src_out,
                  GsMode::kScatter, OCL_COMMA const at::Tensor& src, OCL_COMMA src)
OCL_SCATTER_FORMS(scatterValue, "scatter", "value", "value_out",
                  at::native::structured_scatter_value_out, GsMode::kScatter,
                  OCL_COMMA const c10::Scalar& value, OCL_COMMA value)
OCL_SCATTER_FORMS(scatterReduce, "scatter", "reduce", "reduce_out",
                  at::native::structured_scatter_reduce_out, modeOfName(reduce),
                  OCL_COMMA const at::Tensor& src OCL_COMMA c10::string_view reduce,
                  OCL_COMMA src OCL_COMMA reduce)
OCL_SCATTER_FORMS(scatterValueReduce, "scatter", "value_reduce", "value_reduce_out",
                  at::native::structured_scatter_value_reduce_out, modeOfName(reduce),
                  OCL_COMMA const c10::Scalar& value OCL_COMMA c10::string_view reduce,
                  OCL_COMMA value OCL_COMMA reduce)
OCL_SCATTER_FORMS(scatterAdd, "scatter_add", "", "out", at::native::structured_scatter_add,
                  GsMode::kAdd, OCL_COMMA const at::Tensor& src, OCL_COMMA src)
OCL_SCATTER_FORMS(scatterReduceTwo, "scatter_reduce", "two", "two_out",
                  at::native::structured_scatter_reduce_two, modeOfName(reduce),
                  OCL_COMMA const at::Tensor& src OCL_COMMA c10::string_view reduce
                      OCL_COMMA bool include_self,
                  OCL_COMMA src OCL_COMMA reduce OCL_COMMA include_self)

// ---- index_select -----------------------------------------------------------------------------

at::Tensor& indexSelectOut(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           at::Tensor& out) {
  checkSameDevice({self, index, out});
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "index_select(): self and result must have the same scalar type");
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.dim() > 0 || index.numel() == 1,
              "index_select(): Index to scalar can have only 1 value, got ", index.numel(),
              " value(s)");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) shape[dim] = index.numel();
  at::native::resize_output(out, shape);
  if (out.numel() == 0) return out;
  const at::Tensor idx = longIndex(index);
  const at::Tensor self1 = self.dim() == 0 ? self.reshape({1}) : self;
  at::Tensor out1 = out.dim() == 0 ? out.view({1}) : out;
  // The index seen along `dim` at every position of the output.
  std::vector<int64_t> istrides(out1.dim(), 0);
  istrides[dim] = idx.dim() == 0 ? 0 : idx.stride(0);
  const at::Tensor idx_view = idx.as_strided(out1.sizes(), istrides);
  launchGatherScatter(GsMode::kGather, CheckedOp::kIndexSelect, out1, idx_view, self1, dim, false);
  return out;
}

at::Tensor indexSelectFn(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = at::empty({0}, self.options());
  return indexSelectOut(self, dim, index, out);
}

// ---- index_add --------------------------------------------------------------------------------

void indexAddInto(const at::Tensor& out, const at::Tensor& self, int64_t dim,
                  const at::Tensor& index, const at::Tensor& source, const c10::Scalar& alpha) {
  checkSameDevice({self, index, source, out});
  if (!out.is_same(self)) out.copy_(self);
  if (index.numel() == 0 || source.numel() == 0) return;
  at::Tensor src = source;
  if (!(alpha.isIntegral(true) && alpha.to<int64_t>() == 1)) src = source.mul(alpha);
  const at::Tensor idx = longIndex(index);
  at::Tensor src1 = src.dim() == 0 ? src.reshape({1}) : src;
  at::Tensor out1 = out.dim() == 0 ? out.view({1}) : out;
  std::vector<int64_t> istrides(src1.dim(), 0);
  istrides[dim] = idx.dim() == 0 ? 0 : idx.stride(0);
  launchGatherScatter(GsMode::kAdd, CheckedOp::kIndexAdd, src1,
                      idx.as_strided(src1.sizes(), istrides), out1, dim, false);
}

at::Tensor& indexAddOut(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source, const c10::Scalar& alpha, at::Tensor& out) {
  if (!rmwOk(GsMode::kAdd, self)) {
    runFallback("aten::index_add", "out", {self, dim, index, source, alpha, out});
    return out;
  }
  Structured<at::meta::structured_index_add> s(Mode::kOut, &out);
  const auto pre = s.meta(self, dim, index, source, alpha);
  indexAddInto(out, self, pre.dim, index, source, alpha);
  return out;
}
at::Tensor indexAddFn(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& source, const c10::Scalar& alpha) {
  if (!rmwOk(GsMode::kAdd, self))
    return runFallback("aten::index_add", "", {self, dim, index, source, alpha})[0].toTensor();
  Structured<at::meta::structured_index_add> s(Mode::kFunctional, nullptr);
  const auto pre = s.meta(self, dim, index, source, alpha);
  indexAddInto(s.output(), self, pre.dim, index, source, alpha);
  return s.output();
}
at::Tensor& indexAddInplace(at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& source, const c10::Scalar& alpha) {
  if (!rmwOk(GsMode::kAdd, self)) {
    runFallback("aten::index_add_", "", {self, dim, index, source, alpha});
    return self;
  }
  Structured<at::meta::structured_index_add> s(Mode::kInplace, &self);
  const auto pre = s.meta(self, dim, index, source, alpha);
  indexAddInto(self, self, pre.dim, index, source, alpha);
  return self;
}

// ---- embedding backward -----------------------------------------------------------------------

at::Tensor embeddingDenseBackward(const at::Tensor& grad_output, const at::Tensor& indices,
                                  int64_t num_weights, int64_t padding_idx,
                                  bool scale_grad_by_freq) {
  checkSameDevice({grad_output, indices});
  TORCH_CHECK(indices.scalar_type() == c10::kLong || indices.scalar_type() == c10::kInt,
              "embedding_backward: Expected tensor for argument #1 'indices' to have one of the "
              "following scalar types: Long, Int; but got ",
              indices.scalar_type());
  if (!rmwOk(GsMode::kAdd, grad_output))
    return runFallback("aten::embedding_dense_backward", "",
                       {grad_output, indices, num_weights, padding_idx, scale_grad_by_freq})[0]
        .toTensor();
  const int64_t n = indices.numel();
  const int64_t d = grad_output.size(-1);
  const at::Tensor idx = longIndex(indices).reshape({n});
  at::Tensor grad = grad_output.reshape({n, d});
  at::Tensor grad_weight = at::zeros({num_weights, d}, grad_output.options());
  if (n == 0 || d == 0) return grad_weight;
  if (scale_grad_by_freq) {
    at::Tensor counts = at::zeros({num_weights}, grad_output.options());
    launchGatherScatter(GsMode::kAdd, CheckedOp::kEmbeddingBackward,
                        at::ones({n}, grad_output.options()), idx, counts, 0, false);
    grad = grad / counts.index_select(0, idx).unsqueeze(1);
  }
  if (padding_idx >= 0) grad = grad.masked_fill(idx.eq(padding_idx).unsqueeze(1), 0);
  launchGatherScatter(GsMode::kAdd, CheckedOp::kEmbeddingBackward, grad,
                      idx.as_strided({n, d}, {idx.stride(0), 0}), grad_weight, 0, false);
  return grad_weight;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("embedding_dense_backward", TORCH_FN(embeddingDenseBackward));
  m.impl("gather", TORCH_FN(gatherFn));
  m.impl("gather.out", TORCH_FN(gatherOut));
  m.impl("index_add", TORCH_FN(indexAddFn));
  m.impl("index_add_", TORCH_FN(indexAddInplace));
  m.impl("index_add.out", TORCH_FN(indexAddOut));
  m.impl("index_select", TORCH_FN(indexSelectFn));
  m.impl("index_select.out", TORCH_FN(indexSelectOut));
  m.impl("scatter.src", TORCH_FN(scatterSrcFn));
  m.impl("scatter_.src", TORCH_FN(scatterSrcInplace));
  m.impl("scatter.src_out", TORCH_FN(scatterSrcOut));
  m.impl("scatter.value", TORCH_FN(scatterValueFn));
  m.impl("scatter_.value", TORCH_FN(scatterValueInplace));
  m.impl("scatter.value_out", TORCH_FN(scatterValueOut));
  m.impl("scatter.reduce", TORCH_FN(scatterReduceFn));
  m.impl("scatter_.reduce", TORCH_FN(scatterReduceInplace));
  m.impl("scatter.reduce_out", TORCH_FN(scatterReduceOut));
  m.impl("scatter.value_reduce", TORCH_FN(scatterValueReduceFn));
  m.impl("scatter_.value_reduce", TORCH_FN(scatterValueReduceInplace));
  m.impl("scatter.value_reduce_out", TORCH_FN(scatterValueReduceOut));
  m.impl("scatter_add", TORCH_FN(scatterAddFn));
  m.impl("scatter_add_", TORCH_FN(scatterAddInplace));
  m.impl("scatter_add.out", TORCH_FN(scatterAddOut));
  m.impl("scatter_reduce.two", TORCH_FN(scatterReduceTwoFn));
  m.impl("scatter_reduce_.two", TORCH_FN(scatterReduceTwoInplace));
  m.impl("scatter_reduce.two_out", TORCH_FN(scatterReduceTwoOut));
}

}  // namespace torch_ocl::aten
