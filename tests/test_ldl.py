"""linalg.ldl_factor(_ex) / ldl_solve on ocl against CPU (LAPACK sytrf/sytrs): the same pivots,
the same LD and solutions, in strict mode (no CPU fallback)."""

import pytest
import torch
import torch_ocl


def _sym(batch, n, dtype, kind, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*batch, n, n, generator=g, dtype=torch.float64)
    a = a + a.mT
    if kind == "pd":
        a = a @ a.mT + torch.eye(n, dtype=torch.float64)
    elif kind == "zero_pivot" and n > 0:
        a[..., 0, 0] = 0  # forces 2x2 pivots
    return a.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["indefinite", "pd", "zero_pivot"])
@pytest.mark.parametrize("batch,n", [((), 1), ((), 7), ((3,), 5), ((2, 2), 13), ((), 0), ((0,), 3)])
def test_ldl_factor_and_solve_match_cpu(dtype, kind, batch, n):
    a = _sym(batch, n, dtype, kind, seed=n * 10 + len(batch))
    ld, piv, info = torch.linalg.ldl_factor_ex(a)
    b = torch.randn(*batch, n, 3, generator=torch.Generator().manual_seed(1), dtype=dtype)
    x = torch.linalg.ldl_solve(ld, piv, b)
    with torch_ocl.strict():
        ld2, piv2, info2 = torch.linalg.ldl_factor_ex(a.to("ocl"))
        x2 = torch.linalg.ldl_solve(ld2, piv2, b.to("ocl"))
        # ldl_factor raises on a singular D (as CPU does): only for the nonsingular ones.
        ld3, piv3 = (torch.linalg.ldl_factor(a.to("ocl"), hermitian=True)
                     if (info == 0).all() else (ld2, piv2))
    assert ld2.shape == ld.shape and ld2.stride() == ld.stride() and piv2.dtype == torch.int32
    assert torch.equal(piv2.cpu(), piv) and torch.equal(info2.cpu(), info)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(ld2.cpu(), ld, atol=tol, rtol=tol)
    torch.testing.assert_close(ld3.cpu(), ld, atol=tol, rtol=tol)
    assert torch.equal(piv3.cpu(), piv)
    torch.testing.assert_close(x2.cpu(), x, atol=tol * 10, rtol=tol * 10)


def test_non_contiguous_broadcast_and_out():
    a = _sym((2,), 6, torch.float32, "indefinite", 3).mT  # symmetric, so mT is a transposed view
    a_ocl = a.to("ocl").mT.contiguous().mT  # non-contiguous on ocl too
    ld, piv, _ = torch.linalg.ldl_factor_ex(a)
    b = torch.randn(6, 5)[:, ::2]  # non-contiguous, broadcast against the batch of 2
    x = torch.linalg.ldl_solve(ld, piv, b)
    with torch_ocl.strict():
        ld2 = torch.empty(0, device="ocl")
        piv2 = torch.empty(0, device="ocl", dtype=torch.int32)
        info2 = torch.empty(0, device="ocl", dtype=torch.int32)
        torch.linalg.ldl_factor_ex(a_ocl, out=(ld2, piv2, info2))
        out = torch.empty(0, device="ocl")
        torch.linalg.ldl_solve(ld2, piv2, b.to("ocl"), out=out)
    assert torch.equal(piv2.cpu(), piv)
    torch.testing.assert_close(ld2.cpu(), ld, atol=1e-5, rtol=1e-5)
    assert out.shape == x.shape == (2, 6, 3)
    torch.testing.assert_close(out.cpu(), x, atol=1e-4, rtol=1e-4)


def test_singular_and_errors():
    a = torch.zeros(4, 4)
    a[2, 2] = 1.0
    ld, piv, info = torch.linalg.ldl_factor_ex(a)
    with pytest.raises(RuntimeError):
        torch.linalg.ldl_factor(a)
    with torch_ocl.strict():
        ld2, piv2, info2 = torch.linalg.ldl_factor_ex(a.to("ocl"))
        assert info2.item() == info.item() == 1
        assert torch.equal(piv2.cpu(), piv)
        with pytest.raises(RuntimeError):  # CPU raises too (info 1)
            torch.linalg.ldl_factor(a.to("ocl"))
        with pytest.raises(RuntimeError, match="square"):
            torch.linalg.ldl_factor_ex(torch.randn(3, 4, device="ocl"))
        with pytest.raises(RuntimeError, match="pivots"):
            torch.linalg.ldl_solve(ld2, piv2[:3], torch.randn(4, 1, device="ocl"))
    # int64 pivots are accepted, as on CPU.
    s = _sym((), 5, torch.float32, "indefinite", 9)
    ld, piv = torch.linalg.ldl_factor(s)
    b = torch.randn(5, 2)
    with torch_ocl.strict():
        x = torch.linalg.ldl_solve(ld.to("ocl"), piv.long().to("ocl"), b.to("ocl"))
    torch.testing.assert_close(x.cpu(), torch.linalg.ldl_solve(ld, piv.long(), b), atol=1e-4,
                               rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("kind", ["indefinite", "pd", "zero_pivot"])
@pytest.mark.parametrize("batch,n", [((), 1), ((2,), 6), ((), 11), ((0,), 3)])
def test_complex_symmetric_and_hermitian(dtype, hermitian, kind, batch, n):
    # LAPACK's zsytrf (hermitian=False: A = A^T) and zhetrf (A = A^H) on CPU.
    g = torch.Generator().manual_seed(n + 3 * hermitian)
    a = torch.randn((*batch, n, n), generator=g, dtype=dtype)
    a = a + (a.mH if hermitian else a.mT)
    if kind == "pd":
        a = a @ (a.mH if hermitian else a.mT) + torch.eye(n, dtype=dtype)
    elif kind == "zero_pivot" and n > 0:
        a[..., 0, 0] = 0
    ld, piv, info = torch.linalg.ldl_factor_ex(a, hermitian=hermitian)
    b = torch.randn((*batch, n, 2), generator=g, dtype=dtype)
    x = torch.linalg.ldl_solve(ld, piv, b, hermitian=hermitian)
    with torch_ocl.strict():
        ld2, piv2, info2 = torch.linalg.ldl_factor_ex(a.to("ocl"), hermitian=hermitian)
        x2 = torch.linalg.ldl_solve(ld2, piv2, b.to("ocl"), hermitian=hermitian)
        # a conjugate view of the right-hand side is resolved, not read raw
        x3 = torch.linalg.ldl_solve(ld2, piv2, b.to("ocl").conj(), hermitian=hermitian)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.complex64 else dict(rtol=1e-9, atol=1e-9)
    assert torch.equal(piv2.cpu(), piv) and torch.equal(info2.cpu(), info)
    torch.testing.assert_close(ld2.cpu(), ld, **tol)
    torch.testing.assert_close(x2.cpu(), x, equal_nan=True, **tol)
    ref3 = torch.linalg.ldl_solve(ld, piv, b.conj(), hermitian=hermitian)
    torch.testing.assert_close(x3.cpu(), ref3, equal_nan=True, **tol)
