// nll_loss and nll_loss2d forward and backward (class indices, optional weights, ignore_index,
// none/mean/sum) for float, double, half and bfloat16 log-probabilities of shape (C), (N, C),
// (N, C, H, W); accumulation in float (double for double). Out-of-range targets are a
// device-side check (device_check.h): the kernel records them and the error is raised at the next
// synchronisation point, or by the op itself in debug mode, as CUDA's device-side assert; the
// forward never waits for the device.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <torch/library.h>

#include "aten/device_check.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/structured.h"
#include "aten/typed_program.h"
#include "codegen/pointwise.h"
#include "codegen/reduce.h"

namespace torch_ocl::aten {
namespace {

char kNllFamily;

bool native(const at::Tensor& self, const at::Tensor& target, const at::OptionalTensorRef& weight) {
  const bool real = at::isFloatingType(self.scalar_type());
  const bool w_ok = !weight || !weight->defined() || weight->scalar_type() == self.scalar_type();
  return real && target.scalar_type() == at::kLong && w_ok;
}

at::OptionalTensorRef optRef(const std::optional<at::Tensor>& w) {
  return w.has_value() ? at::OptionalTensorRef(*w) : at::OptionalTensorRef();
}

struct NllArgs {
  at::Tensor logp, target, weight;  // contiguous; weight undefined when absent
  int64_t n = 1, c = 1, inner = 1;  // (N, C, inner) view of the input
};

NllArgs prepare(const at::Tensor& self, const at::Tensor& target,
                const at::OptionalTensorRef& weight) {
  NllArgs a;
  a.logp = self.contiguous();
  a.target = target.contiguous();
  if (weight && weight->defined()) a.weight = weight->contiguous();
  a.n = self.dim() >= 2 ? self.size(0) : 1;
  a.c = self.dim() >= 2 ? self.size(1) : self.size(0);
  for (int64_t d = 2; d < self.dim(); ++d) a.inner *= self.size(d);
  return a;
}

void setWeight(cl_kernel k, cl_uint& i, const NllArgs& a, const rt::BufferRef& any) {
  setArg(k, i, a.weight.defined() && a.weight.numel() > 0 ? bufferOf(a.weight) : any);
  setArg(k, i, static_cast<cl_int>(a.weight.defined()));
}

// typedProgram's macros with the device-check source (ocl_checked_index) in front of the file.
cl_program nllProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kNllFamily, dtypeCode(t)}, [&] {
    const std::string acc = t == c10::kDouble ? "double" : "float";
    const std::string defs = std::string("#define ST ") + clStorageType(t) + "\n#define ACC " +
                             acc + "\n#define LD(p, i) ((ACC)(" + loadExpr(t, "(p)", "(i)") +
                             "))\n#define STORE(p, i, v) " + storeStmt(t, "(p)", "(i)", "(v)") +
                             "\n" + deviceCheckSource();
    return rt::ProgramSource{std::string("nll_loss.cl<") + c10::toString(t) + ">",
                             withPrelude(defs + kernels::source("nll_loss.cl")), ""};
  });
}

void setRecord(cl_kernel k, cl_uint& i, c10::DeviceIndex idx, bool spatial) {
  const rt::BufferRef rec = deviceErrorRecord(idx);
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_mem), &rec.mem));
  setArg(k, i, static_cast<cl_int>(spatial ? CheckedOp::kNllLoss2d : CheckedOp::kNllLoss));
}

