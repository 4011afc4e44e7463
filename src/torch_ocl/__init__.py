"""torch-ocl: a native PyTorch device for every OpenCL accelerator.

Importing this package (PyTorch does it for you through the ``torch.backends`` entry point)
registers the ``ocl`` device: ``torch.device("ocl")``, ``tensor.to("ocl")``, ``torch.ocl`` and
``torch.accelerator``.
"""


def _autoload() -> None:
    """Entry point of the ``torch.backends`` group: importing the package did everything.

    Defined before ``import torch``: when ``import torch_ocl`` comes first, torch's backend
    autoload looks this up on the still partially initialised package.
    """


import torch  # noqa: E402

from . import _C  # noqa: E402, F401  (registers the device guard, allocators, hooks and kernels)

__version__ = "0.1.0"


def _register() -> None:
    if torch._C._get_privateuse1_backend_name() != "ocl":
        torch.utils.rename_privateuse1_backend("ocl")
    from . import device as _device_module

    if not hasattr(torch, "ocl"):
        torch._register_device_module("ocl", _device_module)
    if not hasattr(torch.Tensor, "is_ocl"):
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
        )


_register()


def _register_dynamo() -> None:
    from ._inductor import register_dynamo

    register_dynamo()


def _install_compile_hook() -> None:
    """Registers the torch.compile side (Dynamo device interface, ``backend="ocl"``) when
    ``torch._dynamo`` is first imported, so that ``import torch`` stays fast."""
    from ._import_hook import call_after_import

    call_after_import("torch._dynamo", _register_dynamo)


_install_compile_hook()


def _register_distributed() -> None:
    """Registers the ``ocl_gloo`` c10d backend for ``ocl`` tensors (names only: nothing is
    created until a process group is; see torch_ocl/distributed/_registration.py)."""
    from .distributed._registration import register

    register()


_register_distributed()


def _accelerate_from_env() -> None:
    """TORCH_OCL_ACCELERATE=1: the opt-in Hugging Face accelerate integration
    (torch_ocl/integrations/accelerate.py) is applied when accelerate is imported."""
    import os

    if os.environ.get("TORCH_OCL_ACCELERATE", "0") not in ("", "0"):
        from .integrations.accelerate import _enable_from_env

        _enable_from_env()


_accelerate_from_env()

def _drain_autograd_threads_at_exit() -> None:
    """Waits, before the interpreter finalises, until PyTorch's autograd device threads have
    released the last backward's graph task (csrc/integration/autograd_thread.h): a device
    thread that drops its Python objects during finalisation aborts the process."""
    why = _C._drain_autograd_threads(_AUTOGRAD_EXIT_WAIT_S)
    if why == "timeout" or why.startswith("error"):
        import sys

        print(f"torch-ocl: at exit, the autograd device threads were not drained ({why}); "
              "the process may abort", file=sys.stderr)


_AUTOGRAD_EXIT_WAIT_S = 10.0


def _register_exit_drain() -> None:
    import atexit

    atexit.register(_drain_autograd_threads_at_exit)


_register_exit_drain()

from . import _nn_policies  # noqa: E402

_nn_policies.install()

from ._debug import debug_mode  # noqa: E402
from ._fallback import fallback_report, reset_fallback_report, strict  # noqa: E402
from .kernels import compile_kernel, kernel_op  # noqa: E402
from .device import (  # noqa: E402
    device_count,
    get_device_name,
    get_device_properties,
    is_available,
)


__all__ = [
    "compile_kernel",
    "debug_mode",
    "device_count",
    "fallback_report",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "kernel_op",
    "reset_fallback_report",
    "strict",
]
