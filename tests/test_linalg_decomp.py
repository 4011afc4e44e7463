"""QR (geqrf, linalg.qr, householder_product, ormqr), eigh/eigvalsh and the SVD on the device
against CPU in strict mode: values where they are unique (R, tau, Q of LAPACK's conventions,
eigenvalues, singular values), reconstructions and orthogonality where vectors' signs are free,
gradients through the autograd formulas, batches, non-contiguous and zero-size inputs,
ill-conditioned and rank-deficient matrices, float32 and float64, errors."""

import pytest
import torch

import torch_ocl

TOL = {torch.float32: dict(rtol=2e-4, atol=2e-4), torch.float64: dict(rtol=1e-9, atol=1e-9)}
TOL[torch.complex64], TOL[torch.complex128] = TOL[torch.float32], TOL[torch.float64]
DTYPES = [torch.float32, torch.float64]
# LU, lu_unpack, linalg.lu and lstsq also run complex
LU_DTYPES = DTYPES + [torch.complex64, torch.complex128]


def rand(*shape, seed=0, dtype=torch.float32):
    wide = torch.complex128 if dtype.is_complex else torch.float64
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=wide).to(dtype)


def scalar(t):
    """A real scalar of t for backward (complex: the real and imaginary parts weighted apart)."""
    return t.real.sum() + 0.5 * t.imag.sum() if t.is_complex() else t.sum()


def close(a, b, dtype, scale=1.0):
    t = TOL[dtype]
    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=t["rtol"] * scale, atol=t["atol"] * scale)


def orthonormal_cols(q, dtype):
    k = q.shape[-1]
    eye = torch.eye(k, dtype=q.dtype).expand(*q.shape[:-2], k, k)
    close(q.mH.cpu() @ q.cpu(), eye, dtype, scale=10)


