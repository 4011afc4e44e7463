#include "aten/linalg/linalg_scalar.h"

#include <string>

#include "aten/cl_types.h"
#include "aten/nn_common.h"
#include "kernels/embedded.h"

namespace torch_ocl::aten {

cl_program linalgScalarProgram(c10::DeviceIndex idx, const void* family, const char* file,
                               c10::ScalarType t) {
  if (!c10::isComplexType(t))
    return nnProgram(idx, family, file, t, kernels::source("linalg_scalar.cl"));
  checkDtypeSupported(t, idx);
  return programs(idx).get({family, dtypeCode(t)}, [&] {
    const std::string real = t == c10::kComplexDouble ? "double" : "float";
    const std::string h = "typedef " + real + "2 CT;\ntypedef " + real + " CR;\n";
    return rt::ProgramSource{
        std::string(file) + "<" + c10::toString(t) + ">",
        withPrelude(h + kernels::source("complex.cl") + "#define OCL_COMPLEX 1\n" +
                    kernels::source("linalg_scalar.cl") + kernels::source(file)),
        ""};
  });
}

}  // namespace torch_ocl::aten
