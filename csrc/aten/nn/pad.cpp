// reflection_pad1d/2d/3d and replication_pad1d/2d/3d with their backward. (constant_pad_nd is
// CompositeExplicitAutograd: fill + copy, native already.) The input is seen as (B, D, H, W)
// (D = 1 below 3-d padding, H = 1 for 1-d); forward gathers one source element per output
// element, backward accumulates every output gradient into its source with an atomic add (complex:
// the real and imaginary parts as two real passes).
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/index_kernels.h"
#include "aten/launch.h"

namespace torch_ocl::aten {
namespace {

char kPadFamily;

enum class PadMode : int { kReflect, kReplicate };

struct Pads {
  int64_t left = 0, right = 0, top = 0, bottom = 0, front = 0, back = 0;
};

cl_program padProgram(c10::DeviceIndex idx, c10::ScalarType t, bool backward) {
  const uint64_t variant = dtypeCode(t) | (static_cast<uint64_t>(backward) << 6);
  return programs(idx).get({&kPadFamily, variant}, [&] {
    const std::string st = clStorageType(t);
    std::string s;
    if (backward) {
      if (c10::elementSize(t) == 8)
        s += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
      s += rmwSource(GsMode::kAdd, t);
    }
    s += R"CLC(
inline long pad_src(long x, long n, int reflect) {
  if (reflect) {
    if (x < 0) x = -x;
    if (x >= n) x = 2 * (n - 1) - x;
    return x;
  }
  return x < 0 ? 0 : (x >= n ? n - 1 : x);
}
)CLC";
    s += "__kernel void pad(__global char* ob, ulong ooff, __global char* ib, ulong ioff,\n"
         "    long n, long D, long H, long W, long Do, long Ho, long Wo, long front, long top,\n"
         "    long left, int reflect) {\n"
         "  const long g = get_global_id(0);\n  if (g >= n) return;\n"
         "  const long j = g % Wo, i = (g / Wo) % Ho, k = (g / (Wo * Ho)) % Do;\n"
         "  const long b = g / (Wo * Ho * Do);\n"
         "  const long sk = pad_src(k - front, D, reflect), si = pad_src(i - top, H, reflect);\n"
         "  const long sj = pad_src(j - left, W, reflect);\n"
         "  const long src = ((b * D + sk) * H + si) * W + sj;\n";
    s += "  __global " + st + "* out = (__global " + st + "*)(ob + ooff);\n";
    s += "  __global " + st + "* in = (__global " + st + "*)(ib + ioff);\n";
    // Forward: out[g] = in[src]. Backward (out = grad_output, in = grad_input): in[src] += out[g].
    s += backward ? "  ocl_rmw(in + src, " + loadExpr(t, "out", "g") + ");\n}\n"
                  : "  out[g] = in[src];\n}\n";
    return rt::ProgramSource{
        std::string(backward ? "pad_backward<" : "pad<") + c10::toString(t) + ">", withPrelude(s),
        ""};
  });
}

void checkPadInput(const at::Tensor& input, int pad_dims, const Pads& p, PadMode mode,
                   const char* name) {
  const int64_t nd = input.dim();
  bool ok = nd == pad_dims + 1 || nd == pad_dims + 2;
  for (int64_t d = nd == pad_dims + 2 ? 1 : 0; ok && d < nd; ++d) ok = input.size(d) != 0;
  TORCH_CHECK(ok, "Expected ", pad_dims + 1, "D or ", pad_dims + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
              "for input, but got: ",
              input.sizes());
  const int64_t W = input.size(-1), H = pad_dims >= 2 ? input.size(-2) : 1;
  const int64_t D = pad_dims == 3 ? input.size(-3) : 1;
  if (mode == PadMode::kReflect) {
    TORCH_CHECK(p.left < W && p.right < W,
                "Argument #4: Padding size should be less than the corresponding input "
                "dimension, but got: padding (",
                p.left, ", ", p.right, ") at dimension ", nd - 1, " of input ", input.sizes());
    TORCH_CHECK(pad_dims == 1 || (p.top < H && p.bottom < H),
                "Argument #6: Padding size should be less than the corresponding input "
                "dimension, but got: padding (",
                p.top, ", ", p.bottom, ") at dimension ", nd - 2, " of input ", input.sizes());
    TORCH_CHECK(pad_dims < 3 || (p.front < D && p.back < D),
                "Argument #8: Padding size should be less than the corresponding input "
                "dimension, but got: padding (",
                p.front, ", ", p.back, ") at dimension ", nd - 3, " of input ", input.sizes());
  }
  const int64_t Wo = W + p.left + p.right, Ho = H + p.top + p.bottom;
  const int64_t Do = D + p.front + p.back;
  if (pad_dims == 3) {
    TORCH_CHECK(Do >= 1 && Ho >= 1 && Wo >= 1, name, ": input (D: ", D, " H: ", H, ", W: ", W,
                ") is too small. Calculated output D: ", Do, " H: ", Ho, " W: ", Wo);
  } else {
    TORCH_CHECK(Wo >= 1 && Ho >= 1, name, ": input (H: ", H, ", W: ", W,
                ") is too small. Calculated output H: ", Ho, " W: ", Wo);
  }
}

std::vector<int64_t> paddedShape(const at::Tensor& input, int pad_dims, const Pads& p) {
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() += p.left + p.right;
  if (pad_dims >= 2) shape[shape.size() - 2] += p.top + p.bottom;
  if (pad_dims == 3) shape[shape.size() - 3] += p.front + p.back;
  return shape;
}

void launchPad(const at::Tensor& out_c, const at::Tensor& in_c, int pad_dims, const Pads& p,
               PadMode mode, bool backward) {
  // out_c: padded-shape tensor, in_c: input-shape tensor; both contiguous.
  const int64_t n = out_c.numel();
  if (n == 0) return;
  const int64_t W = in_c.size(-1), H = pad_dims >= 2 ? in_c.size(-2) : 1;
  const int64_t D = pad_dims == 3 ? in_c.size(-3) : 1;
  const int64_t Wo = out_c.size(-1), Ho = pad_dims >= 2 ? out_c.size(-2) : 1;
  const int64_t Do = pad_dims == 3 ? out_c.size(-3) : 1;
  const c10::DeviceIndex idx = out_c.device().index();
  checkDtypeSupported(out_c.scalar_type(), idx);
  cl_program prog = padProgram(idx, out_c.scalar_type(), backward);
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "pad");
  setArgs(k, bufferOf(out_c), bufferOf(in_c), static_cast<cl_long>(n), static_cast<cl_long>(D),
          static_cast<cl_long>(H), static_cast<cl_long>(W), static_cast<cl_long>(Do),
          static_cast<cl_long>(Ho), static_cast<cl_long>(Wo), static_cast<cl_long>(p.front),
          static_cast<cl_long>(p.top), static_cast<cl_long>(p.left),
          static_cast<cl_int>(mode == PadMode::kReflect));
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

Pads padsOf(at::IntArrayRef padding, int pad_dims) {
  TORCH_CHECK(static_cast<int>(padding.size()) == 2 * pad_dims, "padding size is expected to be ",
              2 * pad_dims, ", but got: ", padding.size());
  Pads p{padding[0], padding[1]};
  if (pad_dims >= 2) {
    p.top = padding[2];
    p.bottom = padding[3];
  }
  if (pad_dims == 3) {
    p.front = padding[4];
    p.back = padding[5];
  }
  return p;
}

at::Tensor& padOut(const at::Tensor& input, at::IntArrayRef padding, int pad_dims, PadMode mode,
                   const char* name, at::Tensor& out) {
  checkSameDevice({input, out});
  const Pads p = padsOf(padding, pad_dims);
  checkPadInput(input, pad_dims, p, mode, name);
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), name,
              ": expected out to have the input's dtype ", input.scalar_type(), ", got ",
              out.scalar_type());
  at::native::resize_output(out, paddedShape(input, pad_dims, p));
  if (out.numel() == 0) return out;
  at::Tensor o = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
  launchPad(o, input.contiguous(), pad_dims, p, mode, false);
  if (!o.is_same(out)) out.copy_(o);
  return out;
}

