// sum and mean over any set of dimensions, any input strides, with PyTorch's output dtypes (from
// the structured meta functions). One work item per output element walks its reduced elements.
// TODO(perf): a two-stage (work-group) reduction for outputs with few elements; a full sum runs
// on one work item today.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/sum_meta.h>
#include <torch/library.h>

#include "aten/cl_types.h"
#include "aten/fallback.h"
#include "aten/launch.h"
#include "aten/structured.h"

namespace torch_ocl::aten {
namespace {

char kReduceFamily;

struct alignas(8) ReduceGeom {
  cl_long keep_sizes[kMaxDims];
  cl_long keep_strides[kMaxDims];
  cl_long red_sizes[kMaxDims];
  cl_long red_strides[kMaxDims];
};

c10::ScalarType accType(c10::ScalarType t) {
  if (t == c10::kDouble) return c10::kDouble;
  if (c10::isFloatingType(t)) return c10::kFloat;
  return c10::kLong;
}

cl_program reduceProgram(c10::DeviceIndex idx, c10::ScalarType in, c10::ScalarType out) {
  const uint64_t variant = dtypeCode(in) | (dtypeCode(out) << 6);
  return programs(idx).get({&kReduceFamily, variant}, [&] {
    const c10::ScalarType acc = accType(out);
    const std::string at = clComputeType(acc), ist = clStorageType(in), ost = clStorageType(out);
    const std::string load = loadExpr(in, "p", "0");
    std::string s =
        "__kernel void reduce_sum(__global char* ob, ulong ooff, __global const char* ib,\n"
        "    ulong ioff, long n_out, long n_red, int nkeep, int nred, OclReduceGeom g, " +
        at +
        " scale, int use_scale) {\n"
        "  const long o = get_global_id(0);\n  if (o >= n_out) return;\n"
        "  long rem = o, base = 0;\n"
        "  for (int k = 0; k < nkeep; ++k) {\n"
        "    base += (rem % g.keep_sizes[k]) * g.keep_strides[k];\n    rem /= g.keep_sizes[k];\n  "
        "}\n"
        "  " +
        at +
        " acc = 0;\n"
        "  for (long r = 0; r < n_red; ++r) {\n"
        "    long rr = r, off = base;\n"
        "    for (int k = 0; k < nred; ++k) {\n"
        "      off += (rr % g.red_sizes[k]) * g.red_strides[k];\n      rr /= g.red_sizes[k];\n"
        "    }\n"
        "    __global const " +
        ist + "* p = (__global const " + ist +
        "*)(ib + ioff + off);\n"
        "    acc += " +
        convertExpr(in, acc, load) +
        ";\n  }\n"
        "  if (use_scale) acc = acc * scale;\n"
        "  __global " +
        ost + "* q = (__global " + ost +
        "*)(ob + ooff);\n"
        "  " +
        storeStmt(out, "q", "o", convertExpr(acc, out, "acc")) + "\n}\n";
    return rt::ProgramSource{
        std::string("reduce_sum<") + c10::toString(in) + "->" + c10::toString(out) + ">",
        withPrelude(s), ""};
  });
}

// out (contiguous) = sum of self over dims (scaled by 1/n for mean).
void sumInto(const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef opt_dim,
             bool mean) {
  const int64_t ndim = self.dim();
  const auto mask = at::dim_list_to_bitset(opt_dim.value_or(at::IntArrayRef{}), ndim);
  const bool all = !opt_dim.has_value() || opt_dim->empty();
  ReduceGeom g{};
  int nkeep = 0, nred = 0;
  int64_t n_red = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {  // innermost first
    const bool reduced = all || mask[d];
    const int64_t bytes = self.stride(d) * self.element_size();
    if (reduced) {
      TORCH_CHECK(nred < kMaxDims, "torch-ocl: too many reduced dimensions");
      g.red_sizes[nred] = self.size(d);
      g.red_strides[nred++] = bytes;
      n_red *= self.size(d);
    } else {
      TORCH_CHECK(nkeep < kMaxDims, "torch-ocl: too many kept dimensions");
      g.keep_sizes[nkeep] = self.size(d);
      g.keep_strides[nkeep++] = bytes;
    }
  }
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  const c10::DeviceIndex idx = out.device().index();
  cl_program prog = reduceProgram(idx, self.scalar_type(), out.scalar_type());
  const rt::BufferRef o = bufferOf(out);
  // A zero-size input has no storage to point at; any buffer does (no element is read).
  const rt::BufferRef i = self.numel() > 0 ? bufferOf(self) : o;
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, "reduce_sum");
  cl_uint a = 0;
  setArg(k, a, o);
  setArg(k, a, i);
  setArg(k, a, static_cast<cl_long>(n_out));
  setArg(k, a, static_cast<cl_long>(n_red));
  setArg(k, a, static_cast<cl_int>(nkeep));
  setArg(k, a, static_cast<cl_int>(nred));
  setArg(k, a, g);
  const double scale = n_red > 0 ? 1.0 / static_cast<double>(n_red) : std::nan("");
  switch (accType(out.scalar_type())) {
    case c10::kDouble:
      setArg(k, a, static_cast<cl_double>(scale));
      break;
    case c10::kFloat:
      setArg(k, a, static_cast<cl_float>(scale));
      break;
    default:
      setArg(k, a, static_cast<cl_long>(1));
      break;
  }
  setArg(k, a, static_cast<cl_int>(mean));
  launch1D(device(idx), currentQueue(idx), k, n_out);
  OCL_CATCH
}

bool covered(const at::Tensor& self, const at::Tensor& out) {
  return !c10::isComplexType(self.scalar_type()) && !c10::isComplexType(out.scalar_type());
}

template <class Meta>
at::Tensor& runReduce(at::Tensor* out, Mode mode, const at::Tensor& self,
                      at::OptionalIntArrayRef dim, bool keepdim,
                      std::optional<c10::ScalarType> dtype, bool mean, at::Tensor& result) {
  Structured<Meta> s(mode, out);
  s.meta(self, dim, keepdim, dtype);
  const at::Tensor& o = s.output();
  if (o.is_contiguous()) {
    sumInto(o, self, dim, mean);
  } else {
    at::Tensor tmp = at::empty(o.sizes(), o.options());
    sumInto(tmp, self, dim, mean);
    o.copy_(tmp);
  }
  result = o;
  return result;
}

at::Tensor sumDim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype) {
  if (c10::isComplexType(self.scalar_type()))
    return runFallback("aten::sum", "dim_IntList", {self, dim, keepdim, dtype})[0].toTensor();
  at::Tensor result;
  return runReduce<at::meta::structured_sum_dim_IntList>(nullptr, Mode::kFunctional, self, dim,
                                                         keepdim, dtype, false, result);
}

