// The pointwise kernel generator: an op is an OpenCL C expression over its inputs (a, b, c) and
// scalar arguments (s0, s1, s2), all in the op's compute type. Kernels are specialised on dtypes
// and contiguity, never on sizes; sizes and strides come from at::TensorIterator as arguments,
// which also gives broadcasting, type promotion, non-contiguous and zero-size inputs for free.
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/core/Scalar.h>

#include <array>
#include <cstdint>

namespace torch_ocl::codegen {

enum class Domain : uint8_t {
  kAll,          // every real dtype the device holds
  kFloating,     // floating compute types only
  kFloatDouble,  // float and double only (ops CPU PyTorch lacks for half and bfloat16)
  kIntegral,     // integral and bool only
  kInteger,      // integral without bool (shifts)
  kNumeric,      // every real dtype but bool (division, remainder)
};

constexpr int kMaxScalars = 3;

struct PointwiseOp {
  const char* name;
  const char* expr;      // used for floating compute types, and for all when expr_int is null
  const char* expr_int;  // optional variant for integral compute types (and bool)
  Domain domain = Domain::kAll;
  bool bool_result = false;  // comparisons: the expression yields a truth value
  // Optional OpenCL C placed after `typedef ... T;` and before the kernel: helper functions that
  // one expression cannot hold (floor division, erfinv, digamma...). Written over T.
  const char* helpers = nullptr;
  const char* helpers_int = nullptr;  // helpers for integral compute types, when they differ
  // Expression for complex compute types (T is float2 / double2, R its real type, with the
  // ocl_c* functions of kernels/complex.cl); null: the op has no complex kernel. Ops with a real
  // result (abs, angle) yield (T)(value, 0): storing to a real output keeps the real part.
  const char* expr_complex = nullptr;
  // The expression (and its helpers, if any) means the same when T, a, b and c are vectors of the
  // compute type: comparisons only as select conditions or inside && / || (a vector comparison
  // yields -1, not 1), no scalar-only builtins, ocl_round_out not used. CPU drivers then run
  // dense same-dtype float and half operands 16 elements per work item, double 8 (vectorWidth in
  // pointwise.cpp).
  bool vector_safe = false;
};

// op marked vector_safe (the ops are aggregates initialised by position).
constexpr PointwiseOp vectorSafe(PointwiseOp op) {
  op.vector_safe = true;
  return op;
}

// True when the generator has a kernel for this compute dtype (complex: when expr_complex is set;
// the domain then does not apply).
bool supports(const PointwiseOp& op, c10::ScalarType compute);

// Runs op over iter (output 0, then inputs) computing in `compute`; scalars are converted to the
// compute type. Launches one kernel on the current stream of the output's device.
void launch(const PointwiseOp& op, const at::TensorIteratorBase& iter, c10::ScalarType compute,
            std::array<c10::Scalar, kMaxScalars> scalars = {});

// The complex helper functions (kernels/complex.cl) over CT = clComputeType(t) and its real type,
// for generated kernels that compute in complex dtype t.
std::string complexHeader(c10::ScalarType t);

}  // namespace torch_ocl::codegen
