// Native _foreach_* ops: one launch per chunk of tensors (multi_tensor.h) instead of one per
// tensor. The fast route takes lists of contiguous floating tensors of one dtype on one ocl
// device (copy_: any dtypes); anything else (mixed dtypes, integer lists, strided tensors, CPU
// tensors) goes to ATen's per-tensor "slow" loops, whose per-tensor ops are native or counted
// fallbacks like any other op.
#include <ATen/ATen.h>
#include <ATen/native/ForeachUtils.h>
#include <ATen/ops/_foreach_abs_native.h>
#include <ATen/ops/_foreach_acos_native.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_asin_native.h>
#include <ATen/ops/_foreach_atan_native.h>
#include <ATen/ops/_foreach_ceil_native.h>
#include <ATen/ops/_foreach_clamp_max_native.h>
#include <ATen/ops/_foreach_clamp_min_native.h>
#include <ATen/ops/_foreach_copy_native.h>
#include <ATen/ops/_foreach_cos_native.h>
#include <ATen/ops/_foreach_cosh_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_erf_native.h>
#include <ATen/ops/_foreach_erfc_native.h>
#include <ATen/ops/_foreach_exp_native.h>
#include <ATen/ops/_foreach_expm1_native.h>
#include <ATen/ops/_foreach_floor_native.h>
#include <ATen/ops/_foreach_frac_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_log10_native.h>
#include <ATen/ops/_foreach_log1p_native.h>
#include <ATen/ops/_foreach_log2_native.h>
#include <ATen/ops/_foreach_log_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_minimum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_pow_native.h>
#include <ATen/ops/_foreach_reciprocal_native.h>
#include <ATen/ops/_foreach_round_native.h>
#include <ATen/ops/_foreach_rsqrt_native.h>
#include <ATen/ops/_foreach_sigmoid_native.h>
#include <ATen/ops/_foreach_sign_native.h>
#include <ATen/ops/_foreach_sin_native.h>
#include <ATen/ops/_foreach_sinh_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_tan_native.h>
#include <ATen/ops/_foreach_tanh_native.h>
#include <ATen/ops/_foreach_trunc_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/multi_tensor.h"
#include "aten/ops.h"
#include "codegen/reduce.h"
#include "integration/state.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>

namespace torch_ocl::aten {

// ---- multi-tensor plan -----------------------------------------------------------------------

namespace mt {

Plan::Plan(const std::vector<at::TensorList>& lists, bool keep_empty) {
  TORCH_INTERNAL_ASSERT(!lists.empty());
  const size_t nlists = lists.size();
  const size_t n = lists[0].size();
  Chunk cur;
  std::vector<int64_t> ends;
  std::vector<std::vector<int64_t>> locs(nlists);
  auto flush = [&] {
    if (cur.index.empty()) return;
    cur.table = ends;
    for (const auto& l : locs) cur.table.insert(cur.table.end(), l.begin(), l.end());
    chunks_.push_back(std::move(cur));
    cur = Chunk();
    ends.clear();
    for (auto& l : locs) l.clear();
  };
  std::vector<rt::BufferRef> refs(nlists);
  for (size_t i = 0; i < n; ++i) {
    const int64_t numel = lists[0][i].numel();
    if (numel == 0 && !keep_empty) continue;
    std::vector<cl_mem> fresh;
    for (size_t l = 0; l < nlists; ++l) {
      refs[l] = lists[l][i].numel() == 0 ? rt::BufferRef{} : bufferOf(lists[l][i]);
      cl_mem m = refs[l].mem;
      if (!m) continue;
      if (std::find(cur.mems.begin(), cur.mems.end(), m) == cur.mems.end() &&
          std::find(fresh.begin(), fresh.end(), m) == fresh.end())
        fresh.push_back(m);
    }
    if (cur.mems.size() + fresh.size() > static_cast<size_t>(kMaxBuffers) ||
        cur.index.size() == kMaxChunkTensors) {
      flush();
      fresh.clear();
      for (size_t l = 0; l < nlists; ++l)
        if (refs[l].mem && std::find(fresh.begin(), fresh.end(), refs[l].mem) == fresh.end())
          fresh.push_back(refs[l].mem);
    }
    cur.mems.insert(cur.mems.end(), fresh.begin(), fresh.end());
    for (size_t l = 0; l < nlists; ++l) {
      int64_t loc = 0;
      if (refs[l].mem) {
        const auto slot =
            std::find(cur.mems.begin(), cur.mems.end(), refs[l].mem) - cur.mems.begin();
        TORCH_INTERNAL_ASSERT(refs[l].offset < (uint64_t{1} << 56));
        loc = static_cast<int64_t>((static_cast<uint64_t>(slot) << 56) | refs[l].offset);
      }
      locs[l].push_back(loc);
    }
    cur.index.push_back(i);
    cur.total += numel;
    ends.push_back(cur.total);
  }
  flush();
}

void Plan::addColumn(const std::function<int64_t(size_t)>& f) {
  for (Chunk& c : chunks_)
    for (size_t i : c.index) c.table.push_back(f(i));
}

namespace {
// Tables already on the device, by content: an optimizer step calls the same foreach ops on the
// same tensors step after step, and the caching allocator hands the freshly allocated gradients
// the same addresses, so most tables repeat. A hit skips the pinned staging buffer, the write and
// its host-allocator event (three commands and two allocations per call). Tables are read-only
// in every kernel; a hit is only taken on the stream that uploaded it (in-order queues keep the
// write before every later use there). Small and bounded; never destroyed (tensors outlive
// static destructors at interpreter shutdown).
class TableCache {
 public:
  static TableCache& get() {
    static auto* c = new TableCache();  // NOLINT: intentionally leaked, see above
    return *c;
  }
  at::Tensor find(c10::DeviceIndex idx, int stream, const std::vector<int64_t>& table) {
    const uint64_t h = hash(table);
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry& e : entries_)
      if (e.hash == h && e.device == idx && e.stream == stream && e.table == table) {
        e.last_use = ++clock_;
        return e.tensor;
      }
    return {};
  }
  void insert(c10::DeviceIndex idx, int stream, std::vector<int64_t> table, const at::Tensor& t) {
    if (table.size() > kMaxLongs) return;
    const uint64_t h = hash(table);
    std::lock_guard<std::mutex> lock(mutex_);
    Entry e{h, idx, stream, std::move(table), t, ++clock_};
    if (entries_.size() < kMaxEntries) {
      entries_.push_back(std::move(e));
      return;
    }
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](auto& a, auto& b) { return a.last_use < b.last_use; });
    *oldest = std::move(e);
  }

 private:
  static constexpr size_t kMaxEntries = 64;
  static constexpr size_t kMaxLongs = 1 << 14;  // 128 KiB (8 MiB for all): larger ones upload
  struct Entry {
    uint64_t hash;
    c10::DeviceIndex device;
    int stream;
    std::vector<int64_t> table;
    at::Tensor tensor;
    uint64_t last_use;
  };
  static uint64_t hash(const std::vector<int64_t>& v) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
    for (int64_t x : v) h = (h ^ static_cast<uint64_t>(x)) * 1099511628211ull;
    return h;
  }
  std::mutex mutex_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
};
}  // namespace

