#include "codegen/pointwise.h"
#include "codegen/reduce.h"

#include <c10/core/DynamicCast.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "kernels/embedded.h"

#include <cstring>

namespace torch_ocl::codegen {

using aten::clComputeType;
using aten::clStorageType;
using aten::convertExpr;
using aten::loadExpr;
using aten::storeStmt;

namespace {

constexpr int kMaxOperands = 4;  // one output, up to three inputs

struct alignas(8) OclStrides4 {
  cl_long sizes[aten::kMaxDims];
  cl_long strides[kMaxOperands][aten::kMaxDims];
};

// How work items map to elements. kContiguous: item i is element i of every operand.
// kStrided (GPUs): item i is element i, its offsets decomposed from i (neighbouring items touch
// neighbouring memory, as coalescing wants). kRuns (CPU devices): an item takes a run of up to
// kRunLength elements along the innermost dimension, decomposing its position once: per-element
// 64-bit divisions made a broadcast x * w[None, :] 12x slower than this on PoCL.
// kVector (CPU devices, dense operands of one floating dtype, ops marked vector_safe): item i
// is elements [W i, W i + W) as one explicit vector: PoCL's work-group vectoriser gives 8 lanes
// (ymm) on AVX-512 hosts, explicit float16 code full zmm registers (gelu 1.6x faster).
enum class Layout : uint8_t { kContiguous = 0, kStrided = 1, kRuns = 2, kVector = 3 };
constexpr int64_t kRunLength = 64;
// Work items per work-group of kVector kernels: 1024 floats a group measured best on PoCL 3.1
// (2 cores; 256 items, 4096 floats, were ~1.3x slower on gelu).
constexpr size_t kVectorLocal = 64;

bool isIntegralOrBool(c10::ScalarType t) {
  return c10::isIntegralType(t, /*includeBool=*/true);
}

std::string argName(int i) {
  return std::string(1, static_cast<char>('a' + i));
}

// Inputs that are CPU scalars (Python numbers wrapped as 0-dim tensors) travel as kernel arguments.
bool isHostScalar(const at::TensorIteratorBase& iter, int i) {
  return i >= iter.noutputs() && iter.device(i).is_cpu();
}

// True when every device operand is dense and in the iterator's order, so that element li of each
// sits at index li. Unlike iter.is_contiguous(), host scalars (stride 0) do not count: x * 2 took
// the strided kernel, 2.4x slower than x * y on PoCL.
bool denseOperands(const at::TensorIteratorBase& iter) {
  if (iter.numel() == 1) return true;
  if (iter.ndim() != 1) return false;
  for (int i = 0; i < iter.ntensors(); ++i)
    if (!isHostScalar(iter, i) && iter.strides(i)[0] != iter.element_size(i)) return false;
  return true;
}

// Elements per work item of a kVector kernel for compute type t (0: no vector kernel): 16 floats
// or 8 doubles, one 512-bit register. Not bfloat16: its ushort16 <-> float16 conversions made
// gelu 1.7x and mul 1.8x slower than the scalar kernels on PoCL 3.1 (which vectorise those 8
// wide); half storage converts through vload_half16 / vstore_half16_rte (5-8x faster there).
int vectorWidth(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat:
    case c10::kHalf:
      return 16;
    case c10::kDouble:
      return 8;
    default:
      return 0;
  }
}

// Whether op runs as a kVector kernel over iter: every device operand in the compute dtype (no
// conversions, which are written for scalars), a vectorisable op and dtype, dense operands.
bool useVectorLayout(const PointwiseOp& op, const at::TensorIteratorBase& iter,
                     c10::ScalarType compute) {
  if (!op.vector_safe || op.bool_result || vectorWidth(compute) == 0) return false;
  for (int i = 0; i < iter.ntensors(); ++i)
    if (!isHostScalar(iter, i) && iter.dtype(i) != compute) return false;
  return denseOperands(iter);
}

// Vector forms of the load/store helpers: element v * W of ptr as a vector of the compute type.
std::string vloadExpr(c10::ScalarType t, int w, const std::string& ptr, const std::string& v) {
  const std::string n = std::to_string(w);
  switch (t) {
    case c10::kHalf:  // core OpenCL C: half storage without cl_khr_fp16
      return "vload_half" + n + "(" + v + ", (__global const half*)(" + ptr + "))";
    default:
      return "vload" + n + "(" + v + ", " + ptr + ")";
  }
}
std::string vstoreStmt(c10::ScalarType t, int w, const std::string& ptr, const std::string& v,
                       const std::string& value) {
  const std::string n = std::to_string(w);
  switch (t) {
    case c10::kHalf:
      return "vstore_half" + n + "_rte(" + value + ", " + v + ", (__global half*)(" + ptr + "));";
    default:
      return "vstore" + n + "(" + value + ", " + v + ", " + ptr + ");";
  }
}

// A kVector kernel: T is the vector type, TS its element type (the scalars' type). One launch;
// the item whose vector runs past n goes element by element through private arrays, with the same
// vector expression. Its check is one scalar branch per 16 elements: the reason for
// launch1DTail's unchecked launches (masks in PoCL's work-group vectoriser) does not arise where
// the kernel is explicit vector code.
std::string vectorKernelSource(const PointwiseOp& op, const at::TensorIteratorBase& iter,
                               c10::ScalarType compute) {
  const int nt = iter.ntensors(), w = vectorWidth(compute);
  const std::string ts = clComputeType(compute), n = std::to_string(w), vt = ts + n;
  const bool fp = ts == "float";
  std::string s;
  s += "typedef " + ts + " TS;\ntypedef " + vt + " T;\n";
  if (fp) {
    s += "OCL_DEFINE_FLOAT_MATH(float" + n + ", int" + n + ", float" + n + ")\n";
    for (const char* f : {"exp", "erf", "tanh", "sigmoid", "gelu_erf"})
      s += std::string("#define ocl_") + f + " ocl_" + f + "_float" + n + "\n";
  } else {
    s += aten::mathMacros(ts);  // builtins, which take vectors
  }
  if (op.helpers) s += std::string(op.helpers) + "\n";
  s += "__kernel void pw(__global char* p0, ulong off0";
  for (int i = 1; i < nt; ++i)
    s += isHostScalar(iter, i)
             ? ", TS " + argName(i - 1) + "_s"
             : ", __global const char* p" + std::to_string(i) + ", ulong off" + std::to_string(i);
  s += ", long n, TS s0, TS s1, TS s2) {\n";
  const std::string st = clStorageType(compute);
  for (int i = 0; i < nt; ++i) {
    const std::string k = std::to_string(i);
    if (isHostScalar(iter, i))
      s += "  const T " + argName(i - 1) + " = (T)" + argName(i - 1) + "_s;\n";
    else
      s += std::string("  __global ") + (i ? "const " : "") + st + "* q" + k + " = (__global " +
           (i ? "const " : "") + st + "*)(p" + k + " + off" + k + ");\n";
  }
  const std::string expr = op.expr;
  s += "  const long v = get_global_id(0), i0 = v * " + n +
       ";\n"
       "  if (i0 + " +
       n +
       " > n) {\n"
       "    if (i0 >= n) return;\n";
  for (int i = 1; i < nt; ++i) {
    if (isHostScalar(iter, i)) continue;
    const std::string k = std::to_string(i), x = "x" + k;
    s += "    TS " + x + "[" + n + "];\n    for (int j = 0; j < " + n + "; ++j) " + x +
         "[j] = i0 + j < n ? " + loadExpr(compute, "q" + k, "i0 + j") + " : (TS)0;\n";
    s += "    const T " + argName(i - 1) + " = vload" + n + "(0, " + x + ");\n";
  }
  s += "    TS y[" + n + "];\n    vstore" + n + "(" + expr + ", 0, y);\n";
  s += "    for (int j = 0; i0 + j < n; ++j) " + storeStmt(compute, "q0", "i0 + j", "y[j]") +
       "\n    return;\n  }\n";
  for (int i = 1; i < nt; ++i) {
    if (isHostScalar(iter, i)) continue;
    s += "  const T " + argName(i - 1) + " = " +
         vloadExpr(compute, w, "q" + std::to_string(i), "v") + ";\n";
  }
  s += "  const T r = " + expr + ";\n  " + vstoreStmt(compute, w, "q0", "v", "r") + "\n}\n";
  return s;
}

std::string kernelSource(const PointwiseOp& op, const at::TensorIteratorBase& iter,
                         c10::ScalarType compute, Layout layout) {
  if (layout == Layout::kVector) return vectorKernelSource(op, iter, compute);
  const int nt = iter.ntensors();
  const c10::ScalarType out_t = iter.dtype(0);
  const std::string ct = clComputeType(compute);
  const bool complex = c10::isComplexType(compute);
  const char* expr = complex                                    ? op.expr_complex
                     : isIntegralOrBool(compute) && op.expr_int ? op.expr_int
                                                                : op.expr;
  std::string s;
  s += "typedef " + ct + " T;\n";
  if (complex) s += complexHeader(compute) + "typedef CR R;\n";
  s += aten::mathMacros(complex ? clComputeType(c10::toRealValueType(compute)) : ct);
  // An intermediate rounded to the output dtype, where CPU computes in half or bfloat16.
  s += out_t == c10::kHalf       ? "#define ocl_round_out ocl_round_to_half\n"
       : out_t == c10::kBFloat16 ? "#define ocl_round_out ocl_round_to_bf16\n"
                                 : "#define ocl_round_out(x) (x)\n";
  const char* helpers = complex                                       ? nullptr
                        : isIntegralOrBool(compute) && op.helpers_int ? op.helpers_int
                                                                      : op.helpers;
  if (helpers) s += std::string(helpers) + "\n";
  s += "__kernel void pw(__global char* p0, ulong off0";
  for (int i = 1; i < nt; ++i)
    s += isHostScalar(iter, i)
             ? ", T " + argName(i - 1)
             : ", __global const char* p" + std::to_string(i) + ", ulong off" + std::to_string(i);
  s += ", long n, T s0, T s1, T s2";
  if (layout != Layout::kContiguous) s += ", int ndim, OclStrides4 st";
  if (layout == Layout::kRuns) s += ", long runs_per_row";
  s += ") {\n";
  // Offsets acc<i> of every operand for position `from` over dimensions first..ndim-1.
  auto decompose = [&](const std::string& from, int first, const std::string& acc) {
    for (int i = 0; i < nt; ++i) s += "  long " + acc + std::to_string(i) + " = 0;\n";
    s += "  long rem = " + from + ";\n  for (int k = " + std::to_string(first) +
         "; k < ndim; ++k) {\n"
         "    const long c = rem % st.sizes[k];\n    rem /= st.sizes[k];\n";
    for (int i = 0; i < nt; ++i)
      s += "    " + acc + std::to_string(i) + " += c * st.strides[" + std::to_string(i) + "][k];\n";
    s += "  }\n";
  };
  std::string indent = "  ";
  // The bound check only in launches with a nonzero global offset (aten::launch1DTail: full
  // work-groups at offset 0, the rest shifted by one local size). PoCL compiles offset-0 launches
  // with get_global_offset folded to 0, so their work-item loops have no mask at all; any check
  // left in them (even one that is uniform per group) kept masked 64-bit index vectors in the
  // vectorised loop whenever the body was too large for LLVM to unswitch it: erf, tanh, gelu and
  // silu ran 3-5x slower than the same kernel with no check.
  const char* bound =
      "  long li = get_global_id(0);\n"
      "  if (get_global_offset(0) != 0) {\n"
      "    li -= (long)get_local_size(0);\n"
      "    if (li >= n) return;\n"
      "  }\n";
  switch (layout) {
    case Layout::kContiguous:
      s += bound;
      for (int i = 0; i < nt; ++i) s += "  const long o" + std::to_string(i) + " = 0;\n";
      s += "  const long idx = li;\n";
      break;
    case Layout::kStrided:
      s += bound;
      decompose("li", 0, "o");
      s += "  const long idx = 0;\n";
      break;
    case Layout::kVector:  // vectorKernelSource
      break;
    case Layout::kRuns:
      // n counts items here: rows (all but the innermost dimension) times runs per row.
      s += "  const long item = get_global_id(0);\n  if (item >= n) return;\n"
           "  const long row = item / runs_per_row;\n"
           "  const long j0 = (item - row * runs_per_row) * " +
           std::to_string(kRunLength) + ";\n  const long j1 = min(j0 + " +
           std::to_string(kRunLength) + ", st.sizes[0]);\n";
      decompose("row", 1, "b");
      s += "  for (long j = j0; j < j1; ++j) {\n";
      for (int i = 0; i < nt; ++i)
        s += "    const long o" + std::to_string(i) + " = b" + std::to_string(i) +
             " + j * st.strides[" + std::to_string(i) + "][0];\n";
      s += "    const long idx = 0;\n";
      indent = "    ";
      break;
  }
  for (int i = 1; i < nt; ++i) {
    if (isHostScalar(iter, i)) continue;
    const c10::ScalarType t = iter.dtype(i);
    const std::string st = clStorageType(t), n = std::to_string(i);
    s += indent + "__global const " + st + "* q" + n + " = (__global const " + st + "*)(p" + n +
         " + off" + n + " + o" + n + ");\n";
    s += indent + "const T " + argName(i - 1) + " = " +
         convertExpr(t, compute, loadExpr(t, "q" + n, "idx")) + ";\n";
  }
  const std::string ost = clStorageType(out_t);
  s += indent + "__global " + ost + "* q0 = (__global " + ost + "*)(p0 + off0 + o0);\n";
  if (op.bool_result) {
    s += indent + "const uchar r = (" + std::string(expr) + ") ? 1 : 0;\n";
    s += indent + storeStmt(out_t, "q0", "idx", convertExpr(c10::kBool, out_t, "r")) + "\n";
  } else {
    // A bool result is 0 or 1 whatever the expression gives (true + true is true).
    s += indent + (compute == c10::kBool ? "const T r = (" + std::string(expr) + ") ? 1 : 0;\n"
                                         : "const T r = " + std::string(expr) + ";\n");
    s += indent + storeStmt(out_t, "q0", "idx", convertExpr(compute, out_t, "r")) + "\n";
  }
  if (layout == Layout::kRuns) s += "  }\n";
  s += "}\n";
  return s;
}

// Bytes of a scalar in the compute type's OpenCL representation.
struct ScalarArg {
  alignas(16) unsigned char bytes[16] = {};
  size_t size = 0;
};

ScalarArg scalarArg(const c10::Scalar& v, c10::ScalarType compute) {
  ScalarArg a;
  auto put = [&](auto x) {
    std::memcpy(a.bytes, &x, sizeof(x));
    a.size = sizeof(x);
  };
  switch (compute) {
    case c10::kBool:
      put(static_cast<cl_uchar>(v.toBool()));
      break;
    case c10::kByte:
      put(static_cast<cl_uchar>(v.toLong()));
      break;
    case c10::kChar:
      put(static_cast<cl_char>(v.toLong()));
      break;
    case c10::kShort:
      put(static_cast<cl_short>(v.toLong()));
      break;
    case c10::kInt:
      put(static_cast<cl_int>(v.toLong()));
      break;
    case c10::kLong:
      put(static_cast<cl_long>(v.toLong()));
      break;
    case c10::kUInt16:
      put(static_cast<cl_ushort>(v.toLong()));
      break;
    case c10::kUInt32:
      put(static_cast<cl_uint>(v.toLong()));
      break;
    case c10::kUInt64:
      put(static_cast<cl_ulong>(v.toLong()));
      break;
    case c10::kDouble:
      put(static_cast<cl_double>(v.toDouble()));
      break;
    case c10::kComplexHalf:  // computed in float2
    case c10::kComplexFloat: {
      const auto z = v.toComplexDouble();
      put(cl_float2{{static_cast<cl_float>(z.real()), static_cast<cl_float>(z.imag())}});
      break;
    }
    case c10::kComplexDouble: {
      const auto z = v.toComplexDouble();
      put(cl_double2{{z.real(), z.imag()}});
      break;
    }
    default:
      put(static_cast<cl_float>(v.toDouble()));
      break;  // float, half, bfloat16
  }
  return a;
}

}  // namespace

