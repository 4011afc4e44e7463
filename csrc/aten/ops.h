// Native ocl kernels, registered in register.cpp (one sorted table).
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/Stream.h>

#include <optional>

namespace torch_ocl::aten {

// factory.cpp
at::Tensor empty(c10::SymIntArrayRef size, std::optional<c10::ScalarType> dtype,
                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                 std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format);
at::Tensor emptyStrided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory);
// The functional output of a structured kernel (structured.h): straight to the allocator, without
// the dispatcher or the factory's option checks (the meta function derived the options from the
// inputs). Empty strides: contiguous in the options' memory format. Other devices: at::empty.
at::Tensor emptyOutput(at::IntArrayRef sizes, at::IntArrayRef strides,
                       const at::TensorOptions& options);
void recordStream(at::Tensor& self, c10::Stream stream);
at::Tensor efficientZeroTensor(c10::SymIntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory);

// copy.cpp
at::Tensor copyFrom(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor copyFromAndResize(const at::Tensor& self, const at::Tensor& dst);
at::Scalar localScalarDense(const at::Tensor& self);

// fill.cpp
at::Tensor& fillScalar(at::Tensor& self, const at::Scalar& value);
at::Tensor& fillTensor(at::Tensor& self, const at::Tensor& value);
at::Tensor& zero(at::Tensor& self);

// random.cpp
at::Tensor& uniform(at::Tensor& self, double from, double to, std::optional<at::Generator> gen);
at::Tensor& normal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen);

// resize.cpp
const at::Tensor& resize(const at::Tensor& self, c10::SymIntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format);
at::Tensor& setStorage(at::Tensor& self, at::Storage source, c10::SymInt storage_offset,
                       c10::SymIntArrayRef size, c10::SymIntArrayRef stride);
at::Tensor& setSourceStorage(at::Tensor& self, at::Storage source);
at::Tensor& setSourceTensor(at::Tensor& self, const at::Tensor& source);
at::Tensor& setEmpty(at::Tensor& self);
// True for two dense strided tensors, each on the CPU or on an ocl device. c10's own check only
// knows the in-tree dense backends; without this, Module.to("ocl") replaces every Parameter
// instead of moving it in place, which silently unties shared (tied) weights and detaches
// optimizers created before the move.
bool hasCompatibleShallowCopyType(const at::Tensor& self, const at::Tensor& from);

}  // namespace torch_ocl::aten