void Plan::upload(c10::DeviceIndex idx) {
  // CPU drivers (PoCL): groups of 16 items that vectorise across a block of 2048 elements;
  // GPUs: 256 items over 8192 (32 elements per item, coalesced).
  const rt::Device& dev = device(idx);
  const bool cpu = codegen::preferItemReductions(dev.info());  // TORCH_OCL_TREE_REDUCTIONS=1: GPU
  device_ = idx;
  local_ = cpu ? 16 : std::min<size_t>(256, dev.info().max_work_group_size);
  const int64_t block = cpu ? 2048 : 8192;
  for (Chunk& c : chunks_) {
    c.table.push_back(block);
    c.blocks = 0;
    for (size_t j = 0; j < c.index.size(); ++j) {
      const int64_t n = c.table[j] - (j > 0 ? c.table[j - 1] : 0);
      for (int64_t e0 = 0; e0 < n; e0 += block) {
        c.table.push_back(static_cast<int64_t>(j) << 40 | e0);
        ++c.blocks;
      }
    }
  }
  size_t total = 0;
  for (Chunk& c : chunks_) {
    c.table_offset = total * sizeof(int64_t);
    c.blocks_offset = c.table_offset + (c.table.size() - c.blocks - 1) * sizeof(int64_t);
    total += c.table.size();
  }
  if (total == 0) return;
  std::vector<int64_t> all;
  all.reserve(total);
  for (const Chunk& c : chunks_) all.insert(all.end(), c.table.begin(), c.table.end());
  const int stream = static_cast<int>(currentStream(idx).id());
  if (at::Tensor hit = TableCache::get().find(idx, stream, all); hit.defined()) {
    device_table_ = std::move(hit);
    return;
  }
  // Whole 512-byte blocks: a cached table then requests what it holds (requested_bytes ==
  // allocated_bytes in memory_stats()), as if it were any other tensor's block. The staging
  // block has the same size, so the write is copyFrom's plain pinned path with no view or
  // dispatch in between (the tables of an optimizer step mostly miss the cache: freshly
  // allocated gradients rarely get the addresses of the step before).
  const int64_t padded = static_cast<int64_t>((total + 63) / 64 * 64);
  at::Tensor host = at::empty({padded}, at::TensorOptions().dtype(at::kLong).pinned_memory(true));
  int64_t* h = host.data_ptr<int64_t>();
  std::memcpy(h, all.data(), total * sizeof(int64_t));
  std::fill(h + total, h + padded, int64_t{0});
  device_table_ = at::empty({padded}, at::TensorOptions().dtype(at::kLong).device(kOcl, idx));
  copyFrom(host, device_table_, /*non_blocking=*/true);
  TableCache::get().insert(idx, stream, std::move(all), device_table_);
}

cl_uint Plan::setCommonArgs(cl_kernel k, size_t chunk) const {
  const Chunk& c = chunks_[chunk];
  rt::BufferRef t = bufferOf(device_table_);
  t.offset += c.table_offset;
  rt::BufferRef b = bufferOf(device_table_);
  b.offset += c.blocks_offset;
  cl_uint a = 0;
  setArg(k, a, t);
  setArg(k, a, static_cast<cl_int>(c.index.size()));
  setArg(k, a, b);
  for (int s = 0; s < kMaxBuffers; ++s) {
    cl_mem m = s < static_cast<int>(c.mems.size()) ? c.mems[s] : t.mem;
    OCL_CHECK(clSetKernelArg(k, a++, sizeof(cl_mem), &m));
  }
  return a;
}

void Plan::launchBlocks(cl_kernel k, size_t chunk, bool vector) const {
  const int64_t n = chunks_[chunk].blocks;
  if (n == 0) return;
  const size_t local = vector ? 1 : local_;
  launchND(device(device_), currentQueue(device_), k, static_cast<size_t>(n) * local, local);
}

bool vectorBlocks(c10::DeviceIndex idx) {
  return codegen::preferItemReductions(device(idx).info());
}

std::string kernelHeader() {
  return withPrelude(kernels::source("foreach_common.cl"));
}

bool allDense(const std::vector<at::TensorList>& lists, const c10::Device& dev,
              std::optional<c10::ScalarType> dtype) {
  const size_t n = lists[0].size();
  for (const at::TensorList& l : lists) {
    if (l.size() != n) return false;
    for (size_t i = 0; i < n; ++i) {
      const at::Tensor& t = l[i];
      if (!t.defined() || t.device() != dev || t.layout() != c10::kStrided) return false;
      if (dtype && t.scalar_type() != *dtype) return false;
      if (!t.is_contiguous() || t.sizes() != lists[0][i].sizes()) return false;
    }
  }
  return true;
}

void setRealArg(cl_kernel k, cl_uint& i, bool dbl, double v) {
  if (dbl)
    setArg(k, i, static_cast<cl_double>(v));
  else
    setArg(k, i, static_cast<cl_float>(v));
}

}  // namespace mt

namespace {

char kForeachFamily;
char kForeachNormFamily;

// ---- elementwise foreach kernels ---------------------------------------------------------------

enum class Op : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kClampMin,
  kClampMax,
  kPow,
  kPowScalarBase,
  kAddcmul,
  kAddcdiv,
  kLerp,
  kCopy,
  kZero,
  // unary
  kAbs,
  kAcos,
  kAsin,
  kAtan,
  kCeil,
  kCos,
  kCosh,
  kErf,
  kErfc,
  kExp,
  kExpm1,
  kFloor,
  kFrac,
  kLog,
  kLog10,
  kLog1p,
  kLog2,
  kNeg,
  kReciprocal,
  kRound,
  kRsqrt,
  kSigmoid,
  kSign,
  kSin,
  kSinh,
  kSqrt,
  kTan,
  kTanh,
  kTrunc,
};

// Where the scalar operand s comes from.
enum class Src : uint8_t { kNone, kArg, kList, kTensor };

bool isReal(c10::ScalarType t) {
  return t == c10::kFloat || t == c10::kHalf || t == c10::kBFloat16 || t == c10::kDouble;
}

// OpenCL expression of op over x (list 1), y (list 2), z (list 3), s (scalar) and a (alpha);
// `r` names the second operand of binary ops (y for list forms, s for scalar forms).
std::string expression(Op op, const std::string& r, const std::string& c) {
  const std::string nanmax = "(isnan(x) ? x : (isnan(" + r + ") ? " + r + " : fmax(x, " + r + ")))";
  const std::string nanmin = "(isnan(x) ? x : (isnan(" + r + ") ? " + r + " : fmin(x, " + r + ")))";
  switch (op) {
    case Op::kAdd:
      return "x + a * " + r;
    case Op::kSub:
      return "x - a * " + r;
    case Op::kMul:
      return "x * " + r;
    case Op::kDiv:
      return "x / " + r;
    case Op::kMaximum:
    case Op::kClampMin:
      return nanmax;
    case Op::kMinimum:
    case Op::kClampMax:
      return nanmin;
    case Op::kPow:
      return "pow(x, " + r + ")";
    case Op::kPowScalarBase:
      return "pow(s, x)";
    case Op::kAddcmul:
      return "x + s * y * z";
    case Op::kAddcdiv:
      return "x + s * y / z";
    case Op::kLerp:
      return "(fabs(" + r + ") < (" + c + ")0.5 ? x + " + r + " * (y - x) : y - (y - x) * ((" + c +
             ")1 - " + r + "))";
    case Op::kZero:
      return "(" + c + ")0";
    case Op::kAbs:
      return "fabs(x)";
    case Op::kAcos:
      return "acos(x)";
    case Op::kAsin:
      return "asin(x)";
    case Op::kAtan:
      return "atan(x)";
    case Op::kCeil:
      return "ceil(x)";
    case Op::kCos:
      return "cos(x)";
    case Op::kCosh:
      return "cosh(x)";
    case Op::kErf:
      return "erf(x)";
    case Op::kErfc:
      return "erfc(x)";
    case Op::kExp:
      return "exp(x)";
    case Op::kExpm1:
      return "expm1(x)";
    case Op::kFloor:
      return "floor(x)";
    case Op::kFrac:
      return "x - trunc(x)";
    case Op::kLog:
      return "log(x)";
    case Op::kLog10:
      return "log10(x)";
    case Op::kLog1p:
      return "log1p(x)";
    case Op::kLog2:
      return "log2(x)";
    case Op::kNeg:
      return "-x";
    case Op::kReciprocal:
      return "(" + c + ")1 / x";
    case Op::kRound:
      return "rint(x)";
    case Op::kRsqrt:
      return "(" + c + ")1 / sqrt(x)";
    case Op::kSigmoid:
      return "(" + c + ")1 / ((" + c + ")1 + exp(-x))";
    case Op::kSign:
      return "(isnan(x) ? (" + c + ")0 : sign(x))";
    case Op::kSin:
      return "sin(x)";
    case Op::kSinh:
      return "sinh(x)";
    case Op::kSqrt:
      return "sqrt(x)";
    case Op::kTan:
      return "tan(x)";
    case Op::kTanh:
      return "tanh(x)";
    case Op::kTrunc:
      return "trunc(x)";
    case Op::kCopy:
      break;
  }
  TORCH_INTERNAL_ASSERT(false, "unhandled foreach op");
}