std::string complexHeader(c10::ScalarType t) {
  TORCH_INTERNAL_ASSERT(c10::isComplexType(t));
  return "typedef " + std::string(clComputeType(t)) + " CT;\ntypedef " +
         clComputeType(c10::toRealValueType(t)) + " CR;\n" + kernels::source("complex.cl") + "\n";
}

bool supports(const PointwiseOp& op, c10::ScalarType compute) {
  if (c10::isComplexType(compute)) return op.expr_complex != nullptr;
  if (op.expr == nullptr) return false;  // complex-only ops (complex, polar)
  switch (op.domain) {
    case Domain::kFloating:
      return c10::isFloatingType(compute);
    case Domain::kFloatDouble:
      return compute == c10::kFloat || compute == c10::kDouble;
    case Domain::kIntegral:
      return isIntegralOrBool(compute);
    case Domain::kInteger:
      return c10::isIntegralType(compute, /*includeBool=*/false);
    case Domain::kNumeric:
      return compute != c10::kBool;
    default:
      return true;
  }
}

void launch(const PointwiseOp& op, const at::TensorIteratorBase& iter, c10::ScalarType compute,
            std::array<c10::Scalar, kMaxScalars> scalars) {
  TORCH_CHECK(supports(op, compute), "torch-ocl: no ", op.name, " kernel for ", compute);
  TORCH_CHECK(iter.ntensors() <= kMaxOperands && iter.noutputs() == 1,
              "torch-ocl: pointwise kernels take one output and up to three inputs");
  TORCH_CHECK(iter.ndim() <= aten::kMaxDims, "torch-ocl: tensors that keep ", iter.ndim(),
              " dimensions after coalescing are not supported yet (at most ", aten::kMaxDims, ")");
  if (iter.numel() == 0) return;
  const c10::DeviceIndex idx = iter.device(0).index();
  for (int i = 0; i < iter.ntensors(); ++i) {
    TORCH_CHECK(isHostScalar(iter, i) || iter.device(i) == iter.device(0),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                iter.device(0), " and ", iter.device(i), "!");
    if (!isHostScalar(iter, i)) aten::checkDtypeSupported(iter.dtype(i), idx, op.name);
  }
  aten::checkDtypeSupported(compute, idx, op.name);
  rt::Device& dev = device(idx);
  // CPU drivers (the devices that prefer one work item per reduction) get runs.
  const bool cpu_driver = preferItemReductions(dev.info());
  const Layout layout = cpu_driver && useVectorLayout(op, iter, compute) ? Layout::kVector
                        : denseOperands(iter)                            ? Layout::kContiguous
                        : cpu_driver                                     ? Layout::kRuns
                                                                         : Layout::kStrided;
  uint64_t variant = aten::dtypeCode(compute) | (static_cast<uint64_t>(layout) << 61);
  for (int i = 0; i < iter.ntensors(); ++i) {
    variant |= aten::dtypeCode(iter.dtype(i)) << (7 + 7 * i);
    variant |= static_cast<uint64_t>(isHostScalar(iter, i)) << (13 + 7 * i);
  }
  cl_program prog = programs(idx).get({&op, variant}, [&] {
    std::string name = std::string(op.name) + "<" + c10::toString(compute) + ">";
    return rt::ProgramSource{name, aten::withPrelude(kernelSource(op, iter, compute, layout)), ""};
  });
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "pw");
  cl_uint a = 0;
  for (int i = 0; i < iter.ntensors(); ++i) {
    if (isHostScalar(iter, i)) {
      const c10::ScalarType t = iter.tensor_base(i).scalar_type();
      const void* p = iter.data_ptr(i);
      const c10::Scalar v =
          c10::isComplexType(compute) ? c10::Scalar(c10::fetch_and_cast<c10::complex<double>>(t, p))
          : c10::isFloatingType(compute) ? c10::Scalar(c10::fetch_and_cast<double>(t, p))
          : compute == c10::kBool        ? c10::Scalar(c10::fetch_and_cast<bool>(t, p))
                                         : c10::Scalar(c10::fetch_and_cast<int64_t>(t, p));
      const ScalarArg sa = scalarArg(v, compute);
      OCL_CHECK(clSetKernelArg(k, a++, sa.size, sa.bytes));
    } else {
      aten::setArg(k, a, resolvePtr(iter.data_ptr(i)));
    }
  }
  // kRuns: items, one per run of the innermost dimension; otherwise elements.
  const int64_t size0 = iter.ndim() > 0 ? iter.shape()[0] : 1;
  const int64_t runs_per_row = (size0 + kRunLength - 1) / kRunLength;
  const int64_t w = vectorWidth(compute);
  const int64_t items = layout == Layout::kRuns     ? iter.numel() / size0 * runs_per_row
                        : layout == Layout::kVector ? (iter.numel() + w - 1) / w
                                                    : iter.numel();
  // kVector kernels take the element count (their last item may be partial).
  aten::setArg(k, a, static_cast<cl_long>(layout == Layout::kVector ? iter.numel() : items));
  for (const c10::Scalar& s : scalars) {
    const ScalarArg sa = scalarArg(s, compute);
    OCL_CHECK(clSetKernelArg(k, a++, sa.size, sa.bytes));
  }
  if (layout == Layout::kStrided || layout == Layout::kRuns) {
    OclStrides4 st{};
    for (int d = 0; d < iter.ndim(); ++d) {
      st.sizes[d] = iter.shape()[d];
      for (int i = 0; i < iter.ntensors(); ++i) st.strides[i][d] = iter.strides(i)[d];
    }
    aten::setArg(k, a, static_cast<cl_int>(iter.ndim()));
    aten::setArg(k, a, st);
    if (layout == Layout::kRuns) aten::setArg(k, a, static_cast<cl_long>(runs_per_row));
  }
  if (layout == Layout::kRuns)
    aten::launch1D(dev, currentQueue(idx), k, items);
  else if (layout == Layout::kVector)
    aten::launchND(dev, currentQueue(idx), k,
                   (items + kVectorLocal - 1) / kVectorLocal * kVectorLocal, kVectorLocal);
  else
    aten::launch1DTail(dev, currentQueue(idx), k, items);
  OCL_CATCH
}

}  // namespace torch_ocl::codegen
