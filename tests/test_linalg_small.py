"""Cholesky, LU (solve, inv, det, slogdet) and triangular solves on the device against CPU in strict mode: linalg.cholesky(_ex)
(lower/upper, batches, n = 0 and 1, not positive definite: info and the error), solve_triangular
(left/right, upper/lower, unit diagonal, broadcast batches, strided B), cholesky_solve,
cholesky_inverse, triangular_solve, gradients, float64."""

import pytest
import torch

import torch_ocl

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}


def spd(*batch, n=5, seed=0, dtype=torch.float32):
    a = torch.randn(*batch, n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (a @ a.mT + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def tri(*batch, n=5, upper=False, seed=1, dtype=torch.float32):
    a = torch.randn(*batch, n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    a = a.triu() if upper else a.tril()
    return (a + 3 * torch.eye(n, dtype=torch.float64)).to(dtype)


def same(fn, *inputs, dtype=torch.float32, grads=True):
    ci = [t.to(dtype).clone().requires_grad_(grads) for t in inputs]
    ref = fn(*ci)
    refs = ref if isinstance(ref, tuple) else (ref,)
    oi = [t.to(dtype).to("ocl").requires_grad_(grads) for t in inputs]
    with torch_ocl.strict():
        got = fn(*oi)
        gots = got if isinstance(got, tuple) else (got,)
        if grads:
            sum((g.float() * (i + 1)).sum() for i, g in enumerate(gots) if g.is_floating_point()).backward()
    if grads:
        sum((r.float() * (i + 1)).sum() for i, r in enumerate(refs) if r.is_floating_point()).backward()
    for g, r in zip(gots, refs):
        torch.testing.assert_close(g.detach().cpu(), r.detach(), **TOL.get(r.dtype, {}))
    if grads:
        for a, b in zip(oi, ci):
            torch.testing.assert_close(a.grad.cpu(), b.grad, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper, dtype):
    for a in (spd(n=5, dtype=dtype), spd(3, n=7, dtype=dtype), spd(2, 1, n=1, dtype=dtype),
              spd(n=300, dtype=dtype)):
        same(lambda t: torch.linalg.cholesky(t, upper=upper), a, dtype=dtype)
        same(lambda t: torch.linalg.cholesky_ex(t, upper=upper), a, dtype=dtype, grads=False)
    same(lambda t: torch.cholesky(t, upper), spd(2, n=4, dtype=dtype), dtype=dtype)


def test_cholesky_not_positive_definite(ocl):
    a = spd(3, n=4)
    a[1, 2, 2] = -100.0
    ref_l, ref_info = torch.linalg.cholesky_ex(a)
    with torch_ocl.strict():
        l, info = torch.linalg.cholesky_ex(a.to(ocl))
    assert info.cpu().tolist() == ref_info.tolist() == [0, 3, 0]
    torch.testing.assert_close(l.cpu()[0], ref_l[0], **TOL[torch.float32])
    with pytest.raises(torch.linalg.LinAlgError, match="leading minor of order 3"):
        torch.linalg.cholesky(a.to(ocl))
    empty_l, empty_info = torch.linalg.cholesky_ex(torch.empty(2, 0, 0, device=ocl))
    assert empty_l.shape == (2, 0, 0) and empty_info.cpu().tolist() == [0, 0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular(upper, left, dtype):
    a = tri(2, n=5, upper=upper, dtype=dtype)
    b = torch.randn(3, 2, 5, 4, dtype=dtype) if left else torch.randn(3, 2, 4, 5, dtype=dtype)
    same(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left), a, b, dtype=dtype)
    same(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left,
                                                     unitriangular=True), a, b, dtype=dtype)
    strided = torch.randn(5, 8, dtype=dtype)[:, ::2] if left else torch.randn(4, 10, dtype=dtype)[:, ::2]
    same(lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left), a[0], strided,
         dtype=dtype)


def test_legacy_and_derived_forms():
    a = spd(2, n=5)
    l = torch.linalg.cholesky(a)
    b = torch.randn(2, 5, 3)
    for upper in (False, True):
        f = l.mT.contiguous() if upper else l
        same(lambda x, y: torch.cholesky_solve(x, y, upper=upper), b, f)
        same(lambda y: torch.cholesky_inverse(y, upper=upper), f[0])
    for transpose in (False, True):
        for unit in (False, True):
            same(lambda x, y: torch.triangular_solve(x, y, upper=True, transpose=transpose,
                                                     unitriangular=unit), b, tri(2, upper=True))


def test_errors(ocl):
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        torch.linalg.cholesky(torch.randn(3, 4, device=ocl))
    with pytest.raises(RuntimeError, match="Incompatible shapes of A and B"):
        torch.linalg.solve_triangular(torch.eye(3, device=ocl), torch.randn(4, 2, device=ocl),
                                      upper=False)


def general(*batch, n=5, seed=2, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*batch, n, n, generator=g, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lu_factor_and_solve(dtype):
    for a in (general(n=6, dtype=dtype), general(3, n=4, dtype=dtype), general(n=1, dtype=dtype),
              general(n=70, dtype=dtype)):
        ref_lu, ref_piv = torch.linalg.lu_factor(a)
        with torch_ocl.strict():
            lu, piv = torch.linalg.lu_factor(a.to("ocl"))
        assert torch.equal(piv.cpu(), ref_piv)  # the same pivots as LAPACK
        torch.testing.assert_close(lu.cpu(), ref_lu, **TOL[dtype])
        for left in (True, False):
            for adjoint in (False, True):
                b = torch.randn(*a.shape[:-1], 3, dtype=dtype) if left else torch.randn(
                    *a.shape[:-2], 3, a.shape[-1], dtype=dtype)
                ref = torch.linalg.lu_solve(ref_lu, ref_piv, b, left=left, adjoint=adjoint)
                with torch_ocl.strict():
                    got = torch.linalg.lu_solve(ref_lu.to("ocl"), ref_piv.to("ocl"), b.to("ocl"),
                                                left=left, adjoint=adjoint)
                torch.testing.assert_close(got.cpu(), ref, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_solve_inv_det(dtype):
    a, b = general(2, n=5, dtype=dtype), torch.randn(2, 5, 3, dtype=dtype)
    same(torch.linalg.solve, a, b, dtype=dtype)
    same(lambda x, y: torch.linalg.solve(x, y, left=False), a, b.mT.contiguous(), dtype=dtype)
    same(torch.linalg.solve, a[0], b[0, :, 0], dtype=dtype)  # a vector right-hand side
    same(torch.linalg.inv, a, dtype=dtype)
    same(torch.linalg.det, a, dtype=dtype)
    same(torch.linalg.det, a[0].mT, dtype=dtype)  # not contiguous
    same(lambda x: torch.linalg.matrix_power(x, -2), a, dtype=dtype)
    same(torch.linalg.slogdet, a, dtype=dtype)
    same(torch.logdet, spd(2, n=5, dtype=dtype), dtype=dtype)
    same(torch.linalg.slogdet, a[0].mT, dtype=dtype)


def test_singular_matrices(ocl):
    a = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    with torch_ocl.strict():
        _, _, info = torch.linalg.lu_factor_ex(a.to(ocl))
        assert info.item() == torch.linalg.lu_factor_ex(a)[2].item() == 2
        assert torch.linalg.det(a.to(ocl)).item() == 0.0
        sign, logabs = torch.linalg.slogdet(a.to(ocl))
        assert sign.item() == 0.0 and logabs.item() == -float("inf")
        _, inv_info = torch.linalg.inv_ex(a.to(ocl))
        assert inv_info.item() == 2
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        torch.linalg.inv(a.to(ocl))
