"""torch.special functions on ocl against CPU PyTorch on the same inputs, in strict mode: any CPU
fallback fails the test. The kernels are OpenCL C ports of ATen's Math.h (csrc/aten/special_math.h),
so results agree to a few ulps; where the CPU's float32 result is itself inexact the float64 CPU
result bounds the error instead."""

import pytest
import torch

import torch_ocl
from conftest import fp64_supported

FP64 = fp64_supported()
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 8.0, -8.0, 30.0, -30.0, 100.0, -100.0,
         1e4, -1e4, float("inf"), float("-inf"), float("nan")]


def sample(n=300, lo=-12.0, hi=12.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo
    return torch.cat([torch.tensor(EDGES, dtype=torch.float64), t])


def get(name):
    fn = torch
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


UNARY_REDUCED = ["i0", "special.i0e", "special.i1", "special.i1e"]
UNARY = UNARY_REDUCED + [
    "special.ndtri",
    "special.log_ndtr",
    "special.erfcx",
    "special.airy_ai",
    "special.bessel_j0",
    "special.bessel_j1",
    "special.bessel_y0",
    "special.bessel_y1",
    "special.modified_bessel_i0",
    "special.modified_bessel_i1",
    "special.modified_bessel_k0",
    "special.modified_bessel_k1",
    "special.scaled_modified_bessel_k0",
    "special.scaled_modified_bessel_k1",
    "special.spherical_bessel_j0",
]
POLYS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


def close(ocl, cpu, rtol, atol, ref=None):
    """ocl equals CPU within rtol/atol, or (where CPU float32 is inexact) is as close to the
    float64 reference as CPU is, within the tolerance."""
    assert ocl.device.type == "ocl" and ocl.dtype == cpu.dtype and ocl.shape == cpu.shape
    o = ocl.cpu().double()
    c = cpu.double()
    same_class = (o.isnan() == c.isnan()) & (o.isinf() == c.isinf())
    assert bool(same_class.all()), f"NaN/inf differ at {(~same_class).nonzero().flatten()[:8]}"
    fin = torch.isfinite(c)
    assert torch.equal(o[~fin & ~c.isnan()], c[~fin & ~c.isnan()])  # infinities with their sign
    err = (o - c).abs()
    bad = fin & (err > atol + rtol * c.abs())
    if ref is not None and bad.any():
        r = ref.double()
        bad &= (o - r).abs() > (c - r).abs() + atol + rtol * r.abs()
    assert not bool(bad.any()), (
        f"mismatch at {bad.nonzero().flatten()[:8].tolist()}: "
        f"ocl {o[bad][:4].tolist()} cpu {c[bad][:4].tolist()}"
    )


@pytest.mark.parametrize("name", UNARY)
def test_unary_float32_and_float64(name):
    fn = get(name)
    x = sample(lo=-0.2, hi=1.2) if name == "special.ndtri" else sample()
    for dtype, rtol, atol in [(torch.float32, 4e-6, 1e-30)] + (
        [(torch.float64, 1e-13, 1e-300)] if FP64 else []
    ):
        xc = x.to(dtype)
        cpu = fn(xc)
        with torch_ocl.strict():
            ocl = fn(xc.to("ocl"))
        close(ocl, cpu, rtol, atol, ref=fn(x).to(dtype) if dtype == torch.float32 else None)


@pytest.mark.parametrize("name", UNARY_REDUCED)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_i0_family_half_and_bfloat16(name, dtype):
    fn = get(name)
    x = sample(lo=-6, hi=6).to(dtype)
    cpu = fn(x)
    with torch_ocl.strict():
        ocl = fn(x.to("ocl"))
    # CPU's scalar half path rounds intermediates; the float64 result decides those elements.
    ref = fn(x.double()).to(dtype)
    close(ocl, cpu, rtol=1e-2 if dtype == torch.bfloat16 else 1e-3, atol=1e-5, ref=ref)


@pytest.mark.parametrize("name", ["special.bessel_j0", "special.erfcx", "special.ndtri"])
def test_half_falls_back_to_cpus_error(name):
    # CPU has no half kernels for these: the fallback (counted, so strict raises) is the honest path.
    x = torch.ones(3, dtype=torch.float16, device="ocl")
    with torch_ocl.strict(), pytest.raises(RuntimeError):
        get(name)(x)


@pytest.mark.parametrize("name", ["i0", "special.i1e", "special.bessel_j1", "special.erfcx"])
def test_integer_inputs_layouts_and_out(name):
    fn = get(name)
    ints = torch.arange(-20, 20, dtype=torch.int32).reshape(5, 8)
    with torch_ocl.strict():
        ocl = fn(ints.to("ocl"))
    close(ocl, fn(ints), 4e-6, 1e-30)
    x = sample(n=60).float()[:60].reshape(6, 10).t()  # non-contiguous
    with torch_ocl.strict():
        d = x.to("ocl")
        close(fn(d), fn(x), 4e-6, 1e-30, ref=fn(x.double()).float())
        out = torch.empty(0, device="ocl")
        fn(d, out=out)
        close(out, fn(x), 4e-6, 1e-30, ref=fn(x.double()).float())
        assert fn(torch.empty(0, 3, device="ocl")).shape == (0, 3)


def test_i0_inplace():
    x = sample(n=40).float()
    with torch_ocl.strict():
        d = x.to("ocl")
        d.i0_()
        close(d, x.clone().i0_(), 4e-6, 1e-30)


@pytest.mark.parametrize("name", POLYS)
def test_polynomials(name):
    fn = get("special." + name)
    lo, hi = (-0.2, 1.2) if name.startswith("shifted") else (-1.5, 1.5)
    x = sample(n=80, lo=lo, hi=hi).float()
    x = torch.cat([x, torch.tensor([1.0, -1.0, 0.0, 0.5])])
    xs = x[:, None]  # broadcast against the degrees
    n = torch.tensor([-1.0, 0, 1, 2, 3, 5, 6, 7, 12, 30, float("nan"), float("inf")])
    for dtype, rtol, atol in [(torch.float32, 2e-5, 1e-5)] + (
        [(torch.float64, 1e-11, 1e-11)] if FP64 else []
    ):
        a, b = xs.to(dtype), n.to(dtype)
        cpu = fn(a, b)
        with torch_ocl.strict():
            ocl = fn(a.to("ocl"), b.to("ocl"))
        close(ocl, cpu, rtol, atol, ref=fn(xs.double(), n.double()).to(dtype))
    # integer degrees promote with x, as on CPU
    with torch_ocl.strict():
        ocl = fn(xs.to("ocl"), torch.arange(4).to("ocl"))
    close(ocl, fn(xs, torch.arange(4)), 2e-5, 1e-5)


PG_EDGES = [0.0, -0.0, -1.0, -2.5, 1e-8, 1.0, 2.0, 1e10, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma(n):
    x = torch.cat([torch.tensor(PG_EDGES, dtype=torch.float64), sample(n=120, lo=-10, hi=10)])
    for dtype, rtol, atol in [(torch.float32, 1e-5, 1e-30), (torch.float16, 2e-3, 1e-5)] + (
        [(torch.float64, 1e-12, 1e-300)] if FP64 else []
    ):
        xc = x.to(dtype)
        with torch_ocl.strict():
            ocl = torch.polygamma(n, xc.to("ocl"))
        close(ocl, torch.polygamma(n, xc), rtol, atol, ref=torch.polygamma(n, x).to(dtype))
    with torch_ocl.strict():  # integers promote; in-place and out=
        ints = torch.arange(1, 9)
        close(torch.polygamma(n, ints.to("ocl")), torch.polygamma(n, ints), 1e-5, 1e-30)
        d = x.float()[20:40].to("ocl")
        out = torch.empty(0, device="ocl")
        torch.polygamma(n, d, out=out)
        d.polygamma_(n)
        ref = torch.polygamma(n, x.float()[20:40])
        close(out, ref, 1e-5, 1e-30)
        close(d, ref, 1e-5, 1e-30)


def test_digamma_and_polygamma_gradients():
    x = sample(n=50, lo=0.1, hi=6).float()[len(EDGES):]
    for fn in (torch.digamma, lambda t: torch.polygamma(2, t), torch.special.i0,
               torch.special.i1, torch.special.erfcx, torch.special.log_ndtr):
        c = x.clone().requires_grad_(True)
        fn(c).sum().backward()
        with torch_ocl.strict():
            d = x.to("ocl").requires_grad_(True)
            fn(d).sum().backward()
        close(d.grad, c.grad, 2e-5, 1e-6)


def test_zeta_and_nextafter():
    xs = torch.tensor([2.0, 1.0, 0.5, 3.0, 4.0, 2.5, 2.0, 1.5, 7.0, float("nan"), float("inf")])
    qs = torch.tensor([0.5, 1.0, 2.0, -1.0, -1.5, 10.0, float("nan"), 1e-3, 3.0, 1.0, 2.0])
    grid_x, grid_q = xs[:, None], qs[None, :]  # broadcast
    for dtype, rtol in [(torch.float32, 1e-5)] + ([(torch.float64, 1e-12)] if FP64 else []):
        a, b = grid_x.to(dtype), grid_q.to(dtype)
        with torch_ocl.strict():
            ocl = torch.special.zeta(a.to("ocl"), b.to("ocl"))
        close(ocl, torch.special.zeta(a, b), rtol, 1e-30)
    a = torch.tensor([0.0, -0.0, 1.0, float("inf"), float("nan"), 1e-45, -3.0, 1.0, 6e-8, 65504.0,
                      -65504.0, 2.0, 0.0, -0.0, 1e-7, 3.0])
    b = torch.tensor([1.0, -1.0, 0.0, 0.0, 1.0, float("nan"), -3.0, float("inf"), 0.0,
                      float("inf"), 0.0, 1.0, -0.0, 0.0, -1.0, 3.0])
    # half and bfloat16 step their own 16-bit patterns, as c10::nextafter does
    for dtype in [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if FP64 else []):
        with torch_ocl.strict():
            ocl = torch.nextafter(a.to(dtype).to("ocl"), b.to(dtype).to("ocl")).cpu()
        cpu = torch.nextafter(a.to(dtype), b.to(dtype))
        assert torch.equal(ocl.isnan(), cpu.isnan())
        assert torch.equal(ocl[~cpu.isnan()], cpu[~cpu.isnan()])
        assert torch.equal(ocl.signbit(), cpu.signbit())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if FP64 else []))
