// The spectral ops every torch.fft function lowers to: _fft_c2c, _fft_r2c, _fft_c2r (and .out),
// through VkFFT plans (vkfft_plan.h). Like PyTorch's cuFFT path, the transformed dims are permuted
// to the end and copied into a dense layout the plan understands; more than three transformed dims
// run as several passes of at most three. Normalisation follows ATen's `normalization` argument
// (fft_norm_mode: none, by_root_n, by_n) as one scaling pass over the result.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SpectralOpsUtils.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fft/vkfft_plan.h"
#include "aten/launch.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace torch_ocl::aten {
namespace {

using fft::Kind;
using fft::PlanKey;
using Dims = std::vector<int64_t>;

// A permutation that keeps the dims not in `last` in their order and appends `last` in its order.
Dims permToEnd(int64_t ndim, const Dims& last) {
  Dims perm;
  for (int64_t d = 0; d < ndim; ++d)
    if (std::find(last.begin(), last.end(), d) == last.end()) perm.push_back(d);
  perm.insert(perm.end(), last.begin(), last.end());
  return perm;
}

at::Tensor unpermute(const at::Tensor& t, const Dims& perm) {
  Dims inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return t.permute(inv);
}

// The plan key for a dense tensor whose last `rank` dims are transformed; sizes are real sizes
// for R2C/C2R (`real` is the real-side tensor), complex ones for C2C.
PlanKey keyFor(const at::Tensor& real_or_complex, int rank, Kind kind, bool inverse) {
  PlanKey key;
  key.device = real_or_complex.device().index();
  key.kind = kind;
  key.inverse = inverse;
  const c10::ScalarType t = real_or_complex.scalar_type();
  key.fp64 = t == at::kDouble || t == at::kComplexDouble;
  key.rank = static_cast<uint8_t>(rank);
  const int64_t ndim = real_or_complex.dim();
  uint64_t signal = 1;
  for (int i = 0; i < rank; ++i) {
    key.sizes[i] = static_cast<uint64_t>(real_or_complex.size(ndim - 1 - i));
    signal *= key.sizes[i];
  }
  key.batch = static_cast<uint64_t>(real_or_complex.numel()) / signal;
  return key;
}

// A dense copy of t (same sizes) that the caller may overwrite.
at::Tensor denseCopy(const at::Tensor& t) {
  at::Tensor w = at::empty(t.sizes(), t.options());
  w.copy_(t);
  return w;
}

// c2c of complex `cur` over `dims` (any order and strides). `owned`: cur's memory is ours to
// overwrite. Returns a fresh tensor (a permuted view of the last pass's buffer).
at::Tensor c2cOver(at::Tensor cur, Dims dims, bool inverse, bool owned) {
  dims.erase(std::remove_if(dims.begin(), dims.end(), [&](int64_t d) { return cur.size(d) == 1; }),
             dims.end());
  while (!dims.empty()) {
    const size_t take = std::min<size_t>(3, dims.size());
    Dims chunk(dims.end() - take, dims.end());
    dims.resize(dims.size() - take);
    const Dims perm = permToEnd(cur.dim(), chunk);
    at::Tensor p = cur.permute(perm);
    at::Tensor w = owned && p.is_contiguous() ? p : denseCopy(p);
    TORCH_INTERNAL_ASSERT(
        fft::execute(keyFor(w, static_cast<int>(take), Kind::kC2C, inverse), bufferOf(w), {}));
    cur = unpermute(w, perm);
    owned = true;
  }
  return owned ? cur : denseCopy(cur);
}

void normalize(const at::Tensor& out, int64_t normalization, double signal_numel) {
  const auto mode = static_cast<at::native::fft_norm_mode>(normalization);
  if (mode == at::native::fft_norm_mode::none) return;
  const double scale = mode == at::native::fft_norm_mode::by_root_n ? 1.0 / std::sqrt(signal_numel)
                                                                    : 1.0 / signal_numel;
  (out.is_complex() ? at::view_as_real(out) : out).mul_(scale);
}

double signalNumel(at::IntArrayRef sizes, const Dims& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(sizes[d]);
  return n;
}

Dims wrapDims(at::IntArrayRef dim, int64_t ndim) {
  Dims dims;
  for (int64_t d : dim) dims.push_back(c10::maybe_wrap_dim(d, ndim));
  return dims;
}

void checkNormalization(int64_t normalization) {
  TORCH_CHECK(normalization >= 0 && normalization <= 2,
              "Invalid normalization mode: ", normalization);
}

// A complex tensor holding real `x` (imaginary part zero), dense and ours.
at::Tensor complexify(const at::Tensor& x) {
  at::Tensor z = at::empty(x.sizes(), x.options().dtype(c10::toComplexType(x.scalar_type())));
  at::Tensor zr = at::view_as_real(z);
  zr.select(-1, 0).copy_(x);
  zr.select(-1, 1).zero_();
  return z;
}

// The output strides of PyTorch's _exec_fft (torch/_meta_registrations.py; aten's
// mkl/SpectralOps.cpp) for a transform over `dims` (in this order) of an input with `in_strides`:
// the batch dims outermost, ordered by the input's strides (largest first), then `dims`, dense.
std::vector<int64_t> execFftStrides(at::IntArrayRef in_strides, at::IntArrayRef out_sizes,
                                    const Dims& dims) {
  const int64_t ndim = static_cast<int64_t>(out_sizes.size());
  Dims perm;
  for (int64_t d = 0; d < ndim; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  const size_t batch_dims = perm.size();
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return in_strides[a] > in_strides[b]; });
  std::vector<int64_t> strides(ndim);
  int64_t m = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[dims[i]] = m;
    m *= std::max<int64_t>(out_sizes[dims[i]], 1);
  }
  int64_t batch_numel = 1;
  for (size_t i = batch_dims; i-- > 0;) {
    strides[perm[i]] = batch_numel * m;
    batch_numel *= out_sizes[perm[i]];
  }
  return strides;
}

