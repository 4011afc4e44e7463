// torch_ocl._C._distributed: the factory that torch_ocl.distributed's backend creator calls.
#include <torch/csrc/utils/pybind.h>

#include "distributed/backend.h"

namespace py = pybind11;

namespace torch_ocl {

void bindDistributed(py::module_& parent) {
  py::module_ m = parent.def_submodule("_distributed", "ocl_gloo c10d backend");
  m.def(
      "create_backend",
      [](py::object gloo, int rank, int size, double timeout_s) {
        // The ProcessGroupGloo that Python created; intrusive, so a new owning reference.
        auto* raw = gloo.cast<c10d::Backend*>();
        auto inner = c10::intrusive_ptr<c10d::Backend>::reclaim_copy(raw);
        auto ms = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0));
        return c10::intrusive_ptr<c10d::Backend>(
            c10::make_intrusive<distributed::OclBackend>(std::move(inner), rank, size, ms));
      },
      py::arg("gloo"), py::arg("rank"), py::arg("size"), py::arg("timeout"));
  m.def("stop_all", &distributed::OclBackend::stopAll, py::call_guard<py::gil_scoped_release>());
}

}  // namespace torch_ocl
