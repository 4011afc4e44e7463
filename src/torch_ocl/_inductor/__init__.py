"""The torch.compile backend of ``ocl``: Inductor with OpenCL C kernel generation.

Nothing here is imported by ``import torch``/``import torch_ocl``: ``torch_ocl`` installs an
import hook that calls :func:`register_dynamo` once ``torch._dynamo`` is imported (device
interface, ``backend="ocl"``), and Inductor asks ``torch.ocl`` for its Scheduling class, which
calls :func:`register_inductor`.
"""

from __future__ import annotations

import functools


@functools.cache
def register_dynamo() -> None:
    import torch
    from torch._dynamo.backends.registry import register_backend
    from torch._dynamo.device_interface import register_interface_for_device

    from .device_interface import OclInterface

    register_interface_for_device("ocl", OclInterface)
    for i in range(torch.ocl.device_count()):
        register_interface_for_device(f"ocl:{i}", OclInterface)

    def ocl_backend(gm, example_inputs, **kwargs):
        from torch._inductor.compile_fx import compile_fx

        return compile_fx(gm, example_inputs, **kwargs)

    ocl_backend.__name__ = "ocl"
    register_backend(ocl_backend, name="ocl")
    # Before AOTAutograd traces the first graph (register_inductor comes later, at codegen).
    from .attention import register_when_inductor_loads

    register_when_inductor_loads()
    # Pre-grad rewrites (arange-indexed embeddings) run on the Dynamo graph, before AOTAutograd.
    from .lowering import register_pre_grad_pass

    register_pre_grad_pass()
    # mode="reduce-overhead": compiled ocl graphs replay as captured graphs (graphs.py).
    from .graphs import install_when_inductor_loads

    install_when_inductor_loads()


def _codegen_hash() -> str:
    import hashlib
    import pathlib

    from .. import _C

    h = hashlib.sha256(_C._prelude_source().encode())
    here = pathlib.Path(__file__).parent
    for name in ("__init__.py", "codegen.py", "opencl.py", "runtime.py", "device_op_overrides.py",
                 "lowering.py", "attention.py", "combo.py"):  # not graphs.py: it wraps compiled graphs after the cache
        h.update((here / name).read_bytes())
    return h.hexdigest()


class _NoCppWrapper:
    """Inductor's C++ wrapper (``cpp_wrapper=True``, AOTInductor's
    ``aoti_compile_and_package``) for ocl graphs: not built yet. Registered so that asking for it
    says so, instead of Inductor's bare "Device ocl not supported"."""

    supports_caching = False  # read before the graph is lowered (compile_fx)

    @staticmethod
    def create(*args, **kwargs):
        raise NotImplementedError(
            "torch-ocl: Inductor's C++ wrapper is not supported on ocl yet, so neither "
            "AOTInductor (torch._inductor.aoti_compile_and_package / aot_compile) nor "
            "torch.compile(..., options={'cpp_wrapper': True}) can compile ocl graphs. "
            "torch.compile with the default Python wrapper works (an exported program: "
            "torch.compile(ep.module()))."
        )


@functools.cache
def register_inductor() -> None:
    from torch._inductor.codegen.common import (
        register_backend_for_device,
        register_device_op_overrides,
    )

    from .. import __version__, _C
    from . import config
    from .codegen import OclScheduling, OclWrapperCodegen
    from .device_op_overrides import OclDeviceOpOverrides

    register_dynamo()
    p = _C.get_device_properties(0) if _C.device_count() else {}
    config.device_name = p.get("name", "")
    config.driver_version = p.get("driver_version", "")
    config.platform = f"{p.get('platform_name', '')} {p.get('platform_version', '')}"
    config.torch_ocl_version = __version__
    config.codegen_hash = _codegen_hash()
    config.sdpa_gemm_min_work = _C._sdpa_gemm_min_work()
    register_backend_for_device(
        "ocl", OclScheduling, OclWrapperCodegen, device_cpp_wrapper_codegen=_NoCppWrapper,
        device_custom_config=config
    )
    register_device_op_overrides("ocl", OclDeviceOpOverrides())
    # Horizontal fusion: independent small kernels of one graph (the per-tensor copies of a
    # stack, a backward's bias and weight sums) run as one combo kernel (codegen_combo_kernel).
    # Inductor leaves CPU (and MPS) nodes out of these groups, so CPU graphs compile as before.
    import torch._inductor.config as inductor_config

    inductor_config.combo_kernels = True
    # Groups may be long: codegen_combo_kernel splits them by the device's argument-size limit.
    inductor_config.combo_kernel_max_num_nodes = max(inductor_config.combo_kernel_max_num_nodes, 64)
    # ... and a node that nothing needs until later (a bias gradient, a zero fill) joins a later
    # group instead of launching on its own (combo.py).
    from .combo import install as install_combo_grouping

    install_combo_grouping()
    _fall_back_where_no_opencl_c()
    from .lowering import (register_avg_pool_backward, register_post_grad_pass,
                           register_small_mm, register_uniform_pow)

    register_small_mm()
    register_avg_pool_backward()
    register_uniform_pow()
    register_post_grad_pass()


def _fall_back_where_no_opencl_c() -> None:
    """ATen ops whose Inductor lowering needs an op the OpenCL C table lacks (erfinv, digamma,
    Bessel functions...) become calls of the eager kernel on ocl inputs, as Inductor does for
    ops it cannot lower; other devices keep Inductor's lowering."""
    import torch
    from torch._inductor import ir
    from torch._inductor.lowering import fallback_handler, lowerings

    from .opencl import OclOverrides

    missing = {
        name
        for name, fn in vars(OclOverrides).items()
        if getattr(getattr(fn, "__func__", fn), "is_unimplemented", False)
    }

    def on_ocl(args, kwargs) -> bool:
        for a in torch.utils._pytree.tree_leaves((args, kwargs)):
            if isinstance(a, ir.IRNode):
                d = a.get_device()
                if d is not None and d.type == "ocl":
                    return True
        return False

    for op in list(lowerings):
        if not isinstance(op, torch._ops.OpOverload):
            continue
        base = op._schema.name.split("::")[-1].removeprefix("special_")
        if base not in missing or getattr(lowerings[op], "_ocl_wrapped", False):
            continue
        original, eager = lowerings[op], fallback_handler(op, add_to_fallback_set=False)

        def lowering(*args, _original=original, _eager=eager, **kwargs):
            return (_eager if on_ocl(args, kwargs) else _original)(*args, **kwargs)

        lowering._ocl_wrapped = True
        lowerings[op] = lowering


def scheduling_class():
    register_inductor()
    from .codegen import OclScheduling

    return OclScheduling


def wrapper_class():
    register_inductor()
    from .codegen import OclWrapperCodegen

    return OclWrapperCodegen