def test_kaiser_window(dtype):
    # Without a native kernel PyTorch's composite hit a DispatchStub with no ocl entry (an internal
    # assert); now all three overloads run on the device.
    tol = {torch.float32: 2e-6, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 1e-2}[dtype]
    with torch_ocl.strict():
        for args in [(8,), (9, False), (64, True, 8.0), (1,), (0,), (17, False, 0.0), (5, True, 30.0)]:
            ocl = torch.kaiser_window(*args, dtype=dtype, device="ocl")
            cpu = torch.kaiser_window(*args, dtype=dtype)
            assert ocl.device.type == "ocl" and ocl.dtype == cpu.dtype and ocl.shape == cpu.shape
            torch.testing.assert_close(ocl.cpu(), cpu, rtol=tol, atol=tol)
        with pytest.raises(RuntimeError, match="non-negative window length"):
            torch.kaiser_window(-1, device="ocl")
        with pytest.raises(RuntimeError, match="floating point"):
            torch.kaiser_window(4, dtype=torch.int32, device="ocl")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if FP64 else []))
def test_renorm(dtype):
    x = (torch.randn(4, 5, 6, generator=torch.Generator().manual_seed(1)) * 2).to(dtype)
    tol = {torch.float32: 1e-6, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 1e-2}[dtype]
    with torch_ocl.strict():
        for p, dim, maxnorm in [(2, 1, 1.0), (1, 0, 2.0), (float("inf"), -1, 0.5), (3, 2, 100.0)]:
            ocl = torch.renorm(x.to("ocl"), p, dim, maxnorm)
            assert ocl.device.type == "ocl"
            torch.testing.assert_close(ocl.cpu(), torch.renorm(x, p, dim, maxnorm), rtol=tol, atol=tol)
        d = x.to("ocl")
        d.renorm_(2, 1, 1.0)
        torch.testing.assert_close(d.cpu(), x.renorm(2, 1, 1.0), rtol=tol, atol=tol)
        out = torch.empty(0, dtype=dtype, device="ocl")
        torch.renorm(x.to("ocl").transpose(0, 2), 2, 0, 1.0, out=out)
        torch.testing.assert_close(out.cpu(), x.transpose(0, 2).renorm(2, 0, 1.0), rtol=tol, atol=tol)
        with pytest.raises(RuntimeError):
            torch.renorm(x.to("ocl"), -1, 0, 1.0)


