// Host side of kernels/reduce_cols.cl: reductions and softmax over a non-last dimension of a
// contiguous (outer, dim, inner) tensor on CPU drivers, in column tiles of up to 4 KB per row
// (one work item each, walking the reduced dim row by row), with the rows split into groups and
// a merging pass (rc_final) when there are too few tiles to fill the cores.
#include <ATen/ATen.h>

#include "aten/launch.h"
#include "aten/reduce/row_stats.h"

#include <algorithm>

namespace torch_ocl::aten {
namespace {

constexpr int64_t kMaxVectors = 64;  // RC_MAXV in reduce_cols.cl
constexpr int kSoftmaxKind = 7;      // RC_SOFTMAX
constexpr int kSoftmaxBwdKind = 8;   // RC_SOFTMAX_BWD

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
at::Tensor partials(const at::Tensor& like, const Plan& p, int64_t outer, bool dbl) {
  const int64_t n = p.groups > 1 ? outer * p.groups * 2 * p.innerp : 1;
  return at::empty({n}, like.options().dtype(dbl ? at::kDouble : at::kFloat));
}

void setCorr(cl_kernel k, cl_uint& a, bool dbl, double corr) {
  if (dbl)
    setArg(k, a, static_cast<cl_double>(corr));
  else
    setArg(k, a, static_cast<cl_float>(corr));
}

// rc_final over outer x (innerp / VW) vectors.
void launchFinal(rt::Device& dev, cl_command_queue q, cl_program prog, const rt::BufferRef& o0,
                 const rt::BufferRef& o1, const rt::BufferRef& part, int64_t outer, int64_t dim,
                 int64_t inner, const Plan& p, int kind, bool dbl, double corr, bool has_o1,
                 int64_t vw, const rt::BufferRef& x) {
  cl_kernel f = programs(dev.index()).kernel(prog, "rc_final");
  cl_uint a = 0;
  setArg(f, a, o0);
  setArg(f, a, o1);
  setArg(f, a, part);
  for (int64_t v : {outer, dim, inner, p.groups, p.grows}) setArg(f, a, static_cast<cl_long>(v));
  setArg(f, a, static_cast<cl_int>(kind));
  setCorr(f, a, dbl, corr);
  setArg(f, a, static_cast<cl_int>(has_o1));
  setArg(f, a, x);  // var/std: the first row, which the groups' means are relative to
  launchItems(dev, q, f, outer * (p.innerp / vw));
}

}  // namespace

// The indexed kinds (max/min with indices, rc_index) write the indices (long) into out and the
// values into out2 when defined (argmax/argmin write none); the others run rc_reduce.
void colsReduceCpu(RowStat kind, const at::Tensor& x, int64_t outer, int64_t dim, int64_t inner,
                   double correction, const at::Tensor& out, const at::Tensor& out2) {
  const bool indexed = isIndexed(kind);
  const c10::DeviceIndex idx = x.device().index();
  rt::Device& dev = device(idx);
  const c10::ScalarType t = x.scalar_type();
  const bool dbl = t == at::kDouble;
  const int64_t vw = dbl ? 8 : 16;
  const Plan p = plan(dev, outer, dim, inner, vw);
  cl_program prog = softmaxProgram(idx, t, t);
  const at::Tensor part = partials(x, p, outer, dbl);
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
  if (!indexed) setCorr(k, a, dbl, correction);
  setArg(k, a, static_cast<cl_int>(out2.defined()));
  launchItems(dev, q, k, p.items);
  if (p.groups > 1)
    launchFinal(dev, q, prog, o0, o1, pb, outer, dim, inner, p, static_cast<int>(kind), dbl,
                indexed ? 0.0 : correction, out2.defined(), vw, bufferOf(x));
  OCL_CATCH
}

void colsSoftmaxCpu(bool backward, bool log, int64_t outer, int64_t dim, int64_t inner,
                    c10::ScalarType xt, c10::ScalarType yt,
                    std::initializer_list<at::Tensor> tensors) {
  const at::Tensor& anchor = *tensors.begin();
  const c10::DeviceIndex idx = anchor.device().index();
  rt::Device& dev = device(idx);
  const bool dbl = xt == at::kDouble || yt == at::kDouble;
  const int64_t vw = dbl ? 8 : 16;
  const Plan p = plan(dev, outer, dim, inner, vw);
  cl_program prog = softmaxProgram(idx, xt, yt);
  const at::Tensor part = partials(anchor, p, outer, dbl);
  const rt::BufferRef pb = bufferOf(part);
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
    launchItems(dev, q, k, p.items);
  };
  run(0);
  if (p.groups > 1) {
    launchFinal(dev, q, prog, pb, pb, pb, outer, dim, inner, p,
                backward ? kSoftmaxBwdKind : kSoftmaxKind, dbl, 0.0, false, vw, pb);
    run(1);
  }
  OCL_CATCH
}

}  // namespace torch_ocl::aten
