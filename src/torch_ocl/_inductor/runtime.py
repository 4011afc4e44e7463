"""What generated wrapper modules import: kernel loading through the C++ program cache."""

from __future__ import annotations

import functools
import math
import struct as _struct
from concurrent.futures import ThreadPoolExecutor

from .. import _C


def pow_f32(a: float, b: float) -> float:
    """float32 ``a ** b`` of the generated kernels (ocl_pow_float), computed once by the
    wrapper where both operands are the same for every work item: the operands rounded to
    float32, the power in double (the argument binding rounds it to float), IEEE results where
    Python's math.pow raises.

    Cached: a compiled optimizer step computes the same bias corrections (``beta ** step``) once
    per parameter, ~1 us each uncached. Zeros are not cached (0.0 and -0.0 are one key)."""
    if a == 0 or b == 0:
        return _pow_f32(a, b)
    return _pow_f32_cached(a, b)


def _pow_f32(a: float, b: float) -> float:
    a = _f32(a)
    b = _f32(b)
    odd = math.isfinite(b) and b == int(b) and int(b) % 2 == 1
    try:
        return math.pow(a, b)
    except OverflowError:  # |result| beyond double: +-inf, negative only for an odd power
        return -math.inf if (a < 0 and odd) else math.inf
    except ValueError:  # 0 ** negative (+-inf), negative ** non-integral (nan)
        if a == 0:
            return -math.inf if (math.copysign(1.0, a) < 0 and odd) else math.inf
        return math.nan


_pow_f32_cached = functools.lru_cache(maxsize=4096)(_pow_f32)


def _f32(x: float) -> float:
    try:
        return _struct.unpack("f", _struct.pack("f", x))[0]
    except OverflowError:  # finite beyond float's range: rounds to infinity
        return math.copysign(math.inf, x)


def _build(source: str, name: str, device: int):
    return _C._Program(source, "", True, device, name).kernel(name)


@functools.cache
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="ocl-compile")


def async_compile_ocl(source: str, name: str, device: int = 0):
    """Builds a generated program (the prelude comes from C++) and returns its kernel: a callable
    that binds tensors as (buffer, byte offset) and launches on the current stream.

    With Inductor's compile threads, it returns a Future instead; the wrapper's
    ``async_compile.wait(globals())`` swaps it for the kernel, so the kernels of a graph build in
    parallel (builds release the GIL)."""
    from torch._inductor.async_compile import get_compile_threads

    threads = get_compile_threads()
    if threads > 1:
        return _pool(threads).submit(_build, source, name, device)
    return _build(source, name, device)
