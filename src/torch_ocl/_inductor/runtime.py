"""What generated wrapper modules import: kernel loading through the C++ program cache."""

from __future__ import annotations

from .. import _C


def async_compile_ocl(source: str, name: str, device: int = 0):
    """Builds the generated program (the prelude comes from C++) and returns its kernel: a
    callable that binds tensors as (buffer, byte offset) and launches on the current stream."""
    return _C._Program(source, "", True, device, name).kernel(name)
