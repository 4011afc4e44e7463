// uint8 bilinear and bicubic (and antialiased) 2-d resampling as CPU PyTorch computes it.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_ocl::aten {

// dst (N, C, OH, OW) uint8 from src (N, C, H, W) uint8: CPU's separable int16 fixed-point path
// (horizontal pass, then vertical; weights and indices computed on the host in double exactly
// as its _compute_index_ranges_int16_weights). cubic: bicubic (A = -0.75, or -0.5 with aa).
void resampleUint8(const at::Tensor& src, const at::Tensor& dst, bool cubic, bool antialias,
                   bool align_corners, std::optional<double> scale_h,
                   std::optional<double> scale_w);

}  // namespace torch_ocl::aten
