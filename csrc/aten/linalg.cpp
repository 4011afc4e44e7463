// Matrix products: mm, bmm, addmm, baddbmm, addbmm, addmv (mv reaches it), dot, vdot; matmul,
// linear, outer reach these by themselves. float32/float64 run through CLBlast (S/DGEMM, strided
// batched) on (cl_mem, offset) operands, transposed operands passed as such; float16, bfloat16 and
// integer dtypes run through our tiled kernel (kernels/gemm.cl, float accumulation for the 16-bit
// floats) which takes any strides, so no operand is copied. Complex goes through the counted CPU
// fallback; bool is rejected by CPU PyTorch and gets the same error through it.
#include "aten/linalg.h"

#include <ATen/ATen.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/addmv_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/mm_meta.h>
#include <clblast_c.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/structured.h"

#include <algorithm>
#include <mutex>

namespace torch_ocl::aten {

std::mutex& clblastMutex() {
  static std::mutex m;
  return m;
}

namespace {

enum class Engine { kSgemm, kDgemm, kOwn, kFallback };

Engine engineFor(c10::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return Engine::kSgemm;
    case at::kDouble:
      return Engine::kDgemm;
    case at::kHalf:  // CLBlast HGEMM would need cl_khr_fp16 and half alpha/beta; ours is exact
    case at::kBFloat16:
    case at::kByte:
    case at::kChar:
    case at::kShort:
    case at::kInt:
    case at::kLong:
      return Engine::kOwn;
    default:
      return Engine::kFallback;  // complex, bool
  }
}

struct GemmOperand {
  at::Tensor tensor;  // keeps a contiguous copy alive when one was needed
  CLBlastTranspose trans = CLBlastTransposeNo;
  size_t ld = 1;
  rt::BufferRef buf;
};

// A row-major view of a (rows x cols) matrix, or its transpose, without copying when the strides
// allow it. For 3-D (batched) operands the batch stride is tensor.stride(0).
GemmOperand operand(const at::Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t s_row = t.stride(-2), s_col = t.stride(-1);
  GemmOperand op;
  if ((s_col == 1 || cols == 1) && (s_row >= std::max<int64_t>(1, cols) || rows == 1)) {
    op.tensor = t;
    op.ld = static_cast<size_t>(std::max<int64_t>({rows == 1 ? cols : s_row, cols, 1}));
  } else if ((s_row == 1 || rows == 1) && (s_col >= std::max<int64_t>(1, rows) || cols == 1)) {
    op.tensor = t;
    op.trans = CLBlastTransposeYes;
    op.ld = static_cast<size_t>(std::max<int64_t>({cols == 1 ? rows : s_col, rows, 1}));
  } else {
    op.tensor = t.contiguous();
    op.ld = static_cast<size_t>(std::max<int64_t>(cols, 1));
  }
  op.buf = bufferOf(op.tensor);
  return op;
}

void checkClBlast(CLBlastStatusCode status, const char* call) {
  if (status == CLBlastSuccess) return;
  if (status == CLBlastTempBufferAllocFailure || status == CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TORCH_CHECK_WITH(OutOfMemoryError, false, "OpenCL out of memory in ", call, " (CLBlast status ",
                     static_cast<int>(status), ")");
  TORCH_CHECK(false, call, " failed with CLBlast status ", static_cast<int>(status),
              status < 0 && status > -100 ? " (" + rt::clErrorName(status) + ")" : std::string());
}

// True when CLBlast can write out directly: row-major rows with a leading dimension >= cols.
bool blasWritable(const at::Tensor& out) {
  const int64_t rows = out.size(-2), cols = out.size(-1);
  const bool rows_ok = (out.stride(-1) == 1 || cols == 1) &&
                       (out.stride(-2) >= std::max<int64_t>(cols, 1) || rows == 1);
  if (out.dim() == 2) return rows_ok;
  return rows_ok && (out.size(0) == 1 || out.stride(0) >= rows * cols);
}

// CLBlast S/DGEMM: out (row-major as blasWritable says) = alpha * a @ b + beta * out.
template <typename T>
void clblastGemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, T alpha, T beta) {
  const bool batched = out.dim() == 3;
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  const int64_t batch = batched ? out.size(0) : 1;
  const GemmOperand A = operand(a), B = operand(b);
  const rt::BufferRef C = bufferOf(out);
  const size_t ldc =
      static_cast<size_t>(n == 1 ? std::max<int64_t>(m, 1) : std::max<int64_t>(out.stride(-2), 1));
  constexpr size_t es = sizeof(T);
  cl_command_queue q = currentQueue(out.device().index());
  std::lock_guard<std::mutex> lock(clblastMutex());
  if constexpr (std::is_same_v<T, float>) {
    if (!batched) {
      checkClBlast(CLBlastSgemm(CLBlastLayoutRowMajor, A.trans, B.trans, n, m, k, alpha, A.buf.mem,
                                A.buf.offset / es, A.ld, B.buf.mem, B.buf.offset / es, B.ld, beta,
                                C.mem, C.offset / es, ldc, &q, nullptr),
                   "CLBlastSgemm");
    } else {
      // Batched operands: the batch stride of a broadcast (expanded) operand is 0.
      checkClBlast(
          CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, A.trans, B.trans, n, m, k, alpha,
                                     A.buf.mem, A.buf.offset / es, A.ld, A.tensor.stride(0),
                                     B.buf.mem, B.buf.offset / es, B.ld, B.tensor.stride(0), beta,
                                     C.mem, C.offset / es, ldc, out.stride(0), batch, &q, nullptr),
          "CLBlastSgemmStridedBatched");
    }
  } else {
    if (!batched) {
      checkClBlast(CLBlastDgemm(CLBlastLayoutRowMajor, A.trans, B.trans, n, m, k, alpha, A.buf.mem,
                                A.buf.offset / es, A.ld, B.buf.mem, B.buf.offset / es, B.ld, beta,
                                C.mem, C.offset / es, ldc, &q, nullptr),
                   "CLBlastDgemm");
    } else {
      checkClBlast(
          CLBlastDgemmStridedBatched(CLBlastLayoutRowMajor, A.trans, B.trans, n, m, k, alpha,
                                     A.buf.mem, A.buf.offset / es, A.ld, A.tensor.stride(0),
                                     B.buf.mem, B.buf.offset / es, B.ld, B.tensor.stride(0), beta,
                                     C.mem, C.offset / es, ldc, out.stride(0), batch, &q, nullptr),
          "CLBlastDgemmStridedBatched");
    }
  }
}