void forwardImpl(const at::Tensor& output, const at::Tensor& total_weight, const at::Tensor& self,
                 const at::Tensor& target, const at::OptionalTensorRef& weight, int64_t reduction,
                 int64_t ignore_index, bool spatial) {
  const NllArgs a = prepare(self, target, weight);
  const c10::DeviceIndex idx = self.device().index();
  cl_program prog = nllProgram(idx, self.scalar_type());
  const rt::BufferRef any = bufferOf(total_weight);
  const rt::BufferRef lp = a.logp.numel() > 0 ? bufferOf(a.logp) : any;
  const rt::BufferRef tg = a.target.numel() > 0 ? bufferOf(a.target) : any;
  OCL_TRY
  if (reduction == at::Reduction::None) {
    if (a.n * a.inner > 0) {
      cl_kernel k = programs(idx).kernel(prog, "nll_fwd_none");
      cl_uint i = 0;
      setArg(k, i, bufferOf(output));
      setArg(k, i, lp);
      setArg(k, i, tg);
      setWeight(k, i, a, any);
      setArg(k, i, static_cast<cl_long>(a.n));
      setArg(k, i, static_cast<cl_long>(a.c));
      setArg(k, i, static_cast<cl_long>(a.inner));
      setArg(k, i, static_cast<cl_long>(ignore_index));
      setRecord(k, i, idx, spatial);
      launch1D(device(idx), currentQueue(idx), k, a.n * a.inner);
    }
    total_weight.zero_();
  } else {
    cl_kernel k = programs(idx).kernel(prog, "nll_fwd_reduce");
    cl_uint i = 0;
    setArg(k, i, bufferOf(output));
    setArg(k, i, bufferOf(total_weight));
    setArg(k, i, lp);
    setArg(k, i, tg);
    setWeight(k, i, a, any);
    setArg(k, i, static_cast<cl_long>(a.n));
    setArg(k, i, static_cast<cl_long>(a.c));
    setArg(k, i, static_cast<cl_long>(a.inner));
    setArg(k, i, static_cast<cl_long>(ignore_index));
    setArg(k, i, static_cast<cl_int>(reduction == at::Reduction::Mean));
    setRecord(k, i, idx, spatial);
    launch1D(device(idx), currentQueue(idx), k, 1);
  }
  OCL_CATCH
}

std::tuple<at::Tensor, at::Tensor> nllForwardFn(const at::Tensor& self, const at::Tensor& target,
                                                const std::optional<at::Tensor>& weight,
                                                int64_t reduction, int64_t ignore_index) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w)) {
    auto r =
        runFallback("aten::nll_loss_forward", "", {self, target, weight, reduction, ignore_index});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  Structured<at::meta::structured_nll_loss_forward> s(Mode::kFunctional, nullptr);
  s.meta(self, target, w, reduction, ignore_index);
  forwardImpl(s.output(0), s.output(1), self, target, w, reduction, ignore_index, false);
  return {s.output(0), s.output(1)};
}

std::tuple<at::Tensor&, at::Tensor&> nllForwardOut(const at::Tensor& self, const at::Tensor& target,
                                                   const std::optional<at::Tensor>& weight,
                                                   int64_t reduction, int64_t ignore_index,
                                                   at::Tensor& output, at::Tensor& total_weight) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || output.scalar_type() != self.scalar_type()) {
    runFallback("aten::nll_loss_forward", "output",
                {self, target, weight, reduction, ignore_index, output, total_weight});
    return {output, total_weight};
  }
  Structured<at::meta::structured_nll_loss_forward> s(Mode::kOut, &output, &total_weight);
  s.meta(self, target, w, reduction, ignore_index);
  forwardImpl(output, total_weight, self, target, w, reduction, ignore_index, false);
  return {output, total_weight};
}

void backwardImpl(const at::Tensor& grad_input, const at::Tensor& grad_output,
                  const at::Tensor& self, const at::Tensor& target,
                  const at::OptionalTensorRef& weight, int64_t reduction, int64_t ignore_index,
                  const at::Tensor& total_weight) {
  const NllArgs a = prepare(self, target, weight);
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::empty_like(a.logp);
  // One kernel writes every element of gi (zeros included): no zero fill first.
  if (gi.numel() > 0) {
    const c10::DeviceIndex idx = self.device().index();
    const at::Tensor go = grad_output.contiguous();
    const at::Tensor tw = total_weight.contiguous();
    cl_program prog = nllProgram(idx, self.scalar_type());
    const rt::BufferRef any = bufferOf(gi);
    OCL_TRY
    // CPU drivers, (N, C) inputs: a row per work item (nll_bwd_rows); else an item per element.
    const bool rows = a.inner == 1 && codegen::preferItemReductions(device(idx).info());
    cl_kernel k = programs(idx).kernel(prog, rows ? "nll_bwd_rows" : "nll_bwd_dense");
    cl_uint i = 0;
    setArg(k, i, bufferOf(gi));
    setArg(k, i, go.numel() > 0 ? bufferOf(go) : any);
    setArg(k, i, bufferOf(a.target));
    setWeight(k, i, a, any);
    setArg(k, i, bufferOf(tw));
    setArg(k, i, static_cast<cl_long>(a.n));
    setArg(k, i, static_cast<cl_long>(a.c));
    setArg(k, i, static_cast<cl_long>(a.inner));
    setArg(k, i, static_cast<cl_long>(ignore_index));
    const int r = reduction == at::Reduction::None ? 0 : reduction == at::Reduction::Mean ? 1 : 2;
    setArg(k, i, static_cast<cl_int>(r));
    if (rows) {
      launchND(device(idx), currentQueue(idx), k, static_cast<size_t>(a.n), 1);
    } else {
      launch1D(device(idx), currentQueue(idx), k, a.n * a.c * a.inner);
    }
    OCL_CATCH
  }
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
}

