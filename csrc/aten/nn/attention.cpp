// scaled_dot_product_attention on ocl: the SDPA backend choice for PrivateUse1 picks the
// "overrideable" fused op when our kernels cover the call, and that op and its backward run
// csrc/kernels/attention.cl (scores recomputed per row, fp32/fp64 accumulation, dropout from the
// device Philox generator with the same mask in the backward, GQA by head grouping). Calls we
// do not cover (nested, non-4-D, broadcast batches, a backend choice that excludes ours) take
// PyTorch's math path, which is composed of ordinary ops.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/nn/attention.h"
#include "aten/typed_program.h"
#include "integration/generator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>

namespace torch_ocl::aten {
namespace {

char kAttentionFamily;

struct alignas(8) SdpaGeom {
  cl_long B, H, Hk, L, S, E, Ev;
  cl_long q[4], k[4], v[4], m[4], o[4], go[4];
  cl_long wo[4], wq[4], wk[4], wv[4];  // the outputs: out, dQ, dK, dV
};

// The fused kernels give a work item a row and recompute its scores: fine for short sequences,
// slower than batched products for long ones on CPU drivers. Forward plus backward, causal,
// float32, PoCL on 2 cores (Zen 5), wall time, fused (attention_vec.cl) / math path, best of 3
// rounds in one process: B4 H2 L=S=16 E16 (32768 multiply-adds of scores) 0.82, B4 H4 32 E16
// (2^18) 0.88, B4 H4 32 E32 (2^19) 0.78, at 2^20 0.86-1.06 (B8 H4 32 E32, B4 H2 64 E32, B4 H4 64
// E16), at 2^21 1.05-1.21, B16 H4 64 E32 1.59, B4 H6 256 E64 2.11, B1 H8 1024 E64 1.93. (The
// scalar kernels of attention.cl, before: 0.83 at 32768, 7.5 at B16 H4 64 E32, 16.0 at B12 H6
// 256 E64: the threshold was 2^16.)
constexpr int64_t kSdpaGemmMinWorkDefault = 1 << 20;
// The math path holds the batch's scores (and the probabilities, the dropout mask) at once; the
// fused kernels hold O(rows). Beyond this many bytes of scores the fused kernels stay (the
// compiled path's config.sdpa_math_max_bytes).
constexpr int64_t kSdpaMathMaxBytes = int64_t{256} << 20;

std::atomic<int64_t>& gemmMinWork() {
  static std::atomic<int64_t> v{[] {
    const char* env = std::getenv("TORCH_OCL_SDPA_GEMM_MIN_WORK");
    if (!env || !*env) return kSdpaGemmMinWorkDefault;
    try {
      return static_cast<int64_t>(std::stoll(env));
    } catch (const std::exception&) {
      TORCH_WARN_ONCE("torch-ocl: TORCH_OCL_SDPA_GEMM_MIN_WORK='", env,
                      "' is not an integer; using ", kSdpaGemmMinWorkDefault);
      return kSdpaGemmMinWorkDefault;
    }
  }()};
  return v;
}

bool coveredDtype(c10::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

int64_t chooseBackend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                      const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                      std::optional<double> scale, bool enable_gqa) {
  (void)dropout_p;
  (void)scale;
  const auto math = static_cast<int64_t>(at::SDPBackend::math);
  const auto& ctx = at::globalContext();
  if (!ctx.userEnabledOverrideableSDP()) return math;
  if (q.is_nested() || k.is_nested() || v.is_nested()) return math;
  // Symbolic sizes (torch.compile with dynamic shapes traces this choice on fake tensors): the
  // math path, which Inductor lowers to matmuls and a fused softmax. The checks below need sizes.
  for (const at::Tensor* t : {&q, &k, &v})
    if (t->unsafeGetTensorImpl()->has_symbolic_sizes_strides()) return math;
  if (mask.has_value() && mask->defined() &&
      mask->unsafeGetTensorImpl()->has_symbolic_sizes_strides())
    return math;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return math;
  if (!coveredDtype(q.scalar_type()) || k.scalar_type() != q.scalar_type() ||
      v.scalar_type() != q.scalar_type())
    return math;
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != v.size(1) ||
      k.size(2) != v.size(2) || k.size(3) != q.size(3))
    return math;
  const int64_t hq = q.size(1), hk = k.size(1);
  if (hk == 0 || (hq != hk && !(enable_gqa && hq % hk == 0))) return math;
  if (q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return math;
  if (is_causal && mask.has_value() && mask->defined()) return math;  // math raises the error
  if (mask.has_value() && mask->defined()) {
    const at::Tensor& m = *mask;
    if (m.dim() > 4 || (m.scalar_type() != at::kBool && m.scalar_type() != q.scalar_type()))
      return math;
    const std::vector<int64_t> full{q.size(0), hq, q.size(2), k.size(2)};
    if (!at::is_expandable_to(m.sizes(), full)) return math;
  }
  const int64_t min_work = gemmMinWork().load(std::memory_order_relaxed);
  if (min_work > 0 && q.device().type() == c10::DeviceType::PrivateUse1 &&
      (device(q.device().index()).info().type & CL_DEVICE_TYPE_CPU) != 0) {
    const int64_t scores = q.size(0) * hq * q.size(2) * k.size(2);
    const int64_t work = scores * std::max(q.size(3), v.size(3));
    if (work >= min_work && scores * static_cast<int64_t>(q.element_size()) <= kSdpaMathMaxBytes)
      return math;
  }
  return static_cast<int64_t>(at::SDPBackend::overrideable);
}

cl_program attentionProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return typedProgram(idx, &kAttentionFamily, "attention.cl", t);
}

// The float16 kernels of attention_vec.cl: float32 on CPU drivers, head dims up to 128. Forward
// plus backward, causal, device time on PoCL (2 Zen 5 cores), scalar -> float16: 4x2x16x16
// (the small GPT) 98-134 -> 48-54 us, 4x4x32x16 406-486 -> 139-216 us, 16x4x64x32 9.1 -> 2.6 ms,
// 4x6x256x64 117 -> 18 ms; 1x8x128x128 (not causal) 82 -> 4.9 ms. TORCH_OCL_SDPA_VECTOR=0 or
// torch_ocl._attention.set_sdpa_vector(False) keeps the scalar kernels.
constexpr int64_t kSdpaVecMaxHead = 128;

std::atomic<bool>& vectorKernels() {
  static std::atomic<bool> v{[] {
    const char* env = std::getenv("TORCH_OCL_SDPA_VECTOR");
    return !(env && std::string(env) == "0");
  }()};
  return v;
}

bool useVectorKernels(c10::DeviceIndex idx, c10::ScalarType t, const SdpaGeom& g) {
  return t == at::kFloat && g.E > 0 && g.Ev > 0 && g.E <= kSdpaVecMaxHead &&
         g.Ev <= kSdpaVecMaxHead && vectorKernels().load(std::memory_order_relaxed) &&
         (device(idx).info().type & CL_DEVICE_TYPE_CPU) != 0;
}

char kAttentionVecFamily;

// attention.cl (SdpaGeom, sdpa_at) followed by attention_vec.cl, for float32, specialised on the
// head dimensions' chunks of 16 and on unit head-dimension strides (a few programs per process:
// one per head size a model uses).
cl_program attentionVecProgram(c10::DeviceIndex idx, const SdpaGeom& g, bool bwd) {
  const int64_t nce = (g.E + 15) / 16, ncv = (g.Ev + 15) / 16;
  const bool full = g.E % 16 == 0 && g.Ev % 16 == 0;
  bool unit = g.q[3] == 1 && g.k[3] == 1 && g.v[3] == 1;
  unit = unit && (bwd ? g.go[3] == 1 && g.o[3] == 1 && g.wq[3] == 1 && g.wk[3] == 1 && g.wv[3] == 1
                      : g.wo[3] == 1);
  const uint64_t variant = static_cast<uint64_t>(nce) | static_cast<uint64_t>(ncv) << 8 |
                           static_cast<uint64_t>(full) << 16 | static_cast<uint64_t>(unit) << 17;
  return programs(idx).get({&kAttentionVecFamily, variant}, [&] {
    const std::string defs = typedDefs(at::kFloat) + "#define AV_NCE " + std::to_string(nce) +
                             "\n#define AV_NCV " + std::to_string(ncv) + "\n#define AV_FULL " +
                             (full ? "1" : "0") + "\n#define AV_UNIT " + (unit ? "1" : "0") + "\n";
    return rt::ProgramSource{
        "attention_vec.cl<Float," + std::to_string(nce) + "," + std::to_string(ncv) +
            (full ? ",full" : "") + (unit ? ",unit" : "") + ">",
        withPrelude(defs + kernels::source("attention.cl") + kernels::source("attention_vec.cl")),
        ""};
  });
}

// The kernel `name` of the scalar program, or its float16 form `vec_name` (work-groups of one).
struct SdpaKernel {
  cl_kernel kernel;
  bool vec;
};
SdpaKernel sdpaKernel(c10::DeviceIndex idx, c10::ScalarType t, const SdpaGeom& g, const char* name,
                      const char* vec_name, bool bwd) {
  if (useVectorKernels(idx, t, g))
    return {programs(idx).kernel(attentionVecProgram(idx, g, bwd), vec_name), true};
  return {programs(idx).kernel(attentionProgram(idx, t), name), false};
}

void launchSdpa(c10::DeviceIndex idx, const SdpaKernel& k, int64_t rows) {
  if (k.vec)
    launchND(device(idx), currentQueue(idx), k.kernel, static_cast<size_t>(rows), 1);
  else
    launch1D(device(idx), currentQueue(idx), k.kernel, rows);
}

void strides4(cl_long* dst, const at::Tensor& t) {
  for (int d = 0; d < 4; ++d) dst[d] = t.size(d) == 1 ? 0 : t.stride(d);
}

// What the forward and the backward share: geometry, scale, dropout parameters.
struct Call {
  SdpaGeom g{};
  at::Tensor mask;  // expanded to (B, H, L, S), or undefined
  double scale = 1;
  float p = 0;
  double keep_scale = 1;
  PhiloxDraw dropout;  // (seed, offset) of the dropout mask; bound for replay while capturing
};

Call makeCall(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
              const std::optional<at::Tensor>& bias, double dropout_p,
              std::optional<double> scale) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
              "torch-ocl attention: query, key and value must be 4-D");
  TORCH_CHECK(coveredDtype(q.scalar_type()) && k.scalar_type() == q.scalar_type() &&
                  v.scalar_type() == q.scalar_type(),
              "torch-ocl attention: query, key and value must share a floating dtype, got ",
              q.scalar_type(), ", ", k.scalar_type(), ", ", v.scalar_type());
  checkSameDevice({q, k, v});
  checkDtypeSupported(q.scalar_type(), q.device().index());
  Call c;
  c.g.B = q.size(0);
  c.g.H = q.size(1);
  c.g.Hk = k.size(1);
  c.g.L = q.size(2);
  c.g.S = k.size(2);
  c.g.E = q.size(3);
  c.g.Ev = v.size(3);
  TORCH_CHECK(c.g.Hk > 0 && c.g.H % c.g.Hk == 0 && v.size(1) == c.g.Hk,
              "torch-ocl attention: the number of query heads (", c.g.H,
              ") must be a multiple of the key/value heads (", c.g.Hk, ")");
  TORCH_CHECK(k.size(0) == c.g.B && v.size(0) == c.g.B && v.size(2) == c.g.S && k.size(3) == c.g.E,
              "torch-ocl attention: mismatched query/key/value shapes ", q.sizes(), ", ", k.sizes(),
              ", ", v.sizes());
  strides4(c.g.q, q);
  strides4(c.g.k, k);
  strides4(c.g.v, v);
  if (bias.has_value() && bias->defined()) {
    checkSameDevice({q, *bias});
    TORCH_CHECK(bias->scalar_type() == q.scalar_type(),
                "torch-ocl attention: attn_bias must have the query's dtype ", q.scalar_type(),
                ", got ", bias->scalar_type());
    c.mask = bias->expand({c.g.B, c.g.H, c.g.L, c.g.S});
    strides4(c.g.m, c.mask);
  }
  c.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(c.g.E));
  c.p = static_cast<float>(dropout_p);
  c.keep_scale = dropout_p < 1.0 ? 1.0 / (1.0 - dropout_p) : 0.0;
  return c;
}

