// cumsum and cumprod (functional, out=, in-place through PyTorch's structured wrappers) for all
// dtypes, logcumsumexp for floating and complex ones and the cummax/cummin helpers for real ones:
// a line scan over a contiguous (outer, dim, inner) view, accumulating in float for
// float16/bfloat16/float32, double for float64, the output type for integers (int64 by default,
// as CPU) and the complex type itself for complex.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/reduce/row_stats.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kScanFamily;

c10::ScalarType scanAcc(c10::ScalarType out) {
  if (out == c10::kDouble || c10::isComplexType(out)) return out;
  if (c10::isFloatingType(out)) return c10::kFloat;
  return out == c10::kBool ? c10::kLong : out;
}

cl_program scanProgram(c10::DeviceIndex idx, bool prod, c10::ScalarType x, c10::ScalarType y) {
  checkDtypeSupported(x, idx);
  checkDtypeSupported(y, idx);
  const uint64_t variant = dtypeCode(x) | (dtypeCode(y) << 6) | (static_cast<uint64_t>(prod) << 12);
  return programs(idx).get({&kScanFamily, variant}, [&] {
    const c10::ScalarType acc = scanAcc(y);
    std::string h = "typedef " + std::string(clComputeType(acc)) + " ACC;\n";
    h += "typedef " + std::string(clStorageType(x)) + " XT;\n";
    h += "typedef " + std::string(clStorageType(y)) + " YT;\n";
    // No (ACC) cast for complex: a vector-literal-looking cast of a float2 crashes clang 15.
    h += std::string("#define LOAD_X(p, i) (") + (c10::isComplexType(acc) ? "" : "(ACC)") +
         convertExpr(x, acc, loadExpr(x, "(p)", "(i)")) + ")\n";
    h +=
        "#define STORE_Y(p, i, v) " + storeStmt(y, "(p)", "(i)", convertExpr(acc, y, "(v)")) + "\n";
    if (c10::isFloatingType(acc)) h += "#define SCAN_FLOAT 1\n";
    if (c10::isComplexType(acc)) {  // float2 / double2, ocl_cmul from kernels/complex.cl
      const std::string real = acc == c10::kComplexDouble ? "double" : "float";
      h += "#define SCAN_COMPLEX 1\ntypedef " + real + " CR;\ntypedef ACC CT;\n" +
           kernels::source("complex.cl") + "\n";
      h += prod ? "#define SCAN_IDENT ((ACC)(1, 0))\n#define SCAN_OP(a, b) ocl_cmul((a), (b))\n"
                : "#define SCAN_IDENT ((ACC)(0, 0))\n#define SCAN_OP(a, b) ((a) + (b))\n";
    } else {
      h += prod ? "#define SCAN_IDENT 1\n#define SCAN_OP(a, b) ((a) * (b))\n"
                : "#define SCAN_IDENT 0\n#define SCAN_OP(a, b) ((a) + (b))\n";
    }
    return rt::ProgramSource{std::string(prod ? "cumprod<" : "cumsum<") + c10::toString(x) + "->" +
                                 c10::toString(y) + ">",
                             withPrelude(h + kernels::source("scan.cl")), ""};
  });
}

at::Tensor contiguousLike(const at::Tensor& t) {
  return t.is_contiguous() ? t : at::empty(t.sizes(), t.options());
}

// Runs `kernel` of the scan program over the lines of self along dim into out (same sizes):
// kernel(y, x, outer, len, inner).
void runLines(const char* kernel, bool prod, const at::Tensor& out, const at::Tensor& self,
              int64_t dim) {
  checkSameDevice({out, self});
  if (out.numel() == 0) return;
  const at::Tensor x = self.contiguous();
  at::Tensor y = contiguousLike(out);
  const auto [outer, len, inner] = linesOf(x, dim);
  const c10::DeviceIndex idx = out.device().index();
  cl_program prog = scanProgram(idx, prod, x.scalar_type(), y.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, kernel);
  setArgs(k, bufferOf(y), bufferOf(x), static_cast<cl_long>(outer), static_cast<cl_long>(len),
          static_cast<cl_long>(inner));
  launch1D(device(idx), currentQueue(idx), k, outer * inner);
  OCL_CATCH
  if (!y.is_same(out)) out.copy_(y);
}