at::Tensor nllBackwardFn(const at::Tensor& grad_output, const at::Tensor& self,
                         const at::Tensor& target, const std::optional<at::Tensor>& weight,
                         int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(
               "aten::nll_loss_backward", "",
               {grad_output, self, target, weight, reduction, ignore_index, total_weight})[0]
        .toTensor();
  Structured<at::meta::structured_nll_loss_backward> s(Mode::kFunctional, nullptr);
  s.meta(grad_output, self, target, w, reduction, ignore_index, total_weight);
  backwardImpl(s.output(), grad_output, self, target, w, reduction, ignore_index, total_weight);
  return s.output();
}

at::Tensor& nllBackwardOut(const at::Tensor& grad_output, const at::Tensor& self,
                           const at::Tensor& target, const std::optional<at::Tensor>& weight,
                           int64_t reduction, int64_t ignore_index, const at::Tensor& total_weight,
                           at::Tensor& grad_input) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || grad_output.scalar_type() != self.scalar_type() ||
      grad_input.scalar_type() != self.scalar_type()) {
    runFallback(
        "aten::nll_loss_backward", "grad_input",
        {grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input});
    return grad_input;
  }
  Structured<at::meta::structured_nll_loss_backward> s(Mode::kOut, &grad_input);
  s.meta(grad_output, self, target, w, reduction, ignore_index, total_weight);
  backwardImpl(grad_input, grad_output, self, target, w, reduction, ignore_index, total_weight);
  return grad_input;
}

// nll_loss2d has no structured meta: CPU's checks (LossNLL2d.cpp), with its messages.
void checkNll2d(const at::Tensor& self, const at::Tensor& target,
                const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors)"
              " but got targets of dimension: ",
              target.dim());
  TORCH_CHECK(self.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), "
              "but got input of dimension: ",
              self.dim());
  TORCH_CHECK(!weight || !weight->defined() || weight->numel() == self.size(1),
              "weight tensor should be defined either for all or no classes");
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) &&
                  self.size(3) == target.size(2),
              "input and target batch or spatial sizes don't match: target ", target.sizes(),
              ", input ", self.sizes());
  checkSameDevice({self, target});
  if (weight) checkSameDevice({self, *weight});
}

std::tuple<at::Tensor, at::Tensor> nll2dForwardFn(const at::Tensor& self, const at::Tensor& target,
                                                  const std::optional<at::Tensor>& weight,
                                                  int64_t reduction, int64_t ignore_index) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w)) {
    auto r = runFallback("aten::nll_loss2d_forward", "",
                         {self, target, weight, reduction, ignore_index});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  checkNll2d(self, target, weight);
  at::Tensor output = reduction == at::Reduction::None
                          ? at::empty({self.size(0), self.size(2), self.size(3)}, self.options())
                          : at::empty({}, self.options());
  at::Tensor total_weight = at::empty({}, self.options());
  forwardImpl(output, total_weight, self, target, w, reduction, ignore_index, true);
  return {output, total_weight};
}

