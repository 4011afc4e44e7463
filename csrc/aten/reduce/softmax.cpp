// _softmax / _log_softmax and their backward for float16, bfloat16, float32 and float64 over any
// dim (half_to_float too), on contiguous (outer, dim, inner) views. GPUs: rows along the last dim
// that are long get one work-group each (kernels/softmax.cl), the rest one work item per line.
// CPU drivers (PoCL): one work item per row in explicit vector types (the _v* kernels), and over
// a non-last dim the column tiles of reduce_cols.cpp; TORCH_OCL_TREE_REDUCTIONS=1 forces the GPU
// shapes.
// _masked_softmax (the Transformer fast path's softmax) and its backward: one work item per line,
// the boolean mask read through stride-0 views instead of CPU's expanded copies.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/_log_softmax_backward_data_meta.h>
#include <ATen/ops/_log_softmax_meta.h>
#include <ATen/ops/_softmax_backward_data_meta.h>
#include <ATen/ops/_softmax_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/reduce/row_stats.h"
#include "aten/structured.h"
#include "aten/vector_macros.h"
#include "codegen/reduce.h"

#include <algorithm>
#include <limits>

namespace torch_ocl::aten {
namespace {

char kSoftmaxFamily;
constexpr size_t kRowLocal = 256;  // SOFTMAX_LOCAL in softmax.cl
constexpr int64_t kRowsMinDim = 256;
// The narrowest non-last-dim lines (inner) that take the column tiles of reduce_cols.cpp.
constexpr int64_t kColsMinInner = 32;
constexpr int64_t kSoftmaxColBlock = 4;  // SM_NB in softmax.cl

}  // namespace

cl_program softmaxProgram(c10::DeviceIndex idx, c10::ScalarType x, c10::ScalarType y) {
  checkDtypeSupported(x, idx);
  checkDtypeSupported(y, idx);
  return programs(idx).get({&kSoftmaxFamily, dtypeCode(x) | (dtypeCode(y) << 6)}, [&] {
    const c10::ScalarType acc = x == at::kDouble || y == at::kDouble ? at::kDouble : at::kFloat;
    std::string h = "typedef " + std::string(clComputeType(acc)) + " ACC;\n";
    h += mathMacros(clComputeType(acc));
    h += "typedef " + std::string(clStorageType(x)) + " XT;\n";
    h += "typedef " + std::string(clStorageType(y)) + " YT;\n";
    for (auto [name, t] : {std::pair<const char*, c10::ScalarType>{"X", x}, {"Y", y}}) {
      h += std::string("#define LOAD_") + name + "(p, i) ((ACC)" +
           convertExpr(t, acc, loadExpr(t, "(p)", "(i)")) + ")\n";
      h += std::string("#define STORE_") + name + "(p, i, v) " +
           storeStmt(t, "(p)", "(i)", convertExpr(acc, t, "(v)")) + "\n";
    }
    h += vectorTypeMacros(acc) + vectorAccessMacros("X", x, acc) + vectorAccessMacros("Y", y, acc);
    return rt::ProgramSource{
        std::string("softmax<") + c10::toString(x) + "->" + c10::toString(y) + ">",
        withPrelude(h + kernels::source("softmax.cl") + kernels::source("reduce_cols.cl")), ""};
  });
}

namespace {

bool native(c10::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16;
}

// Integer and bool inputs the column tiles take (reduce_cols.cpp's RC_INT program).
bool tileInteger(c10::ScalarType t) {
  return t == at::kBool || t == at::kByte || t == at::kChar || t == at::kShort || t == at::kInt ||
         t == at::kLong;
}

// The kinds that make sense on integers: sum (nansum is the same) and prod into an integer
// dtype, amax/amin, max/min with indices.
bool integerKind(RowStat k) {
  return k == RowStat::kSum || k == RowStat::kNanSum || k == RowStat::kProd ||
         k == RowStat::kAmax || k == RowStat::kAmin || isIndexed(k);
}

// The items of a CPU launch (a whole row or line each); small groups keep both cores busy.
void launchItems(rt::Device& dev, c10::DeviceIndex idx, cl_kernel k, int64_t items) {
  const size_t local = items >= 1024 ? 16 : 1;
  launchND(dev, currentQueue(idx), k, (static_cast<size_t>(items) + local - 1) / local * local,
           local);
}

// Runs the forward (tensors = {y, x}) or backward (tensors = {gx, gy, y}) kernel; x/gx are of
// type xt and y/gy of type yt.
void launchSoftmax(bool backward, bool log, const Lines& g, c10::ScalarType xt, c10::ScalarType yt,
                   std::initializer_list<at::Tensor> tensors) {
  const at::Tensor& anchor = *tensors.begin();
  if (anchor.numel() == 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  rt::Device& dev = device(idx);
  // CPU devices (PoCL) run a work-group's items one after the other, so trees in local memory
  // only cost there (measured 4x slower than one item per row); GPUs want the group per row.
  // Over a non-last dim CPU drivers take the column tiles (reduce_cols.cpp).
  // Narrower lines (inner < kColsMinInner): the _vcols kernels, VW lines per work item (forward:
  // kSoftmaxColBlock vectors), the last partial block lane by lane.
  const bool cpu = codegen::preferItemReductions(dev.info());
  if (cpu && g.inner >= kColsMinInner)
    return colsSoftmaxCpu(backward, log, g.outer, g.len, g.inner, xt, yt, tensors);
  cl_program prog = softmaxProgram(idx, xt, yt);
  const bool rows = !cpu && g.inner == 1 && g.len >= kRowsMinDim;
  const char* shape = cpu ? (g.inner == 1 ? "_vrows" : "_vcols") : rows ? "_rows" : "";
  const std::string name = std::string(backward ? "softmax_bwd" : "softmax_fwd") + shape;
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name.c_str());
  cl_uint a = 0;
  for (const at::Tensor& t : tensors) setArg(k, a, bufferOf(t));
  if (!rows) setArg(k, a, static_cast<cl_long>(g.outer));
  setArg(k, a, static_cast<cl_long>(g.len));
  if (!rows && (!cpu || g.inner != 1)) setArg(k, a, static_cast<cl_long>(g.inner));
  setArg(k, a, static_cast<cl_int>(log));
  if (cpu) {
    const int64_t vw = xt == at::kDouble || yt == at::kDouble ? 8 : 16;
    const int64_t cols = backward ? vw : kSoftmaxColBlock * vw;
    launchItems(dev, idx, k, g.inner == 1 ? g.outer : g.outer * ((g.inner + cols - 1) / cols));
  } else if (rows) {
    size_t kwg = 0;
    OCL_CHECK(clGetKernelWorkGroupInfo(k, dev.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof(kwg), &kwg,
                                       nullptr));
    size_t local = 1;
    const size_t cap = std::min<size_t>({kRowLocal, kwg, dev.info().max_work_group_size});
    while (local * 2 <= cap) local *= 2;
    const size_t global = static_cast<size_t>(g.outer) * local;
    launchND(dev, currentQueue(idx), k, global, local);
  } else {
    launch1D(dev, currentQueue(idx), k, g.outer * g.inner);
  }
  OCL_CATCH
}

void forwardImpl(bool log, const at::Tensor& out, const at::Tensor& self, int64_t dim) {
  checkSameDevice({out, self});
  const at::Tensor x = self.contiguous();
  at::Tensor y = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  launchSoftmax(false, log, linesOf(x, dim), x.scalar_type(), y.scalar_type(), {y, x});
  if (!y.is_same(out)) out.copy_(y);
}

void backwardImpl(bool log, const at::Tensor& grad_input, const at::Tensor& grad_output,
                  const at::Tensor& output, int64_t dim) {
  checkSameDevice({grad_input, grad_output, output});
  const at::Tensor gy = grad_output.contiguous();
  const at::Tensor y =
      output.scalar_type() == gy.scalar_type() ? output.contiguous() : output.to(gy.scalar_type());
  at::Tensor gx =
      grad_input.is_contiguous() ? grad_input : at::empty(grad_input.sizes(), grad_input.options());
  launchSoftmax(true, log, linesOf(gy, dim), gx.scalar_type(), gy.scalar_type(), {gx, gy, y});
  if (!gx.is_same(grad_input)) grad_input.copy_(gx);
}

template <class Meta, bool kLog>
at::Tensor forwardFn(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const char* op = kLog ? "aten::_log_softmax" : "aten::_softmax";
  if (!native(self.scalar_type()))
    return runFallback(op, "", {self, dim, half_to_float})[0].toTensor();
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(self, dim, half_to_float);
  forwardImpl(kLog, s.output(), self, dim);
  return s.output();
}

template <class Meta, bool kLog>
at::Tensor& forwardOut(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  const char* op = kLog ? "aten::_log_softmax" : "aten::_softmax";
  if (!native(self.scalar_type()) || !native(out.scalar_type())) {
    runFallback(op, "out", {self, dim, half_to_float, out});
    return out;
  }
  Structured<Meta> s(Mode::kOut, &out);
  s.meta(self, dim, half_to_float);
  forwardImpl(kLog, out, self, dim);
  return out;
}

template <class Meta, bool kLog>
at::Tensor backwardFn(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                      c10::ScalarType input_dtype) {
  const char* op = kLog ? "aten::_log_softmax_backward_data" : "aten::_softmax_backward_data";
  checkSameDevice({grad_output, output});
  if (!native(grad_output.scalar_type()) || !native(input_dtype))
    return runFallback(op, "", {grad_output, output, dim, input_dtype})[0].toTensor();
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, output, dim, input_dtype);
  backwardImpl(kLog, s.output(), grad_output, output, dim);
  return s.output();
}

template <class Meta, bool kLog>
at::Tensor& backwardOut(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                        c10::ScalarType input_dtype, at::Tensor& out) {
  const char* op = kLog ? "aten::_log_softmax_backward_data" : "aten::_softmax_backward_data";
  checkSameDevice({grad_output, output, out});
  if (!native(grad_output.scalar_type()) || !native(input_dtype) || !native(out.scalar_type())) {
    runFallback(op, "out", {grad_output, output, dim, input_dtype, out});
    return out;
  }
  Structured<Meta> s(Mode::kOut, &out);
  s.meta(grad_output, output, dim, input_dtype);
  backwardImpl(kLog, out, grad_output, output, dim);
  return out;
}

// ---- _masked_softmax ---------------------------------------------------------------------------

struct alignas(8) MaskGeom {
  cl_long sizes[kMaxDims];
  cl_long mstrides[kMaxDims];
  cl_long ndim, msd;
};

// Geometry of a mask view m (expanded to x's sizes) for the masked kernels over dim.
MaskGeom maskGeom(const at::Tensor& x, const at::Tensor& m, int64_t dim) {
  TORCH_CHECK(x.dim() <= kMaxDims, "torch-ocl: _masked_softmax supports at most ", kMaxDims,
              " dimensions, got ", x.dim());
  MaskGeom g{};
  g.ndim = x.dim();
  for (int64_t d = 0; d < x.dim(); ++d) {
    g.sizes[d] = x.size(d);
    g.mstrides[d] = x.size(d) == 1 ? 0 : m.stride(d);
  }
  g.msd = x.dim() == 0 ? 0 : g.mstrides[dim];
  return g;
}

bool maskedNative(c10::ScalarType t) {
  return native(t);
}

// Launches masked_softmax_fwd (tensors {y, x, mask}) or masked_softmax_bwd ({gx, gy, y, mask}).
void launchMasked(bool backward, const at::Tensor& x, const at::Tensor& mask, int64_t dim,
                  std::initializer_list<at::Tensor> tensors) {
  if (x.numel() == 0) return;
  const c10::DeviceIndex idx = x.device().index();
  const Lines g = linesOf(x, dim);
  const MaskGeom mg = maskGeom(x, mask, dim);
  cl_program prog = softmaxProgram(idx, x.scalar_type(), x.scalar_type());
  rt::Device& dev = device(idx);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, backward ? "masked_softmax_bwd" : "masked_softmax_fwd");
  cl_uint a = 0;
  for (const at::Tensor& t : tensors) setArg(k, a, bufferOf(t));
  setArg(k, a, bufferOf(mask));
  setArg(k, a, static_cast<cl_long>(g.outer));
  setArg(k, a, static_cast<cl_long>(g.len));
  setArg(k, a, static_cast<cl_long>(g.inner));
  setArg(k, a, mg);
  launchItems(dev, idx, k, g.outer * g.inner);
  OCL_CATCH
}