// Whether fe_ew of op walks its blocks in float16 vectors (mt::vectorBlocks): float32 lists and
// the ops whose expression means the same on vectors with scalar s and a (the optimizers' and
// clipping's arithmetic; lerp with a scalar weight, whose select is then on a scalar).
bool vectorElementwise(c10::DeviceIndex idx, Op op, int nin, c10::ScalarType t,
                       c10::ScalarType in) {
  if (t != c10::kFloat || in != c10::kFloat || !mt::vectorBlocks(idx)) return false;
  switch (op) {
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kAddcmul:
    case Op::kAddcdiv:
    case Op::kZero:
    case Op::kCopy:
    case Op::kSqrt:
    case Op::kRsqrt:
    case Op::kExp:
    case Op::kLog:
    case Op::kNeg:
    case Op::kReciprocal:
    case Op::kAbs:
    case Op::kSigmoid:
    case Op::kMaximum:
    case Op::kMinimum:
    case Op::kClampMin:
    case Op::kClampMax:
      return true;
    case Op::kLerp:
      return nin < 3;
    default:
      return false;
  }
}

// nin: input lists read (x, y, z). Output and inputs share dtype `t` except for kCopy (from `in`).
cl_program elementwiseProgram(c10::DeviceIndex idx, Op op, Src src, int nin, c10::ScalarType t,
                              c10::ScalarType in) {
  const uint64_t key = static_cast<uint64_t>(op) | static_cast<uint64_t>(src) << 8 |
                       static_cast<uint64_t>(nin) << 10 | dtypeCode(t) << 12 | dtypeCode(in) << 18;
  return programs(idx).get({&kForeachFamily, key}, [&] {
    const bool vector = vectorElementwise(idx, op, nin, t, in);
    const std::string ot = clStorageType(t), it = clStorageType(in);
    const std::string c = clComputeType(in);  // compute type (== t's except for copy)
    const bool dbl = c == "double";
    const std::string real = dbl ? "double" : "float";  // scalar arguments
    std::string b =
        "__kernel void fe_ew(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS, " + real +
        " s_arg, " + real +
        " a_arg, __global const char* sb, ulong soff) {\n"
        "  __global const long* tab = (__global const long*)(tb + toff);\n"
        "  FE_BLOCK(tab)\n"
        "  __global " +
        ot + "* po = (__global " + ot + "*)FE_PTR(tab[m + j]);\n";
    const char* names[] = {"x", "y", "z"};
    for (int k = 0; k < nin; ++k)
      b += "  __global " + it + "* p" + names[k] + " = (__global " + it + "*)FE_PTR(tab[" +
           std::to_string(2 + k) + " * m + j]);\n";
    b += "  " + c + " s = (" + c + ")s_arg;\n  const " + c + " a = (" + c + ")a_arg;\n";
    if (src == Src::kList) {
      const std::string col = "tab[" + std::to_string(2 + nin) + " * m + j]";
      b += dbl ? "  s = as_double(" + col + ");\n" : "  s = as_float((uint)" + col + ");\n";
    } else if (src == Src::kTensor) {
      b += "  s = *(__global const " + c + "*)(sb + soff);\n";
    }
    // The second operand of binary ops is list y or scalar s; lerp's weight is list z or s.
    const std::string r = op == Op::kLerp ? (nin == 3 ? "z" : "s") : (nin >= 2 ? "y" : "s");
    const std::string value = op == Op::kCopy ? convertExpr(in, t, "x") : expression(op, r, c);
    if (vector) {
      // maximum/minimum (and clamp): NaN-propagating as the scalar form, with selects (a vector
      // condition does not select in ?:); the other operand widened when it is the scalar s.
      std::string vvalue = value;
      if (op == Op::kMaximum || op == Op::kMinimum || op == Op::kClampMin || op == Op::kClampMax) {
        const std::string rv = "((float16)(" + r + "))";
        const char* f = op == Op::kMaximum || op == Op::kClampMin ? "fmax" : "fmin";
        vvalue = std::string("select(select(") + f + "(x, " + rv + "), " + rv + ", isnan(" + rv +
                 ")), x, isnan(x))";
      }
      // float16 over the block's whole vectors (x, y, z vectors; s, a scalars), then the rest.
      b += "  FE_VEC16_LOOP(e) {\n";
      for (int k = 0; k < nin; ++k)
        b += "    const float16 " + std::string(names[k]) + " = vload16(0, p" + names[k] +
             " + e);\n";
      b += "    vstore16((float16)(" + vvalue + "), 0, po + e);\n  }\n";
      b += "  FE_VEC16_TAIL(e) {\n";
    } else {
      b += "  for (long e = FE_FIRST; e < e1; e += FE_STEP) {\n";
    }
    for (int k = 0; k < nin; ++k)
      b += "    const " + c + " " + names[k] + " = " +
           loadExpr(in, std::string("p") + names[k], "e") + ";\n";
    b += "    " + storeStmt(t, "po", "e", value) + "\n  }\n}\n";
    b = mt::kernelHeader() + b;
    return rt::ProgramSource{std::string("foreach<") + c10::toString(t) + "," +
                                 std::to_string(static_cast<int>(op)) + ">",
                             b, ""};
  });
}

// Bits of a scalar-list entry in the table: a double, or a float in the low 32 bits.
int64_t scalarBits(double v, bool dbl) {
  int64_t out = 0;
  if (dbl) {
    std::memcpy(&out, &v, sizeof(double));
  } else {
    const float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, sizeof(float));
    out = static_cast<int64_t>(u);
  }
  return out;
}

struct Scalars {
  Src src = Src::kNone;
  double s = 0, alpha = 1;
  at::ArrayRef<at::Scalar> list;
  at::Tensor tensor;  // ocl, one element, of the compute dtype
};

// Runs out[i] = op(ins...[i]) over all tensors. All lists were checked by the caller.
void runElementwise(Op op, at::TensorList out, const std::vector<at::TensorList>& ins,
                    const Scalars& sc) {
  if (out.empty()) return;
  const c10::ScalarType t = out[0].scalar_type();
  const c10::ScalarType in = ins.empty() ? t : ins[0][0].scalar_type();
  const c10::DeviceIndex idx = out[0].device().index();
  checkDtypeSupported(t, idx);
  checkDtypeSupported(in, idx);
  std::vector<at::TensorList> lists{out};
  lists.insert(lists.end(), ins.begin(), ins.end());
  mt::Plan plan(lists, /*keep_empty=*/false);
  if (plan.chunks().empty()) return;
  const bool dbl = in == c10::kDouble;
  if (sc.src == Src::kList)
    plan.addColumn([&](size_t i) { return scalarBits(sc.list[i].toDouble(), dbl); });
  plan.upload(idx);
  cl_program prog = elementwiseProgram(idx, op, sc.src, static_cast<int>(ins.size()), t, in);
  const bool vector = vectorElementwise(idx, op, static_cast<int>(ins.size()), t, in);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "fe_ew");
  for (size_t c = 0; c < plan.chunks().size(); ++c) {
    cl_uint a = plan.setCommonArgs(k, c);
    mt::setRealArg(k, a, dbl, sc.s);
    mt::setRealArg(k, a, dbl, sc.alpha);
    if (sc.src == Src::kTensor) {
      setArg(k, a, bufferOf(sc.tensor));
    } else {
      setArg(k, a, bufferOf(out[plan.chunks()[c].index[0]]));  // unused
    }
    plan.launchBlocks(k, c, vector);
  }
  OCL_CATCH
}

