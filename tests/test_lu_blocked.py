"""Blocked LU with partial pivoting (min(m, n) >= 64: a 16-wide panel kernel with the pivot
search, the row swaps and U12 by a second kernel, A22 -= L21 U12 by one batched GEMM) and the
blocked triangular solve (order >= 128, n * k >= 8192: inverted 64-wide diagonal blocks and
GEMMs) against CPU LAPACK, in strict mode, through every op built on them: lu_factor(_ex),
linalg.lu, lu_solve, solve, det, slogdet, inv."""

import pytest
import torch
from torch.testing import assert_close

import torch_ocl

TOL = {torch.float32: 1e-4, torch.float64: 1e-11, torch.complex64: 1e-4, torch.complex128: 1e-11}


def rand(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=dtype, generator=g)


def check_lu(a, dtype):
    with torch_ocl.strict():
        lu, piv, info = torch.linalg.lu_factor_ex(a.to("ocl"))
    want_lu, want_piv, want_info = torch.linalg.lu_factor_ex(a)
    assert torch.equal(piv.cpu(), want_piv)  # LAPACK's 1-based pivots, the same choices
    assert torch.equal(info.cpu(), want_info)
    n = min(a.shape[-2:]) or 1
    assert_close(lu.cpu(), want_lu, atol=TOL[dtype] * n, rtol=TOL[dtype] * n)
    assert lu.stride() == want_lu.stride()


# 63/64: either side of the threshold; 100: odd, several 16-wide panels; 257: a partial last
# panel; rectangular (tall and wide, the wide one swaps and solves columns past min(m, n)).
SHAPES = [(63, 63), (64, 64), (2, 100, 100), (150, 90), (3, 70, 129)]
CASES = [(d, s) for d in TOL for s in SHAPES]
CASES += [(torch.float32, (257, 257)), (torch.float64, (257, 257))]


@pytest.mark.parametrize("dtype,shape", CASES)
def test_blocked_lu_factor_matches_lapack(dtype, shape):
    check_lu(rand(shape, dtype), dtype)


def test_zero_batch_and_non_contiguous_input():
    a = rand((0, 80, 80), torch.float64)
    with torch_ocl.strict():
        lu, piv, info = torch.linalg.lu_factor_ex(a.to("ocl"))
    assert lu.shape == (0, 80, 80) and piv.shape == (0, 80) and info.shape == (0,)
    base = rand((3, 96, 200), torch.float64)
    check_lu(base[:, :, ::2].transpose(-2, -1)[::2], torch.float64)  # strided, transposed view


def test_row_major_out_and_column_major_triangular_operand():
    # The blocked kernels take the LU output's column-major layout (no transposing copy) and a
    # row-major out= too; the triangular solve a column-major A as it is.
    a = rand((2, 130, 130), torch.float64, seed=8)
    lu = torch.empty(2, 130, 130, dtype=torch.float64, device="ocl")
    piv = torch.empty(2, 130, dtype=torch.int32, device="ocl")
    info = torch.empty(2, dtype=torch.int32, device="ocl")
    with torch_ocl.strict():
        torch.linalg.lu_factor_ex(a.to("ocl"), out=(lu, piv, info))
        t = a.tril().to("ocl").mT.contiguous().mT + 130 * torch.eye(130, device="ocl")
        x = torch.linalg.solve_triangular(t, a.to("ocl"), upper=False)
    want = torch.linalg.lu_factor_ex(a)
    assert_close(lu.cpu(), want.LU, atol=1e-10, rtol=1e-10)
    assert torch.equal(piv.cpu(), want.pivots) and torch.equal(info.cpu(), want.info)
    want_x = torch.linalg.solve_triangular(t.cpu(), a, upper=False)
    assert_close(x.cpu(), want_x, atol=1e-12, rtol=1e-10)