at::Tensor nll2dBackwardFn(const at::Tensor& grad_output, const at::Tensor& self,
                           const at::Tensor& target, const std::optional<at::Tensor>& weight,
                           int64_t reduction, int64_t ignore_index,
                           const at::Tensor& total_weight) {
  const at::OptionalTensorRef w = optRef(weight);
  if (!native(self, target, w) || grad_output.scalar_type() != self.scalar_type())
    return runFallback(
               "aten::nll_loss2d_backward", "",
               {grad_output, self, target, weight, reduction, ignore_index, total_weight})[0]
        .toTensor();
  checkNll2d(self, target, weight);
  TORCH_CHECK(total_weight.numel() == 1,
              "expected total_weight to be a single element tensor, got: ", total_weight.sizes(),
              " (", total_weight.numel(), " elements)");
  if (reduction == at::Reduction::None) {
    TORCH_CHECK(grad_output.dim() == 3 && grad_output.size(0) == self.size(0) &&
                    grad_output.size(1) == self.size(2) && grad_output.size(2) == self.size(3),
                "grad_output must have same dimension as target ", target.sizes(),
                " but got dimension ", grad_output.sizes());
  } else {
    TORCH_CHECK(grad_output.numel() == 1,
                "grad_output must have one element, got: ", grad_output.numel());
  }
  at::Tensor grad_input = at::empty_like(self, at::MemoryFormat::Contiguous);
  backwardImpl(grad_input, grad_output, self, target, w, reduction, ignore_index, total_weight);
  return grad_input;
}

// ---- Pointwise losses: the element-wise loss and its derivative are expressions for the
// pointwise generator (broadcasting, strides and dtypes from TensorIterator); reductions use the
// native sum/mean. Scalars: s0 is the loss parameter (beta, delta), s1 the gradient norm.
using codegen::Domain;
using codegen::PointwiseOp;

const PointwiseOp kMse{"mse_loss", "(a - b) * (a - b)", nullptr, Domain::kFloating};
const PointwiseOp kMseBwd{"mse_loss_backward", "s1 * (a - b) * c", nullptr, Domain::kFloating};
const PointwiseOp kSmoothL1{
    "smooth_l1_loss",
    "fabs(a - b) < s0 ? (T)0.5 * (a - b) * (a - b) / s0 : fabs(a - b) - (T)0.5 * s0", nullptr,
    Domain::kFloating};
const PointwiseOp kSmoothL1Bwd{
    "smooth_l1_loss_backward",
    "(a - b) <= -s0 ? -s1 * c : ((a - b) >= s0 ? s1 * c : s1 * (a - b) * c / s0)", nullptr,
    Domain::kFloating};
const PointwiseOp kHuber{"huber_loss",
                         "fabs(a - b) < s0 ? (T)0.5 * (a - b) * (a - b) : "
                         "s0 * (fabs(a - b) - (T)0.5 * s0)",
                         nullptr, Domain::kFloating};
const PointwiseOp kHuberBwd{
    "huber_loss_backward",
    "(a - b) < -s0 ? -s1 * c * s0 : ((a - b) > s0 ? s1 * c * s0 : s1 * (a - b) * c)", nullptr,
    Domain::kFloating};
// CPU clamps the logs at -100 so that 0 and 1 give finite losses.
const PointwiseOp kBce{"binary_cross_entropy",
                       "(b - (T)1) * fmax(log1p(-a), (T)-100) - b * fmax(log(a), (T)-100)", nullptr,
                       Domain::kFloating};
const PointwiseOp kBceBwd{"binary_cross_entropy_backward",
                          "s1 * c * (a - b) / fmax(((T)1 - a) * a, (T)1e-12)", nullptr,
                          Domain::kFloating};
// (1 - t) x - log_sigmoid(x), with log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)); c = pos_weight
// gives the log weight (pos_weight - 1) t + 1 on the log_sigmoid term.
const PointwiseOp kBceLogits{"binary_cross_entropy_with_logits",
                             "((T)1 - b) * a - (fmin(a, (T)0) - log1p(exp(-fabs(a))))", nullptr,
                             Domain::kFloating};
const PointwiseOp kBceLogitsPos{
    "binary_cross_entropy_with_logits_pos",
    "((T)1 - b) * a - ((c - (T)1) * b + (T)1) * (fmin(a, (T)0) - log1p(exp(-fabs(a))))", nullptr,
    Domain::kFloating};

bool floating(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type());
}

// out = op(inputs...) in the common dtype, broadcast; `out` may be given (fixed shape).
at::Tensor pointwise(const PointwiseOp& op, std::initializer_list<at::Tensor> inputs,
                     std::array<c10::Scalar, codegen::kMaxScalars> scalars = {},
                     at::Tensor out = at::Tensor()) {
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(false);
  config.add_output(out);
  for (const at::Tensor& t : inputs) config.add_const_input(t);
  at::TensorIterator iter = config.build();
  codegen::launch(op, iter, iter.common_dtype(), scalars);
  return iter.output();
}