at::Tensor& padBackwardOut(const at::Tensor& grad_output, const at::Tensor& input,
                           at::IntArrayRef padding, int pad_dims, PadMode mode, const char* name,
                           at::Tensor& grad_input) {
  checkSameDevice({grad_output, input, grad_input});
  const Pads p = padsOf(padding, pad_dims);
  checkPadInput(input, pad_dims, p, mode, name);
  const auto expected = paddedShape(input, pad_dims, p);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(expected), name,
              ": grad_output has the wrong shape: expected ", at::IntArrayRef(expected), ", got ",
              grad_output.sizes());
  at::native::resize_output(grad_input, input.sizes());
  grad_input.zero_();
  if (grad_output.numel() == 0) return grad_input;
  at::Tensor gi = grad_input.is_contiguous() ? grad_input : at::zeros_like(input);
  launchPad(grad_output.contiguous(), gi, pad_dims, p, mode, true);
  if (!gi.is_same(grad_input)) grad_input.copy_(gi);
  return grad_input;
}

// Complex gradients accumulate their real and imaginary parts as two real backward passes
// (complex atomics do not exist); the forward gathers float2/double2 directly.
c10::ScalarType accumType(const at::Tensor& t) {
  return c10::toRealValueType(t.scalar_type());
}

bool backwardOk(const at::Tensor& t) {
  return gatherScatterSupported(GsMode::kAdd, accumType(t), t.device().index());
}

