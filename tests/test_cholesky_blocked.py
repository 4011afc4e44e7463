"""Blocked Cholesky (orders >= 192: the small kernel per diagonal block, a triangular solve per
panel, one GEMM per trailing update) against CPU LAPACK, in strict mode."""

import pytest
import torch
from torch.testing import assert_close

import torch_ocl

TOL = {torch.float32: 2e-4, torch.float64: 1e-10, torch.complex64: 2e-4}


def spd(batch, n, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*batch, n, n, dtype=dtype, generator=g)
    return a @ a.mH + n * torch.eye(n, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("n,batch", [(192, ()), (257, (2,)), (200, (0,))])
@pytest.mark.parametrize("upper", [False, True])
def test_blocked_cholesky_matches_cpu(dtype, n, batch, upper):
    a = spd(batch, n, dtype)
    with torch_ocl.strict():
        got, info = torch.linalg.cholesky_ex(a.to("ocl"), upper=upper)
    want, want_info = torch.linalg.cholesky_ex(a, upper=upper)
    assert torch.equal(info.cpu(), want_info)
    tol = TOL[dtype] * n
    assert_close(got.cpu(), want, atol=tol, rtol=TOL[dtype])


def test_blocked_cholesky_non_contiguous_input_and_solve():
    a = spd((2,), 230, torch.float64, seed=1).mT  # a transposed view (still SPD)
    b = torch.randn(2, 230, 3, dtype=torch.float64)
    with torch_ocl.strict():
        l = torch.linalg.cholesky(a.to("ocl"))
        x = torch.cholesky_solve(b.to("ocl"), l)
    assert_close(l.cpu(), torch.linalg.cholesky(a), atol=1e-9, rtol=1e-10)
    assert_close(x.cpu(), torch.cholesky_solve(b, torch.linalg.cholesky(a)), atol=1e-9, rtol=1e-9)


def test_blocked_cholesky_reports_the_first_failing_order():
    # failures in the first panel, a middle panel and the last column, one per matrix
    a = spd((3,), 300, torch.float64, seed=2)
    a[0, 10, 10] = -5
    a[1, 150, 150] = -1e6
    a[2, 299, 299] = -1e6
    with torch_ocl.strict():
        _, info = torch.linalg.cholesky_ex(a.to("ocl"))
        with pytest.raises(torch.linalg.LinAlgError, match="order 11"):
            torch.linalg.cholesky(a[0].to("ocl"))
    assert info.cpu().tolist() == torch.linalg.cholesky_ex(a)[1].tolist() == [11, 151, 300]
