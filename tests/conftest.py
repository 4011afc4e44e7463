"""Shared helpers for the torch-ocl test suite.

Tiers (as in PyTorch's OpenReg tests): device and runtime (test_device, test_memory, test_streams,
test_rng), data movement (test_copy, test_serialization), integration (test_fallback,
test_autoload, test_fork, test_program_cache). Every numeric check compares against PyTorch's CPU
result on the same inputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

OCL_AVAILABLE = hasattr(torch, "ocl") and torch.ocl.is_available()


def _skip_reason() -> str:
    if not hasattr(torch, "ocl"):
        return "torch-ocl is not installed (torch.ocl missing)"
    try:
        import torch_ocl

        return f"no OpenCL device: {torch_ocl._C.discovery_error()}"
    except Exception as e:  # pragma: no cover - only without a device
        return f"no OpenCL device ({e})"


def pytest_collection_modifyitems(config, items):
    if OCL_AVAILABLE:
        return
    skip = pytest.mark.skip(reason=_skip_reason())
    for item in items:
        item.add_marker(skip)


# Every dtype the ocl device stores. float64/complex128 need cl_khr_fp64 (PoCL has it).
ALL_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]


def fp64_supported() -> bool:
    return OCL_AVAILABLE and torch.ocl.get_device_properties(0).fp64


def dtypes_for_device() -> list[torch.dtype]:
    if fp64_supported():
        return list(ALL_DTYPES)
    return [d for d in ALL_DTYPES if d not in (torch.float64, torch.complex128)]


def make_cpu(shape, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """Deterministic CPU data of any dtype: small integers, signed where the dtype is, and
    fractional values for floating types (exactly representable in float16/bfloat16)."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.bool:
        return (torch.randint(0, 2, (n,), generator=g) == 1).reshape(shape)
    if dtype == torch.uint8:
        return torch.randint(0, 256, (n,), generator=g, dtype=torch.int64).to(dtype).reshape(shape)
    if dtype.is_complex:
        real = torch.randint(-64, 64, (n, 2), generator=g).to(torch.float64) / 4
        return torch.view_as_complex(real).to(dtype).reshape(shape)
    if dtype.is_floating_point:
        vals = torch.randint(-512, 512, (n,), generator=g).to(torch.float64) / 8
        return vals.to(dtype).reshape(shape)
    lo, hi = {
        torch.int8: (-128, 128),
        torch.int16: (-30000, 30000),
        torch.int32: (-(2**31), 2**31 - 1),
        torch.int64: (-(2**62), 2**62),
    }[dtype]
    return torch.randint(lo, hi, (n,), generator=g, dtype=torch.int64).to(dtype).reshape(shape)


def assert_same(actual: torch.Tensor, expected: torch.Tensor, device_type: str = "ocl") -> None:
    """actual (on `device_type`) holds exactly expected (a CPU tensor): dtype, shape and values."""
    assert isinstance(actual, torch.Tensor)
    assert actual.device.type == device_type, f"expected an {device_type} tensor, got {actual.device}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    host = actual.cpu() if actual.device.type != "cpu" else actual
    torch.testing.assert_close(host, expected, rtol=0, atol=0, equal_nan=True)


def run_py(code: str, env: dict | None = None, timeout: float = 180) -> tuple[int, str, str]:
    """Runs `code` in a fresh interpreter (the one running the tests).

    env adds to (a value of None removes from) the current environment. Returns
    (returncode, stdout, stderr).
    """
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout, proc.stderr


TWO_DEVICES = {"POCL_DEVICES": "pthread pthread", "TORCH_OCL_DEVICES": None}


def run_ok(code: str, env: dict | None = None, timeout: float = 180) -> str:
    """run_py that must succeed; returns stdout (stderr is shown on failure)."""
    rc, out, err = run_py(code, env, timeout)
    assert rc == 0, f"subprocess failed with rc={rc}\n--- stdout ---\n{out}\n--- stderr ---\n{err}"
    return out


@pytest.fixture
def ocl() -> torch.device:
    return torch.device("ocl")


@pytest.fixture
def fresh_dynamo():
    """Seed 0 and a reset Dynamo before and after the test (the compile tests use it for all)."""
    torch.manual_seed(0)
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def restore_ocl_rng():
    """The ocl generator's state as it was before the test (the random tests reseed it)."""
    state = torch.ocl.get_rng_state()
    yield
    torch.ocl.set_rng_state(state)


def native(fn):
    """fn() in strict mode: a hidden CPU fallback fails the test."""
    import torch_ocl

    with torch_ocl.strict():
        return fn()