def test_info_is_the_first_zero_pivot_in_any_panel():
    # singular in the first panel, a middle panel and the last column, one per matrix
    a = rand((3, 150, 150), torch.float64, seed=3)
    a[0, :, 5] = 0
    a[1, :, 77] = 0
    a[2, :, 149] = 0
    with torch_ocl.strict():
        lu, piv, info = torch.linalg.lu_factor_ex(a.to("ocl"))
        with pytest.raises(RuntimeError, match="U\\[6,6\\] is zero") as e:
            torch.linalg.lu_factor(a[0].to("ocl"))
    with pytest.raises(type(e.value), match="U\\[6,6\\] is zero"):  # CPU's error type
        torch.linalg.lu_factor(a[0])
    want = torch.linalg.lu_factor_ex(a)
    assert info.cpu().tolist() == want.info.tolist() == [6, 78, 150]
    assert torch.equal(piv.cpu(), want.pivots)
    assert_close(lu.cpu(), want.LU, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_solve_inv_det_slogdet_and_linalg_lu(dtype):
    n = 200
    a = rand((2, n, n), dtype, seed=1)
    b = rand((2, n, 9), dtype, seed=2)
    tol = TOL[dtype] * 50
    with torch_ocl.strict():
        ad, bd = a.to("ocl"), b.to("ocl")
        x = torch.linalg.solve(ad, bd)
        xv = torch.linalg.solve(ad, bd[..., 0])  # one right-hand side: the blocked solve too
        xl = torch.linalg.solve(ad, bd.mT, left=False)
        inv = torch.linalg.inv(ad)
        det = torch.linalg.det(ad)
        sign, logabs = torch.linalg.slogdet(ad)
        if not dtype.is_complex:  # complex linalg.lu is still a counted fallback (lu_unpack)
            p, l, u = torch.linalg.lu(ad)
        lu, piv = torch.linalg.lu_factor(ad)
        xa = torch.linalg.lu_solve(lu, piv, bd, adjoint=True)
    assert_close(x.cpu(), torch.linalg.solve(a, b), atol=tol, rtol=tol)
    assert_close(xv.cpu(), torch.linalg.solve(a, b[..., 0]), atol=tol, rtol=tol)
    assert_close(xl.cpu(), torch.linalg.solve(a, b.mT, left=False), atol=tol, rtol=tol)
    assert_close(inv.cpu(), torch.linalg.inv(a), atol=tol, rtol=tol)
    ws, wl = torch.linalg.slogdet(a)
    assert_close(sign.cpu(), ws, atol=tol, rtol=tol)
    assert_close(logabs.cpu(), wl, atol=tol, rtol=tol)
    assert_close(det.cpu(), torch.linalg.det(a), atol=0, rtol=tol * n)
    if not dtype.is_complex:
        wp, wl_, wu = torch.linalg.lu(a)
        assert torch.equal(p.cpu(), wp)
        assert_close(l.cpu(), wl_, atol=tol, rtol=tol)
        assert_close(u.cpu(), wu, atol=tol * n, rtol=tol)
    assert_close(xa.cpu(), torch.linalg.solve(a.mH, b), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_blocked_triangular_solve(dtype, upper, unit):
    n = 200  # 4 blocks of 64, the last one short; 48 right-hand sides (n * k >= 8192)
    a = rand((2, n, n), dtype, seed=4)
    a = (a.triu() if upper else a.tril()) + n * torch.eye(n, dtype=dtype)
    b = rand((2, n, 48), dtype, seed=5)
    tol = TOL[dtype] * 10
    with torch_ocl.strict():
        x = torch.linalg.solve_triangular(a.to("ocl"), b.to("ocl"), upper=upper, unitriangular=unit)
        xr = torch.linalg.solve_triangular(a.to("ocl"), b.mT.to("ocl"), upper=upper, left=False)
    want = torch.linalg.solve_triangular(a, b, upper=upper, unitriangular=unit)
    assert_close(x.cpu(), want, atol=tol, rtol=tol)
    want_r = torch.linalg.solve_triangular(a, b.mT, upper=upper, left=False)
    assert_close(xr.cpu(), want_r, atol=tol, rtol=tol)


def test_gradients_of_solve_and_det_through_the_blocked_path():
    n = 96
    a = rand((n, n), torch.float64, seed=6) + n**0.5 * torch.eye(n, dtype=torch.float64)
    b = rand((n, 10), torch.float64, seed=7)
    grads = []
    for dev in ["ocl", "cpu"]:
        ad = a.to(dev).requires_grad_()
        bd = b.to(dev).requires_grad_()
        with torch_ocl.strict():
            loss = torch.linalg.solve(ad, bd).square().sum() + torch.linalg.slogdet(ad)[1]
            loss = loss + torch.linalg.det(ad / 3).abs().log()
            loss.backward()
        grads.append((ad.grad.cpu(), bd.grad.cpu()))
    assert_close(grads[0][0], grads[1][0], atol=1e-9, rtol=1e-9)
    assert_close(grads[0][1], grads[1][1], atol=1e-9, rtol=1e-9)
