// uniform_ and normal_ drawn from the device's Philox generator: element i of a call uses
// counter (offset, i), so a seed gives the same numbers on every OpenCL device and every run.
#include <ATen/ATen.h>
#include <ATen/core/DistributionsHelper.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/ops.h"
#include "integration/generator.h"

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

at::Tensor& draw(at::Tensor& self, Dist dist, double p0, double p1,
                 std::optional<at::Generator> gen) {
  const c10::ScalarType t = self.scalar_type();
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
  auto* g = at::get_generator_or_default<OclGeneratorImpl>(gen, defaultGenerator(idx));
  std::pair<uint64_t, uint64_t> so;
  {
    std::lock_guard<std::mutex> lock(g->mutex_);
    so = g->philoxEngineInputs(4);  // one counter block per element
  }
  cl_program prog = randomProgram(idx, t);
  rt::Device& dev = device(idx);
  rt::BufferRef b = bufferOf(self);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, dist == Dist::kUniform ? "uniform_k" : "normal_k");
  const cl_ulong seed = so.first, offset = so.second;
  const cl_long n = self.numel();
  if (isDouble(t)) {
    setArgs(k, b, n, seed, offset, static_cast<cl_double>(p0), static_cast<cl_double>(p1));
  } else {
    setArgs(k, b, n, seed, offset, static_cast<cl_float>(p0), static_cast<cl_float>(p1));
  }
  launch1D(dev, currentQueue(idx), k, n);
  OCL_CATCH
  return self;
}

}  // namespace

at::Tensor& uniform(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  return draw(self, Dist::kUniform, from, to, std::move(gen));
}

at::Tensor& normal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return draw(self, Dist::kNormal, mean, std, std::move(gen));
}

}  // namespace torch_ocl::aten
