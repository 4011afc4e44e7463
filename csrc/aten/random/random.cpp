// Random ops drawn from the device's Philox generator (uniform_, normal_ and normal with tensor
// parameters, bernoulli_, native_dropout, random_, exponential_, cauchy_, log_normal_,
// geometric_): element i of a call uses counter (offset, i), so a seed gives the same numbers on
// every OpenCL device and every run.
#include <ATen/ATen.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/DistributionTemplates.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/ops.h"
#include "aten/random/random_program.h"
#include "integration/generator.h"

#include <cmath>
#include <functional>
#include <mutex>

namespace torch_ocl::aten {
namespace {

char kRandomFamily;

enum class Dist : uint64_t { kUniform = 0, kNormal = 1 };

bool isDouble(c10::ScalarType t) {
  return t == c10::kDouble;
}

cl_program randomProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kRandomFamily, dtypeCode(t)}, [&] {
    const bool dbl = isDouble(t);
    const std::string real = dbl ? "double" : "float";
    const std::string st = clStorageType(t);
    std::string body;
    // Uniform in [a, b): 24 random bits for float/half/bf16, 53 for double.
    body +=
        "__kernel void uniform_k(__global char* db, ulong doff, long n, ulong seed,\n"
        "                        ulong offset, " +
        real + " a, " + real +
        " b) {\n"
        "  const long i = get_global_id(0);\n  if (i >= n) return;\n"
        "  const uint4 r = ocl_philox_at(seed, offset, i);\n";
    if (dbl) {
      body += "  const double u = (double)(((ulong)r.x << 21) ^ (r.y >> 11)) * 0x1.0p-53;\n";
    } else {
      body += "  const float u = ocl_uniform_float(r.x);\n";
    }
    body += "  " + real +
            " v = a + (b - a) * u;\n"
            "  if (v >= b) v = a;  // rounding can reach b; keep the interval half-open\n"
            "  __global " +
            st + "* d = (__global " + st + "*)(db + doff);\n  " + storeStmt(t, "d", "i", "v") +
            "\n}\n";
    // Normal by Box-Muller on two uniforms of the same counter block.
    body +=
        "__kernel void normal_k(__global char* db, ulong doff, long n, ulong seed,\n"
        "                       ulong offset, " +
        real + " mean, " + real +
        " stdv) {\n"
        "  const long i = get_global_id(0);\n  if (i >= n) return;\n"
        "  const uint4 r = ocl_philox_at(seed, offset, i);\n";
    if (dbl) {
      body +=
          "  const double u1 = ((double)(((ulong)r.x << 21) ^ (r.y >> 11)) + 1.0) * 0x1.0p-53;\n"
          "  const double u2 = (double)(((ulong)r.z << 21) ^ (r.w >> 11)) * 0x1.0p-53;\n"
          "  const double z = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);\n";
    } else {
      body +=
          "  const float u1 = ((float)(r.x >> 8) + 1.0f) * (1.0f / 16777216.0f);\n"
          "  const float u2 = ocl_uniform_float(r.y);\n"
          "  const float z = sqrt(-2.0f * log(u1)) * cospi(2.0f * u2);\n";
    }
    body += "  __global " + st + "* d = (__global " + st + "*)(db + doff);\n  " +
            storeStmt(t, "d", "i", "mean + stdv * z") + "\n}\n";
    return rt::ProgramSource{std::string("random<") + c10::toString(t) + ">", withPrelude(body),
                             ""};
  });
}

void setReal(cl_kernel k, cl_uint& a, bool dbl, double v) {
  if (dbl)
    setArg(k, a, static_cast<cl_double>(v));
  else
    setArg(k, a, static_cast<cl_float>(v));
}

