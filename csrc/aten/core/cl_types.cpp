#include "aten/cl_types.h"

#include <c10/util/Exception.h>

#include <string>

#include "integration/state.h"

namespace torch_ocl::aten {

using c10::ScalarType;

bool isDtypeSupported(ScalarType t, c10::DeviceIndex index) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float:
    case ScalarType::ComplexFloat:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
    case ScalarType::ComplexHalf:
      return true;
    case ScalarType::Double:
    case ScalarType::ComplexDouble:
      return device(index).info().fp64;
    default:
      return false;
  }
}

bool isStorageOnlyDtype(ScalarType t) {
  return t == ScalarType::UInt16 || t == ScalarType::UInt32 || t == ScalarType::UInt64 ||
         t == ScalarType::ComplexHalf;
}

bool storageOnlyOpAllowed(ScalarType t, const char* op) {
  if (op == nullptr) return false;
  const std::string o(op);
  if (o == "eq" || o == "ne" || o == "where" || o == "isnan") return true;
  // complex32: what CPU runs on it in complex<float> arithmetic with one rounding to half.
  if (t == ScalarType::ComplexHalf) return o == "complex" || o == "add" || o == "sub";
  // CPU's barebones unsigned types also have the bitwise ops and mul (AT_BAREBONES_UNSIGNED_TYPES).
  return o == "bitwise_and" || o == "bitwise_or" || o == "bitwise_xor" || o == "mul";
}

void checkStorageDtypeSupported(ScalarType t, c10::DeviceIndex index) {
  if (isDtypeSupported(t, index)) return;
  checkDtypeSupported(t, index);
}

void checkDtypeSupported(ScalarType t, c10::DeviceIndex index, const char* op) {
  if (isStorageOnlyDtype(t)) {
    if (storageOnlyOpAllowed(t, op)) return;
    TORCH_CHECK_NOT_IMPLEMENTED(
        false, "\"", op ? op : "this operation", "\" not implemented for '", c10::toString(t),
        "' on the ocl device: like CPU PyTorch, ocl keeps ", t,
        " as a storage dtype (creation, copies and conversions, views, fill_, eq/ne, where, isnan",
        t == ScalarType::ComplexHalf ? ", add/sub, torch.complex" : ", bitwise ops, mul", ")");
  }
  if (isDtypeSupported(t, index)) return;
  if (t == ScalarType::Double || t == ScalarType::ComplexDouble) {
    const auto& info = device(index).info();
    TORCH_CHECK_TYPE(false, "ocl:", static_cast<int>(index), " (", info.name, ") does not support ",
                     t,
                     ": the device lacks cl_khr_fp64. Convert to float32 explicitly "
                     "(torch-ocl never downcasts silently).");
  }
  TORCH_CHECK_TYPE(false, "dtype ", t, " is not supported on the ocl device");
}

const char* clStorageType(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::Byte:
      return "uchar";
    case ScalarType::Char:
      return "char";
    case ScalarType::Short:
      return "short";
    case ScalarType::Int:
      return "int";
    case ScalarType::Long:
      return "long";
    case ScalarType::Half:
    case ScalarType::BFloat16:
      return "ushort";
    case ScalarType::Float:
      return "float";
    case ScalarType::Double:
      return "double";
    case ScalarType::ComplexFloat:
      return "float2";
    case ScalarType::ComplexDouble:
      return "double2";
    case ScalarType::UInt16:
      return "ushort";
    case ScalarType::UInt32:
      return "uint";
    case ScalarType::UInt64:
      return "ulong";
    case ScalarType::ComplexHalf:
      return "ushort2";
    default:
      TORCH_CHECK_TYPE(false, "dtype ", t, " is not supported on the ocl device");
  }
}

const char* clComputeType(ScalarType t) {
  if (t == ScalarType::Half || t == ScalarType::BFloat16) return "float";
  if (t == ScalarType::ComplexHalf) return "float2";
  return clStorageType(t);
}

std::string mathMacros(const std::string& ct) {
  return ct == "float" ? "#define ocl_exp ocl_exp_float\n#define ocl_erf ocl_erf_float\n"
                         "#define ocl_tanh ocl_tanh_float\n#define ocl_sigmoid ocl_sigmoid_float\n"
                         "#define ocl_gelu_erf ocl_gelu_erf_float\n"
                       : "#define ocl_exp exp\n#define ocl_erf erf\n#define ocl_tanh tanh\n"
                         "#define ocl_sigmoid(x) (1 / (1 + exp(-(x))))\n"
                         "#define ocl_gelu_erf(x) erf((x) * M_SQRT1_2)\n";
}

std::string loadExpr(ScalarType t, const std::string& ptr, const std::string& idx) {
  switch (t) {
    case ScalarType::Half:
      return "vload_half(" + idx + ", (__global const half*)(" + ptr + "))";
    case ScalarType::BFloat16:
      return "ocl_bf16_to_float(" + ptr + "[" + idx + "])";
    case ScalarType::ComplexHalf:
      return "vload_half2(" + idx + ", (__global const half*)(" + ptr + "))";
    default:
      return ptr + "[" + idx + "]";
  }
}

std::string storeStmt(ScalarType t, const std::string& ptr, const std::string& idx,
                      const std::string& value) {
  switch (t) {
    case ScalarType::Half:
      return "vstore_half_rte(" + value + ", " + idx + ", (__global half*)(" + ptr + "));";
    case ScalarType::BFloat16:
      return ptr + "[" + idx + "] = ocl_float_to_bf16(" + value + ");";
    case ScalarType::ComplexHalf:
      return "vstore_half2_rte(" + value + ", " + idx + ", (__global half*)(" + ptr + "));";
    default:
      return ptr + "[" + idx + "] = " + value + ";";
  }
}

static bool isComplex(ScalarType t) {
  return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble ||
         t == ScalarType::ComplexHalf;
}

static bool isFloating(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || t == ScalarType::Float ||
         t == ScalarType::Double;
}

std::string convertExpr(ScalarType from, ScalarType to, const std::string& v) {
  if (from == to) return v;
  const std::string to_t = clComputeType(to);
  if (isComplex(from) && isComplex(to)) return "convert_" + to_t + "(" + v + ")";
  if (isComplex(to)) {
    const char* real_t = to == ScalarType::ComplexDouble ? "double" : "float";
    return "(" + to_t + ")((" + real_t + ")(" + v + "), 0)";
  }
  if (to == ScalarType::Bool) {
    if (isComplex(from)) return "(uchar)((" + v + ").x != 0 || (" + v + ").y != 0)";
    return "(uchar)((" + v + ") != 0)";
  }
  // complex -> real keeps the real part, as PyTorch does (it warns on the Python side).
  std::string src = isComplex(from) ? "(" + v + ").x" : v;
  // Floating -> uint64 as x86 CPU PyTorch converts (values from 2^63 up have the top bit set).
  if ((isFloating(from) || isComplex(from)) && to == ScalarType::UInt64)
    return "((" + src + ") >= 0x1p63f ? ((ulong)(long)((" + src +
           ") - 0x1p63f) ^ 0x8000000000000000UL) : (ulong)(long)(" + src + "))";
  // Floating -> small integers goes through long, which matches x86 CPU PyTorch's truncation.
  if ((isFloating(from) || isComplex(from)) && !isFloating(to) && to != ScalarType::Long)
    return "(" + to_t + ")(long)(" + src + ")";
  return "(" + to_t + ")(" + src + ")";
}

}  // namespace torch_ocl::aten
