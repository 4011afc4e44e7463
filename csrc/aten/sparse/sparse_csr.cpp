// Sparse CSR basics on ocl: construction (sparse_csr_tensor, .to("ocl"), dense.to_sparse_csr(),
// coo.to_sparse_csr()), crow_indices/col_indices/values and the metadata, to_dense, to_sparse
// (COO), clone and copy_, and CSR @ dense (mm, addmm, matmul; CSC @ dense too, which autograd's
// backward for the dense operand needs) and sparse_sampled_addmm (the CSR operand's gradient of
// that product). The index conversions between COO and CSR
// (_convert_indices_from_coo_to_csr / _csr_to_coo) are searchsorted over the sorted indices; ATen's
// layout-generic compressed code builds the rest on them and on native dense kernels.
// Zero-preserving unary ops (sin, abs, sqrt, ...) and scaling by a number apply to the values, as
// CPU's kernels do; sum() sums them. Everything else on a compressed tensor raises a
// NotImplementedError that names the op (here for the ops whose composite kernels would
// otherwise fail with an obscure message, in core/fallback.cpp for the rest).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_convert_indices_from_coo_to_csr_meta.h>
#include <ATen/ops/_convert_indices_from_csr_to_coo_meta.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_csr_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/ccol_indices_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/col_indices_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/crow_indices_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/resize_as_sparse_native.h>
#include <ATen/ops/row_indices_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_mask_native.h>
#include <ATen/ops/values_native.h>
#include <torch/library.h>

#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

// compressed[j] = the number of (sorted) indices below j, j = 0..size.
void cooToCsrInto(Structured<at::meta::structured__convert_indices_from_coo_to_csr>& s,
                  const at::Tensor& self, int64_t size, bool out_int32) {
  s.meta(self, size, out_int32);
  auto& out = const_cast<at::Tensor&>(s.output(0));
  checkSameDevice({self, out});
  if (self.numel() == 0) {
    out.zero_();
    return;
  }
  const at::Tensor bounds = at::arange(size + 1, self.options().dtype(self.scalar_type()));
  out.copy_(at::searchsorted(self.reshape({-1}).contiguous(), bounds, out_int32, /*right=*/false));
}

at::Tensor cooToCsr(const at::Tensor& self, int64_t size, bool out_int32) {
  Structured<at::meta::structured__convert_indices_from_coo_to_csr> s(Mode::kFunctional, nullptr);
  cooToCsrInto(s, self, size, out_int32);
  return s.output(0);
}

at::Tensor& cooToCsrOut(const at::Tensor& self, int64_t size, bool out_int32, at::Tensor& out) {
  Structured<at::meta::structured__convert_indices_from_coo_to_csr> s(Mode::kOut, &out);
  cooToCsrInto(s, self, size, out_int32);
  return out;
}

// (2, nnz): the compressed index of every element (its row for CSR) and its plain index (row 1;
// the two rows swapped with transpose).
void csrToCooInto(Structured<at::meta::structured__convert_indices_from_csr_to_coo>& s,
                  const at::Tensor& crow, const at::Tensor& col, bool out_int32, bool transpose) {
  s.meta(crow, col, out_int32, transpose);
  auto& out = const_cast<at::Tensor&>(s.output(0));
  checkSameDevice({crow, col, out});
  const int64_t nnz = col.numel(), nrows = crow.numel() - 1;
  if (nrows <= 0 || nnz == 0) {
    out.zero_();
    if (nnz > 0) out.select(0, transpose ? 0 : 1).copy_(col);
    return;
  }
  const at::Tensor pos = at::arange(nnz, crow.options());
  const at::Tensor rows =
      at::searchsorted(crow.contiguous(), pos, out_int32, /*right=*/true).sub_(1);
  out.select(0, transpose ? 1 : 0).copy_(rows);
  out.select(0, transpose ? 0 : 1).copy_(col);
}

at::Tensor csrToCoo(const at::Tensor& crow, const at::Tensor& col, bool out_int32, bool transpose) {
  Structured<at::meta::structured__convert_indices_from_csr_to_coo> s(Mode::kFunctional, nullptr);
  csrToCooInto(s, crow, col, out_int32, transpose);
  return s.output(0);
}

at::Tensor& csrToCooOut(const at::Tensor& crow, const at::Tensor& col, bool out_int32,
                        bool transpose, at::Tensor& out) {
  Structured<at::meta::structured__convert_indices_from_csr_to_coo> s(Mode::kOut, &out);
  csrToCooInto(s, crow, col, out_int32, transpose);
  return out;
}

