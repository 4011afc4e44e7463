"""``torch.ocl``: the device module, mirroring ``torch.cuda`` where OpenCL allows."""

from __future__ import annotations

import contextlib
from typing import Any, Optional, Union

import torch

from . import _C

_DeviceLike = Union[torch.device, str, int, None]


def _index(device: _DeviceLike = None, optional: bool = True) -> int:
    if device is None:
        return _C.current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "ocl":
            raise ValueError(f"Expected an ocl device, but got: {device}")
        return _C.current_device() if device.index is None else device.index
    raise TypeError(f"invalid device: {device!r}")


# ---- devices ---------------------------------------------------------------------------------


def is_available() -> bool:
    """True when at least one OpenCL device is usable."""
    return _C.device_count() > 0


def device_count() -> int:
    return _C.device_count()


def is_initialized() -> bool:
    return _C.is_initialized()


def _is_in_bad_fork() -> bool:
    return _C.is_in_bad_fork()


def init() -> None:
    """Initialises the current device (it happens lazily on first use anyway)."""
    _lazy_init()


def _lazy_init() -> None:
    if _C.device_count() == 0:
        raise RuntimeError(f"torch-ocl: {_C.discovery_error()}")
    _C.init(_C.current_device())


def current_device() -> int:
    return _C.current_device()


def set_device(device: _DeviceLike) -> None:
    idx = _index(device)
    if idx >= 0:
        _C.set_device(idx)


class device:
    """Context manager that changes the current ocl device."""

    def __init__(self, device: _DeviceLike):
        self.idx = _index(device) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _C.current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            _C.set_device(self.idx)

    def __exit__(self, *args):
        if self.idx >= 0 and self.idx != self.prev_idx:
            _C.set_device(self.prev_idx)
        return False


class device_of(device):
    """Sets the current device to that of a tensor (no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "ocl" else None)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits for all work on every stream of the device."""
    _C.synchronize(_index(device))


class _DeviceProperties:
    def __init__(self, props: dict):
        self.__dict__.update(props)

    def __repr__(self) -> str:
        return (
            f"_OclDeviceProperties(name='{self.name}', vendor='{self.vendor}', type={self.type}, "
            f"total_memory={self.total_memory // 2**20}MB, compute_units={self.compute_units}, "
            f"opencl_c_version='{self.opencl_c_version}', fp16={self.fp16}, fp64={self.fp64})"
        )


def get_device_properties(device: _DeviceLike = None) -> _DeviceProperties:
    return _DeviceProperties(_C.get_device_properties(_index(device)))


def get_device_name(device: _DeviceLike = None) -> str:
    return _C.get_device_properties(_index(device))["name"]


def get_device_capability(device: _DeviceLike = None) -> dict:
    p = _C.get_device_properties(_index(device))
    return {"fp16": p["fp16"], "fp64": p["fp64"], "bf16": p["bf16"]}


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 tensors work on every ocl device, stored as 16 bits with float arithmetic.

    No OpenCL device has native bf16 arithmetic, so ``including_emulation=False`` gives False.
    """
    return including_emulation and is_available()


def get_amp_supported_dtype() -> list[torch.dtype]:
    """Lower-precision dtypes ``torch.autocast("ocl")`` may cast to: float16 and bfloat16 are
    stored as 16 bits on every OpenCL device and computed in float where the device has no
    native half arithmetic."""
    return [torch.float16, torch.bfloat16]


# ---- streams and events --------------------------------------------------------------------


class Stream(torch.Stream):
    """An in-order OpenCL command queue. ``torch.ocl.Stream()`` takes one from the pool."""

    def __new__(cls, device: _DeviceLike = None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        with globals()["device"](device):
            return super().__new__(cls, device=torch.device("ocl", _C.current_device()),
                                   priority=priority)

    def wait_event(self, event: "Event") -> None:
        event.wait(self)

    def wait_stream(self, stream: torch.Stream) -> None:
        self.wait_event(stream.record_event())


class Event(torch.Event):
    """A marker on a stream; ``enable_timing=True`` allows ``elapsed_time``."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        return super().__new__(cls, device=torch.device("ocl", _C.current_device()),
                               enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)

    def elapsed_time(self, end_event: torch.Event) -> float:
        """Milliseconds from this event to ``end_event``; both recorded with timing and complete."""
        return _C.event_elapsed_time(self, end_event)


def current_stream(device: _DeviceLike = None) -> torch.Stream:
    return torch.accelerator.current_stream(_index(device))


def default_stream(device: _DeviceLike = None) -> torch.Stream:
    idx = _index(device)
    type_id = torch.accelerator.current_stream(idx).device_type
    return torch.Stream(stream_id=0, device_index=idx, device_type=type_id)


