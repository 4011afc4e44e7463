// Advanced indexing: index.Tensor, index_put_ (with and without accumulate), masked_fill,
// nonzero, masked_select, masked_scatter_, flip. index and index_put_ run PyTorch's own
// implementations (AdvancedIndex, TensorIterator, the masked_fill shortcut) and reach our kernel
// through ATen's index/index_put dispatch stubs; every index is checked on the device.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/IndexKernel.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorAdvancedIndexing.h>
#include <ATen/ops/_index_put_impl_native.h>
#include <ATen/ops/index_native.h>
#include <ATen/ops/masked_fill_native.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/index_kernels.h"
#include "aten/launch.h"
#include "aten/structured.h"
#include "codegen/pointwise.h"

namespace torch_ocl::aten {
namespace {

char kIndexFamily;
char kNonzeroFamily;

constexpr int kMaxIndices = 4;  // indexed dimensions one kernel takes (kernel argument space)

enum class IndexMode : int { kGet, kPut, kAccumulate };

// Operands of the iterator: 0 output (index: result; index_put: restrided self), 1 input
// (index: restrided self; index_put: values), then one int64 index tensor per indexed dim.
struct alignas(8) IndexGeom {
  cl_long sizes[kMaxDims];
  cl_long strides[2 + kMaxIndices][kMaxDims];  // byte strides
  cl_long isizes[kMaxIndices];
  cl_long istrides[kMaxIndices];  // byte strides of the indexed dims
};

void launchIndex(IndexMode mode, const at::TensorIteratorBase& iter, at::IntArrayRef sizes,
                 at::IntArrayRef strides) {
  const int nidx = static_cast<int>(sizes.size());
  TORCH_CHECK(nidx <= kMaxIndices, "torch-ocl: indexing with more than ", kMaxIndices,
              " index tensors is not supported yet");
  TORCH_CHECK(iter.ndim() <= kMaxDims, "torch-ocl: at most ", kMaxDims,
              " dimensions after coalescing are supported");
  if (iter.numel() == 0) return;
  const c10::DeviceIndex idx = iter.device(0).index();
  for (int i = 0; i < iter.ntensors(); ++i)
    TORCH_CHECK(iter.device(i) == iter.device(0),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                iter.device(0), " and ", iter.device(i), "!");
  const c10::ScalarType t = iter.dtype(0);
  checkDtypeSupported(t, idx);
  const uint64_t variant =
      dtypeCode(t) | (static_cast<uint64_t>(mode) << 6) | (static_cast<uint64_t>(nidx) << 8);
  cl_program prog = programs(idx).get({&kIndexFamily, variant}, [&] {
    const std::string st = clStorageType(t);
    const int nops = 2 + nidx;
    std::string s;
    if (mode == IndexMode::kAccumulate) {
      if (c10::elementSize(t) == 8)
        s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
      s += rmwSource(GsMode::kAdd, t);
    }
    s += deviceCheckSource();
    s += "typedef struct { long sizes[OCL_MAX_DIMS]; long strides[" +
         std::to_string(2 + kMaxIndices) + "][OCL_MAX_DIMS]; long isizes[" +
         std::to_string(kMaxIndices) + "]; long istrides[" + std::to_string(kMaxIndices) +
         "]; } IndexGeom;\n";
    s += "__kernel void index_kernel(__global char* p0, ulong off0, __global char* p1, ulong off1";
    for (int i = 2; i < nops; ++i)
      s += ", __global const char* p" + std::to_string(i) + ", ulong off" + std::to_string(i);
    s += ", long n, int ndim, int op, __global char* rb, ulong roff, IndexGeom g) {\n"
         "  const long li = get_global_id(0);\n  if (li >= n) return;\n  long rem = li";
    for (int i = 0; i < nops; ++i) s += ", o" + std::to_string(i) + " = 0";
    s += ";\n  for (int k = 0; k < ndim; ++k) {\n"
         "    const long c = rem % g.sizes[k];\n    rem /= g.sizes[k];\n";
    for (int i = 0; i < nops; ++i)
      s += "    o" + std::to_string(i) + " += c * g.strides[" + std::to_string(i) + "][k];\n";
    s += "  }\n  long off = 0;\n  int ok = 1;\n"
         "  __global int* rec = (__global int*)(rb + roff);\n";
    for (int k = 0; k < nidx; ++k) {
      const std::string p = std::to_string(k + 2), ks = std::to_string(k);
      s += "  {\n    const long j = ocl_checked_index(*(__global const long*)(p" + p + " + off" +
           p + " + o" + p + "), g.isizes[" + ks + "], 1, rec, op, " + ks + ");\n";
      s += "    if (j < 0) ok = 0; else off += j * g.istrides[" + ks + "];\n  }\n";
    }
    s += "  __global " + st + "* out = (__global " + st + "*)(p0 + off0 + o0);\n";
    s += "  __global " + st + "* in = (__global " + st + "*)(p1 + off1 + o1);\n";
    switch (mode) {
      case IndexMode::kGet:
        s += "  *out = ok ? *(__global " + st + "*)((__global char*)in + off) : (" + st + ")0;\n";
        break;
      case IndexMode::kPut:
        s += "  if (ok) *(__global " + st + "*)((__global char*)out + off) = *in;\n";
        break;
      case IndexMode::kAccumulate:
        s += "  if (ok) ocl_rmw((__global " + st + "*)((__global char*)out + off), " +
             loadExpr(t, "in", "0") + ");\n";
        break;
    }
    s += "}\n";
    return rt::ProgramSource{std::string("index<") + c10::toString(t) + ">", withPrelude(s), ""};
  });
  IndexGeom g{};
  for (int d = 0; d < iter.ndim(); ++d) {
    g.sizes[d] = iter.shape()[d];
    for (int i = 0; i < iter.ntensors(); ++i) g.strides[i][d] = iter.strides(i)[d];
  }
  for (int k = 0; k < nidx; ++k) {
    g.isizes[k] = sizes[k];
    g.istrides[k] = strides[k];
  }
  const rt::BufferRef rec = deviceErrorRecord(idx);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "index_kernel");
  cl_uint a = 0;
  for (int i = 0; i < iter.ntensors(); ++i) setArg(k, a, resolvePtr(iter.data_ptr(i)));
  setArg(k, a, static_cast<cl_long>(iter.numel()));
  setArg(k, a, static_cast<cl_int>(iter.ndim()));
  setArg(k, a,
         static_cast<cl_int>(mode == IndexMode::kGet ? CheckedOp::kIndex : CheckedOp::kIndexPut));
  setArg(k, a, rec);
  setArg(k, a, g);
  launch1D(device(idx), currentQueue(idx), k, iter.numel());
  OCL_CATCH
}

void indexStub(at::TensorIteratorBase& iter, at::IntArrayRef sizes, at::IntArrayRef strides) {
  launchIndex(IndexMode::kGet, iter, sizes, strides);
}
void indexPutStub(at::TensorIterator& iter, at::IntArrayRef sizes, at::IntArrayRef strides,
                  bool accumulate) {
  launchIndex(accumulate ? IndexMode::kAccumulate : IndexMode::kPut, iter, sizes, strides);
}

// masked_fill_: self = mask ? value : self, through the pointwise generator.
// Complex: the mask arrives as a complex (b, 0), so only its real part is tested.
const codegen::PointwiseOp kMaskedFill{"masked_fill",
                                       "(b != 0) ? s0 : a",
                                       "(b != 0) ? s0 : a",
                                       codegen::Domain::kAll,
                                       false,
                                       nullptr,
                                       nullptr,
                                       "(b.x != (R)0) ? s0 : a"};
void maskedFillStub(at::TensorIterator& iter, const c10::Scalar& value) {
  const at::Tensor& self = iter.tensor(0);
  auto it = at::TensorIteratorConfig()
                .set_check_mem_overlap(false)
                .check_all_same_dtype(false)
                .resize_outputs(false)
                .add_output(self)
                .add_const_input(self)
                .add_const_input(iter.tensor(1))
                .build();
  codegen::launch(kMaskedFill, it, self.scalar_type(), {value, 0});
}

// index_put_ with accumulate (ATen routes non-CPU devices here): the element offsets of self,
// indexed like self (our index kernel: masks, broadcasting, wrapping, device-side checks), give
// the target of every value; then one atomic accumulation (or a plain store) per value.
void indexPutWithSortStub(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                          const at::Tensor& value, bool accumulate, bool /*unsafe*/) {
  TORCH_CHECK(value.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes match, got ",
              self.scalar_type(), " for the destination and ", value.scalar_type(),
              " for the source.");
  if (self.numel() == 0) return;
  at::Tensor offsets = at::empty(self.sizes(), self.options().dtype(c10::kLong));
  launchElementOffsets(offsets, self);
  const at::Tensor pos = offsets.index(indices);
  TORCH_CHECK_INDEX(at::is_expandable_to(value.sizes(), pos.sizes()),
                    "shape mismatch: value tensor of shape ", value.sizes(),
                    " cannot be broadcast to indexing result of shape ", pos.sizes());
  if (pos.numel() == 0) return;
  int64_t span = 1;
  for (int64_t d = 0; d < self.dim(); ++d) span += (self.size(d) - 1) * self.stride(d);
  const at::Tensor flat = self.as_strided({span}, {1});
  const at::Tensor pos1 = pos.reshape({-1});
  const at::Tensor vals = value.expand(pos.sizes()).reshape({-1});
  launchGatherScatter(accumulate ? GsMode::kAdd : GsMode::kScatter, CheckedOp::kIndexPut, vals,
                      pos1, flat, 0, false);
}

}  // namespace

