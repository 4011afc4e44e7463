"""Inductor config of the ocl backend; its values are part of Inductor's FX-graph cache key
(``device_custom_config``), so a cached graph is never reused across devices, drivers or
torch-ocl versions."""

import sys

from torch.utils._config_module import install_config_module

device_name: str = ""
driver_version: str = ""
platform: str = ""
torch_ocl_version: str = ""
# Hash of the code generator and the prelude: a changed generator never reuses a cached graph.
codegen_hash: str = ""

install_config_module(sys.modules[__name__])
