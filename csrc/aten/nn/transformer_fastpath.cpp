// The Transformer "fast path" ops that nn.MultiheadAttention, nn.TransformerEncoderLayer and
// nn.TransformerEncoder call in eval mode without autograd (torch/nn/modules/activation.py,
// transformer.py): _transform_bias_rescale_qkv, _native_multi_head_attention and
// _transformer_encoder_layer_fwd, composed in C++ of our native ops (GEMM, SDPA, _masked_softmax,
// layer_norm, addmm with fused relu/gelu epilogues).
//
// The masks follow CPU's fast path exactly: a float mask is made boolean (nonzero = left out) as
// at::native's masked_softmax does, and a query row whose keys are all left out gives NaN, not
// the zeros SDPA gives. The scores are materialised as CPU does (batched GEMMs and
// _masked_softmax) unless need_weights is off and they would exceed TORCH_OCL_MHA_SCORES_MIB; then
// the attention runs in our SDPA kernel with no (L, S) score matrix.
//
// Nested tensors: TransformerEncoder turns its input into a nested tensor when it gets a
// src_key_padding_mask on the fast path (transformer.py accepts the privateuse1 device there).
// For ocl the nested tensor is built from an ocl buffer (_nested_tensor_from_mask and friends, the
// device-generic implementations PyTorch registers for CPU), and the encoder layer on a nested
// input pads it, runs the dense layer with the equivalent key-padding mask and packs the rows back.
#include <ATen/ATen.h>
#include <ATen/NestedTensorImpl.h>
#include <ATen/ops/_nested_from_padded_native.h>
#include <ATen/ops/_nested_tensor_from_mask_left_aligned_native.h>
#include <ATen/ops/_nested_tensor_from_mask_native.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>
#include <ATen/ops/to_padded_tensor_native.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace torch_ocl::aten {
namespace {

// Above this size of the (B, H, T, T) scores attention without need_weights runs in SDPA:
// TORCH_OCL_MHA_SCORES_MIB (default 256; 0 always takes SDPA). Read per call (tests switch it).
double materialiseBytes() {
  const char* env = std::getenv("TORCH_OCL_MHA_SCORES_MIB");
  return (env && *env ? std::atof(env) : 256.0) * 1024.0 * 1024.0;
}

bool fastpathDtype(c10::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// q = (q + bq) / sqrt(dh), k = k + bk, v = v + bv, each (B, H, T, dh) out of one (3, B, H, T, dh)
// buffer as CPU returns them: one broadcast add into the permuted buffer, one scale of q.
std::tuple<at::Tensor, at::Tensor, at::Tensor> transformBiasRescaleQkv(const at::Tensor& qkv_in,
                                                                       const at::Tensor& qkv_bias,
                                                                       int64_t num_head) {
  const at::Tensor qkv = qkv_in.is_nested() ? qkv_in.to_padded_tensor(0) : qkv_in;
  checkSameDevice({qkv, qkv_bias});
  TORCH_CHECK(qkv.dim() == 3, "_transform_bias_rescale_qkv: expected a 3-D qkv, got ", qkv.dim(),
              "-D");
  const int64_t B = qkv.size(0), T = qkv.size(1), D3 = qkv.size(2), D = D3 / 3;
  TORCH_CHECK(num_head > 0 && D % num_head == 0);
  TORCH_CHECK(D3 % 3 == 0);
  TORCH_CHECK(qkv_bias.dim() == 1 && qkv_bias.size(0) == D3,
              "_transform_bias_rescale_qkv: expected a qkv_bias of ", D3, " elements, got ",
              qkv_bias.sizes());
  if (!fastpathDtype(qkv.scalar_type())) {
    auto r = runFallback("aten::_transform_bias_rescale_qkv", "", {qkv_in, qkv_bias, num_head});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  const int64_t dh = D / num_head;
  at::Tensor q_k_v = at::empty({3, B, num_head, T, dh}, qkv.options());
  const at::Tensor src = qkv.view({B, T, 3, num_head, dh}).permute({2, 0, 3, 1, 4});
  const at::Tensor bias = qkv_bias.to(qkv.scalar_type()).view({3, 1, num_head, 1, dh});
  at::add_out(q_k_v, src, bias);
  // CPU multiplies by 1 / sqrt(dh) computed in the element type.
  double inv = 1.0 / std::sqrt(static_cast<double>(dh));
  if (qkv.scalar_type() == at::kFloat) inv = 1.0f / std::sqrt(static_cast<float>(dh));
  q_k_v.select(0, 0).mul_(inv);
  return {q_k_v[0], q_k_v[1], q_k_v[2]};
}

// A stride-0 (broadcast) dim of an expanded view shrunk back to size 1: masks built by expand
// (merge_masks) keep their small size for the bias SDPA broadcasts itself.
at::Tensor unexpand(at::Tensor t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) == 0 && t.size(d) > 1) t = t.narrow(d, 0, 1);
  return t;
}

// The mask as CPU's fast path reads it: boolean (true = left out), viewed as 4-D broadcastable
// to the (B, H, L, S) scores. mask_type 0: (L, S); 1: (B, S); 2 (or other ranks): (B, H, L, S).
at::Tensor mask4d(const at::Tensor& mask, std::optional<int64_t> mask_type, int64_t B, int64_t L,
                  int64_t S) {
  at::Tensor m = mask.scalar_type() == at::kBool ? mask : mask.to(at::kBool);
  if (m.dim() == 2 && mask_type == 1) return m.view({B, 1, 1, S});
  if (m.dim() == 2) return m.view({1, 1, L, S});
  if (m.dim() == 3) return m.unsqueeze(1);
  TORCH_CHECK(m.dim() == 4, "_native_multi_head_attention: expected a 2-D, 3-D or 4-D mask, got ",
              m.dim(), "-D");
  return m;
}

std::tuple<at::Tensor, at::Tensor> nativeMultiHeadAttention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim,
    int64_t num_head, const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
    const at::Tensor& proj_weight, const at::Tensor& proj_bias,
    const std::optional<at::Tensor>& mask_opt, bool need_weights, bool average_attn_weights,
    std::optional<int64_t> mask_type) {
  const bool has_mask = mask_opt.has_value() && mask_opt->defined();
  TORCH_CHECK(!query.is_nested() && !key.is_nested() && !value.is_nested(),
              "torch-ocl: _native_multi_head_attention: a nested query needs nested key and value");
  const int64_t D = embed_dim;
  TORCH_CHECK(query.dim() == 3, "expected 3-D `query`, got ", query.dim(), "-D tensor");
  TORCH_CHECK(query.sizes()[2] == embed_dim, "passed-in embed_dim ", embed_dim,
              " didn't match last dim of query ", query.sizes()[2]);
  TORCH_CHECK(key.dim() == 3, "expected 3-D `key`, got ", key.dim(), "-D tensor");
  TORCH_CHECK(value.dim() == 3, "expected 3-D `value`, got ", value.dim(), "-D tensor");
  TORCH_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(),
              "expected `query`/`key`/`value` shapes to match");
  TORCH_CHECK(qkv_weight.dim() == 2, "expected 2-D `qkv_weight`, got ", qkv_weight.dim(),
              "-D tensor");
  TORCH_CHECK(D * 3 == qkv_weight.sizes()[0], "expected `qkv_weight` first dim to be 3x embed_dim");
  TORCH_CHECK(D == qkv_weight.sizes()[1], "expected `qkv_weight` second dim to be embed_Dim");
  TORCH_CHECK(qkv_bias.dim() == 1, "expected 1-D `qkv_bias`, got ", qkv_bias.dim(), "-D tensor");
  TORCH_CHECK(qkv_bias.sizes()[0] == 3 * D,
              "expected `qkv_bias` first dim and first dim of query to be equal");
  TORCH_CHECK(num_head > 0 && D % num_head == 0, "`embed_dim` must divide evenly by `num_heads`");
  checkSameDevice({query, key, value, qkv_weight, qkv_bias, proj_weight, proj_bias});
  if (has_mask) checkSameDevice({query, *mask_opt});
  if (!fastpathDtype(query.scalar_type())) {
    auto r = runFallback("aten::_native_multi_head_attention", "",
                         {query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                          proj_bias, mask_opt, need_weights, average_attn_weights, mask_type});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  const int64_t B = query.size(0), T = query.size(1);
  // The input projection, as CPU's qkv_projection: one GEMM for self-attention, otherwise the
  // weight split by rows and the results concatenated.
  at::Tensor qkv;
  if (key.is_same(value) && query.is_same(key)) {
    qkv = at::matmul(query, qkv_weight.t());
  } else if (key.is_same(value)) {
    auto w = qkv_weight.split_with_sizes({D, 2 * D}, 0);
    qkv = at::cat({at::matmul(query, w[0].t()), at::matmul(key, w[1].t())}, 2);
  } else {
    auto w = qkv_weight.chunk(3, 0);
    qkv = at::cat(
        {at::matmul(query, w[0].t()), at::matmul(key, w[1].t()), at::matmul(value, w[2].t())}, 2);
  }
  if (qkv.numel() == 0) return {at::empty_like(query), at::Tensor()};
  auto [q, k, v] = at::_transform_bias_rescale_qkv(qkv, qkv_bias, num_head);
  qkv = at::Tensor();
  at::Tensor mask;  // boolean, 4-D, broadcastable to (B, H, T, T)
  if (has_mask) mask = mask4d(*mask_opt, mask_type, B, T, T);
  at::Tensor ctx;  // (B, H, T, dh)
  at::Tensor weights;
  // The scores materialised (two batched GEMMs around _masked_softmax, CPU's own sequence) unless
  // they would be large: on PoCL the GEMM route measured 4-6x faster than our SDPA kernel at
  // T = 128 and 512 (benchmark in the commit message); SDPA keeps memory O(T) for long sequences.
  const double score_bytes = static_cast<double>(B) * static_cast<double>(num_head) *
                             static_cast<double>(T) * static_cast<double>(T) *
                             static_cast<double>(query.element_size());
  if (!need_weights && score_bytes > materialiseBytes()) {
    // q is already scaled: SDPA with scale 1, the mask as a -inf bias of its own (small) size.
    std::optional<at::Tensor> bias;
    if (mask.defined()) {
      const at::Tensor small = unexpand(mask);
      bias = at::zeros(small.sizes(), q.options())
                 .masked_fill_(small, -std::numeric_limits<double>::infinity());
    }
    ctx = at::scaled_dot_product_attention(q, k, v, bias, 0.0, false, 1.0);
    if (mask.defined()) {
      // CPU's masked softmax: a row with every key left out is NaN (SDPA gives zeros).
      const at::Tensor dead = unexpand(mask).all(-1, /*keepdim=*/true);
      ctx = ctx.masked_fill(dead, std::numeric_limits<double>::quiet_NaN());
    }
  } else {
    at::Tensor qkt = at::matmul(q, k.transpose(-2, -1));  // (B, H, T, T)
    if (mask.defined()) {
      qkt = at::_masked_softmax(qkt, mask.expand(qkt.sizes()), qkt.dim() - 1, 2);
    } else {
      qkt = at::_softmax(qkt, qkt.dim() - 1, false);
    }
    ctx = at::matmul(qkt, v);
    if (need_weights) weights = qkt;
  }
  // (B, H, T, dh) -> (B * T, D), then the output projection with its bias in the GEMM epilogue.
  const at::Tensor ctx2 = ctx.permute({0, 2, 1, 3}).reshape({B * T, D});
  at::Tensor proj = at::addmm(proj_bias, ctx2, proj_weight.t()).view({B, T, -1});
  if (need_weights && average_attn_weights) weights = weights.sum(1).div_(num_head);
  return {proj, weights};
}