def test_renorm_gradient():
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    c = x.clone().requires_grad_(True)
    torch.renorm(c, 2, 0, 1.0).pow(2).sum().backward()
    d = x.to("ocl").requires_grad_(True)
    with torch_ocl.strict():
        torch.renorm(d, 2, 0, 1.0).pow(2).sum().backward()
    torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16] + ([torch.float64] if FP64 else []))
def test_frexp(dtype):
    x = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.75, 3.0, 1e-40, -1e-42, 3e38, 1e-8, -123.456,
                      float("inf"), float("-inf"), float("nan")]).to(dtype)
    x = torch.cat([x, torch.randn(50, generator=torch.Generator().manual_seed(4)).to(dtype) * 100])
    with torch_ocl.strict():
        m, e = torch.frexp(x.to("ocl"))
        mc, ec = torch.frexp(x)
        assert m.dtype == mc.dtype and e.dtype == ec.dtype == torch.int32
        assert torch.equal(m.cpu().nan_to_num(7.0), mc.nan_to_num(7.0))
        assert torch.equal(m.cpu().signbit(), mc.signbit())
        assert torch.equal(e.cpu(), ec)
        xt = x[: 60].reshape(6, 10).t()  # non-contiguous, out=
        mo = torch.empty(0, dtype=dtype, device="ocl")
        eo = torch.empty(0, dtype=torch.int32, device="ocl")
        torch.frexp(xt.to("ocl"), out=(mo, eo))
        mc, ec = torch.frexp(xt)
        assert torch.equal(mo.cpu().nan_to_num(7.0), mc.nan_to_num(7.0)) and torch.equal(eo.cpu(), ec)
        with pytest.raises(RuntimeError, match="only supports floating-point"):
            torch.frexp(torch.ones(3, dtype=torch.int32, device="ocl"))


