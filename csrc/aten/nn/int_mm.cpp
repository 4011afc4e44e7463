// _int_mm (int8 x int8 -> int32 matrix product; torch.ao quantized linear layers and
// torch._int_mm): a local-memory tiled kernel (kernels/int_mm.cl) over strided operands, exact.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

char kIntMmFamily;
constexpr size_t kTile = 16;  // IMM_TILE in int_mm.cl

void checkIntMm(const at::Tensor& self, const at::Tensor& mat2) {
  constexpr const char* f = "int_mm_out_cpu";
  TORCH_CHECK(self.dim() == 2, f, ": Expected self to be of dimension 2 but got ", self.dim());
  TORCH_CHECK(mat2.dim() == 2, f, ": Expected mat2 to be of dimension 2 but got ", mat2.dim());
  TORCH_CHECK(self.size(1) == mat2.size(0), f,
              ": self.size(1) needs to match mat2.size(0) but got ", self.size(1), " and ",
              mat2.size(0));
  TORCH_CHECK(self.dtype() == at::kChar, f, ": Expected self dtype to be of type int8 but got ",
              self.dtype());
  TORCH_CHECK(mat2.dtype() == at::kChar, f, ": Expected mat2 dtype to be of type int8 but got ",
              mat2.dtype());
}

at::Tensor& intMmOut(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& result) {
  checkIntMm(self, mat2);
  checkSameDevice({self, mat2, result});
  TORCH_CHECK(result.dtype() == at::kInt,
              "int_mm_out_cpu: Expected result dtype to be of type kInt but got ", result.dtype());
  at::native::resize_output(result, {self.size(0), mat2.size(1)});
  const int64_t M = self.size(0), N = mat2.size(1), K = self.size(1);
  if (result.numel() == 0) return result;
  if (K == 0) return result.zero_();
  const c10::DeviceIndex idx = self.device().index();
  cl_program prog = programs(idx).get({&kIntMmFamily, 0}, [] {
    return rt::ProgramSource{"int_mm", withPrelude(kernels::source("int_mm.cl")), ""};
  });
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "int_mm");
  setArgs(k, bufferOf(result), bufferOf(self), bufferOf(mat2), static_cast<cl_long>(M),
          static_cast<cl_long>(N), static_cast<cl_long>(K), static_cast<cl_long>(self.stride(0)),
          static_cast<cl_long>(self.stride(1)), static_cast<cl_long>(mat2.stride(0)),
          static_cast<cl_long>(mat2.stride(1)), static_cast<cl_long>(result.stride(0)),
          static_cast<cl_long>(result.stride(1)));
  const size_t global[2] = {(static_cast<size_t>(N) + kTile - 1) / kTile * kTile,
                            (static_cast<size_t>(M) + kTile - 1) / kTile * kTile};
  const size_t local[2] = {kTile, kTile};
  launch2D(currentQueue(idx), k, global, local);
  OCL_CATCH
  return result;
}

at::Tensor intMm(const at::Tensor& self, const at::Tensor& mat2) {
  checkIntMm(self, mat2);
  at::Tensor result = at::empty({self.size(0), mat2.size(1)}, self.options().dtype(at::kInt));
  return intMmOut(self, mat2, result);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_int_mm", TORCH_FN(intMm));
  m.impl("_int_mm.out", TORCH_FN(intMmOut));
}

}  // namespace torch_ocl::aten
