// searchsorted and bucketize (one work item per value, a binary search in its boundary row, CPU's
// comparisons: NaN values land past the end), and on top of them isin (search in the sorted test
// elements) and repeat_interleave(Tensor) (search in the running repeat counts). Checks, dtype
// promotion and contiguity follow CPU's searchsorted_out_cpu through ATen's BucketizationUtils.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/isin_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kSearchFamily;

cl_program searchProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kSearchFamily, dtypeCode(t)}, [&] {
    const std::string st = clStorageType(t), ct = clComputeType(t);
    std::string s = "typedef " + st + " ST;\ntypedef " + ct + " CT;\n";
    s += "inline CT ld(__global const ST* p, long i) { return " + loadExpr(t, "p", "i") + "; }\n";
    s += R"CLC(
// Value i searches row (i / in_last) of the boundaries (row 0 when they are 1-D); sorter, when
// given, holds each row's sorting permutation. nan_last: the boundaries come from sort() (NaN
// last) and are compared in that order (isin), not with CPU searchsorted's plain comparisons.
inline int nan_lt(CT a, CT b) { return (a == a && b != b) || a < b; }
__kernel void searchsorted(__global char* ob, ulong ooff, int out32, __global const char* vb,
                           ulong voff, __global const char* bb, ulong boff,
                           __global const char* sb, ulong soff, int has_sorter, long n,
                           long in_last, long bd_last, int bd_1d, int right, int nan_last) {
  const long i = get_global_id(0);
  if (i >= n) return;
  __global const ST* v = (__global const ST*)(vb + voff);
  __global const ST* bd = (__global const ST*)(bb + boff);
  __global const long* sorter = (__global const long*)(sb + soff);
  const long row = bd_1d ? 0 : (i / in_last) * bd_last;
  const CT val = ld(v, i);
  long lo = 0, hi = bd_last;
  while (lo < hi) {
    const long mid = lo + ((hi - lo) >> 1);
    const CT mv = ld(bd, row + (has_sorter ? sorter[row + mid] : mid));
    const int go = nan_last ? (right ? !nan_lt(val, mv) : nan_lt(mv, val))
                            : (right ? !(mv > val) : !(mv >= val));
    if (go) lo = mid + 1; else hi = mid;
  }
  if (out32) ((__global int*)(ob + ooff))[i] = (int)lo;
  else ((__global long*)(ob + ooff))[i] = lo;
}
)CLC";
    return rt::ProgramSource{std::string("searchsorted<") + c10::toString(t) + ">", withPrelude(s),
                             ""};
  });
}

at::Tensor& searchsortedInto(const at::Tensor& sorted_sequence, const at::Tensor& self,
                             bool out_int32, bool right, std::optional<c10::string_view> side_opt,
                             const std::optional<at::Tensor>& sorter_opt, at::Tensor& result,
                             bool nan_last) {
  const at::Tensor sorter = sorter_opt.value_or(at::Tensor());
  at::native::searchsorted_pre_check(sorted_sequence, self, result, out_int32, right, side_opt,
                                     sorter);
  checkSameDevice({sorted_sequence, self, result});
  at::native::resize_output(result, self.sizes());
  const bool is_right = side_opt ? *side_opt == "right" : right;
  if (self.numel() == 0) return result;
  at::Tensor out = result.is_contiguous() ? result : at::empty(result.sizes(), result.options());
  at::Tensor input, boundaries, sorter_c;
  at::native::searchsorted_maybe_trim_input_tensors(input, boundaries, sorter_c, self,
                                                    sorted_sequence, sorter);
  const at::Tensor& in = input.defined() ? input : self;
  const at::Tensor& bd = boundaries.defined() ? boundaries : sorted_sequence;
  const at::Tensor& so = sorter_c.defined() ? sorter_c : sorter;
  const c10::DeviceIndex idx = in.device().index();
  checkDtypeSupported(in.scalar_type(), idx);
  cl_program prog = searchProgram(idx, in.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "searchsorted");
  const int64_t in_last = in.dim() == 0 ? 1 : in.size(-1);
  setArgs(k, bufferOf(out), static_cast<cl_int>(out_int32), bufferOf(in), bufferOf(bd),
          so.defined() && so.numel() > 0 ? bufferOf(so) : bufferOf(in),
          static_cast<cl_int>(so.defined()), static_cast<cl_long>(in.numel()),
          static_cast<cl_long>(in_last), static_cast<cl_long>(bd.size(-1)),
          static_cast<cl_int>(bd.dim() == 1), static_cast<cl_int>(is_right),
          static_cast<cl_int>(nan_last));
  launch1D(device(idx), currentQueue(idx), k, in.numel());
  OCL_CATCH
  if (!out.is_same(result)) result.copy_(out);
  return result;
}

