"""Native random ops beyond uniform_/normal_: bernoulli_, bernoulli, native_dropout (+ backward),
random_ (all overloads, randint), exponential_, and the *_like random factories. Seeds are fixed,
so the distribution checks cannot flake: each bound is several standard errors wide and the
numbers for a seed never change (Philox counter (offset, i) per element, as uniform_)."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import fp64_supported, native

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if fp64_supported() else []
)
N = 200_000


pytestmark = pytest.mark.usefixtures("restore_ocl_rng")


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.uint8, torch.bool])
def test_bernoulli_scalar(dtype):
    torch.ocl.manual_seed(1)
    x = torch.empty(N, dtype=dtype, device="ocl")
    native(lambda: x.bernoulli_(0.3))
    v = x.cpu().double()
    assert set(v.unique().tolist()) <= {0.0, 1.0}
    # std error of the mean is sqrt(.21/N) ~ 1e-3
    assert abs(v.mean().item() - 0.3) < 6e-3
    assert native(lambda: torch.empty(50, dtype=dtype, device="ocl").bernoulli_(0.0)).cpu().sum() == 0
    assert native(lambda: torch.empty(50, dtype=dtype, device="ocl").bernoulli_(1.0)).cpu().double().sum() == 50


def test_bernoulli_tensor_p_and_functional():
    torch.ocl.manual_seed(2)
    p = torch.tensor([0.0, 1.0, 0.25, 0.75]).repeat(N // 4).reshape(-1, 4)
    out = native(lambda: torch.bernoulli(p.to("ocl"))).cpu()
    assert out.shape == p.shape and out.dtype == torch.float32
    assert out[:, 0].sum() == 0 and out[:, 1].sum() == out.shape[0]
    assert abs(out[:, 2].mean().item() - 0.25) < 0.012
    assert abs(out[:, 3].mean().item() - 0.75) < 0.012
    # broadcast p of a different dtype, into a strided (transposed) float64 / half tensor
    for dtype in FLOATS:
        x = torch.empty(4, 1000, dtype=dtype, device="ocl").t()
        native(lambda: x.bernoulli_(torch.tensor([0.0, 1.0, 0.0, 1.0], device="ocl")))
        assert torch.equal(x.cpu().double(), torch.tensor([0.0, 1.0, 0.0, 1.0]).expand(1000, 4).double())
    # bernoulli(p=float) and the out= form
    y = native(lambda: torch.bernoulli(torch.empty(1000, device="ocl"), 0.5))
    assert set(y.cpu().unique().tolist()) <= {0.0, 1.0}
    o = torch.empty(0, device="ocl")
    native(lambda: torch.bernoulli(torch.full((10,), 1.0, device="ocl"), out=o))
    assert torch.equal(o.cpu(), torch.ones(10))


def test_bernoulli_bad_p_errors_like_cpu():
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
            torch.empty(3, device=dev).bernoulli_(1.5)
    assert torch.empty(3, device="ocl").bernoulli_(0.5).device.type == "ocl"


def test_reproducible_with_manual_seed_and_generator():
    def draw():
        return [
            torch.empty(1000, device="ocl").bernoulli_(0.5).cpu(),
            torch.randint(0, 100, (1000,), device="ocl").cpu(),
            torch.empty(1000, device="ocl").exponential_().cpu(),
            F.dropout(torch.ones(1000, device="ocl"), 0.5).cpu(),
        ]

    torch.ocl.manual_seed(123)
    a = native(draw)
    torch.ocl.manual_seed(123)
    b = native(draw)
    for x, y in zip(a, b):
        assert torch.equal(x, y)
    assert not torch.equal(a[0], native(draw)[0])  # the offset advanced
    g = torch.Generator(device="ocl").manual_seed(7)
    x = native(lambda: torch.randint(0, 1000, (100,), device="ocl", generator=g)).cpu()
    g.manual_seed(7)
    y = native(lambda: torch.randint(0, 1000, (100,), device="ocl", generator=g)).cpu()
    assert torch.equal(x, y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_forward_backward_consistent(dtype):
    torch.ocl.manual_seed(5)
    p = 0.3
    x = torch.randn(N // 4, 4, dtype=torch.float64).to(dtype)
    xd = x.to("ocl").requires_grad_()
    y = native(lambda: F.dropout(xd, p, training=True))
    kept = y.detach().cpu() != 0
    assert abs(kept.double().mean().item() - (1 - p)) < 0.01
    scale = 1 / (1 - p)
    torch.testing.assert_close(y.detach().cpu()[kept], (x[kept].double() * scale).to(dtype),
                               rtol=1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-6,
                               atol=1e-6)
    g = torch.randn(x.shape, dtype=torch.float64).to(dtype)
    native(lambda: y.backward(g.to("ocl")))
    expected = (g.double() * kept.double() * scale).to(dtype)
    torch.testing.assert_close(xd.grad.cpu(), expected, rtol=1e-2, atol=1e-2)


def test_dropout_modes_and_edges():
    x = torch.randn(100, 10, device="ocl")
    assert torch.equal(native(lambda: F.dropout(x, 0.5, training=False)).cpu(), x.cpu())
    assert torch.equal(native(lambda: F.dropout(x, 0.0, training=True)).cpu(), x.cpu())
    assert native(lambda: F.dropout(x, 1.0, training=True)).cpu().abs().sum() == 0
    out, mask = native(lambda: torch.native_dropout(x, 0.5, True))
    assert mask.dtype == torch.bool and mask.device.type == "ocl"
    assert torch.equal(out.cpu(), x.cpu() * mask.cpu() * 2)
    back = native(lambda: torch.ops.aten.native_dropout_backward(out, mask, 2.0)).cpu()
    assert torch.equal(back, out.cpu() * mask.cpu() * 2)
    # strided input, empty input
    xt = x.t()
    out, mask = native(lambda: torch.native_dropout(xt, 0.5, True))
    assert out.shape == xt.shape and torch.equal(out.cpu(), xt.cpu() * mask.cpu() * 2)
    e, m = native(lambda: torch.native_dropout(torch.empty(0, 3, device="ocl"), 0.5, True))
    assert e.shape == (0, 3) and m.shape == (0, 3)
    # nn.Dropout in a module
    mod = torch.nn.Dropout(0.25).train()
    assert native(lambda: mod(torch.ones(1000, device="ocl"))).cpu().unique().numel() <= 2
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout(x, 1.5)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        torch.native_dropout(x, -0.5, True)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                                   torch.float32, torch.float16, torch.bfloat16] +
                         ([torch.float64] if fp64_supported() else []))
def test_randint_range_and_uniformity(dtype):
    torch.ocl.manual_seed(9)
    x = native(lambda: torch.randint(-3 if dtype != torch.uint8 else 0, 7, (N,), dtype=dtype,
                                     device="ocl")).cpu()
    lo = -3 if dtype != torch.uint8 else 0
    assert x.dtype == dtype
    counts = torch.bincount((x.long() - lo).flatten(), minlength=7 - lo)
    assert counts.numel() == 7 - lo
    expected = N / (7 - lo)
    assert (counts.double() - expected).abs().max() < 6 * math.sqrt(expected)


def test_random_overloads():
    torch.ocl.manual_seed(11)
    a = native(lambda: torch.empty(N, device="ocl").random_(5)).cpu()
    assert a.min() == 0 and a.max() == 4 and torch.equal(a, a.round())
    b = native(lambda: torch.empty(N, dtype=torch.int64, device="ocl").random_(-10, 10)).cpu()
    assert b.min() == -10 and b.max() == 9
    c = native(lambda: torch.empty(N, device="ocl").random_()).cpu()
    assert c.min() >= 0 and c.max() <= 2**24 and c.max() > 2**23
    d = native(lambda: torch.empty(N, dtype=torch.int8, device="ocl").random_()).cpu()
    assert d.min() >= 0 and d.max() == 127
    e = native(lambda: torch.empty(1000, dtype=torch.bool, device="ocl").random_()).cpu()
    assert e.any() and not e.all()
    f = native(lambda: torch.empty(N, dtype=torch.int64, device="ocl").random_(2**40, None)).cpu()
    assert f.min() >= 2**40
    full = native(lambda: torch.empty(N, dtype=torch.int64, device="ocl")
                  .random_(-(2**63), None)).cpu()
    assert full.min() < -(2**60) and full.max() > 2**60
    big = native(lambda: torch.empty(N, dtype=torch.int64, device="ocl").random_(0, 2**40)).cpu()
    assert big.max() > 2**39 and big.min() >= 0


def test_random_errors_like_cpu():
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
            torch.empty(3, device=dev).random_(5, 5)
        with pytest.raises(RuntimeError, match="out of bounds"):
            torch.empty(3, dtype=torch.int8, device=dev).random_(0, 1000)
        with pytest.raises(RuntimeError):
            torch.randint(5, 2, (3,), device=dev)


@pytest.mark.parametrize("dtype", FLOATS)
def test_exponential(dtype):
    torch.ocl.manual_seed(13)
    x = native(lambda: torch.empty(N, dtype=dtype, device="ocl").exponential_(2.0)).cpu().double()
    assert x.min() >= 0
    # mean 1/lambda = 0.5, std error 0.5/sqrt(N) ~ 1.1e-3
    assert abs(x.mean().item() - 0.5) < 0.01
    assert abs(x.var().item() - 0.25) < 0.02
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0"):
        torch.empty(3, device="ocl").exponential_(-1.0)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0"):
        torch.empty(3).exponential_(-1.0)


def test_random_like_factories_are_native():
    x = torch.zeros(3, 4, device="ocl", dtype=torch.float16)
    with torch_ocl.strict():
        for t in (torch.rand_like(x), torch.randn_like(x), torch.randint_like(x, 0, 5),
                  torch.rand(5, device="ocl"), torch.randn(5, device="ocl"),
                  torch.randint(0, 3, (5,), device="ocl"),
                  torch.bernoulli(torch.full((5,), 0.5, device="ocl"))):
            assert t.device.type == "ocl"
    assert torch.randint_like(x, 0, 5).cpu().max() <= 4


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_randn_and_rand(dtype):
    # As CPU: real and imaginary parts drawn as reals, a normal's each with half the variance.
    if dtype == torch.complex128 and not torch.ocl.get_device_properties(0).fp64:
        pytest.skip("no cl_khr_fp64")
    with torch_ocl.strict():
        z = torch.randn(200_000, dtype=dtype, device="ocl")
        assert z.dtype == dtype and z.device.type == "ocl"
        parts = torch.view_as_real(z).cpu().double()
        assert abs(parts.mean().item()) < 0.01
        assert abs(parts[:, 0].var().item() - 0.5) < 0.01
        assert abs(parts[:, 1].var().item() - 0.5) < 0.01
        assert abs((z.abs() ** 2).mean().item() - 1.0) < 0.02  # E|z|^2 = 1, as CPU's randn
        n = torch.empty(1000, 3, dtype=dtype, device="ocl")[:, 1].normal_(2.0, 4.0)  # strided
        parts = torch.view_as_real(n).cpu().double()
        assert abs(parts.mean().item() - 2.0) < 0.3 and abs(parts.std().item() - 4 / 2 ** 0.5) < 0.3
        u = torch.rand(100_000, dtype=dtype, device="ocl")
        parts = torch.view_as_real(u).cpu()
        assert parts.min().item() >= 0 and parts.max().item() < 1
        assert abs(parts.double().mean().item() - 0.5) < 0.01
        torch.manual_seed(5)
        a = torch.randn(64, dtype=dtype, device="ocl")
        torch.manual_seed(5)
        assert torch.equal(a.cpu(), torch.randn(64, dtype=dtype, device="ocl").cpu())
