// Samplers with a variable number of draws per element (_standard_gamma, _sample_dirichlet,
// poisson, binomial), the reparameterised gradients of Gamma and Dirichlet, and RReLU's noise, all
// from the device's Philox generator (kernels/random_dists.cl, kernels/random.cl). Shapes, dtype
// checks and broadcasting follow ATen's CPU kernels (Distributions.cpp, Activation.cpp); the
// arithmetic follows CUDA's: float for float, half and bfloat16, double for double.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/random/random_program.h"

#include <cmath>
#include <limits>

namespace torch_ocl::aten {
namespace {

char kDistFamily;

// Philox blocks (counter values) each element's stream may use before it could meet the next
// call's numbers (random_dists.cl); the generator's offset advances by this much per call. A
// gamma draw needs one or two blocks on average, a Poisson draw below rate 10 about (rate + 1) / 2.
constexpr uint64_t kStreamBlocks = uint64_t{1} << 18;

cl_program distProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kDistFamily, dtypeCode(t)}, [&] {
    return rt::ProgramSource{
        std::string("random_dists<") + c10::toString(t) + ">",
        withPrelude(randomProgramHeader(t) + kernels::source("random_dists.cl")), ""};
  });
}

bool samplerDtype(c10::ScalarType t) {
  return t == c10::kFloat || t == c10::kDouble || t == c10::kHalf || t == c10::kBFloat16;
}

void checkSamplerDtype(c10::ScalarType t, const char* op) {
  TORCH_CHECK(samplerDtype(t), "\"", op, "\" not implemented for '", c10::toString(t), "'");
}

// Smallest positive normal value of t, as a double.
double tinyOf(c10::ScalarType t) {
  switch (t) {
    case c10::kDouble:
      return std::numeric_limits<double>::min();
    case c10::kHalf:
      return static_cast<double>(std::numeric_limits<c10::Half>::min());
    case c10::kBFloat16:
      return static_cast<double>(std::numeric_limits<c10::BFloat16>::min());
    default:
      return static_cast<double>(std::numeric_limits<float>::min());
  }
}

// The largest value of t below 1 (CPU's upper clamp of a Dirichlet sample).
double belowOneOf(c10::ScalarType t) {
  switch (t) {
    case c10::kDouble:
      return std::nextafter(1.0, 0.0);
    case c10::kHalf:
      return 1.0 - std::ldexp(1.0, -11);
    case c10::kBFloat16:
      return 1.0 - std::ldexp(1.0, -8);
    default:
      return static_cast<double>(std::nextafter(1.0f, 0.0f));
  }
}

void setReal(cl_kernel k, cl_uint& a, c10::ScalarType t, double v) {
  if (t == c10::kDouble)
    setArg(k, a, static_cast<cl_double>(v));
  else
    setArg(k, a, static_cast<cl_float>(v));
}

// Output of ATen's CPU kernels: ret of first's sizes, resized by a TensorIterator over the inputs
// (CPU's broadcast, with its warning, and its same-dtype check); inputs returned expanded to it,
// contiguous, on ret's device.
at::Tensor iterOutput(const at::Tensor& first, std::vector<at::Tensor>& inputs) {
  at::Tensor ret = at::empty(first.sizes(), first.options());
  at::TensorIteratorConfig config;
  config.add_output(ret);
  for (const auto& in : inputs) config.add_const_input(in);
  config.build();
  for (auto& in : inputs) in = in.to(ret.device()).expand(ret.sizes()).contiguous();
  return ret;
}

// Runs kernel over out (contiguous) with its buffers first, then n, then (seed, offset) when
// random, then the extra REAL arguments.
void launchDist(const char* kernel, const at::Tensor& out, const std::vector<at::Tensor>& in,
                bool random, std::optional<at::Generator> gen,
                std::initializer_list<double> reals = {}) {
  const c10::DeviceIndex idx = out.device().index();
  const c10::ScalarType t = out.scalar_type();
  checkDtypeSupported(t, idx);
  PhiloxDraw so;
  if (random) so = philoxDraw(std::move(gen), idx, kStreamBlocks);
  cl_program prog = distProgram(idx, t);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, kernel);
  cl_uint a = 0;
  setArg(k, a, bufferOf(out));
  for (const auto& x : in) setArg(k, a, bufferOf(x));
  setArg(k, a, static_cast<cl_long>(out.numel()));
  if (random) so.setArgs(k, a);
  for (double v : reals) setReal(k, a, t, v);
  launch1D(device(idx), currentQueue(idx), k, out.numel());
  OCL_CATCH
}

