"""Complex geqrf / linalg.qr / householder_product / ormqr (LAPACK zgeqrf's conventions, so R,
tau and the reflectors are CPU's), the complex SVD and eigh on ocl against CPU, in strict mode:
tall, wide, square, batched, zero-size, non-contiguous and conjugate inputs."""

import pytest
import torch
import torch_ocl


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == torch.complex64 else dict(rtol=1e-10,
                                                                             atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (6, 1), (0, 3), (2, 0, 0)])
def test_qr_family_matches_cpu(dtype, shape):
    g = torch.Generator().manual_seed(sum(shape))
    A = torch.randn(shape, generator=g, dtype=dtype)
    m, n = shape[-2:]
    ref = [*torch.geqrf(A), *torch.linalg.qr(A), *torch.linalg.qr(A, mode="complete"),
           torch.linalg.qr(A, mode="r")[1]]
    with torch_ocl.strict():
        Ao = A.to("ocl")
        out = [*torch.geqrf(Ao), *torch.linalg.qr(Ao), *torch.linalg.qr(Ao, mode="complete"),
               torch.linalg.qr(Ao, mode="r")[1]]
    if m >= n:
        ref.append(torch.linalg.householder_product(*torch.geqrf(A)))
        with torch_ocl.strict():
            out.append(torch.linalg.householder_product(*torch.geqrf(Ao)))
    a, tau = torch.geqrf(A)
    for left in (True, False):
        for transpose in (True, False):
            other = torch.randn((*shape[:-2], m, 3) if left else (*shape[:-2], 3, m),
                                generator=g, dtype=dtype)
            ref.append(torch.ormqr(a, tau, other, left=left, transpose=transpose))
            with torch_ocl.strict():
                out.append(torch.ormqr(a.to("ocl"), tau.to("ocl"), other.to("ocl"), left=left,
                                       transpose=transpose))
    for o, r in zip(out, ref):
        assert o.shape == r.shape and o.dtype == r.dtype
        torch.testing.assert_close(o.cpu(), r, **_tol(dtype))


def test_views_are_resolved():
    g = torch.Generator().manual_seed(7)
    A = torch.randn(6, 4, generator=g, dtype=torch.complex64)
    with torch_ocl.strict():
        Ao = A.to("ocl")
        q1, r1 = torch.linalg.qr(Ao.conj())
        q2, r2 = torch.linalg.qr(Ao.mT.mT[:, ::2])
    for (q, r), src in (((q1, r1), A.conj()), ((q2, r2), A[:, ::2])):
        rq, rr = torch.linalg.qr(src)
        torch.testing.assert_close(q.cpu(), rq, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(r.cpu(), rr, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (6, 1), (0, 3), (2, 0, 2)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_cpu(dtype, shape, full):
    # Singular vectors are unique up to a phase each: compare S, |U|, |Vh| (distinct random
    # singular values), the reconstruction and unitarity.
    g = torch.Generator().manual_seed(sum(shape) + full)
    A = torch.randn(shape, generator=g, dtype=dtype)
    Ur, Sr, Vhr = torch.linalg.svd(A, full_matrices=full)
    with torch_ocl.strict():
        Ao = A.to("ocl")
        U, S, Vh = torch.linalg.svd(Ao, full_matrices=full)
        sv = torch.linalg.svdvals(Ao.mT)  # non-contiguous, the transposed problem
    U, S, Vh = U.cpu(), S.cpu(), Vh.cpu()
    assert (U.shape, S.shape, Vh.shape) == (Ur.shape, Sr.shape, Vhr.shape)
    assert S.dtype == Sr.dtype and U.dtype == dtype
    tol = _tol(dtype)
    torch.testing.assert_close(S, Sr, **tol)
    torch.testing.assert_close(sv.cpu(), Sr, **tol)
    k = min(shape[-2:])
    torch.testing.assert_close(U[..., :k].abs(), Ur[..., :k].abs(), **tol)
    torch.testing.assert_close(Vh[..., :k, :].abs(), Vhr[..., :k, :].abs(), **tol)
    torch.testing.assert_close((U[..., :k] * S.unsqueeze(-2).to(dtype)) @ Vh[..., :k, :], A, **tol)
    for q in (U, Vh.mH):
        eye = torch.eye(q.shape[-1], dtype=dtype).expand(*q.shape[:-2], -1, -1)
        torch.testing.assert_close(q.mH @ q, eye, **tol)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 3, 8, 8), (0, 4, 4), (7, 7)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_cpu(dtype, shape, uplo):
    # Eigenvectors are unique up to a phase each: compare the eigenvalues, |V| (distinct random
    # eigenvalues) and the reconstruction; the diagonal's imaginary part is ignored, as on CPU.
    g = torch.Generator().manual_seed(sum(shape))
    A = torch.randn(shape, generator=g, dtype=dtype)
    A = A + A.mH
    Ain = A.clone()
    Ain.diagonal(0, -2, -1).imag.fill_(0.25)
    w, V = torch.linalg.eigh(Ain, UPLO=uplo)
    with torch_ocl.strict():
        w2, V2 = torch.linalg.eigh(Ain.to("ocl"), UPLO=uplo)
        w3 = torch.linalg.eigvalsh(Ain.to("ocl").mT.mT, UPLO=uplo)
    w2, V2 = w2.cpu(), V2.cpu()
    tol = _tol(dtype)
    assert w2.dtype == w.dtype and V2.dtype == dtype
    torch.testing.assert_close(w2, w, **tol)
    torch.testing.assert_close(w3.cpu(), w, **tol)
    torch.testing.assert_close(V2.abs(), V.abs(), **tol)
    torch.testing.assert_close((V2 * w2.unsqueeze(-2).to(dtype)) @ V2.mH, A, **tol)
