// hash_tensor (mode 0, xor reduction) on the device, as CPU's xor_sum: every element is widened
// to its 64-bit counterpart (integers sign- or zero-extended to int64/uint64, floating values to
// double) and its bits are xor-ed into a uint64 result. Float -> double bits are built with
// integer arithmetic, so devices without cl_khr_fp64 hash float32/float16/bfloat16 too. The input
// is made contiguous with the reduced dimensions innermost (a device copy); one work item per
// output walks its row, or for few long rows, per chunk of a row with a second pass over the
// partials.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/ops/hash_tensor_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/ops.h"
#include "aten/structured.h"

#include <algorithm>
#include <string>
#include <vector>

namespace torch_ocl::aten {
namespace {

char kHashFamily;

// OpenCL C: the uint64 bits that CPU's xor_sum xors for one element `x` of dtype t.
std::string hashBits(c10::ScalarType t) {
  switch (t) {
    case c10::kBool:
      return "(ulong)(x != 0)";
    case c10::kByte:
    case c10::kUInt16:
    case c10::kUInt32:
    case c10::kUInt64:
      return "(ulong)x";
    case c10::kChar:
    case c10::kShort:
    case c10::kInt:
    case c10::kLong:
      return "(ulong)(long)x";
    case c10::kDouble:
      return "as_ulong(x)";
    default:  // half, bfloat16, float: the bits of (double)x
      return "ocl_float_to_double_bits(x)";
  }
}

const char* kHashHelpers =
    "inline ulong ocl_float_to_double_bits(float f) {\n"
    "  const uint u = as_uint(f);\n"
    "  const ulong sign = (ulong)(u >> 31) << 63;\n"
    "  const uint e = (u >> 23) & 0xff, m = u & 0x7fffff;\n"
    "  if (e == 0xff) {\n"
    "    ulong mant = (ulong)m << 29;\n"
    "    if (m != 0) mant |= 1UL << 51;  /* a signalling NaN comes out quiet, as cvtss2sd */\n"
    "    return sign | (0x7ffUL << 52) | mant;\n"
    "  }\n"
    "  if (e == 0) {\n"
    "    if (m == 0) return sign;\n"
    "    const int k = 31 - (int)clz(m);  /* top bit of a subnormal's mantissa */\n"
    "    const ulong mant = ((ulong)m << (52 - k)) & 0xfffffffffffffUL;\n"
    "    return sign | ((ulong)(k - 149 + 1023) << 52) | mant;\n"
    "  }\n"
    "  return sign | ((ulong)(e - 127 + 1023) << 52) | ((ulong)m << 29);\n"
    "}\n";

cl_program hashProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kHashFamily, dtypeCode(t)}, [&] {
    std::string src = kHashHelpers;
    src += "typedef " + std::string(clStorageType(t)) + " ST;\n";
    src +=
        "__kernel void hash_rows(__global char* ob, ulong ooff, __global const char* ib,\n"
        "                        ulong ioff, long items, long len, long chunks, long clen) {\n"
        "  const long g = get_global_id(0);\n"
        "  if (g >= items) return;\n"
        "  const long o = g / chunks, c = g - o * chunks;\n"
        "  const long a = c * clen, e = min(a + clen, len);\n"
        "  __global ulong* out = (__global ulong*)(ob + ooff);\n"
        "  __global const ST* in = (__global const ST*)(ib + ioff) + o * len;\n"
        "  ulong h = 0;\n"
        "  for (long i = a; i < e; ++i) {\n"
        "    const " +
        std::string(clComputeType(t)) + " x = " + loadExpr(t, "in", "i") +
        ";\n"
        "    h ^= " +
        hashBits(t) +
        ";\n"
        "  }\n"
        "  out[g] = h;\n"
        "}\n";
    return rt::ProgramSource{std::string("hash_tensor<") + c10::toString(t) + ">", withPrelude(src),
                             ""};
  });
}

