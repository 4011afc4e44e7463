"""Blocked Householder QR (min(m, n) >= 96: 32-wide panels by the geqrf kernel, T by larft from
the panel's Gram matrix, trailing columns by larfb = three GEMMs) and the blocked reflector
products (householder_product, ormqr, linalg.qr's Q: compact-WY blocks) against CPU LAPACK, in
strict mode."""

import pytest
import torch
from torch.testing import assert_close

import torch_ocl

TOL = {torch.float32: 1e-4, torch.float64: 1e-11, torch.complex64: 1e-4, torch.complex128: 1e-11}


def rand(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=dtype, generator=g)


# 95: the unblocked kernel; 96: three panels; tall, wide, batched, odd.
SHAPES = [(95, 95), (96, 96), (2, 200, 150), (150, 261), (0, 130, 130)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_blocked_geqrf_matches_lapack(dtype, shape):
    a = rand(shape, dtype)
    with torch_ocl.strict():
        g, tau = torch.geqrf(a.to("ocl"))
    want_g, want_tau = torch.geqrf(a)
    tol = TOL[dtype] * 10
    assert_close(g.cpu(), want_g, atol=tol, rtol=tol)
    assert_close(tau.cpu(), want_tau, atol=tol, rtol=tol)


def test_non_contiguous_input():
    a = rand((2, 300, 400), torch.float64)[:, ::2, ::2].mT  # (2, 200, 150), strided
    with torch_ocl.strict():
        g, tau = torch.geqrf(a.to("ocl"))
    want_g, want_tau = torch.geqrf(a)
    assert_close(g.cpu(), want_g, atol=1e-10, rtol=1e-10)
    assert_close(tau.cpu(), want_tau, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64, torch.complex128])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_blocked_linalg_qr(dtype, mode):
    a = rand((2, 170, 140), dtype, seed=1)
    with torch_ocl.strict():
        q, r = torch.linalg.qr(a.to("ocl"), mode=mode)
    want_q, want_r = torch.linalg.qr(a, mode=mode)
    tol = TOL[dtype] * 20
    q, r = q.cpu(), r.cpu()
    assert q.shape == want_q.shape and r.shape == want_r.shape
    # CPU's zgeqrf leaves a 1x1 last reflector's tau at 0 from some size on where zlarfg gives a
    # phase: compare magnitudes for complex (Q's columns and R's rows then differ by a phase).
    if dtype.is_complex:
        assert_close(r.abs(), want_r.abs(), atol=tol, rtol=tol)
        assert_close(q.abs(), want_q.abs(), atol=tol, rtol=tol)
        assert_close(q[..., :, :140] @ r[..., :140, :], a, atol=tol * 10, rtol=tol)
    else:
        assert_close(r, want_r, atol=tol, rtol=tol)
        assert_close(q, want_q, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_blocked_householder_product_and_ormqr(dtype):
    a = rand((2, 260, 200), dtype, seed=2)
    c = rand((2, 260, 7), dtype, seed=3)
    g, tau = torch.geqrf(a)  # the same reflectors on both sides
    tol = TOL[dtype] * 20
    with torch_ocl.strict():
        gd, td, cd = g.to("ocl"), tau.to("ocl"), c.to("ocl")
        q = torch.linalg.householder_product(gd, td)
        qc = torch.ormqr(gd, td, cd, left=True, transpose=False)
        qhc = torch.ormqr(gd, td, cd, left=True, transpose=True)
        cq = torch.ormqr(gd, td, cd.mT, left=False, transpose=False)
    assert_close(q.cpu(), torch.linalg.householder_product(g, tau), atol=tol, rtol=tol)
    assert_close(qc.cpu(), torch.ormqr(g, tau, c), atol=tol, rtol=tol)
    assert_close(qhc.cpu(), torch.ormqr(g, tau, c, transpose=True), atol=tol, rtol=tol)
    assert_close(cq.cpu(), torch.ormqr(g, tau, c.mT, left=False), atol=tol, rtol=tol)


def test_gradient_of_qr_through_the_blocked_path():
    a = rand((150, 130), torch.float64, seed=4)
    grads = []
    for dev in ["ocl", "cpu"]:
        x = a.to(dev).requires_grad_()
        with torch_ocl.strict():
            q, r = torch.linalg.qr(x)
            (q.sum() + r.square().sum()).backward()
        grads.append(x.grad.cpu())
    assert_close(grads[0], grads[1], atol=1e-9, rtol=1e-9)