constexpr int kTile = 16;
const char kGemmFamily = 0;

cl_program gemmProgram(c10::DeviceIndex idx, c10::ScalarType t) {
  return programs(idx).get({&kGemmFamily, dtypeCode(t)}, [&] {
    const bool reduced = t == at::kHalf || t == at::kBFloat16;
    std::string h = "typedef " + std::string(clStorageType(t)) + " ST;\n";
    h += "typedef " + std::string(reduced ? "float" : clComputeType(t)) + " ACC;\n";
    h += "#define LOAD(p, i) (" + loadExpr(t, "(p)", "(i)") + ")\n";
    h += "#define STORE(p, i, v) " + storeStmt(t, "(p)", "(i)", "(v)") + "\n";
    h += "#define OCL_GEMM_TS " + std::to_string(kTile) + "\n";
    return rt::ProgramSource{std::string("gemm<") + c10::toString(t) + ">",
                             withPrelude(h + kernels::source("gemm.cl")), ""};
  });
}

// Element strides of a [batch x] rows x cols operand, batch stride 0 for 2-D operands.
std::array<cl_long, 3> elemStrides(const at::Tensor& t) {
  return {t.dim() == 3 ? t.stride(0) : 0, t.stride(-2), t.stride(-1)};
}

void ownGemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
             const c10::Scalar& alpha, const c10::Scalar& beta) {
  const c10::ScalarType t = out.scalar_type();
  const c10::DeviceIndex idx = out.device().index();
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  cl_program prog = gemmProgram(idx, t);
  OCL_TRY
  cl_kernel kern = programs(idx).kernel(prog, "gemm");
  const auto sa = elemStrides(a), sb = elemStrides(b), sc = elemStrides(out);
  cl_uint i = 0;
  setArg(kern, i, bufferOf(a));
  setArg(kern, i, bufferOf(b));
  setArg(kern, i, bufferOf(out));
  setArg(kern, i, static_cast<cl_long>(n));
  setArg(kern, i, static_cast<cl_long>(m));
  setArg(kern, i, static_cast<cl_long>(k));
  for (const auto* s : {&sa, &sb, &sc})
    for (cl_long v : *s) setArg(kern, i, v);
  if (c10::isFloatingType(t)) {
    setArg(kern, i, alpha.toFloat());
    setArg(kern, i, beta.toFloat());
  } else {
    // Integer accumulation in the dtype itself (wrapping), as CPU PyTorch does.
    auto put = [&](const c10::Scalar& v) {
      switch (t) {
        case at::kByte:
          return setArg(kern, i, static_cast<cl_uchar>(v.toLong()));
        case at::kChar:
          return setArg(kern, i, static_cast<cl_char>(v.toLong()));
        case at::kShort:
          return setArg(kern, i, static_cast<cl_short>(v.toLong()));
        case at::kInt:
          return setArg(kern, i, static_cast<cl_int>(v.toLong()));
        default:
          return setArg(kern, i, static_cast<cl_long>(v.toLong()));
      }
    };
    put(alpha);
    put(beta);
  }
  const size_t local[3] = {kTile, kTile, 1};
  const size_t global[3] = {static_cast<size_t>((m + kTile - 1) / kTile * kTile),
                            static_cast<size_t>((n + kTile - 1) / kTile * kTile),
                            static_cast<size_t>(batch)};
  OCL_CHECK(clEnqueueNDRangeKernel(currentQueue(idx), kern, 3, nullptr, global, local, 0, nullptr,
                                   nullptr));
  OCL_CATCH
}

