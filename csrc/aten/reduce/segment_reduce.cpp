// segment_reduce (lengths and offsets forms) and _segment_reduce_backward on the device, for the
// floating dtypes: one work item per output element walks its segment in order and rounds like
// CPU's kernel (16-bit types after every step), so results match CPU's bit for bit where the
// arithmetic allows. Checks and messages are CPU's (SegmentReduce.cpp).
#include <ATen/ATen.h>
#include <ATen/native/ReductionType.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kSegmentReduceFamily;

cl_kernel segmentKernel(const at::Tensor& like, const char* name) {
  const c10::DeviceIndex idx = like.device().index();
  const c10::ScalarType t = like.scalar_type();
  const char* rnd = t == at::kHalf       ? "#define RND(v) ocl_round_to_half(v)\n"
                    : t == at::kBFloat16 ? "#define RND(v) ocl_round_to_bf16(v)\n"
                                         : "#define RND(v) (v)\n";
  return programs(idx).kernel(nnProgram(idx, &kSegmentReduceFamily, "segment_reduce.cl", t, rnd),
                              name);
}

// int64 offsets (outer, nseg + 1), contiguous, from the given offsets or lengths.
at::Tensor segmentOffsets(const std::optional<at::Tensor>& lengths,
                          const std::optional<at::Tensor>& offsets, bool use_offsets) {
  if (use_offsets) return offsets->to(at::kLong).contiguous();
  const at::Tensor len = lengths->to(at::kLong);
  std::vector<int64_t> zshape(len.sizes().begin(), len.sizes().end());
  zshape.back() = 1;
  return at::cat({at::zeros(zshape, len.options()), len.cumsum(-1)}, -1).contiguous();
}

struct Geometry {
  int64_t outer = 1, len = 0, inner = 1, nseg = 0;
};

Geometry geometry(const at::Tensor& data, int64_t axis, const at::Tensor& offs) {
  Geometry g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= data.size(d);
  for (int64_t d = axis + 1; d < data.dim(); ++d) g.inner *= data.size(d);
  g.len = data.size(axis);
  g.nseg = offs.size(-1) - 1;
  return g;
}

void setInitial(cl_kernel k, cl_uint& i, const at::Tensor& like,
                const std::optional<at::Scalar>& initial) {
  const bool has = initial.has_value();
  setArg(k, i, static_cast<cl_int>(has));
  if (like.scalar_type() == at::kDouble)
    setArg(k, i, static_cast<cl_double>(has ? initial->to<double>() : 0.0));
  else  // to<scalar_t>() first: CPU rounds the initial value to the data's dtype
    setArg(k, i,
           static_cast<cl_float>(!has ? 0.0f
                                 : like.scalar_type() == at::kHalf
                                     ? static_cast<float>(initial->to<at::Half>())
                                 : like.scalar_type() == at::kBFloat16
                                     ? static_cast<float>(initial->to<at::BFloat16>())
                                     : initial->to<float>()));
}

bool segmentNative(const at::Tensor& data) {
  return nnFloating(data.scalar_type());
}

