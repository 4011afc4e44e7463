"""hardshrink, softshrink, glu and prelu on ocl against CPU PyTorch on the same inputs, forward and
autograd backward, in strict mode: any CPU fallback fails the test."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import fp64_supported

DTYPES = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if fp64_supported() else []
)
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=2e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}
SPECIALS = [0.0, -0.0, 0.5, -0.5, 0.3, -0.3, 1e-8, float("inf"), float("-inf"), float("nan")]


def make(shape, dtype, seed=0, specials=True):
    """Uniform in [-3, 3); with specials, the first elements are edge values. CPU's kernels treat
    -0 and NaN differently in their vectorised body and their scalar tail, so the specials sit at
    the start of a long contiguous row, where CPU takes the vectorised path."""
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(shape, generator=g, dtype=torch.float64) * 6 - 3
    if not specials:
        return t.to(dtype)
    flat = t.view(-1)
    n = min(len(SPECIALS), flat.numel())
    flat[:n] = torch.tensor(SPECIALS[:n], dtype=torch.float64)
    return t.to(dtype)


def same(ocl, cpu, dtype):
    assert ocl.device.type == "ocl"
    assert ocl.dtype == cpu.dtype and ocl.shape == cpu.shape
    torch.testing.assert_close(ocl.cpu(), cpu, equal_nan=True, **TOL[dtype])
    # No signed-zero check: CPU's vectorised body and scalar tail disagree on the sign of zero.


def grads(fn, dtype, *cpu_inputs):
    """Forward and backward of fn on CPU and on ocl (strict); returns both result tuples."""
    cpu = [t.clone().requires_grad_(True) for t in cpu_inputs]
    dev = [t.detach().to("ocl").requires_grad_(True) for t in cpu_inputs]
    out_c = fn(*cpu)
    g = torch.randn(out_c.shape, generator=torch.Generator().manual_seed(3)).to(dtype)
    out_c.backward(g)
    with torch_ocl.strict():
        out_d = fn(*dev)
        out_d.backward(g.to("ocl"))
    same(out_d.detach(), out_c.detach(), dtype)
    for c, d in zip(cpu, dev):
        same(d.grad, c.grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.hardshrink(x),
        lambda x: F.hardshrink(x, 0.3),
        lambda x: F.softshrink(x),
        lambda x: F.softshrink(x, 0.3),
        lambda x: F.softshrink(x, 0.0),
        lambda x: F.glu(x, -1),
        lambda x: F.glu(x, 0),
    ],
    ids=["hardshrink", "hardshrink_0.3", "softshrink", "softshrink_0.3", "softshrink_0", "glu_last", "glu_0"],
)
def test_forward_backward(fn, dtype):
    grads(fn, dtype, make((6, 34), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_prelu(dtype):
    x = make((4, 3, 5, 7), dtype)
    grads(lambda a, w: F.prelu(a, w), dtype, x, torch.tensor([0.25, -0.5, 2.0]).to(dtype))
    grads(lambda a, w: F.prelu(a, w), dtype, x, torch.tensor([0.1]).to(dtype))
    # 1-d input and a channels-last input
    grads(lambda a, w: F.prelu(a, w), dtype, make((11,), dtype), torch.tensor([0.3]).to(dtype))
    xc = x.contiguous(memory_format=torch.channels_last)
    grads(lambda a, w: F.prelu(a, w), dtype, xc, torch.tensor([0.25, -0.5, 2.0]).to(dtype))


def test_layouts_out_and_zero_size():
    x = make((5, 8, 6), torch.float32, specials=False)
    nc = x.transpose(0, 2)  # non-contiguous
    with torch_ocl.strict():
        d = nc.to("ocl")
        same(F.hardshrink(d, 0.4), F.hardshrink(nc, 0.4), torch.float32)
        same(F.softshrink(d, 0.4), F.softshrink(nc, 0.4), torch.float32)
        same(F.glu(d, 1), F.glu(nc, 1), torch.float32)
        out = torch.empty(0, device="ocl")
        torch._C._nn.softshrink(d, 0.2, out=out)
        same(out, torch._C._nn.softshrink(nc, 0.2), torch.float32)
        out = torch.empty(0, device="ocl")
        torch._C._nn.glu(d, 0, out=out)
        same(out, F.glu(nc, 0), torch.float32)
        for fn in (F.hardshrink, F.softshrink, lambda t: F.glu(t, 0)):
            z = torch.empty(0, 4, device="ocl")
            assert fn(z).shape == fn(torch.empty(0, 4)).shape
        z = torch.empty(0, 3, 2, device="ocl")
        assert F.prelu(z, torch.ones(3, device="ocl")).shape == (0, 3, 2)


def test_errors_match_cpu():
    with torch_ocl.strict():
        with pytest.raises(RuntimeError, match="Halving dimension must be even"):
            F.glu(torch.ones(3, 5, device="ocl"), 1)
        with pytest.raises(RuntimeError, match="glu does not support"):
            F.glu(torch.tensor(1.0, device="ocl"))
        with pytest.raises(RuntimeError, match="lambda"):
            F.softshrink(torch.ones(3, device="ocl"), -1.0)


def test_glu_backward_non_contiguous_middle_dim():
    # glu through autograd on a non-contiguous input, the halving dim in the middle.
    x = make((4, 6, 5), torch.float32, specials=False).transpose(0, 2)
    grads(lambda t: F.glu(t, 1), torch.float32, x)


def test_sgn_backward_zero_tensor_is_native():
    # sgn's derivative for real inputs is an _efficientzerotensor: storage-less zeros on ocl.
    x = torch.randn(5, 3)
    with torch_ocl.strict():
        d = x.to("ocl").requires_grad_(True)
        (torch.sgn(d) * 2 + d).sum().backward()
        assert d.grad.device.type == "ocl"
        assert torch.equal(d.grad.cpu(), torch.ones(5, 3))
        z = torch._efficientzerotensor((2, 3), device="ocl")
        assert torch._is_zerotensor(z) and z.device.type == "ocl" and z.shape == (2, 3)
        assert torch.equal((z + torch.ones(2, 3, device="ocl")).cpu(), torch.ones(2, 3))
