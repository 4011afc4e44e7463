// The matrix engine: one GEMM entry point over strided, batched operands, and the providers
// behind it, chosen per device, dtype and shape:
//   host_blas  a host BLAS (OpenBLAS, dlopen'ed privately) run as the device's own kernel through
//              clEnqueueNativeKernel on devices with host-unified memory and CL_EXEC_NATIVE_KERNEL
//              (PoCL): ordered on the stream, on the device's buffers, no copies (float,
//              double, and complex through cblas_cgemm / cblas_zgemm);
//   cpu_tile   our register-blocked OpenCL C kernel for CPU drivers (kernels/gemm_cpu.cl: 6x64
//              tiles of C in float16 vector accumulators; float32, float16, bfloat16);
//   clblast    CLBlast S/D/C/ZGEMM (tuned for many GPUs);
//   tiled      our generic local-memory kernel (kernels/gemm.cl): every real dtype, any strides.
// Complex operands with the conjugate bit are materialised on the device first. Every provider
// takes an epilogue (bias, relu, exact gelu): host_blas inside its native kernel, cpu_tile and
// tiled in the kernel's store, CLBlast by ops around the call. The choice follows, in order: a
// forced provider (TORCH_OCL_GEMM), the tuning table warmup measured (linalg/gemm_tuning.h), the
// built-in rule (gemmShapeRule).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <string>

namespace torch_ocl::aten {

enum class GemmProvider { kAuto, kHostBlas, kCpuTile, kClBlast, kTiled };

const char* gemmProviderName(GemmProvider p);
// "auto", "host_blas", "cpu_tile", "clblast", "tiled"; throws ValueError otherwise.
GemmProvider parseGemmProvider(const std::string& name);

// The activation an epilogue applies to each element of the result.
enum class GemmActivation {
  kNone,
  kRelu,
  kGelu /* exact (erf) gelu, as CPU's _addmm_activation */
};

// Work done on each element of C as it is stored, in the same launch: a bias (any tensor that
// broadcasts to out's sizes: a row vector, a column, a full matrix, a batch of them), scaled by
// bias_scale, then an activation. For float16/bfloat16 the value is rounded to the dtype before
// the activation, as CPU PyTorch rounds addmm's result before relu_/gelu_ runs on it.
struct GemmEpilogue {
  at::Tensor bias;  // undefined: none
  c10::Scalar bias_scale = 1;
  GemmActivation act = GemmActivation::kNone;
  // Defined (out's sizes, row-major rows): the activation is stored here and out keeps the value
  // before it (a training graph saves it for the activation's backward). One command on the host
  // BLAS; other providers run the activation as an op after the product.
  at::Tensor act_out;
  bool empty() const {
    return !bias.defined() && act == GemmActivation::kNone && !act_out.defined();
  }
};

// out ([batch x] n x m) = act(alpha * a @ b + beta * out + bias_scale * bias), with a
// ([batch x] n x k) and b ([batch x] k x m) of any strides (a batch stride of 0 broadcasts).
// beta == 0 ignores out's contents (NaN included); k == 0 gives act(beta * out + bias_scale *
// bias). All operands share out's dtype and device. relu needs a real dtype, gelu a floating one.
void gemm(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha,
          const c10::Scalar& beta, const GemmEpilogue& epilogue = {});

// out (n x m) = alpha * sum_i a[i] @ b[i] + beta * out, a (batch x n x k), b (batch x k x m): a
// GEMM whose inner dimension runs over the batch too (a convolution's weight gradient), without
// gathering the operands into one matrix first.
void gemmBatchSum(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                  const c10::Scalar& alpha, const c10::Scalar& beta);
// Whether gemmBatchSum runs these operands on cpu_tile, which sums the products in its
// accumulators in one launch (no products written, no separate sum).
bool gemmBatchSumInKernel(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b);

// Independent products outs[i] = a[i] @ b[i] (2-D, one dtype and device, outs fresh and
// overlapping no operand). Where the host BLAS takes them all (float32/float64 on a device with
// it, no other provider forced, at most 8 products), one native kernel runs them in turn: one
// command for the group, not one per product (a backward's input and weight gradients). Else each
// is a gemm call of its own. Returns whether they ran as one command.
bool gemmGroup(at::TensorList outs, at::TensorList a, at::TensorList b);

// Whether gemm runs this dtype natively (false: bool, for the caller's fallback).
bool gemmSupports(c10::ScalarType t);

// The provider gemm picks for (device, dtype) at a typical large shape, with the forced one
// applied.
GemmProvider gemmProviderFor(c10::DeviceIndex idx, c10::ScalarType t);
// A sentence on how the provider changes with the shape on this device ("" when it does not).
std::string gemmShapeRule(c10::DeviceIndex idx);
// Forces a provider where it supports the dtype and device (others keep the automatic choice):
// for tests and benchmarks. Initially from TORCH_OCL_GEMM (default auto).
void setForcedGemmProvider(GemmProvider p);
GemmProvider forcedGemmProvider();
// The provider the last gemm call on this thread ran (kAuto before any): lets tests check that a
// forced provider really ran.
GemmProvider lastGemmProvider();

// The host BLAS the host_blas provider calls: library path and its own configuration string, or
// why there is none.
struct HostBlasInfo {
  bool available = false;
  std::string library, config, error;
  int threads = 0;
  // OpenBLAS's name for the kernels it picked for this CPU ("Haswell", "SkylakeX"; empty when the
  // library does not say) and their vector width: 512 bits, 256 (at most 256: every other
  // OpenBLAS core), 0 when unknown.
  std::string corename;
  int vector_bits = 0;
};
HostBlasInfo hostBlasInfo();
// Whether the host BLAS's kernels are narrower than the device's own vectors (OpenBLAS's AVX2
// kernels on an AVX-512 CPU that PoCL compiles for with 16-float vectors): float32 products then
// run cpu_tile, which uses the device's full width (linalg/gemm.cpp, chooseProvider).
bool hostBlasNarrowerThanDevice(c10::DeviceIndex idx);
// -1: decide as above (initially, unless TORCH_OCL_GEMM_NARROW_BLAS is 0 or 1); 0 / 1: as if the
// BLAS were as wide as / narrower than the device.
void setHostBlasNarrowOverride(int mode);

}  // namespace torch_ocl::aten