void scanImpl(bool prod, const at::Tensor& out, const at::Tensor& self, int64_t dim) {
  runLines("scan_lines", prod, out, self, dim);
}

template <class Meta, bool kProd>
at::Tensor scanFn(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  Structured<Meta> s(Mode::kFunctional, nullptr);
  s.meta(self, dim, dtype);
  scanImpl(kProd, s.output(), self, dim);
  return s.output();
}

template <class Meta, bool kProd>
at::Tensor& scanOut(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype,
                    at::Tensor& out) {
  Structured<Meta> s(Mode::kOut, &out);
  s.meta(self, dim, dtype);
  scanImpl(kProd, out, self, dim);
  return out;
}

// _cummax_helper / _cummin_helper: values and indices are allocated by cummax/cummin.
template <bool kMax>
void cumExtreme(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  checkSameDevice({self, values, indices});
  if (self.numel() == 0) return;
  if (c10::isComplexType(self.scalar_type())) {
    runFallback(kMax ? "aten::_cummax_helper" : "aten::_cummin_helper", "",
                {self, values, indices, dim});
    return;
  }
  const at::Tensor x = self.contiguous();
  at::Tensor y = contiguousLike(values), ind = contiguousLike(indices);
  const auto [outer, len, inner] = linesOf(x, dim);
  const c10::DeviceIndex idx = self.device().index();
  cl_program prog = scanProgram(idx, false, x.scalar_type(), y.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "scan_extreme_lines");
  setArgs(k, bufferOf(y), bufferOf(ind), bufferOf(x), static_cast<cl_long>(outer),
          static_cast<cl_long>(len), static_cast<cl_long>(inner), static_cast<cl_int>(kMax));
  launch1D(device(idx), currentQueue(idx), k, outer * inner);
  OCL_CATCH
  if (!y.is_same(values)) values.copy_(y);
  if (!ind.is_same(indices)) indices.copy_(ind);
}

// _logcumsumexp: floating and complex dtypes.
at::Tensor& logcumsumexpOut(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  if (!at::isFloatingType(self.scalar_type()) && !at::isComplexType(self.scalar_type())) {
    runFallback("aten::_logcumsumexp", "out", {self, dim, out});
    return out;
  }
  checkSameDevice({self, out});
  at::native::resize_output(out, self.sizes());
  if (self.numel() == 0) return out;
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "logcumsumexp: expected out of dtype ",
              self.scalar_type(), ", got ", out.scalar_type());
  runLines("scan_logsumexp_lines", false, out, self, dim);
  return out;
}

at::Tensor logcumsumexpFn(const at::Tensor& self, int64_t dim) {
  if (!at::isFloatingType(self.scalar_type()) && !at::isComplexType(self.scalar_type()))
    return runFallback("aten::_logcumsumexp", "", {self, dim})[0].toTensor();
  at::Tensor out = at::empty(self.sizes(), self.options());
  return logcumsumexpOut(self, dim, out);
}

using Cumsum = at::meta::structured_cumsum;
using Cumprod = at::meta::structured_cumprod;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumprod", TORCH_FN((scanFn<Cumprod, true>)));
  m.impl("cumprod.out", TORCH_FN((scanOut<Cumprod, true>)));
  m.impl("cumsum", TORCH_FN((scanFn<Cumsum, false>)));
  m.impl("cumsum.out", TORCH_FN((scanOut<Cumsum, false>)));
  m.impl("_logcumsumexp", TORCH_FN(logcumsumexpFn));
  m.impl("_logcumsumexp.out", TORCH_FN(logcumsumexpOut));
  m.impl("_cummax_helper", TORCH_FN(cumExtreme<true>));
  m.impl("_cummin_helper", TORCH_FN(cumExtreme<false>));
}

}  // namespace torch_ocl::aten
