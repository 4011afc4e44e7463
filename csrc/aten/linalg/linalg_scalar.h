// Programs of the linear-algebra kernel files written once for real and complex matrices over
// kernels/linalg_scalar.cl's scalar layer (linalg_small.cl, linalg_ldl.cl).
#pragma once

#include <c10/core/ScalarType.h>

#include "aten/launch.h"

namespace torch_ocl::aten {

// `file`'s program for dtype t: real floating dtypes with nn_common's type macros, complex ones
// over CT / CR and kernels/complex.cl; one cache family for both (the dtype tells them apart).
cl_program linalgScalarProgram(c10::DeviceIndex idx, const void* family, const char* file,
                               c10::ScalarType t);

}  // namespace torch_ocl::aten
