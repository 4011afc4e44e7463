// empty and empty_strided: tensors whose storage comes from the caching device allocator, and
// record_stream, which tells that allocator about a stream using such storage; and
// _efficientzerotensor, the storage-less zeros that autograd formulas (sgn's, for real inputs)
// return.
#include <ATen/EmptyTensor.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/DeviceGuard.h>

#include "aten/cl_types.h"
#include "aten/ops.h"
#include "integration/allocator.h"
#include "integration/state.h"

namespace torch_ocl::aten {
namespace {

// Checks the options every factory shares; returns the device (with an index) and the dtype.
std::pair<c10::Device, c10::ScalarType> checkOptions(std::optional<c10::ScalarType> dtype,
                                                     std::optional<c10::Layout> layout,
                                                     std::optional<c10::Device> device,
                                                     std::optional<bool> pin_memory) {
  TORCH_CHECK(!pin_memory.value_or(false), "Only dense CPU tensors can be pinned");
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided,
              "torch-ocl supports only strided tensors, got layout ", *layout);
  c10::Device d = device.value_or(c10::Device(kOcl, currentDevice()));
  TORCH_CHECK(d.type() == kOcl, "expected an ocl device, got ", d);
  if (!d.has_index()) d = c10::Device(kOcl, currentDevice());
  checkIndex(d.index());
  const auto t = dtype.value_or(c10::get_default_dtype_as_scalartype());
  checkStorageDtypeSupported(t, d.index());
  return {d, t};
}

}  // namespace

at::Tensor empty(c10::SymIntArrayRef size, std::optional<c10::ScalarType> dtype,
                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                 std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  const auto [d, t] = checkOptions(dtype, layout, device, pin_memory);
  c10::DeviceGuard guard(d);
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), deviceAllocator(),
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), t,
                                   memory_format);
}

at::Tensor emptyStrided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  const auto [d, t] = checkOptions(dtype, layout, device, pin_memory);
  c10::DeviceGuard guard(d);
  return at::detail::empty_strided_generic(C10_AS_INTARRAYREF_SLOW(size),
                                           C10_AS_INTARRAYREF_SLOW(stride), deviceAllocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), t);
}

at::Tensor emptyOutput(at::IntArrayRef sizes, at::IntArrayRef strides,
                       const at::TensorOptions& options) {
  const c10::Device d = options.device();
  if (d.type() != kOcl || !d.has_index() || !options.has_dtype() ||
      options.layout() != c10::kStrided || options.pinned_memory())
    return strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
  const c10::ScalarType t = options.dtype().toScalarType();
  checkStorageDtypeSupported(t, d.index());
  const auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  auto make = [&] {
    return strides.empty()
               ? at::detail::empty_generic(sizes, deviceAllocator(), keys, t,
                                           options.memory_format_opt())
               : at::detail::empty_strided_generic(sizes, strides, deviceAllocator(), keys, t);
  };
  if (d.index() == currentDevice()) return make();
  c10::DeviceGuard guard(d);  // the allocator serves the current device
  return make();
}

// As CPU and CUDA build it: no storage (the allocator hands out nullptr) and the ZeroTensor key,
// whose kernels treat the tensor as zeros without reading it.
at::Tensor efficientZeroTensor(c10::SymIntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory) {
  const auto [d, t] = checkOptions(dtype, layout, device, pin_memory);
  at::native::ZeroTensorAllocator allocator(d);
  const auto keys = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1) |
                    c10::DispatchKeySet(c10::DispatchKey::ZeroTensor);
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), &allocator, keys, t,
                                   std::nullopt);
}

void recordStream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == kOcl, "record_stream: expected an ocl stream, got one on ",
              stream.device());
  TORCH_CHECK(stream.device_index() == self.device().index(), "record_stream: the stream is on ",
              stream.device(), " but the tensor is on ", self.device());
  recordStreamForPtr(self.storage().data_ptr().get(), stream);
}

}  // namespace torch_ocl::aten