void hashInto(const at::Tensor& self, at::IntArrayRef dim, int64_t mode, const at::Tensor& out) {
  TORCH_CHECK(mode == 0, "Unknown hash_tensor mode: ", mode);
  const c10::ScalarType t = self.scalar_type();
  // CPU's xor_sum kernel covers the integral, bool and floating dtypes (not the barebones
  // unsigned ones nor complex): the same set here, with CPU's error.
  TORCH_CHECK_NOT_IMPLEMENTED(!c10::isComplexType(t) && !isStorageOnlyDtype(t),
                              "\"xor_sum_ocl\" not implemented for '", c10::toString(t), "'");
  if (!dim.empty()) at::native::zero_numel_check_dims(self, dim, "hash_tensor");
  TORCH_CHECK(out.device() == self.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device(), " and ", out.device(), "!");
  const c10::DeviceIndex idx = self.device().index();
  checkStorageDtypeSupported(t, idx);
  if (out.numel() == 0) return;
  const int64_t nd = self.dim();
  const std::bitset<at::dim_bitset_size> reduced =
      dim.empty() ? std::bitset<at::dim_bitset_size>().set() : at::dim_list_to_bitset(dim, nd);
  std::vector<int64_t> order;
  int64_t len = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[d]) order.push_back(d);
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[d]) {
      order.push_back(d);
      len *= self.size(d);
    }
  const int64_t outputs = out.numel();
  const at::Tensor in = self.permute(order).contiguous();
  const bool direct = out.is_contiguous();
  const at::Tensor res = direct ? out : at::empty({outputs}, out.options());
  rt::Device& dev = device(idx);
  cl_command_queue q = currentQueue(idx);
  // items = outputs * chunks work items, each xor-ing a stretch of clen elements of its row.
  auto pass = [&](c10::ScalarType in_t, const at::Tensor& dst, const at::Tensor& src, int64_t rows,
                  int64_t row_len, int64_t chunks) {
    const int64_t clen = (row_len + chunks - 1) / chunks;
    cl_program prog = hashProgram(idx, in_t);
    OCL_TRY
    cl_kernel k = programs(idx).kernel(prog, "hash_rows");
    setArgs(k, bufferOf(dst), bufferOf(src), static_cast<cl_long>(rows * chunks),
            static_cast<cl_long>(row_len), static_cast<cl_long>(chunks),
            static_cast<cl_long>(clen));
    launch1D(dev, q, k, rows * chunks);
    OCL_CATCH
  };
  // Few long rows: split each into chunks (partials), then xor the partials in a second pass, so
  // that a full-tensor hash does not run on one work item.
  constexpr int64_t kChunkLen = 4096, kMaxChunks = 1024, kFewOutputs = 1024;
  const int64_t chunks =
      outputs >= kFewOutputs ? 1 : std::min(kMaxChunks, (len + kChunkLen - 1) / kChunkLen);
  if (chunks <= 1) {
    pass(t, res, in, outputs, len, 1);
  } else {
    const at::Tensor partial = at::empty({outputs, chunks}, out.options());
    pass(t, partial, in, outputs, len, chunks);
    pass(c10::kUInt64, res, partial, outputs, chunks, 1);  // uint64 bits xor as they are
  }
  if (!direct) out.copy_(res.view(out.sizes()));
}

at::Tensor hashTensor(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, int64_t mode) {
  Structured<at::meta::structured_hash_tensor> s(Mode::kFunctional, nullptr);
  s.meta(self, dim, keepdim, mode);
  hashInto(self, dim, mode, s.output());
  return s.output();
}

at::Tensor& hashTensorOut(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, int64_t mode,
                          at::Tensor& out) {
  Structured<at::meta::structured_hash_tensor> s(Mode::kOut, &out);
  s.meta(self, dim, keepdim, mode);
  hashInto(self, dim, mode, out);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("hash_tensor", TORCH_FN(hashTensor));
  m.impl("hash_tensor.out", TORCH_FN(hashTensorOut));
}

}  // namespace torch_ocl::aten
