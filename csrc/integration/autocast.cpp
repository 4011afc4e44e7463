// torch.autocast("ocl"): PyTorch ships the cast policies (which ops run in lower precision, which
// in float32, which promote) as op lists for every backend to reuse; this registers CUDA's lists
// for AutocastPrivateUse1, so mixed-precision code written for CUDA behaves the same on ocl.
// Ops outside the lists pass straight through to the ocl kernels.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_ocl {
namespace {

// The op lists name types unqualified, as inside at::autocast.
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;
#if __has_include(<ATen/core/Dimname.h>)  // named tensors, still in torch 2.11's lists
using at::Dimname;
using at::DimnameList;
#endif

#define ADD_NS(RAW_OP) at::RAW_OP
#define OCL_AUTOCAST_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define OCL_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define OCL_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define OCL_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(OCL_AUTOCAST_LOWER_PRECISION_FP)
  AT_FORALL_FP32(OCL_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(OCL_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(OCL_AUTOCAST_PROMOTE)
}

}  // namespace
}  // namespace torch_ocl
