#include "aten/index_kernels.h"

#include <ATen/ATen.h>

#include "aten/cl_types.h"
#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

char kGatherScatterFamily;
char kStridedCopyFamily;
char kOffsetsFamily;

struct alignas(8) GsGeom {
  cl_long sizes[kMaxDims];
  cl_long strides[3][kMaxDims];  // element strides: direct, index, indexed
};

struct alignas(8) CopyGeom {
  cl_long sizes[kMaxDims];
  cl_long strides[2][kMaxDims];  // element strides: dst, src
};

bool is64(c10::ScalarType t) {
  return c10::elementSize(t) == 8;
}

// Compute-type <-> storage-type conversions of raw storage values.
std::string toCompute(c10::ScalarType t, const std::string& v) {
  if (t == c10::kHalf) return "ocl_h2f(" + v + ")";
  if (t == c10::kBFloat16) return "ocl_bf16_to_float(" + v + ")";
  return v;
}
std::string toStorage(c10::ScalarType t, const std::string& v) {
  if (t == c10::kHalf) return "ocl_f2h(" + v + ")";
  if (t == c10::kBFloat16) return "ocl_float_to_bf16(" + v + ")";
  return std::string("(") + clStorageType(t) + ")(" + v + ")";
}

std::string combineExpr(GsMode mode, c10::ScalarType t) {
  const bool fl = c10::isFloatingType(t);
  if (t == c10::kBool) {
    return mode == GsMode::kAdd || mode == GsMode::kMax ? "(uchar)(a || b)" : "(uchar)(a && b)";
  }
  switch (mode) {
    case GsMode::kAdd:
      return "a + b";
    case GsMode::kMul:
      return "a * b";
    case GsMode::kMax:
      return fl ? "(isnan(a) || isnan(b)) ? a + b : fmax(a, b)" : "max(a, b)";
    case GsMode::kMin:
      return fl ? "(isnan(a) || isnan(b)) ? a + b : fmin(a, b)" : "min(a, b)";
    default:
      TORCH_INTERNAL_ASSERT(false, "not a read-modify-write mode");
  }
}

const char* kHalfHelpers = R"CLC(
inline float ocl_h2f(ushort b) { return vload_half(0, (const __private half*)&b); }
inline ushort ocl_f2h(float f) { ushort b; vstore_half_rte(f, 0, (__private half*)&b); return b; }
)CLC";

}  // namespace

// Complex accumulation: a sum adds the real and imaginary parts with one atomic each (the parts
// are independent); a complex64 product swaps the whole 8-byte value at once.
static std::string complexRmwSource(GsMode mode, c10::ScalarType t) {
  const bool dbl = t == c10::kComplexDouble;
  const std::string st = clStorageType(t), rt = dbl ? "double" : "float";
  const std::string ut = dbl ? "ulong" : "uint", cas = dbl ? "atom_cmpxchg" : "atomic_cmpxchg";
  std::string s;
  if (dbl) s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
  if (mode == GsMode::kAdd) {
    s += "inline void ocl_rmw_part(__global " + rt + "* p, " + rt + " v) {\n";
    s += "  volatile __global " + ut + "* w = (volatile __global " + ut + "*)p;\n";
    s += "  " + ut + " old = *w, assumed;\n  do {\n    assumed = old;\n";
    s += "    old = " + cas + "(w, assumed, as_" + ut + "(as_" + rt + "(assumed) + v));\n";
    s += "  } while (old != assumed);\n}\n";
    s += "inline void ocl_rmw(__global " + st + "* p, " + st + " v) {\n";
    s += "  ocl_rmw_part((__global " + rt + "*)p, v.x);\n";
    s += "  ocl_rmw_part((__global " + rt + "*)p + 1, v.y);\n}\n";
    return s;
  }
  TORCH_INTERNAL_ASSERT(mode == GsMode::kMul && !dbl);
  s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
  s += "inline void ocl_rmw(__global float2* p, float2 v) {\n";
  s += "  volatile __global ulong* w = (volatile __global ulong*)p;\n";
  s += "  ulong old = *w, assumed;\n  do {\n    assumed = old;\n";
  s += "    const float2 a = as_float2(assumed);\n";
  s += "    const float2 r = (float2)(a.x * v.x - a.y * v.y, a.x * v.y + a.y * v.x);\n";
  s += "    old = atom_cmpxchg(w, assumed, as_ulong(r));\n";
  s += "  } while (old != assumed);\n}\n";
  return s;
}