// out ([batch x] n x m) = alpha * a @ b + beta * out; beta == 0 ignores out's contents.
void gemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
          const c10::Scalar& beta) {
  if (out.numel() == 0) return;
  const bool beta_zero = beta.isFloatingPoint() ? beta.toDouble() == 0 : beta.toLong() == 0;
  if (a.size(-1) == 0) {
    if (beta_zero)
      out.zero_();
    else
      out.mul_(beta);
    return;
  }
  const Engine e = engineFor(out.scalar_type());
  TORCH_INTERNAL_ASSERT(e != Engine::kFallback);
  if (e == Engine::kOwn) return ownGemm(out, a, b, alpha, beta);
  if (!blasWritable(out)) {
    at::Tensor tmp = beta_zero ? at::empty(out.sizes(), out.options()) : out.contiguous();
    gemm(tmp, a, b, alpha, beta);
    out.copy_(tmp);
    return;
  }
  if (e == Engine::kSgemm)
    clblastGemm<float>(out, a, b, alpha.toFloat(), beta.toFloat());
  else
    clblastGemm<double>(out, a, b, alpha.toDouble(), beta.toDouble());
}

// CPU PyTorch's check (in its kernels, not the meta functions): one dtype for all operands.
void checkSameDtype(const at::Tensor& m1, const at::Tensor& m2,
                    const at::Tensor& self = at::Tensor()) {
  TORCH_CHECK(m1.scalar_type() == m2.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", m1.dtype(),
              " != ", m2.dtype());
  TORCH_CHECK(!self.defined() || self.scalar_type() == m1.scalar_type(),
              "expected self and m1 to have the same dtype, but got: ", self.dtype(),
              " != ", m1.dtype());
}

// mm and bmm: the same product, 2-D or batched; `name` is the op the fallback runs.
template <class Meta>
at::Tensor productFn(const char* name, const at::Tensor& a, const at::Tensor& b) {
  checkSameDevice({a, b});
  if (engineFor(a.scalar_type()) == Engine::kFallback)
    return runFallback(name, "", {a, b})[0].toTensor();
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(a, b);
  checkSameDtype(a, b);
  gemm(s.output(), a, b, 1, 0);
  return s.output();
}

template <class Meta>
at::Tensor& productOut(const char* name, const at::Tensor& a, const at::Tensor& b,
                       at::Tensor& out) {
  checkSameDevice({a, b, out});
  if (engineFor(a.scalar_type()) == Engine::kFallback) {
    runFallback(name, "out", {a, b, out});
    return out;
  }
  checkSameDtype(a, b);
  Structured<Meta> s(Mode::kOut, &out);
  s.meta(a, b);
  TORCH_CHECK(out.scalar_type() == a.scalar_type(), "Expected out tensor to have dtype ",
              a.scalar_type(), ", but got ", out.scalar_type(), " instead");
  gemm(out, a, b, 1, 0);
  return out;
}

at::Tensor mmFn(const at::Tensor& a, const at::Tensor& b) {
  return productFn<at::meta::structured_mm>("aten::mm", a, b);
}
at::Tensor& mmOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return productOut<at::meta::structured_mm>("aten::mm", a, b, out);
}
at::Tensor bmmFn(const at::Tensor& a, const at::Tensor& b) {
  return productFn<at::meta::structured_bmm>("aten::bmm", a, b);
}
at::Tensor& bmmOut(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return productOut<at::meta::structured_bmm>("aten::bmm", a, b, out);
}

