// Runs PyTorch's structured-kernel meta functions for ocl: outputs are allocated (functional),
// checked (in-place) or resized (out=) the way PyTorch's generated backend registrations do, so
// shapes, broadcasting, type promotion and argument checks match CPU exactly.
#pragma once

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>

#include "aten/ops.h"

#include <array>
#include <type_traits>

#if __has_include(<ATen/core/Dimname.h>)
#include <ATen/core/Dimname.h>
#define OCL_TORCH_HAS_DIMNAMES 1
#else
#define OCL_TORCH_HAS_DIMNAMES 0
#endif

namespace torch_ocl::aten {

enum class Mode { kFunctional, kInplace, kOut };

// A structured op whose outputs are allocated (functional), checked (in-place) or resized (out=)
// the way PyTorch's generated backend registrations do it.
template <class Meta>
struct Structured final : Meta {
  static constexpr int kMaxOutputs = 4;  // _linalg_solve_ex has four
  // out: the destination(s) for kInplace and kOut (one per output of the op).
  Structured(Mode mode, at::Tensor* out, at::Tensor* out1 = nullptr, at::Tensor* out2 = nullptr,
             at::Tensor* out3 = nullptr)
      : mode_(mode), out_{out, out1, out2, out3} {}

  // torch 2.13's virtuals. Releases that still have named tensors (2.11 on the GPU machine)
  // declare them with a trailing DimnameList instead; the forms below cover both (hence no
  // `override`: whichever the headers declare is overridden, the other is an unused overload).
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) {
    prepare(i, sizes, strides, options);
    forward(i, sizes, strides, options);
  }
#if OCL_TORCH_HAS_DIMNAMES
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options, at::DimnameList) {
    set_output_strided(i, sizes, strides, options);
  }
#endif
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) {
    prepare(i, sizes, strides, options);
    forward(i, sizes, strides, options);
  }
#if OCL_TORCH_HAS_DIMNAMES
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options, at::DimnameList) {
    set_output_raw_strided(i, sizes, strides, options);
  }
#endif
  const at::Tensor& maybe_get_output(int64_t i) override {
    TORCH_INTERNAL_ASSERT(i >= 0 && i < kMaxOutputs);
    return mode_ == Mode::kFunctional ? result_[i] : *out_[i];
  }
  const at::Tensor& output(int64_t i = 0) {
    return maybe_get_output(i);
  }

 private:
  // TensorIterator-based metas record the output; the others have nothing to record.
  void forward(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
               at::TensorOptions options) {
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Meta>) {
#if OCL_TORCH_HAS_DIMNAMES
      Meta::set_output_raw_strided(i, sizes, strides, options, {});
#else
      Meta::set_output_raw_strided(i, sizes, strides, options);
#endif
    }
  }
  void prepare(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
               at::TensorOptions options) {
    TORCH_INTERNAL_ASSERT(i >= 0 && i < kMaxOutputs && (mode_ == Mode::kFunctional || out_[i]));
    switch (mode_) {
      case Mode::kFunctional:
        // An empty stride list means "no preference" (set_output_raw_strided's hint).
        result_[i] = emptyOutput(sizes, strides, options);
        break;
      case Mode::kInplace:
        TORCH_CHECK(options.dtype() == out_[i]->dtype(), "Bad in-place call: input tensor dtype ",
                    out_[i]->dtype(), " and output tensor dtype ", options.dtype(),
                    " should match");
        TORCH_CHECK(out_[i]->sizes() == sizes, "Bad in-place call: input tensor size ",
                    out_[i]->sizes(), " and output tensor size ", sizes, " should match");
        break;
      case Mode::kOut:
        // As the generated resize_out: the out tensor must have the dtype and device the meta
        // function asks for (TensorIterator metas already ask for an out tensor's own dtype
        // where they may cast into it), and a resized out= takes the meta function's strides,
        // raw or not (TensorIterator has already laid out its loop for them), or else its
        // memory format.
        TORCH_CHECK(options.dtype() == out_[i]->dtype(), "Expected out tensor to have dtype ",
                    options.dtype(), ", but got ", out_[i]->dtype(), " instead");
        TORCH_CHECK(options.device() == out_[i]->device(), "Expected out tensor to have device ",
                    options.device(), ", but got ", out_[i]->device(), " instead");
        if (at::native::resize_output(*out_[i], sizes)) {
          if (!strides.empty())
            out_[i]->as_strided_(sizes, strides);
          else if (options.memory_format_opt().has_value())
            out_[i]->unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
        }
        break;
    }
  }
  Mode mode_;
  std::array<at::Tensor*, kMaxOutputs> out_;
  std::array<at::Tensor, kMaxOutputs> result_;
};

}  // namespace torch_ocl::aten
