"""Complex asin/acos/atan/asinh/acosh/atanh on ocl against CPU in strict mode: random values,
the branch cuts with signed zeros, poles and infinities, non-contiguous, in-place and out=."""

import pytest
import torch
import torch_ocl

OPS = [torch.asin, torch.acos, torch.atan, torch.asinh, torch.acosh, torch.atanh]


def _values(dtype):
    g = torch.Generator().manual_seed(0)
    real = torch.float32 if dtype == torch.complex64 else torch.float64
    x = torch.complex(torch.randn(300, generator=g, dtype=real) * 3,
                      torch.randn(300, generator=g, dtype=real) * 3)
    parts = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-4, -1e-4, 1e3, -1e3, float("inf")]
    special = torch.tensor([[re, im] for re in parts for im in parts], dtype=real)
    return torch.cat([x, torch.view_as_complex(special)])


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_matches_cpu(dtype, op):
    x = _values(dtype)
    ref = op(x)
    tol = dict(rtol=2e-6, atol=1e-5) if dtype == torch.complex64 else dict(rtol=1e-12, atol=1e-12)
    with torch_ocl.strict():
        xo = x.to("ocl")
        out = op(xo)
        strided = op(torch.stack((xo, xo), -1)[..., 0])  # non-contiguous input
        buf = torch.empty(0, dtype=dtype, device="ocl")
        op(xo, out=buf)
        inplace = xo.clone()
        getattr(inplace, op.__name__ + "_")()
        empty = op(xo[:0])
    for got in (out, strided, buf, inplace):
        torch.testing.assert_close(got.cpu(), ref, equal_nan=True, **tol)
    assert empty.shape == (0,)
