// CTC loss and its gradient on the device (kernels/ctc.cl): the alpha recursion in one launch
// (a work group per batch element), the beta recursion and the gradient rows in two more. float32
// and float64 as on CPU; the lengths arrive on the host (int[] overloads) or are read back once
// (Tensor overloads), as CPU and CUDA do.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "aten/fallback.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kCtcFamily;
constexpr size_t kCtcLocal = 64;

struct CtcInputs {
  at::Tensor targets;                                 // int64, contiguous
  at::Tensor offsets, input_lengths, target_lengths;  // int64 (N,) on the device
  int64_t max_target = 0;
};

CtcInputs prepare(const at::Tensor& log_probs, const at::Tensor& targets, at::IntArrayRef il,
                  at::IntArrayRef tl, int64_t blank) {
  checkSameDevice({log_probs, targets});
  TORCH_CHECK(log_probs.dim() == 3, "log_probs must be a 3-D tensor (T, N, C), but got ",
              log_probs.dim(), " dimensions");
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt,
              "targets must be int64 or int32, but got ", targets.scalar_type());
  const int64_t t_max = log_probs.size(0), n = log_probs.size(1), c = log_probs.size(2);
  TORCH_CHECK(blank >= 0 && blank < c, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(il.size()) == n, "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(tl.size()) == n, "target_lengths must be of size batch_size");
  CtcInputs in;
  std::vector<int64_t> offsets(n);
  int64_t pos = 0;
  for (int64_t b = 0; b < n; ++b) {
    TORCH_CHECK(il[b] >= 0 && il[b] <= t_max, "Expected input_lengths to have value at most ",
                t_max, ", but got value ", il[b], " (while checking arguments for ctc_loss_cpu)");
    TORCH_CHECK(tl[b] >= 0, "target_lengths must be non-negative, but got ", tl[b]);
    in.max_target = std::max(in.max_target, tl[b]);
    if (targets.dim() == 1) {
      offsets[b] = pos;
      pos += tl[b];
    } else {
      offsets[b] = b * (targets.dim() == 2 ? targets.size(1) : 0);
    }
  }
  if (targets.dim() == 1) {
    TORCH_CHECK(targets.size(0) >= pos, "Expected tensor to have size at least ", pos,
                " at dimension 0, but got size ", targets.size(0),
                " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  } else {
    TORCH_CHECK(targets.dim() == 2 && targets.size(0) == n,
                "targets must be 1-D (concatenated) or 2-D (N, S), but got shape ",
                targets.sizes());
    TORCH_CHECK(targets.size(1) >= in.max_target, "Expected tensor to have size at least ",
                in.max_target, " at dimension 1, but got size ", targets.size(1),
                " for argument #2 'targets' (while checking arguments for ctc_loss_cpu)");
  }
  const auto dev = at::TensorOptions().dtype(at::kLong).device(log_probs.device());
  auto upload = [&](at::IntArrayRef v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(log_probs.device());
  };
  in.targets = targets.to(dev.dtype(at::kLong)).contiguous();
  if (in.targets.numel() == 0) in.targets = at::zeros({1}, dev);  // a buffer to bind
  in.offsets = upload(offsets);
  in.input_lengths = upload(il);
  in.target_lengths = upload(tl);
  return in;
}

bool ctcNative(const at::Tensor& log_probs) {
  return (log_probs.scalar_type() == at::kFloat || log_probs.scalar_type() == at::kDouble) &&
         log_probs.dim() == 3 && log_probs.size(1) > 0;
}

std::tuple<at::Tensor, at::Tensor> ctcLoss(const at::Tensor& log_probs, const at::Tensor& targets,
                                           at::IntArrayRef il, at::IntArrayRef tl, int64_t blank,
                                           bool zero_infinity) {
  if (!ctcNative(log_probs)) {
    auto r = runFallback("aten::_ctc_loss", "",
                         {log_probs, targets, il.vec(), tl.vec(), blank, zero_infinity});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  const CtcInputs in = prepare(log_probs, targets, il, tl, blank);
  const int64_t t_max = log_probs.size(0), n = log_probs.size(1), s2 = 2 * in.max_target + 1;
  at::Tensor log_alpha = at::empty({n, t_max, s2}, log_probs.options());
  at::Tensor nll = at::empty({n}, log_probs.options());
  const c10::DeviceIndex idx = log_probs.device().index();
  const at::Tensor la_bind = log_alpha.numel() > 0 ? log_alpha : nll;
  cl_program prog = nnProgram(idx, &kCtcFamily, "ctc.cl", log_probs.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "ctc_alpha");
  setArgs(k, bufferOf(la_bind), bufferOf(nll), bufferOf(log_probs), bufferOf(in.targets),
          bufferOf(in.offsets), bufferOf(in.input_lengths), bufferOf(in.target_lengths),
          static_cast<cl_long>(t_max), static_cast<cl_long>(s2),
          static_cast<cl_long>(log_probs.stride(0)), static_cast<cl_long>(log_probs.stride(1)),
          static_cast<cl_long>(log_probs.stride(2)), static_cast<cl_long>(blank));
  const size_t global = static_cast<size_t>(n) * kCtcLocal, local = kCtcLocal;
  launchKernel(currentQueue(idx), k, 1, &global, &local);
  OCL_CATCH
  return {nll, log_alpha};
}

at::Tensor ctcLossBackward(const at::Tensor& grad, const at::Tensor& log_probs,
                           const at::Tensor& targets, at::IntArrayRef il, at::IntArrayRef tl,
                           const at::Tensor& nll, const at::Tensor& log_alpha, int64_t blank,
                           bool zero_infinity) {
  if (!ctcNative(log_probs))
    return runFallback("aten::_ctc_loss_backward", "",
                       {grad, log_probs, targets, il.vec(), tl.vec(), nll, log_alpha, blank,
                        zero_infinity})[0]
        .toTensor();
  checkSameDevice({grad, log_probs, nll, log_alpha});
  const CtcInputs in = prepare(log_probs, targets, il, tl, blank);
  const int64_t t_max = log_probs.size(0), n = log_probs.size(1), c = log_probs.size(2);
  const int64_t s2 = 2 * in.max_target + 1;
  at::Tensor out = at::empty({t_max, n, c}, log_probs.options());
  if (out.numel() == 0) return out;
  const at::Tensor la = log_alpha.contiguous();
  const at::Tensor go = grad.expand({n}).contiguous().to(log_probs.scalar_type());
  const at::Tensor nllc = nll.contiguous();
  at::Tensor log_beta = at::empty({n, t_max, s2}, log_probs.options());
  const c10::DeviceIndex idx = log_probs.device().index();
  cl_program prog = nnProgram(idx, &kCtcFamily, "ctc.cl", log_probs.scalar_type());
  OCL_TRY
  const cl_long st = log_probs.stride(0), sn = log_probs.stride(1), sc = log_probs.stride(2);
  cl_kernel kb = programs(idx).kernel(prog, "ctc_beta");
  setArgs(kb, bufferOf(log_beta), bufferOf(log_probs), bufferOf(in.targets), bufferOf(in.offsets),
          bufferOf(in.input_lengths), bufferOf(in.target_lengths), static_cast<cl_long>(t_max),
          static_cast<cl_long>(s2), st, sn, sc, static_cast<cl_long>(blank));
  const size_t global = static_cast<size_t>(n) * kCtcLocal, local = kCtcLocal;
  launchKernel(currentQueue(idx), kb, 1, &global, &local);
  cl_kernel kg = programs(idx).kernel(prog, "ctc_grad");
  setArgs(kg, bufferOf(out), bufferOf(la), bufferOf(log_beta), bufferOf(log_probs),
          bufferOf(in.targets), bufferOf(in.offsets), bufferOf(in.input_lengths),
          bufferOf(in.target_lengths), bufferOf(nllc), bufferOf(go), static_cast<cl_long>(t_max),
          static_cast<cl_long>(n), static_cast<cl_long>(c), static_cast<cl_long>(s2), st, sn, sc,
          static_cast<cl_long>(blank), static_cast<cl_int>(zero_infinity));
  launch1D(device(idx), currentQueue(idx), kg, t_max * n);
  OCL_CATCH
  return out;
}

std::vector<int64_t> hostLengths(const at::Tensor& t, const char* what) {
  TORCH_CHECK(c10::isIntegralType(t.scalar_type(), /*includeBool=*/false), what,
              " must be integral");
  const at::Tensor h = t.to(at::kCPU, at::kLong).contiguous();
  return std::vector<int64_t>(h.data_ptr<int64_t>(), h.data_ptr<int64_t>() + h.numel());
}

std::tuple<at::Tensor, at::Tensor> ctcLossTensor(const at::Tensor& log_probs,
                                                 const at::Tensor& targets,
                                                 const at::Tensor& input_lengths,
                                                 const at::Tensor& target_lengths, int64_t blank,
                                                 bool zero_infinity) {
  return ctcLoss(log_probs, targets, hostLengths(input_lengths, "input_lengths"),
                 hostLengths(target_lengths, "target_lengths"), blank, zero_infinity);
}

at::Tensor ctcLossBackwardTensor(const at::Tensor& grad, const at::Tensor& log_probs,
                                 const at::Tensor& targets, const at::Tensor& input_lengths,
                                 const at::Tensor& target_lengths, const at::Tensor& nll,
                                 const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  return ctcLossBackward(grad, log_probs, targets, hostLengths(input_lengths, "input_lengths"),
                         hostLengths(target_lengths, "target_lengths"), nll, log_alpha, blank,
                         zero_infinity);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_ctc_loss", TORCH_FN(ctcLoss));
  m.impl("_ctc_loss.Tensor", TORCH_FN(ctcLossTensor));
  m.impl("_ctc_loss_backward", TORCH_FN(ctcLossBackward));
  m.impl("_ctc_loss_backward.Tensor", TORCH_FN(ctcLossBackwardTensor));
}

}  // namespace torch_ocl::aten
