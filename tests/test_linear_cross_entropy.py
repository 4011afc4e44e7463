"""F.linear_cross_entropy's chunked path on ocl against the CPU: with acc_policy="auto" the CPU
accumulates float16/bfloat16 inputs in float32, and so must ocl (torch_ocl/_nn_policies.py)."""

import pytest
import torch
import torch.nn.functional as F
import torch_ocl

LCEO = getattr(torch.nn, "LinearCrossEntropyOptions", None)
pytestmark = pytest.mark.skipif(LCEO is None, reason="torch without linear_cross_entropy")


def test_auto_resolves_like_cpu():
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        cpu = LCEO()._adjust(8, 3, 4, dtype, torch.device("cpu"))
        ocl = LCEO()._adjust(8, 3, 4, dtype, torch.device("ocl"))
        assert (ocl.acc_dtype, ocl.acc_policy, ocl.chunking_method) == (
            cpu.acc_dtype, cpu.acc_policy, cpu.chunking_method)
    assert LCEO()._adjust(8, 3, 4, torch.float16, torch.device("ocl")).acc_dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("n,f,v", [(8, 3, 4), (7, 5, 9), (0, 3, 4)])
def test_chunked_matches_cpu(dtype, reduction, n, f, v):
    g = torch.Generator().manual_seed(n * 100 + f * 10 + v)
    x = (torch.randn(n, f, generator=g) * 4).to(dtype)
    w = (torch.randn(v, f + 2, generator=g) * 2).to(dtype)[:, 1:-1]  # non-contiguous weight
    b = (torch.randn(v, generator=g) * 4).to(dtype)
    t = torch.randint(0, v, (n,), generator=g)
    opts = LCEO(batch_chunk_size=2, allow_retain_graph=reduction != "none")
    ref = F.linear_cross_entropy(x, w, t, linear_bias=b, reduction=reduction, options=opts)
    with torch_ocl.strict():
        out = F.linear_cross_entropy(x.to("ocl"), w.to("ocl"), t.to("ocl"), linear_bias=b.to("ocl"),
                                     reduction=reduction, options=opts)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    tol = 1e-3 if dtype == torch.float16 else 1e-2
    torch.testing.assert_close(out.cpu(), ref, atol=tol, rtol=tol, equal_nan=True)