at::Tensor& sumOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  if (!covered(self, out)) {
    runFallback("aten::sum", "IntList_out", {self, dim, keepdim, dtype, out});
    return out;
  }
  at::Tensor result;
  runReduce<at::meta::structured_sum_dim_IntList>(&out, Mode::kOut, self, dim, keepdim, dtype,
                                                  false, result);
  return out;
}

at::Tensor sumAll(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sumDim(self, std::nullopt, false, dtype);
}

at::Tensor meanDim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  if (c10::isComplexType(self.scalar_type()))
    return runFallback("aten::mean", "dim", {self, dim, keepdim, dtype})[0].toTensor();
  at::Tensor result;
  return runReduce<at::meta::structured_mean_dim>(nullptr, Mode::kFunctional, self, dim, keepdim,
                                                  dtype, true, result);
}

at::Tensor& meanOut(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  if (!covered(self, out)) {
    runFallback("aten::mean", "out", {self, dim, keepdim, dtype, out});
    return out;
  }
  at::Tensor result;
  runReduce<at::meta::structured_mean_dim>(&out, Mode::kOut, self, dim, keepdim, dtype, true,
                                           result);
  return out;
}

at::Tensor meanAll(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return meanDim(self, std::nullopt, false, dtype);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mean", TORCH_FN(meanAll));
  m.impl("mean.dim", TORCH_FN(meanDim));
  m.impl("mean.out", TORCH_FN(meanOut));
  m.impl("sum", TORCH_FN(sumAll));
  m.impl("sum.IntList_out", TORCH_FN(sumOut));
  m.impl("sum.dim_IntList", TORCH_FN(sumDim));
}

}  // namespace torch_ocl::aten