SHAPES = [(5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 3, 4, 7), (1, 1), (0, 3), (3, 0), (0, 4, 4), (40, 33)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_geqrf_and_qr(shape, dtype):
    a = rand(*shape, dtype=dtype)
    with torch_ocl.strict():
        ga, gt = torch.geqrf(a.to("ocl"))
        got = {mode: torch.linalg.qr(a.to("ocl"), mode=mode) for mode in ("reduced", "complete", "r")}
    ra, rt = torch.geqrf(a)
    close(ga, ra, dtype, scale=10)
    close(gt, rt, dtype, scale=10)
    for mode, (q, r) in got.items():
        rq, rr = torch.linalg.qr(a, mode=mode)
        assert q.shape == rq.shape and r.shape == rr.shape
        close(r, rr, dtype, scale=10)
        if mode != "r":
            close(q, rq, dtype, scale=10)
            orthonormal_cols(q, dtype)
            close(q.cpu() @ r.cpu(), a, dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_noncontiguous_rank_deficient_and_grad(dtype):
    base = rand(3, 8, 6, dtype=dtype)
    a = base.mT[:, ::2, :]  # (3, 3, 8) strided
    deficient = rand(6, 2, seed=3, dtype=dtype) @ rand(2, 5, seed=4, dtype=dtype)  # rank 2
    for x in (a, deficient):
        with torch_ocl.strict():
            q, r = torch.linalg.qr(x.to("ocl"))
        close(q.cpu() @ r.cpu(), x, dtype, scale=10)
        orthonormal_cols(q, dtype)
    # gradient through linalg_qr_backward (reduced, m >= n) and householder_product's
    x = rand(2, 6, 4, seed=5, dtype=dtype)
    xc, xo = x.clone().requires_grad_(), x.to("ocl").requires_grad_()
    gq, gr = rand(2, 6, 4, seed=6, dtype=dtype), rand(2, 4, 4, seed=7, dtype=dtype)
    q, r = torch.linalg.qr(xc)
    torch.autograd.backward((q, r), (gq, gr))
    with torch_ocl.strict():
        qo, ro = torch.linalg.qr(xo)
        torch.autograd.backward((qo, ro), (gq.to("ocl"), gr.to("ocl")))
    close(xo.grad, xc.grad, dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_product_and_ormqr(dtype):
    for shape, k in (((5, 3), 3), ((5, 3), 2), ((2, 4, 4), 4), ((3, 6, 2), 0), ((0, 0), 0)):
        v = rand(*shape, dtype=dtype)
        tau = rand(*shape[:-2], k, seed=1, dtype=dtype)
        with torch_ocl.strict():
            got = torch.linalg.householder_product(v.to("ocl"), tau.to("ocl"))
        close(got, torch.linalg.householder_product(v, tau), dtype, scale=10)
    a = rand(2, 5, 3, dtype=dtype)
    ra, rt = torch.geqrf(a)
    for left in (True, False):
        for transpose in (False, True):
            c = rand(2, 5, 4, seed=2, dtype=dtype) if left else rand(2, 4, 5, seed=2, dtype=dtype)
            c = c.mT.contiguous().mT  # column-major
            with torch_ocl.strict():
                got = torch.ormqr(ra.to("ocl"), rt.to("ocl"), c.to("ocl"), left, transpose)
            close(got, torch.ormqr(ra, rt, c, left, transpose), dtype, scale=10)
    # gradient of householder_product (the matrix's float32 cell was wrong before)
    v, tau = rand(4, 3, seed=8, dtype=dtype), rand(3, seed=9, dtype=dtype) * 0.5
    vc, tc = v.clone().requires_grad_(), tau.clone().requires_grad_()
    vo, to = v.to("ocl").requires_grad_(), tau.to("ocl").requires_grad_()
    g = rand(4, 3, seed=10, dtype=dtype)
    torch.linalg.householder_product(vc, tc).backward(g)
    with torch_ocl.strict():
        torch.linalg.householder_product(vo, to).backward(g.to("ocl"))
    close(vo.grad, vc.grad, dtype, scale=10)
    close(to.grad, tc.grad, dtype, scale=10)


def sym(*batch, n, seed=0, dtype=torch.float32):
    a = rand(*batch, n, n, seed=seed, dtype=torch.float64)
    return (a + a.mT).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(dtype):
    cases = [sym(n=5, dtype=dtype), sym(3, n=4, dtype=dtype), sym(n=1, dtype=dtype), sym(0, n=3, dtype=dtype),
             sym(n=0, dtype=dtype), sym(n=37, seed=2, dtype=dtype),
             torch.diag(torch.tensor([3.0, 1.0, 1.0, -2.0], dtype=dtype)),  # repeated eigenvalues
             torch.diag(torch.tensor([1e6, 1.0, 1e-6], dtype=dtype))]  # ill-conditioned
    for a in cases:
        for uplo in ("L", "U"):
            # garbage in the other triangle: only UPLO's is read
            if uplo == "L":
                x = a.tril() + torch.triu(torch.full_like(a, 7.0), 1)
            else:
                x = a.triu() + torch.tril(torch.full_like(a, 7.0), -1)
            with torch_ocl.strict():
                w, v = torch.linalg.eigh(x.to("ocl"), UPLO=uplo)
                wv = torch.linalg.eigvalsh(x.to("ocl"), UPLO=uplo)
            rw = torch.linalg.eigvalsh(x, UPLO=uplo)
            scale = 10 * max(1.0, float(a.abs().max()) if a.numel() else 1.0)
            close(w, rw, dtype, scale=scale)
            close(wv, rw, dtype, scale=scale)
            orthonormal_cols(v, dtype)
            close(v.cpu() @ torch.diag_embed(w.cpu()) @ v.cpu().mT, a, dtype, scale=scale)
    # non-contiguous input and the gradient (distinct eigenvalues; sign-invariant loss)
    a = sym(2, n=6, seed=4, dtype=dtype).mT.contiguous().mT
    ac, ao = a.clone().requires_grad_(), a.to("ocl").requires_grad_()
    w, v = torch.linalg.eigh(ac)
    (w.sum() + (v.abs() * torch.arange(6, dtype=dtype)).sum()).backward()
    with torch_ocl.strict():
        w, v = torch.linalg.eigh(ao)
        (w.sum() + (v.abs() * torch.arange(6, dtype=dtype).to("ocl")).sum()).backward()
    close(ao.grad, ac.grad, dtype, scale=50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 3, 4, 7), (1, 1), (0, 3), (3, 0),
                                   (2, 0, 0), (30, 21)])
def test_svd(shape, dtype):
    a = rand(*shape, dtype=dtype)
    for full in (False, True):
        with torch_ocl.strict():
            u, s, vh = torch.linalg.svd(a.to("ocl"), full_matrices=full)
            sv = torch.linalg.svdvals(a.to("ocl"))
        ru, rs, rvh = torch.linalg.svd(a, full_matrices=full)
        assert u.shape == ru.shape and s.shape == rs.shape and vh.shape == rvh.shape
        close(s, rs, dtype, scale=10)
        close(sv, rs, dtype, scale=10)
        orthonormal_cols(u, dtype)
        orthonormal_cols(vh.mT, dtype)
        k = s.shape[-1]
        close(u.cpu()[..., :k] @ torch.diag_embed(s.cpu()) @ vh.cpu()[..., :k, :], a, dtype, scale=10)
        close(u.cpu()[..., :k].abs(), ru[..., :k].abs(), dtype, scale=50)


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_rank_deficient_ill_conditioned_grad(dtype):
    deficient = rand(7, 2, seed=3, dtype=dtype) @ rand(2, 5, seed=4, dtype=dtype)  # rank 2
    zero = torch.zeros(3, 4, dtype=dtype)
    u0, _, v0 = torch.linalg.svd(rand(6, 6, seed=5, dtype=torch.float64))
    ill = (u0 @ torch.diag(torch.logspace(0, -6, 6, dtype=torch.float64)) @ v0).to(dtype)
    for a in (deficient, deficient.mT, zero, ill):
        for full in (False, True):
            with torch_ocl.strict():
                u, s, vh = torch.linalg.svd(a.to("ocl"), full_matrices=full)
            close(s, torch.linalg.svdvals(a), dtype, scale=10)
            orthonormal_cols(u, dtype)
            orthonormal_cols(vh.mT, dtype)
            k = s.shape[-1]
            close(u.cpu()[..., :k] @ torch.diag_embed(s.cpu()) @ vh.cpu()[..., :k, :], a, dtype, scale=10)
    # gradients through svd_backward, with sign-invariant outputs (as the OpInfo checks them)
    a = rand(2, 5, 3, seed=6, dtype=dtype).mT  # non-contiguous (2, 3, 5)
    ac, ao = a.clone().requires_grad_(), a.detach().to("ocl").requires_grad_()
    u, s, vh = torch.linalg.svd(ac, full_matrices=False)
    (s.sum() + (u @ vh).pow(2).mul(torch.arange(5.0, dtype=dtype)).sum()).backward()
    with torch_ocl.strict():
        u, s, vh = torch.linalg.svd(ao, full_matrices=False)
        (s.sum() + (u @ vh).pow(2).mul(torch.arange(5.0, dtype=dtype).to("ocl")).sum()).backward()
    close(ao.grad, ac.grad, dtype, scale=50)


def test_composites_native(ocl):
    a = rand(2, 5, 4, seed=11)
    sq = rand(4, 4, seed=12)
    with torch_ocl.strict():
        got = [torch.linalg.pinv(a.to(ocl)), torch.linalg.matrix_rank(a.to(ocl)), torch.linalg.cond(sq.to(ocl)),
               torch.linalg.matrix_norm(a.to(ocl), "nuc"), torch.linalg.matrix_norm(a.to(ocl), 2),
               torch.linalg.pinv(sym(n=4).to(ocl), hermitian=True)]
    ref = [torch.linalg.pinv(a), torch.linalg.matrix_rank(a), torch.linalg.cond(sq),
           torch.linalg.matrix_norm(a, "nuc"), torch.linalg.matrix_norm(a, 2), torch.linalg.pinv(sym(n=4), hermitian=True)]
    for g, r in zip(got, ref):
        if r.is_floating_point():
            close(g, r, torch.float32, scale=20)
        else:
            assert torch.equal(g.cpu(), r)


def test_errors(ocl):
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        torch.geqrf(torch.randn(3, device=ocl))
    with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"):
        torch.linalg.householder_product(torch.randn(2, 3, device=ocl), torch.randn(2, device=ocl))
    with pytest.raises(RuntimeError, match="tau dtype Double does not match input dtype Float"):
        torch.linalg.householder_product(torch.randn(3, 2, device=ocl), torch.randn(2, dtype=torch.float64, device=ocl))
    with pytest.raises(RuntimeError, match=r"other.shape\[-2\] must be equal to input.shape\[-2\]"):
        torch.ormqr(torch.randn(4, 3, device=ocl), torch.randn(3, device=ocl), torch.randn(3, 3, device=ocl))
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        torch.linalg.eigh(torch.randn(3, 4, device=ocl))
    with pytest.raises(RuntimeError, match="qr received unrecognized mode"):
        torch.linalg.qr(torch.randn(3, 4, device=ocl), mode="bad")
    with pytest.raises(RuntimeError, match="driver"):
        torch.linalg.svd(torch.randn(3, 4, device=ocl), driver="gesvd")
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        torch.linalg.eigh(torch.randn(3, 3, device=ocl).half())
    # the process stays usable
    with torch_ocl.strict():
        torch.linalg.qr(torch.randn(3, 3, device=ocl))


@pytest.mark.parametrize("dtype", LU_DTYPES)
def test_lu_rectangular_unpack_and_linalg_lu(dtype):
    for shape in ((5, 3), (3, 5), (4, 4), (2, 6, 4), (0, 3), (3, 0), (2, 0, 0)):
        a = rand(*shape, dtype=dtype)
        with torch_ocl.strict():
            lu, piv = torch.linalg.lu_factor(a.to("ocl"))
            p, l, u = torch.lu_unpack(lu, piv)
            pl, ll, ul = torch.linalg.lu(a.to("ocl"))
        rlu, rpiv = torch.linalg.lu_factor(a)
        close(lu, rlu, dtype, scale=10)
        assert torch.equal(piv.cpu(), rpiv)
        for got in ((p, l, u), (pl, ll, ul)):
            for g, r in zip(got, torch.linalg.lu(a)):
                close(g, r, dtype, scale=10)
    # gradient of linalg.lu (rectangular) through lu_unpack and linalg_lu_backward
    a = rand(5, 3, seed=2, dtype=dtype)
    ac, ao = a.clone().requires_grad_(), a.to("ocl").requires_grad_()
    _, l, u = torch.linalg.lu(ac)
    (scalar(l) + 2 * scalar(u)).backward()
    with torch_ocl.strict():
        _, l, u = torch.linalg.lu(ao)
        (scalar(l) + 2 * scalar(u)).backward()
    close(ao.grad, ac.grad, dtype, scale=10)


@pytest.mark.parametrize("dtype", LU_DTYPES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq(driver, dtype):
    cases = [(rand(6, 4, dtype=dtype), rand(6, 2, seed=1, dtype=dtype)),
             (rand(2, 6, 4, dtype=dtype), rand(6, seed=1, dtype=dtype).unsqueeze(0).expand(2, 6)),  # vector b
             (rand(3, 3, 5, dtype=dtype), rand(1, 3, 2, seed=1, dtype=dtype)),  # m < n, broadcast
             (rand(4, 4, dtype=dtype), rand(4, 3, seed=1, dtype=dtype).mT.contiguous().mT),
             (rand(0, 3, dtype=dtype), rand(0, 2, dtype=dtype))]
    if driver not in ("gels",):  # rank-deficient: the minimum-norm solution, rank 2
        x, y = (rand(6, 2, seed=3) * 3).round(), (rand(2, 4, seed=4) * 3).round()  # exact in float32
        cases.append(((x @ y).to(dtype), rand(6, 2, seed=5, dtype=dtype)))
    for a, b in cases:
        with torch_ocl.strict():
            got = torch.linalg.lstsq(a.to("ocl"), b.to("ocl"), driver=driver)
        ref = torch.linalg.lstsq(a, b, driver=driver)
        for g, r in zip(got, ref):
            assert g.shape == r.shape and g.dtype == r.dtype
            if r.is_floating_point() or r.is_complex():
                close(g, r, dtype, scale=20)
            else:
                assert torch.equal(g.cpu(), r)
    # gradient (full rank, through linalg_lstsq_backward's pinv)
    a, b = rand(5, 3, seed=6, dtype=dtype), rand(5, 2, seed=7, dtype=dtype)
    ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
    ao, bo = a.to("ocl").requires_grad_(), b.to("ocl").requires_grad_()
    scalar(torch.linalg.lstsq(ac, bc, driver=driver).solution).backward()
    with torch_ocl.strict():
        scalar(torch.linalg.lstsq(ao, bo, driver=driver).solution).backward()
    close(ao.grad, ac.grad, dtype, scale=20)
    close(bo.grad, bc.grad, dtype, scale=20)


def test_lstsq_errors(ocl):
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        torch.linalg.lstsq(torch.randn(3, device=ocl), torch.randn(3, device=ocl))
    with pytest.raises(RuntimeError, match=r"input.size\(-2\) should match other.size\(-2\)"):
        torch.linalg.lstsq(torch.randn(3, 3, device=ocl), torch.randn(4, 2, device=ocl))
    with pytest.raises(RuntimeError, match="Expected input and other to have the same dtype"):
        torch.linalg.lstsq(torch.randn(3, 3, device=ocl), torch.randn(3, 2, dtype=torch.float64, device=ocl))
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        torch.linalg.lstsq(torch.randn(3, 3, device=ocl), torch.randn(3, 2, device=ocl), driver="foo")


def test_lu_unpack_half_and_bad_pivots(ocl):
    lu, piv = torch.linalg.lu_factor(rand(2, 4, 4))
    for dtype in (torch.float16, torch.bfloat16):
        with torch_ocl.strict():
            got = torch.lu_unpack(lu.to(dtype).to(ocl), piv.to(ocl))
        for g, r in zip(got, torch.lu_unpack(lu.to(dtype), piv)):
            assert g.dtype == r.dtype
            torch.testing.assert_close(g.cpu(), r)
    with pytest.raises(RuntimeError, match="pivots passed to lu_unpack must be between 1 and LU.size"):
        torch.lu_unpack(lu.to(ocl), torch.full((2, 4), 5, dtype=torch.int32, device=ocl))


def test_out_variants(ocl):
    a, sq = rand(2, 5, 3), sym(2, n=4)
    e = lambda *s, dtype=torch.float32: torch.empty(*s, dtype=dtype, device=ocl)  # noqa: E731
    with torch_ocl.strict():
        ga, gt = e(0), e(0)
        torch.geqrf(a.to(ocl), out=(ga, gt))
        q, r = e(0), e(0)
        torch.linalg.qr(a.to(ocl), mode="complete", out=(q, r))
        w, v = e(0), e(0)
        torch.linalg.eigh(sq.to(ocl), out=(w, v))
        u, s, vh = e(0), e(0), e(0)
        torch.linalg.svd(a.to(ocl), full_matrices=False, out=(u, s, vh))
        hp = e(0)
        torch.linalg.householder_product(ga, gt, out=hp)
        om = e(0)
        torch.ormqr(ga, gt, rand(2, 5, 2, seed=3).to(ocl), out=om)
        p, l, uu = e(0), e(0), e(0)
        torch.linalg.lu(a.to(ocl), out=(p, l, uu))
        sol, res, rk, sv = e(0), e(0), e(0, dtype=torch.int64), e(0)
        torch.linalg.lstsq(a.to(ocl), rand(2, 5, 2, seed=4).to(ocl), driver="gelsd", out=(sol, res, rk, sv))
    ra, rt = torch.geqrf(a)
    close(ga, ra, torch.float32, 10)
    close(gt, rt, torch.float32, 10)
    for g, x in zip((q, r), torch.linalg.qr(a, mode="complete")):
        close(g, x, torch.float32, 10)
    close(w, torch.linalg.eigvalsh(sq), torch.float32, 50)
    close(v @ torch.diag_embed(w) @ v.mT, sq, torch.float32, 50)
    close(s, torch.linalg.svdvals(a), torch.float32, 10)
    close(u @ torch.diag_embed(s) @ vh, a, torch.float32, 10)
    close(hp, torch.linalg.householder_product(ra, rt), torch.float32, 10)
    close(om, torch.ormqr(ra, rt, rand(2, 5, 2, seed=3)), torch.float32, 10)
    for g, x in zip((p, l, uu), torch.linalg.lu(a)):
        close(g, x, torch.float32, 10)
    for g, x in zip((sol, res, rk, sv), torch.linalg.lstsq(a, rand(2, 5, 2, seed=4), driver="gelsd")):
        assert g.shape == x.shape
        close(g.float(), x.float(), torch.float32, 20)


def test_non_finite(ocl):
    a = sym(n=4)
    a[1, 2] = a[2, 1] = float("nan")
    with pytest.raises(torch.linalg.LinAlgError, match="linalg.eigh: The algorithm failed to converge"):
        torch.linalg.eigh(a.to(ocl))
    with pytest.raises(torch.linalg.LinAlgError, match="input matrix contained non-finite values"):
        torch.linalg.svd(a.to(ocl))
    with torch_ocl.strict():
        r = torch.linalg.qr(a.to(ocl))[1].cpu()
    assert torch.equal(r.isnan(), torch.linalg.qr(a)[1].isnan())


# ---- large eigh/eigvalsh: Householder tridiagonalisation + QL on the device (linalg_eigh.cpp,
# from order 64, or 32 in batches of 8, real and complex; below it Jacobi) ------------------------
def check_eigh(a, w, v, rw, dtype):
    """w against CPU's eigenvalues, A V = V diag(w) and V^H V = I, scaled by ||A||."""
    wide = torch.complex128 if a.is_complex() else torch.float64
    scale = 10 * max(1.0, float(torch.linalg.matrix_norm(a.to(wide), 2).max()) if a.numel() else 1.0)
    close(w, rw, dtype, scale=scale)
    if v is not None:
        v, w = v.cpu(), w.cpu()
        close(a @ v, v * w.unsqueeze(-2), dtype, scale=scale)
        orthonormal_cols(v, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [63, 64, 65, 130])
def test_eigh_large(n, dtype):
    a = sym(n=n, seed=n, dtype=dtype)
    for uplo in ("L", "U"):
        # garbage in the other triangle: only UPLO's is read
        x = a.tril() + torch.triu(torch.full_like(a, 7.0), 1) if uplo == "L" else a.triu() + torch.tril(torch.full_like(a, 7.0), -1)
        with torch_ocl.strict():
            w, v = torch.linalg.eigh(x.to("ocl"), UPLO=uplo)
            wv = torch.linalg.eigvalsh(x.to("ocl"), UPLO=uplo)
        rw = torch.linalg.eigvalsh(x, UPLO=uplo)
        check_eigh(a, w, v, rw, dtype)
        check_eigh(a, wv, None, rw, dtype)


def test_eigh_large_257_batch_noncontiguous():
    dtype = torch.float32
    a = sym(n=257, seed=3, dtype=dtype)
    b = sym(3, n=70, seed=4, dtype=dtype).mT.contiguous().mT  # a batch, column major
    c = sym(2, 4, n=33, seed=5, dtype=dtype)  # 8 matrices of order 33: the batched threshold
    with torch_ocl.strict():
        got = [torch.linalg.eigh(x.to("ocl")) for x in (a, b, c)]
        wb = torch.linalg.eigvalsh(b.to("ocl"))
    for x, (w, v) in zip((a, b, c), got):
        check_eigh(x, w, v, torch.linalg.eigvalsh(x), dtype)
    check_eigh(b, wb, None, torch.linalg.eigvalsh(b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_large_degenerate(dtype):
    q, _ = torch.linalg.qr(rand(90, 90, seed=7, dtype=torch.float64))
    spec = torch.cat([torch.full((40,), 2.0), torch.full((30,), -1.0), torch.linspace(3, 4, 20)]).double()
    repeated = (q * spec) @ q.mT
    clustered = (q * (1 + 1e-7 * torch.arange(90.0, dtype=torch.float64))) @ q.mT
    # a rank-1 matrix: 89 zero eigenvalues
    u = rand(90, 1, seed=8, dtype=torch.float64)
    cases = [torch.eye(90), torch.zeros(64, 64), repeated, clustered, u @ u.mT,
             torch.diag(torch.linspace(-5, 5, 64)),  # already diagonal (QL splits at once)
             torch.diag(torch.ones(63), 1) + torch.diag(torch.ones(63), -1)]  # tridiagonal
    for a in cases:
        a = a.to(dtype)
        with torch_ocl.strict():
            w, v = torch.linalg.eigh(a.to("ocl"))
        check_eigh(a, w, v, torch.linalg.eigvalsh(a), dtype)


def test_eigh_large_complex_and_grad():
    # complex of order 50, one matrix: the Jacobi kernels
    a = rand(50, 50, seed=9, dtype=torch.complex64)
    a = a + a.mH
    with torch_ocl.strict():
        w, v = torch.linalg.eigh(a.to("ocl"))
    w, v = w.cpu(), v.cpu()
    close(w, torch.linalg.eigvalsh(a), torch.complex64, scale=200)
    close(a @ v, v * w.unsqueeze(-2).to(v.dtype), torch.complex64, scale=200)
    # gradient through the large path (distinct eigenvalues; sign-invariant loss)
    x = sym(n=60, seed=10, dtype=torch.float64)
    xc, xo = x.clone().requires_grad_(), x.to("ocl").requires_grad_()
    w, v = torch.linalg.eigh(xc)
    (w.sum() + (v[:, :5].abs() * torch.arange(5.0, dtype=torch.float64)).sum()).backward()
    with torch_ocl.strict():
        w, v = torch.linalg.eigh(xo)
        (w.sum() + (v[:, :5].abs() * torch.arange(5.0, dtype=torch.float64).to("ocl")).sum()).backward()
    close(xo.grad, xc.grad, torch.float64, scale=1e3)


def herm(*batch, n, seed=0, dtype=torch.complex64):
    a = rand(*batch, n, n, seed=seed, dtype=torch.complex128)
    return (a + a.mH).to(dtype)


CDTYPES = [torch.complex64, torch.complex128]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("n", [63, 64, 65, 130])
def test_eigh_large_hermitian(n, dtype):
    a = herm(n=n, seed=n, dtype=dtype)
    junk = torch.full_like(a, 7 - 3j)
    for uplo in ("L", "U"):
        # garbage in the other triangle and in the diagonal's imaginary part: neither is read
        x = a.tril() + junk.triu(1) if uplo == "L" else a.triu() + junk.tril(-1)
        x = x + torch.diag_embed(torch.full((n,), 5j, dtype=dtype))
        with torch_ocl.strict():
            w, v = torch.linalg.eigh(x.to("ocl"), UPLO=uplo)
            wv = torch.linalg.eigvalsh(x.to("ocl"), UPLO=uplo)
        assert w.dtype == wv.dtype == dtype.to_real() and v.dtype == dtype
        rw = torch.linalg.eigvalsh(x, UPLO=uplo)
        check_eigh(a, w, v, rw, dtype)
        check_eigh(a, wv, None, rw, dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_eigh_large_hermitian_batch_and_degenerate(dtype):
    b = herm(3, n=70, seed=4, dtype=dtype).mT.contiguous().mT  # a batch, column major
    c = herm(2, 4, n=48, seed=5, dtype=dtype)  # 8 matrices of order 48: the complex batched threshold
    q, _ = torch.linalg.qr(rand(90, 90, seed=7, dtype=torch.complex128))
    spec = torch.cat([torch.full((40,), 2.0), torch.full((30,), -1.0), torch.linspace(3, 4, 20)]).double()
    repeated = (q * spec.to(q.dtype)) @ q.mH
    u = rand(90, 1, seed=8, dtype=torch.complex128)
    im = rand(80, 80, seed=9, dtype=torch.float64)
    ones = torch.ones(63, dtype=torch.complex128)
    cases = [b, c, torch.eye(90, dtype=dtype), torch.zeros(64, 64, dtype=dtype), repeated, u @ u.mH,
             1j * (im - im.mT),  # purely imaginary Hermitian
             1j * torch.diag(ones, 1) - 1j * torch.diag(ones, -1)]  # imaginary off-diagonal only
    for a in cases:
        a = a.to(dtype)
        with torch_ocl.strict():
            w, v = torch.linalg.eigh(a.to("ocl"))
            wv = torch.linalg.eigvalsh(a.to("ocl"))
        rw = torch.linalg.eigvalsh(a)
        check_eigh(a, w, v, rw, dtype)
        check_eigh(a, wv, None, rw, dtype)


def test_eigh_large_hermitian_grad_and_non_finite(ocl):
    # gradient through the large complex path (distinct eigenvalues; a phase-invariant loss)
    x = herm(n=66, seed=10, dtype=torch.complex128)
    xc, xo = x.clone().requires_grad_(), x.to(ocl).requires_grad_()
    wgt = torch.arange(5.0, dtype=torch.float64)
    w, v = torch.linalg.eigh(xc)
    (w.sum() + (v[:, :5].abs() * wgt).sum()).backward()
    with torch_ocl.strict():
        w, v = torch.linalg.eigh(xo)
        (w.sum() + (v[:, :5].abs() * wgt.to(ocl)).sum()).backward()
    close(xo.grad, xc.grad, torch.complex128, scale=1e3)
    a = herm(n=70)
    a[50, 3] = complex(float("nan"), 1.0)
    a[3, 50] = a[50, 3].conj()
    for fn in (torch.linalg.eigh, torch.linalg.eigvalsh):
        with pytest.raises(torch.linalg.LinAlgError, match="linalg.eigh: The algorithm failed to converge"):
            fn(a.to(ocl))
    with torch_ocl.strict():  # the process stays usable
        torch.linalg.eigvalsh(herm(n=70).to(ocl))


def test_eigh_large_non_finite(ocl):
    a = sym(n=70)
    a[50, 3] = a[3, 50] = float("inf")
    for fn in (torch.linalg.eigh, torch.linalg.eigvalsh):
        with pytest.raises(torch.linalg.LinAlgError, match="linalg.eigh: The algorithm failed to converge"):
            fn(a.to(ocl))
    with torch_ocl.strict():  # the process stays usable
        torch.linalg.eigvalsh(sym(n=70).to(ocl))


# ---- large svd/svdvals: Golub-Kahan bidiagonalisation + bidiagonal QR on the device
# (linalg_svd.cpp, from min(m, n) = 64, or 48 in batches of 8, real and complex; below it
# one-sided Jacobi) ----------------------------------------------------------------------------------
def check_svd(a, u, s, vh, dtype, full):
    ru, rs, rvh = torch.linalg.svd(a, full_matrices=full)
    assert u.shape == ru.shape and s.shape == rs.shape and vh.shape == rvh.shape
    scale = 10 * max(1.0, float(rs.max()) if rs.numel() else 1.0)
    close(s, rs, dtype, scale=scale)
    orthonormal_cols(u, dtype)
    orthonormal_cols(vh.mT, dtype)
    k = s.shape[-1]
    close(u.cpu()[..., :k] @ torch.diag_embed(s.cpu()).to(u.dtype) @ vh.cpu()[..., :k, :], a, dtype, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES + [torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape", [(63, 63), (64, 64), (70, 64), (64, 70), (130, 129), (2, 4, 50, 49)])
def test_svd_large(shape, dtype):
    a = rand(*shape, seed=sum(shape), dtype=dtype)
    for full in (False, True):
        with torch_ocl.strict():
            u, s, vh = torch.linalg.svd(a.to("ocl"), full_matrices=full)
            sv = torch.linalg.svdvals(a.to("ocl"))
        check_svd(a, u, s, vh, dtype, full)
        close(sv, torch.linalg.svdvals(a), dtype, scale=10 * float(torch.linalg.svdvals(a).max()))


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_large_degenerate(dtype):
    q, _ = torch.linalg.qr(rand(80, 80, seed=11, dtype=torch.float64))
    p, _ = torch.linalg.qr(rand(70, 70, seed=12, dtype=torch.float64))
    spec = torch.cat([torch.full((30,), 2.0), torch.zeros(25), torch.linspace(3, 4, 15)]).double()
    repeated = q[:, :70] * spec @ p.mT  # repeated and zero singular values, rank 45
    cases = [torch.eye(64), torch.zeros(70, 64), repeated, repeated.mT,
             rand(90, 3, seed=13, dtype=torch.float64) @ rand(3, 70, seed=14, dtype=torch.float64),  # rank 3
             torch.diag(torch.linspace(-5, 5, 64))]  # already bidiagonal, negative entries
    for a in cases:
        a = a.to(dtype)
        with torch_ocl.strict():
            u, s, vh = torch.linalg.svd(a.to("ocl"), full_matrices=False)
        check_svd(a, u, s, vh, dtype, False)


def test_svd_large_complex_grad_and_non_finite(ocl):
    a = rand(50, 49, seed=15, dtype=torch.complex64)  # complex, order 49, one matrix: Jacobi
    with torch_ocl.strict():
        s = torch.linalg.svdvals(a.to(ocl))
    close(s, torch.linalg.svdvals(a), torch.complex64, scale=100)
    # gradients through svd_backward, sign-invariant outputs
    x = rand(70, 64, seed=16, dtype=torch.float64)
    xc, xo = x.clone().requires_grad_(), x.to(ocl).requires_grad_()
    u, s, vh = torch.linalg.svd(xc, full_matrices=False)
    (s.sum() + (u[:, :4] @ vh[:4]).pow(2).mul(torch.arange(64.0, dtype=torch.float64)).sum()).backward()
    with torch_ocl.strict():
        u, s, vh = torch.linalg.svd(xo, full_matrices=False)
        (s.sum() + (u[:, :4] @ vh[:4]).pow(2).mul(torch.arange(64.0, dtype=torch.float64).to(ocl)).sum()).backward()
    close(xo.grad, xc.grad, torch.float64, scale=1e3)
    bad = rand(70, 64, seed=17)
    bad[7, 9] = float("nan")
    with pytest.raises(torch.linalg.LinAlgError, match="input matrix contained non-finite values"):
        torch.linalg.svd(bad.to(ocl))
    with torch_ocl.strict():  # the process stays usable
        torch.linalg.svdvals(rand(70, 64).to(ocl))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_svd_large_complex_degenerate(dtype):
    q, _ = torch.linalg.qr(rand(80, 80, seed=11, dtype=torch.complex128))
    p, _ = torch.linalg.qr(rand(70, 70, seed=12, dtype=torch.complex128))
    spec = torch.cat([torch.full((30,), 2.0), torch.zeros(25), torch.linspace(3, 4, 15)]).double()
    repeated = q[:, :70] * spec.to(q.dtype) @ p.mH  # repeated and zero singular values, rank 45
    im = rand(70, 66, seed=13, dtype=torch.float64)
    cases = [torch.eye(64, dtype=dtype), torch.zeros(70, 64, dtype=dtype), repeated, repeated.mH,
             rand(90, 3, seed=13, dtype=torch.complex128) @ rand(3, 70, seed=14, dtype=torch.complex128),  # rank 3
             1j * im,  # purely imaginary
             1j * torch.diag(torch.linspace(-5, 5, 64)) + torch.diag(torch.full((63,), 2j), 1)]  # imaginary bidiagonal
    for a in cases:
        a = a.to(dtype)
        with torch_ocl.strict():
            u, s, vh = torch.linalg.svd(a.to("ocl"), full_matrices=False)
            sv = torch.linalg.svdvals(a.to("ocl"))
        check_svd(a, u, s, vh, dtype, False)
        close(sv, torch.linalg.svdvals(a), dtype, scale=10 * max(1.0, float(torch.linalg.svdvals(a).max())))


def test_svd_large_complex128_grad_and_non_finite(ocl):
    # gradients through svd_backward on the large complex path, phase-invariant outputs
    x = rand(64, 70, seed=16, dtype=torch.complex128)
    w = torch.arange(70.0, dtype=torch.float64)
    xc, xo = x.clone().requires_grad_(), x.to(ocl).requires_grad_()
    u, s, vh = torch.linalg.svd(xc, full_matrices=False)
    (s.sum() + (u[:, :4] @ vh[:4]).abs().pow(2).mul(w).sum()).backward()
    with torch_ocl.strict():
        u, s, vh = torch.linalg.svd(xo, full_matrices=False)
        (s.sum() + (u[:, :4] @ vh[:4]).abs().pow(2).mul(w.to(ocl)).sum()).backward()
    close(xo.grad, xc.grad, torch.complex128, scale=1e3)
    bad = rand(70, 64, seed=17, dtype=torch.complex64)
    bad[7, 9] = complex(1.0, float("inf"))
    with pytest.raises(torch.linalg.LinAlgError, match="input matrix contained non-finite values"):
        torch.linalg.svd(bad.to(ocl))
    with torch_ocl.strict():  # the process stays usable
        torch.linalg.svdvals(rand(70, 64, dtype=torch.complex64).to(ocl))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_svd_large_extreme_scales(dtype):
    # entries whose squares overflow or underflow the dtype: the large paths scale by a power of 2
    scales = (1e20, 1e-20, 1e-38) if dtype == torch.float32 else (1e200, 1e-200)
    for sc in scales:
        a = (sym(n=70, seed=18, dtype=torch.float64) * sc).to(dtype)
        b = (rand(72, 66, seed=19, dtype=torch.float64) * sc).to(dtype)
        with torch_ocl.strict():
            w, v = torch.linalg.eigh(a.to("ocl"))
            u, s, vh = torch.linalg.svd(b.to("ocl"), full_matrices=False)
        rw, rs = torch.linalg.eigvalsh(a), torch.linalg.svdvals(b)
        close(w.cpu() / rw.abs().max(), rw / rw.abs().max(), dtype, scale=50)
        close(s.cpu() / rs.max(), rs / rs.max(), dtype, scale=50)
        orthonormal_cols(v, dtype)
        orthonormal_cols(u, dtype)
        orthonormal_cols(vh.mT, dtype)
        close((a.double() @ v.cpu().double() - v.cpu().double() * w.cpu().double()) / rw.abs().max(),
              torch.zeros(70, 70, dtype=torch.float64), torch.float64 if dtype == torch.float64 else dtype, scale=50)
