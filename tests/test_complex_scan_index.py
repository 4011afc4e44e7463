"""Complex cumsum/cumprod (and, below, complex indexing ops) on ocl against CPU in strict mode:
odd sizes, non-contiguous and zero-size inputs, dtype= promotion."""

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