void checkCsrMatrix(const at::Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(t.layout() == at::kSparseCsr || t.layout() == at::kSparseCsc,
                              "torch-ocl: ", op, " on a ", t.layout(),
                              " tensor is not supported on ocl yet (sparse compressed on ocl "
                              "covers the CSR layout, and CSC, csr.t(), as a product's operand)");
  TORCH_CHECK_NOT_IMPLEMENTED(t.dim() == 2 && t.dense_dim() == 0, "torch-ocl: ", op,
                              " on ocl supports 2-D sparse CSR matrices without batch or dense "
                              "dimensions, but got a ",
                              t.dim(), "-D one with dense_dim ", t.dense_dim());
}

// CSR or CSC (M, K) @ dense (K, N): each nonzero adds its value times a row of `dense` to its
// row. CSC (csr.t(), as autograd's backward of CSR @ dense makes it) converts with transpose.
at::Tensor csrDenseMm(const at::Tensor& sparse, const at::Tensor& dense, const char* op) {
  checkCsrMatrix(sparse, op);
  TORCH_CHECK_NOT_IMPLEMENTED(dense.layout() == at::kStrided, "torch-ocl: ", op,
                              " on ocl supports sparse CSR @ strided, but the second operand is ",
                              dense.layout());
  TORCH_CHECK(dense.dim() == 2, op, ": expected mat2 to be a matrix, got ", dense.dim(),
              "-D tensor");
  TORCH_CHECK(sparse.size(1) == dense.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              sparse.size(0), "x", sparse.size(1), " and ", dense.size(0), "x", dense.size(1), ")");
  TORCH_CHECK(sparse.scalar_type() == dense.scalar_type(),
              "expected mat1 and mat2 to have the same dtype, but got: ", sparse.scalar_type(),
              " != ", dense.scalar_type());
  const at::Tensor values = sparse.values();
  checkSameDevice({values, dense});
  at::Tensor out = at::zeros({sparse.size(0), dense.size(1)}, dense.options());
  if (values.numel() == 0 || out.numel() == 0) return out;
  const bool csc = sparse.layout() == at::kSparseCsc;
  const at::Tensor compressed = csc ? sparse.ccol_indices() : sparse.crow_indices();
  const at::Tensor plain = csc ? sparse.row_indices() : sparse.col_indices();
  const at::Tensor coo = csrToCoo(compressed, plain, /*out_int32=*/false, /*transpose=*/csc);
  const at::Tensor rows = coo.select(0, 0), col = coo.select(0, 1);
  return out.index_add_(0, rows, dense.index_select(0, col).mul(values.unsqueeze(1)));
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      (self.layout() == at::kSparseCsr || self.layout() == at::kSparseCsc) &&
          mat2.layout() == at::kStrided,
      "torch-ocl: mm with a sparse compressed operand supports only sparse CSR (or CSC) @ "
      "strided on ocl, but got ",
      self.layout(), " @ ", mat2.layout());
  return csrDenseMm(self, mat2, "mm");
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      self.layout() == at::kStrided &&
          (mat1.layout() == at::kSparseCsr || mat1.layout() == at::kSparseCsc) &&
          mat2.layout() == at::kStrided,
      "torch-ocl: on a sparse CSR tensor, addmm supports only dense + CSR @ dense");
  at::Tensor prod = csrDenseMm(mat1, mat2, "addmm");
  checkSameDevice({self, prod});
  TORCH_CHECK(self.dim() <= 2 && at::infer_size(self.sizes(), prod.sizes()) == prod.sizes(),
              "addmm: self of shape ", self.sizes(), " cannot be broadcast to ", prod.sizes());
  if (!alpha.equal(1)) prod.mul_(alpha);
  return beta.equal(0) ? prod : prod.add_(self.expand(prod.sizes()), beta);
}