std::vector<at::Tensor> emptyLike(at::TensorList self) {
  std::vector<at::Tensor> out;
  out.reserve(self.size());
  for (const at::Tensor& t : self) out.push_back(at::empty_like(t));
  return out;
}

// Fast-route test shared by the floating elementwise ops: contiguous, one floating dtype, one
// ocl device, equal sizes across lists.
bool fastRoute(const std::vector<at::TensorList>& lists) {
  if (lists[0].empty() || !lists[0][0].defined()) return false;
  const at::Tensor& t0 = lists[0][0];
  if (t0.device().type() != kOcl || !isReal(t0.scalar_type())) return false;
  return mt::allDense(lists, t0.device(), t0.scalar_type());
}

bool realScalar(const at::Scalar& s) {
  return !s.isComplex();
}
bool realScalars(at::ArrayRef<at::Scalar> s) {
  for (const auto& v : s)
    if (v.isComplex()) return false;
  return true;
}

// A 0-d scalar operand tensor: on ocl it stays there (converted to the compute dtype if needed);
// a CPU scalar becomes a kernel argument. Returns false when the fast route cannot take it.
bool scalarTensor(const at::Tensor& other, const at::Tensor& like, Scalars* sc) {
  if (!other.defined() || other.numel() != 1 || other.dim() != 0 || other.is_complex())
    return false;
  if (other.device().is_cpu()) {
    sc->src = Src::kArg;
    sc->s = other.item().toDouble();
    return true;
  }
  if (other.device() != like.device()) return false;
  const c10::ScalarType c = like.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  sc->src = Src::kTensor;
  sc->tensor = other.scalar_type() == c ? other : other.to(c);
  return true;
}

// ---- binary ops: Scalar, List, ScalarList, Tensor ---------------------------------------------

#define OCL_FE_BINARY_SCALAR(NAME, OP, SLOWNAME)                                              \
  void NAME##ScalarInplace(at::TensorList self, const at::Scalar& s) {                        \
    at::native::check_foreach_api_restrictions(self);                                         \
    if (!fastRoute({self}) || !realScalar(s))                                                 \
      return at::native::foreach_tensor_##SLOWNAME##_scalar_kernel_slow_(self, s);            \
    Scalars sc{Src::kArg, s.toDouble()};                                                      \
    runElementwise(OP, self, {self}, sc);                                                     \
  }                                                                                           \
  std::vector<at::Tensor> NAME##Scalar(at::TensorList self, const at::Scalar& s) {            \
    at::native::check_foreach_api_restrictions(self);                                         \
    if (!fastRoute({self}) || !realScalar(s))                                                 \
      return at::native::foreach_tensor_##SLOWNAME##_scalar_kernel_slow(self, s);             \
    auto out = emptyLike(self);                                                               \
    Scalars sc{Src::kArg, s.toDouble()};                                                      \
    runElementwise(OP, out, {self}, sc);                                                      \
    return out;                                                                               \
  }                                                                                           \
  void NAME##ScalarListInplace(at::TensorList self, at::ArrayRef<at::Scalar> s) {             \
    at::native::check_foreach_api_restrictions(self, s);                                      \
    if (!fastRoute({self}) || !realScalars(s))                                                \
      return at::native::foreach_tensor_##SLOWNAME##_scalarlist_kernel_slow_(self, s);        \
    Scalars sc;                                                                               \
    sc.src = Src::kList;                                                                      \
    sc.list = s;                                                                              \
    runElementwise(OP, self, {self}, sc);                                                     \
  }                                                                                           \
  std::vector<at::Tensor> NAME##ScalarList(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    at::native::check_foreach_api_restrictions(self, s);                                      \
    if (!fastRoute({self}) || !realScalars(s))                                                \
      return at::native::foreach_tensor_##SLOWNAME##_scalarlist_kernel_slow(self, s);         \
    auto out = emptyLike(self);                                                               \
    Scalars sc;                                                                               \
    sc.src = Src::kList;                                                                      \
    sc.list = s;                                                                              \
    runElementwise(OP, out, {self}, sc);                                                      \
    return out;                                                                               \
  }

// List forms without alpha.
#define OCL_FE_BINARY_LIST(NAME, OP, SLOWNAME)                                       \
  void NAME##ListInplace(at::TensorList self, at::TensorList other) {                \
    at::native::check_foreach_api_restrictions(self, other);                         \
    if (!fastRoute({self, other}))                                                   \
      return at::native::foreach_tensor_##SLOWNAME##_list_kernel_slow_(self, other); \
    runElementwise(OP, self, {self, other}, Scalars{});                              \
  }                                                                                  \
  std::vector<at::Tensor> NAME##List(at::TensorList self, at::TensorList other) {    \
    at::native::check_foreach_api_restrictions(self, other);                         \
    if (!fastRoute({self, other}))                                                   \
      return at::native::foreach_tensor_##SLOWNAME##_list_kernel_slow(self, other);  \
    auto out = emptyLike(self);                                                      \
    runElementwise(OP, out, {self, other}, Scalars{});                               \
    return out;                                                                      \
  }

// List forms with alpha (add, sub).
#define OCL_FE_BINARY_LIST_ALPHA(NAME, OP, SLOWNAME)                                           \
  void NAME##ListInplace(at::TensorList self, at::TensorList other, const at::Scalar& alpha) { \
    at::native::check_foreach_api_restrictions(self, other);                                   \
    if (!fastRoute({self, other}) || !realScalar(alpha))                                       \
      return at::native::foreach_tensor_##SLOWNAME##_list_kernel_slow_(self, other, alpha);    \
    Scalars sc;                                                                                \
    sc.alpha = alpha.toDouble();                                                               \
    runElementwise(OP, self, {self, other}, sc);                                               \
  }                                                                                            \
  std::vector<at::Tensor> NAME##List(at::TensorList self, at::TensorList other,                \
                                     const at::Scalar& alpha) {                                \
    at::native::check_foreach_api_restrictions(self, other);                                   \
    if (!fastRoute({self, other}) || !realScalar(alpha))                                       \
      return at::native::foreach_tensor_##SLOWNAME##_list_kernel_slow(self, other, alpha);     \
    auto out = emptyLike(self);                                                                \
    Scalars sc;                                                                                \
    sc.alpha = alpha.toDouble();                                                               \
    runElementwise(OP, out, {self, other}, sc);                                                \
    return out;                                                                                \
  }

OCL_FE_BINARY_SCALAR(add, Op::kAdd, add)
OCL_FE_BINARY_SCALAR(sub, Op::kSub, sub)
OCL_FE_BINARY_SCALAR(mul, Op::kMul, mul)
OCL_FE_BINARY_SCALAR(div, Op::kDiv, div)
OCL_FE_BINARY_SCALAR(maximum, Op::kMaximum, clamp_min)
OCL_FE_BINARY_SCALAR(minimum, Op::kMinimum, clamp_max)
OCL_FE_BINARY_SCALAR(clampMin, Op::kClampMin, clamp_min)
OCL_FE_BINARY_SCALAR(clampMax, Op::kClampMax, clamp_max)
OCL_FE_BINARY_LIST_ALPHA(add, Op::kAdd, add)
OCL_FE_BINARY_LIST_ALPHA(sub, Op::kSub, sub)
OCL_FE_BINARY_LIST(mul, Op::kMul, mul)
OCL_FE_BINARY_LIST(div, Op::kDiv, div)
OCL_FE_BINARY_LIST(maximum, Op::kMaximum, clamp_min)
OCL_FE_BINARY_LIST(minimum, Op::kMinimum, clamp_max)
OCL_FE_BINARY_LIST(clampMin, Op::kClampMin, clamp_min)
OCL_FE_BINARY_LIST(clampMax, Op::kClampMax, clamp_max)
OCL_FE_BINARY_LIST(pow, Op::kPow, pow)