// out = beta * self + alpha * (m1 @ m2), for addmm and baddbmm (self broadcasts to out).
void addProductImpl(const at::Tensor& out, const at::Tensor& self, const at::Tensor& m1,
                    const at::Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha) {
  const bool beta_zero = beta.isFloatingPoint() ? beta.toDouble() == 0 : beta.toLong() == 0;
  if (!beta_zero && !out.is_same(self)) out.copy_(self.expand(out.sizes()));
  gemm(out, m1, m2, alpha, beta_zero ? c10::Scalar(0) : beta);
}

// Functional, in-place and out= forms of addmm / baddbmm through their meta functions.
template <class Meta>
at::Tensor addProduct(const char* name, const char* overload, Mode mode, at::Tensor* out,
                      const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                      const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, m1, m2});
  if (out) checkSameDevice({self, *out});
  if (engineFor(m1.scalar_type()) == Engine::kFallback) {
    std::vector<c10::IValue> stack{self, m1, m2, beta, alpha};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  Structured<Meta> s(mode, out);
  s.meta(self, m1, m2, beta, alpha);
  checkSameDtype(m1, m2, self);
  TORCH_CHECK(s.output().scalar_type() == m1.scalar_type(), "Expected out tensor to have dtype ",
              m1.scalar_type(), ", but got ", s.output().scalar_type(), " instead");
  addProductImpl(s.output(), self, m1, m2, beta, alpha);
  return s.output();
}

#define OCL_ADD_PRODUCT(ID, META, NAME)                                                        \
  at::Tensor ID##Fn(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,        \
                    const c10::Scalar& beta, const c10::Scalar& alpha) {                       \
    return addProduct<META>("aten::" NAME, "", Mode::kFunctional, nullptr, self, m1, m2, beta, \
                            alpha);                                                            \
  }                                                                                            \
  at::Tensor& ID##Out(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,      \
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {    \
    addProduct<META>("aten::" NAME, "out", Mode::kOut, &out, self, m1, m2, beta, alpha);       \
    return out;                                                                                \
  }                                                                                            \
  at::Tensor& ID##Inplace(at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,        \
                          const c10::Scalar& beta, const c10::Scalar& alpha) {                 \
    addProduct<META>("aten::" NAME "_", "", Mode::kInplace, &self, self, m1, m2, beta, alpha); \
    return self;                                                                               \
  }
OCL_ADD_PRODUCT(addmm, at::meta::structured_addmm, "addmm")
OCL_ADD_PRODUCT(baddbmm, at::meta::structured_baddbmm, "baddbmm")

// addmv: the vector as a (k x 1) matrix, the result as an (n x 1) one; mv reaches it.
at::Tensor addmvImpl(const char* name, const char* overload, Mode mode, at::Tensor* out,
                     const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                     const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, mat, vec});
  if (out) checkSameDevice({self, *out});
  if (engineFor(mat.scalar_type()) == Engine::kFallback) {
    std::vector<c10::IValue> stack{self, mat, vec, beta, alpha};
    if (mode == Mode::kOut) stack.emplace_back(*out);
    return runFallback(name, overload, std::move(stack))[0].toTensor();
  }
  Structured<at::meta::structured_addmv> s(mode, out);
  s.meta(self, mat, vec, beta, alpha);
  checkSameDtype(mat, vec, self);
  const at::Tensor& r = s.output();
  TORCH_CHECK(r.scalar_type() == mat.scalar_type() && vec.scalar_type() == mat.scalar_type(),
              "expected scalar type ", mat.scalar_type(), " but found ", vec.scalar_type());
  addProductImpl(r.unsqueeze(1), self.dim() == 1 ? self.unsqueeze(1) : self, mat, vec.unsqueeze(1),
                 beta, alpha);
  return r;
}
at::Tensor addmvFn(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  return addmvImpl("aten::addmv", "", Mode::kFunctional, nullptr, self, mat, vec, beta, alpha);
}
at::Tensor& addmvOut(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                     const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  addmvImpl("aten::addmv", "out", Mode::kOut, &out, self, mat, vec, beta, alpha);
  return out;
}
at::Tensor& addmvInplace(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                         const c10::Scalar& beta, const c10::Scalar& alpha) {
  addmvImpl("aten::addmv_", "", Mode::kInplace, &self, self, mat, vec, beta, alpha);
  return self;
}

