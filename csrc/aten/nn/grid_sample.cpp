// grid_sampler_2d and grid_sampler_3d with their backward (F.grid_sample: bilinear/trilinear,
// nearest, bicubic in 2-D; zeros, border, reflection padding; align_corners) for
// float/double/half/bfloat16, on grid_sample.cl. Other dtypes, and input/grid dtype mismatches,
// take the counted CPU fallback (which raises CPU's error where CPU has one). affine_grid is
// composite and runs natively.
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
  cl_long N, C, D, H, W, OD, OH, OW;
  cl_int dims, interp, padding, align;
};

// input (N, C, [D,] H, W), grid (N, [OD,] OH, OW, dims).
GridGeom gridGeom(const at::Tensor& input, const at::Tensor& grid, int64_t interp, int64_t padding,
                  bool align) {
  GridGeom g{};
  const bool vol = input.dim() == 5;
  g.N = input.size(0), g.C = input.size(1), g.D = vol ? input.size(2) : 1;
  g.H = input.size(-2), g.W = input.size(-1);
  g.OD = vol ? grid.size(1) : 1, g.OH = grid.size(-3), g.OW = grid.size(-2);
  g.dims = vol ? 3 : 2;
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

// The shape checks of grid_sampler_2d / grid_sampler_3d.
template <int Dims>
void checkGrid(const at::Tensor& input, const at::Tensor& grid, int64_t interp) {
  at::native::check_grid_sampler_common(input, grid);
  if constexpr (Dims == 2)
    at::native::check_grid_sampler_2d(input, grid);
  else
    at::native::check_grid_sampler_3d(input, grid, interp);
}

template <int Dims>
at::Tensor gridSampler(const at::Tensor& input, const at::Tensor& grid, int64_t interp,
                       int64_t padding, bool align_corners) {
  checkGrid<Dims>(input, grid, interp);
  if (!nativeArgs(input, grid, interp, padding))
    return runFallback(Dims == 2 ? "aten::grid_sampler_2d" : "aten::grid_sampler_3d", "",
                       {input, grid, interp, padding, align_corners})[0]
        .toTensor();
  const at::Tensor x = input.contiguous(), gr = grid.contiguous();
  const GridGeom g = gridGeom(x, gr, interp, padding, align_corners);
  std::vector<int64_t> shape{g.N, g.C};
  if (Dims == 3) shape.push_back(g.OD);
  shape.insert(shape.end(), {g.OH, g.OW});
  at::Tensor out = at::empty(shape, x.options());
  if (out.numel() > 0) launchGrid(x, "grid_fwd", g.N * g.OD * g.OH * g.OW, {out, x, gr}, g);
  return out;
}

template <int Dims>
std::tuple<at::Tensor, at::Tensor> gridSamplerBackward(const at::Tensor& grad_output,
                                                       const at::Tensor& input,
                                                       const at::Tensor& grid, int64_t interp,
                                                       int64_t padding, bool align_corners,
                                                       std::array<bool, 2> output_mask) {
  checkGrid<Dims>(input, grid, interp);
  checkSameDevice({grad_output, input, grid});
  if (!nativeArgs(input, grid, interp, padding) ||
      grad_output.scalar_type() != input.scalar_type()) {
    auto r = runFallback(
        Dims == 2 ? "aten::grid_sampler_2d_backward" : "aten::grid_sampler_3d_backward", "",
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
      launchGrid(x, "grid_bwd_grid", g.N * g.OD * g.OH * g.OW, {grad_grid, go, x, gr}, g);
  }
  return {grad_input, grad_grid};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("grid_sampler_2d", TORCH_FN(gridSampler<2>));
  m.impl("grid_sampler_2d_backward", TORCH_FN(gridSamplerBackward<2>));
  m.impl("grid_sampler_3d", TORCH_FN(gridSampler<3>));
  m.impl("grid_sampler_3d_backward", TORCH_FN(gridSamplerBackward<3>));
}

}  // namespace torch_ocl::aten