at::Tensor reduce(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return at::mean(loss);
  if (reduction == at::Reduction::Sum) return at::sum(loss);
  return loss;
}

double gradNorm(const at::Tensor& self, int64_t reduction, double base) {
  return reduction == at::Reduction::Mean ? base / static_cast<double>(self.numel()) : base;
}

// grad_input with self's shape: op(self, target, grad_output broadcast) with s1 = norm.
at::Tensor lossBackward(const PointwiseOp& op, const at::Tensor& grad_output,
                        const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                        double param, double base) {
  checkSameDevice({grad_output, self, target});
  at::Tensor grad_input = at::empty_like(self, at::MemoryFormat::Contiguous);
  pointwise(op, {self, target, grad_output}, {param, gradNorm(self, reduction, base)}, grad_input);
  return grad_input;
}

at::Tensor mseLoss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  if (!floating(self) || !floating(target))
    return runFallback("aten::mse_loss", "", {self, target, reduction})[0].toTensor();
  checkSameDevice({self, target});
  return reduce(pointwise(kMse, {self, target}), reduction);
}

at::Tensor mseLossBackward(const at::Tensor& grad_output, const at::Tensor& self,
                           const at::Tensor& target, int64_t reduction) {
  if (!floating(self) || !floating(target) || !floating(grad_output))
    return runFallback("aten::mse_loss_backward", "", {grad_output, self, target, reduction})[0]
        .toTensor();
  return lossBackward(kMseBwd, grad_output, self, target, reduction, 0.0, 2.0);
}

at::Tensor smoothL1Loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                        double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (!floating(self) || !floating(target))
    return runFallback("aten::smooth_l1_loss", "", {self, target, reduction, beta})[0].toTensor();
  checkSameDevice({self, target});
  return reduce(pointwise(kSmoothL1, {self, target}, {beta, 0.0}), reduction);
}

at::Tensor smoothL1LossBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                const at::Tensor& target, int64_t reduction, double beta) {
  if (!floating(self) || !floating(target) || !floating(grad_output))
    return runFallback("aten::smooth_l1_loss_backward", "",
                       {grad_output, self, target, reduction, beta})[0]
        .toTensor();
  return lossBackward(kSmoothL1Bwd, grad_output, self, target, reduction, beta, 1.0);
}

at::Tensor huberLoss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                     double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  if (!floating(self) || !floating(target))
    return runFallback("aten::huber_loss", "", {self, target, reduction, delta})[0].toTensor();
  checkSameDevice({self, target});
  return reduce(pointwise(kHuber, {self, target}, {delta, 0.0}), reduction);
}

at::Tensor huberLossBackward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction, double delta) {
  if (!floating(self) || !floating(target) || !floating(grad_output))
    return runFallback("aten::huber_loss_backward", "",
                       {grad_output, self, target, reduction, delta})[0]
        .toTensor();
  return lossBackward(kHuberBwd, grad_output, self, target, reduction, delta, 1.0);
}

bool hasTensor(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined();
}

// CPU checks every input element is in [0, 1] (a NaN fails). So do we, as a device-side check
// (device_check.h): one kernel records the first element out of range and the error is raised at
// the next synchronisation point (at the op in debug mode); the loss never waits for the device.
char kBceCheckFamily;

cl_program bceCheckProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kBceCheckFamily, dtypeCode(t)}, [&] {
    const std::string acc = t == c10::kDouble ? "double" : "float";
    const std::string src = std::string("#define ST ") + clStorageType(t) + "\n#define ACC " + acc +
                            "\n#define LD(p, i) ((ACC)(" + loadExpr(t, "(p)", "(i)") + "))\n" +
                            deviceCheckSource() + R"CLC(
__kernel void bce_check(__global const char* xb, ulong xoff, long n, __global int* rec, int op) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const ACC v = LD((__global const ST*)(xb + xoff), i);
  if (!(v >= (ACC)0 && v <= (ACC)1)) ocl_record_error(rec, op, 0, i, n);
}
)CLC";
    return rt::ProgramSource{std::string("bce_check<") + c10::toString(t) + ">", withPrelude(src),
                             ""};
  });
}

