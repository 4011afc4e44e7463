"""Debug mode: every kernel launch waits for the device (like ``CUDA_LAUNCH_BLOCKING=1``)."""

import contextlib

from . import _C


@contextlib.contextmanager
def debug_mode(enabled: bool = True):
    """Within the block, each kernel launch waits for its queue and checks the device-side index
    records, so a driver error or an out-of-range index raises at the op that caused it, with
    that op's name (slow: for debugging). ``TORCH_OCL_LAUNCH_BLOCKING=1`` turns it on for the
    whole process."""
    previous = _C.is_launch_blocking()
    _C.set_launch_blocking(enabled)
    try:
        yield
    finally:
        _C.set_launch_blocking(previous)
