// Python bindings of the matrix engine: which provider each device uses (doctor), and forcing one
// (tests, benchmarks).
#include <torch/extension.h>

#include "aten/gemm.h"
#include "aten/linalg/gemm_tuning.h"
#include "aten/nn/attention.h"
#include "integration/state.h"

#include <string>

namespace py = pybind11;

namespace torch_ocl {

void bindGemm(py::module_& m) {
  // {dtype name: provider} for one device, the forced provider applied.
  m.def("_gemm_providers", [](int index) {
    py::dict d;
    const auto idx = static_cast<c10::DeviceIndex>(index);
    device(idx);  // checks the index
    for (c10::ScalarType t : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kInt}) {
      if (t == at::kDouble && !device(idx).info().fp64) continue;
      d[c10::toString(t)] = aten::gemmProviderName(aten::gemmProviderFor(idx, t));
    }
    return d;
  });
  m.def("_gemm_shape_rule",
        [](int index) { return aten::gemmShapeRule(static_cast<c10::DeviceIndex>(index)); });
  m.def("_gemm_device_caps", [](int index) {
    const rt::DeviceInfo& info = device(static_cast<c10::DeviceIndex>(index)).info();
    py::dict d;
    d["native_kernel"] = info.native_kernel;
    d["host_unified_memory"] = info.host_unified_memory;
    return d;
  });
  m.def("_set_gemm_provider", [](const std::string& name) {
    aten::setForcedGemmProvider(aten::parseGemmProvider(name));
  });
  m.def("_forced_gemm_provider",
        [] { return std::string(aten::gemmProviderName(aten::forcedGemmProvider())); });
  m.def("_last_gemm_provider",
        [] { return std::string(aten::gemmProviderName(aten::lastGemmProvider())); });
  // The tuning table (warmup fills it): shape classes, the file, this device's entries.
  m.def("_gemm_shape_class_of",
        [](const at::Tensor& a, const at::Tensor& b) { return aten::gemmShapeClassOf(a, b); });
  m.def("_gemm_shape_class_name", [](int cls) { return aten::gemmShapeClassName(cls); });
  m.def("_gemm_device_key",
        [](int index) { return aten::gemmDeviceKey(static_cast<c10::DeviceIndex>(index)); });
  m.def("_gemm_tuning_path", [] { return aten::gemmTuningPath(); });
  m.def("_gemm_tuning_reload", [] { return aten::gemmTuningReload(); });
  m.def("_set_gemm_tuning_enabled", [](bool on) { aten::setGemmTuningEnabled(on); });
  m.def("_gemm_tuning_enabled", [] { return aten::gemmTuningEnabled(); });
  m.def("_gemm_tuning_table", [](int index) {
    py::list out;
    for (const auto& [k, p] : aten::gemmTuningTable(static_cast<c10::DeviceIndex>(index)))
      out.append(py::make_tuple(k.first, k.second, p));
    return out;
  });
  m.def("_host_blas_info", [] {
    const aten::HostBlasInfo info = aten::hostBlasInfo();
    py::dict d;
    d["available"] = info.available;
    d["library"] = info.library;
    d["config"] = info.config;
    d["threads"] = info.threads;
    d["error"] = info.error;
    d["corename"] = info.corename;
    d["vector_bits"] = info.vector_bits;
    return d;
  });
  m.def("_host_blas_narrower_than_device", [](int index) {
    return aten::hostBlasNarrowerThanDevice(static_cast<c10::DeviceIndex>(index));
  });
  m.def("_set_host_blas_narrow_override", [](int mode) { aten::setHostBlasNarrowOverride(mode); });
  // Attention on the matrix engine: from this much work (B * H * L * S * head dim) on, eager
  // SDPA on CPU drivers takes the math path (batched products); 0: always the fused kernels.
  m.def("_set_sdpa_gemm_min_work", [](int64_t work) { return aten::setSdpaGemmMinWork(work); });
  m.def("_sdpa_gemm_min_work", [] { return aten::sdpaGemmMinWork(); });
  // The float16 attention kernels on CPU drivers (attention_vec.cl); returns the old setting.
  m.def("_set_sdpa_vector", [](bool on) { return aten::setSdpaVector(on); });
}

}  // namespace torch_ocl
