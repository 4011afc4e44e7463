"""Inductor config of the ocl backend; its values are part of Inductor's FX-graph cache key
(``device_custom_config``), so a cached graph is never reused across devices, drivers or
torch-ocl versions."""

import sys

from torch.utils._config_module import install_config_module

device_name: str = ""
driver_version: str = ""
platform: str = ""
torch_ocl_version: str = ""
# Reductions on CPU drivers: one work item per row (True) or, as on GPUs, a work group per row
# with a __local tree (False; the tests run both forms on PoCL).
cpu_row_per_work_item: bool = True
# Hash of the code generator and the prelude: a changed generator never reuses a cached graph.
codegen_hash: str = ""

install_config_module(sys.modules[__name__])