// The first `count` of dims sorted by `strides`, largest first (stable: _sort_dims).
Dims sortedByStride(Dims dims, at::IntArrayRef strides, size_t count) {
  std::stable_sort(dims.begin(), dims.begin() + count,
                   [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  return dims;
}

// The output strides of the spectral ops as PyTorch's meta functions give them for a non-CUDA
// device (with MKL, as CPU PyTorch's x86 builds have it; also CPU's own layouts). Compiled graphs
// assert them on our results. c2c: all dims in the input's stride order.
std::vector<int64_t> c2cMetaStrides(const at::Tensor& self, const Dims& dims) {
  return execFftStrides(self.strides(), self.sizes(),
                        sortedByStride(dims, self.strides(), dims.size()));
}

// r2c: all but the last dim in the input's stride order, the last one last.
std::vector<int64_t> r2cMetaStrides(const at::Tensor& self, const Dims& dims,
                                    at::IntArrayRef out_sizes) {
  return execFftStrides(self.strides(), out_sizes,
                        sortedByStride(dims, self.strides(), dims.size() - 1));
}

// c2r: the c2c transform over all but the last dim first, then the c2r transform over the last.
std::vector<int64_t> c2rMetaStrides(const at::Tensor& self, const Dims& dims,
                                    at::IntArrayRef out_sizes) {
  std::vector<int64_t> in_strides = self.strides().vec();
  if (dims.size() > 1) {
    const Dims c2c(dims.begin(), dims.end() - 1);
    in_strides =
        execFftStrides(in_strides, self.sizes(), sortedByStride(c2c, in_strides, c2c.size()));
  }
  return execFftStrides(in_strides, out_sizes, {dims.back()});
}

// t itself when its strides (of the dims longer than 1) are `strides`, else a copy with them.
at::Tensor withStrides(const at::Tensor& t, const std::vector<int64_t>& strides) {
  bool same = true;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) != strides[d]) same = false;
  if (same) return t;
  at::Tensor r = at::empty_strided(t.sizes(), strides, t.options());
  r.copy_(t);
  return r;
}

// x with its lazy conjugate / negative bits applied, as dense memory (hfft passes x.conj()); the
// bits are applied to the real view, so this stays on the device whatever complex ops exist.
at::Tensor resolveBits(const at::Tensor& x, bool& owned) {
  if (!x.is_conj() && !x.is_neg()) return x;
  at::Tensor base = x.is_conj() ? x.conj() : x;
  if (base.is_neg()) base = base._neg_view();
  at::Tensor w = at::empty(x.sizes(), x.options());
  at::Tensor wr = at::view_as_real(w);
  wr.copy_(at::view_as_real(base));
  if (x.is_neg()) wr.neg_();
  if (x.is_conj()) wr.select(-1, 1).neg_();
  owned = true;
  return w;
}

// The full length-n spectrum along `last` from its first n/2+1 bins (`h`, complex), as pocketfft
// reads them: the imaginary parts of the zero (and, n even, the Nyquist) bin are ignored and the
// upper bins are the conjugates of the lower ones, in reverse. Works on the real view.
at::Tensor hermitianFull(const at::Tensor& h, int64_t last, int64_t n) {
  const int64_t half = n / 2 + 1, tail = n - half;
  std::vector<int64_t> sizes = h.sizes().vec();
  sizes[last] = n;
  at::Tensor full = at::empty(sizes, h.options());
  at::Tensor fr = at::view_as_real(full), hr = at::view_as_real(h);
  fr.narrow(last, 0, half).copy_(hr.narrow(last, 0, half));
  if (tail > 0) {
    at::Tensor upper = fr.narrow(last, half, tail);
    upper.copy_(hr.narrow(last, 1, tail).flip({last}));
    upper.select(-1, 1).neg_();
  }
  fr.select(last, 0).select(-1, 1).zero_();
  if (n % 2 == 0) fr.select(last, n / 2).select(-1, 1).zero_();
  return full;
}

