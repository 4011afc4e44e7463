// Every native ocl kernel, in one sorted table. Ops not listed here reach the CPU fallback
// (fallback.cpp). View ops reuse ATen's device-independent implementations: they only touch
// metadata.
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "aten/ops.h"

namespace torch_ocl::aten {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copyFrom));
  m.impl("_copy_from_and_resize", TORCH_FN(copyFromAndResize));
  m.impl("_efficientzerotensor", TORCH_FN(efficientZeroTensor));
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(hasCompatibleShallowCopyType));
  m.impl("_local_scalar_dense", TORCH_FN(localScalarDense));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("empty.memory_format", TORCH_FN(empty));
  m.impl("empty_strided", TORCH_FN(emptyStrided));
  m.impl("fill_.Scalar", TORCH_FN(fillScalar));
  m.impl("fill_.Tensor", TORCH_FN(fillTensor));
  m.impl("normal_", TORCH_FN(normal));
  m.impl("record_stream", TORCH_FN(recordStream));
  m.impl("resize_", TORCH_FN(resize));
  m.impl("set_", TORCH_FN(setEmpty));
  m.impl("set_.source_Storage", TORCH_FN(setSourceStorage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(setStorage));
  m.impl("set_.source_Tensor", TORCH_FN(setSourceTensor));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("uniform_", TORCH_FN(uniform));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("view.dtype", TORCH_FN(at::native::view_dtype));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("zero_", TORCH_FN(zero));
}

}  // namespace torch_ocl::aten
