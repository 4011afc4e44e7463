// Host side of kernels/reduce_cols.cl: reductions and softmax over a non-last dimension of a
// contiguous (outer, dim, inner) tensor on CPU drivers, in column tiles of up to 4 KB per row
// (one work item each, walking the reduced dim row by row), with the rows split into groups and
// a merging pass (rc_final) when there are too few tiles to fill the cores. Integer and bool
// inputs run the same kernels from a program of their own (RC_INT: exact integer accumulation).
#include <ATen/ATen.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "aten/reduce/row_stats.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

namespace torch_ocl::aten {
namespace {

constexpr int64_t kMaxVectors = 64;  // RC_MAXV in reduce_cols.cl
constexpr int kSoftmaxKind = 7;      // RC_SOFTMAX
constexpr int kSoftmaxBwdKind = 8;   // RC_SOFTMAX_BWD
char kIntFamily;

// reduce_cols.cl alone (RC_INT) for integer or bool input x, output y (the values of the
// indexed kinds, the result of the others) and accumulation type acc (int or long), in VW lanes
// of acc: one AVX-512 register (16 ints or 8 longs).
cl_program intProgram(c10::DeviceIndex idx, c10::ScalarType x, c10::ScalarType y,
                      c10::ScalarType acc) {
  return programs(idx).get(
      {&kIntFamily, dtypeCode(x) | (dtypeCode(y) << 6) | (dtypeCode(acc) << 12)}, [&] {
        const bool lng = acc == at::kLong;
        const std::string a = lng ? "long" : "int", w = lng ? "8" : "16";
        std::string h = "#define RC_INT 1\ntypedef " + a + " ACC;\ntypedef " + a + w +
                        " ACCV;\n#define VW " + w + "\n";
        h += lng ? "#define RC_LOWEST ((ACC)(-0x7fffffffffffffffL - 1))\n"
                   "#define RC_HIGHEST ((ACC)0x7fffffffffffffffL)\n"
                 : "#define RC_LOWEST ((ACC)(-0x7fffffff - 1))\n"
                   "#define RC_HIGHEST ((ACC)0x7fffffff)\n";
        for (auto [name, t] : {std::pair<const char*, c10::ScalarType>{"X", x}, {"Y", y}}) {
          const std::string n = name, st = clStorageType(t);
          h += "typedef " + st + " " + n + "T;\n";
          h += "#define LOAD_" + n + "(p, i) ((ACC)(p)[i])\n";
          h += "#define STORE_" + n + "(p, i, v) (p)[i] = (" + st + ")(v)\n";
          h +=
              "#define VLOAD_" + n + "(p, i) convert_" + a + w + "(vload" + w + "(0, (p) + (i)))\n";
          h += "#define VSTORE_" + n + "(p, i, v) vstore" + w + "(convert_" + st + w +
               "(v), 0, (p) + (i))\n";
        }
        return rt::ProgramSource{std::string("reduce_cols<") + c10::toString(x) + "->" +
                                     c10::toString(y) + "," + c10::toString(acc) + ">",
                                 withPrelude(h + kernels::source("reduce_cols.cl")), ""};
      });
}

// Whether a sum of dim elements of integer type t stays inside int32 whatever the values and
// the order (dim times the type's largest magnitude below 2^31): then it accumulates exactly in
// int lanes, twice as many as long's (bool, uint8 and int8 up to 8M rows, int16 to 65535).
bool intSumFits(c10::ScalarType t, int64_t dim) {
  const int64_t mag = t == at::kBool    ? 1
                      : t == at::kByte  ? 255
                      : t == at::kChar  ? 128
                      : t == at::kShort ? 32768
                                        : 0;
  return mag > 0 && dim <= std::numeric_limits<int32_t>::max() / mag;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

struct Plan {
  int64_t tw = 0, groups = 1, grows = 0, items = 0, innerp = 0;
};

// Tiles of at most kMaxVectors vectors, evened out over inner; enough items for the cores
// (8 per compute unit, so that a shared or uneven machine still balances), each group keeping
// at least 256 rows.
Plan plan(const rt::Device& dev, int64_t outer, int64_t dim, int64_t inner, int64_t vw) {
  Plan p;
  const int64_t ntiles0 = ceilDiv(inner, kMaxVectors * vw);
  p.tw = ceilDiv(ceilDiv(inner, ntiles0), vw) * vw;
  const int64_t tiles = outer * ceilDiv(inner, p.tw);
  const int64_t want = 8 * std::max<int64_t>(1, dev.info().compute_units);
  if (tiles < want)
    p.groups = std::clamp<int64_t>(ceilDiv(want, tiles), 1, std::max<int64_t>(1, dim / 256));
  p.grows = ceilDiv(dim, p.groups);
  p.groups = ceilDiv(dim, p.grows);
  p.items = tiles * p.groups;
  p.innerp = ceilDiv(inner, vw) * vw;
  return p;
}

void launchItems(rt::Device& dev, cl_command_queue q, cl_kernel k, int64_t items) {
  const size_t local = items >= 1024 ? 16 : 1;
  launchND(dev, q, k, (static_cast<size_t>(items) + local - 1) / local * local, local);
}

// Scratch for the groups' statistics: [outer][groups][2][innerp] of the accumulation type.
at::Tensor partials(const at::Tensor& like, const Plan& p, int64_t outer, c10::ScalarType acc) {
  const int64_t n = p.groups > 1 ? outer * p.groups * 2 * p.innerp : 1;
  return at::empty({n}, like.options().dtype(acc));
}

// The kernels' ACC-typed correction argument.
void setCorr(cl_kernel k, cl_uint& a, c10::ScalarType acc, double corr) {
  switch (acc) {
    case at::kDouble:
      return setArg(k, a, static_cast<cl_double>(corr));
    case at::kLong:
      return setArg(k, a, static_cast<cl_long>(corr));
    case at::kInt:
      return setArg(k, a, static_cast<cl_int>(corr));
    default:
      return setArg(k, a, static_cast<cl_float>(corr));
  }
}

// rc_final over outer x (innerp / VW) vectors.
void launchFinal(rt::Device& dev, cl_command_queue q, cl_program prog, const rt::BufferRef& o0,
                 const rt::BufferRef& o1, const rt::BufferRef& part, int64_t outer, int64_t dim,
                 int64_t inner, const Plan& p, int kind, c10::ScalarType acc, double corr,
                 bool has_o1, int64_t vw, const rt::BufferRef& x) {
  cl_kernel f = programs(dev.index()).kernel(prog, "rc_final");
  cl_uint a = 0;
  setArg(f, a, o0);
  setArg(f, a, o1);
  setArg(f, a, part);
  for (int64_t v : {outer, dim, inner, p.groups, p.grows}) setArg(f, a, static_cast<cl_long>(v));
  setArg(f, a, static_cast<cl_int>(kind));
  setCorr(f, a, acc, corr);
  setArg(f, a, static_cast<cl_int>(has_o1));
  setArg(f, a, x);  // var/std: the first row, which the groups' means are relative to
  launchItems(dev, q, f, outer * (p.innerp / vw));
}

// The device's global memory cache in bytes (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: PoCL reports the
// last-level cache), asked once per device; 0 when the driver does not say.
uint64_t cacheBytes(c10::DeviceIndex idx) {
  static std::mutex mu;
  static std::unordered_map<c10::DeviceIndex, uint64_t> bytes;
  const std::lock_guard<std::mutex> lock(mu);
  auto it = bytes.find(idx);
  if (it == bytes.end()) {
    cl_ulong n = 0;
    if (clGetDeviceInfo(device(idx).id(), CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(n), &n,
                        nullptr) != CL_SUCCESS)
      n = 0;
    it = bytes.emplace(idx, static_cast<uint64_t>(n)).first;
  }
  return it->second;
}

// softmax's plan: plan()'s, except where that splits the rows into groups and narrower tiles
// of all the rows would do: then each tile's columns (dim rows of `bytes` per column: the tensors
// that the writes read again) are sized so that the items in flight, one per compute unit, hold
// at most a quarter of the last-level cache, and the writes, which the same item runs right after
// the statistics, find them there instead of walking memory a second time after rc_final. Rows
// of at least 16 vectors (1 KB of float; narrower strides of whole rows stalled the loads), and
// enough tiles to fill the cores. 4096x4096 float over dim 0 on a 2-core Zen 5 with 32 MiB of L3:
// 4 tiles of 1024 columns in 4 groups -> 16 tiles of 256 columns (4 MiB each), see the commit.
Plan softmaxPlan(const rt::Device& dev, int64_t outer, int64_t dim, int64_t inner, int64_t vw,
                 int64_t bytes, uint64_t cache) {
  const Plan p = plan(dev, outer, dim, inner, vw);
  const int64_t cus = std::max<int64_t>(1, dev.info().compute_units);
  const int64_t minw = 16 * vw;
  if (p.groups == 1 || cache == 0) return p;
  // The widest tiles that fit, and no wider than gives 8 tiles per compute unit.
  const int64_t fit = static_cast<int64_t>(cache / 4 / cus) / (dim * bytes) / vw * vw;
  const int64_t spread = outer * inner / (8 * cus) / vw * vw;
  const int64_t cap = std::min({fit, spread, kMaxVectors * vw});
  if (cap < minw) return p;
  Plan q;
  const int64_t ntiles0 = ceilDiv(inner, cap);
  q.tw = ceilDiv(ceilDiv(inner, ntiles0), vw) * vw;
  const int64_t tiles = outer * ceilDiv(inner, q.tw);
  q.grows = dim;
  q.items = tiles;
  q.innerp = ceilDiv(inner, vw) * vw;
  return q;
}

}  // namespace

// The indexed kinds (max/min with indices, rc_index) write the indices (long) into out and the
// values into out2 when defined (argmax/argmin write none); the others run rc_reduce.
// Floating x: accumulation in float (double for double); integer and bool x: sums and products
// in long (sums of narrow types that cannot leave int32: int), comparisons in int (long for
// int64), outputs of out's dtype.
void colsReduceCpu(RowStat kind, const at::Tensor& x, int64_t outer, int64_t dim, int64_t inner,
                   double correction, const at::Tensor& out, const at::Tensor& out2) {
  const bool indexed = isIndexed(kind);
  const c10::DeviceIndex idx = x.device().index();
  rt::Device& dev = device(idx);
  const c10::ScalarType t = x.scalar_type();
  const bool integer = c10::isIntegralType(t, /*includeBool=*/true);
  const bool sums = kind == RowStat::kSum || kind == RowStat::kProd;
  const c10::ScalarType acc = !integer ? (t == at::kDouble ? at::kDouble : at::kFloat)
                              : sums && !(kind == RowStat::kSum && intSumFits(t, dim)) ? at::kLong
                              : t == at::kLong                                         ? at::kLong
                                                                                       : at::kInt;
  const int64_t vw = acc == at::kDouble || acc == at::kLong ? 8 : 16;
  const Plan p = plan(dev, outer, dim, inner, vw);
  cl_program prog = integer ? intProgram(idx, t, indexed ? t : out.scalar_type(), acc)
                            : softmaxProgram(idx, t, t);
  const at::Tensor part = partials(x, p, outer, acc);
  const rt::BufferRef o0 = bufferOf(out), o1 = bufferOf(out2.defined() ? out2 : out),
                      pb = bufferOf(part);
  OCL_TRY
  cl_command_queue q = currentQueue(idx);
  cl_kernel k = programs(idx).kernel(prog, indexed ? "rc_index" : "rc_reduce");
  cl_uint a = 0;
  setArg(k, a, o0);
  setArg(k, a, o1);
  setArg(k, a, bufferOf(x));
  setArg(k, a, pb);
  for (int64_t v : {outer, dim, inner, p.tw, p.groups, p.grows})
    setArg(k, a, static_cast<cl_long>(v));
  setArg(k, a, static_cast<cl_int>(kind));
  if (!indexed) setCorr(k, a, acc, correction);
  setArg(k, a, static_cast<cl_int>(out2.defined()));
  launchItems(dev, q, k, p.items);
  if (p.groups > 1)
    launchFinal(dev, q, prog, o0, o1, pb, outer, dim, inner, p, static_cast<int>(kind), acc,
                indexed ? 0.0 : correction, out2.defined(), vw, bufferOf(x));
  OCL_CATCH
}

void colsSoftmaxCpu(bool backward, bool log, int64_t outer, int64_t dim, int64_t inner,
                    c10::ScalarType xt, c10::ScalarType yt,
                    std::initializer_list<at::Tensor> tensors) {
  const at::Tensor& anchor = *tensors.begin();
  const c10::DeviceIndex idx = anchor.device().index();
  rt::Device& dev = device(idx);
  const c10::ScalarType acc = xt == at::kDouble || yt == at::kDouble ? at::kDouble : at::kFloat;
  const int64_t vw = acc == at::kDouble ? 8 : 16;
  const uint64_t cache = cacheBytes(idx);
  const Plan p = softmaxPlan(dev, outer, dim, inner, vw,
                             backward ? at::elementSize(yt) * 2 : at::elementSize(xt), cache);
  cl_program prog = softmaxProgram(idx, xt, yt);
  const at::Tensor part = partials(anchor, p, outer, acc);
  const rt::BufferRef pb = bufferOf(part);
  // The output (the first tensor) is stored past the caches (the kernels' nt) when the tensors
  // the kernel walks do not fit in the last-level cache: the output would leave it before it is
  // read again, and a cached store first reads each line it writes (a third more traffic).
  // 4096x4096 float over dim 0 on a 2-core Zen 5 (32 MiB L3), interleaved medians: see the commit.
  uint64_t walked = 0;
  for (const at::Tensor& t : tensors) walked += static_cast<uint64_t>(t.nbytes());
  const bool nt = cache > 0 && walked > cache;
  OCL_TRY
  cl_command_queue q = currentQueue(idx);
  cl_kernel k = programs(idx).kernel(prog, backward ? "rc_softmax_bwd" : "rc_softmax");
  auto run = [&](int phase) {
    cl_uint a = 0;
    for (const at::Tensor& t : tensors) setArg(k, a, bufferOf(t));
    setArg(k, a, pb);
    for (int64_t v : {outer, dim, inner, p.tw, p.groups, p.grows})
      setArg(k, a, static_cast<cl_long>(v));
    setArg(k, a, static_cast<cl_int>(log));
    setArg(k, a, static_cast<cl_int>(phase));
    setArg(k, a, static_cast<cl_int>(nt));
    launchItems(dev, q, k, p.items);
  };
  run(0);
  if (p.groups > 1) {
    launchFinal(dev, q, prog, pb, pb, pb, outer, dim, inner, p,
                backward ? kSoftmaxBwdKind : kSoftmaxKind, acc, 0.0, false, vw, pb);
    run(1);
  }
  OCL_CATCH
}

}  // namespace torch_ocl::aten
