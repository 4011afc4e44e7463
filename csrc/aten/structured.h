// Runs PyTorch's structured-kernel meta functions for ocl: outputs are allocated (functional),
// checked (in-place) or resized (out=) the way PyTorch's generated backend registrations do, so
// shapes, broadcasting, type promotion and argument checks match CPU exactly.
#pragma once

#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>

#include <type_traits>

namespace torch_ocl::aten {

enum class Mode { kFunctional, kInplace, kOut };

// A structured op whose outputs are allocated (functional), checked (in-place) or resized (out=)
// the way PyTorch's generated backend registrations do it.
template <class Meta>
struct Structured final : Meta {
  Structured(Mode mode, at::Tensor* out) : mode_(mode), out_(out) {}

  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) override {
    prepare(sizes, strides, options, /*restride=*/true);
    forward(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) override {
    prepare(sizes, strides, options, /*restride=*/false);
    forward(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t) override {
    return mode_ == Mode::kFunctional ? result_ : *out_;
  }
  const at::Tensor& output() { return maybe_get_output(0); }

 private:
  // TensorIterator-based metas record the output; the others have nothing to record.
  void forward(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
               at::TensorOptions options) {
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Meta>)
      Meta::set_output_raw_strided(i, sizes, strides, options);
  }
  void prepare(at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions options,
               bool restride) {
    switch (mode_) {
      case Mode::kFunctional:
        // An empty stride list means "no preference" (set_output_raw_strided's hint).
        result_ = strides.empty() ? at::empty(sizes, options)
                                  : at::empty_strided(sizes, strides, options);
        break;
      case Mode::kInplace:
        TORCH_CHECK(options.dtype() == out_->dtype(), "Bad in-place call: input tensor dtype ",
                    out_->dtype(), " and output tensor dtype ", options.dtype(), " should match");
        TORCH_CHECK(out_->sizes() == sizes, "Bad in-place call: input tensor size ", out_->sizes(),
                    " and output tensor size ", sizes, " should match");
        break;
      case Mode::kOut:
        if (at::native::resize_output(*out_, sizes) && restride && !strides.empty())
          out_->as_strided_(sizes, strides);
        break;
    }
  }
  Mode mode_;
  at::Tensor* out_;
  at::Tensor result_;
};

}  // namespace torch_ocl::aten
