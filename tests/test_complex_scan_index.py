"""Complex cumsum/cumprod/logcumsumexp (and, below, complex indexing ops) on ocl against CPU in
strict mode: odd sizes, non-contiguous and zero-size inputs, dtype= promotion."""

import pytest
import torch
import torch_ocl


def _c(shape, seed, dtype=torch.complex64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=dtype)


@pytest.mark.parametrize("op", [torch.cumsum, torch.cumprod])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), 1), ((4, 3, 5), 0), ((2, 0, 3), 1),
                                       ((), 0)])
def test_complex_scans(op, shape, dim):
    x = _c(shape, len(shape))
    with torch_ocl.strict():
        xo = x.to("ocl")
        out = op(xo, dim)
        out_t = op(xo.mT if xo.dim() >= 2 else xo, 0)  # non-contiguous input
        out_d = op(xo, dim, dtype=torch.complex128)
        out_r = op(x.real.to("ocl"), dim, dtype=torch.complex64)
        buf = torch.empty(0, dtype=torch.complex64, device="ocl")
        op(xo, dim, out=buf)
    tol = dict(rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.cpu(), op(x, dim), **tol)
    torch.testing.assert_close(out_t.cpu(), op(x.mT if x.dim() >= 2 else x, 0), **tol)
    torch.testing.assert_close(out_d.cpu(), op(x, dim, dtype=torch.complex128))
    torch.testing.assert_close(out_r.cpu(), op(x.real, dim, dtype=torch.complex64), **tol)
    torch.testing.assert_close(buf.cpu(), op(x, dim), **tol)
    with torch_ocl.strict():
        y = xo.clone()
        y.cumsum_(0) if op is torch.cumsum else y.cumprod_(0)
    torch.testing.assert_close(y.cpu(), op(x, 0), **tol)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_accumulating_index_ops(dtype):
    x = _c((6, 5), 1, dtype)
    src = _c((8, 5), 2, dtype)
    idx = torch.tensor([0, 2, 0, 5, 2, 2, 1, 0])  # duplicates accumulate
    sidx = idx.view(8, 1).expand(8, 5)
    xo, so, io, sio = x.to("ocl"), src.to("ocl"), idx.to("ocl"), sidx.to("ocl")
    with torch_ocl.strict():
        got = [
            xo.index_put((io,), so, accumulate=True),
            xo.mT.index_put((torch.tensor([1, 1, 4], device="ocl"),),
                            torch.tensor(2 - 1j, dtype=dtype, device="ocl"), accumulate=True),
            xo.index_add(0, io, so, alpha=2),
            xo.scatter_add(0, sio, so),
            xo.scatter(0, sio, so, reduce="add"),
            xo.index_put((io[:0],), so[:0], accumulate=True),  # nothing to add
        ]
    want = [
        x.index_put((idx,), src, accumulate=True),
        x.mT.index_put((torch.tensor([1, 1, 4]),), torch.tensor(2 - 1j, dtype=dtype),
                       accumulate=True),
        x.index_add(0, idx, src, alpha=2),
        x.scatter_add(0, sidx, src),
        x.scatter(0, sidx, src, reduce="add"),
        x.clone(),
    ]
    for a, b in zip(got, want):
        torch.testing.assert_close(a.cpu(), b)


def test_complex_masked_fill_and_scatter_multiply():
    x = _c((5, 7), 3)
    mask = torch.rand(5, 7, generator=torch.Generator().manual_seed(4)) > 0.5
    src = _c((5, 7), 5)
    sidx = torch.tensor([[0, 1, 0, 4, 4, 2, 0]]).expand(5, 7)
    with torch_ocl.strict():
        xo = x.to("ocl")
        a = xo.masked_fill(mask.to("ocl"), 1 + 2j)
        b = xo.mT.masked_fill(mask.T.to("ocl"), torch.tensor(3 - 1j, device="ocl"))
        c = xo.scatter(0, sidx.to("ocl"), src.to("ocl"), reduce="multiply")
        e = torch.zeros(0, 3, dtype=torch.complex64, device="ocl").masked_fill(
            torch.zeros(0, 3, dtype=torch.bool, device="ocl"), 1j)
    torch.testing.assert_close(a.cpu(), x.masked_fill(mask, 1 + 2j), rtol=0, atol=0)
    torch.testing.assert_close(b.cpu(), x.mT.masked_fill(mask.T, torch.tensor(3 - 1j)), rtol=0,
                               atol=0)
    torch.testing.assert_close(c.cpu(), x.scatter(0, sidx, src, reduce="multiply"))
    assert e.shape == (0, 3)


def test_complex_logcumsumexp():
    x = _c((5, 9), 6) * 3
    x[1, 2] = complex(float("-inf"), 0)
    x[2, 3] = complex(float("nan"), 1)
    x[3, 0] = complex(float("inf"), 2)
    x[3, 1] = complex(float("inf"), -1)
    with torch_ocl.strict():
        xo = x.to("ocl")
        got = [torch.logcumsumexp(xo, 1), torch.logcumsumexp(xo, 0),
               torch.logcumsumexp(xo.mT, 1), torch.logcumsumexp(xo[:, :0], 1)]
        buf = torch.empty(0, dtype=torch.complex64, device="ocl")
        torch.logcumsumexp(xo, 1, out=buf)
    want = [torch.logcumsumexp(x, 1), torch.logcumsumexp(x, 0), torch.logcumsumexp(x.mT, 1),
            torch.logcumsumexp(x[:, :0], 1)]
    for a, b in zip(got + [buf], want + [want[0]]):
        torch.testing.assert_close(a.cpu(), b, equal_nan=True, rtol=1e-5, atol=1e-5)
