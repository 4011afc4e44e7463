"""Native complex64 / complex128 kernels (pointwise, casts, conjugate and negative views, fills,
reductions, matmul) against CPU PyTorch on the same inputs, in strict mode: any CPU fallback
fails the test."""

import warnings

import pytest
import torch

import torch_ocl
from conftest import fp64_supported

DTYPES = [torch.complex64] + ([torch.complex128] if fp64_supported() else [])
TOL = {
    torch.complex64: dict(rtol=2e-5, atol=2e-5),
    torch.complex128: dict(rtol=1e-10, atol=1e-10),
    torch.float32: dict(rtol=2e-5, atol=2e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
}


def cx(shape, dtype=torch.complex64, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    real = torch.randn(*shape, 2, generator=g, dtype=torch.float64) * scale
    return torch.view_as_complex(real).to(dtype)


def to_dev(x):
    return x.to("ocl") if isinstance(x, torch.Tensor) else x


def compare(got, expected):
    assert isinstance(got, torch.Tensor) and got.device.type == "ocl", got
    got = got.cpu()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if expected.dtype in TOL:
        torch.testing.assert_close(got, expected, equal_nan=True, **TOL[expected.dtype])
    else:
        assert torch.equal(got, expected)


def check(fn, *cpu_args):
    """fn on CPU and on ocl (tensors moved), strict mode, compared with dtype tolerances."""
    dev_args = [to_dev(a) for a in cpu_args]  # before fn, which may modify its inputs
    expected = fn(*cpu_args)
    with torch_ocl.strict():
        got = fn(*dev_args)
    if isinstance(expected, (tuple, list)):
        for g, e in zip(got, expected):
            compare(g, e)
    else:
        compare(got, expected)


# ---- pointwise ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: torch.add(a, b, alpha=2 - 1j),
        lambda a, b: torch.sub(a, b, alpha=0.5),
        lambda a, b: a == b,
        lambda a, b: a != b,
        lambda a, b: torch.pow(a, b),
        lambda a, b: torch.where(a.real > 0, a, b),
        lambda a, b: torch.lerp(a, b, 0.3),
        lambda a, b: torch.lerp(a, b, 0.8 + 0.1j),
        lambda a, b: torch.lerp(a, b, b * 0.1),
        lambda a, b: torch.addcmul(a, a, b, value=0.5 - 2j),
        lambda a, b: torch.addcdiv(a, a, b, value=3),
        lambda a, b: torch.logical_and(a, b),
        lambda a, b: torch.vdot(a.flatten(), b.flatten()),
        lambda a, b: torch.dot(a.flatten(), b.flatten()),
    ],
    ids=lambda f: None,
)
def test_binary(fn, dtype):
    a, b = cx((7, 13), dtype, 1), cx((7, 13), dtype, 2)
    b[0, 0] = a[0, 0]  # one equal element for eq / ne
    check(fn, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_layouts(dtype):
    a, b = cx((5, 1, 9), dtype, 3), cx((4, 9), dtype, 4)
    check(lambda x, y: x * y, a, b)  # broadcast
    check(lambda x, y: x / y, a, b)
    t = cx((9, 6), dtype, 5)
    check(lambda x, y: x.t() * y + x.t(), t, cx((6, 9), dtype, 6))  # non-contiguous
    check(lambda x, y: x[:, ::2] - y[:, 1::2], t, cx((9, 6), dtype, 7))
    check(lambda x, y: x + y, cx((0, 3), dtype), cx((0, 3), dtype))  # zero-size
    check(lambda x, y: x * y, cx((1031,), dtype, 8), cx((1031,), dtype, 9))  # odd size


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalars_and_promotion(dtype):
    a = cx((6, 5), dtype, 10)
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    r = torch.randn(6, 5, dtype=real)
    check(lambda x: x * (2 - 3j), a)
    check(lambda x: x + 1.5, a)
    check(lambda x: (1 + 1j) / x, a)
    check(lambda x: x ** 2, a)
    check(lambda x: x ** 0.5, a)
    check(lambda x: 2 ** x, a)
    check(lambda x, y: x + y, a, r)  # real + complex promotes
    check(lambda x, y: y * x, a, r)
    check(lambda x, y: y / x, a, r)
    check(lambda x: x * torch.tensor(2 + 1j, dtype=dtype), a)  # 0-dim CPU tensor
    check(lambda y: y * (1 + 2j), r)  # real tensor times complex scalar
    check(lambda y: torch.zeros(3, dtype=torch.complex64, device=y.device) + y[0, :3], r)
    i = torch.arange(30).reshape(6, 5)
    check(lambda x, y: x + y, a, i)  # int + complex
    check(lambda x, y: x.add_(y), a.clone(), r)  # in place, real other


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "name",
    [
        "neg", "conj_physical", "abs", "angle", "exp", "exp2", "expm1", "log", "log2", "log10",
        "log1p", "sqrt",
        "rsqrt", "reciprocal", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "sgn",
        "isnan", "isfinite", "isinf", "isreal", "logical_not",
    ],
)
def test_unary(name, dtype):
    a = cx((5, 11), dtype, 11, scale=1.5)
    a[0, 0] = 0
    a[0, 1] = 3.0
    a[0, 2] = -2.0
    a[0, 3] = complex(0, -1.5)
    if name in ("isnan", "isfinite", "isinf", "logical_not"):
        a[1, 0] = complex(float("nan"), 1)
        a[1, 1] = complex(1, float("inf"))
    if name in ("log", "log2", "log10", "rsqrt", "reciprocal"):
        a[0, 0] = 1 + 1j  # their CPU kernels disagree with each other at 0 (inf vs. nan)
    fn = getattr(torch, name)
    check(fn, a)
    check(lambda x: fn(x.t()), a)  # non-contiguous
    check(fn, cx((0,), dtype))  # zero-size