OCL_REGISTER_STUB(index_put_with_sort_stub, &indexPutWithSortStub)
OCL_REGISTER_STUB(index_stub, &indexStub)
OCL_REGISTER_STUB(index_put_stub, &indexPutStub)
OCL_REGISTER_STUB(masked_fill_stub, &maskedFillStub)

namespace {

bool countedIndices(const c10::List<std::optional<at::Tensor>>& indices) {
  int64_t n = 0;
  for (const std::optional<at::Tensor>& i : indices) {
    if (!i.has_value() || !i->defined()) continue;
    n += (i->scalar_type() == c10::kBool || i->scalar_type() == c10::kByte) ? i->dim() : 1;
  }
  return n <= kMaxIndices;
}

bool accumulateOk(const at::Tensor& self) {
  return gatherScatterSupported(GsMode::kAdd, self.scalar_type(), self.device().index());
}

at::Tensor& indexOut(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                     at::Tensor& out) {
  if (!countedIndices(indices)) {
    runFallback("aten::index", "Tensor_out", {self, indices, out});
    return out;
  }
  Structured<at::native::structured_index_out> s(Mode::kOut, &out);
  const auto pre = s.meta(self, at::IOptTensorListRef(indices));
  s.impl(self, pre.sizes, pre.strides, out);
  return out;
}

at::Tensor indexFn(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  if (!countedIndices(indices))
    return runFallback("aten::index", "Tensor", {self, indices})[0].toTensor();
  Structured<at::native::structured_index_out> s(Mode::kFunctional, nullptr);
  const auto pre = s.meta(self, at::IOptTensorListRef(indices));
  s.impl(self, pre.sizes, pre.strides, s.output());
  return s.output();
}

at::Tensor& indexPutImpl(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                         const at::Tensor& values, bool accumulate, bool unsafe) {
  if (!countedIndices(indices) || (accumulate && !accumulateOk(self))) {
    runFallback("aten::_index_put_impl_", "", {self, indices, values, accumulate, unsafe});
    return self;
  }
  return at::native::_index_put_impl_(self, indices, values, accumulate, unsafe);
}

at::Tensor& maskedFillScalar(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  checkSameDevice({self, mask});
  return at::native::masked_fill__cpu(self, mask, value);
}
at::Tensor& maskedFillTensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  checkSameDevice({self, mask});
  return at::native::masked_fill__cpu(self, mask, value);
}

