// embedding_bag (nn.EmbeddingBag, F.embedding_bag): sum / mean / max bags, per_sample_weights,
// padding_idx, include_last_offset. The forward is one kernel (kernels/embedding_bag.cl) with
// device-side index checks; the backward composes native ops: gradient rows gathered per index,
// scaled, and accumulated by embedding_dense_backward (which also applies padding_idx and
// scale_grad_by_freq), or scattered to the maxima's rows. The auxiliary outputs follow CUDA's
// meaning: offset2bag (bag of each index), bag_size (non-padding entries per bag), max_indices
// (winning weight row per bag and feature, -1 for an empty bag; max mode only).
#include <ATen/ATen.h>
#include <ATen/TensorUtils.h>
#include <torch/library.h>

#include "aten/device_check.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kEmbeddingBagFamily;
constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

at::Tensor opt(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? *t : at::Tensor();
}

void checkInputs(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                 int64_t mode, const at::Tensor& psw) {
  checkSameDevice({weight, indices, offsets, psw});
  at::CheckedFrom c = "embedding_bag";
  at::TensorArg w{weight, "weight", 1}, i{indices, "indices", 2}, o{offsets, "offsets", 3};
  at::checkScalarTypes(c, i, {at::kLong, at::kInt});
  at::checkScalarTypes(c, o, {at::kLong, at::kInt});
  at::checkSameType(c, i, o);
  at::checkScalarTypes(c, w, {at::kHalf, at::kBFloat16, at::kFloat, at::kDouble});
  TORCH_CHECK(indices.dim() == 1, "input has to be a 1D Tensor, but got Tensor of dimension ",
              indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets.dim());
  TORCH_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  TORCH_CHECK(mode >= kSum && mode <= kMax, "embedding_bag: unknown mode ", mode);
  if (psw.defined()) {
    TORCH_CHECK(mode == kSum, "embedding_bag: per_sample_weights only supported with mode='sum'");
    at::TensorArg p{psw, "per_sample_weights", 7};
    at::checkSameType(c, w, p);
    TORCH_CHECK(psw.dim() == 1, "embedding_bag: per_sample_weights has to be a 1D Tensor, got ",
                psw.dim(), " dimensions");
    TORCH_CHECK(psw.numel() == indices.numel(),
                "embedding_bag: expected per_sample_weights.numel() (", psw.numel(),
                ") to be the same as indices.numel() (", indices.numel(), ")");
  }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> embeddingBag(
    const at::Tensor& weight_, const at::Tensor& indices_, const at::Tensor& offsets_,
    bool scale_grad_by_freq, int64_t mode, bool sparse,
    const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
    int64_t padding_idx) {
  const at::Tensor psw_ = opt(per_sample_weights);
  checkInputs(weight_, indices_, offsets_, mode, psw_);
  int64_t bags = offsets_.size(0);
  if (include_last_offset) {
    TORCH_CHECK(bags >= 1, "include_last_offset: number of offsets should be at least 1");
    --bags;
  }
  const at::Tensor weight = weight_.contiguous();
  const at::Tensor indices = indices_.to(at::kLong).contiguous();
  const at::Tensor offsets = offsets_.to(at::kLong).contiguous();
  const at::Tensor psw = psw_.defined() ? psw_.contiguous() : psw_;
  const int64_t n = indices.numel(), D = weight.size(1);
  const auto lopt = indices.options();
  at::Tensor output = at::empty({bags, D}, weight.options());
  at::Tensor offset2bag = at::empty({n}, lopt);
  at::Tensor bag_size = at::empty({bags}, lopt);
  at::Tensor max_indices = at::empty({mode == kMax ? bags : 0, mode == kMax ? D : 0}, lopt);
  if (bags > 0 && D > 0) {
    const c10::DeviceIndex idx = weight.device().index();
    OCL_TRY
    const std::string checks = std::string(deviceCheckSource()) +
                               "#define OCL_CHECK_EMBEDDING_BAG " +
                               std::to_string(static_cast<int>(CheckedOp::kEmbeddingBag)) + "\n";
    cl_kernel k = programs(idx).kernel(
        nnProgram(idx, &kEmbeddingBagFamily, "embedding_bag.cl", weight.scalar_type(), checks),
        "embedding_bag_forward");
    const rt::BufferRef any = bufferOf(output);
    cl_uint a = 0;
    setArg(k, a, bufferOf(weight));
    setArg(k, a, n > 0 ? bufferOf(indices) : any);
    setArg(k, a, bufferOf(offsets));
    setArg(k, a, psw.defined() && n > 0 ? bufferOf(psw) : any);
    setArg(k, a, bufferOf(output));
    setArg(k, a, bufferOf(bag_size));
    setArg(k, a, n > 0 ? bufferOf(offset2bag) : any);
    setArg(k, a, mode == kMax ? bufferOf(max_indices) : any);
    const rt::BufferRef rec = deviceErrorRecord(idx);
    OCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &rec.mem));
    for (int64_t v : {n, offsets.size(0), weight.size(0), D, padding_idx < 0 ? -1 : padding_idx})
      setArg(k, a, static_cast<cl_long>(v));
    setArg(k, a, static_cast<cl_int>(mode));
    setArg(k, a, static_cast<cl_int>(psw.defined()));
    const size_t local[2] = {64, 1};
    const size_t global[2] = {static_cast<size_t>((D + 63) / 64 * 64), static_cast<size_t>(bags)};
    launch2D(currentQueue(idx), k, global, local);
    OCL_CATCH
  } else {
    bag_size.zero_();
    offset2bag.zero_();
  }
  return {output, offset2bag, bag_size, max_indices};
}