// pow's scalar forms have their own slow-kernel names.
void powScalarInplace(at::TensorList self, const at::Scalar& s) {
  at::native::check_foreach_api_restrictions(self);
  if (!fastRoute({self}) || !realScalar(s))
    return at::native::foreach_tensor_pow_scalar_kernel_slow_(self, s);
  runElementwise(Op::kPow, self, {self}, Scalars{Src::kArg, s.toDouble()});
}
std::vector<at::Tensor> powScalar(at::TensorList self, const at::Scalar& s) {
  at::native::check_foreach_api_restrictions(self);
  if (!fastRoute({self}) || !realScalar(s))
    return at::native::foreach_tensor_pow_scalar_kernel_slow(self, s);
  auto out = emptyLike(self);
  runElementwise(Op::kPow, out, {self}, Scalars{Src::kArg, s.toDouble()});
  return out;
}
void powScalarListInplace(at::TensorList self, at::ArrayRef<at::Scalar> s) {
  at::native::check_foreach_api_restrictions(self, s);
  if (!fastRoute({self}) || !realScalars(s))
    return at::native::foreach_tensor_pow_scalarlist_kernel_slow_(self, s);
  Scalars sc;
  sc.src = Src::kList;
  sc.list = s;
  runElementwise(Op::kPow, self, {self}, sc);
}
std::vector<at::Tensor> powScalarList(at::TensorList self, at::ArrayRef<at::Scalar> s) {
  at::native::check_foreach_api_restrictions(self, s);
  if (!fastRoute({self}) || !realScalars(s))
    return at::native::foreach_tensor_pow_scalarlist_kernel_slow(self, s);
  auto out = emptyLike(self);
  Scalars sc;
  sc.src = Src::kList;
  sc.list = s;
  runElementwise(Op::kPow, out, {self}, sc);
  return out;
}
std::vector<at::Tensor> powScalarAndTensor(const at::Scalar& base, at::TensorList exponent) {
  at::native::check_foreach_api_restrictions(exponent);
  if (!fastRoute({exponent}) || !realScalar(base))
    return at::native::foreach_scalar_pow_list_kernel_slow(base, exponent);
  auto out = emptyLike(exponent);
  runElementwise(Op::kPowScalarBase, out, {exponent}, Scalars{Src::kArg, base.toDouble()});
  return out;
}

// Tensor forms (a one-element scalar tensor for all tensors).
void addTensorInplace(at::TensorList self, const at::Tensor& other, const at::Scalar& alpha) {
  at::native::check_foreach_api_restrictions(self);
  Scalars sc;
  if (!fastRoute({self}) || !realScalar(alpha) || !scalarTensor(other, self[0], &sc))
    return at::native::foreach_tensor_add_tensor_kernel_slow_(self, other, alpha);
  sc.alpha = alpha.toDouble();
  runElementwise(Op::kAdd, self, {self}, sc);
}
std::vector<at::Tensor> addTensor(at::TensorList self, const at::Tensor& other,
                                  const at::Scalar& alpha) {
  at::native::check_foreach_api_restrictions(self);
  Scalars sc;
  if (!fastRoute({self}) || !realScalar(alpha) || !scalarTensor(other, self[0], &sc))
    return at::native::foreach_tensor_add_tensor_kernel_slow(self, other, alpha);
  sc.alpha = alpha.toDouble();
  auto out = emptyLike(self);
  runElementwise(Op::kAdd, out, {self}, sc);
  return out;
}
#define OCL_FE_BINARY_TENSOR(NAME, OP, SLOWNAME)                                       \
  void NAME##TensorInplace(at::TensorList self, const at::Tensor& other) {             \
    at::native::check_foreach_api_restrictions(self);                                  \
    Scalars sc;                                                                        \
    if (!fastRoute({self}) || !scalarTensor(other, self[0], &sc))                      \
      return at::native::foreach_tensor_##SLOWNAME##_tensor_kernel_slow_(self, other); \
    runElementwise(OP, self, {self}, sc);                                              \
  }                                                                                    \
  std::vector<at::Tensor> NAME##Tensor(at::TensorList self, const at::Tensor& other) { \
    at::native::check_foreach_api_restrictions(self);                                  \
    Scalars sc;                                                                        \
    if (!fastRoute({self}) || !scalarTensor(other, self[0], &sc))                      \
      return at::native::foreach_tensor_##SLOWNAME##_tensor_kernel_slow(self, other);  \
    auto out = emptyLike(self);                                                        \
    runElementwise(OP, out, {self}, sc);                                               \
    return out;                                                                        \
  }
OCL_FE_BINARY_TENSOR(mul, Op::kMul, mul)
OCL_FE_BINARY_TENSOR(div, Op::kDiv, div)

// ---- unary ops --------------------------------------------------------------------------------

#define OCL_FE_UNARY(NAME, OP)                                                      \
  void NAME##Inplace(at::TensorList self) {                                         \
    at::native::check_foreach_api_restrictions(self);                               \
    if (!fastRoute({self})) return at::native::foreach_tensor_##NAME##_slow_(self); \
    runElementwise(OP, self, {self}, Scalars{});                                    \
  }                                                                                 \
  std::vector<at::Tensor> NAME##Fn(at::TensorList self) {                           \
    at::native::check_foreach_api_restrictions(self);                               \
    if (!fastRoute({self})) return at::native::foreach_tensor_##NAME##_slow(self);  \
    auto out = emptyLike(self);                                                     \
    runElementwise(OP, out, {self}, Scalars{});                                     \
    return out;                                                                     \
  }
OCL_FE_UNARY(abs, Op::kAbs)
OCL_FE_UNARY(acos, Op::kAcos)
OCL_FE_UNARY(asin, Op::kAsin)
OCL_FE_UNARY(atan, Op::kAtan)
OCL_FE_UNARY(ceil, Op::kCeil)
OCL_FE_UNARY(cos, Op::kCos)
OCL_FE_UNARY(cosh, Op::kCosh)
OCL_FE_UNARY(erf, Op::kErf)
OCL_FE_UNARY(erfc, Op::kErfc)
OCL_FE_UNARY(exp, Op::kExp)
OCL_FE_UNARY(expm1, Op::kExpm1)
OCL_FE_UNARY(floor, Op::kFloor)
OCL_FE_UNARY(frac, Op::kFrac)
OCL_FE_UNARY(log, Op::kLog)
OCL_FE_UNARY(log10, Op::kLog10)
OCL_FE_UNARY(log1p, Op::kLog1p)
OCL_FE_UNARY(log2, Op::kLog2)
OCL_FE_UNARY(neg, Op::kNeg)
OCL_FE_UNARY(reciprocal, Op::kReciprocal)
OCL_FE_UNARY(round, Op::kRound)
OCL_FE_UNARY(rsqrt, Op::kRsqrt)
OCL_FE_UNARY(sigmoid, Op::kSigmoid)
OCL_FE_UNARY(sign, Op::kSign)
OCL_FE_UNARY(sin, Op::kSin)
OCL_FE_UNARY(sinh, Op::kSinh)
OCL_FE_UNARY(sqrt, Op::kSqrt)
OCL_FE_UNARY(tan, Op::kTan)
OCL_FE_UNARY(tanh, Op::kTanh)
OCL_FE_UNARY(trunc, Op::kTrunc)