@pytest.mark.parametrize("fn", [torch.igamma, torch.igammac], ids=["igamma", "igammac"])
def test_incomplete_gamma(fn):
    g = torch.Generator().manual_seed(0)
    edges_a = [0.0, 0.0, 1.0, -1.0, float("inf"), float("inf"), 2.0, float("nan"), 50.0, 250.0, 1e-3, 30.0]
    edges_x = [1.0, 0.0, 0.0, 1.0, float("inf"), 2.0, float("inf"), 1.0, 49.0, 251.0, 5.0, 0.7]
    a = torch.cat([torch.tensor(edges_a, dtype=torch.float64), torch.rand(150, generator=g, dtype=torch.float64) * 30])
    x = torch.cat([torch.tensor(edges_x, dtype=torch.float64), torch.rand(150, generator=g, dtype=torch.float64) * 30])
    for dtype, rtol, atol in [(torch.float32, 1e-5, 1e-7), (torch.float16, 2e-3, 1e-4),
                              (torch.bfloat16, 1.6e-2, 1e-3)] + ([(torch.float64, 1e-12, 1e-300)] if FP64 else []):
        ac, xc = a.to(dtype), x.to(dtype)
        with torch_ocl.strict():
            ocl = fn(ac.to("ocl"), xc.to("ocl"))
        close(ocl, fn(ac, xc), rtol, atol, ref=fn(ac.double(), xc.double()).to(dtype))
    with torch_ocl.strict():  # broadcast, in-place, out=
        ac, xc = a.float()[:12, None], x.float()[None, :12]
        close(fn(ac.to("ocl"), xc.to("ocl")), fn(ac, xc), 1e-5, 1e-7, ref=fn(ac.double(), xc.double()).float())
        d = a.float()[20:40].to("ocl")
        out = torch.empty(0, device="ocl")
        fn(d, x.float()[20:40].to("ocl"), out=out)
        getattr(d, fn.__name__ + "_")(x.float()[20:40].to("ocl"))
        ref = fn(a.float()[20:40], x.float()[20:40])
        close(out, ref, 1e-5, 1e-7)
        close(d, ref, 1e-5, 1e-7)