// out = beta * self + alpha * (mat1 @ mat2) sampled at self's nonzeros (CSR self, strided mat1
// and mat2): one dot product of a row of mat1 and a column of mat2 per nonzero, as gathered rows
// multiplied and summed on the device. Autograd's backward of CSR @ dense calls it for the CSR
// operand's gradient, with the gradient's pattern taken from that operand.
at::Tensor sampledValues(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                         const at::Scalar& beta, const at::Scalar& alpha) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kSparseCsr,
                              "torch-ocl: sparse_sampled_addmm on ocl expects a sparse CSR self, "
                              "got ",
                              self.layout());
  TORCH_CHECK_NOT_IMPLEMENTED(self.dim() == 2 && self.dense_dim() == 0,
                              "torch-ocl: sparse_sampled_addmm on ocl supports 2-D CSR matrices "
                              "without batch or dense dimensions, but got a ",
                              self.dim(), "-D one with dense_dim ", self.dense_dim());
  for (const at::Tensor* t : {&mat1, &mat2}) {
    const char* name = t == &mat1 ? "mat1" : "mat2";
    TORCH_CHECK(t->layout() == at::kStrided, "sampled_addmm: Expected ", name,
                " to have strided layout, but got ", t->layout());
    TORCH_CHECK(t->dim() == 2, "sampled_addmm: Expected ", name, " to be a matrix, got ", t->dim(),
                "-D tensor");
    TORCH_CHECK(t->scalar_type() == self.scalar_type(), "sampled_addmm: Expected ", name,
                " and self to have the same dtype, but got ", t->scalar_type(), " and ",
                self.scalar_type());
  }
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.size(0) == mat1.size(0) && self.size(1) == mat2.size(1),
              "sampled_addmm: self of shape ", self.sizes(),
              " does not match mat1 @ mat2 of shape (", mat1.size(0), ", ", mat2.size(1), ")");
  const at::Tensor values = self.values();
  checkSameDevice({values, mat1, mat2});
  at::Tensor out = beta.equal(0) ? at::zeros_like(values) : values.mul(beta);
  if (values.numel() == 0 || mat1.size(1) == 0) return out;
  const at::Tensor coo = csrToCoo(self.crow_indices(), self.col_indices(), /*out_int32=*/false,
                                  /*transpose=*/false);
  const at::Tensor dots = mat1.index_select(0, coo.select(0, 0))
                              .mul_(mat2.index_select(1, coo.select(0, 1)).t())
                              .sum(1);
  return out.add_(dots, alpha);
}

at::Tensor sampledAddmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  const at::Tensor values = sampledValues(self, mat1, mat2, beta, alpha);
  return at::_sparse_compressed_tensor_unsafe(self.crow_indices().clone(),
                                              self.col_indices().clone(), values, self.sizes(),
                                              values.options().layout(at::kSparseCsr));
}

at::Tensor& sampledAddmmOut(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                            const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(out.layout() == at::kSparseCsr,
              "sampled_addmm: Expected result to have sparse csr layout, but got ", out.layout());
  at::Tensor result = sampledAddmm(self, mat1, mat2, beta, alpha);
  if (!out.is_same(self)) out.resize_as_sparse_(result);
  out.copy_(result);
  return out;
}

at::Tensor toDense(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                   std::optional<bool> masked_grad) {
  // ATen's conversion covers every compressed layout (a CSC one comes from csr.t()), batch and
  // dense dimensions, through the index conversions above.
  return at::native::sparse_compressed_to_dense(self, dtype, masked_grad);
}

constexpr char kCsrCoverage[] =
    " is not supported on ocl yet (sparse CSR on ocl covers construction, .to(), to_sparse_csr / "
    "to_dense / to_sparse, crow_indices / col_indices / values, clone and copy_, CSR @ dense (mm, "
    "addmm, matmul, and their backward for both operands, sparse_sampled_addmm), zero-preserving "
    "unary ops, scaling "
    "by a number and sum()); keep the tensor "
    "on the CPU, or make it dense (.to_dense()) first";

void csrUnsupported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "torch-ocl: ", op.schema().operator_name(),
                              " on a sparse compressed tensor", kCsrCoverage);
}

// op(values) with the same indices: for ops with op(0) == 0 whose first argument is the CSR
// tensor (the other arguments, numbers, pass through). In-place forms update the values.
void csrValuewise(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema = op.schema();
  const size_t nargs = schema.arguments().size();
  c10::IValue& first = (*stack)[stack->size() - nargs];
  const at::Tensor self = first.toTensor();
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == at::kSparseCsr,
                              "torch-ocl: ", schema.operator_name(), " on a ", self.layout(),
                              " tensor", kCsrCoverage);
  for (size_t i = 1; i < nargs; ++i) {
    const c10::IValue& a = (*stack)[stack->size() - nargs + i];
    TORCH_CHECK_NOT_IMPLEMENTED(!a.isTensor() || a.toTensor().dim() == 0,
                                "torch-ocl: ", schema.operator_name(),
                                " on a sparse CSR tensor and another tensor", kCsrCoverage);
  }
  first = self.values();
  op.callBoxed(stack);
  if (schema.name().back() == '_') {  // in place: the values changed, return self
    stack->back() = self;
    return;
  }
  const at::Tensor values = stack->back().toTensor();
  stack->back() = at::_sparse_compressed_tensor_unsafe(
      self.crow_indices().clone(), self.col_indices().clone(), values, self.sizes(),
      values.options().layout(at::kSparseCsr));
}