// ---- nonzero ------------------------------------------------------------------------------------

constexpr int64_t kNonzeroBlock = 256;  // elements one work item scans

cl_program nonzeroProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kNonzeroFamily, dtypeCode(t)}, [&] {
    const std::string st = clStorageType(t);
    const std::string load = loadExpr(t, "x", "i");
    const std::string nz = c10::isComplexType(t) ? "(v.x != 0 || v.y != 0)" : "(v != 0)";
    std::string s;
    s += "typedef struct { long sizes[OCL_MAX_DIMS]; } NzShape;\n";
    s += "inline int nz_at(__global const " + st + "* x, long i) {\n  const " + clComputeType(t) +
         " v = " + load + ";\n  return " + nz + ";\n}\n";
    s += "__kernel void nz_count(__global const char* xb, ulong xoff, long n, long block,\n"
         "                       __global char* cb, ulong coff) {\n"
         "  const long b = get_global_id(0);\n  const long start = b * block;\n"
         "  if (start >= n) return;\n  const long end = min(n, start + block);\n"
         "  __global const " +
         st + "* x = (__global const " + st +
         "*)(xb + xoff);\n"
         "  long c = 0;\n  for (long i = start; i < end; ++i) c += nz_at(x, i);\n"
         "  ((__global long*)(cb + coff))[b] = c;\n}\n";
    // Exclusive scan of the block counts; counts[nb] receives the total.
    s +=
        "__kernel void nz_scan(__global char* cb, ulong coff, long nb) {\n"
        "  if (get_global_id(0) != 0) return;\n"
        "  __global long* counts = (__global long*)(cb + coff);\n  long acc = 0;\n"
        "  for (long b = 0; b < nb; ++b) { const long c = counts[b]; counts[b] = acc; acc += c; }\n"
        "  counts[nb] = acc;\n}\n";
    s += "__kernel void nz_write(__global const char* xb, ulong xoff, long n, long block,\n"
         "    __global const char* cb, ulong coff, __global char* ob, ulong ooff, int ndim,\n"
         "    NzShape sh) {\n"
         "  const long b = get_global_id(0);\n  const long start = b * block;\n"
         "  if (start >= n) return;\n  const long end = min(n, start + block);\n"
         "  __global const " +
         st + "* x = (__global const " + st +
         "*)(xb + xoff);\n"
         "  __global long* out = (__global long*)(ob + ooff);\n"
         "  long row = ((__global const long*)(cb + coff))[b];\n"
         "  for (long i = start; i < end; ++i) {\n"
         "    if (!nz_at(x, i)) continue;\n"
         "    long rem = i;\n"
         "    for (int d = ndim - 1; d >= 0; --d) {\n"
         "      out[row * ndim + d] = rem % sh.sizes[d];\n      rem /= sh.sizes[d];\n    }\n"
         "    ++row;\n  }\n}\n";
    return rt::ProgramSource{std::string("nonzero<") + c10::toString(t) + ">", withPrelude(s), ""};
  });
}

