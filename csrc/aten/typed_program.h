// Hand-written programs (csrc/kernels/<file>) for any floating dtype: the source is prefixed with
// ST (storage type), ACC (accumulation type: double for double, float otherwise), LD(p, i)
// (element i of p as ACC) and STORE(p, i, v), so one kernel text serves float, double, half and
// bfloat16 (half and bfloat16 are storage types with float arithmetic).
#pragma once

#include <string>

#include "aten/cl_types.h"
#include "aten/launch.h"

namespace torch_ocl::aten {

// The ST, ACC, LD and STORE definitions for dtype t.
inline std::string typedDefs(c10::ScalarType t) {
  const std::string acc = t == c10::kDouble ? "double" : "float";
  return std::string("#define ST ") + clStorageType(t) + "\n#define ACC " + acc +
         "\n#define LD(p, i) ((ACC)(" + loadExpr(t, "(p)", "(i)") + "))\n#define STORE(p, i, v) " +
         storeStmt(t, "(p)", "(i)", "(v)") + "\n";
}

inline cl_program typedProgram(c10::DeviceIndex idx, const void* family, const char* file,
                               c10::ScalarType t) {
  return programs(idx).get({family, dtypeCode(t)}, [&] {
    return rt::ProgramSource{std::string(file) + "<" + c10::toString(t) + ">",
                             withPrelude(typedDefs(t) + kernels::source(file)), ""};
  });
}

}  // namespace torch_ocl::aten