at::Tensor& draw(at::Tensor& self, Dist dist, double p0, double p1,
                 std::optional<at::Generator> gen) {
  const c10::ScalarType t = self.scalar_type();
  if (c10::isComplexType(t)) {
    // As CPU: the real and imaginary parts drawn as reals, a normal's with half the variance.
    at::Tensor parts = at::view_as_real(self);
    draw(parts, dist, p0, dist == Dist::kNormal ? p1 / std::sqrt(2.0) : p1, std::move(gen));
    return self;
  }
  TORCH_CHECK(at::isFloatingType(t), dist == Dist::kUniform ? "uniform_" : "normal_",
              " expects a floating point tensor on ocl, got ", t);
  if (self.numel() == 0) return self;
  if (!self.is_contiguous()) {
    at::Tensor tmp = at::empty_like(self, at::MemoryFormat::Contiguous);
    draw(tmp, dist, p0, p1, gen);
    self.copy_(tmp);
    return self;
  }
  const c10::DeviceIndex idx = self.device().index();
  checkDtypeSupported(t, idx);
  const PhiloxDraw so = philoxDraw(std::move(gen), idx);  // one counter block per element
  cl_program prog = randomProgram(idx, t);
  rt::Device& dev = device(idx);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, dist == Dist::kUniform ? "uniform_k" : "normal_k");
  const cl_long n = self.numel();
  cl_uint a = 0;
  setArg(k, a, bufferOf(self));
  setArg(k, a, n);
  so.setArgs(k, a);
  setReal(k, a, isDouble(t), p0);
  setReal(k, a, isDouble(t), p1);
  launch1D(dev, currentQueue(idx), k, n);
  OCL_CATCH
  return self;
}

char kRandomExtraFamily;

// Runs fill(contiguous tensor) on self, through a contiguous temporary when self is strided.
template <typename F>
at::Tensor& fillContiguous(at::Tensor& self, F&& fill) {
  if (self.numel() == 0) return self;
  checkDtypeSupported(self.scalar_type(), self.device().index());
  if (self.is_contiguous()) {
    fill(self);
    return self;
  }
  at::Tensor tmp = at::empty_like(self, at::MemoryFormat::Contiguous);
  fill(tmp);
  self.copy_(tmp);
  return self;
}

bool randomDtype(c10::ScalarType t) {
  return at::isFloatingType(t) || at::isIntegralType(t, /*includeBool=*/true);
}

// A kernel of random.cl that takes (d, n, seed, offset, extra args...) over contiguous d.
void launchSimple(const at::Tensor& d, const char* kernel, std::optional<at::Generator> gen,
                  const std::function<void(cl_kernel, cl_uint&)>& extra) {
  const c10::DeviceIndex idx = d.device().index();
  const PhiloxDraw so = philoxDraw(std::move(gen), idx);
  cl_program prog = randomExtraProgram(idx, d.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, kernel);
  cl_uint a = 0;
  setArg(k, a, bufferOf(d));
  setArg(k, a, static_cast<cl_long>(d.numel()));
  so.setArgs(k, a);
  extra(k, a);
  launch1D(device(idx), currentQueue(idx), k, d.numel());
  OCL_CATCH
}

void fillRandomRange(at::Tensor& self, uint64_t range, int64_t base, bool full,
                     std::optional<at::Generator> gen) {
  TORCH_CHECK(randomDtype(self.scalar_type()), "random_ is not implemented for ",
              self.scalar_type(), " on ocl");
  fillContiguous(self, [&](const at::Tensor& d) {
    launchSimple(d, "random_k", gen, [&](cl_kernel k, cl_uint& a) {
      setArg(k, a, static_cast<cl_ulong>(range));
      setArg(k, a, static_cast<cl_long>(base));
      setArg(k, a, static_cast<cl_int>(full));
    });
  });
}

// Kernels for ATen's random_ templates (DistributionTemplates.h), which do CPU's checks.
template <typename RNG>
struct RandomFromToKernel {
  void operator()(at::TensorIteratorBase& iter, uint64_t range, int64_t base,
                  std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    fillRandomRange(self, range, base, false, std::move(gen));
  }
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    fillRandomRange(self, 0, 0, true, std::move(gen));
  }
};

// random_(): [0, 2^digits] for floating types, [0, max] for integers, {0, 1} for bool.
template <typename RNG>
struct RandomKernel {
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    const c10::ScalarType t = self.scalar_type();
    uint64_t range = 0;
    switch (t) {
      case c10::kDouble:
        range = (uint64_t{1} << 53) + 1;
        break;
      case c10::kFloat:
        range = (uint64_t{1} << 24) + 1;
        break;
      case c10::kHalf:
        range = (uint64_t{1} << 11) + 1;
        break;
      case c10::kBFloat16:
        range = (uint64_t{1} << 8) + 1;
        break;
      case c10::kBool:
        range = 2;
        break;
      case c10::kByte:
        range = 256;
        break;
      case c10::kChar:
        range = 128;
        break;
      case c10::kShort:
        range = 32768;
        break;
      case c10::kInt:
        range = uint64_t{1} << 31;
        break;
      case c10::kLong:
        range = uint64_t{1} << 63;
        break;
      default:
        TORCH_CHECK(false, "random_ is not implemented for ", t, " on ocl");
    }
    fillRandomRange(self, range, 0, false, std::move(gen));
  }
};

