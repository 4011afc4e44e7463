// Python bindings of the matrix engine: which provider each device uses (doctor), and forcing one
// (tests, benchmarks).
#include <torch/extension.h>

#include "aten/gemm.h"
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
  m.def("_gemm_shape_rule", [](int index) {
    return aten::gemmShapeRule(static_cast<c10::DeviceIndex>(index));
  });
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
  m.def("_host_blas_info", [] {
    const aten::HostBlasInfo info = aten::hostBlasInfo();
    py::dict d;
    d["available"] = info.available;
    d["library"] = info.library;
    d["config"] = info.config;
    d["threads"] = info.threads;
    d["error"] = info.error;
    return d;
  });
}

}  // namespace torch_ocl
