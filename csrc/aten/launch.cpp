#include "aten/launch.h"

#include <algorithm>

namespace torch_ocl::aten {

void launch1D(rt::Device& dev, cl_command_queue queue, cl_kernel kernel, int64_t n) {
  if (n <= 0) return;
  const size_t local = std::min<size_t>(256, dev.info().max_work_group_size);
  // One work item per element: PoCL vectorises across work items, and a grid-stride loop
  // measured 4x slower there (benchmarks/runtime.py, raw fill kernel); GPUs do not mind.
  const size_t global = (static_cast<size_t>(n) + local - 1) / local * local;
  OCL_CHECK(
      clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
}

OclStrides2 stridesOf(const at::TensorIteratorBase& iter) {
  TORCH_CHECK(iter.ndim() <= kMaxDims, "torch-ocl: tensors that keep ", iter.ndim(),
              " dimensions after coalescing are not supported yet (at most ", kMaxDims, ")");
  OclStrides2 s{};
  for (int d = 0; d < iter.ndim(); ++d) {
    s.sizes[d] = iter.shape()[d];
    for (int a = 0; a < std::min(iter.ntensors(), 2); ++a) s.strides[a][d] = iter.strides(a)[d];
  }
  return s;
}

std::string withPrelude(const std::string& body) {
  return std::string(kernels::source("prelude.cl")) + "\n" + body;
}

}  // namespace torch_ocl::aten