at::Tensor& bernoulliScalarFill(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(randomDtype(self.scalar_type()), "bernoulli_ is not implemented for ",
              self.scalar_type(), " on ocl");
  return fillContiguous(self, [&](const at::Tensor& d) {
    launchSimple(d, "bernoulli_scalar_k", gen,
                 [&](cl_kernel k, cl_uint& a) { setReal(k, a, isDouble(d.scalar_type()), p); });
  });
}

template <typename RNG>
struct BernoulliScalarKernel {
  void operator()(const at::TensorBase& self, double p, std::optional<at::Generator> gen) {
    at::Tensor t(self);
    bernoulliScalarFill(t, p, std::move(gen));
  }
};

template <typename RNG>
struct BernoulliTensorKernel {
  void operator()(const at::TensorBase& self_base, const at::TensorBase& p_base,
                  std::optional<at::Generator> gen) {
    at::Tensor self(self_base);
    const at::Tensor p_in(p_base);
    TORCH_CHECK(randomDtype(self.scalar_type()), "bernoulli_ is not implemented for ",
                self.scalar_type(), " on ocl");
    TORCH_CHECK(at::isFloatingType(p_in.scalar_type()),
                "bernoulli_: expected a floating point probability tensor, got ",
                p_in.scalar_type());
    checkSameDevice({self, p_in});
    const c10::ScalarType real = isDouble(self.scalar_type()) ? c10::kDouble : c10::kFloat;
    const at::Tensor p = p_in.expand(self.sizes()).to(real).contiguous();
    fillContiguous(self, [&](const at::Tensor& d) {
      const c10::DeviceIndex idx = d.device().index();
      const PhiloxDraw so = philoxDraw(gen, idx);
      cl_program prog = randomExtraProgram(idx, d.scalar_type());
      OCL_TRY
      cl_kernel k = programs(idx).kernel(prog, "bernoulli_tensor_k");
      cl_uint a = 0;
      setArg(k, a, bufferOf(d));
      setArg(k, a, bufferOf(p));
      setArg(k, a, static_cast<cl_long>(d.numel()));
      so.setArgs(k, a);
      launch1D(device(idx), currentQueue(idx), k, d.numel());
      OCL_CATCH
    });
  }
};

template <typename RNG>
struct ExponentialKernel {
  void operator()(at::TensorIteratorBase& iter, double lambda, std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    TORCH_CHECK(at::isFloatingType(self.scalar_type()),
                "exponential_ expects a floating point tensor on ocl, got ", self.scalar_type());
    fillContiguous(self, [&](const at::Tensor& d) {
      launchSimple(d, "exponential_k", gen, [&](cl_kernel k, cl_uint& a) {
        setReal(k, a, isDouble(d.scalar_type()), lambda);
      });
    });
  }
};

// cauchy_, log_normal_ and geometric_ (ATen's templates make CPU's checks): the transformations
// of TransformationHelper.h applied to one counter block per element.
template <typename RNG>
struct CauchyKernel {
  void operator()(at::TensorIteratorBase& iter, double median, double sigma,
                  std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    fillContiguous(self, [&](const at::Tensor& d) {
      launchSimple(d, "cauchy_k", gen, [&](cl_kernel k, cl_uint& a) {
        setReal(k, a, isDouble(d.scalar_type()), median);
        setReal(k, a, isDouble(d.scalar_type()), sigma);
      });
    });
  }
};

template <typename RNG>
struct LogNormalKernel {
  void operator()(at::TensorIteratorBase& iter, double mean, double std,
                  std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    TORCH_CHECK(at::isFloatingType(self.scalar_type()),
                "log_normal_ expects a floating point tensor on ocl, got ", self.scalar_type());
    fillContiguous(self, [&](const at::Tensor& d) {
      launchSimple(d, "log_normal_k", gen, [&](cl_kernel k, cl_uint& a) {
        setReal(k, a, isDouble(d.scalar_type()), mean);
        setReal(k, a, isDouble(d.scalar_type()), std);
      });
    });
  }
};

template <typename RNG>
struct GeometricKernel {
  void operator()(at::TensorIteratorBase& iter, double p, std::optional<at::Generator> gen) {
    at::Tensor self(iter.tensor_base(0));
    const c10::ScalarType t = self.scalar_type();
    // CPU's dispatch: every integer and floating type except bool.
    TORCH_CHECK(randomDtype(t) && t != c10::kBool, "\"geometric_cpu\" not implemented for '",
                c10::toString(t), "'");
    fillContiguous(self, [&](const at::Tensor& d) {
      launchSimple(d, "geometric_k", gen, [&](cl_kernel k, cl_uint& a) {
        setReal(k, a, isDouble(d.scalar_type()), 1.0 / std::log1p(-p));
      });
    });
  }
};