// The buffer of t, or of fallback where t has no elements (and so no storage): the kernels
// never read a tensor with no elements, but every buffer argument must be a buffer.
rt::BufferRef bufferOr(const at::Tensor& t, const at::Tensor& fallback) {
  return t.numel() > 0 ? bufferOf(t) : bufferOf(fallback);
}

// Arguments common to every kernel after the ones specific to it; fallback has elements.
void setTail(cl_kernel k, cl_uint& a, const Call& c, c10::ScalarType t, const at::Tensor& q,
             const at::Tensor& key, const at::Tensor& v, const at::Tensor& fallback) {
  setArg(k, a, bufferOr(q, fallback));
  setArg(k, a, bufferOr(key, fallback));
  setArg(k, a, bufferOr(v, fallback));
  setArg(k, a, c.mask.defined() ? bufferOr(c.mask, fallback) : bufferOr(q, fallback));
  setArg(k, a, static_cast<cl_int>(c.mask.defined()));
  setArg(k, a, c.g);
  if (t == at::kDouble)
    setArg(k, a, static_cast<cl_double>(c.scale));
  else
    setArg(k, a, static_cast<cl_float>(c.scale));
}

void setDropout(cl_kernel k, cl_uint& a, const Call& c, c10::ScalarType t) {
  setArg(k, a, static_cast<cl_float>(c.p));
  if (t == at::kDouble)
    setArg(k, a, static_cast<cl_double>(c.keep_scale));
  else
    setArg(k, a, static_cast<cl_float>(c.keep_scale));
  c.dropout.setArgs(k, a);
}