// CPU's mask_type rules (aten/src/ATen/native/SoftMax.cpp): 0 an (L, L) attention mask and 1 a
// (B, L) padding mask of a 4-D input, both broadcast here as stride-0 views instead of CPU's
// contiguous expansion; any other mask (or input) rank is the generic type 2, whose mask has the
// input's shape. True marks an element left out.
at::Tensor maskedSoftmax(const at::Tensor& self, const at::Tensor& mask,
                         std::optional<int64_t> dim_opt, std::optional<int64_t> mask_type_opt) {
  checkSameDevice({self, mask});
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be a boolean tensor");
  if (!maskedNative(self.scalar_type()))
    return runFallback("aten::_masked_softmax", "", {self, mask, dim_opt, mask_type_opt})[0]
        .toTensor();
  std::optional<int64_t> mask_type = mask_type_opt;
  if (mask.dim() != 2 || self.dim() != 4) mask_type = 2;
  at::Tensor m = mask;
  if (mask_type == 2) {
    TORCH_CHECK(self.sizes() == mask.sizes(),
                "For mask_type == 2 mask shape should match input shape")
  } else if (mask_type == 1) {
    TORCH_CHECK(self.size(0) == mask.size(0) && self.size(2) == mask.size(1) &&
                    self.size(3) == mask.size(1),
                "For mask_type == 1 mask shape should be (B, L)");
    m = mask.view({self.size(0), 1, 1, self.size(2)}).expand(self.sizes());
  } else if (mask_type == 0) {
    TORCH_CHECK(self.size(2) == mask.size(0) && self.size(2) == mask.size(1) &&
                    self.size(3) == mask.size(1),
                "For mask_type == 0 mask shape should be (L, L)");
    m = mask.view({1, 1, self.size(2), self.size(2)}).expand(self.sizes());
  }
  TORCH_CHECK(mask_type.has_value(), "Mask Type should be defined");
  TORCH_CHECK(*mask_type == 0 || *mask_type == 1 || *mask_type == 2,
              "Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask)");
  const int64_t dim = at::maybe_wrap_dim(dim_opt.value_or(self.dim() - 1), self.dim());
  at::Tensor out = at::empty_like(self);
  const at::Tensor x = self.contiguous();
  at::Tensor y = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  launchMasked(false, x, m, dim, {y, x});
  if (!y.is_same(out)) out.copy_(y);
  return out;
}