void checkBceRange(const at::Tensor& self) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const at::Tensor x = self.contiguous();
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel k = programs(idx).kernel(bceCheckProgram(idx, x.scalar_type()), "bce_check");
  const rt::BufferRef rec = deviceErrorRecord(idx);
  cl_uint i = 0;
  setArg(k, i, bufferOf(x));
  setArg(k, i, static_cast<cl_long>(n));
  OCL_CHECK(clSetKernelArg(k, i++, sizeof(cl_mem), &rec.mem));
  setArg(k, i, static_cast<cl_int>(CheckedOp::kBinaryCrossEntropy));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

at::Tensor bce(const at::Tensor& self, const at::Tensor& target,
               const std::optional<at::Tensor>& weight, int64_t reduction) {
  if (!floating(self) || !floating(target) || (hasTensor(weight) && !floating(*weight)))
    return runFallback("aten::binary_cross_entropy", "", {self, target, weight, reduction})[0]
        .toTensor();
  checkSameDevice({self, target});
  TORCH_CHECK(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
              ") that is different to the input size (", self.sizes(), ") is deprecated. ",
              "Please ensure they have the same size.");
  checkBceRange(self);
  at::Tensor loss = pointwise(kBce, {self, target});
  if (hasTensor(weight)) loss = loss.mul_(*weight);
  return reduce(loss, reduction);
}

at::Tensor bceBackward(const at::Tensor& grad_output, const at::Tensor& self,
                       const at::Tensor& target, const std::optional<at::Tensor>& weight,
                       int64_t reduction) {
  if (!floating(self) || !floating(target) || !floating(grad_output) ||
      (hasTensor(weight) && !floating(*weight)))
    return runFallback("aten::binary_cross_entropy_backward", "",
                       {grad_output, self, target, weight, reduction})[0]
        .toTensor();
  at::Tensor gi = lossBackward(kBceBwd, grad_output, self, target, reduction, 0.0, 1.0);
  if (hasTensor(weight)) gi.mul_(*weight);
  return gi;
}

at::Tensor bceWithLogits(const at::Tensor& self, const at::Tensor& target,
                         const std::optional<at::Tensor>& weight,
                         const std::optional<at::Tensor>& pos_weight, int64_t reduction) {
  if (!floating(self) || !floating(target) || (hasTensor(weight) && !floating(*weight)) ||
      (hasTensor(pos_weight) && !floating(*pos_weight)))
    return runFallback("aten::binary_cross_entropy_with_logits", "",
                       {self, target, weight, pos_weight, reduction})[0]
        .toTensor();
  checkSameDevice({self, target});
  at::Tensor loss = hasTensor(pos_weight) ? pointwise(kBceLogitsPos, {self, target, *pos_weight})
                                          : pointwise(kBceLogits, {self, target});
  if (hasTensor(weight)) loss = loss.mul(*weight);
  return reduce(loss, reduction);
}
}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_backward", TORCH_FN(nllBackwardFn));
  m.impl("nll_loss_backward.grad_input", TORCH_FN(nllBackwardOut));
  m.impl("nll_loss_forward", TORCH_FN(nllForwardFn));
  m.impl("nll_loss_forward.output", TORCH_FN(nllForwardOut));
  m.impl("nll_loss2d_backward", TORCH_FN(nll2dBackwardFn));
  m.impl("nll_loss2d_forward", TORCH_FN(nll2dForwardFn));
  m.impl("mse_loss", TORCH_FN(mseLoss));
  m.impl("mse_loss_backward", TORCH_FN(mseLossBackward));
  m.impl("smooth_l1_loss", TORCH_FN(smoothL1Loss));
  m.impl("smooth_l1_loss_backward", TORCH_FN(smoothL1LossBackward));
  m.impl("huber_loss", TORCH_FN(huberLoss));
  m.impl("huber_loss_backward", TORCH_FN(huberLossBackward));
  m.impl("binary_cross_entropy", TORCH_FN(bce));
  m.impl("binary_cross_entropy_backward", TORCH_FN(bceBackward));
  m.impl("binary_cross_entropy_with_logits", TORCH_FN(bceWithLogits));
}

}  // namespace torch_ocl::aten