// ---- the ops --------------------------------------------------------------------------------

at::Tensor fftC2C(const at::Tensor& self, c10::SymIntArrayRef dim_sym, int64_t normalization,
                  bool forward) {
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input tensor, but got ",
              self.scalar_type());
  checkNormalization(normalization);
  checkDtypeSupported(self.scalar_type(), self.device().index());
  const Dims dims = wrapDims(C10_AS_INTARRAYREF_SLOW(dim_sym), self.dim());
  if (self.numel() == 0 || dims.empty()) {
    // No transform: the meta function's self.clone() (the input's layout where it is dense).
    at::Tensor out =
        dims.empty() ? at::empty_like(self)
                     : at::empty_strided(self.sizes(), c2cMetaStrides(self, dims), self.options());
    if (self.numel() > 0) {
      out.copy_(self);
      normalize(out, normalization, 1.0);
    }
    return out;
  }
  bool owned = false;
  const at::Tensor x = resolveBits(self, owned);
  at::Tensor out = withStrides(c2cOver(x, dims, !forward, owned), c2cMetaStrides(self, dims));
  normalize(out, normalization, signalNumel(self.sizes(), dims));
  return out;
}

at::Tensor fftR2C(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                  bool onesided) {
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble,
              "_fft_r2c on ocl expects a float or double input tensor, but got ",
              self.scalar_type());
  TORCH_CHECK(!dim.empty(), "_fft_r2c expects at least one dim");
  checkNormalization(normalization);
  checkDtypeSupported(self.scalar_type(), self.device().index());
  const Dims dims = wrapDims(dim, self.dim());
  const int64_t last = dims.back();
  const int64_t n = self.size(last);
  std::vector<int64_t> out_sizes = self.sizes().vec();
  if (onesided) out_sizes[last] = n / 2 + 1;
  const auto copts = self.options().dtype(c10::toComplexType(self.scalar_type()));
  const std::vector<int64_t> meta_strides = r2cMetaStrides(self, dims, out_sizes);
  if (self.numel() == 0) return at::empty_strided(out_sizes, meta_strides, copts);

  at::Tensor out;
  if (!onesided || n == 1) {
    // Both halves (or a length-1 real axis): the complex transform of the complexified input.
    out = c2cOver(complexify(self), dims, /*inverse=*/false, /*owned=*/true);
    if (onesided) out = out.narrow(last, 0, n / 2 + 1);
  } else {
    Dims others(dims.begin(), dims.end() - 1);
    others.erase(
        std::remove_if(others.begin(), others.end(), [&](int64_t d) { return self.size(d) == 1; }),
        others.end());
    // The real pass: `last` fastest, with up to two more dims; the rest as c2c passes after it.
    const size_t take = std::min<size_t>(2, others.size());
    Dims real_dims(others.end() - take, others.end());
    real_dims.push_back(last);
    others.resize(others.size() - take);
    const Dims perm = permToEnd(self.dim(), real_dims);
    at::Tensor p = self.permute(perm);
    at::Tensor in = p.is_contiguous() ? p : p.contiguous();
    std::vector<int64_t> half = in.sizes().vec();
    half.back() = n / 2 + 1;
    at::Tensor w = at::empty(half, copts);
    if (fft::execute(keyFor(in, static_cast<int>(real_dims.size()), Kind::kR2C, false), bufferOf(w),
                     bufferOf(in))) {
      out = unpermute(w, perm);
      if (!others.empty()) out = c2cOver(out, others, /*inverse=*/false, /*owned=*/true);
    } else {
      out = c2cOver(complexify(self), dims, /*inverse=*/false, /*owned=*/true)
                .narrow(last, 0, n / 2 + 1);
    }
  }
  out = withStrides(out, meta_strides);
  normalize(out, normalization, signalNumel(self.sizes(), dims));
  return out;
}