c10::ScalarType accType(c10::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
}

// A new tensor of `sizes` in the dimension order of ref (the order of its strides), as PyTorch's
// meta functions lay out these outputs (alloc_with_matching_layout, empty_like): torch.compile
// plans the graph around those strides and asserts them. The kernels write it at its strides, so
// a transposed query (the usual (B, L, H, E) projection viewed as (B, H, L, E)) costs no copy.
at::Tensor emptyInLayoutOf(const at::Tensor& ref, at::IntArrayRef sizes,
                           const at::TensorOptions& options) {
  std::array<int64_t, 4> order{0, 1, 2, 3};
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return ref.stride(a) > ref.stride(b); });
  if (order == std::array<int64_t, 4>{0, 1, 2, 3}) return at::empty(sizes, options);
  // The strides of a contiguous tensor in that dimension order, allocated as one empty_strided
  // (an empty and a permuted view cost a second dispatch and a TensorImpl per output).
  std::array<int64_t, 4> strides{};
  int64_t next = 1;
  for (int64_t i = 3; i >= 0; --i) {
    strides[order[i]] = next;
    next *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return at::empty_strided(sizes, strides, options);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor,
           at::Tensor, at::Tensor>
sdpaForward(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
            const std::optional<at::Tensor>& attn_bias, double dropout_p, bool is_causal,
            bool return_debug_mask, std::optional<double> scale) {
  TORCH_CHECK(!return_debug_mask, "torch-ocl attention: return_debug_mask is not supported");
  TORCH_CHECK(dropout_p >= 0 && dropout_p <= 1,
              "dropout probability has to be between 0 and 1, but got ", dropout_p);
  Call c = makeCall(query, key, value, attn_bias, dropout_p, scale);
  const c10::ScalarType t = query.scalar_type();
  const c10::DeviceIndex idx = query.device().index();
  if (dropout_p > 0) {
    auto* gen = at::get_generator_or_default<OclGeneratorImpl>(std::nullopt, defaultGenerator(idx));
    std::lock_guard<std::mutex> lock(gen->mutex_);
    c.dropout = gen->philoxDraw(4, currentQueue(idx));
  }
  at::Tensor out = emptyInLayoutOf(query, {c.g.B, c.g.H, c.g.L, c.g.Ev}, query.options());
  strides4(c.g.wo, out);
  at::Tensor lse = at::empty({c.g.B, c.g.H, c.g.L}, query.options().dtype(accType(t)));
  if (out.numel() > 0 || lse.numel() > 0) {
    OCL_TRY
    const SdpaKernel sk = sdpaKernel(idx, t, c.g, "sdpa_fwd", "sdpa_fwd_vec", false);
    cl_kernel k = sk.kernel;
    cl_uint a = 0;
    setArg(k, a, bufferOr(out, lse));
    setArg(k, a, bufferOf(lse));
    setTail(k, a, c, t, query, key, value, lse);
    setArg(k, a, static_cast<cl_int>(is_causal));
    setDropout(k, a, c, t);
    launchSdpa(idx, sk, c.g.B * c.g.H * c.g.L);
    OCL_CATCH
  }
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);
  at::Tensor seed = at::empty({}, cpu_long), offset = at::empty({}, cpu_long);
  *seed.data_ptr<int64_t>() = static_cast<int64_t>(c.dropout.seed());
  *offset.data_ptr<int64_t>() = static_cast<int64_t>(c.dropout.offset());
  // A replay draws a new mask: the state saved for the backward follows it.
  c.dropout.bindHost(seed.data_ptr<int64_t>(), offset.data_ptr<int64_t>(),
                     std::make_shared<std::pair<at::Tensor, at::Tensor>>(seed, offset));
  at::Tensor none = at::empty({0}, query.options());
  return {out,  lse,    at::Tensor(), at::Tensor(), c10::SymInt(c.g.L), c10::SymInt(c.g.S),
          seed, offset, none};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> sdpaBackward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask,
    const at::Tensor& out, const at::Tensor& logsumexp, const at::Tensor& cum_seq_q,
    const at::Tensor& cum_seq_k, int64_t max_q, int64_t max_k, double dropout_p, bool is_causal,
    const at::Tensor& philox_seed, const at::Tensor& philox_offset, std::optional<double> scale) {
  (void)cum_seq_q;
  (void)cum_seq_k;
  (void)max_q;
  (void)max_k;
  if (!grad_out.defined()) return {};  // autograd's "undefined output grad" convention
  const std::optional<at::Tensor> bias =
      attn_bias.defined() ? std::optional<at::Tensor>(attn_bias) : std::nullopt;
  Call c = makeCall(query, key, value, bias, dropout_p, scale);
  checkSameDevice({query, grad_out, out, logsumexp});
  const c10::ScalarType t = query.scalar_type();
  const c10::DeviceIndex idx = query.device().index();
  if (dropout_p > 0) {
    // The forward's mask again (while capturing: bound to the forward's draw, or re-read).
    c.dropout = PhiloxDraw::reuse(currentQueue(idx), philox_seed, philox_offset);
  }
  // A gradient whose head dimension is not unit-stride (an expanded one, from out.sum() or
  // out.mean()) is copied once: the kernels read it for every block of rows, element by element
  // otherwise (the float16 dK/dV kernel ran 7x slower on an expanded gradient).
  const at::Tensor go = grad_out.size(-1) > 1 && grad_out.stride(-1) != 1
                            ? grad_out.to(t).contiguous()
                            : grad_out.to(t);
  const at::Tensor o = out;
  strides4(c.g.go, go);
  strides4(c.g.o, o);
  at::Tensor dq = emptyInLayoutOf(query, {c.g.B, c.g.H, c.g.L, c.g.E}, query.options());
  at::Tensor dk = emptyInLayoutOf(key, {c.g.B, c.g.Hk, c.g.S, c.g.E}, query.options());
  at::Tensor dv = emptyInLayoutOf(value, {c.g.B, c.g.Hk, c.g.S, c.g.Ev}, query.options());
  strides4(c.g.wq, dq);
  strides4(c.g.wk, dk);
  strides4(c.g.wv, dv);
  const bool want_ds = grad_input_mask[3] && attn_bias.defined();
  at::Tensor delta = at::empty({c.g.B, c.g.H, c.g.L}, logsumexp.options());
  // Per query row, 1 / (sum of its weights exp(s - lse)) where that is not 1 (attention.cl).
  at::Tensor rinv = at::empty_like(delta);
  at::Tensor ds =
      want_ds ? at::empty({c.g.B, c.g.H, c.g.L, c.g.S}, logsumexp.options()) : at::Tensor();
  const at::Tensor lse = logsumexp.contiguous();
  OCL_TRY
  if (delta.numel() > 0) {
    const SdpaKernel sk = sdpaKernel(idx, t, c.g, "sdpa_bwd_q", "sdpa_bwd_q_vec", true);
    cl_kernel k = sk.kernel;
    cl_uint a = 0;
    setArg(k, a, bufferOr(dq, delta));
    setArg(k, a, bufferOf(delta));
    setArg(k, a, bufferOf(rinv));
    setArg(k, a, want_ds ? bufferOf(ds) : bufferOf(delta));
    setArg(k, a, static_cast<cl_int>(want_ds));
    setArg(k, a, bufferOr(go, delta));
    setArg(k, a, bufferOr(o, delta));
    setArg(k, a, bufferOf(lse));
    setTail(k, a, c, t, query, key, value, delta);
    setArg(k, a, static_cast<cl_int>(is_causal));
    setDropout(k, a, c, t);
    launchSdpa(idx, sk, c.g.B * c.g.H * c.g.L);
  }
  if (dk.numel() > 0 || dv.numel() > 0) {
    const SdpaKernel sk = sdpaKernel(idx, t, c.g, "sdpa_bwd_kv", "sdpa_bwd_kv_vec", true);
    cl_kernel k = sk.kernel;
    cl_uint a = 0;
    const at::Tensor& out_kv = dk.numel() > 0 ? dk : dv;
    setArg(k, a, bufferOf(out_kv));
    setArg(k, a, bufferOr(dv, out_kv));
    setArg(k, a, bufferOr(delta, out_kv));
    setArg(k, a, bufferOr(rinv, out_kv));
    setArg(k, a, bufferOr(go, out_kv));
    setArg(k, a, bufferOr(lse, out_kv));
    setTail(k, a, c, t, query, key, value, out_kv);
    setArg(k, a, static_cast<cl_int>(is_causal));
    setDropout(k, a, c, t);
    launchSdpa(idx, sk, c.g.B * c.g.Hk * c.g.S);
  }
  OCL_CATCH
  at::Tensor dbias;
  if (want_ds) dbias = ds.sum_to_size(attn_bias.sizes()).to(attn_bias.scalar_type());
  return {grad_input_mask[0] ? dq : at::Tensor(), grad_input_mask[1] ? dk : at::Tensor(),
          grad_input_mask[2] ? dv : at::Tensor(), dbias};
}

}  // namespace

int64_t setSdpaGemmMinWork(int64_t work) {
  return gemmMinWork().exchange(work);
}
int64_t sdpaGemmMinWork() {
  return gemmMinWork().load();
}
bool setSdpaVector(bool on) {
  return vectorKernels().exchange(on);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_sdp_choice", TORCH_FN(chooseBackend));
  m.impl("_scaled_dot_product_fused_attention_overrideable", TORCH_FN(sdpaForward));
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", TORCH_FN(sdpaBackward));
}

}  // namespace torch_ocl::aten

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_ocl::aten::chooseBackend)
}  // namespace at::native
