"""Factories on ocl against CPU PyTorch in strict mode: arange, linspace, logspace, eye, full,
ones, zeros and the *_like forms (which must reach fill_/empty natively)."""

import pytest
import torch

import torch_ocl
from conftest import fp64_supported

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if fp64_supported() else []
)
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]
TOL = {
    torch.float32: dict(rtol=1e-6, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
}


# CPU computes float16/bfloat16 linspace in that precision: (end - start), the step and each
# step * i are rounded to the dtype, which ocl reproduces. Its vectorised chunks of long ranges
# round step * i differently from its scalar path, so those may differ by one unit in the last
# place of the range's largest magnitude.
EPS = {torch.float16: 2**-10, torch.bfloat16: 2**-7}


def check(fn, reduced_precision_ulp=False):
    expected = fn("cpu")
    with torch_ocl.strict():
        got = fn("ocl")
    assert got.device.type == "ocl"
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    if reduced_precision_ulp and expected.dtype in EPS and expected.numel():
        ulp = 2 * EPS[expected.dtype] * expected.float().abs().max().item()
        torch.testing.assert_close(got, expected, rtol=0, atol=ulp)
        if expected.numel() <= 100:  # short ranges: CPU's scalar path, reproduced exactly
            assert torch.equal(got, expected), (got, expected)
    elif expected.dtype.is_floating_point:
        torch.testing.assert_close(got, expected, **TOL[expected.dtype])
    else:
        assert torch.equal(got, expected), (got, expected)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_arange(dtype):
    check(lambda d: torch.arange(0, 7, dtype=dtype, device=d))
    check(lambda d: torch.arange(5, 100, 3, dtype=dtype, device=d))
    if dtype != torch.uint8:
        check(lambda d: torch.arange(10, -10, -3, dtype=dtype, device=d))
    check(lambda d: torch.arange(0, dtype=dtype, device=d))


def test_arange_float_steps_and_default_dtypes():
    check(lambda d: torch.arange(0, 1, 0.1, device=d))
    check(lambda d: torch.arange(-1.5, 4099 * 0.25 - 1.5, 0.25, device=d))
    check(lambda d: torch.arange(10, device=d))  # int64
    check(lambda d: torch.arange(0.0, 10.0, device=d))  # default float dtype
    # out= with a wrong size is resized (and warns, as on CPU)
    out = torch.empty(3, device="ocl")
    with torch_ocl.strict():
        torch.arange(0, 10, out=out)
    assert torch.equal(out.cpu(), torch.arange(0, 10, dtype=torch.float32))


def test_arange_errors_like_cpu():
    for d in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            torch.arange(0, 10, 0, device=d)
        with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
            torch.arange(0, 10, -1, device=d)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_linspace_and_logspace(dtype):
    lo = 0 if dtype == torch.uint8 else -3  # CPU wraps uint8 ranges in its own way
    for steps in (0, 1, 2, 7, 1000, 4099):
        check(lambda d: torch.linspace(lo, 5, steps, dtype=dtype, device=d), True)
    check(lambda d: torch.linspace(10, 0, 11, dtype=dtype, device=d), True)
    check(lambda d: torch.linspace(4.3, lo, 50, dtype=dtype, device=d), True)
    for steps in (0, 1, 5, 100):
        if dtype.is_floating_point:
            check(lambda d: torch.logspace(-2, 2, steps, dtype=dtype, device=d), True)
            check(lambda d: torch.logspace(0, 3, steps, base=2.0, dtype=dtype, device=d), True)
        else:
            check(lambda d: torch.logspace(max(lo, -2), 4, steps, base=2, dtype=dtype, device=d))


def test_linspace_out_strided_and_errors():
    out = torch.empty(6, 2, device="ocl").t()
    with torch_ocl.strict():
        torch.linspace(0, 1, 6, out=out[0])
    torch.testing.assert_close(out[0].cpu(), torch.linspace(0, 1, 6))
    for d in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            torch.linspace(0, 1, -1, device=d)
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            torch.logspace(0, 1, -1, device=d)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_eye(dtype):
    check(lambda d: torch.eye(5, dtype=dtype, device=d))
    check(lambda d: torch.eye(3, 7, dtype=dtype, device=d))
    check(lambda d: torch.eye(7, 3, dtype=dtype, device=d))
    check(lambda d: torch.eye(0, dtype=dtype, device=d))
    check(lambda d: torch.eye(1, 0, dtype=dtype, device=d))


def test_eye_errors_like_cpu():
    for d in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
            torch.eye(-1, device=d)
        with pytest.raises(RuntimeError, match="m must be greater or equal to 0"):
            torch.eye(2, -3, device=d)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_full_ones_zeros_and_like(dtype):
    value = True if dtype == torch.bool else 3
    check(lambda d: torch.full((4, 1000), value, dtype=dtype, device=d))
    check(lambda d: torch.ones(7, dtype=dtype, device=d))
    check(lambda d: torch.zeros(4099, dtype=dtype, device=d))
    check(lambda d: torch.zeros(0, 3, dtype=dtype, device=d))
    base = torch.empty(5, 3, dtype=dtype)
    for fn in (torch.ones_like, torch.zeros_like, lambda t: torch.full_like(t, value)):
        check(lambda d: fn(base.to(d)))
        check(lambda d: fn(base.to(d).t()))
    check(lambda d: torch.empty_like(base.to(d)).fill_(value))