// The padded form of a nested (B, T_i, D) tensor and its key-padding mask (true = padding).
std::pair<at::Tensor, at::Tensor> padNested(const at::Tensor& nested) {
  auto* impl = at::native::get_nested_tensor_impl(nested);
  const at::Tensor& sizes = impl->get_nested_sizes();  // (B, 2) on the CPU
  TORCH_CHECK(sizes.dim() == 2 && sizes.size(1) == 2,
              "torch-ocl: the Transformer fast path expects a nested tensor of 2-D rows");
  const at::Tensor padded = at::native::NestedTensor_to_padded_tensor_generic(nested, 0.0);
  const at::Tensor lengths = sizes.select(1, 0).to(padded.device());
  const at::Tensor kpm =
      at::arange(padded.size(1), lengths.options()).unsqueeze(0).ge(lengths.unsqueeze(1));
  return {padded, kpm};
}

// _native_multi_head_attention on a nested query (self-attention, no mask, no weights, as CPU's
// nested path allows): the padded query with its padding as a key-padding mask, the valid rows
// packed back into a nested result.
std::tuple<at::Tensor, at::Tensor> nativeMultiHeadAttentionNested(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim,
    int64_t num_head, const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
    const at::Tensor& proj_weight, const at::Tensor& proj_bias,
    const std::optional<at::Tensor>& mask, bool need_weights, bool average_attn_weights,
    std::optional<int64_t> mask_type) {
  TORCH_CHECK(!(mask.has_value() && mask->defined()),
              "NestedTensor with mask is not supported yet");
  TORCH_CHECK(query.is_same(key) && key.is_same(value),
              "torch-ocl: _native_multi_head_attention on nested tensors supports self-attention "
              "only (query, key and value the same tensor)");
  TORCH_CHECK(!need_weights,
              "torch-ocl: _native_multi_head_attention on nested tensors supports "
              "need_weights=False only");
  const at::Tensor& sizes = at::native::get_nested_tensor_impl(query)->get_nested_sizes();
  if (at::native::get_nested_tensor_impl(query)->get_buffer().numel() == 0)
    return {at::detail::make_tensor<at::native::NestedTensorImpl>(
                at::native::get_nested_tensor_impl(query)->get_buffer(), sizes),
            at::Tensor()};
  auto [padded, kpm] = padNested(query);
  auto r =
      nativeMultiHeadAttention(padded, padded, padded, embed_dim, num_head, qkv_weight, qkv_bias,
                               proj_weight, proj_bias, kpm, false, average_attn_weights, 1);
  return {at::_nested_from_padded(std::get<0>(r), sizes, false), at::Tensor()};
}