at::Tensor& searchsortedOut(const at::Tensor& sorted_sequence, const at::Tensor& self,
                            bool out_int32, bool right, std::optional<c10::string_view> side,
                            const std::optional<at::Tensor>& sorter, at::Tensor& result) {
  return searchsortedInto(sorted_sequence, self, out_int32, right, side, sorter, result, false);
}

at::Tensor searchsortedFn(const at::Tensor& sorted_sequence, const at::Tensor& self, bool out_int32,
                          bool right, std::optional<c10::string_view> side,
                          const std::optional<at::Tensor>& sorter) {
  at::Tensor result = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return searchsortedOut(sorted_sequence, self, out_int32, right, side, sorter, result);
}

at::Tensor searchsortedScalar(const at::Tensor& sorted_sequence, const at::Scalar& self,
                              bool out_int32, bool right, std::optional<c10::string_view> side,
                              const std::optional<at::Tensor>& sorter) {
  return searchsortedFn(sorted_sequence,
                        at::native::searchsorted_scalar_tensor(self, sorted_sequence.device()),
                        out_int32, right, side, sorter);
}

at::Tensor& searchsortedScalarOut(const at::Tensor& sorted_sequence, const at::Scalar& self,
                                  bool out_int32, bool right, std::optional<c10::string_view> side,
                                  const std::optional<at::Tensor>& sorter, at::Tensor& result) {
  return searchsortedOut(sorted_sequence,
                         at::native::searchsorted_scalar_tensor(self, sorted_sequence.device()),
                         out_int32, right, side, sorter, result);
}

at::Tensor& bucketizeOut(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                         bool right, at::Tensor& result) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsortedOut(boundaries, self, out_int32, right, std::nullopt, std::nullopt, result);
}

at::Tensor bucketizeFn(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                       bool right) {
  at::Tensor result = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  return bucketizeOut(self, boundaries, out_int32, right, result);
}

at::Tensor bucketizeScalar(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32,
                           bool right) {
  return bucketizeFn(at::native::searchsorted_scalar_tensor(self, boundaries.device()), boundaries,
                     out_int32, right);
}

// isin: each element's lower bound in the sorted test elements, then an equality check (NaN is
// never in anything; -0.0 finds 0.0), in the common dtype as on CPU.
at::Tensor& isinOut(const at::Tensor& elements, const at::Tensor& test_elements, bool assume_unique,
                    bool invert, at::Tensor& out) {
  Structured<at::meta::structured_isin_Tensor_Tensor> s(Mode::kOut, &out);
  s.meta(elements, test_elements, assume_unique, invert);
  checkSameDevice({elements, test_elements, out});
  if (out.numel() == 0) return out;
  const c10::ScalarType common = at::result_type(elements, test_elements);
  const at::Tensor e = elements.to(common);
  at::Tensor found;
  if (test_elements.numel() == 0) {
    found = at::zeros(e.sizes(), e.options().dtype(at::kBool));
  } else {
    const at::Tensor sorted = std::get<0>(test_elements.to(common).reshape({-1}).sort());
    // A column slice such as generate()'s input_ids[:, -1:] flattens to a strided view;
    // searchsorted would copy it anyway, and warn the user about a copy they did not ask for.
    const at::Tensor flat = e.reshape({-1}).contiguous();
    at::Tensor pos = at::empty({0}, e.options().dtype(at::kLong));
    searchsortedInto(sorted, flat, false, false, std::nullopt, std::nullopt, pos,
                     /*nan_last=*/true);
    pos.clamp_max_(sorted.numel() - 1);
    found = sorted.index_select(0, pos).eq(flat).view(e.sizes());
  }
  out.copy_(invert ? found.logical_not() : found);
  return out;
}