at::Tensor embeddingBagDenseBackward(const at::Tensor& grad, const at::Tensor& indices,
                                     const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                     const at::Tensor& max_indices, int64_t num_weights,
                                     bool scale_grad_by_freq, int64_t mode,
                                     const std::optional<at::Tensor>& per_sample_weights,
                                     int64_t padding_idx) {
  checkSameDevice({grad, indices, offset2bag, bag_size, max_indices});
  const int64_t D = grad.size(1);
  if (mode == kMax) {
    at::Tensor grad_weight = at::zeros({num_weights, D}, grad.options());
    if (max_indices.numel() == 0) return grad_weight;
    const at::Tensor valid = max_indices.ge(0);
    return grad_weight.scatter_add_(0, max_indices.clamp_min(0),
                                    grad.masked_fill(valid.logical_not(), 0));
  }
  const at::Tensor o2b = offset2bag.to(at::kLong);
  at::Tensor rows = grad.index_select(0, o2b);
  if (mode == kMean)
    rows = rows / bag_size.index_select(0, o2b).clamp_min(1).unsqueeze(1).to(rows.scalar_type());
  const at::Tensor psw = opt(per_sample_weights);
  if (psw.defined()) rows = rows * psw.unsqueeze(1).to(rows.scalar_type());
  return at::embedding_dense_backward(rows, indices, num_weights,
                                      padding_idx < 0 ? -1 : padding_idx, scale_grad_by_freq);
}

// What autograd calls; sparse gradients would be sparse tensors, which ocl does not hold yet.
at::Tensor embeddingBagBackward(const at::Tensor& grad, const at::Tensor& indices,
                                const at::Tensor& offsets, const at::Tensor& offset2bag,
                                const at::Tensor& bag_size, const at::Tensor& max_indices,
                                int64_t num_weights, bool scale_grad_by_freq, int64_t mode,
                                bool sparse, const std::optional<at::Tensor>& per_sample_weights,
                                int64_t padding_idx) {
  TORCH_CHECK_NOT_IMPLEMENTED(!sparse,
                              "torch-ocl: embedding_bag(sparse=True) needs sparse gradients, "
                              "which ocl does not support yet; use sparse=False");
  return at::_embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, max_indices,
                                           num_weights, scale_grad_by_freq, mode,
                                           per_sample_weights, padding_idx);
}

at::Tensor embeddingBagPerSampleWeightsBackward(const at::Tensor& grad, const at::Tensor& weight,
                                                const at::Tensor& indices,
                                                const at::Tensor& offsets,
                                                const at::Tensor& offset2bag, int64_t mode,
                                                int64_t padding_idx) {
  TORCH_CHECK(mode == kSum,
              "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  checkSameDevice({grad, weight, indices, offsets, offset2bag});
  const at::Tensor idx = indices.to(at::kLong);
  at::Tensor out =
      (grad.index_select(0, offset2bag.to(at::kLong)) * weight.index_select(0, idx)).sum(1);
  if (padding_idx >= 0) out = out.masked_fill(idx.eq(padding_idx), 0);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_embedding_bag", TORCH_FN(embeddingBag));
  m.impl("_embedding_bag_backward", TORCH_FN(embeddingBagBackward));
  m.impl("_embedding_bag_dense_backward", TORCH_FN(embeddingBagDenseBackward));
  m.impl("_embedding_bag_forward_only", TORCH_FN(embeddingBag));
  m.impl("_embedding_bag_per_sample_weights_backward",
         TORCH_FN(embeddingBagPerSampleWeightsBackward));
}

}  // namespace torch_ocl::aten