at::Tensor maskedSoftmaxBackward(const at::Tensor& grad_output, const at::Tensor& output,
                                 const at::Tensor& mask, std::optional<int64_t> dim_opt) {
  checkSameDevice({grad_output, output, mask});
  TORCH_CHECK(grad_output.sizes() == mask.sizes(), "Mask shape should match grad shape");
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be a boolean tensor");
  if (!maskedNative(grad_output.scalar_type()))
    return runFallback("aten::_masked_softmax_backward", "",
                       {grad_output, output, mask, dim_opt})[0]
        .toTensor();
  TORCH_CHECK(output.scalar_type() == grad_output.scalar_type(), "expected scalar type ",
              grad_output.scalar_type(), " but found ", output.scalar_type());
  TORCH_CHECK(output.sizes() == grad_output.sizes(),
              "_masked_softmax_backward: output and grad_output must have the same shape, got ",
              output.sizes(), " and ", grad_output.sizes());
  const at::Tensor gy = grad_output.contiguous(), y = output.contiguous();
  const int64_t dim = at::maybe_wrap_dim(dim_opt.value_or(output.dim() - 1), grad_output.dim());
  at::Tensor gx = at::empty_like(gy);
  launchMasked(true, gy, mask, dim, {gx, gy, y});
  return gx;
}