void zeroInplace(at::TensorList self) {
  at::native::check_foreach_api_restrictions(self);
  if (!fastRoute({self})) return at::native::foreach_tensor_zero_slow_(self);
  runElementwise(Op::kZero, self, {}, Scalars{});
}

// ---- ternary ops: addcmul, addcdiv, lerp --------------------------------------------------------

// scalars as a 1-D CPU tensor (one value per tensor), as ATen's slow kernels accept it.
bool scalarListFromTensor(const at::Tensor& scalars, size_t n, std::vector<at::Scalar>* out) {
  if (!scalars.defined() || !scalars.device().is_cpu() || scalars.dim() != 1 ||
      static_cast<size_t>(scalars.numel()) != n || scalars.is_complex())
    return false;
  const at::Tensor d = scalars.to(at::kDouble).contiguous();
  const double* p = d.const_data_ptr<double>();
  for (size_t i = 0; i < n; ++i) out->emplace_back(p[i]);
  return true;
}

#define OCL_FE_POINTWISE(NAME, OP)                                                                \
  void NAME##ScalarInplace(at::TensorList self, at::TensorList t1, at::TensorList t2,             \
                           const at::Scalar& v) {                                                 \
    at::native::check_foreach_api_restrictions(self, t1, t2);                                     \
    if (!fastRoute({self, t1, t2}) || !realScalar(v))                                             \
      return at::native::foreach_tensor_##NAME##_scalar_slow_(self, t1, t2, v);                   \
    runElementwise(OP, self, {self, t1, t2}, Scalars{Src::kArg, v.toDouble()});                   \
  }                                                                                               \
  std::vector<at::Tensor> NAME##Scalar(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                                       const at::Scalar& v) {                                     \
    at::native::check_foreach_api_restrictions(self, t1, t2);                                     \
    if (!fastRoute({self, t1, t2}) || !realScalar(v))                                             \
      return at::native::foreach_tensor_##NAME##_scalar_slow(self, t1, t2, v);                    \
    auto out = emptyLike(self);                                                                   \
    runElementwise(OP, out, {self, t1, t2}, Scalars{Src::kArg, v.toDouble()});                    \
    return out;                                                                                   \
  }                                                                                               \
  void NAME##ScalarListInplace(at::TensorList self, at::TensorList t1, at::TensorList t2,         \
                               at::ArrayRef<at::Scalar> v) {                                      \
    at::native::check_foreach_api_restrictions(self, t1, t2, v);                                  \
    if (!fastRoute({self, t1, t2}) || !realScalars(v))                                            \
      return at::native::foreach_tensor_##NAME##_scalarlist_slow_(self, t1, t2, v);               \
    Scalars sc;                                                                                   \
    sc.src = Src::kList;                                                                          \
    sc.list = v;                                                                                  \
    runElementwise(OP, self, {self, t1, t2}, sc);                                                 \
  }                                                                                               \
  std::vector<at::Tensor> NAME##ScalarList(at::TensorList self, at::TensorList t1,                \
                                           at::TensorList t2, at::ArrayRef<at::Scalar> v) {       \
    at::native::check_foreach_api_restrictions(self, t1, t2, v);                                  \
    if (!fastRoute({self, t1, t2}) || !realScalars(v))                                            \
      return at::native::foreach_tensor_##NAME##_scalarlist_slow(self, t1, t2, v);                \
    auto out = emptyLike(self);                                                                   \
    Scalars sc;                                                                                   \
    sc.src = Src::kList;                                                                          \
    sc.list = v;                                                                                  \
    runElementwise(OP, out, {self, t1, t2}, sc);                                                  \
    return out;                                                                                   \
  }                                                                                               \
  void NAME##TensorInplace(at::TensorList self, at::TensorList t1, at::TensorList t2,             \
                           const at::Tensor& v) {                                                 \
    at::native::check_foreach_api_restrictions(self, t1, t2);                                     \
    std::vector<at::Scalar> list;                                                                 \
    if (!fastRoute({self, t1, t2}) || !scalarListFromTensor(v, self.size(), &list))               \
      return at::native::foreach_tensor_##NAME##_tensor_slow_(self, t1, t2, v);                   \
    Scalars sc;                                                                                   \
    sc.src = Src::kList;                                                                          \
    sc.list = list;                                                                               \
    runElementwise(OP, self, {self, t1, t2}, sc);                                                 \
  }                                                                                               \
  std::vector<at::Tensor> NAME##Tensor(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                                       const at::Tensor& v) {                                     \
    at::native::check_foreach_api_restrictions(self, t1, t2);                                     \
    std::vector<at::Scalar> list;                                                                 \
    if (!fastRoute({self, t1, t2}) || !scalarListFromTensor(v, self.size(), &list))               \
      return at::native::foreach_tensor_##NAME##_tensor_slow(self, t1, t2, v);                    \
    auto out = emptyLike(self);                                                                   \
    Scalars sc;                                                                                   \
    sc.src = Src::kList;                                                                          \
    sc.list = list;                                                                               \
    runElementwise(OP, out, {self, t1, t2}, sc);                                                  \
    return out;                                                                                   \
  }
OCL_FE_POINTWISE(addcmul, Op::kAddcmul)
OCL_FE_POINTWISE(addcdiv, Op::kAddcdiv)

void lerpScalarInplace(at::TensorList self, at::TensorList end, const at::Scalar& w) {
  at::native::check_foreach_api_restrictions(self, end);
  if (!fastRoute({self, end}) || !realScalar(w))
    return at::native::foreach_tensor_lerp_list_kernel_slow_(self, end, w);
  runElementwise(Op::kLerp, self, {self, end}, Scalars{Src::kArg, w.toDouble()});
}
std::vector<at::Tensor> lerpScalar(at::TensorList self, at::TensorList end, const at::Scalar& w) {
  at::native::check_foreach_api_restrictions(self, end);
  if (!fastRoute({self, end}) || !realScalar(w))
    return at::native::foreach_tensor_lerp_list_kernel_slow(self, end, w);
  auto out = emptyLike(self);
  runElementwise(Op::kLerp, out, {self, end}, Scalars{Src::kArg, w.toDouble()});
  return out;
}
// The weight of the ScalarList form is s; of the List form the third list.
void lerpScalarListInplace(at::TensorList self, at::TensorList end, at::ArrayRef<at::Scalar> w) {
  at::native::check_foreach_api_restrictions(self, end, w);
  if (!fastRoute({self, end}) || !realScalars(w))
    return at::native::foreach_tensor_lerp_scalarlist_kernel_slow_(self, end, w);
  Scalars sc;
  sc.src = Src::kList;
  sc.list = w;
  runElementwise(Op::kLerp, self, {self, end}, sc);
}
std::vector<at::Tensor> lerpScalarList(at::TensorList self, at::TensorList end,
                                       at::ArrayRef<at::Scalar> w) {
  at::native::check_foreach_api_restrictions(self, end, w);
  if (!fastRoute({self, end}) || !realScalars(w))
    return at::native::foreach_tensor_lerp_scalarlist_kernel_slow(self, end, w);
  auto out = emptyLike(self);
  Scalars sc;
  sc.src = Src::kList;
  sc.list = w;
  runElementwise(Op::kLerp, out, {self, end}, sc);
  return out;
}

// ---- copy_ ------------------------------------------------------------------------------------

bool copyable(c10::ScalarType t) {
  return !c10::isComplexType(t);
}

