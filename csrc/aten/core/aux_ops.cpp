// Small ops outside the OpInfo matrix that CPU implements with its own kernel and ordinary code (or
// compiled graphs) reaches: range.out, the dependency tokens and functional asserts of compiled
// graphs, _compute_linear_combination (matrix_exp's helper), is_set_to, _spdiags, and sspaddmm.out
// (a sparse-only op: a dense ocl call gets CPU's error).
#include <ATen/ATen.h>
#include <ATen/ops/is_set_to_native.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace torch_ocl::aten {
namespace {

template <typename Acc>
int64_t rangeSize(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step) {
  const Acc a = start.to<Acc>(), e = end.to<Acc>(), s = step.to<Acc>();
  TORCH_CHECK(s > 0 || s < 0, "step must be nonzero");
  if constexpr (std::is_floating_point_v<Acc>)
    TORCH_CHECK(std::isfinite(static_cast<double>(a)) && std::isfinite(static_cast<double>(e)),
                "unsupported range: ", a, " -> ", e);
  TORCH_CHECK((s > 0 && e >= a) || (s < 0 && e <= a),
              "upper bound and larger bound inconsistent with step sign");
  return static_cast<int64_t>(((e - a) / s) + 1);
}

// CPU's range_out: the checks and size in the accumulate type, a plain resize_ (no warning), then
// start + i * step on the device.
at::Tensor& rangeOut(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step,
                     at::Tensor& result) {
  const c10::ScalarType t = result.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, /*includeBool=*/false) || at::isFloatingType(t),
                              "\"range_ocl\" not implemented for '", c10::toString(t), "'");
  // CPU's accumulate type: int64 for integers, float for half and bfloat16, double otherwise.
  const int64_t size = at::isIntegralType(t, false) ? rangeSize<int64_t>(start, end, step)
                       : (t == at::kHalf || t == at::kBFloat16)
                           ? rangeSize<float>(start, end, step)
                           : rangeSize<double>(start, end, step);
  if (result.numel() != size) result.resize_({size});
  if (size == 0) return result;
  at::Tensor r = result.is_contiguous() ? result : at::empty({size}, result.options());
  if (at::isIntegralType(t, false)) {
    // start + i * step in int64 (wrapping as CPU's), then CPU's truncating conversion.
    r.copy_(at::arange(size, result.options().dtype(at::kLong))
                .mul_(step.to<int64_t>())
                .add_(start.to<int64_t>()));
  } else {
    // arange's kernel computes start + i * step (in double where the device has fp64); an end
    // half a step past the last element makes its size exactly CPU's range size.
    const double a = start.to<double>(), s = step.to<double>();
    at::arange_out(r, start, a + s * (static_cast<double>(size) - 0.5), step);
  }
  if (!r.is_same(result)) result.copy_(r);
  return result;
}

at::Tensor makeDepToken(std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> device, std::optional<bool> pin_memory,
                        std::optional<at::MemoryFormat> memory_format) {
  return at::empty(
      {}, at::TensorOptions().dtype(dtype).layout(layout).device(device).pinned_memory(pin_memory),
      memory_format);
}

at::Tensor functionalAssertAsync(const at::Tensor& self, c10::string_view assert_msg,
                                 const at::Tensor& dep_token) {
  at::_assert_async(self, assert_msg);
  return dep_token.clone();
}

// output[i, ...] += coefficients[i, j] * input[j, ...]: one matrix product. The out= form
// accumulates into `out` as CPU's does (it neither zeroes nor resizes it).
at::Tensor& linearCombinationOut(const at::Tensor& input, const at::Tensor& coefficients,
                                 at::Tensor& out) {
  TORCH_CHECK(coefficients.dim() == 2 && input.dim() > 0 && coefficients.size(1) == input.size(0),
              "_compute_linear_combination: expected coefficients of shape (m, ", input.size(0),
              "), got ", coefficients.sizes());
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = coefficients.size(0);
  TORCH_CHECK(out.sizes() == at::IntArrayRef(shape), "_compute_linear_combination: out has shape ",
              out.sizes(), ", expected ", at::IntArrayRef(shape));
  const at::Tensor flat = input.reshape({input.size(0), -1});
  const at::Tensor sum = at::mm(coefficients.to(input.scalar_type()), flat);
  out.add_(sum.view(shape));
  return out;
}

