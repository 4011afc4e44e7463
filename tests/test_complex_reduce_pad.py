"""Native complex vector norms (every ord; real results), linalg.norm/matrix_norm, var/std
(+ _mean; E|x - mean|^2), logsumexp, and reflection/replication padding (forward and backward,
so stft with center=True) against CPU PyTorch on the same inputs, in strict mode: any CPU
fallback fails the test."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import fp64_supported

DTYPES = [torch.complex64] + ([torch.complex128] if fp64_supported() else [])
TOL = {
    torch.complex64: dict(rtol=3e-5, atol=3e-5),
    torch.complex128: dict(rtol=1e-10, atol=1e-10),
    torch.float32: dict(rtol=3e-5, atol=3e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
}


def cx(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    real = torch.randn(*shape, 2, generator=g, dtype=torch.float64)
    return torch.view_as_complex(real).to(dtype)


def compare(got, expected):
    assert got.device.type == "ocl", got.device
    got = got.cpu()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    torch.testing.assert_close(got, expected, equal_nan=True, **TOL[expected.dtype])


def check(fn, *cpu_args):
    dev_args = [a.to("ocl") for a in cpu_args]
    expected = fn(*cpu_args)
    with torch_ocl.strict():
        got = fn(*dev_args)
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            compare(g, e)
    else:
        compare(got, expected)


def inputs(dtype):
    """Odd sizes, a non-contiguous (transposed) view, a strided slice and a zero-size tensor."""
    x = cx((5, 7, 3), dtype)
    return {
        "odd": x,
        "transposed": x.transpose(0, 2),
        "sliced": cx((9, 11), dtype, seed=1)[::2, 1::3],
        "zero": cx((0, 4), dtype),
    }


# ---- vector norms ------------------------------------------------------------------------------

ORDS = [2, 1, math.inf, -math.inf, 0, 3, 0.5, -1.5]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", ORDS)
def test_vector_norm(dtype, ord):
    for name, x in inputs(dtype).items():
        # CPU refuses inf and negative orders over an empty dimension (compared below); the
        # zero-size input still reduces over its non-empty last dimension.
        if x.numel() != 0 or (ord >= 0 and ord != math.inf):
            check(lambda t: torch.linalg.vector_norm(t, ord), x)
        check(lambda t: torch.linalg.vector_norm(t, ord, dim=-1, keepdim=True), x)
        if x.dim() == 3:
            check(lambda t: torch.linalg.vector_norm(t, ord, dim=(0, 2)), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_norm_dtype_out_and_norm(dtype):
    x = inputs(dtype)["transposed"]
    if fp64_supported():
        check(lambda t: torch.linalg.vector_norm(t, 3, dim=1, dtype=torch.complex128), x)
    real = torch.float32 if dtype == torch.complex64 else torch.float64

    def out_fn(t):
        out = torch.empty(0, dtype=real, device=t.device)
        torch.linalg.vector_norm(t, 2, dim=0, out=out)
        return out

    check(out_fn, x)
    check(lambda t: torch.norm(t), x)
    check(lambda t: torch.norm(t, p=1, dim=1), x)
    check(lambda t: torch.linalg.norm(t, dim=(0, 1)), x)
    check(lambda t: torch.linalg.matrix_norm(t[..., 0]), x)  # 'fro'
    check(lambda t: torch.linalg.norm(t.reshape(-1)), x)
    with pytest.raises(RuntimeError):
        torch.linalg.vector_norm(x.to("ocl"), 2, dtype=torch.float32)


@pytest.mark.parametrize("ord", [math.inf, -math.inf, -1.5])
def test_vector_norm_empty_error(ord):
    x = torch.zeros(0, 3, dtype=torch.complex64)
    with pytest.raises(RuntimeError) as cpu:
        torch.linalg.vector_norm(x, ord)
    with pytest.raises(RuntimeError) as dev:
        torch.linalg.vector_norm(x.to("ocl"), ord)
    assert str(dev.value).split("\n")[0] == str(cpu.value).split("\n")[0]


def test_vector_norm_nonfinite():
    x = torch.tensor(
        [[1 + 1j, complex(math.inf, 0), 2j], [complex(math.nan, 1), 1, 0], [0, 0, 0]],
        dtype=torch.complex64,
    )
    for ord in ORDS:
        check(lambda t: torch.linalg.vector_norm(t, ord, dim=1), x)


# ---- var / std ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_var_std(dtype):
    for name, x in inputs(dtype).items():
        for corr in (0, 1, 2):
            check(lambda t: torch.var(t, dim=0, correction=corr), x)
            check(lambda t: torch.std(t, dim=-1, correction=corr, keepdim=True), x)
            check(lambda t: torch.var(t, correction=corr), x)
            check(lambda t: torch.var_mean(t, dim=0, correction=corr), x)
            check(lambda t: torch.std_mean(t, correction=corr), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_var_std_out(dtype):
    x = inputs(dtype)["sliced"]
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    for fn in (torch.var, torch.std):

        def out_fn(t, fn=fn):
            out = torch.empty(0, dtype=real, device=t.device)
            fn(t, dim=1, out=out)
            return out

        check(out_fn, x)
        def complex_out(t, fn=fn):  # CPU writes the real result into a complex out
            out = torch.empty(0, dtype=dtype, device=t.device)
            fn(t, dim=0, keepdim=True, out=out)
            return out

        check(complex_out, x)


# ---- logsumexp ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp(dtype):
    for name, x in inputs(dtype).items():
        check(lambda t: torch.logsumexp(t, dim=0), x)
        check(lambda t: torch.logsumexp(t, dim=-1, keepdim=True), x)
    x = cx((4, 5), dtype) * 30  # large real parts: the shift matters
    check(lambda t: torch.logsumexp(t, dim=1), x)
    y = x.clone()
    y[0, 0] = complex(math.inf, 1)
    y[1, :] = complex(-math.inf, 0)
    check(lambda t: torch.logsumexp(t, dim=1), y)


# ---- padding -----------------------------------------------------------------------------------

PAD_CASES = [
    ("reflect", (3, 7), (2, 3)),
    ("reflect", (2, 3, 9), (4, 1)),
    ("reflect", (2, 5, 6), (1, 2, 3, 4)),
    ("reflect", (1, 2, 3, 4, 5), (1, 2, 1, 2, 2, 1)),
    ("replicate", (3, 7), (2, 5)),
    ("replicate", (2, 3, 5, 4), (3, 1, 0, 2)),
    ("replicate", (2, 3, 3, 4, 5), (1, 2, 3, 1, 2, 0)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,shape,pad", PAD_CASES)
def test_pad(dtype, mode, shape, pad):
    x = cx(shape, dtype)
    check(lambda t: F.pad(t, pad, mode=mode), x)
    # non-contiguous input: the last two dims transposed
    xt = cx(shape[:-2] + (shape[-1], shape[-2]), dtype, seed=2).transpose(-1, -2)
    check(lambda t: F.pad(t, pad, mode=mode), xt)
    # zero batch (an unbatched shape gets a batch dimension of 0)
    batched = len(shape) == len(pad) // 2 + 2
    check(lambda t: F.pad(t, pad, mode=mode), cx((0,) + shape[batched:], dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,shape,pad", PAD_CASES)
def test_pad_backward(dtype, mode, shape, pad):
    x = cx(shape, dtype)
    go_shape = F.pad(x, pad, mode=mode).shape
    go = cx(go_shape, dtype, seed=3)

    def fn(t, g):
        t = t.detach().requires_grad_()
        F.pad(t, pad, mode=mode).backward(g)
        return t.grad

    check(fn, x, go)
    check(fn, x, cx(go_shape[:-1] + (go_shape[-1] * 2,), dtype, seed=4)[..., ::2])


def test_pad_out_and_errors():
    x = cx((3, 6), torch.complex64)
    def out_fn(t):
        out = torch.empty(0, dtype=t.dtype, device=t.device)
        torch._C._nn.reflection_pad1d(t, [2, 2], out=out)
        return out

    check(out_fn, x)
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(x.to("ocl"), (6, 0), mode="reflect")


@pytest.mark.parametrize("dtype", DTYPES)
def test_stft_center(dtype):
    x = cx((2, 67), dtype)
    w = torch.hann_window(16, dtype=torch.float32 if dtype == torch.complex64 else torch.float64)
    for pad_mode in ("reflect", "replicate", "constant"):
        check(
            lambda t, win: torch.stft(
                t, 16, hop_length=5, window=win, center=True, pad_mode=pad_mode, return_complex=True
            ),
            x,
            w,
        )


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_ranges(dtype):
    """Long contiguous and strided ranges: work-group trees (TORCH_OCL_TREE_REDUCTIONS=1) and
    chunked reductions with a second pass."""
    x = cx((40001,), dtype)
    m = cx((3, 3001), dtype, seed=5)
    for ord in (2, 1, math.inf, 0, 3):
        check(lambda t: torch.linalg.vector_norm(t, ord), x)
        check(lambda t: torch.linalg.vector_norm(t, ord, dim=1), m)
        check(lambda t: torch.linalg.vector_norm(t, ord, dim=0), m.t().contiguous())
    check(lambda t: torch.var_mean(t), x)
    check(lambda t: torch.std(t, dim=0), m.t().contiguous())
    check(lambda t: torch.logsumexp(t, dim=1), m)