void copyInplace(at::TensorList self, at::TensorList src, bool non_blocking) {
  at::native::check_foreach_api_restrictions(self, src);
  bool fast = !self.empty() && self[0].defined() && self[0].device().type() == kOcl;
  if (fast) {
    fast = mt::allDense({self}, self[0].device(), self[0].scalar_type()) &&
           mt::allDense({self, src}, self[0].device(), std::nullopt) &&
           copyable(self[0].scalar_type());
    for (size_t i = 0; fast && i < src.size(); ++i)
      fast = src[i].scalar_type() == src[0].scalar_type() && copyable(src[i].scalar_type());
  }
  if (!fast) return at::native::foreach_tensor_copy_list_kernel_slow_(self, src, non_blocking);
  runElementwise(Op::kCopy, self, {src}, Scalars{});
}

// ---- norm ---------------------------------------------------------------------------------------

cl_program normProgram(c10::DeviceIndex idx, c10::ScalarType in, c10::ScalarType out) {
  return programs(idx).get({&kForeachNormFamily, dtypeCode(in) | dtypeCode(out) << 6}, [&] {
    const bool dbl = in == c10::kDouble || out == c10::kDouble;
    const std::string acc = dbl ? "double" : "float";
    const std::string it = clStorageType(in), ot = clStorageType(out);
    // Element e of px into acc: |x| summed (ord 1), squared and summed (ord 2), or the maximum
    // (a NaN wins).
    const std::string accumulate = "    const ACC v = fabs((ACC)(" + loadExpr(in, "px", "e") +
                                   "));\n"
                                   "    if (ord == 1) acc += v;\n"
                                   "    else if (ord == 2) acc += v * v;\n"
                                   "    else acc = (isnan(v) || v > acc) ? v : acc;\n";
    // r into tensor j's slot of the output.
    const std::string store = "  __global " + ot + "* po = (__global " + ot + "*)(ob + ooff);\n  " +
                              storeStmt(out, "po", "tab[2 * m + j]", "r") + "\n";
    std::string b =
        "#define ACC " + acc +
        "\n"
        "__kernel void fe_norm(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS,\n"
        "                      __global char* ob, ulong ooff, int ord) {\n"
        "  __local ACC part[256];\n"
        "  __global const long* tab = (__global const long*)(tb + toff);\n"
        "  const int j = get_group_id(0);\n"
        "  const int lid = get_local_id(0), lsz = get_local_size(0);\n"
        "  const long numel = tab[j] - (j > 0 ? tab[j - 1] : 0);\n"
        "  __global " +
        it + "* px = (__global " + it +
        "*)FE_PTR(tab[m + j]);\n"
        "  ACC acc = 0;\n"
        "  for (long e = lid; e < numel; e += lsz) {\n" +
        accumulate +
        "  }\n"
        "  part[lid] = acc;\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  for (int w = lsz / 2; w > 0; w >>= 1) {\n"
        "    if (lid < w) {\n"
        "      const ACC o = part[lid + w];\n"
        "      if (ord == 1 || ord == 2) part[lid] += o;\n"
        "      else part[lid] = (isnan(o) || o > part[lid]) ? o : part[lid];\n"
        "    }\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  }\n"
        "  if (lid == 0) {\n"
        "    const ACC r = ord == 2 ? sqrt(part[0]) : part[0];\n" +
        store + "  }\n}\n";
    // CPU drivers: one work item per tensor walks it front to back. The tree above strides
    // each work item through the tensor by the group size (a 1 KB stride per item: PoCL
    // vectorizes across items, not along the inner loop) and pays 9 barrier-separated loops
    // over 256 items per tensor: 2.3 GB/s on small GPT's 28 parameters, 5 GB/s on 1M-element
    // tensors. float/double inputs run in vectors of 16/8 (lanes added pairwise at the end).
    const bool vec = in == c10::kFloat || in == c10::kDouble;
    const std::string w = in == c10::kDouble ? "8" : "16";
    const std::string vt = acc + w;
    b += "__kernel void fe_norm_item(__global const char* tb, ulong toff, int m, FE_BUF_PARAMS,\n"
         "                           __global char* ob, ulong ooff, int ord) {\n"
         "  __global const long* tab = (__global const long*)(tb + toff);\n"
         "  const int j = get_global_id(0);\n"
         "  if (j >= m) return;\n"
         "  const long numel = tab[j] - (j > 0 ? tab[j - 1] : 0);\n"
         "  __global " +
         it + "* px = (__global " + it +
         "*)FE_PTR(tab[m + j]);\n"
         "  ACC acc = 0;\n"
         "  long e = 0;\n";
    if (vec) {
      const std::string ld = "fabs(vload" + w + "(0, px + e))";
      b += "  " + vt +
           " va = 0;\n"
           "  const long nv = numel - numel % " +
           w +
           ";\n"
           "  if (ord == 1) {\n"
           "    for (; e < nv; e += " +
           w + ") va += " + ld +
           ";\n"
           "  } else if (ord == 2) {\n"
           "    for (; e < nv; e += " +
           w + ") { const " + vt + " v = " + ld +
           "; va = fma(v, v, va); }\n"
           "  } else {\n"
           "    for (; e < nv; e += " +
           w + ") { const " + vt + " v = " + ld +
           "; va = select(va, v, isnan(v) || v > va); }\n"
           "  }\n";
      // lanes pairwise (max keeps a NaN)
      std::string cur = "va";
      for (int width = std::stoi(w); width > 1; width /= 2) {
        const std::string half = acc + (width / 2 > 1 ? std::to_string(width / 2) : "");
        const std::string lo = cur + ".lo", hi = cur + ".hi";
        const std::string nxt = "h" + std::to_string(width / 2);
        const std::string keep_hi = "isnan(" + hi + ") || " + hi + " > " + lo;
        const std::string mx = width == 2 ? "(" + keep_hi + ") ? " + hi + " : " + lo
                                          : "select(" + lo + ", " + hi + ", " + keep_hi + ")";
        b +=
            "  const " + half + " " + nxt + " = ord == 3 ? " + mx + " : " + lo + " + " + hi + ";\n";
        cur = nxt;
      }
      b += "  acc = " + cur + ";\n";
    }
    b += "  for (; e < numel; ++e) {\n" + accumulate +
         "  }\n"
         "  const ACC r = ord == 2 ? sqrt(acc) : acc;\n" +
         store + "}\n";
    return rt::ProgramSource{std::string("foreach_norm<") + c10::toString(in) + ">",
                             mt::kernelHeader() + b, ""};
  });
}

std::vector<at::Tensor> norm(at::TensorList self, const at::Scalar& ord,
                             std::optional<c10::ScalarType> dtype) {
  at::native::check_foreach_api_restrictions(self);
  const double p = ord.isComplex() ? -1 : ord.toDouble();
  int code = 0;
  if (p == 1)
    code = 1;
  else if (p == 2)
    code = 2;
  else if (std::isinf(p) && p > 0)
    code = 3;
  const c10::ScalarType out_t = dtype.value_or(self[0].scalar_type());
  if (code == 0 || !fastRoute({self}) || !isReal(out_t))
    return at::native::foreach_tensor_norm_slow(self, ord, dtype);
  if (code == 3)
    for (const at::Tensor& t : self)
      TORCH_CHECK(t.numel() > 0,
                  "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
                  "operation does not have an identity");
  const c10::DeviceIndex idx = self[0].device().index();
  checkDtypeSupported(out_t, idx);
  const int64_t n = static_cast<int64_t>(self.size());
  at::Tensor out = at::empty({n}, self[0].options().dtype(out_t));
  mt::Plan plan({self}, /*keep_empty=*/true);
  plan.addColumn([](size_t i) { return static_cast<int64_t>(i); });
  plan.upload(idx);
  cl_program prog = normProgram(idx, self[0].scalar_type(), out_t);
  rt::Device& dev = device(idx);
  const bool per_item = codegen::preferItemReductions(dev.info());
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  size_t pow2 = 1;
  while (pow2 * 2 <= local) pow2 *= 2;
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, per_item ? "fe_norm_item" : "fe_norm");
  for (size_t c = 0; c < plan.chunks().size(); ++c) {
    cl_uint a = plan.setCommonArgs(k, c);
    setArg(k, a, bufferOf(out));
    setArg(k, a, static_cast<cl_int>(per_item ? code : (code == 3 ? 0 : code)));
    const size_t tensors = plan.chunks()[c].index.size();
    if (per_item)
      launchND(dev, currentQueue(idx), k, tensors, 1);
    else
      launchND(dev, currentQueue(idx), k, tensors * pow2, pow2);
  }
  OCL_CATCH
  std::vector<at::Tensor> result;
  result.reserve(self.size());
  for (int64_t i = 0; i < n; ++i) result.push_back(out.select(0, i));
  return result;
}

}  // namespace