using LogFwd = at::meta::structured__log_softmax;
using Fwd = at::meta::structured__softmax;
using LogBwd = at::meta::structured__log_softmax_backward_data;
using Bwd = at::meta::structured__softmax_backward_data;

}  // namespace

namespace {

// The whole of a large contiguous float tensor reduced to one value (sum, mean, nansum, amax,
// amin): its elements as an R x C matrix whose columns the column tiles reduce (registers across
// 64-column panels, rows streamed), then the C column results by the generator. The generator
// alone gives one work item a chunk of 8192 elements as a chain of dependent scalar combines:
// 4M float32 summed, 2 AVX-512 cores, 4.0 -> 0.41-0.48 ms (loaded machine, one process).
bool wholeTensorCpu(RowStat kind, const at::Tensor& self, const at::Tensor& out) {
  const bool decomposable = kind == RowStat::kSum || kind == RowStat::kMean ||
                            kind == RowStat::kNanSum || kind == RowStat::kAmax ||
                            kind == RowStat::kAmin;
  const int64_t n = self.numel();
  // float32/float64 only: 16-bit column results would be rounded before their total.
  const c10::ScalarType t = self.scalar_type();
  if (!decomposable || (t != at::kFloat && t != at::kDouble) || !self.is_contiguous() ||
      n < 65536 || out.numel() != 1 || out.scalar_type() != self.scalar_type() ||
      out.device() != self.device() ||
      !codegen::preferItemReductions(device(self.device().index()).info()))
    return false;
  int64_t cols = 1024;
  while (cols >= 64 && n % cols != 0) cols /= 2;
  if (cols < 64) return false;
  const at::Tensor part = at::empty({cols}, self.options());
  colsReduceCpu(kind, self.view({n / cols, cols}), 1, n / cols, cols, 0, part, {});
  at::Tensor total;
  switch (kind) {
    case RowStat::kMean:
      total = at::mean(part);  // every column holds the same number of elements
      break;
    case RowStat::kAmax:
      total = at::amax(part);
      break;
    case RowStat::kAmin:
      total = at::amin(part);
      break;
    default:
      total = at::sum(part);  // nansum's columns hold no NaN
  }
  out.view(at::IntArrayRef{}).copy_(total);
  return true;
}

}  // namespace