at::Tensor standardGamma(const at::Tensor& alpha, std::optional<at::Generator> gen) {
  checkSamplerDtype(alpha.scalar_type(), "gamma");
  at::Tensor ret = at::empty(alpha.sizes(), alpha.options());
  if (ret.numel() == 0) return ret;
  launchDist("gamma_k", ret, {alpha.contiguous()}, true, std::move(gen),
             {tinyOf(alpha.scalar_type())});
  return ret;
}

// Normalised gammas, as CPU, but normalised in log space (a softmax of log-gamma samples) so that
// small concentrations do not underflow in float; clamped to [tiny, 1) of the dtype as CPU does.
at::Tensor sampleDirichlet(const at::Tensor& alpha, std::optional<at::Generator> gen) {
  const c10::ScalarType t = alpha.scalar_type();
  checkSamplerDtype(t, "dirichlet");
  if (alpha.numel() == 0) return at::empty(alpha.sizes(), alpha.options());
  const c10::ScalarType real = t == c10::kDouble ? c10::kDouble : c10::kFloat;
  at::Tensor log_gamma = at::empty(alpha.sizes(), alpha.options().dtype(real));
  const at::Tensor a = alpha.contiguous();
  {
    const c10::DeviceIndex idx = a.device().index();
    checkDtypeSupported(t, idx);
    const PhiloxDraw so = philoxDraw(std::move(gen), idx, kStreamBlocks);
    cl_program prog = distProgram(idx, t);
    OCL_TRY
    cl_kernel k = programs(idx).kernel(prog, "log_gamma_k");
    cl_uint arg = 0;
    setArg(k, arg, bufferOf(log_gamma));
    setArg(k, arg, bufferOf(a));
    setArg(k, arg, static_cast<cl_long>(a.numel()));
    so.setArgs(k, arg);
    launch1D(device(idx), currentQueue(idx), k, a.numel());
    OCL_CATCH
  }
  at::Tensor ret = at::softmax(log_gamma, -1).to(t);
  ret.clamp_(tinyOf(t), belowOneOf(t));
  return ret;
}

at::Tensor poisson(const at::Tensor& rate, std::optional<at::Generator> gen) {
  checkSamplerDtype(rate.scalar_type(), "poisson");
  at::Tensor ret = at::empty(rate.sizes(), rate.options());
  if (ret.numel() == 0) return ret;
  // CPU's check, one reduction (NaN fails it too).
  TORCH_CHECK(rate.ge(0).all().item<bool>(),
              "invalid Poisson rate, expected rate to be non-negative");
  launchDist("poisson_k", ret, {rate.contiguous()}, true, std::move(gen));
  return ret;
}

at::Tensor binomial(const at::Tensor& count, const at::Tensor& prob,
                    std::optional<at::Generator> gen) {
  checkSamplerDtype(count.scalar_type(), "binomial");
  std::vector<at::Tensor> in{count, prob};
  at::Tensor ret = iterOutput(count, in);
  if (ret.numel() == 0) return ret;
  launchDist("binomial_k", ret, in, true, std::move(gen));
  return ret;
}

at::Tensor standardGammaGrad(const at::Tensor& self, const at::Tensor& output) {
  checkSamplerDtype(self.scalar_type(), "_standard_gamma_grad");
  std::vector<at::Tensor> in{self, output};
  at::Tensor ret = iterOutput(self, in);
  if (ret.numel() == 0) return ret;
  launchDist("standard_gamma_grad_k", ret, in, false, std::nullopt);
  return ret;
}

