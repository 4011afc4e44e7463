"""How Inductor's wrapper sets the device and synchronises for ocl."""

from torch._inductor.codegen.common import DeviceOpOverrides


class OclDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"def {name}(idx): return 0  # ocl launches use the current stream"

    def set_device(self, device_idx: int) -> str:
        return f"torch.ocl.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.ocl.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.ocl.device({device_idx})"