at::Tensor linearCombination(const at::Tensor& input, const at::Tensor& coefficients) {
  TORCH_CHECK(input.ndimension() > 0 && input.numel() > 0, "Empty tensor not supported");
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = coefficients.size(0);
  at::Tensor out = at::zeros(shape, input.options().memory_format(at::MemoryFormat::Contiguous));
  return linearCombinationOut(input, coefficients, out);
}

// torch.sparse.spdiags: CPU's checks, then every diagonal's in-range entries at once (row-major
// over (diagonal, column), which is CPU's order of the COO entries): diagonals[i, c] goes to
// (c - offsets[i], c).
at::Tensor spdiags(const at::Tensor& diagonals, const at::Tensor& offsets, at::IntArrayRef shape,
                   std::optional<at::Layout> layout) {
  const at::Tensor d2 = diagonals.dim() == 1 ? diagonals.unsqueeze(0) : diagonals;
  TORCH_CHECK(d2.dim() == 2, "Diagonals must be vector or matrix");
  TORCH_CHECK(shape.size() == 2, "Output shape must be 2d");
  const at::Tensor off = offsets.dim() == 0 ? offsets.unsqueeze(0) : offsets;
  TORCH_CHECK(off.dim() == 1, "Offsets must be scalar or vector");
  TORCH_CHECK(d2.size(0) == off.size(0), "Number of diagonals (", d2.size(0),
              ") does not match the number of offsets (", off.size(0), ")");
  if (layout)
    TORCH_CHECK(*layout == at::kSparse || *layout == at::kSparseCsc || *layout == at::kSparseCsr,
                "Only output layouts (", at::kSparse, ", ", at::kSparseCsc, ", and ",
                at::kSparseCsr, ") are supported");
  TORCH_CHECK(off.scalar_type() == at::kLong, "Offset Tensor must have dtype Long but got ",
              off.scalar_type());
  TORCH_CHECK(std::get<0>(at::_unique(off)).numel() == off.numel(),
              "Offset tensor contains duplicate values");
  // Entries per diagonal as CPU counts them, from its first column max(offset, 0).
  const at::Tensor nnz = at::where(off.le(0), off.add(shape[0]).clamp_max_(d2.size(1)),
                                   off.add(-std::min<int64_t>(shape[1], d2.size(1))).neg());
  const at::Tensor first = off.clamp_min(0).unsqueeze(1);
  const at::Tensor col = at::arange(d2.size(1), off.options()).unsqueeze(0);
  const at::Tensor keep = col.ge(first).logical_and_(col.lt(first + nnz.unsqueeze(1)));
  const at::Tensor cols = col.expand_as(keep).masked_select(keep);
  const at::Tensor rows = (col - off.unsqueeze(1)).masked_select(keep);
  const at::Tensor values = d2.masked_select(keep);
  at::Tensor coo = at::sparse_coo_tensor(at::stack({rows, cols}), values, {shape[0], shape[1]});
  if (layout == at::kSparseCsr) return coo.to_sparse_csr();
  if (layout == at::kSparseCsc) return coo.to_sparse_csc();
  return coo;
}

at::Tensor& sspaddmmOut(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Scalar&,
                        const at::Scalar&, at::Tensor&) {
  TORCH_CHECK(false, "tensor.sspaddmm(...) can only be called on sparse tensors");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_compute_linear_combination", TORCH_FN(linearCombination));
  m.impl("_compute_linear_combination.out", TORCH_FN(linearCombinationOut));
  m.impl("_functional_assert_async.msg", TORCH_FN(functionalAssertAsync));
  m.impl("_make_dep_token", TORCH_FN(makeDepToken));
  m.impl("_spdiags", TORCH_FN(spdiags));
  m.impl("is_set_to", TORCH_FN(at::native::is_set_to));
  m.impl("range.out", TORCH_FN(rangeOut));
  m.impl("sspaddmm.out", TORCH_FN(sspaddmmOut));
}

}  // namespace torch_ocl::aten