at::Tensor dirichletGrad(const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& total) {
  checkSamplerDtype(x.scalar_type(), "_dirichlet_grad");
  std::vector<at::Tensor> in{x, alpha, total};
  at::Tensor ret = iterOutput(x, in);
  if (ret.numel() == 0) return ret;
  launchDist("dirichlet_grad_k", ret, in, false, std::nullopt);
  return ret;
}

// ---- RReLU (Activation.cpp's rrelu_with_noise_out_cpu): in training, negative inputs are scaled
// by a slope drawn uniformly from [lower, upper) and the slope is kept in noise (1 elsewhere) for
// the backward; in evaluation, leaky_relu with the mean slope.
at::Tensor& rreluWithNoiseOut(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                              const at::Scalar& upper, bool training,
                              std::optional<at::Generator> gen, at::Tensor& output) {
  TORCH_CHECK(self.sym_sizes() == noise.sym_sizes(),
              "noise tensor shape must match self tensor shape. Got self.shape = ",
              self.sym_sizes(), " noise.shape = ", noise.sym_sizes());
  if (!training) {
    const double slope = (lower.to<double>() + upper.to<double>()) / 2;
    return at::leaky_relu_out(output, self, slope);
  }
  const c10::ScalarType t = self.scalar_type();
  checkSamplerDtype(t, "rrelu_with_noise_out");
  TORCH_CHECK(noise.scalar_type() == t && output.scalar_type() == t, "expected scalar type ", t,
              " but found ", noise.scalar_type() != t ? noise.scalar_type() : output.scalar_type());
  checkSameDevice({self, noise, output});
  at::native::resize_output(output, self.sizes());
  if (self.numel() == 0) return output;
  const c10::DeviceIndex idx = self.device().index();
  checkDtypeSupported(t, idx);
  const at::Tensor x = self.contiguous();
  at::Tensor out = output.is_contiguous() ? output : at::empty_like(x);
  at::Tensor nz = noise.is_contiguous() ? noise : at::empty_like(x);
  const PhiloxDraw so = philoxDraw(std::move(gen), idx);
  cl_program prog = randomExtraProgram(idx, t);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "rrelu_k");
  cl_uint a = 0;
  setArg(k, a, bufferOf(out));
  setArg(k, a, bufferOf(nz));
  setArg(k, a, bufferOf(x));
  setArg(k, a, static_cast<cl_long>(x.numel()));
  so.setArgs(k, a);
  setReal(k, a, t, lower.to<double>());
  setReal(k, a, t, upper.to<double>());
  launch1D(device(idx), currentQueue(idx), k, x.numel());
  OCL_CATCH
  if (!out.is_same(output)) output.copy_(out);
  if (!nz.is_same(noise)) noise.copy_(nz);
  return output;
}

at::Tensor rreluWithNoise(const at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                          const at::Scalar& upper, bool training,
                          std::optional<at::Generator> gen) {
  at::Tensor output = at::empty_like(self, at::MemoryFormat::Contiguous);
  return rreluWithNoiseOut(self, noise, lower, upper, training, std::move(gen), output);
}

at::Tensor& rreluWithNoiseInplace(at::Tensor& self, at::Tensor& noise, const at::Scalar& lower,
                                  const at::Scalar& upper, bool training,
                                  std::optional<at::Generator> gen) {
  return rreluWithNoiseOut(self, noise, lower, upper, training, std::move(gen), self);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_dirichlet_grad", TORCH_FN(dirichletGrad));
  m.impl("_sample_dirichlet", TORCH_FN(sampleDirichlet));
  m.impl("_standard_gamma", TORCH_FN(standardGamma));
  m.impl("_standard_gamma_grad", TORCH_FN(standardGammaGrad));
  m.impl("binomial", TORCH_FN(binomial));
  m.impl("poisson", TORCH_FN(poisson));
  m.impl("rrelu_with_noise", TORCH_FN(rreluWithNoise));
  m.impl("rrelu_with_noise.out", TORCH_FN(rreluWithNoiseOut));
  m.impl("rrelu_with_noise_", TORCH_FN(rreluWithNoiseInplace));
}

}  // namespace torch_ocl::aten
