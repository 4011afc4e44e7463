// Kernels shared by the indexing ops (index.cpp, sort.cpp, pad.cpp): gather/scatter along one
// dimension with device-side index checks, read-modify-write accumulation (atomics), and strided
// copies with signed strides.
#pragma once

#include <ATen/core/Tensor.h>

#include "aten/device_check.h"

#include <string>

// Points one of ATen's dispatch stubs (at::native::<name>) at our kernel for PrivateUse1.
#define OCL_REGISTER_STUB(name, fn)                                                        \
  static at::native::RegisterPRIVATEUSE1Dispatch<at::native::name##_DECLARE_DISPATCH_type> \
      name##_ocl_registration(at::native::name, fn);

namespace torch_ocl::aten {

// How a gather/scatter element combines with its destination.
enum class GsMode : int {
  kGather,   // direct[p] = indexed[p | dim := index[p]]
  kScatter,  // indexed[p | dim := index[p]] = direct[p]
  kAdd,      // indexed[...] += direct[p] (atomic)
  kMul,      // *= (atomic)
  kMax,      // max, NaN propagating (atomic)
  kMin,      // min, NaN propagating (atomic)
};

// True when the device can run the mode for this dtype (read-modify-write modes need the
// dtype's atomics: 64-bit types need cl_khr_int64_base_atomics; complex has none yet).
bool gatherScatterSupported(GsMode mode, c10::ScalarType t, c10::DeviceIndex idx);

// One work item per element of `index` (int64, any strides; the iteration shape). `direct` is
// read or written at the same position; `indexed` at the position with `dim` replaced by the
// index value, which is checked against indexed.size(dim) on the device (negative values wrap
// when `wrap`). All three share dtype (direct/indexed) and device.
void launchGatherScatter(GsMode mode, CheckedOp op, const at::Tensor& direct,
                         const at::Tensor& index, const at::Tensor& indexed, int64_t dim,
                         bool wrap);

// Read-modify-write helper source for a dtype: defines `ocl_rmw(__global ST* p, CT v)`.
std::string rmwSource(GsMode mode, c10::ScalarType t);

// dst[i] = src[base + sum_k c_k * src_strides[k]] over dst's shape (element strides, may be
// negative); dst and src have the same dtype.
void launchStridedCopy(const at::Tensor& dst, const at::Tensor& src, int64_t src_base,
                       at::IntArrayRef src_strides);

// out (int64, contiguous, shape of `like`)[i] = element offset of element i of `like` from its
// first element (sum of coordinate * stride).
void launchElementOffsets(const at::Tensor& out, const at::Tensor& like);

}  // namespace torch_ocl::aten
