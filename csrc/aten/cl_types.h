// How each ScalarType lives in OpenCL C: its storage type, the type arithmetic runs in, and the
// expressions that load, store and convert it. fp16 without cl_khr_fp16 and bf16 everywhere are
// storage types (ushort) with arithmetic in float; the pointwise generator builds on this.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace torch_ocl::aten {

// Whether the device can hold dtype t (fp64 and complex128 need cl_khr_fp64; no quantized
// types). uint16/32/64 and complex32 are storage dtypes, as CPU's "barebones" support them.
bool isDtypeSupported(c10::ScalarType t, c10::DeviceIndex device);
// uint16, uint32, uint64, complex32: creation, copies and conversions, views, fill_, eq/ne,
// where, isnan (and bitwise ops and mul for the unsigned ones, add/sub and torch.complex for
// complex32), the set CPU's barebones support covers; other kernels refuse them.
bool isStorageOnlyDtype(c10::ScalarType t);
// Throws a clear error for dtypes the device cannot hold (fp64 without cl_khr_fp64, ...), and a
// NotImplementedError naming `op` (CPU's "not implemented for 'UInt64'") for a storage-only dtype
// unless op is one of the few that CPU also runs on it (see isStorageOnlyDtype).
void checkDtypeSupported(c10::ScalarType t, c10::DeviceIndex device, const char* op = nullptr);
// For copies, fill, factories, views and hash_tensor: every dtype the device holds.
void checkStorageDtypeSupported(c10::ScalarType t, c10::DeviceIndex device);

const char* clStorageType(c10::ScalarType t);  // "float", "ushort" (half/bf16), "uchar" (bool)...
const char* clComputeType(c10::ScalarType t);  // "float" for half/bf16, else the storage type
// ocl_exp / ocl_erf / ocl_tanh / ocl_sigmoid / ocl_gelu_erf for OpenCL C type `ct`: the
// vectorisable float forms of prelude.cl for "float", the builtins otherwise (generated kernels
// call these).
std::string mathMacros(const std::string& ct);
// Expression that reads element `idx` of pointer `ptr` (typed as clStorageType) as compute type.
std::string loadExpr(c10::ScalarType t, const std::string& ptr, const std::string& idx);
// Statement that stores compute-typed `value` to element `idx` of `ptr`.
std::string storeStmt(c10::ScalarType t, const std::string& ptr, const std::string& idx,
                      const std::string& value);
// Converts a value of from's compute type to to's compute type with PyTorch's CPU semantics.
std::string convertExpr(c10::ScalarType from, c10::ScalarType to, const std::string& value);
// Small integer code for keys: (dtype) fits in 6 bits.
inline uint64_t dtypeCode(c10::ScalarType t) {
  return static_cast<uint64_t>(t) & 0x3f;
}

}  // namespace torch_ocl::aten