// lerp.List: out = lerp(x, y, weight z).
namespace {
void lerpListInplace(at::TensorList self, at::TensorList end, at::TensorList w) {
  at::native::check_foreach_api_restrictions(self, end, w);
  if (!fastRoute({self, end, w}))
    return at::native::foreach_tensor_ternary_lerp_slow_(self, end, w);
  runElementwise(Op::kLerp, self, {self, end, w}, Scalars{});
}
std::vector<at::Tensor> lerpList(at::TensorList self, at::TensorList end, at::TensorList w) {
  at::native::check_foreach_api_restrictions(self, end, w);
  if (!fastRoute({self, end, w})) return at::native::foreach_tensor_ternary_lerp_slow(self, end, w);
  auto out = emptyLike(self);
  runElementwise(Op::kLerp, out, {self, end, w}, Scalars{});
  return out;
}
}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define OCL_FE_REG_SCALAR(OPNAME, NAME)                                 \
  m.impl("_foreach_" OPNAME ".Scalar", TORCH_FN(NAME##Scalar));         \
  m.impl("_foreach_" OPNAME "_.Scalar", TORCH_FN(NAME##ScalarInplace)); \
  m.impl("_foreach_" OPNAME ".ScalarList", TORCH_FN(NAME##ScalarList)); \
  m.impl("_foreach_" OPNAME "_.ScalarList", TORCH_FN(NAME##ScalarListInplace));
#define OCL_FE_REG_LIST(OPNAME, NAME)                       \
  m.impl("_foreach_" OPNAME ".List", TORCH_FN(NAME##List)); \
  m.impl("_foreach_" OPNAME "_.List", TORCH_FN(NAME##ListInplace));
  OCL_FE_REG_SCALAR("add", add)
  OCL_FE_REG_SCALAR("sub", sub)
  OCL_FE_REG_SCALAR("mul", mul)
  OCL_FE_REG_SCALAR("div", div)
  OCL_FE_REG_SCALAR("maximum", maximum)
  OCL_FE_REG_SCALAR("minimum", minimum)
  OCL_FE_REG_SCALAR("clamp_min", clampMin)
  OCL_FE_REG_SCALAR("clamp_max", clampMax)
  OCL_FE_REG_SCALAR("pow", pow)
  OCL_FE_REG_LIST("add", add)
  OCL_FE_REG_LIST("sub", sub)
  OCL_FE_REG_LIST("mul", mul)
  OCL_FE_REG_LIST("div", div)
  OCL_FE_REG_LIST("maximum", maximum)
  OCL_FE_REG_LIST("minimum", minimum)
  OCL_FE_REG_LIST("clamp_min", clampMin)
  OCL_FE_REG_LIST("clamp_max", clampMax)
  OCL_FE_REG_LIST("pow", pow)
  m.impl("_foreach_pow.ScalarAndTensor", TORCH_FN(powScalarAndTensor));
  m.impl("_foreach_add.Tensor", TORCH_FN(addTensor));
  m.impl("_foreach_add_.Tensor", TORCH_FN(addTensorInplace));
  m.impl("_foreach_mul.Tensor", TORCH_FN(mulTensor));
  m.impl("_foreach_mul_.Tensor", TORCH_FN(mulTensorInplace));
  m.impl("_foreach_div.Tensor", TORCH_FN(divTensor));
  m.impl("_foreach_div_.Tensor", TORCH_FN(divTensorInplace));
#define OCL_FE_REG_UNARY(NAME)                   \
  m.impl("_foreach_" #NAME, TORCH_FN(NAME##Fn)); \
  m.impl("_foreach_" #NAME "_", TORCH_FN(NAME##Inplace));
  OCL_FE_REG_UNARY(abs)
  OCL_FE_REG_UNARY(acos)
  OCL_FE_REG_UNARY(asin)
  OCL_FE_REG_UNARY(atan)
  OCL_FE_REG_UNARY(ceil)
  OCL_FE_REG_UNARY(cos)
  OCL_FE_REG_UNARY(cosh)
  OCL_FE_REG_UNARY(erf)
  OCL_FE_REG_UNARY(erfc)
  OCL_FE_REG_UNARY(exp)
  OCL_FE_REG_UNARY(expm1)
  OCL_FE_REG_UNARY(floor)
  OCL_FE_REG_UNARY(frac)
  OCL_FE_REG_UNARY(log)
  OCL_FE_REG_UNARY(log10)
  OCL_FE_REG_UNARY(log1p)
  OCL_FE_REG_UNARY(log2)
  OCL_FE_REG_UNARY(neg)
  OCL_FE_REG_UNARY(reciprocal)
  OCL_FE_REG_UNARY(round)
  OCL_FE_REG_UNARY(rsqrt)
  OCL_FE_REG_UNARY(sigmoid)
  OCL_FE_REG_UNARY(sign)
  OCL_FE_REG_UNARY(sin)
  OCL_FE_REG_UNARY(sinh)
  OCL_FE_REG_UNARY(sqrt)
  OCL_FE_REG_UNARY(tan)
  OCL_FE_REG_UNARY(tanh)
  OCL_FE_REG_UNARY(trunc)
  m.impl("_foreach_zero_", TORCH_FN(zeroInplace));
#define OCL_FE_REG_POINTWISE(OPNAME, NAME)                                      \
  m.impl("_foreach_" OPNAME ".Scalar", TORCH_FN(NAME##Scalar));                 \
  m.impl("_foreach_" OPNAME "_.Scalar", TORCH_FN(NAME##ScalarInplace));         \
  m.impl("_foreach_" OPNAME ".ScalarList", TORCH_FN(NAME##ScalarList));         \
  m.impl("_foreach_" OPNAME "_.ScalarList", TORCH_FN(NAME##ScalarListInplace)); \
  m.impl("_foreach_" OPNAME ".Tensor", TORCH_FN(NAME##Tensor));                 \
  m.impl("_foreach_" OPNAME "_.Tensor", TORCH_FN(NAME##TensorInplace));
  OCL_FE_REG_POINTWISE("addcmul", addcmul)
  OCL_FE_REG_POINTWISE("addcdiv", addcdiv)
  m.impl("_foreach_lerp.Scalar", TORCH_FN(lerpScalar));
  m.impl("_foreach_lerp_.Scalar", TORCH_FN(lerpScalarInplace));
  m.impl("_foreach_lerp.ScalarList", TORCH_FN(lerpScalarList));
  m.impl("_foreach_lerp_.ScalarList", TORCH_FN(lerpScalarListInplace));
  m.impl("_foreach_lerp.List", TORCH_FN(lerpList));
  m.impl("_foreach_lerp_.List", TORCH_FN(lerpListInplace));
  m.impl("_foreach_copy_", TORCH_FN(copyInplace));
  m.impl("_foreach_norm.Scalar", TORCH_FN(norm));
}

}  // namespace torch_ocl::aten
