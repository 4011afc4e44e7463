// The operator forms of the shifts (x << y, x >> y, x <<= y, x >>= y: aten::__lshift__ and
// friends). CPU runs them through the same TensorIterator and kernels as bitwise_left_shift /
// bitwise_right_shift (scalars as wrapped numbers), so they are those ops here too; a common dtype
// the shift kernels do not take (floating, complex, bool) is CPU's NotImplementedError, after
// the in-place cast check CPU's TensorIterator does first.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <torch/library.h>

namespace torch_ocl::aten {
namespace {

void checkShift(const char* kernel, const at::Tensor& self, const at::Tensor& other, bool inplace) {
  const c10::ScalarType common = at::result_type(self, other);
  if (inplace)
    TORCH_CHECK(at::canCast(common, self.scalar_type()), "result type ", common,
                " can't be cast to the desired output type ", self.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(common, /*includeBool=*/false), "\"", kernel,
                              "\" not implemented for '", c10::toString(common), "'");
}

at::Tensor lshiftTensor(const at::Tensor& self, const at::Tensor& other) {
  checkShift("lshift_ocl", self, other, false);
  return at::bitwise_left_shift(self, other);
}
at::Tensor lshiftScalar(const at::Tensor& self, const at::Scalar& other) {
  return lshiftTensor(self, at::native::wrapped_scalar_tensor(other));
}
at::Tensor& ilshiftTensor(at::Tensor& self, const at::Tensor& other) {
  checkShift("lshift_ocl", self, other, true);
  return self.bitwise_left_shift_(other);
}
at::Tensor& ilshiftScalar(at::Tensor& self, const at::Scalar& other) {
  return ilshiftTensor(self, at::native::wrapped_scalar_tensor(other));
}
at::Tensor rshiftTensor(const at::Tensor& self, const at::Tensor& other) {
  checkShift("rshift_ocl", self, other, false);
  return at::bitwise_right_shift(self, other);
}
at::Tensor rshiftScalar(const at::Tensor& self, const at::Scalar& other) {
  return rshiftTensor(self, at::native::wrapped_scalar_tensor(other));
}
at::Tensor& irshiftTensor(at::Tensor& self, const at::Tensor& other) {
  checkShift("rshift_ocl", self, other, true);
  return self.bitwise_right_shift_(other);
}
at::Tensor& irshiftScalar(at::Tensor& self, const at::Scalar& other) {
  return irshiftTensor(self, at::native::wrapped_scalar_tensor(other));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("__ilshift__.Scalar", TORCH_FN(ilshiftScalar));
  m.impl("__ilshift__.Tensor", TORCH_FN(ilshiftTensor));
  m.impl("__irshift__.Scalar", TORCH_FN(irshiftScalar));
  m.impl("__irshift__.Tensor", TORCH_FN(irshiftTensor));
  m.impl("__lshift__.Scalar", TORCH_FN(lshiftScalar));
  m.impl("__lshift__.Tensor", TORCH_FN(lshiftTensor));
  m.impl("__rshift__.Scalar", TORCH_FN(rshiftScalar));
  m.impl("__rshift__.Tensor", TORCH_FN(rshiftTensor));
}

}  // namespace torch_ocl::aten
