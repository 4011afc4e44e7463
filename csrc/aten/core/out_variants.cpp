// out= forms of ops whose functional form is native on ocl: the functional op runs (natively, or
// through the counted CPU fallback under its own name for dtypes its kernel does not cover), then
// each result goes into its out tensor after CPU's checks: same device, the dtype CPU's out= kernel
// demands (the exact result dtype, or for TensorIterator ops any dtype the result casts to
// safely), and a resize through at::native::resize_output (with its warning for a non-empty out of
// the wrong shape). A resized out takes the result's strides, as structured ops' resize_out does.
// These ops have no structured meta shared with a native out= kernel here, so one boxed kernel
// serves all of them; the table below names each op's functional overload.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace torch_ocl::aten {
namespace {

enum class OutDtype {
  kExact,  // out must have the result's dtype (structured ops' resize_out, CPU's checks)
  kCast,   // any dtype the result casts to safely (TensorIterator outputs)
};

struct OutForm {
  const char* functional;  // "name.overload" of the functional form ("name" for the default)
  OutDtype dtype;
  size_t written = SIZE_MAX;  // outs CPU writes (the first ones); the others are returned as given
};

// Keyed by the out= overload's "name.overload". Sorted.
const std::unordered_map<std::string, OutForm>& outForms() {
  static const std::unordered_map<std::string, OutForm> forms = {
      // CPU leaves `reserve` as given (it has no use for it).
      {"_batch_norm_with_update.out", {"_batch_norm_with_update", OutDtype::kExact, 3}},
      {"_native_batch_norm_legit.no_stats_out",
       {"_native_batch_norm_legit.no_stats", OutDtype::kExact}},
      {"_native_batch_norm_legit.out", {"_native_batch_norm_legit", OutDtype::kExact}},
      {"_slow_conv2d_backward.grad_input", {"_slow_conv2d_backward.output_mask", OutDtype::kExact}},
      {"_slow_conv2d_forward.output", {"_slow_conv2d_forward", OutDtype::kExact}},
      {"_upsample_bicubic2d_aa.out", {"_upsample_bicubic2d_aa", OutDtype::kExact}},
      {"_upsample_bicubic2d_aa_backward.grad_input",
       {"_upsample_bicubic2d_aa_backward", OutDtype::kExact}},
      {"_upsample_bilinear2d_aa.out", {"_upsample_bilinear2d_aa", OutDtype::kExact}},
      {"_upsample_bilinear2d_aa_backward.grad_input",
       {"_upsample_bilinear2d_aa_backward", OutDtype::kExact}},
      {"_upsample_lanczos2d_aa.out", {"_upsample_lanczos2d_aa", OutDtype::kExact}},
      {"_upsample_lanczos2d_aa_backward.grad_input",
       {"_upsample_lanczos2d_aa_backward", OutDtype::kExact}},
      {"adaptive_avg_pool2d.out", {"adaptive_avg_pool2d", OutDtype::kExact}},
      {"adaptive_avg_pool3d.out", {"adaptive_avg_pool3d", OutDtype::kExact}},
      {"adaptive_avg_pool3d_backward.grad_input",
       {"_adaptive_avg_pool3d_backward", OutDtype::kExact}},
      {"adaptive_max_pool2d.out", {"adaptive_max_pool2d", OutDtype::kExact}},
      {"adaptive_max_pool2d_backward.grad_input",
       {"adaptive_max_pool2d_backward", OutDtype::kExact}},
      {"adaptive_max_pool3d.out", {"adaptive_max_pool3d", OutDtype::kExact}},
      {"adaptive_max_pool3d_backward.grad_input",
       {"adaptive_max_pool3d_backward", OutDtype::kExact}},
      {"avg_pool2d.out", {"avg_pool2d", OutDtype::kExact}},
      {"avg_pool2d_backward.grad_input", {"avg_pool2d_backward", OutDtype::kExact}},
      {"avg_pool3d.out", {"avg_pool3d", OutDtype::kExact}},
      {"avg_pool3d_backward.grad_input", {"avg_pool3d_backward", OutDtype::kExact}},
      {"binary_cross_entropy.out", {"binary_cross_entropy", OutDtype::kExact}},
      {"binary_cross_entropy_backward.grad_input",
       {"binary_cross_entropy_backward", OutDtype::kExact}},
      {"cholesky.out", {"cholesky", OutDtype::kCast}},
      {"col2im.out", {"col2im", OutDtype::kExact}},
      {"fractional_max_pool2d.output", {"fractional_max_pool2d", OutDtype::kExact}},
      {"fractional_max_pool2d_backward.grad_input",
       {"fractional_max_pool2d_backward", OutDtype::kExact}},
      {"fractional_max_pool3d.output", {"fractional_max_pool3d", OutDtype::kExact}},
      {"fractional_max_pool3d_backward.grad_input",
       {"fractional_max_pool3d_backward", OutDtype::kExact}},
      {"huber_loss.out", {"huber_loss", OutDtype::kCast}},
      {"huber_loss_backward.out", {"huber_loss_backward", OutDtype::kExact}},
      {"im2col.out", {"im2col", OutDtype::kExact}},
      {"max_pool2d_with_indices.out", {"max_pool2d_with_indices", OutDtype::kExact}},
      {"max_pool2d_with_indices_backward.grad_input",
       {"max_pool2d_with_indices_backward", OutDtype::kExact}},
      {"max_pool3d_with_indices.out", {"max_pool3d_with_indices", OutDtype::kExact}},
      {"max_pool3d_with_indices_backward.grad_input",
       {"max_pool3d_with_indices_backward", OutDtype::kExact}},
      {"mse_loss.out", {"mse_loss", OutDtype::kCast}},
      {"mse_loss_backward.grad_input", {"mse_loss_backward", OutDtype::kCast}},
      {"multi_margin_loss.out", {"multi_margin_loss", OutDtype::kExact}},
      {"multi_margin_loss_backward.grad_input", {"multi_margin_loss_backward", OutDtype::kExact}},
      {"multilabel_margin_loss_backward.grad_input",
       {"multilabel_margin_loss_backward", OutDtype::kExact}},
      {"mvlgamma.out", {"mvlgamma", OutDtype::kCast}},
      {"narrow_copy.out", {"narrow_copy", OutDtype::kExact}},
      {"native_batch_norm.out", {"native_batch_norm", OutDtype::kExact}},
      {"nll_loss2d_backward.grad_input", {"nll_loss2d_backward", OutDtype::kExact}},
      {"nll_loss2d_forward.output", {"nll_loss2d_forward", OutDtype::kExact}},
      {"slow_conv3d_forward.output", {"slow_conv3d_forward", OutDtype::kExact}},
      {"slow_conv_transpose2d.out", {"slow_conv_transpose2d", OutDtype::kExact}},
      {"slow_conv_transpose3d.out", {"slow_conv_transpose3d", OutDtype::kExact}},
      {"smooth_l1_loss.out", {"smooth_l1_loss", OutDtype::kCast}},
      {"smooth_l1_loss_backward.grad_input", {"smooth_l1_loss_backward", OutDtype::kCast}},
      {"upsample_bicubic2d.out", {"upsample_bicubic2d", OutDtype::kExact}},
      {"upsample_bicubic2d_backward.grad_input", {"upsample_bicubic2d_backward", OutDtype::kExact}},
      {"upsample_bilinear2d.out", {"upsample_bilinear2d", OutDtype::kExact}},
      {"upsample_bilinear2d_backward.grad_input",
       {"upsample_bilinear2d_backward", OutDtype::kExact}},
      {"upsample_linear1d.out", {"upsample_linear1d", OutDtype::kExact}},
      {"upsample_linear1d_backward.grad_input", {"upsample_linear1d_backward", OutDtype::kExact}},
      {"upsample_trilinear3d.out", {"upsample_trilinear3d", OutDtype::kExact}},
      {"upsample_trilinear3d_backward.grad_input",
       {"upsample_trilinear3d_backward", OutDtype::kExact}},
  };
  return forms;
}

std::string qualifiedName(const c10::OperatorName& name) {
  std::string s = name.name.substr(6);  // drop "aten::"
  if (!name.overload_name.empty()) s += "." + name.overload_name;
  return s;
}

bool isOutArgument(const c10::Argument& a) {
  return a.kwarg_only() && a.alias_info() && a.alias_info()->isWrite();
}

void intoOut(const at::Tensor& result, at::Tensor& out, OutDtype policy) {
  TORCH_CHECK(out.device() == result.device(), "Expected out tensor to have device ",
              result.device(), ", but got ", out.device(), " instead");
  if (policy == OutDtype::kExact) {
    TORCH_CHECK(out.scalar_type() == result.scalar_type(), "Expected out tensor to have dtype ",
                result.dtype(), ", but got ", out.dtype(), " instead");
  } else {
    TORCH_CHECK(at::canCast(result.scalar_type(), out.scalar_type()), "result type ",
                result.scalar_type(), " can't be cast to the desired output type ",
                out.scalar_type());
  }
  if (at::native::resize_output(out, result.sizes()) && result.is_non_overlapping_and_dense())
    out.as_strided_(result.sizes(), result.strides());
  out.copy_(result);
}

// Functional ops that redispatch to their out= form (ATen has a few) would recurse forever here.
thread_local std::unordered_set<std::string> t_running;

void outViaFunctional(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const std::string name = qualifiedName(schema.operator_name());
  const auto form = outForms().find(name);
  TORCH_INTERNAL_ASSERT(form != outForms().end(), "no functional form listed for ", name);
  TORCH_CHECK(t_running.insert(name).second, name,
              ": the functional form redispatches to this out= form on ocl; not supported");
  struct Done {
    const std::string& n;
    ~Done() { t_running.erase(n); }
  } done{name};

  size_t n_out = 0;
  for (const c10::Argument& a : schema.arguments()) n_out += isOutArgument(a) ? 1 : 0;
  const size_t n_args = schema.arguments().size();
  std::vector<at::Tensor> outs;
  for (size_t i = n_args - n_out; i < n_args; ++i)
    outs.push_back((*stack)[stack->size() - n_args + i].toTensor());
  stack->resize(stack->size() - n_out);

  std::string fname = form->second.functional;
  const size_t dot = fname.find('.');
  const std::string overload = dot == std::string::npos ? "" : fname.substr(dot + 1);
  if (dot != std::string::npos) fname.resize(dot);
  const c10::OperatorHandle functional =
      c10::Dispatcher::singleton().findSchemaOrThrow(("aten::" + fname).c_str(), overload.c_str());
  TORCH_INTERNAL_ASSERT(functional.schema().returns().size() == n_out, name, ": ", n_out,
                        " outs but ", functional.schema().returns().size(), " results");
  // The grad_input form computes every gradient; its functional form takes a mask.
  if (name == "_slow_conv2d_backward.grad_input")
    stack->emplace_back(c10::List<bool>({true, true, true}));
  functional.callBoxed(stack);
  std::vector<at::Tensor> results;
  for (size_t i = 0; i < n_out; ++i)
    results.push_back((*stack)[stack->size() - n_out + i].toTensor());
  stack->resize(stack->size() - n_out);
  for (size_t i = 0; i < n_out && i < form->second.written; ++i)
    intoOut(results[i], outs[i], form->second.dtype);
  for (at::Tensor& o : outs) stack->emplace_back(std::move(o));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const auto& [name, form] : outForms())
    m.impl(name.c_str(), torch::CppFunction::makeFromBoxedFunction<&outViaFunctional>());
}

}  // namespace torch_ocl::aten
