// cat: PyTorch's own meta function sizes the output; each input is then copied into its slice by
// the native copy (strided, dtype-converting), so no input is made contiguous first.
#include <ATen/ATen.h>
#include <ATen/ops/cat_meta.h>
#include <ATen/ops/roll_native.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

void catInto(Structured<at::meta::structured_cat>& s, const at::ITensorListRef& tensors,
             int64_t dim) {
  const auto pre = s.meta(tensors, dim);
  const at::Tensor& out = s.output();
  for (const at::Tensor& t : tensors) checkSameDevice({t, out});
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;  // legacy empty inputs take no part, as on CPU
    const int64_t n = t.size(pre.dim);
    if (n > 0 && out.numel() > 0) out.narrow(pre.dim, offset, n).copy_(t);
    offset += n;
  }
}

at::Tensor catFn(const at::ITensorListRef& tensors, int64_t dim) {
  Structured<at::meta::structured_cat> s(Mode::kFunctional, nullptr);
  catInto(s, tensors, dim);
  return s.output();
}

at::Tensor& catOut(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  Structured<at::meta::structured_cat> s(Mode::kOut, &out);
  catInto(s, tensors, dim);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", TORCH_FN(catFn));
  m.impl("cat.out", TORCH_FN(catOut));
  // ATen's roll is device-generic (narrow + cat, both native here).
  m.impl("roll", TORCH_FN(at::native::roll));
}

}  // namespace torch_ocl::aten
