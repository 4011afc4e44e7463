#include "aten/nn_common.h"

#include "aten/cl_types.h"

namespace torch_ocl::aten {

bool nnFloating(c10::ScalarType t) {
  return t == c10::kFloat || t == c10::kDouble || t == c10::kHalf || t == c10::kBFloat16;
}

c10::ScalarType nnAccType(c10::ScalarType t) {
  return t == c10::kDouble ? c10::kDouble : c10::kFloat;
}

bool nnInteger(c10::ScalarType t) {
  return c10::isIntegralType(t, /*includeBool=*/false);
}

namespace {
// Max kernels start from ACC_LOWEST and let NaN win through ACC_ISNAN, as CPU's do.
const std::string kFloatLimits = "#define ACC_LOWEST (-INFINITY)\n#define ACC_ISNAN(v) isnan(v)\n";

std::string typeMacros(c10::ScalarType t) {
  switch (t) {
    case c10::kHalf:
      return kFloatLimits +
             "#define T ushort\n#define ACC float\n"
             "#define LD(p, i) vload_half((i), (__global const half*)(p))\n"
             "#define ST(p, i, v) vstore_half_rte((v), (i), (__global half*)(p))\n";
    case c10::kBFloat16:
      return kFloatLimits +
             "#define T ushort\n#define ACC float\n"
             "#define LD(p, i) ocl_bf16_to_float((p)[i])\n"
             "#define ST(p, i, v) ((p)[i] = ocl_float_to_bf16(v))\n";
    case c10::kFloat:
    case c10::kDouble: {
      const std::string ty = t == c10::kDouble ? "double" : "float";
      return kFloatLimits + "#define T " + ty + "\n#define ACC " + ty +
             "\n#define LD(p, i) ((ACC)(p)[i])\n#define ST(p, i, v) ((p)[i] = (T)(v))\n";
    }
    default: {  // integers compute exactly in their own type; nothing is NaN
      const std::string ty = clStorageType(t);
      const char* lowest = t == c10::kByte    ? "0"
                           : t == c10::kChar  ? "(-128)"
                           : t == c10::kShort ? "(-32768)"
                           : t == c10::kInt   ? "(-2147483647 - 1)"
                                              : "(-9223372036854775807L - 1)";
      return "#define T " + ty + "\n#define ACC " + ty + "\n#define ACC_LOWEST " + lowest +
             "\n#define ACC_ISNAN(v) 0\n#define LD(p, i) ((p)[i])\n"
             "#define ST(p, i, v) ((p)[i] = (T)(v))\n";
    }
  }
}
}  // namespace

cl_program nnProgram(c10::DeviceIndex idx, const void* family, const char* file,
                     c10::ScalarType t) {
  return nnProgram(idx, family, file, t, "");
}

cl_program nnProgram(c10::DeviceIndex idx, const void* family, const char* file, c10::ScalarType t,
                     const std::string& extra) {
  TORCH_INTERNAL_ASSERT(nnFloating(t) || nnInteger(t));
  checkDtypeSupported(t, idx);
  return programs(idx).get({family, dtypeCode(t)}, [&] {
    return rt::ProgramSource{std::string(file) + "<" + c10::toString(t) + ">",
                             withPrelude(typeMacros(t) + extra + kernels::source(file)), ""};
  });
}

void launchRowGroups(c10::DeviceIndex idx, cl_kernel kernel, int64_t rows) {
  if (rows <= 0) return;
  rt::Device& dev = device(idx);
  TORCH_CHECK(dev.info().max_work_group_size >= kRowLocal,
              "torch-ocl: the device's work groups are smaller than ", kRowLocal);
  const size_t local = kRowLocal, global = static_cast<size_t>(rows) * kRowLocal;
  launchND(dev, currentQueue(idx), kernel, global, local);
}

}  // namespace torch_ocl::aten
