// mm, addmm and bmm: float32 through CLBlast on (cl_mem, offset) operands, transposed operands
// passed as such (no copies); other dtypes go through the counted CPU fallback until own GEMM
// kernels exist.
#include <ATen/ATen.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/mm_meta.h>
#include <clblast_c.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/structured.h"

#include <algorithm>
#include <mutex>

namespace torch_ocl::aten {
namespace {

// CLBlast 1.5 has a thread-safety bug in its kernel cache: one call at a time.
std::mutex g_clblast_mutex;

struct GemmOperand {
  at::Tensor tensor;  // keeps a contiguous copy alive when one was needed
  CLBlastTranspose trans = CLBlastTransposeNo;
  size_t ld = 1;
  rt::BufferRef buf;
};

// A row-major view of a (rows x cols) matrix, or its transpose, without copying when the strides
// allow it. `batch_stride` is set for 3-D (batched) operands.
GemmOperand operand(const at::Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t s_row = t.stride(-2), s_col = t.stride(-1);
  GemmOperand op;
  if (s_col == 1 && (s_row >= std::max<int64_t>(1, cols) || rows == 1)) {
    op.tensor = t;
    op.ld = static_cast<size_t>(std::max<int64_t>({s_row, cols, 1}));
  } else if (s_row == 1 && (s_col >= std::max<int64_t>(1, rows) || cols == 1)) {
    op.tensor = t;
    op.trans = CLBlastTransposeYes;
    op.ld = static_cast<size_t>(std::max<int64_t>({s_col, rows, 1}));
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

// out (contiguous, row-major [batch x] n x m) = alpha * a @ b + beta * out.
void gemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float alpha,
          float beta) {
  const bool batched = out.dim() == 3;
  const int64_t n = out.size(-2), m = out.size(-1), k = a.size(-1);
  const int64_t batch = batched ? out.size(0) : 1;
  if (out.numel() == 0) return;
  if (k == 0 || batch == 0) {
    if (beta == 0)
      out.zero_();
    else
      out.mul_(beta);
    return;
  }
  TORCH_INTERNAL_ASSERT(out.is_contiguous());
  const GemmOperand A = operand(a), B = operand(b);
  const rt::BufferRef C = bufferOf(out);
  const c10::DeviceIndex idx = out.device().index();
  cl_command_queue q = currentQueue(idx);
  std::lock_guard<std::mutex> lock(g_clblast_mutex);
  if (!batched) {
    checkClBlast(CLBlastSgemm(CLBlastLayoutRowMajor, A.trans, B.trans, n, m, k, alpha, A.buf.mem,
                              A.buf.offset / 4, A.ld, B.buf.mem, B.buf.offset / 4, B.ld, beta,
                              C.mem, C.offset / 4, m, &q, nullptr),
                 "CLBlastSgemm");
  } else {
    // Batched operands: the batch stride of a broadcast (expanded) operand is 0.
    checkClBlast(CLBlastSgemmStridedBatched(
                     CLBlastLayoutRowMajor, A.trans, B.trans, n, m, k, alpha, A.buf.mem,
                     A.buf.offset / 4, A.ld, A.tensor.stride(0), B.buf.mem, B.buf.offset / 4, B.ld,
                     B.tensor.stride(0), beta, C.mem, C.offset / 4, m, n * m, batch, &q, nullptr),
                 "CLBlastSgemmStridedBatched");
  }
}

bool native(const at::Tensor& a, const at::Tensor& b) {
  checkSameDevice({a, b});
  return a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat;
}

// Runs gemm into `out`, through a contiguous temporary when out is not row-major contiguous.
void gemmInto(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float alpha,
              float beta) {
  if (out.is_contiguous()) return gemm(out, a, b, alpha, beta);
  at::Tensor tmp = out.contiguous();
  gemm(tmp, a, b, alpha, beta);
  out.copy_(tmp);
}

// mm and bmm: the same product, 2-D or batched; `name` is the op the fallback runs.
template <class Meta>
at::Tensor productFn(const char* name, const at::Tensor& a, const at::Tensor& b) {
  if (!native(a, b)) return runFallback(name, "", {a, b})[0].toTensor();
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(a, b);
  gemmInto(s.output(), a, b, 1.f, 0.f);
  return s.output();
}

template <class Meta>
at::Tensor& productOut(const char* name, const at::Tensor& a, const at::Tensor& b,
                       at::Tensor& out) {
  checkSameDevice({a, b, out});
  if (!native(a, b) || out.scalar_type() != at::kFloat) {
    runFallback(name, "out", {a, b, out});
    return out;
  }
  Structured<Meta> s(Mode::kOut, &out);
  s.meta(a, b);
  gemmInto(out, a, b, 1.f, 0.f);
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

// out = beta * self + alpha * (m1 @ m2)
void addmmImpl(const at::Tensor& out, const at::Tensor& self, const at::Tensor& m1,
               const at::Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha) {
  const float b = beta.toFloat(), a = alpha.toFloat();
  at::Tensor target = out.is_contiguous() ? out : at::empty_like(out, at::MemoryFormat::Contiguous);
  if (b != 0.f) {
    if (!target.is_same(self)) target.copy_(self.expand(out.sizes()));
    gemm(target, m1, m2, a, b);
  } else {
    gemm(target, m1, m2, a, 0.f);  // beta == 0: self is ignored, NaNs in it included (as CPU)
  }
  if (!target.is_same(out)) out.copy_(target);
}

at::Tensor addmmFn(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, m1, m2});
  if (!native(m1, m2) || self.scalar_type() != at::kFloat)
    return runFallback("aten::addmm", "", {self, m1, m2, beta, alpha})[0].toTensor();
  Structured<at::meta::structured_addmm> s(Mode::kFunctional, nullptr);
  s.meta(self, m1, m2, beta, alpha);
  addmmImpl(s.output(), self, m1, m2, beta, alpha);
  return s.output();
}

at::Tensor& addmmOut(const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                     const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  checkSameDevice({self, m1, m2, out});
  if (!native(m1, m2) || self.scalar_type() != at::kFloat || out.scalar_type() != at::kFloat) {
    runFallback("aten::addmm", "out", {self, m1, m2, beta, alpha, out});
    return out;
  }
  Structured<at::meta::structured_addmm> s(Mode::kOut, &out);
  s.meta(self, m1, m2, beta, alpha);
  addmmImpl(out, self, m1, m2, beta, alpha);
  return out;
}

at::Tensor& addmmInplace(at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                         const c10::Scalar& beta, const c10::Scalar& alpha) {
  checkSameDevice({self, m1, m2});
  if (!native(m1, m2) || self.scalar_type() != at::kFloat) {
    runFallback("aten::addmm_", "", {self, m1, m2, beta, alpha});
    return self;
  }
  Structured<at::meta::structured_addmm> s(Mode::kInplace, &self);
  s.meta(self, m1, m2, beta, alpha);
  addmmImpl(self, self, m1, m2, beta, alpha);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("addmm", TORCH_FN(addmmFn));
  m.impl("addmm.out", TORCH_FN(addmmOut));
  m.impl("addmm_", TORCH_FN(addmmInplace));
  m.impl("bmm", TORCH_FN(bmmFn));
  m.impl("bmm.out", TORCH_FN(bmmOut));
  m.impl("mm", TORCH_FN(mmFn));
  m.impl("mm.out", TORCH_FN(mmOut));
}

}  // namespace torch_ocl::aten