at::Tensor isinFn(const at::Tensor& elements, const at::Tensor& test_elements, bool assume_unique,
                  bool invert) {
  at::Tensor out = at::empty({0}, elements.options().dtype(at::kBool));
  return isinOut(elements, test_elements, assume_unique, invert, out);
}

// isin(scalar, tensor): the scalar as a 0-dim tensor on the device (a wrapped number, so it
// promotes like one), as CPU does.
at::Tensor& isinScalarTensorOut(const at::Scalar& element, const at::Tensor& test_elements,
                                bool assume_unique, bool invert, at::Tensor& out) {
  Structured<at::meta::structured_isin_Scalar_Tensor> s(Mode::kOut, &out);
  s.meta(element, test_elements, assume_unique, invert);
  return isinOut(at::native::wrapped_scalar_tensor(element, test_elements.device()), test_elements,
                 assume_unique, invert, out);
}

at::Tensor isinScalarTensor(const at::Scalar& element, const at::Tensor& test_elements,
                            bool assume_unique, bool invert) {
  at::Tensor out = at::empty({0}, test_elements.options().dtype(at::kBool));
  return isinScalarTensorOut(element, test_elements, assume_unique, invert, out);
}

// isin(tensor, scalar): an (in)equality with the scalar, as CPU does.
at::Tensor& isinTensorScalarOut(const at::Tensor& elements, const at::Scalar& test_element,
                                bool assume_unique, bool invert, at::Tensor& out) {
  Structured<at::meta::structured_isin_Tensor_Scalar> s(Mode::kOut, &out);
  s.meta(elements, test_element, assume_unique, invert);
  checkSameDevice({elements, out});
  return invert ? at::ne_out(out, elements, test_element) : at::eq_out(out, elements, test_element);
}

at::Tensor isinTensorScalar(const at::Tensor& elements, const at::Scalar& test_element,
                            bool assume_unique, bool invert) {
  at::Tensor out = at::empty({0}, elements.options().dtype(at::kBool));
  return isinTensorScalarOut(elements, test_element, assume_unique, invert, out);
}

// repeat_interleave(repeats): for every output position, the first running count above it.
at::Tensor repeatInterleave(const at::Tensor& repeats, std::optional<int64_t> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  if (repeats.size(0) == 0) return at::empty_like(repeats, at::MemoryFormat::Contiguous);
  const at::Tensor cumsum = repeats.cumsum(0);
  const int64_t total = output_size ? *output_size : cumsum[-1].item<int64_t>();
  TORCH_CHECK(repeats.ge(0).all().item<bool>(), "repeats can not be negative");
  if (total == 0) return at::empty({0}, repeats.options());
  const at::Tensor positions = at::arange(total, repeats.options().dtype(at::kLong));
  return searchsortedFn(cumsum, positions, repeats.scalar_type() == at::kInt, true, std::nullopt,
                        std::nullopt);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("searchsorted.Tensor", TORCH_FN(searchsortedFn));
  m.impl("searchsorted.Tensor_out", TORCH_FN(searchsortedOut));
  m.impl("searchsorted.Scalar", TORCH_FN(searchsortedScalar));
  m.impl("searchsorted.Scalar_out", TORCH_FN(searchsortedScalarOut));
  m.impl("bucketize.Tensor", TORCH_FN(bucketizeFn));
  m.impl("bucketize.Tensor_out", TORCH_FN(bucketizeOut));
  m.impl("bucketize.Scalar", TORCH_FN(bucketizeScalar));
  m.impl("isin.Scalar_Tensor", TORCH_FN(isinScalarTensor));
  m.impl("isin.Scalar_Tensor_out", TORCH_FN(isinScalarTensorOut));
  m.impl("isin.Tensor_Scalar", TORCH_FN(isinTensorScalar));
  m.impl("isin.Tensor_Scalar_out", TORCH_FN(isinTensorScalarOut));
  m.impl("isin.Tensor_Tensor", TORCH_FN(isinFn));
  m.impl("isin.Tensor_Tensor_out", TORCH_FN(isinOut));
  m.impl("repeat_interleave.Tensor", TORCH_FN(repeatInterleave));
}

}  // namespace torch_ocl::aten
