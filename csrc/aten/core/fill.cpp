// fill_ and zero_: clEnqueueFillBuffer for contiguous tensors, a strided kernel otherwise.
#include <ATen/ATen.h>
#include <ATen/Dispatch_v2.h>
#include <ATen/TensorIterator.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/ops.h"
#include "integration/command_names.h"

#include <cstring>

namespace torch_ocl::aten {
namespace {

char kFillFamily;

// The value as the bytes the device stores for dtype t.
struct ScalarBits {
  alignas(16) unsigned char bytes[16] = {};
  size_t size = 0;
};

ScalarBits scalarBits(const at::Scalar& value, c10::ScalarType t) {
  ScalarBits out;
  AT_DISPATCH_V2(t, "ocl_fill", AT_WRAP([&] {
                   scalar_t v = value.to<scalar_t>();
                   static_assert(sizeof(scalar_t) <= sizeof(out.bytes));
                   std::memcpy(out.bytes, &v, sizeof(scalar_t));
                   out.size = sizeof(scalar_t);
                 }),
                 AT_EXPAND(AT_ALL_TYPES_AND_COMPLEX), AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES),
                 c10::kHalf, c10::kBFloat16, c10::kBool, c10::kComplexHalf);
  return out;
}

cl_program fillProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kFillFamily, dtypeCode(t)}, [&] {
    const std::string st = clStorageType(t);
    std::string body =
        "__kernel void fill_strided(__global char* db, ulong doff, long n, int ndim,\n"
        "                           OclStrides2 st, " +
        st +
        " value) {\n"
        "  {\n    const long li = get_global_id(0);\n    if (li >= n) return;\n"
        "    long rem = li, od = 0;\n"
        "    for (int k = 0; k < ndim; ++k) {\n"
        "      od += (rem % st.sizes[k]) * st.strides[0][k];\n"
        "      rem /= st.sizes[k];\n"
        "    }\n"
        "    *(__global " +
        st +
        "*)(db + doff + od) = value;\n"
        "  }\n}\n";
    return rt::ProgramSource{std::string("fill<") + c10::toString(t) + ">", withPrelude(body), ""};
  });
}

}  // namespace

at::Tensor& fillScalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  const c10::DeviceIndex idx = self.device().index();
  checkStorageDtypeSupported(self.scalar_type(), idx);
  const ScalarBits bits = scalarBits(value, self.scalar_type());
  rt::Device& dev = device(idx);
  cl_command_queue q = currentQueue(idx);
  if (self.is_contiguous()) {
    rt::BufferRef b = bufferOf(self);
    OCL_TRY
    ProfiledCommand pc(CommandKind::kMemset, command_names::kMemset);
    enqueueFillBuffer(q, b, bits.bytes, bits.size, self.nbytes(), pc.event());
    OCL_CATCH
    return self;
  }
  auto iter = at::TensorIteratorConfig()
                  .add_output(self)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  cl_program prog = fillProgram(idx, self.scalar_type());
  rt::BufferRef b = resolvePtr(iter.data_ptr(0));
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "fill_strided");
  cl_uint i = 0;
  setArg(k, i, b);
  setArg(k, i, static_cast<cl_long>(iter.numel()));
  setArg(k, i, static_cast<cl_int>(iter.ndim()));
  setArg(k, i, stridesOf(iter));
  OCL_CHECK(clSetKernelArg(k, i++, bits.size, bits.bytes));
  launch1D(dev, q, k, iter.numel());
  OCL_CATCH
  return self;
}

at::Tensor& fillTensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  // A value on the same device stays there: a broadcast copy, as at::native::fill_ does, not a
  // read to the host (a sync per call). A view of self is cloned first.
  if (value.device() == self.device()) {
    self.copy_(value.is_alias_of(self) ? value.clone() : value);
    return self;
  }
  return fillScalar(self, value.item());
}

at::Tensor& zero(at::Tensor& self) {
  return fillScalar(self, 0);
}

}  // namespace torch_ocl::aten