std::string rmwSource(GsMode mode, c10::ScalarType t) {
  if (c10::isComplexType(t)) return complexRmwSource(mode, t);
  const std::string st = clStorageType(t), ct = clComputeType(t);
  const std::string combine = combineExpr(mode, t);
  std::string s = kHalfHelpers;
  s += "inline " + ct + " ocl_combine(" + ct + " a, " + ct + " b) { return " + combine + "; }\n";
  s += "inline void ocl_rmw(__global " + st + "* p, " + ct + " v) {\n";
  const size_t size = c10::elementSize(t);
  if (size == 4 || size == 8) {
    const std::string ut = size == 4 ? "uint" : "ulong";
    const std::string cas = size == 4 ? "atomic_cmpxchg" : "atom_cmpxchg";
    s += "  volatile __global " + ut + "* w = (volatile __global " + ut + "*)p;\n";
    s += "  " + ut + " old = *w, assumed;\n  do {\n    assumed = old;\n";
    s += "    const " + ct + " r = ocl_combine(" + toCompute(t, "as_" + st + "(assumed)") +
         ", v);\n";
    s += "    old = " + cas + "(w, assumed, as_" + ut + "(" + toStorage(t, "r") + "));\n";
    s += "  } while (old != assumed);\n}\n";
  } else {
    // 8- and 16-bit values: compare-and-swap on the aligned 32-bit word that holds them
    // (allocations are 512-byte aligned, so the word never leaves the buffer).
    const std::string mask = size == 1 ? "0xffu" : "0xffffu";
    s += "  const uintptr_t addr = (uintptr_t)p;\n";
    s += "  volatile __global uint* w = (volatile __global uint*)(addr & ~(uintptr_t)3);\n";
    s += "  const uint shift = (uint)(addr & 3) * 8u;\n";
    s += "  uint old = *w, assumed;\n  do {\n    assumed = old;\n";
    s += "    const " + st + " cur = (" + st + ")((assumed >> shift) & " + mask + ");\n";
    s += "    const " + ct + " r = ocl_combine(" + toCompute(t, "cur") + ", v);\n";
    s += "    const uint nv = ((uint)" + toStorage(t, "r") + ") & " + mask + ";\n";
    s += "    old = atomic_cmpxchg(w, assumed, (assumed & ~(" + mask +
         " << shift)) | (nv << shift));\n";
    s += "  } while (old != assumed);\n}\n";
  }
  return s;
}

bool gatherScatterSupported(GsMode mode, c10::ScalarType t, c10::DeviceIndex idx) {
  if (mode == GsMode::kGather || mode == GsMode::kScatter) return true;
  if (c10::isComplexType(t)) {
    const bool int64_atomics = device(idx).info().hasExtension("cl_khr_int64_base_atomics");
    if (mode == GsMode::kAdd) return t == c10::kComplexFloat || int64_atomics;
    return mode == GsMode::kMul && t == c10::kComplexFloat && int64_atomics;
  }
  if (is64(t)) return device(idx).info().hasExtension("cl_khr_int64_base_atomics");
  return true;
}

