// scaled_dot_product_attention's backend choice on ocl (attention.cpp).
#pragma once

#include <cstdint>

namespace torch_ocl::aten {

// On CPU drivers, attention calls of at least this much work (batch * heads * L * S * head
// dim) take PyTorch's math path (batched products on the matrix engine around a softmax) when
// their scores fit kSdpaMathMaxBytes; smaller calls keep the fused kernels. 0 or less: always
// the fused kernels. TORCH_OCL_SDPA_GEMM_MIN_WORK sets it; returns the previous value.
int64_t setSdpaGemmMinWork(int64_t work);
int64_t sdpaGemmMinWork();
// Whether float32 attention on CPU drivers runs the float16 kernels of attention_vec.cl (default
// on; TORCH_OCL_SDPA_VECTOR=0 turns them off); returns the previous value.
bool setSdpaVector(bool on);

}  // namespace torch_ocl::aten
