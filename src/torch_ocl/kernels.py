"""User OpenCL C kernels as Python callables and torch ops.

``compile_kernel(src)`` builds a program through the device's program cache (cached by source,
options and device; build errors carry the driver's log with the line numbers of ``src``) and
returns an object whose attributes are its kernels::

    lib = torch_ocl.compile_kernel('''
    __kernel void scale(__global const float* x, ulong x_off, __global float* out, ulong out_off,
                        float a, long n) {
      x = (__global const float*)((__global const char*)x + x_off);
      out = (__global float*)((__global char*)out + out_off);
      const long i = get_global_id(0);
      if (i < n) out[i] = a * x[i];
    }''')
    lib.scale(x, out, 2.0, n, global_size=(n,), local_size=None)

Every ``__global`` pointer parameter is followed by a ``ulong`` that receives the tensor's byte
offset (views of a storage are not at its start), or by a ``uint`` that receives its offset in
elements (``x += x_off``; 4 bytes of arguments instead of 8, checked at each launch to fit); a
call passes the tensor once. ``__local``
parameters take their size in bytes; scalars take Python numbers in the declared type. Launches
go on the current ocl stream; global sizes must be multiples of the local size when one is given.

``kernel_op`` wraps one kernel as a ``torch.library.custom_op`` (see its docstring).
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from . import _C


class Program:
    """A built OpenCL program; its kernels are attributes (``lib.name(*args, global_size=...)``)."""

    def __init__(self, source: str, options: str = "", prelude: bool = True, device=None):
        index = torch.device("ocl", 0 if device is None else torch.device(device).index or 0).index
        self._program = _C._Program(source, options, prelude, index)
        self._kernels: dict[str, object] = {}

    @property
    def kernel_names(self) -> list[str]:
        return list(self._program.kernel_names)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        kernels = self.__dict__.get("_kernels")
        if kernels is None:
            raise AttributeError(name)
        k = kernels.get(name)
        if k is None:
            k = kernels[name] = self._program.kernel(name)
        return k

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.kernel_names))


def compile_kernel(source: str, options: str = "", prelude: bool = True, device=None) -> Program:
    """Builds OpenCL C ``source`` for an ocl device (default ocl:0).

    ``options`` are extra build options (the device's ``-cl-std`` is added). With ``prelude``
    the torch-ocl prelude (bf16 helpers, ``ocl_exp_float``/``ocl_erf_float``, Philox) comes
    first; build-log line numbers stay those of ``source``.
    """
    return Program(source, options, prelude, device)


def kernel_op(
    name: str,
    source: str,
    *,
    kernel: str,
    out: Callable[..., torch.Tensor],
    grid: Callable[..., Sequence[int]],
    local: Callable[..., Sequence[int] | None] | None = None,
    args: Callable[..., Sequence] | None = None,
    options: str = "",
    schema: str | None = None,
    mutates_args=(),
):
    """Registers kernel ``kernel`` of ``source`` as the custom op ``name`` ("ns::op").

    The op's inputs are its Python parameters (tensors and numbers). ``out(*inputs)`` makes the
    output tensor (it also serves as the fake implementation, so it must only read metadata),
    ``grid(*inputs)`` gives the global size and ``local(*inputs)`` the local size (None: the
    driver picks). The kernel is called as ``kernel(*args(*inputs, out=result))`` where the default
    ``args`` passes the inputs followed by the output. Returns the op (a
    ``torch.library.CustomOpDef``): ``op.register_autograd(...)`` works, the op passes
    ``torch.library.opcheck`` and stays one node under ``torch.compile``. The schema comes from
    ``schema``, else from ``out``'s annotations, else from the kernel's parameters named like
    ``out``'s (tensors for ``__global`` pointers, float/int for scalars).
    """
    import inspect

    sig = inspect.signature(out)
    programs: dict[int, Program] = {}

    def run(*inputs):
        result = out(*inputs)
        index = result.device.index or 0
        prog = programs.get(index)
        if prog is None:
            prog = programs[index] = compile_kernel(source, options, device=f"ocl:{index}")
        launch_args = args(*inputs, out=result) if args is not None else (*inputs, result)
        getattr(prog, kernel)(
            *launch_args,
            global_size=tuple(grid(*inputs)),
            local_size=None if local is None else local(*inputs),
        )
        return result

    # custom_op infers the schema from annotations. Lambdas have none: then the types come from
    # the kernel's parameters of the same names (a __global pointer is a Tensor).
    params = list(sig.parameters)
    if schema is None:
        annotations = dict(getattr(out, "__annotations__", {}))
        missing = [p for p in params if p not in annotations]
        if missing:
            declared = dict(compile_kernel(source, options).__getattr__(kernel).params)
            for p in missing:
                kind = declared.get(p)
                if kind is None or kind == "local":
                    raise TypeError(
                        f"torch_ocl.kernel_op({name!r}): parameter {p!r} of `out` is not a "
                        f"parameter of kernel {kernel!r}; give schema= (e.g. '(Tensor x, "
                        "float a) -> Tensor') or annotate `out`"
                    )
                annotations[p] = (
                    torch.Tensor if kind == "tensor" else float if kind in ("float", "double") else int
                )
        run.__signature__ = sig.replace(
            parameters=[q.replace(annotation=annotations[q.name]) for q in sig.parameters.values()],
            return_annotation=torch.Tensor,
        )
        run.__annotations__ = {**{p: annotations[p] for p in params}, "return": torch.Tensor}
    else:
        run.__signature__ = sig
    op = torch.library.custom_op(
        name, run, mutates_args=mutates_args, device_types="ocl", schema=schema
    )

    def fake(*inputs):
        return out(*inputs)

    op.register_fake(fake)
    return op
