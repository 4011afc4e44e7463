// randperm, multinomial and _assert_async, composed from native ocl kernels (random_, exponential_,
// sort, argmax, topk) and the device's Philox generator, as CUDA does it: no kernel of their own.
#include <ATen/ATen.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/native/UnaryOps.h>
#include <ATen/ops/_assert_async_native.h>
#include <ATen/ops/multinomial_native.h>
#include <torch/library.h>

#include <algorithm>

namespace torch_ocl::aten {
namespace {

// randperm: random 63-bit keys, then a stable sort; the permutation is the sorting order (CUDA's
// method for large n). Equal keys (probability about n^2 / 2^64) keep index order.
at::Tensor& randpermOut(int64_t n, std::optional<at::Generator> gen, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  at::native::check_supported_max_int_with_precision(n, out);
  out.resize_({n});
  if (n == 0) return out;
  at::Tensor keys = at::empty({n}, out.options().dtype(at::kLong));
  keys.random_(gen);
  at::Tensor order = std::get<1>(keys.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false));
  out.copy_(order);
  return out;
}

// Sampling with replacement, several samples per row: each sample is argmax(p / q) with
// q ~ Exp(1) drawn per (sample, category), the exponential race that ATen's own fast path uses
// for one sample. Samples are processed in slices that bound the temporary to ~64M elements.
void multinomialWithReplacement(at::Tensor& result, const at::Tensor& self, const int64_t n_sample,
                                std::optional<at::Generator> gen) {
  // The checks ATen's fast path makes (this path has none of its own on the device).
  const bool valid = ((self.max() < INFINITY) & (self.min() >= 0)).item<bool>();
  TORCH_CHECK(valid, "probability tensor contains either `inf`, `nan` or element < 0");
  const bool zero_rows =
      self.dim() == 1 ? (self.sum() == 0).item<bool>() : (self.sum(1) == 0).any().item<bool>();
  TORCH_CHECK(!zero_rows, "invalid multinomial distribution (sum of probabilities <= 0)");
  const at::Tensor p = self.dim() == 1 ? self.unsqueeze(0) : self;     // (rows, categories)
  at::Tensor out2 = result.dim() == 1 ? result.unsqueeze(0) : result;  // (rows, n_sample)
  const int64_t rows = p.size(0), cats = p.size(1);
  const int64_t per_slice =
      std::max<int64_t>(1, (int64_t{1} << 26) / std::max<int64_t>(1, rows * cats));
  for (int64_t s0 = 0; s0 < n_sample; s0 += per_slice) {
    const int64_t k = std::min(per_slice, n_sample - s0);
    at::Tensor q = at::empty({rows, k, cats}, p.options()).exponential_(1, gen);
    at::div_out(q, p.unsqueeze(1), q);
    out2.narrow(1, s0, k).copy_(q.argmax(-1));
  }
}

// Points ATen's with-replacement stub at the function above for PrivateUse1.
at::native::RegisterPRIVATEUSE1Dispatch<
    at::native::multinomial_with_replacement_stub_DECLARE_DISPATCH_type>
    multinomial_with_replacement_ocl(at::native::multinomial_with_replacement_stub,
                                     &multinomialWithReplacement);

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("randperm.generator_out", TORCH_FN(randpermOut));
  // ATen's multinomial runs on any device (its checks, and its exponential-race fast path for
  // one sample or no replacement, are ops that are native here); the stub above covers the rest.
  m.impl("multinomial", TORCH_FN(at::native::multinomial));
  m.impl("multinomial.out", TORCH_FN(at::native::multinomial_out));
  // torch._assert_async (multinomial's argument check uses it): ATen's device-independent version
  // reads the one value back, a synchronisation, where CUDA asserts on the device.
  m.impl("_assert_async", TORCH_FN(at::native::_assert_async_cpu));
  m.impl("_assert_async.msg", TORCH_FN(at::native::_assert_async_msg_cpu));
}

}  // namespace torch_ocl::aten
