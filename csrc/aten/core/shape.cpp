// cat: PyTorch's own meta function sizes the output; each input is then copied into its slice by
// the native copy (strided, dtype-converting), so no input is made contiguous first.
#include <ATen/ATen.h>
#include <ATen/ops/cat_meta.h>
#include <ATen/ops/roll_native.h>
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>

#include <torch/library.h>

#include <algorithm>
#include <vector>
#include "aten/cl_types.h"

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

// tril / triu: out[b, r, c] = keep ? self[b, r, c] : 0, keep = (c - r <= k) for tril and
// (c - r >= k) for triu; any strides (in place works: each element reads only itself).
char kTriFamily;

void triInto(const at::Tensor& out, const at::Tensor& self, int64_t k, bool upper) {
  checkSameDevice({self, out});
  if (out.numel() == 0) return;
  const c10::DeviceIndex idx = self.device().index();
  const c10::ScalarType t = self.scalar_type();
  checkDtypeSupported(t, idx);
  const at::Tensor in3 = self.dim() == 2 ? self.unsqueeze(0) : self.flatten(0, -3);
  at::Tensor o = out;
  // flatten of a non-collapsible out would copy: compute into a temporary then.
  at::Tensor o3 = out.dim() == 2 ? out.unsqueeze(0) : out.flatten(0, -3);
  const bool direct = out.dim() == 2 || o3.is_alias_of(out);
  if (!direct) {
    o = at::empty(out.sizes(), out.options());
    o3 = o.flatten(0, -3);
  }
  cl_program prog = programs(idx).get({&kTriFamily, dtypeCode(t)}, [&] {
    const std::string st = clStorageType(t);
    std::string src = "typedef " + st + " ST;\n";
    src +=
        "__kernel void tri(__global char* ob, ulong ooff, __global const char* ib, ulong ioff,\n"
        "    long n, long R, long C, long k, int upper, long ob_s, long or_s, long oc_s,\n"
        "    long ib_s, long ir_s, long ic_s) {\n"
        "  const long g = get_global_id(0);\n  if (g >= n) return;\n"
        "  const long c = g % C, r = (g / C) % R, b = g / (C * R);\n"
        "  const int keep = upper ? (c - r >= k) : (c - r <= k);\n"
        "  __global ST* out = (__global ST*)(ob + ooff);\n"
        "  __global const ST* in = (__global const ST*)(ib + ioff);\n"
        "  out[b * ob_s + r * or_s + c * oc_s] = keep ? in[b * ib_s + r * ir_s + c * ic_s] : "
        "(ST)0;\n}\n";
    return rt::ProgramSource{std::string("tri<") + c10::toString(t) + ">", withPrelude(src), ""};
  });
  OCL_TRY
  cl_kernel kern = programs(idx).kernel(prog, "tri");
  setArgs(kern, bufferOf(o3), bufferOf(in3), static_cast<cl_long>(o3.numel()),
          static_cast<cl_long>(o3.size(1)), static_cast<cl_long>(o3.size(2)),
          static_cast<cl_long>(k), static_cast<cl_int>(upper), static_cast<cl_long>(o3.stride(0)),
          static_cast<cl_long>(o3.stride(1)), static_cast<cl_long>(o3.stride(2)),
          static_cast<cl_long>(in3.stride(0)), static_cast<cl_long>(in3.stride(1)),
          static_cast<cl_long>(in3.stride(2)));
  launch1D(device(idx), currentQueue(idx), kern, o3.numel());
  OCL_CATCH
  if (!o.is_same(out)) out.copy_(o);
}

#define OCL_TRI(NAME, UPPER)                                                  \
  at::Tensor NAME##Fn(const at::Tensor& self, int64_t k) {                    \
    Structured<at::meta::structured_##NAME> s(Mode::kFunctional, nullptr);    \
    s.meta(self, k);                                                          \
    triInto(s.output(), self, k, UPPER);                                      \
    return s.output();                                                        \
  }                                                                           \
  at::Tensor& NAME##Inplace(at::Tensor& self, int64_t k) {                    \
    Structured<at::meta::structured_##NAME> s(Mode::kInplace, &self);         \
    s.meta(self, k);                                                          \
    triInto(self, self, k, UPPER);                                            \
    return self;                                                              \
  }                                                                           \
  at::Tensor& NAME##Out(const at::Tensor& self, int64_t k, at::Tensor& out) { \
    Structured<at::meta::structured_##NAME> s(Mode::kOut, &out);              \
    s.meta(self, k);                                                          \
    triInto(out, self, k, UPPER);                                             \
    return out;                                                               \
  }
OCL_TRI(tril, false)
OCL_TRI(triu, true)

// The gradient of Tensor.unfold: each window's gradient added back at its place. Windows r, r + m,
// r + 2m, ... (m = ceil(size / step)) never overlap, so each class is one strided view that takes
// one add: ceil(size / step) launches, one when windows do not overlap.
at::Tensor unfoldBackward(const at::Tensor& grad, at::IntArrayRef input_sizes, int64_t dim,
                          int64_t size, int64_t step) {
  checkSameDevice({grad});
  dim = at::maybe_wrap_dim(dim, std::max<int64_t>(1, static_cast<int64_t>(input_sizes.size())));
  at::Tensor result = at::zeros(input_sizes, grad.options());
  if (input_sizes.empty()) return result.add_(grad.reshape({}));
  const int64_t windows = grad.size(dim);
  if (windows == 0 || result.numel() == 0) return result;
  const int64_t classes = (size + step - 1) / step;
  std::vector<int64_t> sizes = result.sizes().vec(), strides = result.strides().vec();
  const int64_t sd = strides[dim];
  sizes.push_back(size);
  strides.push_back(sd);
  strides[dim] = sd * step * classes;
  for (int64_t r = 0; r < std::min(classes, windows); ++r) {
    sizes[dim] = (windows - r + classes - 1) / classes;
    at::Tensor view = result.as_strided(sizes, strides, result.storage_offset() + r * step * sd);
    view.add_(grad.slice(dim, r, windows, classes));
  }
  return result;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", TORCH_FN(catFn));
  m.impl("cat.out", TORCH_FN(catOut));
  // ATen's roll is device-generic (narrow + cat, both native here).
  m.impl("roll", TORCH_FN(at::native::roll));
  m.impl("tril", TORCH_FN(trilFn));
  m.impl("tril_", TORCH_FN(trilInplace));
  m.impl("tril.out", TORCH_FN(trilOut));
  m.impl("triu", TORCH_FN(triuFn));
  m.impl("triu_", TORCH_FN(triuInplace));
  m.impl("triu.out", TORCH_FN(triuOut));
  m.impl("unfold_backward", TORCH_FN(unfoldBackward));
}

}  // namespace torch_ocl::aten
