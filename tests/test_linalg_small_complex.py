"""Complex cholesky / triangular solves / LU and what is built on them (solve, inv, det,
slogdet, cholesky_solve, cholesky_inverse) on ocl against CPU in strict mode: batched, odd
sizes, conjugate and non-contiguous views, zero-size."""

import pytest
import torch
import torch_ocl


def _c(shape, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=dtype)


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == torch.complex64 else dict(rtol=1e-9, atol=1e-9)


OPS = {
    "cholesky": lambda A, H, B: torch.linalg.cholesky(H),
    "cholesky_upper": lambda A, H, B: torch.linalg.cholesky(H, upper=True),
    "cholesky_ex": lambda A, H, B: torch.linalg.cholesky_ex(H),
    "cholesky_solve": lambda A, H, B: torch.cholesky_solve(B, torch.linalg.cholesky(H)),
    "cholesky_solve_upper": lambda A, H, B: torch.cholesky_solve(
        B, torch.linalg.cholesky(H, upper=True), upper=True),
    "cholesky_inverse": lambda A, H, B: torch.cholesky_inverse(torch.linalg.cholesky(H)),
    "lu_factor": lambda A, H, B: torch.linalg.lu_factor(A),
    "lu_solve_adjoint": lambda A, H, B: torch.linalg.lu_solve(*torch.linalg.lu_factor(A), B,
                                                              adjoint=True),
    "lu_solve_right": lambda A, H, B: torch.linalg.lu_solve(*torch.linalg.lu_factor(A), B.mT,
                                                            left=False),
    "solve": lambda A, H, B: torch.linalg.solve(A, B),
    "solve_conj_view": lambda A, H, B: torch.linalg.solve(A.conj(), B.conj()),
    "solve_noncontig": lambda A, H, B: torch.linalg.solve(A.mT, B[..., ::2]),
    "inv": lambda A, H, B: torch.linalg.inv(A),
    "det": lambda A, H, B: torch.linalg.det(A),
    "slogdet": lambda A, H, B: torch.linalg.slogdet(A),
    "solve_triangular": lambda A, H, B: torch.linalg.solve_triangular(A.triu(), B, upper=True),
    "solve_triangular_right_unit": lambda A, H, B: torch.linalg.solve_triangular(
        A.tril(), B.mT, upper=False, left=False, unitriangular=True),
    "triangular_solve_T": lambda A, H, B: torch.triangular_solve(B, A.tril(), upper=False,
                                                                 transpose=True),
}


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("batch,n", [((), 1), ((), 5), ((3,), 7), ((2, 0), 3), ((), 0)])
@pytest.mark.parametrize("op", sorted(OPS))
def test_matches_cpu(dtype, batch, n, op):
    A = _c((*batch, n, n), n, dtype) + 3 * torch.eye(n, dtype=dtype)
    H = A @ A.mH + torch.eye(n, dtype=dtype)
    B = _c((*batch, n, 4), n + 1, dtype)
    ref = OPS[op](A, H, B)
    with torch_ocl.strict():
        out = OPS[op](A.to("ocl"), H.to("ocl"), B.to("ocl"))
    ref = ref if isinstance(ref, tuple) else (ref,)
    out = out if isinstance(out, tuple) else (out,)
    for a, b in zip(out, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        torch.testing.assert_close(a.cpu(), b, **_tol(dtype))


def test_not_positive_definite_info():
    H = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.complex64)
    ref = torch.linalg.cholesky_ex(H)
    with torch_ocl.strict():
        out = torch.linalg.cholesky_ex(H.to("ocl"))
        with pytest.raises(torch.linalg.LinAlgError):
            torch.linalg.cholesky(H.to("ocl"))
    assert out.info.item() == ref.info.item() == 2
