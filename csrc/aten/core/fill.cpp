// fill_ and zero_: clEnqueueFillBuffer for contiguous tensors (a kernel of 1 KB blocks for large
// ones on CPU drivers), a strided kernel otherwise.
#include <ATen/ATen.h>
#include <ATen/Dispatch_v2.h>
#include <ATen/TensorIterator.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/ops.h"
#include "integration/command_names.h"
#include "runtime/graph.h"

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

// Large contiguous fills on CPU drivers: a work item stores 1 KB (16 vstore16 of a 64-byte
// pattern). PoCL's clEnqueueFillBuffer stored 12.9 GB/s (16 MiB, 37 % of its own fill limit;
// CPU PyTorch's fill_ 0.10 ms against 1.30 ms, `make bench`); this kernel 0.30-0.50 ms against
// 2.9 for clEnqueueFillBuffer in one process beside a CI run.
char kFillBlocksFamily;
constexpr size_t kFillBlock = 1024;
constexpr size_t kFillKernelMinBytes = size_t{1} << 20;

cl_program fillBlocksProgram(c10::DeviceIndex idx) {
  return programs(idx).get({&kFillBlocksFamily, 0}, [] {
    return rt::ProgramSource{
        "fill_blocks",
        "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\n"
        "void fill_blocks(__global char* db, ulong doff, uint16 v) {\n"
        "  __global uint* p = (__global uint*)(db + doff) + get_global_id(0) * 256;\n"
        "  for (int i = 0; i < 16; ++i) vstore16(v, i, p);\n"
        "}\n",
        ""};
  });
}

// Whether the blocks kernel fills this contiguous region: a CPU driver, 1 MiB or more, 64-byte
// aligned (the pattern repeats whole in every 64 bytes).
bool fillByBlocks(rt::Device& dev, const rt::BufferRef& b, size_t bytes, size_t pattern) {
  return (dev.info().type & CL_DEVICE_TYPE_CPU) != 0 && bytes >= kFillKernelMinBytes &&
         b.offset % 64 == 0 && pattern > 0 && 64 % pattern == 0;
}

void fillBlocks(c10::DeviceIndex idx, cl_command_queue q, const rt::BufferRef& b,
                const ScalarBits& bits, size_t bytes) {
  cl_uint16 v;
  unsigned char* dst = reinterpret_cast<unsigned char*>(&v);
  for (size_t i = 0; i < sizeof(v); i += bits.size) std::memcpy(dst + i, bits.bytes, bits.size);
  const size_t blocks = bytes / kFillBlock, body = blocks * kFillBlock;
  cl_kernel k = programs(idx).kernel(fillBlocksProgram(idx), "fill_blocks");
  cl_uint i = 0;
  setArg(k, i, b);
  setArg(k, i, v);
  const size_t global = blocks, local = 1;
  rt::CommandGraph* graph = rt::capture::graphOf(q);
  {
    ProfiledCommand pc(CommandKind::kMemset, command_names::kMemset);
    OCL_CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, pc.event()));
  }
  if (graph) graph->addKernel(k, 1, nullptr, &global, &local);
  afterLaunch(q);
  if (bytes > body) {
    ProfiledCommand pc(CommandKind::kMemset, command_names::kMemset);
    enqueueFillBuffer(q, rt::BufferRef{b.mem, b.offset + body}, bits.bytes, bits.size, bytes - body,
                      pc.event());
  }
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
    if (fillByBlocks(dev, b, self.nbytes(), bits.size)) {
      fillBlocks(idx, q, b, bits, self.nbytes());
    } else {
      ProfiledCommand pc(CommandKind::kMemset, command_names::kMemset);
      enqueueFillBuffer(q, b, bits.bytes, bits.size, self.nbytes(), pc.event());
    }
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