def set_stream(stream: torch.Stream) -> None:
    if stream is None:
        return
    torch.accelerator.set_stream(stream)


class StreamContext:
    """Makes ``stream`` current (and its device) inside the block."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self.prev_stream = None
        self.prev_device = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev_device = _C.current_device()
        if self.stream.device_index != self.prev_device:
            _C.set_device(self.stream.device_index)
        self.prev_stream = torch.accelerator.current_stream(self.stream.device_index)
        torch.accelerator.set_stream(self.stream)
        return self.stream

    def __exit__(self, *args):
        if self.stream is None:
            return False
        torch.accelerator.set_stream(self.prev_stream)
        _C.set_device(self.prev_device)
        return False


def stream(stream: Optional[torch.Stream]) -> StreamContext:
    return StreamContext(stream)


# ---- memory --------------------------------------------------------------------------------


def _mem_index(device: _DeviceLike) -> int:
    idx = _index(device)
    _C.init(idx)
    return idx


def memory_stats(device: _DeviceLike = None) -> dict[str, Any]:
    return torch.accelerator.memory.memory_stats(_mem_index(device))


def memory_allocated(device: _DeviceLike = None) -> int:
    return torch.accelerator.memory.memory_allocated(_mem_index(device))


def max_memory_allocated(device: _DeviceLike = None) -> int:
    return torch.accelerator.memory.max_memory_allocated(_mem_index(device))


def memory_reserved(device: _DeviceLike = None) -> int:
    return torch.accelerator.memory.memory_reserved(_mem_index(device))


def max_memory_reserved(device: _DeviceLike = None) -> int:
    return torch.accelerator.memory.max_memory_reserved(_mem_index(device))


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    torch.accelerator.memory.reset_peak_memory_stats(_mem_index(device))


def reset_accumulated_memory_stats(device: _DeviceLike = None) -> None:
    torch.accelerator.memory.reset_accumulated_memory_stats(_mem_index(device))


def empty_cache() -> None:
    """Releases every cached block that holds no tensor back to the OpenCL driver."""
    if _C.is_initialized():
        torch.accelerator.memory.empty_cache()


def mem_get_info(device: _DeviceLike = None) -> tuple[int, int]:
    """(free, total) bytes: total is the device's global memory, free what the allocator may
    still reserve under its limit (OpenCL has no query for the driver's free memory)."""
    return torch.accelerator.get_memory_info(_mem_index(device))


def set_per_process_memory_fraction(fraction: float, device: _DeviceLike = None) -> None:
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    idx = _mem_index(device)
    total = _C.get_device_properties(idx)["total_memory"]
    _C.set_memory_limit(idx, max(1, int(total * fraction)))


# ---- random numbers --------------------------------------------------------------------------


def _generator(device: _DeviceLike = None) -> torch.Generator:
    return _C.default_generator(_index(device))


def manual_seed(seed: int) -> None:
    """Seeds the current device's Philox generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        _C.default_generator(i).manual_seed(int(seed))


def seed() -> None:
    _generator().seed()


def seed_all() -> None:
    s = _generator().seed()
    for i in range(device_count()):
        _C.default_generator(i).manual_seed(s)


def initial_seed() -> int:
    return _generator().initial_seed()


# Not traced by Dynamo (as torch.cuda's, which live under torch/, are not): a compiled function that
# saves and restores the RNG state (torch.testing's freeze_rng_state, around every
# wrapper_set_seed OpInfo) would otherwise resume tracing inside these under no_dispatch(), which
# fake tensors refuse (an AssertionError at compile time).
@torch._disable_dynamo
def get_rng_state(device: _DeviceLike = "ocl") -> torch.Tensor:
    """16 bytes: the Philox seed and offset."""
    return _generator(device).get_state()


@torch._disable_dynamo
def set_rng_state(new_state: torch.Tensor, device: _DeviceLike = "ocl") -> None:
    _generator(device).set_state(new_state.clone())


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


class _DefaultGenerators:
    def __getitem__(self, i: int) -> torch.Generator:
        return _C.default_generator(i)

    def __len__(self) -> int:
        return device_count()


default_generators = _DefaultGenerators()


# Inductor finds a PrivateUse1 backend's code generators on its device module; handing them out
# lazily keeps `import torch` from loading Inductor (torch_ocl/_inductor registers everything,
# including the FX-cache config, on first use). No C++ wrapper: cpp_wrapper is not supported.
def __getattr__(name: str):
    if name == "Scheduling":
        from ._inductor import scheduling_class

        return scheduling_class()
    if name == "PythonWrapperCodegen":
        from ._inductor import wrapper_class

        return wrapper_class()
    raise AttributeError(f"module 'torch.ocl' has no attribute {name!r}")
