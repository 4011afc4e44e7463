// The matrix engine's tuning table: the provider measured fastest per (device, dtype, shape
// class), kept on disk (<cache dir>/gemm_tuning.tsv, the directory of the kernel cache:
// TORCH_OCL_CACHE_DIR, else $XDG_CACHE_HOME/torch_ocl, else ~/.cache/torch_ocl) and filled by
// `python -m torch_ocl warmup`. gemm() consults it unless a provider is forced (TORCH_OCL_GEMM)
// or TORCH_OCL_GEMM_TUNING=0; shapes of a class nobody measured keep the built-in shape rule.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "aten/gemm.h"

namespace torch_ocl::aten {

// Buckets of the result's rows and columns (<= 96, <= 768, more), of K (<= 96, <= 768, <= 2048,
// more), whether cpu_tile reads B in place, and the operands' transposition (A read transposed:
// unit row stride, as a linear's weight gradient x^T @ dy; B transposed, as x @ W^T): a number
// in [0, kGemmShapeClasses). Classes below 72 are the untransposed ones (the tables of earlier
// versions had only those).
constexpr int kGemmShapeClasses = 288;
int gemmShapeClass(int64_t rows, int64_t cols, int64_t k, bool b_in_place, bool a_trans = false,
                   bool b_trans = false);
// Whether a (rows x cols, any batch) operand is read transposed by the BLAS providers: unit row
// stride and not unit column stride (a row or a column vector is not).
bool gemmOperandTransposed(const at::Tensor& t);
// The class of a @ b on its device (B in place as cpu_tile would read it).
int gemmShapeClassOf(const at::Tensor& a, const at::Tensor& b);
// "rows<=96 cols<=768 k>2048 B in place" and the like.
std::string gemmShapeClassName(int cls);

// The identity a table entry is stored under: device name, driver version and platform.
std::string gemmDeviceKey(c10::DeviceIndex idx);
// Where the table lives (empty: no cache directory).
std::string gemmTuningPath();

// The tuned provider for this device, dtype and class, if one was measured.
std::optional<GemmProvider> gemmTunedProvider(c10::DeviceIndex idx, c10::ScalarType t, int cls);
// This device's entries: (dtype name, class) -> provider.
std::map<std::pair<std::string, int>, std::string> gemmTuningTable(c10::DeviceIndex idx);
// Whether gemm() consults the table (initially: TORCH_OCL_GEMM_TUNING is not 0).
void setGemmTuningEnabled(bool on);
bool gemmTuningEnabled();
// Reads the file again (after warmup wrote it); returns the number of entries for all devices.
int gemmTuningReload();

}  // namespace torch_ocl::aten
