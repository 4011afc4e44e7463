// Copies: host to device, device to host, device to device (strided and dtype-converting on the
// device), between two ocl devices, and _local_scalar_dense.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/device_check.h"
#include "aten/launch.h"
#include "aten/ops.h"
#include "codegen/pointwise.h"
#include "codegen/reduce.h"
#include "integration/command_names.h"

namespace torch_ocl::aten {
namespace {

char kCopyFamily;

// On CPU drivers a strided copy takes a block of elements per work item, decomposing the block's
// position once: per-element 64-bit divisions made a transposed copy 20-60x slower than a clone on
// PoCL. kRows blocks are 64 elements of the innermost dimension (the destination's, in
// TensorIterator's order); kTiles blocks are 16x16 over the two innermost dimensions, for
// transpositions (the source contiguous along the second one), so that the 16 source rows a tile
// reads stay in the cache while its destination rows are written in order. GPUs keep one element
// per work item (neighbouring items touch neighbouring destination memory).
// kUnitRows are kRows blocks of a same-dtype copy whose innermost dimension is contiguous on both
// sides (a permute that keeps the last dimension: attention's (B, T, H, D) <-> (B, H, T, D)): whole
// 16-element pieces move as vload16/vstore16, element by element only the row's tail.
enum class CopyBlocks : uint8_t { kElements = 0, kRows = 1, kTiles = 2, kUnitRows = 3 };
constexpr int64_t kTile0(CopyBlocks b) {
  return b == CopyBlocks::kRows || b == CopyBlocks::kUnitRows ? 64 : 16;
}
constexpr int64_t kTile1(CopyBlocks b) {
  return b == CopyBlocks::kRows || b == CopyBlocks::kUnitRows ? 1 : 16;
}

cl_program copyProgram(c10::DeviceIndex idx, c10::ScalarType dst, c10::ScalarType src,
                       CopyBlocks blocks) {
  const uint64_t variant =
      dtypeCode(dst) | (dtypeCode(src) << 6) | (static_cast<uint64_t>(blocks) << 12);
  return programs(idx).get({&kCopyFamily, variant}, [&] {
    const std::string load = loadExpr(src, "s", "i");
    const std::string value = convertExpr(src, dst, load);
    const std::string dst_t = clStorageType(dst), src_t = clStorageType(src);
    const std::string dst_p =
        "    __global " + dst_t + "* d = (__global " + dst_t + "*)(db + doff + od);\n";
    const std::string src_p =
        "    __global const " + src_t + "* s = (__global const " + src_t + "*)(sb + soff + os);\n";
    // The bound test only in the last work-group (see codegen/pointwise.cpp: a plain early
    // return keeps PoCL's vectoriser off the whole kernel).
    auto bounded = [](const char* var) {
      return std::string("  const long ") + var +
             " = get_global_id(0);\n"
             "  if ((long)((get_group_id(0) + 1) * get_local_size(0)) > n && " +
             var + " >= n) return;\n";
    };
    // Byte offsets od/os (declared by the caller) of position `rem` over dimensions first...
    auto decompose = [](int first, const char* od, const char* os) {
      return "  for (int k = " + std::to_string(first) +
             "; k < ndim; ++k) {\n"
             "    const long c = rem % st.sizes[k];\n    rem /= st.sizes[k];\n    " +
             od + " += c * st.strides[0][k];\n    " + os + " += c * st.strides[1][k];\n  }\n";
    };
    const std::string store =
        "    const long i = 0;\n    " + storeStmt(dst, "d", "i", value) + "\n";
    std::string body;
    body +=
        "__kernel void copy_contig(__global char* db, ulong doff, __global const char* sb,\n"
        "                          ulong soff, long n) {\n";
    body += "  __global " + dst_t + "* d = (__global " + dst_t + "*)(db + doff);\n";
    body += "  __global const " + src_t + "* s = (__global const " + src_t + "*)(sb + soff);\n";
    body += bounded("i") + "  " + storeStmt(dst, "d", "i", value) + "\n}\n";
    if (blocks == CopyBlocks::kUnitRows) {
      body +=
          "__kernel void copy_strided(__global char* db, ulong doff, __global const char* sb,\n"
          "    ulong soff, long n, int ndim, OclStrides2 st, long tiles0, long tiles1) {\n";
      body += bounded("item") +
              "  long rem = item / tiles0;\n  const long t0 = item - rem * tiles0;\n"
              "  long od = 0, os = 0;\n" +
              decompose(1, "od", "os") +
              "  const long a0 = t0 * 64, e0 = min(a0 + 64, st.sizes[0]);\n" + dst_p + src_p +
              "  long i0 = a0;\n"
              "  for (; i0 + 16 <= e0; i0 += 16) vstore16(vload16(0, s + i0), 0, d + i0);\n"
              "  for (; i0 < e0; ++i0) d[i0] = s[i0];\n}\n";
    } else if (blocks == CopyBlocks::kElements) {
      body +=
          "__kernel void copy_strided(__global char* db, ulong doff, __global const char* sb,\n"
          "    ulong soff, long n, int ndim, OclStrides2 st) {\n";
      body += bounded("li") + "  long rem = li, od = 0, os = 0;\n" + decompose(0, "od", "os");
      body += "  {\n" + dst_p + src_p + store + "  }\n}\n";
    } else {
      // Item = (outer position, tile along dim 1, tile along dim 0), dim 0 fastest.
      body += "#define T0 " + std::to_string(kTile0(blocks)) + "\n#define T1 " +
              std::to_string(kTile1(blocks)) +
              "\n"
              "__kernel void copy_strided(__global char* db, ulong doff, __global const char* sb,\n"
              "    ulong soff, long n, int ndim, OclStrides2 st, long tiles0, long tiles1) {\n";
      body += bounded("item") +
              "  long rest = item / tiles0;\n  const long t0 = item - rest * tiles0;\n"
              "  long rem = rest / tiles1;\n  const long t1 = rest - rem * tiles1;\n"
              "  long bd = 0, bs = 0;\n" +
              decompose(2, "bd", "bs") +
              "  const long a0 = t0 * T0, e0 = min(a0 + T0, st.sizes[0]);\n"
              "  const long a1 = t1 * T1, e1 = min(a1 + T1, st.sizes[1]);\n"
              "  for (long i1 = a1; i1 < e1; ++i1) {\n"
              "    for (long i0 = a0; i0 < e0; ++i0) {\n"
              "    const long od = bd + i1 * st.strides[0][1] + i0 * st.strides[0][0];\n"
              "    const long os = bs + i1 * st.strides[1][1] + i0 * st.strides[1][0];\n";
      body += dst_p + src_p + store + "    }\n  }\n}\n";
    }
    return rt::ProgramSource{
        std::string("copy<") + c10::toString(src) + "->" + c10::toString(dst) + ">",
        withPrelude(body), ""};
  });
}

char kWordCopyFamily;

// Large contiguous device-to-device copies on CPU drivers: PoCL's clEnqueueCopyBuffer copies on
// one thread (16 MiB: 0.65 ms); a work item per block of 32-bit words in uint16 vectors, on all
// the driver's threads, takes half of that (cpvec.py: 1.6x at 4 MiB, 2.0x at 16 MiB, 1.5x at
// 64 MiB; equal at 1 MiB, slower below).
constexpr size_t kWordCopyMinBytes = size_t{2} << 20;

bool wordCopy(const rt::Device& dev, const rt::BufferRef& s, const rt::BufferRef& d, size_t bytes) {
  return bytes >= kWordCopyMinBytes && bytes % 4 == 0 && s.offset % 4 == 0 && d.offset % 4 == 0 &&
         codegen::preferItemReductions(dev.info());
}

void enqueueWordCopy(c10::DeviceIndex idx, cl_command_queue q, const rt::BufferRef& s,
                     const rt::BufferRef& d, size_t bytes) {
  cl_program prog = programs(idx).get({&kWordCopyFamily, 0}, [] {
    return rt::ProgramSource{
        "copy<words>",
        withPrelude("__kernel void copy_words(__global char* db, ulong doff, __global const char* "
                    "sb, ulong soff, long n, long blk) {\n"
                    "  __global uint* d = (__global uint*)(db + doff);\n"
                    "  __global const uint* s = (__global const uint*)(sb + soff);\n"
                    "  const long e0 = get_global_id(0) * blk, e1 = min(e0 + blk, n);\n"
                    "  long e = e0;\n"
                    "  for (; e + 16 <= e1; e += 16) vstore16(vload16(0, s + e), 0, d + e);\n"
                    "  for (; e < e1; ++e) d[e] = s[e];\n"
                    "}\n"),
        ""};
  });
  cl_kernel k = programs(idx).kernel(prog, "copy_words");
  const int64_t n = static_cast<int64_t>(bytes / 4);
  // About 32 blocks of whole vectors, each 2048 to 65536 words.
  const int64_t blk = std::clamp<int64_t>((n / 32 + 15) / 16 * 16, 2048, 65536);
  cl_uint a = 0;
  setArg(k, a, d);
  setArg(k, a, s);
  setArg(k, a, static_cast<cl_long>(n));
  setArg(k, a, static_cast<cl_long>(blk));
  const size_t global = static_cast<size_t>((n + blk - 1) / blk), local = 1;
  launchKernelAs(q, k, 1, &global, &local, CommandKind::kMemcpy, command_names::kMemcpyDtoD);
}

bool isPinned(const at::Tensor& t) {
  return rt::PinnedHostMemory::isPinned(t.storage().data());
}

// Same device, any layout and dtypes.
void copyOnDevice(const at::Tensor& dst, const at::Tensor& src) {
  const c10::DeviceIndex idx = dst.device().index();
  checkStorageDtypeSupported(dst.scalar_type(), idx);
  checkStorageDtypeSupported(src.scalar_type(), idx);
  rt::Device& dev = device(idx);
  cl_command_queue q = currentQueue(idx);
  if (dst.scalar_type() == src.scalar_type() && dst.is_contiguous() && src.is_contiguous() &&
      dst.sizes() == src.sizes()) {
    if (dst.is_alias_of(src) && dst.storage_offset() == src.storage_offset()) return;
    at::assert_no_overlap(dst, src);
    rt::BufferRef d = bufferOf(dst), s = bufferOf(src);
    OCL_TRY
    if (wordCopy(dev, s, d, dst.nbytes())) {
      enqueueWordCopy(idx, q, s, d, dst.nbytes());
    } else {
      ProfiledCommand pc(CommandKind::kMemcpy, command_names::kMemcpyDtoD);
      enqueueCopyBuffer(q, s, d, dst.nbytes(), pc.event());
    }
    OCL_CATCH
    return;
  }
  auto iter = at::TensorIteratorConfig()
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .check_all_same_device(false)
                  .build();
  if (iter.numel() == 0) return;
  const bool contiguous = iter.is_contiguous();
  CopyBlocks blocks = CopyBlocks::kElements;
  if (!contiguous && codegen::preferItemReductions(dev.info())) {
    blocks = iter.ndim() >= 2 && iter.strides(1)[1] == iter.element_size(1) &&
                     iter.strides(1)[0] != iter.element_size(1)
                 ? CopyBlocks::kTiles
                 : CopyBlocks::kRows;
    if (blocks == CopyBlocks::kRows && dst.scalar_type() == src.scalar_type() &&
        !c10::isComplexType(dst.scalar_type()) && iter.shape()[0] >= 16 &&
        iter.strides(0)[0] == iter.element_size(0) && iter.strides(1)[0] == iter.element_size(1))
      blocks = CopyBlocks::kUnitRows;
  }
  cl_program prog = copyProgram(idx, dst.scalar_type(), src.scalar_type(), blocks);
  rt::BufferRef d = resolvePtr(iter.data_ptr(0)), s = resolvePtr(iter.data_ptr(1));
  OCL_TRY
  if (contiguous) {
    cl_kernel k = programs(idx).kernel(prog, "copy_contig");
    setArgs(k, d, s, static_cast<cl_long>(iter.numel()));
    launch1D(dev, q, k, iter.numel());
  } else if (blocks == CopyBlocks::kElements) {
    cl_kernel k = programs(idx).kernel(prog, "copy_strided");
    setArgs(k, d, s, static_cast<cl_long>(iter.numel()), static_cast<cl_int>(iter.ndim()),
            stridesOf(iter));
    launch1D(dev, q, k, iter.numel());
  } else {
    OclStrides2 st = stridesOf(iter);
    const int ndim = std::max(iter.ndim(), 2);
    if (iter.ndim() < 2) st.sizes[1] = 1;  // one row
    const int64_t tiles0 = (st.sizes[0] + kTile0(blocks) - 1) / kTile0(blocks);
    const int64_t tiles1 = (st.sizes[1] + kTile1(blocks) - 1) / kTile1(blocks);
    const int64_t items = iter.numel() / (st.sizes[0] * st.sizes[1]) * tiles0 * tiles1;
    cl_kernel k = programs(idx).kernel(prog, "copy_strided");
    setArgs(k, d, s, static_cast<cl_long>(items), static_cast<cl_int>(ndim), st,
            static_cast<cl_long>(tiles0), static_cast<cl_long>(tiles1));
    launch1D(dev, q, k, items);
  }
  OCL_CATCH
}

bool deviceHolds(c10::ScalarType t, c10::DeviceIndex idx) {
  if (t == c10::kDouble || t == c10::kComplexDouble) return device(idx).info().fp64;
  return true;
}

void copyHostToDevice(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  const c10::DeviceIndex idx = dst.device().index();
  checkStorageDtypeSupported(dst.scalar_type(), idx);
  // A dtype the device cannot hold is converted on the host; others convert on the device.
  at::Tensor host = deviceHolds(src.scalar_type(), idx) ? src : src.to(dst.scalar_type());
  if (!(host.scalar_type() == dst.scalar_type() && dst.is_contiguous() && host.is_contiguous() &&
        dst.sizes() == host.sizes())) {
    at::Tensor staging = at::empty(host.sizes(), host.options().device(dst.device()));
    copyHostToDevice(staging, host.contiguous(), false);
    copyOnDevice(dst, staging);
    return;
  }
  rt::BufferRef d = bufferOf(dst);
  c10::Stream stream = currentStream(idx);
  const bool pinned = isPinned(host);
  const bool async = non_blocking && pinned;
  rt::CommandGraph* graph = rt::capture::graphOf(queueOf(stream));
  // A captured write reads its host memory again at every replay (as CUDA graphs do), so only
  // pinned memory, which the graph keeps alive, can be captured.
  if (graph && !pinned)
    refuseCapture(queueOf(stream),
                  "a copy from pageable CPU memory to ocl (copy_/to); copy from pinned memory "
                  "(pin_memory()), or make the tensor before the capture,");
  OCL_TRY
  ProfiledCommand pc(CommandKind::kMemcpy, command_names::kMemcpyHtoD);
  OCL_CHECK(clEnqueueWriteBuffer(queueOf(stream), d.mem, async ? CL_FALSE : CL_TRUE, d.offset,
                                 dst.nbytes(), host.const_data_ptr(), 0, nullptr, pc.event()));
  OCL_CATCH
  if (graph)
    graph->addWrite(d.mem, d.offset, dst.nbytes(), host.const_data_ptr(),
                    std::make_shared<c10::Storage>(host.storage()));
  if (async) {
    // The pinned block must not be reused before the write has read it.
    recordHostUse(host.storage().mutable_data(), host.storage().data_ptr().get_context(), stream);
    OCL_TRY
    OCL_CHECK(clFlush(queueOf(stream)));
    OCL_CATCH
  }
}

void copyDeviceToHost(const at::Tensor& dst, const at::Tensor& src, bool non_blocking) {
  const c10::DeviceIndex idx = src.device().index();
  if (!(src.scalar_type() == dst.scalar_type() && dst.is_contiguous() && src.is_contiguous() &&
        dst.sizes() == src.sizes())) {
    // Convert and gather on the device into a contiguous buffer, then one read.
    c10::ScalarType staging_t =
        deviceHolds(dst.scalar_type(), idx) ? dst.scalar_type() : src.scalar_type();
    at::Tensor staging = at::empty(dst.sizes(), src.options().dtype(staging_t));
    copyOnDevice(staging, src);
    if (staging_t == dst.scalar_type() && dst.is_contiguous()) {
      copyDeviceToHost(dst, staging, non_blocking);
    } else {
      at::Tensor host = at::empty(dst.sizes(), dst.options().dtype(staging_t));
      copyDeviceToHost(host, staging, false);
      dst.copy_(host);
    }
    return;
  }
  rt::BufferRef s = bufferOf(src);
  const bool async = non_blocking && isPinned(dst);
  // The host acts on what it reads, and a replay would not read again.
  refuseCapture(currentQueue(idx),
                "a copy from ocl to CPU memory (.cpu(), .item(), .tolist(), printing, or an op "
                "that reads a data-dependent size)");
  OCL_TRY {
    ProfiledCommand pc(CommandKind::kMemcpy, command_names::kMemcpyDtoH);
    OCL_CHECK(clEnqueueReadBuffer(currentQueue(idx), s.mem, async ? CL_FALSE : CL_TRUE, s.offset,
                                  src.nbytes(), dst.mutable_data_ptr(), 0, nullptr, pc.event()));
  }
  if (async) OCL_CHECK(clFlush(currentQueue(idx)));
  OCL_CATCH
  // A blocking read is a synchronisation point: report index errors of the kernels before it.
  if (!async) checkDeviceErrors(idx, currentQueue(idx), /*whole_device=*/false);
}

}  // namespace

at::Tensor copyFromMathBits(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);

at::Tensor copyFrom(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  // A source whose conjugate / negative bit the Conjugate / Negative kernels below did not see:
  // a TorchDispatchMode (AOTAutograd's runtime wrappers run compiled graphs under one) hands
  // copy_'s _copy_from to this kernel with the bit still set.
  if (self.is_conj() || self.is_neg()) return copyFromMathBits(self, dst, non_blocking);
  // copy_ hands the source over unbroadcast; it must broadcast to the destination, as on CPU.
  TORCH_CHECK(at::is_expandable_to(self.sizes(), dst.sizes()), "copy_: the source of shape ",
              self.sizes(), " cannot be broadcast to the destination's shape ", dst.sizes());
  if (dst.numel() == 0) return dst;
  const bool src_dev = self.device().type() == kOcl, dst_dev = dst.device().type() == kOcl;
  at::Tensor src = self.sizes() == dst.sizes() ? self : self.expand(dst.sizes());
  if (!src_dev && dst_dev) {
    copyHostToDevice(dst, src, non_blocking);
  } else if (src_dev && !dst_dev) {
    TORCH_CHECK(dst.device().is_cpu(), "torch-ocl: cannot copy from ocl to ", dst.device());
    copyDeviceToHost(dst, src, non_blocking);
  } else if (src.device() == dst.device()) {
    copyOnDevice(dst, src);
  } else {
    // Two ocl devices have separate OpenCL contexts: go through (pinned when asked) host memory.
    at::Tensor host =
        at::empty(src.sizes(), src.options().device(at::kCPU).pinned_memory(non_blocking));
    copyDeviceToHost(host, src, false);
    copyHostToDevice(dst, host, false);
  }
  return dst;
}

// Copies that resolve a source's conjugate / negative bit on the device (dst = conj(src), -src or
// -conj(src)), converting to dst's dtype on the way.
using codegen::Domain;
const codegen::PointwiseOp kResolveConj{"resolve_conj", "a",     "a",     Domain::kAll,
                                        false,          nullptr, nullptr, "ocl_cconj(a)"};
const codegen::PointwiseOp kResolveNeg{"resolve_neg", "-a",    "-a",    Domain::kAll,
                                       false,         nullptr, nullptr, "-a"};
const codegen::PointwiseOp kResolveConjNeg{
    "resolve_conj_neg", "-a", "-a", Domain::kAll, false, nullptr, nullptr, "-ocl_cconj(a)"};

// A source with the conjugate or negative bit (a lazy conj()/neg view). ATen's math-bit fallback
// would materialise it with a clone, and clone copies through _copy_from again: for an ocl source
// that recursed until the stack overflowed. The bits are resolved here instead: between tensors
// of one ocl device by a kernel that reads the source as stored (without its bits); otherwise the
// source is read to the host as stored and resolved there (the bytes cross anyway).
at::Tensor copyFromMathBits(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(!dst.is_conj() && !dst.is_neg(),
              "torch-ocl: copying into a conjugate or negative view is not supported; resolve "
              "it first (resolve_conj() / resolve_neg())");
  at::Tensor src;
  if (self.device().type() == kOcl) {
    at::Tensor raw = at::empty({0}, self.options())
                         .set_(self.storage(), self.storage_offset(), self.sizes(), self.strides());
    if (dst.device() == self.device()) {
      const bool conj = self.is_conj(), neg = self.is_neg();
      const codegen::PointwiseOp& op = conj && neg ? kResolveConjNeg
                                       : conj      ? kResolveConj
                                                   : kResolveNeg;
      auto iter = at::TensorIteratorConfig()
                      .check_all_same_dtype(false)
                      .resize_outputs(false)
                      .add_output(dst)
                      .add_const_input(raw)
                      .build();
      codegen::launch(op, iter, raw.scalar_type());
      return dst;
    }
    at::Tensor host = at::empty(raw.sizes(), raw.options().device(at::kCPU));
    copyFrom(raw, host, false);
    if (self.is_conj()) host = host.conj();
    if (self.is_neg()) host = host._neg_view();
    src = host.resolve_conj().resolve_neg();
  } else {
    src = self.resolve_conj().resolve_neg();
  }
  return copyFrom(src, dst, false);
}

TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", TORCH_FN(copyFromMathBits));
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", TORCH_FN(copyFromMathBits));
}

at::Tensor copyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copyFrom(self, dst, false);
}

at::Scalar localScalarDense(const at::Tensor& self) {
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  copyDeviceToHost(host, self.reshape({}), false);
  return host.item();
}

}  // namespace torch_ocl::aten