at::Tensor segmentReduce(const at::Tensor& data, c10::string_view reduce,
                         const std::optional<at::Tensor>& lengths,
                         const std::optional<at::Tensor>& indices,
                         const std::optional<at::Tensor>& offsets, int64_t axis, bool unsafe,
                         const std::optional<at::Scalar>& initial) {
  if (!segmentNative(data))
    return runFallback(
               "aten::segment_reduce", "",
               {data, std::string(reduce), lengths, indices, offsets, axis, unsafe, initial})[0]
        .toTensor();
  axis = c10::maybe_wrap_dim(axis, data.dim());
  const bool has_lengths = lengths.has_value(), has_offsets = offsets.has_value();
  TORCH_CHECK(!indices.has_value(),
              "segment_reduce(): indices based reduction is not supported yet.");
  TORCH_CHECK(has_lengths || has_offsets,
              "segment_reduce(): Either lengths or offsets must be defined.")
  const auto reduction = at::native::get_reduction_enum(reduce);
  const at::Tensor& seg = has_offsets ? *offsets : *lengths;
  TORCH_CHECK(data.get_device() == seg.get_device());
  TORCH_CHECK(data.dim() >= seg.dim());
  TORCH_CHECK(axis == seg.dim() - 1, "segment_reduce(): Expected axis to be the last dimension of ",
              has_offsets ? "offsets" : "lengths", " but got ", axis, ".");
  if (!has_offsets && !unsafe) {
    const auto min_length = lengths->min().item<int64_t>();
    TORCH_CHECK((min_length >= 0), "lengths contains negative value!");
    TORCH_CHECK(at::all(lengths->sum({-1}) == data.size(axis)).item<bool>(),
                "segment_reduce(): Expected all rows of lengths along axis ",
                "to sum to data.size(lengths.dim()-1) when !unsafe.");
  }
  const at::Tensor offs = segmentOffsets(lengths, offsets, has_offsets);
  const at::Tensor x = data.contiguous();
  const Geometry g = geometry(x, axis, offs);
  std::vector<int64_t> shape = x.sizes().vec();
  shape[axis] = g.nseg;
  at::Tensor out = at::empty(shape, x.options());
  if (out.numel() == 0) return out;
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel k = segmentKernel(x, "segment_reduce_fwd");
  cl_uint i = 0;
  setArg(k, i, bufferOf(out));
  setArg(k, i, bufferOrAny(x, out));
  setArg(k, i, bufferOf(offs));
  for (int64_t v : {g.outer, g.nseg, g.len, g.inner}) setArg(k, i, static_cast<cl_long>(v));
  setArg(k, i, static_cast<cl_int>(reduction));
  setInitial(k, i, x, initial);
  launch1D(device(idx), currentQueue(idx), k, out.numel());
  OCL_CATCH
  return out;
}

at::Tensor segmentReduceBackward(const at::Tensor& grad, const at::Tensor& output,
                                 const at::Tensor& data, c10::string_view reduce,
                                 const std::optional<at::Tensor>& lengths,
                                 const std::optional<at::Tensor>& offsets, int64_t axis,
                                 const std::optional<at::Scalar>& initial) {
  if (!segmentNative(data))
    return runFallback(
               "aten::_segment_reduce_backward", "",
               {grad, output, data, std::string(reduce), lengths, offsets, axis, initial})[0]
        .toTensor();
  checkSameDevice({grad, output, data});
  axis = c10::maybe_wrap_dim(axis, data.dim());
  // Autograd passes an undefined tensor for None.
  const bool has_lengths = lengths.has_value() && lengths->defined();
  const bool has_offsets = offsets.has_value() && offsets->defined();
  TORCH_CHECK(has_lengths || has_offsets,
              "segment_reduce(): Either lengths or offsets must be defined.");
  const auto reduction = at::native::get_reduction_enum(reduce);
  const at::Tensor offs = segmentOffsets(lengths, offsets, has_offsets);
  const at::Tensor x = data.contiguous();
  const at::Tensor gr = grad.to(x.scalar_type()).contiguous();
  const at::Tensor out = output.to(x.scalar_type()).contiguous();
  const Geometry g = geometry(x, axis, offs);
  at::Tensor grad_input = at::zeros(x.sizes(), x.options());
  if (gr.numel() == 0 || x.numel() == 0) return grad_input;
  const c10::DeviceIndex idx = x.device().index();
  OCL_TRY
  cl_kernel k = segmentKernel(x, "segment_reduce_bwd");
  cl_uint i = 0;
  setArg(k, i, bufferOf(grad_input));
  setArg(k, i, bufferOf(gr));
  setArg(k, i, bufferOf(out));
  setArg(k, i, bufferOf(x));
  setArg(k, i, bufferOf(offs));
  for (int64_t v : {g.outer, g.nseg, g.len, g.inner}) setArg(k, i, static_cast<cl_long>(v));
  setArg(k, i, static_cast<cl_int>(reduction));
  setInitial(k, i, x, initial);
  launch1D(device(idx), currentQueue(idx), k, gr.numel());
  OCL_CATCH
  return grad_input;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_segment_reduce_backward", TORCH_FN(segmentReduceBackward));
  m.impl("segment_reduce", TORCH_FN(segmentReduce));
}

}  // namespace torch_ocl::aten