at::Tensor& padBackwardAny(const at::Tensor& grad_output, const at::Tensor& input,
                           at::IntArrayRef padding, int pad_dims, PadMode mode, const char* name,
                           at::Tensor& grad_input) {
  if (!c10::isComplexType(grad_output.scalar_type()))
    return padBackwardOut(grad_output, input, padding, pad_dims, mode, name, grad_input);
  checkSameDevice({grad_output, input, grad_input});
  const auto ropts = grad_output.options().dtype(accumType(grad_output));
  at::Tensor gr = at::empty({0}, ropts), gi = at::empty({0}, ropts);
  padBackwardOut(at::real(grad_output), input, padding, pad_dims, mode, name, gr);
  padBackwardOut(at::imag(grad_output), input, padding, pad_dims, mode, name, gi);
  at::native::resize_output(grad_input, input.sizes());
  grad_input.copy_(at::complex(gr, gi));
  return grad_input;
}

#define OCL_PAD(NAME, DIMS, MODE)                                                                  \
  at::Tensor& NAME##Out(const at::Tensor& input, at::IntArrayRef padding, at::Tensor& out) {       \
    return padOut(input, padding, DIMS, MODE, #NAME, out);                                         \
  }                                                                                                \
  at::Tensor NAME##Fn(const at::Tensor& input, at::IntArrayRef padding) {                          \
    at::Tensor out = at::empty({0}, input.options());                                              \
    return padOut(input, padding, DIMS, MODE, #NAME, out);                                         \
  }                                                                                                \
  at::Tensor& NAME##BackwardOut(const at::Tensor& grad_output, const at::Tensor& input,            \
                                at::IntArrayRef padding, at::Tensor& grad_input) {                 \
    if (!backwardOk(grad_output)) {                                                                \
      runFallback("aten::" #NAME "_backward", "grad_input",                                        \
                  {grad_output, input, padding, grad_input});                                      \
      return grad_input;                                                                           \
    }                                                                                              \
    return padBackwardAny(grad_output, input, padding, DIMS, MODE, #NAME "_backward", grad_input); \
  }                                                                                                \
  at::Tensor NAME##BackwardFn(const at::Tensor& grad_output, const at::Tensor& input,              \
                              at::IntArrayRef padding) {                                           \
    if (!backwardOk(grad_output))                                                                  \
      return runFallback("aten::" #NAME "_backward", "", {grad_output, input, padding})[0]         \
          .toTensor();                                                                             \
    at::Tensor gi = at::empty({0}, grad_output.options());                                         \
    return padBackwardAny(grad_output, input, padding, DIMS, MODE, #NAME "_backward", gi);         \
  }

OCL_PAD(reflection_pad1d, 1, PadMode::kReflect)
OCL_PAD(reflection_pad2d, 2, PadMode::kReflect)
OCL_PAD(replication_pad1d, 1, PadMode::kReplicate)
OCL_PAD(replication_pad2d, 2, PadMode::kReplicate)
OCL_PAD(reflection_pad3d, 3, PadMode::kReflect)
OCL_PAD(replication_pad3d, 3, PadMode::kReplicate)

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define OCL_PAD_REGISTER(NAME)                           \
  m.impl(#NAME, TORCH_FN(NAME##Fn));                     \
  m.impl(#NAME ".out", TORCH_FN(NAME##Out));             \
  m.impl(#NAME "_backward", TORCH_FN(NAME##BackwardFn)); \
  m.impl(#NAME "_backward.grad_input", TORCH_FN(NAME##BackwardOut));
  OCL_PAD_REGISTER(reflection_pad1d)
  OCL_PAD_REGISTER(reflection_pad2d)
  OCL_PAD_REGISTER(replication_pad1d)
  OCL_PAD_REGISTER(replication_pad2d)
  OCL_PAD_REGISTER(reflection_pad3d)
  OCL_PAD_REGISTER(replication_pad3d)
#undef OCL_PAD_REGISTER
}

}  // namespace torch_ocl::aten
