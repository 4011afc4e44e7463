// Shared by the nn op families (conv, pool, upsample, norm): programs built for every floating
// dtype from one kernel source, and a work-group-per-row launch.
//
// Kernel sources are written against four macros the host defines per dtype: T (storage type),
// ACC (arithmetic type: float for half/bfloat16, else T), LD(p, i) (element i of a T pointer, as
// ACC) and ST(p, i, v) (store ACC v as T, rounding to nearest even).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "aten/launch.h"

namespace torch_ocl::aten {

// float, double, half, bfloat16.
bool nnFloating(c10::ScalarType t);
// int8..int64 and uint8 (not bool): the kernels that also take integers (max pooling).
bool nnInteger(c10::ScalarType t);
// The ACC dtype of t (float for half/bfloat16).
c10::ScalarType nnAccType(c10::ScalarType t);
cl_program nnProgram(c10::DeviceIndex idx, const void* family, const char* file, c10::ScalarType t);
// The same with `extra` OpenCL C placed before the file's source (e.g. deviceCheckSource()).
cl_program nnProgram(c10::DeviceIndex idx, const void* family, const char* file, c10::ScalarType t,
                     const std::string& extra);
// One work group of kRowLocal items per row (kernels reduce in __local memory of that size).
constexpr size_t kRowLocal = 256;
void launchRowGroups(c10::DeviceIndex idx, cl_kernel kernel, int64_t rows);
// An empty tensor has no buffer to bind; kernels that get n == 0 return before touching it.
inline rt::BufferRef bufferOrAny(const at::Tensor& t, const at::Tensor& any) {
  return t.defined() && t.numel() > 0 ? bufferOf(t) : bufferOf(any);
}

}  // namespace torch_ocl::aten
