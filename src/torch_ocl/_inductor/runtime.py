"""What generated wrapper modules import: kernel loading through the C++ program cache."""

from __future__ import annotations

import functools
import math
import struct as _struct
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch

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


def assert_inputs(tensors: tuple, spec: tuple) -> None:
    """The input size/stride asserts of a generated graph, one call for all its inputs:
    ``spec[i]`` is the ``(size, stride)`` that ``tensors[i]`` was compiled for. The C++ check
    flags exactly what ``assert_size_stride`` rejects (sizes; strides of dimensions with more
    than one element; nothing for empty tensors); a flagged tensor goes through
    ``assert_size_stride`` itself, so that the error is PyTorch's own."""
    i = _assert_size_stride_all(tensors, spec)
    while i >= 0:
        size, stride = spec[i]
        _assert_size_stride(tensors[i], size, stride, "input")
        i = _assert_size_stride_all(tensors, spec, i + 1)


_assert_size_stride_all = _C._assert_size_stride_all
_assert_size_stride = torch._C._dynamo.guards.assert_size_stride


# The program name of generated kernels: the profiler's kernel rows read
# "inductor::ocl_red_fused_native_layer_norm_3".
_PROGRAM_NAME = "inductor"


def _build(source: str, name: str, device: int):
    return _C._Program(source, "", True, device, _PROGRAM_NAME).kernel(name)


@functools.cache
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="ocl-compile")


def async_compile_ocl(source: str, name: str, device: int = 0, shared: str | None = None):
    """Builds a generated program (the prelude comes from C++) and returns its kernel: a callable
    that binds tensors as (buffer, byte offset) and launches on the current stream.

    ``shared``: the helper functions every kernel of the module starts with. Such kernels are
    built together, one program per module (a few where there are many, one per compile
    thread), as Inductor's Metal backend compiles a module's shaders at ``wait()``: on PoCL each
    program pays ~0.3 s for the prelude and its builtin library, a kernel ~0.02 s (10 kernels:
    3.0-4.0 s as 10 programs, 0.2-0.3 s as one). It returns a placeholder that the module's
    ``ocl_wait_kernels(globals())`` (or Inductor's ``async_compile.wait``) swaps for the kernel.
    Otherwise, with Inductor's compile threads, it returns a Future of the kernel (its build runs
    in parallel with the others'), or the kernel itself."""
    if shared is not None and source.startswith(shared):
        return _open_batch(device, shared).add(name, source[len(shared):])
    from torch._inductor.async_compile import get_compile_threads

    threads = get_compile_threads()
    if threads > 1:
        return _pool(threads).submit(_build, source, name, device)
    return _build(source, name, device)


def wait_kernels(scope: dict) -> None:
    """Swaps the module's batched placeholders for their kernels (building each batch once)."""
    for key, value in list(scope.items()):
        if isinstance(value, _BatchedKernel):
            scope[key] = value.result()


# The batch that async_compile_ocl calls of the module being loaded join (one per thread: a
# module's kernel definitions run in one thread, one after the other).
_current = threading.local()

# Kernels per program before a batch is split over the compile threads.
_KERNELS_PER_PROGRAM = 8


def _open_batch(device: int, shared: str) -> "_Batch":
    batch = getattr(_current, "batch", None)
    if batch is None or batch.started or batch.device != device or batch.shared is not shared:
        batch = _current.batch = _Batch(device, shared)
    return batch


class _Batch:
    """The kernels of one generated module that share the helper prefix, built together."""

    def __init__(self, device: int, shared: str):
        self.device, self.shared = device, shared
        self.bodies: dict[str, str] = {}
        self.started = False
        self._lock = threading.Lock()
        self._chunks: list[tuple[list[str], Any]] = []  # (kernel names, future or result)

    def add(self, name: str, body: str) -> "_BatchedKernel":
        self.bodies[name] = body
        return _BatchedKernel(self, name)

    def _start(self) -> None:
        from torch._inductor.async_compile import get_compile_threads

        names = list(self.bodies)
        threads = get_compile_threads()
        pieces = max(1, min(threads, -(-len(names) // _KERNELS_PER_PROGRAM)))
        for i in range(pieces):
            chunk = names[i::pieces]
            if pieces > 1:
                self._chunks.append((chunk, _pool(threads).submit(self._build, chunk)))
            else:
                self._chunks.append((chunk, self._build(chunk)))
        self.started = True

    def _build(self, names: list[str]) -> dict:
        source = self.shared + "".join(self.bodies[n] for n in names)
        try:
            program = _C._Program(source, "", True, self.device, _PROGRAM_NAME)
            return {n: program.kernel(n) for n in names}
        except RuntimeError:
            # One kernel that does not build: build each alone, so that its own error (and
            # build log, with its own line numbers) is what the caller sees, and the others work.
            out = {}
            for n in names:
                try:
                    out[n] = _build(self.shared + self.bodies[n], n, self.device)
                except RuntimeError as e:
                    out[n] = e
            return out

    def kernel(self, name: str):
        with self._lock:
            if not self.started:
                self._start()
        for names, built in self._chunks:
            if name in names:
                got = (built.result() if hasattr(built, "result") else built)[name]
                if isinstance(got, Exception):
                    raise got
                return got
        raise KeyError(name)


class _BatchedKernel(Future):
    """A kernel of a batch: a Future, so that Inductor's ``async_compile.wait`` swaps it for the
    kernel too; callable, for a wrapper that launches it before any wait."""

    def __init__(self, batch: _Batch, name: str):
        super().__init__()
        self._batch, self._name = batch, name

    def result(self, timeout=None):
        return self._batch.kernel(self._name)

    def done(self) -> bool:
        return self._batch.started

    def __call__(self, *args, **kwargs):
        return self.result()(*args, **kwargs)