at::Tensor fftC2R(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                  c10::SymInt last_dim_size_sym) {
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input tensor, but got ",
              self.scalar_type());
  TORCH_CHECK(!dim.empty(), "_fft_c2r expects at least one dim");
  checkNormalization(normalization);
  checkDtypeSupported(self.scalar_type(), self.device().index());
  const int64_t n = last_dim_size_sym.expect_int();
  TORCH_CHECK(n >= 1, "Invalid number of data points (", n, ") specified");
  const Dims dims = wrapDims(dim, self.dim());
  const int64_t last = dims.back();
  std::vector<int64_t> out_sizes = self.sizes().vec();
  out_sizes[last] = n;
  const auto ropts = self.options().dtype(c10::toRealValueType(self.scalar_type()));
  if (self.numel() == 0)
    return at::empty_strided(out_sizes, c2rMetaStrides(self, dims, out_sizes), ropts);

  // The half spectrum the real transform reads: n/2+1 bins, trimmed or zero-padded.
  const int64_t half = n / 2 + 1;
  bool owned = false;
  at::Tensor x = resolveBits(self, owned);
  if (self.size(last) > half) {
    x = x.narrow(last, 0, half);
  } else if (self.size(last) < half) {
    std::vector<int64_t> padded = self.sizes().vec();
    padded[last] = half;
    x = at::empty(padded, self.options());
    at::view_as_real(x).zero_();
    x.narrow(last, 0, self.size(last)).copy_(resolveBits(self, owned));
    owned = true;
  }
  Dims others(dims.begin(), dims.end() - 1);
  others.erase(
      std::remove_if(others.begin(), others.end(), [&](int64_t d) { return self.size(d) == 1; }),
      others.end());
  at::Tensor out;
  if (n == 1) {
    // One real output per signal: the real part of the inverse transform over the other dims.
    at::Tensor c = c2cOver(x, others, /*inverse=*/true, owned);
    out = at::empty(out_sizes, ropts);
    out.copy_(at::view_as_real(c).select(-1, 0));
  } else {
    const size_t take = std::min<size_t>(2, others.size());
    Dims real_dims(others.end() - take, others.end());
    real_dims.push_back(last);
    others.resize(others.size() - take);
    if (!others.empty()) {
      x = c2cOver(x, others, /*inverse=*/true, owned);
      owned = true;
    }
    const Dims perm = permToEnd(self.dim(), real_dims);
    at::Tensor p = x.permute(perm);
    // The complex-to-real pass overwrites its input.
    at::Tensor w = owned && p.is_contiguous() ? p : denseCopy(p);
    std::vector<int64_t> real_sizes = w.sizes().vec();
    real_sizes.back() = n;
    at::Tensor r = at::empty(real_sizes, ropts);
    if (fft::execute(keyFor(r, static_cast<int>(real_dims.size()), Kind::kC2R, true), bufferOf(w),
                     bufferOf(r))) {
      out = unpermute(r, perm);
    } else {
      // Inverse c2c over the other dims, then along `last` on the Hermitian-completed spectrum.
      Dims rest(real_dims.begin(), real_dims.end() - 1);
      at::Tensor h = rest.empty() ? x : c2cOver(x, rest, /*inverse=*/true, owned);
      at::Tensor c = c2cOver(hermitianFull(h, last, n), {last}, /*inverse=*/true, /*owned=*/true);
      out = at::empty(out_sizes, ropts);
      out.copy_(at::view_as_real(c).select(-1, 0));
    }
  }
  // The layout CPU and the meta function give (compiled graphs assert it).
  out = withStrides(out, c2rMetaStrides(self, dims, out_sizes));
  normalize(out, normalization, signalNumel(out_sizes, dims));
  return out;
}

at::Tensor& intoOut(const at::Tensor& result, at::Tensor& out, const char* op) {
  TORCH_CHECK(out.scalar_type() == result.scalar_type(), op, ": expected out to have dtype ",
              result.scalar_type(), " but got ", out.scalar_type());
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

at::Tensor& fftC2COut(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization,
                      bool forward, at::Tensor& out) {
  return intoOut(fftC2C(self, dim, normalization, forward), out, "_fft_c2c.out");
}
at::Tensor& fftR2COut(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                      bool onesided, at::Tensor& out) {
  return intoOut(fftR2C(self, dim, normalization, onesided), out, "_fft_r2c.out");
}
at::Tensor& fftC2ROut(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                      c10::SymInt last_dim_size, at::Tensor& out) {
  return intoOut(fftC2R(self, dim, normalization, std::move(last_dim_size)), out, "_fft_c2r.out");
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fft_c2c", TORCH_FN(fftC2C));
  m.impl("_fft_c2c.out", TORCH_FN(fftC2COut));
  m.impl("_fft_c2r", TORCH_FN(fftC2R));
  m.impl("_fft_c2r.out", TORCH_FN(fftC2ROut));
  m.impl("_fft_r2c", TORCH_FN(fftR2C));
  m.impl("_fft_r2c.out", TORCH_FN(fftR2COut));
}

}  // namespace torch_ocl::aten
