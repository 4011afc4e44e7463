"""histc, histogram (bin count and edges, weights, density), mode and Tensor.unfold's backward on
the device against CPU in strict mode."""

import pytest
import torch

import torch_ocl


def rnd(*shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("args", [(10, 0, 0), (7, -1.0, 1.5), (1, 0, 0), (33, -3, 0.25)])
def test_histc(dtype, args):
    x = rnd(5, 37, dtype=dtype)
    x[0, :4] = torch.tensor([float("nan"), 1.5, -1.0, 0.0], dtype=dtype)  # NaN, both edges
    bins, lo, hi = args
    if lo == hi:  # the range comes from the data, which must then be finite
        x[0, 0] = 0.5
    ref = torch.histc(x, bins, lo, hi)
    with torch_ocl.strict():
        got = torch.histc(x.to("ocl").t(), bins, lo, hi)  # a strided view: same multiset
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)


def test_histc_edge_cases():
    with torch_ocl.strict():
        assert torch.histc(torch.empty(0, device="ocl"), 4).cpu().tolist() == [0.0] * 4
        same = torch.full((5,), 2.0, device="ocl")
        torch.testing.assert_close(torch.histc(same, 4).cpu(), torch.histc(same.cpu(), 4))
        out = torch.empty(0, device="ocl")
        torch.histc(rnd(20).to("ocl"), 5, out=out)
        torch.testing.assert_close(out.cpu(), torch.histc(rnd(20), 5))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(rnd(4).to("ocl"), 3, 2, 1)
    with pytest.raises(RuntimeError, match="not finite"):
        torch.histc(rnd(4).to("ocl"), 3, 0, float("inf"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogram(dtype, density, weighted):
    x = rnd(3, 41, dtype=dtype)
    w = rnd(3, 41, dtype=dtype, seed=3).abs() if weighted else None
    wo = w.to("ocl") if weighted else None
    for kwargs in (dict(bins=9), dict(bins=5, range=(-0.5, 2.0)), dict(bins=1)):
        ref = torch.histogram(x, weight=w, density=density, **kwargs)
        with torch_ocl.strict():
            got = torch.histogram(x.to("ocl"), weight=wo, density=density, **kwargs)
        torch.testing.assert_close(got.bin_edges.cpu(), ref.bin_edges, rtol=0, atol=0)
        torch.testing.assert_close(got.hist.cpu(), ref.hist, rtol=1e-6, atol=1e-6)
    edges = torch.tensor([-2.0, -0.5, 0.0, 0.1, 3.0], dtype=dtype)
    ref = torch.histogram(x, edges, weight=w, density=density)
    with torch_ocl.strict():
        got = torch.histogram(x.to("ocl"), edges.to("ocl"), weight=wo, density=density)
    torch.testing.assert_close(got.hist.cpu(), ref.hist, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(got.bin_edges.cpu(), ref.bin_edges, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.uint8, torch.bfloat16])
@pytest.mark.parametrize("keepdim", [False, True])
def test_mode(dtype, keepdim):
    x = torch.randint(0, 5, (4, 6, 9), generator=torch.Generator().manual_seed(0)).to(dtype)
    for dim in (0, 1, -1):
        ref = torch.mode(x, dim, keepdim)
        with torch_ocl.strict():
            got = torch.mode(x.to("ocl"), dim, keepdim)
        torch.testing.assert_close(got.values.cpu(), ref.values, rtol=0, atol=0)
        # CPU's index among equal elements comes from an unstable sort: check what it selects
        idx = got.indices.cpu() if keepdim else got.indices.cpu().unsqueeze(dim)
        val = ref.values if keepdim else ref.values.unsqueeze(dim)
        torch.testing.assert_close(x.gather(dim, idx), val, rtol=0, atol=0)
    with torch_ocl.strict():
        v, i = torch.mode(x.to("ocl").transpose(0, 2), 1)
    rv, ri = torch.mode(x.transpose(0, 2), 1)
    torch.testing.assert_close(v.cpu(), rv, rtol=0, atol=0)
    torch.testing.assert_close(x.transpose(0, 2).gather(1, i.cpu().unsqueeze(1)).squeeze(1), rv)


def test_mode_scalar_and_out():
    with torch_ocl.strict():
        v, i = torch.mode(torch.tensor(3.0, device="ocl"))
        assert v.item() == 3.0 and i.item() == 0
        vals, idx = torch.empty(0, device="ocl"), torch.empty(0, dtype=torch.long, device="ocl")
        x = torch.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]])
        torch.mode(x.to("ocl"), 1, out=(vals, idx))
    torch.testing.assert_close(vals.cpu(), torch.mode(x, 1).values)
    torch.testing.assert_close(idx.cpu(), torch.mode(x, 1).indices)