struct alignas(8) NzShape {
  cl_long sizes[kMaxDims];
};

at::Tensor& nonzeroOut(const at::Tensor& self, at::Tensor& out) {
  checkSameDevice({self, out});
  TORCH_CHECK(out.scalar_type() == c10::kLong, "nonzero: Expected out tensor to have scalar type ",
              c10::kLong, " but got scalar type", out.scalar_type());
  TORCH_CHECK(self.numel() < std::numeric_limits<int>::max(),
              "nonzero is not supported for tensors with more than INT_MAX elements");
  TORCH_CHECK(self.dim() <= kMaxDims, "nonzero: at most ", kMaxDims, " dimensions on ocl");
  const c10::DeviceIndex idx = self.device().index();
  const int64_t n = self.numel(), nd = self.dim();
  if (n == 0) {
    at::native::resize_output(out, {0, nd});
    return out;
  }
  checkDtypeSupported(self.scalar_type(), idx);
  const at::Tensor x = self.contiguous();
  const int64_t nb = (n + kNonzeroBlock - 1) / kNonzeroBlock;
  at::Tensor counts = at::empty({nb + 1}, self.options().dtype(c10::kLong));
  cl_program prog = nonzeroProgram(idx, self.scalar_type());
  rt::Device& dev = device(idx);
  cl_command_queue q = currentQueue(idx);
  const rt::BufferRef xb = bufferOf(x), cb = bufferOf(counts);
  cl_long total = 0;
  OCL_TRY
  cl_kernel kc = programs(idx).kernel(prog, "nz_count");
  setArgs(kc, xb, static_cast<cl_long>(n), static_cast<cl_long>(kNonzeroBlock), cb);
  launch1D(dev, q, kc, nb);
  cl_kernel ks = programs(idx).kernel(prog, "nz_scan");
  setArgs(ks, cb, static_cast<cl_long>(nb));
  launch1D(dev, q, ks, 1);
  // The one readback of a data-dependent size (CUDA's nonzero does the same).
  refuseCapture(q, "nonzero (it reads a data-dependent size back to the host)");
  OCL_CHECK(clEnqueueReadBuffer(q, cb.mem, CL_TRUE, cb.offset + nb * sizeof(cl_long),
                                sizeof(cl_long), &total, 0, nullptr, nullptr));
  OCL_CATCH
  at::native::resize_output(out, {total, nd});
  if (total == 0 || nd == 0) return out;
  at::Tensor result = out.is_contiguous() ? out : at::empty({total, nd}, out.options());
  NzShape sh{};
  for (int64_t d = 0; d < nd; ++d) sh.sizes[d] = self.size(d);
  OCL_TRY
  cl_kernel kw = programs(idx).kernel(prog, "nz_write");
  setArgs(kw, xb, static_cast<cl_long>(n), static_cast<cl_long>(kNonzeroBlock), cb,
          bufferOf(result), static_cast<cl_int>(nd), sh);
  launch1D(dev, q, kw, nb);
  OCL_CATCH
  if (!result.is_same(out)) out.copy_(result);
  return out;
}