// normal with tensor mean and/or std: ATen's templates (CPU's shape, broadcast and std checks)
// over normal_ and native mul_/add_.
template <typename RNG>
struct NormalKernel {
  void operator()(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
    draw(self, Dist::kNormal, mean, std, std::move(gen));
  }
};

at::Tensor& randomFull(at::Tensor& self, std::optional<at::Generator> gen) {
  return at::native::templates::random_impl<RandomKernel, OclGeneratorImpl>(self, std::move(gen));
}
at::Tensor& randomFrom(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                       std::optional<at::Generator> gen) {
  return at::native::templates::random_from_to_impl<RandomFromToKernel, OclGeneratorImpl>(
      self, from, to, std::move(gen));
}
at::Tensor& randomTo(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return randomFrom(self, 0, to, std::move(gen));
}
at::Tensor& bernoulliFloat(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return at::native::templates::bernoulli_impl_<BernoulliScalarKernel, OclGeneratorImpl>(
      self, p, std::move(gen));
}
at::Tensor& bernoulliTensor(at::Tensor& self, const at::Tensor& p,
                            std::optional<at::Generator> gen) {
  return at::native::templates::bernoulli_impl_<BernoulliTensorKernel, OclGeneratorImpl>(
      self, p, std::move(gen));
}
at::Tensor& bernoulliOut(const at::Tensor& self, std::optional<at::Generator> gen,
                         at::Tensor& out) {
  return at::native::templates::bernoulli_out_impl<BernoulliTensorKernel, OclGeneratorImpl>(
      out, self, std::move(gen));
}
at::Tensor& exponential(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
  return at::native::templates::exponential_impl_<ExponentialKernel, OclGeneratorImpl>(
      self, lambda, std::move(gen));
}

at::Tensor& cauchy(at::Tensor& self, double median, double sigma,
                   std::optional<at::Generator> gen) {
  return at::native::templates::cauchy_impl_<CauchyKernel, OclGeneratorImpl>(self, median, sigma,
                                                                             std::move(gen));
}
at::Tensor& logNormal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  return at::native::templates::log_normal_impl_<LogNormalKernel, OclGeneratorImpl>(self, mean, std,
                                                                                    std::move(gen));
}
at::Tensor& geometric(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return at::native::templates::geometric_impl_<GeometricKernel, OclGeneratorImpl>(self, p,
                                                                                   std::move(gen));
}

using at::native::templates::normal_impl;
using at::native::templates::normal_out_impl;
at::Tensor normalTensorFloat(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  return normal_impl<NormalKernel, OclGeneratorImpl>(mean, std, std::move(gen));
}
at::Tensor normalFloatTensor(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  return normal_impl<NormalKernel, OclGeneratorImpl>(mean, std, std::move(gen));
}
at::Tensor normalTensorTensor(const at::Tensor& mean, const at::Tensor& std,
                              std::optional<at::Generator> gen) {
  return normal_impl<NormalKernel, OclGeneratorImpl>(mean, std, std::move(gen));
}
at::Tensor& normalTensorFloatOut(const at::Tensor& mean, double std,
                                 std::optional<at::Generator> gen, at::Tensor& out) {
  return normal_out_impl<NormalKernel, OclGeneratorImpl>(out, mean, std, std::move(gen));
}
at::Tensor& normalFloatTensorOut(double mean, const at::Tensor& std,
                                 std::optional<at::Generator> gen, at::Tensor& out) {
  return normal_out_impl<NormalKernel, OclGeneratorImpl>(out, mean, std, std::move(gen));
}
at::Tensor& normalTensorTensorOut(const at::Tensor& mean, const at::Tensor& std,
                                  std::optional<at::Generator> gen, at::Tensor& out) {
  return normal_out_impl<NormalKernel, OclGeneratorImpl>(out, mean, std, std::move(gen));
}

bool dropoutDtype(c10::ScalarType t) {
  return t == c10::kFloat || t == c10::kHalf || t == c10::kBFloat16 || t == c10::kDouble;
}