@pytest.mark.parametrize("size,step", [(3, 1), (2, 2), (4, 3), (1, 1), (3, 5)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unfold_backward(size, step, dim):
    x = rnd(7, 6, 8)
    r = x.clone().requires_grad_()
    o = x.to("ocl").requires_grad_()
    ref = r.unfold(dim, size, step)
    g = rnd(*ref.shape, seed=2)
    ref.backward(g)
    with torch_ocl.strict():
        got = o.unfold(dim, size, step)
        got.backward(g.to("ocl"))
    torch.testing.assert_close(got.detach().cpu(), ref.detach())
    torch.testing.assert_close(o.grad.cpu(), r.grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matrix_exp_16bit(dtype):
    """16-bit storage, float32 arithmetic, compared with CPU's float32 result on the same 16-bit
    values, rounded once. (CPU's own 16-bit matrix_exp overflows to inf/NaN in its Pade steps
    even at norm ~1, so it cannot be the reference.)"""
    tol = 1e-2 if dtype == torch.float16 else 3e-2
    small = (rnd(4, 6, 6) * 0.2).to(dtype)
    big = (rnd(2, 5, 5) * 1.5).to(dtype)  # norm 10: scaling and squaring, result ~500
    with torch_ocl.strict():
        got_small = torch.linalg.matrix_exp(small.to("ocl")).cpu()
        got_big = torch.linalg.matrix_exp(big.to("ocl")).cpu()
        got_t = torch.linalg.matrix_exp(small.to("ocl").transpose(-2, -1)).cpu()
    for got, a in ((got_small, small), (got_big, big), (got_t, small.transpose(-2, -1))):
        assert got.dtype == dtype
        ref = torch.linalg.matrix_exp(a.float()).to(dtype).float()
        torch.testing.assert_close(got.float(), ref, rtol=tol, atol=tol * ref.abs().max().item())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_matrix_exp(dtype, scale):
    a = rnd(3, 5, 5, dtype=dtype) * scale / 5
    if dtype.is_complex:
        a = a + 1j * rnd(3, 5, 5, dtype=dtype, seed=1) * scale / 5
    ref = torch.linalg.matrix_exp(a)
    with torch_ocl.strict():
        got = torch.linalg.matrix_exp(a.to("ocl"))
        single = torch.linalg.matrix_exp(a[0, :1, :1].to("ocl"))
        empty = torch.linalg.matrix_exp(torch.empty(0, 3, 3, dtype=dtype, device="ocl"))
    tol = 1e-4 if dtype in (torch.float32, torch.complex64) else 1e-10
    torch.testing.assert_close(got.cpu(), ref, rtol=tol, atol=tol * ref.abs().max().item())
    torch.testing.assert_close(single.cpu(), a[0, :1, :1].exp(), rtol=tol, atol=tol)
    assert empty.shape == (0, 3, 3)
    x = a[0].clone().requires_grad_()
    xo = a[0].to("ocl").requires_grad_()
    w = rnd(5, 5, seed=3).to(dtype)  # a real scalar of the complex result: Re(sum(w * exp(x)))
    (torch.linalg.matrix_exp(x) * w).sum().real.backward()
    with torch_ocl.strict():
        (torch.linalg.matrix_exp(xo) * w.to("ocl")).sum().real.backward()
    torch.testing.assert_close(xo.grad.cpu(), x.grad, rtol=tol * 10,
                               atol=tol * 10 * x.grad.abs().max().item())


@pytest.mark.parametrize("fn", [torch.tril_indices, torch.triu_indices])
@pytest.mark.parametrize("args", [(4, 4, 0), (3, 7, 2), (7, 3, -2), (5, 5, 9), (5, 5, -9),
                                  (0, 3, 0), (1, 1, 0)])
def test_triangle_indices(fn, args):
    for dtype in (torch.long, torch.int32):
        with torch_ocl.strict():
            got = fn(*args, dtype=dtype, device="ocl")
        torch.testing.assert_close(got.cpu(), fn(*args, dtype=dtype), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        fn(-1, 3, device="ocl")


@pytest.mark.parametrize("dtype", [torch.int64, torch.int16, torch.uint8, torch.bool])
def test_dropout_backward_other_dtypes(dtype):
    g = torch.randint(0, 3, (5, 6)).to(dtype)
    m = torch.rand(5, 6, generator=torch.Generator().manual_seed(0)) > 0.5
    ref = torch.ops.aten.native_dropout_backward(g, m, 2.0)
    with torch_ocl.strict():
        got = torch.ops.aten.native_dropout_backward(g.to("ocl"), m.to("ocl"), 2.0)
    assert got.dtype == ref.dtype
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)