// nn.TransformerEncoderLayer's fast path: PyTorch's own composition (the one it registers for
// CPU and CUDA), whose ops (layer_norm, _native_multi_head_attention above, _addmm_activation,
// addmm, add_) all run natively here.
at::Tensor encoderLayerDense(const at::Tensor& src, int64_t embed_dim, int64_t num_heads,
                             const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
                             const at::Tensor& proj_weight, const at::Tensor& proj_bias,
                             bool use_gelu, bool norm_first, double eps, const at::Tensor& nw1,
                             const at::Tensor& nb1, const at::Tensor& nw2, const at::Tensor& nb2,
                             const at::Tensor& fw1, const at::Tensor& fb1, const at::Tensor& fw2,
                             const at::Tensor& fb2, const std::optional<at::Tensor>& mask,
                             std::optional<int64_t> mask_type) {
  return at::native::transformer_encoder_layer_forward(
      src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first,
      eps, nw1, nb1, nw2, nb2, fw1, fb1, fw2, fb2, mask, mask_type);
}

// The same layer on a nested (B, T_i, D) input: padded to (B, T, D) with a key-padding mask
// (mask_type 1), run dense, and the valid rows packed back into a nested tensor of the input's
// sizes. Row i of a sequence sees exactly the keys of its own sequence, as on CPU's nested path.
at::Tensor encoderLayerNested(const at::Tensor& src, int64_t embed_dim, int64_t num_heads,
                              const at::Tensor& qkv_weight, const at::Tensor& qkv_bias,
                              const at::Tensor& proj_weight, const at::Tensor& proj_bias,
                              bool use_gelu, bool norm_first, double eps, const at::Tensor& nw1,
                              const at::Tensor& nb1, const at::Tensor& nw2, const at::Tensor& nb2,
                              const at::Tensor& fw1, const at::Tensor& fb1, const at::Tensor& fw2,
                              const at::Tensor& fb2, const std::optional<at::Tensor>& mask,
                              std::optional<int64_t> mask_type) {
  TORCH_CHECK(!(mask.has_value() && mask->defined()),
              "torch-ocl: _transformer_encoder_layer_fwd takes no mask with a nested input");
  auto* impl = at::native::get_nested_tensor_impl(src);
  const at::Tensor& sizes = impl->get_nested_sizes();
  const at::Tensor& buffer = impl->get_buffer();
  if (buffer.numel() == 0)
    return at::detail::make_tensor<at::native::NestedTensorImpl>(buffer, sizes);
  auto [padded, kpm] = padNested(src);
  const at::Tensor out =
      encoderLayerDense(padded, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                        use_gelu, norm_first, eps, nw1, nb1, nw2, nb2, fw1, fb1, fw2, fb2, kpm, 1);
  return at::_nested_from_padded(out, sizes, false);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_native_multi_head_attention", TORCH_FN(nativeMultiHeadAttention));
  m.impl("_nested_from_padded", TORCH_FN(at::native::nested_from_padded_generic));
  m.impl("_nested_tensor_from_mask", TORCH_FN(at::native::NestedTensor_nested_tensor_from_mask));
  m.impl("_nested_tensor_from_mask_left_aligned",
         TORCH_FN(at::native::NestedTensor_nested_tensor_from_mask_left_aligned));
  m.impl("_transform_bias_rescale_qkv", TORCH_FN(transformBiasRescaleQkv));
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(encoderLayerDense));
}

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("_native_multi_head_attention", TORCH_FN(nativeMultiHeadAttentionNested));
  m.impl("_transform_bias_rescale_qkv", TORCH_FN(transformBiasRescaleQkv));
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(encoderLayerNested));
  m.impl("to_padded_tensor", TORCH_FN(at::native::NestedTensor_to_padded_tensor_generic));
}

}  // namespace torch_ocl::aten