void launchGatherScatter(GsMode mode, CheckedOp op, const at::Tensor& direct,
                         const at::Tensor& index_in, const at::Tensor& indexed, int64_t dim,
                         bool wrap) {
  const int64_t n = index_in.numel();
  if (n == 0) return;
  checkSameDevice({direct, index_in, indexed});
  // int32 indices (gather/scatter accept them) are widened once.
  const at::Tensor index =
      index_in.scalar_type() == c10::kLong ? index_in : index_in.to(c10::kLong);
  TORCH_INTERNAL_ASSERT(direct.scalar_type() == indexed.scalar_type());
  const c10::ScalarType t = indexed.scalar_type();
  const c10::DeviceIndex idx = indexed.device().index();
  checkDtypeSupported(t, idx);
  TORCH_CHECK(gatherScatterSupported(mode, t, idx), "torch-ocl: no atomic accumulation for ", t,
              " on this device");
  const int64_t nd = std::max<int64_t>(index.dim(), 1);
  TORCH_CHECK(nd <= kMaxDims, "torch-ocl: index ops support at most ", kMaxDims, " dimensions");
  auto sizeOf = [](const at::Tensor& x, int64_t d) { return x.dim() == 0 ? 1 : x.size(d); };
  auto strideOf = [](const at::Tensor& x, int64_t d) { return x.dim() == 0 ? 1 : x.stride(d); };
  GsGeom g{};
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t k = nd - 1 - d;  // innermost first
    g.sizes[k] = sizeOf(index, d);
    g.strides[0][k] = strideOf(direct, d);
    g.strides[1][k] = strideOf(index, d);
    g.strides[2][k] = strideOf(indexed, d);
  }
  const int64_t dsize = sizeOf(indexed, dim), dstride = strideOf(indexed, dim);
  const uint64_t variant = dtypeCode(t) | (static_cast<uint64_t>(mode) << 6);
  cl_program prog = programs(idx).get({&kGatherScatterFamily, variant}, [&] {
    const std::string st = clStorageType(t);
    std::string s;
    if (is64(t) && mode != GsMode::kGather && mode != GsMode::kScatter)
      s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
    s += deviceCheckSource();
    if (mode != GsMode::kGather && mode != GsMode::kScatter) s += rmwSource(mode, t);
    s += "typedef struct { long sizes[OCL_MAX_DIMS]; long strides[3][OCL_MAX_DIMS]; } GsGeom;\n";
    s +=
        "__kernel void gs(__global char* ab, ulong aoff, __global const char* ib, ulong ioff,\n"
        "    __global char* sb, ulong soff, long n, int ndim, int dim, long dsize, long dstride,\n"
        "    int wrap, int op, int report_dim, __global char* rb, ulong roff, GsGeom g) {\n"
        "  const long li = get_global_id(0);\n  if (li >= n) return;\n"
        "  long rem = li, oa = 0, oi = 0, os = 0;\n"
        "  for (int k = 0; k < ndim; ++k) {\n"
        "    const long c = rem % g.sizes[k];\n    rem /= g.sizes[k];\n"
        "    oa += c * g.strides[0][k];\n    oi += c * g.strides[1][k];\n"
        "    if (k != dim) os += c * g.strides[2][k];\n  }\n"
        "  const long j = ocl_checked_index(((__global const long*)(ib + ioff))[oi], dsize, wrap,\n"
        "                                  (__global int*)(rb + roff), op, report_dim);\n";
    s += "  __global " + st + "* A = (__global " + st + "*)(ab + aoff);\n";
    s += "  __global " + st + "* S = (__global " + st + "*)(sb + soff);\n";
    switch (mode) {
      case GsMode::kGather:
        s += "  A[oa] = j < 0 ? (" + st + ")0 : S[os + j * dstride];\n";
        break;
      case GsMode::kScatter:
        s += "  if (j >= 0) S[os + j * dstride] = A[oa];\n";
        break;
      default:
        s += "  if (j >= 0) ocl_rmw(S + os + j * dstride, " + loadExpr(t, "A", "oa") + ");\n";
    }
    s += "}\n";
    return rt::ProgramSource{std::string("gather_scatter<") + c10::toString(t) + ">",
                             withPrelude(s), ""};
  });
  const rt::BufferRef rec = deviceErrorRecord(idx);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "gs");
  setArgs(k, bufferOf(direct), bufferOf(index), bufferOf(indexed), static_cast<cl_long>(n),
          static_cast<cl_int>(nd), static_cast<cl_int>(index.dim() == 0 ? 0 : nd - 1 - dim),
          static_cast<cl_long>(dsize), static_cast<cl_long>(dstride), static_cast<cl_int>(wrap),
          static_cast<cl_int>(op), static_cast<cl_int>(dim), rec, g);
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

