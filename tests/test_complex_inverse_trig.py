"""Complex asin/acos/atan/asinh/acosh/atanh, sinc and logaddexp on ocl against CPU in strict
mode: random values, the branch cuts with signed zeros, poles and infinities, non-contiguous,
in-place and out=."""

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


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_sinc_and_logaddexp(dtype):
    # logaddexp as CPU's _log_add_exp_helper: ties ordered as CPU orders them, infinities apart.
    x = _values(dtype)
    ninf, inf, nan = float("-inf"), float("inf"), float("nan")
    sp = [complex(ninf, 0), complex(ninf, 3), complex(inf, 1), complex(inf, 2), complex(nan, 0),
          0j, 1 + 1j, complex(3, nan)]
    a = torch.cat([x, torch.tensor([p for p in sp for q in sp], dtype=dtype)])
    b = torch.cat([x.flip(0), torch.tensor([q for p in sp for q in sp], dtype=dtype)])
    tol = dict(rtol=2e-6, atol=1e-5) if dtype == torch.complex64 else dict(rtol=1e-12, atol=1e-12)
    with torch_ocl.strict():
        s = torch.sinc(a.to("ocl"))
        l = torch.logaddexp(a.to("ocl"), b.to("ocl"))
    torch.testing.assert_close(s.cpu(), torch.sinc(a), equal_nan=True, **tol)
    torch.testing.assert_close(l.cpu(), torch.logaddexp(a, b), equal_nan=True, **tol)