@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_and_out(dtype):
    a = cx((4, 6), dtype, 12)
    check(lambda x: x.mul_(1 - 1j), a.clone())
    check(lambda x: x.exp_(), a.clone())
    check(lambda x: x.conj_physical_(), a.clone())
    check(lambda x: x.sgn_(), a.clone())
    real = torch.float64 if dtype == torch.complex128 else torch.float32

    def abs_out(x):
        out = torch.empty(0, dtype=real, device=x.device)
        return torch.abs(x, out=out)

    def angle_out(x):
        out = torch.empty(0, dtype=real, device=x.device)
        return torch.angle(x, out=out)

    check(abs_out, a)
    check(angle_out, a)


# ---- conjugate / negative views, real / imag, construction -----------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_conj_and_neg_views(dtype):
    a, b = cx((6, 7), dtype, 13), cx((6, 7), dtype, 14)
    check(lambda x: x.conj().resolve_conj(), a)
    check(lambda x: x.conj().clone(), a)
    check(lambda x: x.conj().contiguous(), a)
    check(lambda x, y: x.conj() * y, a, b)
    check(lambda x, y: x.conj() + y.conj(), a, b)
    check(lambda x: x.conj().t().contiguous(), a)
    check(lambda x: x.conj().imag.resolve_neg(), a)  # imag of a conj view has the neg bit
    check(lambda x: x.conj().imag * 2, a)
    check(lambda x: torch.conj_physical(x.conj()), a)
    check(lambda x: x.conj().to(torch.complex64 if dtype == torch.complex128 else dtype), a)

    def copy_into(x):
        out = torch.empty(7, 6, dtype=dtype, device=x.device)
        out.copy_(x.conj().t())
        return out

    check(copy_into, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_real_imag_views(dtype):
    a = cx((5, 4), dtype, 15)
    check(lambda x: x.real, a)
    check(lambda x: x.imag, a)
    check(lambda x: torch.view_as_real(x), a)
    check(lambda x: torch.view_as_complex(torch.view_as_real(x) * 2), a)
    check(lambda x: x.real * x.imag, a)

    def set_imag(x):
        x.imag.fill_(0.5)
        return x

    check(set_imag, a.clone())
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    r, i = torch.randn(3, 5, dtype=real), torch.randn(3, 5, dtype=real)
    check(torch.complex, r, i)
    check(torch.polar, r.abs(), i)
    check(lambda x, y: torch.complex(x.t(), y.t()), r, i)


@pytest.mark.parametrize("dtype", DTYPES)
def test_casts(dtype):
    a = cx((7, 5), dtype, 16)
    for to in (torch.float32, torch.int32, torch.bool, torch.complex64):
        # complex -> real keeps the real part (CPU warns once per process that it does)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            check(lambda x: x.to(to), a)
    if fp64_supported():
        check(lambda x: x.to(torch.complex128), a)
        check(lambda x: x.to(torch.float64).to(dtype), a.real.contiguous())
    for src in (torch.float32, torch.int64, torch.bool, torch.float16):
        check(lambda x: x.to(dtype), torch.randn(4, 3).mul(3).to(src))
    check(lambda x: x.t().to(dtype), torch.randn(4, 3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_factories(dtype):
    def on(fn):
        expected = fn("cpu")
        with torch_ocl.strict():
            got = fn("ocl")
        compare(got, expected)

    on(lambda d: torch.zeros(3, 4, dtype=dtype, device=d))
    on(lambda d: torch.ones(5, dtype=dtype, device=d))
    on(lambda d: torch.full((2, 3), 1.5 - 2j, dtype=dtype, device=d))
    on(lambda d: torch.full((2, 3), 2.0, dtype=dtype, device=d))
    on(lambda d: torch.zeros(4, 6, dtype=dtype, device=d)[:, ::2].fill_(3j))
    on(lambda d: torch.ones(3, dtype=dtype, device=d).zero_())


@pytest.mark.parametrize("dtype", DTYPES)
def test_data_movement(dtype):
    a, b = cx((4, 5), dtype, 17), cx((3, 5), dtype, 18)
    check(lambda x, y: torch.cat([x, y]), a, b)
    check(lambda x: torch.stack([x, x.conj()], 1), a)
    check(lambda x: x.t().contiguous(), a)
    check(lambda x: x.flip(0), a)
    check(lambda x: x[1:3, ::2].clone(), a)
    idx = torch.tensor([3, 0, 2])
    check(lambda x, i: x.index_select(0, i), a, idx)
    check(lambda x, i: x[i], a, idx)


# ---- reductions -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype):
    a = cx((6, 37), dtype, 19, scale=0.5)
    for fn in (
        lambda x: x.sum(),
        lambda x: x.sum(1),
        lambda x: x.sum(0, keepdim=True),
        lambda x: x.t().sum(1),
        lambda x: x.mean(),
        lambda x: x.mean(0),
        lambda x: x.prod(1),
        lambda x: (x * 0.5).prod(),
        lambda x: x.conj().sum(1),
        lambda x: x[:, :0].sum(1),
        lambda x: x[:0].mean(),
        lambda x: x[:, :0].prod(1),
        lambda x: x.real.sum(1, dtype=dtype),
    ):
        check(fn, a)
    big = cx((70000,), dtype, 20, scale=0.1)
    check(lambda x: x.sum(), big)  # split into chunks with a second pass
    with torch_ocl.strict(), pytest.raises(RuntimeError, match="nansum does not support complex"):
        torch.nansum(a.to("ocl"))


# ---- matmul ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul(dtype):
    a, b = cx((9, 13), dtype, 21), cx((13, 7), dtype, 22)
    check(torch.mm, a, b)
    check(lambda x, y: x @ y, a, b)
    check(lambda x, y: x.conj() @ y, a, b)
    check(lambda x, y: x @ y.conj(), a, b)
    check(lambda x, y: y.t() @ x.t(), a, b)  # transposed operands
    check(lambda x, y: y.mH @ x.mH, a, b)  # conjugate transposes
    check(lambda x, y: x[:, ::2] @ y[::2], a, b)  # strided, copied
    c = cx((9, 7), dtype, 23)
    check(lambda x, y, z: torch.addmm(z, x, y, beta=0.5 + 1j, alpha=2 - 1j), a, b, c)
    check(lambda x, y, z: torch.addmm(z, x, y, beta=0), a, b, c)
    p, q = cx((3, 5, 4), dtype, 24), cx((3, 4, 6), dtype, 25)
    check(torch.bmm, p, q)
    check(lambda x, y: x @ y, p, q[0])
    check(lambda x, y: torch.baddbmm(x @ y, x, y, alpha=1j), p, q)
    w, bias = cx((8, 13), dtype, 26), cx((8,), dtype, 27)
    check(torch.nn.functional.linear, a, w, bias)
    check(lambda x, y: torch.mv(x, y), a, b[:, 0].contiguous())
    check(lambda x, y: x @ y, cx((0, 4), dtype), cx((4, 3), dtype))  # zero-size
    check(lambda x, y: x @ y, cx((3, 0), dtype), cx((0, 5), dtype))  # empty inner dimension


@pytest.mark.parametrize("args", [(1 + 2j, 5 - 3j, 7), (0j, 1j, 1), (2 + 0j, -4 + 8j, 0),
                                  (1 - 1j, 3 + 3j, 2), (-3.5 + 1j, 7.25 - 2j, 1001)])
def test_linspace_complex(args):
    for dtype in (torch.complex64, torch.complex128):
        if dtype == torch.complex128 and not torch.ocl.get_device_properties(0).fp64:
            continue
        with torch_ocl.strict():
            got = torch.linspace(*args, dtype=dtype, device="ocl")
        torch.testing.assert_close(got.cpu(), torch.linspace(*args, dtype=dtype))
