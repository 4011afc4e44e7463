// _fused_adagrad_ (torch.optim.Adagrad(fused=True)): CPU's update (FusedAdagradKernel.cpp) per
// parameter, composed of native ops in the parameter's math type (float for half/bfloat16):
// grad /= grad_scale (written back, as CPU does), maximize, weight decay, state_sum += grad^2,
// param -= clr * grad / (sqrt(state_sum) + eps) with clr = lr / (1 + (step - 1) lr_decay) from
// the device-side step. A found_inf of 1 leaves params, grads and sums untouched, selected on the
// device (no host sync). Several launches per parameter, not one fused kernel: correct and
// native, not yet fast.
#include <ATen/ATen.h>
#include <ATen/OpMathType.h>
#include <torch/library.h>

namespace torch_ocl::aten {
namespace {

void adagradOne(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& state_sum,
                const at::Tensor& step, const at::Tensor* lr_tensor, double lr, double lr_decay,
                double weight_decay, double eps, bool maximize,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  const c10::ScalarType t = param.scalar_type();
  const c10::ScalarType math = at::toOpMathType(t);
  const at::Tensor p = param.to(math);
  at::Tensor g = grad.to(math);
  if (grad_scale) g = g / grad_scale->to(math);
  const at::Tensor unscaled = g;
  if (maximize) g = -g;
  if (weight_decay != 0) g = g + p * weight_decay;
  const at::Tensor sum = state_sum.to(math) + g * g;
  const at::Tensor denom = (step.to(math) - 1) * lr_decay + 1;
  const at::Tensor clr =
      lr_tensor ? lr_tensor->to(param.device(), math) / denom : denom.reciprocal().mul_(lr);
  at::Tensor new_p = p - clr * g / (sum.sqrt() + eps);
  at::Tensor new_sum = sum;
  at::Tensor new_g = unscaled;
  if (found_inf) {
    const at::Tensor skip = found_inf->eq(1);
    new_p = at::where(skip, p, new_p);
    new_sum = at::where(skip, state_sum.to(math), new_sum);
    new_g = at::where(skip, grad.to(math), new_g);
  }
  param.copy_(new_p);
  state_sum.copy_(new_sum);
  if (grad_scale) grad.copy_(new_g);
}

void checkLists(at::TensorList self, at::TensorList grads, at::TensorList state_sums,
                at::TensorList state_steps) {
  const size_t n = self.size();
  TORCH_CHECK(grads.size() == n && state_sums.size() == n && state_steps.size() == n,
              "_fused_adagrad_: expected params, grads, state_sums and state_steps of the same "
              "length, got ",
              n, ", ", grads.size(), ", ", state_sums.size(), ", ", state_steps.size());
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(at::isFloatingType(self[i].scalar_type()),
                "_fused_adagrad_: expected floating point params, got ", self[i].scalar_type());
    TORCH_CHECK(grads[i].sizes() == self[i].sizes() && state_sums[i].sizes() == self[i].sizes(),
                "_fused_adagrad_: param, grad and state_sum must have the same shape");
    TORCH_CHECK(state_steps[i].numel() == 1, "_fused_adagrad_: expected a single-element step");
  }
}

void run(at::TensorList self, at::TensorList grads, at::TensorList state_sums,
         at::TensorList state_steps, const at::Tensor* lr_tensor, double lr, double lr_decay,
         double weight_decay, double eps, bool maximize,
         const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  checkLists(self, grads, state_sums, state_steps);
  for (size_t i = 0; i < self.size(); ++i)
    adagradOne(self[i], grads[i], state_sums[i], state_steps[i].reshape({}), lr_tensor, lr,
               lr_decay, weight_decay, eps, maximize, grad_scale, found_inf);
}

void fusedAdagradTensorLr(at::TensorList self, at::TensorList grads, at::TensorList state_sums,
                          at::TensorList state_steps, const at::Tensor& lr, double lr_decay,
                          double weight_decay, double eps, bool maximize,
                          const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  run(self, grads, state_sums, state_steps, &lr, 0.0, lr_decay, weight_decay, eps, maximize,
      grad_scale, found_inf);
}

void fusedAdagrad(at::TensorList self, at::TensorList grads, at::TensorList state_sums,
                  at::TensorList state_steps, double lr, double lr_decay, double weight_decay,
                  double eps, bool maximize, const std::optional<at::Tensor>& grad_scale,
                  const std::optional<at::Tensor>& found_inf) {
  run(self, grads, state_sums, state_steps, nullptr, lr, lr_decay, weight_decay, eps, maximize,
      grad_scale, found_inf);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adagrad_", TORCH_FN(fusedAdagrad));
  m.impl("_fused_adagrad_.tensor_lr", TORCH_FN(fusedAdagradTensorLr));
}

}  // namespace torch_ocl::aten