// addbmm: the batch folds into the inner dimension, (n x B*k) @ (B*k x m), then addmm.
at::Tensor& addbmmInto(at::Tensor& out, const at::Tensor& self, const at::Tensor& b1,
                       const at::Tensor& b2, const c10::Scalar& beta, const c10::Scalar& alpha) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b1.size(0) == b2.size(0), "batch1 and batch2 must have same number of batches, got ",
              b1.size(0), " and ", b2.size(0));
  TORCH_CHECK(b1.size(2) == b2.size(1), "Incompatible matrix sizes for bmm (", b1.size(1), "x",
              b1.size(2), " and ", b2.size(1), "x", b2.size(2), ")");
  const int64_t nb = b1.size(0), n = b1.size(1), k = b1.size(2), m = b2.size(2);
  const at::Tensor m1 = b1.transpose(0, 1).reshape({n, nb * k});
  const at::Tensor m2 = b2.reshape({nb * k, m});
  if (out.is_same(self)) return out.addmm_(m1, m2, beta, alpha);
  return at::addmm_out(out, self, m1, m2, beta, alpha);
}
at::Tensor addbmmFn(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                    const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, b1, b2});
  at::Tensor out = at::empty({0}, b1.options());
  return addbmmInto(out, self, b1, b2, beta, alpha);
}
at::Tensor& addbmmOut(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  checkSameDevice({self, b1, b2, out});
  return addbmmInto(out, self, b1, b2, beta, alpha);
}
at::Tensor& addbmmInplace(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                          const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, b1, b2});
  TORCH_CHECK(self.dim() == 2 && self.size(0) == b1.size(1) && self.size(1) == b2.size(2),
              "The input tensor must be a matrix with size ", b1.size(1), "x", b2.size(2),
              ", but got a ", self.dim(), "-D tensor with size ", self.size(0), "x",
              self.dim() > 1 ? self.size(1) : 0);
  return addbmmInto(self, self, b1, b2, beta, alpha);
}

// dot / vdot of real vectors: a (1 x n) @ (n x 1) product (vdot conjugates, a no-op for reals).
at::Tensor dotImpl(const char* name, const at::Tensor& a, const at::Tensor& b) {
  checkSameDevice({a, b});
  TORCH_CHECK(a.dim() == 1 && b.dim() == 1, "1D tensors expected, but got ", a.dim(), "D and ",
              b.dim(), "D tensors");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "dot : expected both vectors to have same dtype, ", "but found ", a.scalar_type(),
              " and ", b.scalar_type());
  TORCH_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(),
              "] and src [", b.numel(), "] to have the same number of elements, but got ",
              a.numel(), " and ", b.numel(), " elements respectively");
  if (engineFor(a.scalar_type()) == Engine::kFallback)
    return runFallback(name, "", {a, b})[0].toTensor();
  at::Tensor out = at::empty({}, a.options());
  gemm(out.view({1, 1}), a.unsqueeze(0), b.unsqueeze(1), 1, 0);
  return out;
}
at::Tensor dotFn(const at::Tensor& a, const at::Tensor& b) {
  return dotImpl("aten::dot", a, b);
}
at::Tensor vdotFn(const at::Tensor& a, const at::Tensor& b) {
  return dotImpl("aten::vdot", a, b);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addmm", TORCH_FN(addmmFn));
  m.impl("addmm.out", TORCH_FN(addmmOut));
  m.impl("addmm_", TORCH_FN(addmmInplace));
  m.impl("baddbmm", TORCH_FN(baddbmmFn));
  m.impl("baddbmm.out", TORCH_FN(baddbmmOut));
  m.impl("baddbmm_", TORCH_FN(baddbmmInplace));
  m.impl("addbmm", TORCH_FN(addbmmFn));
  m.impl("addbmm.out", TORCH_FN(addbmmOut));
  m.impl("addbmm_", TORCH_FN(addbmmInplace));
  m.impl("addmv", TORCH_FN(addmvFn));
  m.impl("addmv.out", TORCH_FN(addmvOut));
  m.impl("addmv_", TORCH_FN(addmvInplace));
  m.impl("bmm", TORCH_FN(bmmFn));
  m.impl("bmm.out", TORCH_FN(bmmOut));
  m.impl("mm", TORCH_FN(mmFn));
  m.impl("mm.out", TORCH_FN(mmOut));
  m.impl("dot", TORCH_FN(dotFn));
  m.impl("vdot", TORCH_FN(vdotFn));
}

}  // namespace torch_ocl::aten