bool rowStatsCpu(RowStat kind, const at::Tensor& self, at::OptionalIntArrayRef dims,
                 double correction, const at::Tensor& out, const at::Tensor& out2) {
  if (self.defined() && self.dim() > 0 && !out2.defined() &&
      (!dims || dims->empty() || dims->size() == static_cast<size_t>(self.dim())) &&
      wholeTensorCpu(kind, self, out))
    return true;
  if (!self.defined() || self.dim() == 0 || !dims || dims->size() != 1) return false;
  const bool integer = tileInteger(self.scalar_type()) && integerKind(kind);
  if (!(native(self.scalar_type()) || integer) || !self.is_contiguous() || self.numel() == 0)
    return false;
  const c10::DeviceIndex idx = self.device().index();
  rt::Device& dev = device(idx);
  if (!codegen::preferItemReductions(dev.info())) return false;
  const Lines g = linesOf(self, (*dims)[0]);
  const bool indexed = isIndexed(kind);
  if (integer && kind == RowStat::kNanSum) kind = RowStat::kSum;  // no NaN in integers
  // Integer sums and products accumulate in long and store into any integer dtype (PyTorch's
  // default: long).
  const bool int_sum = integer && (kind == RowStat::kSum || kind == RowStat::kProd);
  for (const at::Tensor* o : {&out, &out2}) {
    if (!o->defined()) continue;
    const c10::ScalarType want = indexed && o == &out ? at::kLong : self.scalar_type();
    const bool type_ok = int_sum ? tileInteger(o->scalar_type()) && o->scalar_type() != at::kBool
                                 : o->scalar_type() == want;
    if (o->device() != self.device() || !type_ok || !o->is_contiguous() ||
        o->numel() != g.outer * g.inner)
      return false;
  }
  // Float and int tiles count rows in int lanes.
  if (indexed && g.len > std::numeric_limits<int32_t>::max()) return false;
  // Integers only in the column tiles; the generator keeps the rows and narrow lines.
  if (integer && (g.inner == 1 || g.inner < kColsMinInner)) return false;
  if (g.inner != 1) {
    if (g.inner >= kColsMinInner) {
      colsReduceCpu(kind, self, g.outer, g.len, g.inner, correction, out, out2);
      return true;
    }
  }
  // Rows (inner == 1: stats_vrows) and narrow lines (stats_vcols, VW lines per work item): the
  // generator covers the other kinds there.
  if (static_cast<int>(kind) > static_cast<int>(RowStat::kStd)) return false;
  const c10::ScalarType t = self.scalar_type();
  const bool dbl = t == at::kDouble;
  const int64_t vw = dbl ? 8 : 16;
  const int64_t items = g.inner == 1 ? g.outer : g.outer * ((g.inner + vw - 1) / vw);
  // A few long lines: the generator splits them into chunks for the cores.
  if (items < 32 && g.len >= 8192) return false;
  cl_program prog = softmaxProgram(idx, t, t);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, g.inner == 1 ? "stats_vrows" : "stats_vcols");
  cl_uint a = 0;
  setArg(k, a, bufferOf(out));
  setArg(k, a, bufferOf(out2.defined() ? out2 : out));
  setArg(k, a, bufferOf(self));
  setArg(k, a, static_cast<cl_long>(g.outer));
  setArg(k, a, static_cast<cl_long>(g.len));
  if (g.inner != 1) setArg(k, a, static_cast<cl_long>(g.inner));
  setArg(k, a, static_cast<cl_int>(kind));
  if (dbl)
    setArg(k, a, static_cast<cl_double>(correction));
  else
    setArg(k, a, static_cast<cl_float>(correction));
  setArg(k, a, static_cast<cl_int>(out2.defined()));
  launchItems(dev, idx, k, items);
  OCL_CATCH
  return true;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_log_softmax", TORCH_FN((forwardFn<LogFwd, true>)));
  m.impl("_log_softmax.out", TORCH_FN((forwardOut<LogFwd, true>)));
  m.impl("_log_softmax_backward_data", TORCH_FN((backwardFn<LogBwd, true>)));
  m.impl("_log_softmax_backward_data.out", TORCH_FN((backwardOut<LogBwd, true>)));
  m.impl("_masked_softmax", TORCH_FN(maskedSoftmax));
  m.impl("_masked_softmax_backward", TORCH_FN(maskedSoftmaxBackward));
  m.impl("_softmax", TORCH_FN((forwardFn<Fwd, false>)));
  m.impl("_softmax.out", TORCH_FN((forwardOut<Fwd, false>)));
  m.impl("_softmax_backward_data", TORCH_FN((backwardFn<Bwd, false>)));
  m.impl("_softmax_backward_data.out", TORCH_FN((backwardOut<Bwd, false>)));
}

}  // namespace torch_ocl::aten
