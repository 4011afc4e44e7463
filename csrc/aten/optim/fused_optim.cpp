// _fused_adam_, _fused_adamw_ and _fused_sgd_ (torch.optim.*(fused=True)) and GradScaler's
// _amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_: one launch per chunk
// of parameters (multi_tensor.h, kernels/optim.cl), math in float (double for double params).
// Lists that the kernels cannot take (mixed dtypes, strided or non-ocl tensors) go to the
// counted CPU fallback.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <map>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/multi_tensor.h"
#include "integration/state.h"

namespace torch_ocl::aten {
namespace {

char kOptimFamily;

// Whether the fused steps walk their blocks in float16 vectors (mt::vectorBlocks; float32
// parameters). 4.7M-element AdamW on PoCL: 13.0 -> 2.6 ms of device time.
bool optimVector(c10::DeviceIndex idx, c10::ScalarType t) {
  return t == c10::kFloat && mt::vectorBlocks(idx);
}

cl_program optimProgram(c10::DeviceIndex idx, c10::ScalarType t, c10::ScalarType step_t) {
  return programs(idx).get({&kOptimFamily, dtypeCode(t) | dtypeCode(step_t) << 6}, [&] {
    const std::string real = t == c10::kDouble ? "double" : "float";
    const std::string st = clStorageType(t), sst = clStorageType(step_t);
    std::string h = "#define REAL " + real + "\n#define ST " + st + "\n";
    if (optimVector(idx, t)) h += "#define OPT_VEC16\n";
    h += "inline REAL ld(__global " + st + "* p, long i) { return (REAL)(" + loadExpr(t, "p", "i") +
         "); }\n";
    h += "inline void st(__global " + st + "* p, long i, REAL v) { " + storeStmt(t, "p", "i", "v") +
         " }\n";
    h += "inline REAL ld_step(__global char* b) { __global " + sst + "* p = (__global " + sst +
         "*)b; return (REAL)(" + loadExpr(step_t, "p", "0") + "); }\n";
    return rt::ProgramSource{std::string("optim<") + c10::toString(t) + ">",
                             mt::kernelHeader() + h + kernels::source("optim.cl"), ""};
  });
}

bool isReal(c10::ScalarType t) {
  return t == c10::kFloat || t == c10::kHalf || t == c10::kBFloat16 || t == c10::kDouble;
}

// A one-element tensor argument in the kernels' REAL dtype on the params' device, or undefined.
at::Tensor scalarOnDevice(const std::optional<at::Tensor>& t, const at::Tensor& like) {
  if (!t || !t->defined()) return at::Tensor();
  TORCH_CHECK(t->numel() == 1, "expected a one-element tensor, got ", t->numel(), " elements");
  const c10::ScalarType real = like.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  return t->to(like.device(), real).reshape({});
}

// Sets lr/grad_scale/found_inf (buffer, offset, flag) triples.
void setScalarArgs(cl_kernel k, cl_uint& a, const std::vector<at::Tensor>& scalars,
                   const rt::BufferRef& dummy) {
  for (const at::Tensor& t : scalars) {
    setArg(k, a, t.defined() ? bufferOf(t) : dummy);
    setArg(k, a, static_cast<cl_int>(t.defined() ? 1 : 0));
  }
}

// True when the kernels can take these lists: one real dtype for the dense lists, one ocl device,
// contiguous, equal sizes; steps one-element tensors on that device.
bool nativeLists(const std::vector<at::TensorList>& dense, at::TensorList steps) {
  if (dense[0].empty()) return true;
  const at::Tensor& p0 = dense[0][0];
  if (!p0.defined() || p0.device().type() != kOcl || !isReal(p0.scalar_type())) return false;
  for (const at::TensorList& l : dense)
    if (l.size() != dense[0].size()) return false;
  if (!mt::allDense(dense, p0.device(), p0.scalar_type())) return false;
  if (steps.size() != dense[0].size() && !(steps.empty())) return false;
  for (const at::Tensor& s : steps) {
    if (!s.defined() || s.device() != p0.device() || s.numel() != 1 || !isReal(s.scalar_type()) ||
        s.scalar_type() != steps[0].scalar_type())
      return false;
  }
  return true;
}

void adamImpl(bool adamw, at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
              at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
              at::TensorList state_steps, double lr, const std::optional<at::Tensor>& lr_tensor,
              double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
              bool maximize, const std::optional<at::Tensor>& grad_scale,
              const std::optional<at::Tensor>& found_inf) {
  const char* name = adamw ? "aten::_fused_adamw_" : "aten::_fused_adam_";
  std::vector<at::TensorList> dense{self, grads, exp_avgs, exp_avg_sqs};
  if (amsgrad) dense.push_back(max_exp_avg_sqs);
  const bool native = nativeLists(dense, state_steps) && state_steps.size() == self.size() &&
                      (!lr_tensor || lr_tensor->numel() == 1);
  if (!native) {
    std::vector<c10::IValue> args{self.vec(),        grads.vec(),           exp_avgs.vec(),
                                  exp_avg_sqs.vec(), max_exp_avg_sqs.vec(), state_steps.vec()};
    if (lr_tensor)
      args.emplace_back(*lr_tensor);
    else
      args.emplace_back(lr);
    for (double v : {beta1, beta2, weight_decay, eps}) args.emplace_back(v);
    args.emplace_back(amsgrad);
    args.emplace_back(maximize);
    args.emplace_back(grad_scale);
    args.emplace_back(found_inf);
    runFallback(name, lr_tensor ? "tensor_lr" : "", std::move(args));
    return;
  }
  if (self.empty()) return;
  const at::Tensor& p0 = self[0];
  const c10::DeviceIndex idx = p0.device().index();
  checkDtypeSupported(p0.scalar_type(), idx);
  const at::Tensor gs = grad_scale.value_or(at::Tensor()), fi = found_inf.value_or(at::Tensor());
  checkSameDevice({p0, gs, fi});
  const bool dbl = p0.scalar_type() == c10::kDouble;
  std::vector<at::Tensor> scalars{scalarOnDevice(lr_tensor, p0), scalarOnDevice(grad_scale, p0),
                                  scalarOnDevice(found_inf, p0)};
  mt::Plan plan({self, grads, exp_avgs, exp_avg_sqs, amsgrad ? max_exp_avg_sqs : self, state_steps},
                /*keep_empty=*/false);
  if (plan.chunks().empty()) return;
  plan.upload(idx);
  cl_program prog = optimProgram(idx, p0.scalar_type(), state_steps[0].scalar_type());
  rt::Device& dev = device(idx);
  // Two REALs of bias corrections per tensor, chunk after chunk.
  size_t tensors = 0;
  for (const mt::Chunk& chunk : plan.chunks()) tensors += chunk.index.size();
  const at::Tensor corrections = at::empty({static_cast<int64_t>(2 * tensors)},
                                           p0.options().dtype(dbl ? c10::kDouble : c10::kFloat));
  const rt::BufferRef bc = bufferOf(corrections);
  const size_t real_size = dbl ? sizeof(double) : sizeof(float);
  OCL_TRY
  cl_kernel kc = programs(idx).kernel(prog, "adam_bias_corrections");
  cl_kernel k = programs(idx).kernel(prog, "fused_adam");
  size_t first = 0;  // index of the chunk's first tensor in corrections
  for (size_t c = 0; c < plan.chunks().size(); ++c) {
    const mt::Chunk& chunk = plan.chunks()[c];
    const rt::BufferRef bc_chunk{bc.mem, bc.offset + 2 * first * real_size};
    cl_uint a = plan.setCommonArgs(kc, c);
    for (double v : {beta1, beta2}) mt::setRealArg(kc, a, dbl, v);
    setArg(kc, a, bc_chunk);
    launch1D(dev, currentQueue(idx), kc, static_cast<int64_t>(chunk.index.size()));

    a = plan.setCommonArgs(k, c);
    for (double v : {lr, beta1, beta2, weight_decay, eps}) mt::setRealArg(k, a, dbl, v);
    setArg(k, a, static_cast<cl_int>(amsgrad));
    setArg(k, a, static_cast<cl_int>(maximize));
    setArg(k, a, static_cast<cl_int>(adamw));
    setScalarArgs(k, a, scalars, bufferOf(self[chunk.index[0]]));
    setArg(k, a, bc_chunk);
    plan.launchBlocks(k, c, optimVector(idx, p0.scalar_type()));
    first += chunk.index.size();
  }
  OCL_CATCH
}

void fusedAdam(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
               at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
               at::TensorList state_steps, double lr, double beta1, double beta2,
               double weight_decay, double eps, bool amsgrad, bool maximize,
               const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  adamImpl(false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr,
           std::nullopt, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}
void fusedAdamTensorLr(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                       at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                       at::TensorList state_steps, const at::Tensor& lr, double beta1, double beta2,
                       double weight_decay, double eps, bool amsgrad, bool maximize,
                       const std::optional<at::Tensor>& grad_scale,
                       const std::optional<at::Tensor>& found_inf) {
  adamImpl(false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, 0, lr, beta1,
           beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}
void fusedAdamw(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                at::TensorList state_steps, double lr, double beta1, double beta2,
                double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  adamImpl(true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, std::nullopt,
           beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}
void fusedAdamwTensorLr(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                        at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                        at::TensorList state_steps, const at::Tensor& lr, double beta1,
                        double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                        const std::optional<at::Tensor>& grad_scale,
                        const std::optional<at::Tensor>& found_inf) {
  adamImpl(true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, 0, lr, beta1,
           beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void sgdImpl(at::TensorList self, at::TensorList grads, at::TensorList bufs, double weight_decay,
             double momentum, double lr, const std::optional<at::Tensor>& lr_tensor,
             double dampening, bool nesterov, bool maximize, bool is_first_step,
             const std::optional<at::Tensor>& grad_scale,
             const std::optional<at::Tensor>& found_inf) {
  std::vector<at::TensorList> dense{self, grads};
  if (momentum != 0) dense.push_back(bufs);
  const bool native = nativeLists(dense, {}) && (!lr_tensor || lr_tensor->numel() == 1);
  if (!native) {
    std::vector<c10::IValue> args{self.vec(), grads.vec(), bufs.vec(), weight_decay, momentum};
    if (lr_tensor)
      args.emplace_back(*lr_tensor);
    else
      args.emplace_back(lr);
    args.emplace_back(dampening);
    args.emplace_back(nesterov);
    args.emplace_back(maximize);
    args.emplace_back(is_first_step);
    args.emplace_back(grad_scale);
    args.emplace_back(found_inf);
    runFallback("aten::_fused_sgd_", lr_tensor ? "tensor_lr" : "", std::move(args));
    return;
  }
  if (self.empty()) return;
  const at::Tensor& p0 = self[0];
  const c10::DeviceIndex idx = p0.device().index();
  checkDtypeSupported(p0.scalar_type(), idx);
  const at::Tensor gs = grad_scale.value_or(at::Tensor()), fi = found_inf.value_or(at::Tensor());
  checkSameDevice({p0, gs, fi});
  const bool dbl = p0.scalar_type() == c10::kDouble;
  std::vector<at::Tensor> scalars{scalarOnDevice(lr_tensor, p0), scalarOnDevice(grad_scale, p0),
                                  scalarOnDevice(found_inf, p0)};
  mt::Plan plan({self, grads, momentum != 0 ? bufs : self}, /*keep_empty=*/false);
  if (plan.chunks().empty()) return;
  plan.upload(idx);
  cl_program prog = optimProgram(idx, p0.scalar_type(), c10::kFloat);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "fused_sgd");
  for (size_t c = 0; c < plan.chunks().size(); ++c) {
    cl_uint a = plan.setCommonArgs(k, c);
    for (double v : {lr, weight_decay, momentum, dampening}) mt::setRealArg(k, a, dbl, v);
    setArg(k, a, static_cast<cl_int>(nesterov));
    setArg(k, a, static_cast<cl_int>(maximize));
    setArg(k, a, static_cast<cl_int>(is_first_step));
    setScalarArgs(k, a, scalars, bufferOf(self[plan.chunks()[c].index[0]]));
    plan.launchBlocks(k, c, optimVector(idx, p0.scalar_type()));
  }
  OCL_CATCH
}

void fusedSgd(at::TensorList self, at::TensorList grads, at::TensorList bufs, double weight_decay,
              double momentum, double lr, double dampening, bool nesterov, bool maximize,
              bool is_first_step, const std::optional<at::Tensor>& grad_scale,
              const std::optional<at::Tensor>& found_inf) {
  sgdImpl(self, grads, bufs, weight_decay, momentum, lr, std::nullopt, dampening, nesterov,
          maximize, is_first_step, grad_scale, found_inf);
}
void fusedSgdTensorLr(at::TensorList self, at::TensorList grads, at::TensorList bufs,
                      double weight_decay, double momentum, const at::Tensor& lr, double dampening,
                      bool nesterov, bool maximize, bool is_first_step,
                      const std::optional<at::Tensor>& grad_scale,
                      const std::optional<at::Tensor>& found_inf) {
  sgdImpl(self, grads, bufs, weight_decay, momentum, 0, lr, dampening, nesterov, maximize,
          is_first_step, grad_scale, found_inf);
}

// GradScaler's unscale: one launch per chunk for each dtype's group of dense ocl gradients (as
// GradScaler passes them); other tensors (strided, mixed lists) through native pointwise ops.
void ampUnscaleChunks(at::TensorList grads, const at::Tensor& found_inf,
                      const at::Tensor& inv_scale) {
  const at::Tensor& g0 = grads[0];
  const c10::DeviceIndex idx = g0.device().index();
  checkDtypeSupported(g0.scalar_type(), idx);
  mt::Plan plan({grads}, /*keep_empty=*/false);
  if (plan.chunks().empty()) return;
  plan.upload(idx);
  cl_program prog = optimProgram(idx, g0.scalar_type(), c10::kFloat);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "amp_unscale");
  for (size_t c = 0; c < plan.chunks().size(); ++c) {
    cl_uint a = plan.setCommonArgs(k, c);
    setArg(k, a, bufferOf(found_inf));
    setArg(k, a, bufferOf(inv_scale));
    plan.launchBlocks(k, c, optimVector(idx, g0.scalar_type()));
  }
  OCL_CATCH
}

void checkAmpScalar(const at::Tensor& t, const char* name, c10::ScalarType dtype,
                    const char* dtype_name) {
  TORCH_CHECK(t.device().type() == kOcl, name, " must be an ocl tensor.");
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == dtype, name, " must be ", dtype_name, " tensor.");
}

void ampForeachNonFiniteCheckAndUnscale(at::TensorList grads, at::Tensor& found_inf,
                                        const at::Tensor& inv_scale) {
  if (grads.empty()) return;
  checkAmpScalar(inv_scale, "inv_scale", c10::kFloat, "a float");
  checkAmpScalar(found_inf, "found_inf", c10::kFloat, "a float");
  checkSameDevice({found_inf, inv_scale});
  for (const at::Tensor& g : grads) {
    TORCH_CHECK(g.device() == found_inf.device(),
                "scaled_grads must be on the same device as found_inf, got ", g.device(), " and ",
                found_inf.device());
    TORCH_CHECK(at::isFloatingType(g.scalar_type()),
                "_amp_foreach_non_finite_check_and_unscale_: expected floating gradients, got ",
                g.scalar_type());
  }
  // Dense gradients of one dtype share a launch; the rest composes from native ops.
  std::map<c10::ScalarType, std::vector<at::Tensor>> dense;
  for (const at::Tensor& g : grads) {
    if (g.numel() == 0) continue;
    if (g.is_contiguous() && isReal(g.scalar_type())) {
      dense[g.scalar_type()].push_back(g);
      continue;
    }
    at::Tensor bad =
        at::logical_not(at::isfinite(g)).any().to(c10::kFloat).reshape(found_inf.sizes());
    found_inf.copy_(at::maximum(found_inf, bad));
    g.mul_(inv_scale.to(g.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat));
  }
  for (const auto& [t, list] : dense) ampUnscaleChunks(list, found_inf, inv_scale);
}

at::Tensor& ampUpdateScale(at::Tensor& current_scale, at::Tensor& growth_tracker,
                           const at::Tensor& found_inf, double growth_factor, double backoff_factor,
                           int64_t growth_interval) {
  checkAmpScalar(growth_tracker, "growth_tracker", c10::kInt, "an int");
  checkAmpScalar(current_scale, "current_scale", c10::kFloat, "a float");
  checkAmpScalar(found_inf, "found_inf", c10::kFloat, "a float");
  checkSameDevice({current_scale, growth_tracker, found_inf});
  const c10::DeviceIndex idx = current_scale.device().index();
  OCL_TRY
  cl_kernel k =
      programs(idx).kernel(optimProgram(idx, c10::kFloat, c10::kFloat), "amp_update_scale");
  setArgs(k, bufferOf(current_scale), bufferOf(growth_tracker), bufferOf(found_inf),
          static_cast<cl_float>(growth_factor), static_cast<cl_float>(backoff_factor),
          static_cast<cl_int>(growth_interval));
  const size_t one = 1;
  launchND(device(idx), currentQueue(idx), k, one, one);
  OCL_CATCH
  return current_scale;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_",
         TORCH_FN(ampForeachNonFiniteCheckAndUnscale));
  m.impl("_amp_update_scale_", TORCH_FN(ampUpdateScale));
  m.impl("_fused_adam_", TORCH_FN(fusedAdam));
  m.impl("_fused_adam_.tensor_lr", TORCH_FN(fusedAdamTensorLr));
  m.impl("_fused_adamw_", TORCH_FN(fusedAdamw));
  m.impl("_fused_adamw_.tensor_lr", TORCH_FN(fusedAdamwTensorLr));
  m.impl("_fused_sgd_", TORCH_FN(fusedSgd));
  m.impl("_fused_sgd_.tensor_lr", TORCH_FN(fusedSgdTensorLr));
}

}  // namespace torch_ocl::aten