at::Tensor csrSum(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return self.values().sum(dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, SparseCsrPrivateUse1, m) {
  m.impl("_nnz", TORCH_FN(at::native::_nnz_sparse_csr));
  m.impl("_to_dense", TORCH_FN(toDense));
  m.impl("_to_sparse",
         TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, std::optional<at::Layout>,
                                             at::OptionalIntArrayRef, std::optional<int64_t>)>(
             at::native::sparse_compressed_to_sparse)));
  m.impl("_to_sparse.sparse_dim", TORCH_FN(static_cast<at::Tensor (*)(const at::Tensor&, int64_t)>(
                                      at::native::sparse_compressed_to_sparse)));
  m.impl("_to_sparse_csr", TORCH_FN(at::native::sparse_compressed_to_sparse_csr));
  // Ops with composite kernels that would fail on a compressed tensor with an obscure message.
  for (const char* name : {"add.Tensor", "add_.Tensor", "deg2rad.out", "rad2deg.out", "select.int",
                           "select_copy.int", "sum.dim_IntList", "threshold_backward"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&csrUnsupported>());
  // Zero-preserving unary ops and scaling: op(values).
  for (const char* name : {"abs",
                           "abs_",
                           "asin",
                           "asin_",
                           "asinh",
                           "asinh_",
                           "atan",
                           "atan_",
                           "atanh",
                           "atanh_",
                           "ceil",
                           "ceil_",
                           "conj_physical_",
                           "_conj_physical",
                           "deg2rad",
                           "deg2rad_",
                           "erf",
                           "erf_",
                           "erfinv",
                           "erfinv_",
                           "expm1",
                           "expm1_",
                           "floor",
                           "floor_",
                           "frac",
                           "frac_",
                           "isinf",
                           "isneginf",
                           "isposinf",
                           "log1p",
                           "log1p_",
                           "mul.Scalar",
                           "mul.Tensor",
                           "mul_.Scalar",
                           "mul_.Tensor",
                           "neg",
                           "neg_",
                           "rad2deg",
                           "rad2deg_",
                           "round",
                           "round_",
                           "sgn",
                           "sgn_",
                           "sign",
                           "sign_",
                           "signbit",
                           "sin",
                           "sin_",
                           "sinh",
                           "sinh_",
                           "sqrt",
                           "sqrt_",
                           "tan",
                           "tan_",
                           "tanh",
                           "tanh_",
                           "trunc",
                           "trunc_"})
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&csrValuewise>());
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("clone", TORCH_FN(at::native::clone_sparse_compressed));
  m.impl("col_indices", TORCH_FN(at::native::col_indices_sparse_csr));
  m.impl("copy_", TORCH_FN(at::native::copy_sparse_compressed_));
  m.impl("ccol_indices", TORCH_FN(at::native::ccol_indices_sparse_csr));
  m.impl("crow_indices", TORCH_FN(at::native::crow_indices_sparse_csr));
  m.impl("dense_dim", TORCH_FN(at::native::dense_dim_sparse_csr));
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_sparse_compressed));
  m.impl("mm", TORCH_FN(mm));
  m.impl("resize_as_sparse_", TORCH_FN(at::native::resize_as_sparse_compressed_));
  m.impl("row_indices", TORCH_FN(at::native::row_indices_sparse_csr));
  m.impl("sparse_dim", TORCH_FN(at::native::sparse_dim_sparse_csr));
  m.impl("sparse_mask", TORCH_FN(at::native::sparse_mask_sparse_compressed));
  m.impl("sparse_sampled_addmm", TORCH_FN(sampledAddmm));
  m.impl("sparse_sampled_addmm.out", TORCH_FN(sampledAddmmOut));
  m.impl("sum", TORCH_FN(csrSum));
  m.impl("values", TORCH_FN(at::native::values_sparse_csr));
  // The rest of the structured ops: their CompositeExplicitAutogradNonFunctional kernels would
  // run on a compressed tensor and fail inside TensorIterator ("unsupported tensor layout").
  c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    const auto op = dispatcher.findOp(name);
    if (!op || op->hasKernelForDispatchKey(c10::DispatchKey::SparseCsrPrivateUse1) ||
        !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional))
      continue;
    std::string qualified = name.name.substr(6);
    if (!name.overload_name.empty()) qualified += "." + name.overload_name;
    m.impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&csrUnsupported>());
  }
}

// dense.to_sparse_csr() on ocl (ATen's generic conversion over native masked_select and the
// index conversions above), and the index conversions themselves.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_convert_indices_from_coo_to_csr", TORCH_FN(cooToCsr));
  m.impl("_convert_indices_from_coo_to_csr.out", TORCH_FN(cooToCsrOut));
  m.impl("_convert_indices_from_csr_to_coo", TORCH_FN(csrToCoo));
  m.impl("_convert_indices_from_csr_to_coo.out", TORCH_FN(csrToCooOut));
  m.impl("_to_sparse_csr", TORCH_FN(at::native::dense_to_sparse_csr));
}

// coo.to_sparse_csr() on ocl.
TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
  m.impl("_to_sparse_csr", TORCH_FN(at::native::coo_to_sparse_csr));
}

}  // namespace torch_ocl::aten
