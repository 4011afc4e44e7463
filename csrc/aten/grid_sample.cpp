// grid_sampler_2d and its backward (F.grid_sample on 4-D inputs: bilinear, nearest, bicubic;
// zeros, border, reflection padding; align_corners) for float/double/half/bfloat16, on
// grid_sample.cl. Other dtypes, and input/grid dtype mismatches, take the counted CPU fallback
// (which raises CPU's error where CPU has one). affine_grid is composite and runs natively.
#include <ATen/ATen.h>
#include <ATen/native/GridSamplerUtils.h>
#include <torch/library.h>

#include "aten/fallback.h"
#include "aten/nn_common.h"

namespace torch_ocl::aten {
namespace {

char kGridFamily;

// Mirrors GridGeom in grid_sample.cl.
struct alignas(8) GridGeom {
  cl_long N, C, H, W, OH, OW;
  cl_int interp, padding, align;
};

GridGeom gridGeom(const at::Tensor& input, const at::Tensor& grid, int64_t interp, int64_t padding,
                  bool align) {
  GridGeom g{};
  g.N = input.size(0), g.C = input.size(1), g.H = input.size(2), g.W = input.size(3);
  g.OH = grid.size(1), g.OW = grid.size(2);
  g.interp = static_cast<cl_int>(interp), g.padding = static_cast<cl_int>(padding);
  g.align = align;
  return g;
}

void launchGrid(const at::Tensor& anchor, const char* name, int64_t n,
                std::initializer_list<at::Tensor> tensors, const GridGeom& g) {
  if (n <= 0) return;
  const c10::DeviceIndex idx = anchor.device().index();
  cl_program prog = nnProgram(idx, &kGridFamily, "grid_sample.cl", anchor.scalar_type());
  OCL_TRY
  cl_kernel k = programs(idx).kernel(prog, name);
  cl_uint i = 0;
  for (const at::Tensor& t : tensors) setArg(k, i, bufferOrAny(t, anchor));
  setArg(k, i, g);
  launch1D(device(idx), currentQueue(idx), k, n);
  OCL_CATCH
}

bool nativeArgs(const at::Tensor& input, const at::Tensor& grid, int64_t interp, int64_t padding) {
  return nnFloating(input.scalar_type()) && grid.scalar_type() == input.scalar_type() &&
         interp >= 0 && interp <= 2 && padding >= 0 && padding <= 2;
}

at::Tensor gridSampler2d(const at::Tensor& input, const at::Tensor& grid, int64_t interp,
                         int64_t padding, bool align_corners) {
  at::native::check_grid_sampler_common(input, grid);
  at::native::check_grid_sampler_2d(input, grid);
  if (!nativeArgs(input, grid, interp, padding))
    return runFallback("aten::grid_sampler_2d", "",
                       {input, grid, interp, padding, align_corners})[0]
        .toTensor();
  const at::Tensor x = input.contiguous(), gr = grid.contiguous();
  const GridGeom g = gridGeom(x, gr, interp, padding, align_corners);
  at::Tensor out = at::empty({g.N, g.C, g.OH, g.OW}, x.options());
  if (out.numel() > 0) launchGrid(x, "grid_fwd", g.N * g.OH * g.OW, {out, x, gr}, g);
  return out;
}

std::tuple<at::Tensor, at::Tensor> gridSampler2dBackward(const at::Tensor& grad_output,
                                                         const at::Tensor& input,
                                                         const at::Tensor& grid, int64_t interp,
                                                         int64_t padding, bool align_corners,
                                                         std::array<bool, 2> output_mask) {
  at::native::check_grid_sampler_common(input, grid);
  at::native::check_grid_sampler_2d(input, grid);
  checkSameDevice({grad_output, input, grid});
  if (!nativeArgs(input, grid, interp, padding) ||
      grad_output.scalar_type() != input.scalar_type()) {
    auto r = runFallback("aten::grid_sampler_2d_backward", "",
                         {grad_output, input, grid, interp, padding, align_corners,
                          c10::List<bool>({output_mask[0], output_mask[1]})});
    return {r[0].toTensor(), r[1].toTensor()};
  }
  const at::Tensor go = grad_output.contiguous(), x = input.contiguous(), gr = grid.contiguous();
  const GridGeom g = gridGeom(x, gr, interp, padding, align_corners);
  at::Tensor grad_input;
  if (output_mask[0]) {
    grad_input = at::zeros(x.sizes(), x.options());
    if (go.numel() > 0) launchGrid(x, "grid_bwd_input", g.N * g.C, {grad_input, go, gr}, g);
  }
  at::Tensor grad_grid = at::empty(gr.sizes(), gr.options());
  if (grad_grid.numel() > 0) {
    if (g.C == 0)
      grad_grid.zero_();
    else
      launchGrid(x, "grid_bwd_grid", g.N * g.OH * g.OW, {grad_grid, go, x, gr}, g);
  }
  return {grad_input, grad_grid};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", TORCH_FN(gridSampler2d));
  m.impl("grid_sampler_2d_backward", TORCH_FN(gridSampler2dBackward));
}

}  // namespace torch_ocl::aten