std::tuple<at::Tensor, at::Tensor> nativeDropout(const at::Tensor& input, double p,
                                                 std::optional<bool> train) {
  if (input.numel() == 0) return {input, at::empty_like(input)};
  if (train.has_value() && !*train) {
    return {input.clone(), at::ones_like(input, input.options().dtype(c10::kBool))};
  }
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (!dropoutDtype(input.scalar_type())) {
    auto r = runFallback("aten::native_dropout", "", {input, p, train});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  const c10::DeviceIndex idx = input.device().index();
  checkDtypeSupported(input.scalar_type(), idx);
  const at::Tensor x = input.contiguous();
  at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
  at::Tensor mask = at::empty_like(x, x.options().dtype(c10::kBool), at::MemoryFormat::Contiguous);
  const double keep = 1.0 - p;
  const double scale = keep == 0 ? 0.0 : 1.0 / keep;
  const PhiloxDraw so = philoxDraw(std::nullopt, idx);
  const bool dbl = isDouble(x.scalar_type());
  cl_program prog = randomExtraProgram(idx, x.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "dropout_k");
  cl_uint a = 0;
  setArg(k, a, bufferOf(out));
  setArg(k, a, bufferOf(mask));
  setArg(k, a, bufferOf(x));
  setArg(k, a, static_cast<cl_long>(x.numel()));
  so.setArgs(k, a);
  setReal(k, a, dbl, keep);
  setReal(k, a, dbl, scale);
  launch1D(device(idx), currentQueue(idx), k, x.numel());
  OCL_CATCH
  return {out, mask};
}

at::Tensor nativeDropoutBackward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "Mask should be Bool Scalar Type",
              mask.scalar_type());
  checkSameDevice({grad, mask});
  // Other dtypes and broadcast masks: CPU's own definition, grad * mask * scale, in native ops.
  if (!dropoutDtype(grad.scalar_type()) || grad.sizes() != mask.sizes()) return grad * mask * scale;
  const c10::DeviceIndex idx = grad.device().index();
  checkDtypeSupported(grad.scalar_type(), idx);
  at::Tensor out = at::empty_like(grad, at::MemoryFormat::Contiguous);
  if (grad.numel() == 0) return out;
  const at::Tensor g = grad.contiguous(), m = mask.contiguous();
  cl_program prog = randomExtraProgram(idx, g.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "dropout_bwd_k");
  cl_uint a = 0;
  setArg(k, a, bufferOf(out));
  setArg(k, a, bufferOf(g));
  setArg(k, a, bufferOf(m));
  setArg(k, a, static_cast<cl_long>(g.numel()));
  setReal(k, a, isDouble(g.scalar_type()), scale);
  launch1D(device(idx), currentQueue(idx), k, g.numel());
  OCL_CATCH
  return out;
}

}  // namespace

cl_program randomExtraProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kRandomExtraFamily, dtypeCode(t)}, [&] {
    return rt::ProgramSource{std::string("random_extra<") + c10::toString(t) + ">",
                             withPrelude(randomProgramHeader(t) + kernels::source("random.cl")),
                             ""};
  });
}

at::Tensor& uniform(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  return draw(self, Dist::kUniform, from, to, std::move(gen));
}

at::Tensor& normal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return draw(self, Dist::kNormal, mean, std, std::move(gen));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("bernoulli.out", TORCH_FN(bernoulliOut));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulliTensor));
  m.impl("bernoulli_.float", TORCH_FN(bernoulliFloat));
  m.impl("cauchy_", TORCH_FN(cauchy));
  m.impl("exponential_", TORCH_FN(exponential));
  m.impl("geometric_", TORCH_FN(geometric));
  m.impl("log_normal_", TORCH_FN(logNormal));
  m.impl("native_dropout", TORCH_FN(nativeDropout));
  m.impl("native_dropout_backward", TORCH_FN(nativeDropoutBackward));
  m.impl("normal.Tensor_Tensor", TORCH_FN(normalTensorTensor));
  m.impl("normal.Tensor_Tensor_out", TORCH_FN(normalTensorTensorOut));
  m.impl("normal.Tensor_float", TORCH_FN(normalTensorFloat));
  m.impl("normal.Tensor_float_out", TORCH_FN(normalTensorFloatOut));
  m.impl("normal.float_Tensor", TORCH_FN(normalFloatTensor));
  m.impl("normal.float_Tensor_out", TORCH_FN(normalFloatTensorOut));
  m.impl("random_", TORCH_FN(randomFull));
  m.impl("random_.from", TORCH_FN(randomFrom));
  m.impl("random_.to", TORCH_FN(randomTo));
}

}  // namespace torch_ocl::aten
