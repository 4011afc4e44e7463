"""The Dynamo/Inductor device interface of ``ocl``."""

from __future__ import annotations

from collections import namedtuple

import torch
from torch._dynamo.device_interface import DeviceInterface

OclDeviceProperties = namedtuple(
    "OclDeviceProperties",
    ["name", "type", "multi_processor_count", "total_memory", "max_work_group_size", "warp_size"],
)


def _index(device) -> int:
    if device is None:
        return torch.ocl.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    return torch.ocl.current_device() if d.index is None else d.index


def _properties(device=None) -> OclDeviceProperties:
    from .. import _C

    p = _C.get_device_properties(_index(device))
    return OclDeviceProperties(
        name=p["name"],
        type="ocl",
        multi_processor_count=p["compute_units"],
        total_memory=p["total_memory"],
        max_work_group_size=p["max_work_group_size"],
        warp_size=1 if p["type"] == "CPU" else 32,
    )


class OclInterface(DeviceInterface):
    device = torch.ocl.device  # type: ignore[assignment]
    Event = torch.ocl.Event  # type: ignore[assignment]
    Stream = torch.ocl.Stream  # type: ignore[assignment]

    class Worker:
        @staticmethod
        def set_device(device: int) -> None:
            torch.ocl.set_device(device)

        @staticmethod
        def current_device() -> int:
            return torch.ocl.current_device()

        @staticmethod
        def get_device_properties(device=None):
            return _properties(device)

    current_device = staticmethod(torch.ocl.current_device)
    set_device = staticmethod(torch.ocl.set_device)
    device_count = staticmethod(torch.ocl.device_count)
    is_available = staticmethod(torch.ocl.is_available)
    stream = staticmethod(torch.ocl.stream)
    current_stream = staticmethod(torch.ocl.current_stream)
    set_stream = staticmethod(torch.ocl.set_stream)
    synchronize = staticmethod(torch.ocl.synchronize)

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        previous = torch.ocl.current_device()
        if device != previous:
            torch.ocl.set_device(device)
        return previous

    exchange_device = maybe_exchange_device

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        return 0  # launches take the current stream themselves

    @classmethod
    def get_device_properties(cls, device=None):
        return _properties(device)

    @staticmethod
    def get_compute_capability(device=None) -> str:
        return ""

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True  # a storage type with float arithmetic

    @staticmethod
    def is_dtype_supported(dtype: torch.dtype, including_emulation: bool = False) -> bool:
        if dtype == torch.float64:
            return bool(_properties().type and torch.ocl.get_device_properties().fp64)
        return dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
                         torch.int16, torch.int32, torch.int64, torch.bool)

    @staticmethod
    def memory_allocated(device=None) -> int:
        return torch.ocl.memory_allocated(device)

    @staticmethod
    def is_triton_capable(device=None) -> bool:
        return False

    @staticmethod
    def raise_if_triton_unavailable(device=None) -> None:
        raise RuntimeError("ocl generates OpenCL C, not Triton")