void launchStridedCopy(const at::Tensor& dst, const at::Tensor& src, int64_t src_base,
                       at::IntArrayRef src_strides) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  checkSameDevice({dst, src});
  TORCH_INTERNAL_ASSERT(dst.scalar_type() == src.scalar_type());
  TORCH_INTERNAL_ASSERT(static_cast<int64_t>(src_strides.size()) == dst.dim());
  const c10::ScalarType t = dst.scalar_type();
  const c10::DeviceIndex idx = dst.device().index();
  checkDtypeSupported(t, idx);
  const int64_t nd = dst.dim();
  TORCH_CHECK(nd <= kMaxDims, "torch-ocl: at most ", kMaxDims, " dimensions are supported");
  CopyGeom g{};
  for (int64_t d = 0; d < nd; ++d) {
    g.sizes[nd - 1 - d] = dst.size(d);
    g.strides[0][nd - 1 - d] = dst.stride(d);
    g.strides[1][nd - 1 - d] = src_strides[d];
  }
  // Only the element size matters for a copy.
  const size_t es = c10::elementSize(t);
  const char* ut = es == 1   ? "uchar"
                   : es == 2 ? "ushort"
                   : es == 4 ? "uint"
                   : es == 8 ? "ulong"
                             : "ulong2";
  cl_program prog = programs(idx).get({&kStridedCopyFamily, es}, [&] {
    std::string s = "typedef " + std::string(ut) + " E;\n";
    s += "typedef struct { long sizes[OCL_MAX_DIMS]; long strides[2][OCL_MAX_DIMS]; } CopyGeom;\n"
         "__kernel void strided_copy(__global char* db, ulong doff, __global const char* sb,\n"
         "    ulong soff, long n, int ndim, long base, CopyGeom g) {\n"
         "  const long li = get_global_id(0);\n  if (li >= n) return;\n"
         "  long rem = li, od = 0, os = base;\n"
         "  for (int k = 0; k < ndim; ++k) {\n"
         "    const long c = rem % g.sizes[k];\n    rem /= g.sizes[k];\n"
         "    od += c * g.strides[0][k];\n    os += c * g.strides[1][k];\n  }\n"
         "  ((__global E*)(db + doff))[od] = ((__global const E*)(sb + soff))[os];\n}\n";
    return rt::ProgramSource{"strided_copy<" + std::to_string(es) + ">", withPrelude(s), ""};
  });
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "strided_copy");
  setArgs(k, bufferOf(dst), bufferOf(src), static_cast<cl_long>(n), static_cast<cl_int>(nd),
          static_cast<cl_long>(src_base), g);
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

void launchElementOffsets(const at::Tensor& out, const at::Tensor& like) {
  TORCH_INTERNAL_ASSERT(out.is_contiguous() && out.scalar_type() == c10::kLong);
  const int64_t n = like.numel();
  if (n == 0) return;
  const int64_t nd = like.dim();
  TORCH_CHECK(nd <= kMaxDims, "torch-ocl: at most ", kMaxDims, " dimensions are supported");
  const c10::DeviceIndex idx = out.device().index();
  CopyGeom g{};
  for (int64_t d = 0; d < nd; ++d) {
    g.sizes[nd - 1 - d] = like.size(d);
    g.strides[1][nd - 1 - d] = like.stride(d);
  }
  cl_program prog = programs(idx).get({&kOffsetsFamily, 0}, [&] {
    std::string s =
        "typedef struct { long sizes[OCL_MAX_DIMS]; long strides[2][OCL_MAX_DIMS]; } CopyGeom;\n"
        "__kernel void offsets(__global char* ob, ulong ooff, long n, int ndim, CopyGeom g) {\n"
        "  const long li = get_global_id(0);\n  if (li >= n) return;\n"
        "  long rem = li, os = 0;\n"
        "  for (int k = 0; k < ndim; ++k) {\n"
        "    const long c = rem % g.sizes[k];\n    rem /= g.sizes[k];\n"
        "    os += c * g.strides[1][k];\n  }\n"
        "  ((__global long*)(ob + ooff))[li] = os;\n}\n";
    return rt::ProgramSource{"element_offsets", withPrelude(s), ""};
  });
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "offsets");
  setArgs(k, bufferOf(out), static_cast<cl_long>(n), static_cast<cl_int>(nd), g);
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

}  // namespace torch_ocl::aten
