// The runner shared by the pointwise op files: PyTorch's structured meta function (shapes,
// broadcasting, promotion, out= resizing exactly as on CPU), then one generated kernel; dtypes the
// op's expression does not cover go through the counted CPU fallback under the op's own name.
#pragma once

#include <ATen/ATen.h>

#include "aten/fallback.h"
#include "aten/structured.h"
#include "codegen/pointwise.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace torch_ocl::aten {

// The dtype an op computes in: TensorIterator's common dtype, or for ops without one (unary ops
// with a forced boolean result) the dtype of the first input.
namespace detail {
template <class It>
auto commonDtype(const It& iter, int) -> decltype(iter.maybe_common_dtype()) {
  return iter.maybe_common_dtype();
}
// torch 2.11 (the GPU machine) has no maybe_common_dtype; its common_dtype() asserts when there
// is none.
template <class It>
std::optional<c10::ScalarType> commonDtype(const It& iter, long) {
  try {
    return iter.common_dtype();
  } catch (const c10::Error&) {
    return std::nullopt;
  }
}
}  // namespace detail

inline c10::ScalarType computeDtype(const at::TensorIteratorBase& iter) {
  return detail::commonDtype(iter, 0).value_or(iter.dtype(iter.noutputs()));
}

using Scalars = std::array<c10::Scalar, codegen::kMaxScalars>;

// Runs meta, then the kernel; the CPU fallback (named op) when the dtype is not covered.
template <class Meta, typename... Args>
at::Tensor run(const codegen::PointwiseOp& op, const char* name, const char* overload, Mode mode,
               at::Tensor* out, Scalars scalars, const Args&... args) {
  Structured<Meta> s(mode, out);
  s.meta(args...);
  const c10::ScalarType compute = computeDtype(s);
  if (!codegen::supports(op, compute)) {
    std::vector<c10::IValue> stack{c10::IValue(args)...};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  codegen::launch(op, s, compute, scalars);
  return s.output();
}

// Runs op over an already built TensorIterator, or the named CPU fallback for dtypes the op's
// expression does not cover. `fallback_args` is the op's argument list (with out last for out=).
inline void runIter(const codegen::PointwiseOp& op, const at::TensorIteratorBase& iter,
                    c10::ScalarType compute, Scalars scalars, const char* name,
                    const char* overload, std::vector<c10::IValue> fallback_args) {
  if (!codegen::supports(op, compute)) {
    runFallback(name, overload, std::move(fallback_args));
    return;
  }
  codegen::launch(op, iter, compute, scalars);
}

// ---- structured ops: functional, in-place and out= forms from one line -------------------------

#define OCL_X(...) __VA_ARGS__
// Functional, in-place and out= forms of a structured op over `self` and PARAMS (a parenthesised
// list that starts with a comma, or ()). OP and SCALARS may use the parameters.
#define OCL_STRUCTURED(ID, META, OP, NAME, OV, OUTOV, SCALARS, PARAMS, ARGS)                    \
  [[maybe_unused]] at::Tensor ID##Fn(const at::Tensor& self OCL_X PARAMS) {                     \
    return run<META>(OP, "aten::" NAME, OV, Mode::kFunctional, nullptr, Scalars{OCL_X SCALARS}, \
                     self OCL_X ARGS);                                                          \
  }                                                                                             \
  [[maybe_unused]] at::Tensor& ID##Inplace(at::Tensor& self OCL_X PARAMS) {                     \
    run<META>(OP, "aten::" NAME "_", OV, Mode::kInplace, &self, Scalars{OCL_X SCALARS},         \
              self OCL_X ARGS);                                                                 \
    return self;                                                                                \
  }                                                                                             \
  [[maybe_unused]] at::Tensor& ID##Out(const at::Tensor& self OCL_X PARAMS, at::Tensor& out) {  \
    run<META>(OP, "aten::" NAME, OUTOV, Mode::kOut, &out, Scalars{OCL_X SCALARS},               \
              self OCL_X ARGS);                                                                 \
    return out;                                                                                 \
  }

#define OCL_UNARY_S(ID, OP) \
  OCL_STRUCTURED(ID, at::meta::structured_##ID, OP, #ID, "", "out", (), (), ())
// Binary structured ops whose second operand is a tensor.
#define OCL_BINARY_S(ID, META, OP, NAME, OV, OUTOV) \
  OCL_STRUCTURED(ID, META, OP, NAME, OV, OUTOV, (), (, const at::Tensor& other), (, other))

}  // namespace torch_ocl::aten