at::Tensor nonzeroFn(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(c10::kLong));
  return nonzeroOut(self, out);
}

// ---- masked_select / masked_scatter_ ------------------------------------------------------------

at::Tensor& maskedSelectOut(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "masked_select: expected BoolTensor for mask");
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "masked_select(): self and result must have the same scalar type");
  checkSameDevice({self, mask, out});
  // As CUDA does it: the mask becomes index tensors (nonzero), then one gather. A 0-dim self or
  // mask is viewed as 1-dim first (a 0-dim tensor cannot be indexed by a mask).
  const at::Tensor mask1 = mask.dim() == 0 ? mask.unsqueeze(0) : mask;
  const at::Tensor self1 = self.dim() == 0 ? self.unsqueeze(0) : self;
  auto [m, s] = at::expand_outplace(mask1, self1);
  at::index_out(out, *s, c10::List<std::optional<at::Tensor>>({*m}));
  return out;
}

at::Tensor maskedSelectFn(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out = at::empty({0}, self.options());
  return maskedSelectOut(self, mask, out);
}

at::Tensor& maskedScatterInplace(at::Tensor& self, const at::Tensor& mask,
                                 const at::Tensor& source) {
  checkSameDevice({self, mask, source});
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter_: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  TORCH_CHECK(mask.scalar_type() == c10::kBool,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  const at::Tensor m = *at::expand_inplace(self, mask, "masked_scatter_");
  if (self.numel() == 0) return self;
  at::Tensor flat_self = self.dim() == 0 ? self.view({1}) : self;
  const at::Tensor positions = at::nonzero(m.dim() == 0 ? m.reshape({1}) : m);
  const int64_t count = positions.size(0);
  TORCH_CHECK(source.numel() >= count,
              "masked_scatter: expected source to have at least as many elements as ones in "
              "mask, but got ",
              source.numel(), " and ", count);
  if (count == 0) return self;
  c10::List<std::optional<at::Tensor>> cols;
  for (int64_t d = 0; d < flat_self.dim(); ++d) cols.push_back(positions.select(1, d));
  flat_self.index_put_(cols, source.reshape({-1}).narrow(0, 0, count));
  return self;
}

// ---- flip ---------------------------------------------------------------------------------------

at::Tensor flipFn(const at::Tensor& self, at::IntArrayRef dims) {
  const auto flags = at::dim_list_to_bitset(dims, self.dim());
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Preserve);
  if (out.numel() == 0) return out;
  if (self.dim() == 0) {
    out.copy_(self);
    return out;
  }
  std::vector<int64_t> strides = self.strides().vec();
  int64_t base = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!flags[d]) continue;
    base += (self.size(d) - 1) * self.stride(d);
    strides[d] = -strides[d];
  }
  launchStridedCopy(out, self, base, strides);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_index_put_impl_", TORCH_FN(indexPutImpl));
  m.impl("index.Tensor", TORCH_FN(indexFn));
  m.impl("index.Tensor_out", TORCH_FN(indexOut));
  m.impl("masked_fill_.Scalar", TORCH_FN(maskedFillScalar));
  m.impl("masked_fill_.Tensor", TORCH_FN(maskedFillTensor));
  m.impl("flip", TORCH_FN(flipFn));
  m.impl("masked_scatter_", TORCH_FN(maskedScatterInplace));
  m.impl("masked_select", TORCH_FN(maskedSelectFn));
  m.impl("masked_select.out", TORCH_FN(maskedSelectOut));
  m.impl("nonzero", TORCH_FN(nonzeroFn));
  m.impl("nonzero.out", TORCH_FN(nonzeroOut));
}

}  // namespace torch_ocl::aten
