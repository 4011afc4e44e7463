"""linalg.eig / linalg.eigvals on the device against CPU in strict mode: eigenvalues in LAPACK
geev's order (the device follows its steps), eigenvectors with geev's normalisation (unit norm,
largest component real: complex input's vectors then equal CPU's; real input's agree up to a
sign per vector, which rounding decides: MKL, OpenBLAS and reference LAPACK disagree among
themselves there), A V = V diag(w) where the order of repeated eigenvalues is not unique, batches,
non-contiguous and zero-size inputs, complex-conjugate pairs, float32/float64/complex64/
complex128, gradients through PyTorch's composite linalg_eig_backward, out= variants, errors."""

import pytest
import torch

import torch_ocl

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}
TOL[torch.complex64], TOL[torch.complex128] = TOL[torch.float32], TOL[torch.float64]
DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]


def rand(*shape, seed=0, dtype=torch.float32):
    wide = torch.complex128 if dtype.is_complex else torch.float64
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=wide).to(dtype)


def close(a, b, dtype, scale=1.0):
    t = TOL[dtype]
    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=t["rtol"] * scale,
                               atol=t["atol"] * scale)


def eig_ocl(a):
    with torch_ocl.strict():
        w, v = torch.linalg.eig(a.to("ocl"))
    assert w.device.type == "ocl" and v.device.type == "ocl"
    return w.cpu(), v.cpu()


def close_vectors(v, ve, dtype, scale=1.0):
    """v == ve (complex input: geev's phase is unique), or up to a real sign per column (real
    input: the sign LAPACK leaves is decided by rounding in its QR sweeps)."""
    v, ve = v.detach().cpu(), ve.detach().cpu()
    if dtype.is_complex:
        return close(v, ve, dtype, scale)
    k = ve.abs().argmax(dim=-2, keepdim=True)
    sign = torch.sgn(v.gather(-2, k).real * ve.gather(-2, k).real)
    close(v * sign, ve, dtype, scale)
    # the largest component is real, as geev normalises it
    imag = v.gather(-2, k).imag
    torch.testing.assert_close(imag, torch.zeros_like(imag), rtol=0, atol=1e-6)


def check_residual(a, w, v, dtype, scale=10.0):
    """A V = V diag(w), columns of unit norm."""
    ac = a.to(w.dtype)
    close(ac @ v, v * w.unsqueeze(-2), dtype, scale * max(1.0, a.abs().max().item()))
    close(torch.linalg.vector_norm(v, dim=-2), torch.ones(w.shape, dtype=w.real.dtype), dtype, scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 40])
def test_eig_matches_cpu(dtype, n):
    if dtype in (torch.float64, torch.complex128) and not torch.ocl.get_device_properties(0).fp64:
        pytest.skip("no fp64 on this device")
    a = rand(n, n, seed=n, dtype=dtype)
    w, v = eig_ocl(a)
    we, ve = torch.linalg.eig(a)
    assert w.dtype == we.dtype and v.dtype == ve.dtype and v.shape == ve.shape
    # geev's order and normalisation (order 40 amplifies rounding more)
    scale = 100.0 if n == 40 else 10.0
    close(w, we, dtype, scale)
    close_vectors(v, ve, dtype, scale)
    check_residual(a, w, v, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvals_matches_cpu(dtype):
    a = rand(3, 6, 6, seed=11, dtype=dtype)
    with torch_ocl.strict():
        w = torch.linalg.eigvals(a.to("ocl"))
    assert w.device.type == "ocl"
    close(w.cpu(), torch.linalg.eigvals(a), dtype, 10)


def test_batched_noncontiguous_and_empty():
    a = rand(2, 3, 5, 5, seed=3, dtype=torch.float64)
    w, v = eig_ocl(a)
    we, ve = torch.linalg.eig(a)
    close(w, we, torch.float64)
    close_vectors(v, ve, torch.float64)
    # transposed and strided views
    base = rand(7, 12, seed=4, dtype=torch.float32)
    view = base[:, ::2][1:7].mT
    assert not view.is_contiguous()
    w, v = eig_ocl(view)
    we, ve = torch.linalg.eig(view)
    close(w, we, torch.float32, 10)
    close_vectors(v, ve, torch.float32, 10)
    # the input is left alone
    x = rand(4, 4, seed=5, dtype=torch.float32).to("ocl")
    keep = x.cpu().clone()
    with torch_ocl.strict():
        torch.linalg.eig(x)
    torch.testing.assert_close(x.cpu(), keep, rtol=0, atol=0)
    for shape in [(0, 3, 3), (2, 0, 0), (0, 0)]:
        e = torch.zeros(shape)
        w, v = eig_ocl(e)
        we, ve = torch.linalg.eig(e)
        assert w.shape == we.shape and v.shape == ve.shape and w.dtype == we.dtype


def test_conjugate_pairs():
    # a rotation block and a real eigenvalue: +i first, as LAPACK orders a pair
    a = torch.tensor([[0.0, -2.0, 1.0], [2.0, 0.0, 0.5], [0.0, 0.0, 3.0]], dtype=torch.float64)
    q = torch.linalg.qr(rand(3, 3, seed=8, dtype=torch.float64))[0]
    a = q @ a @ q.mT
    w, v = eig_ocl(a)
    we, ve = torch.linalg.eig(a)
    close(w, we, torch.float64)
    close_vectors(v, ve, torch.float64)
    pair = w[w.imag != 0]
    assert pair.numel() == 2 and pair[0].imag > 0 and torch.allclose(pair[0], pair[1].conj())
    check_residual(a, w, v, torch.float64)


def test_repeated_and_triangular():
    # diagonalisable with a repeated eigenvalue: the eigenvectors of the repeated one are any basis
    d = torch.diag(torch.tensor([2.0, 2.0, -1.0, 5.0, 2.0], dtype=torch.float64))
    s = rand(5, 5, seed=9, dtype=torch.float64) + 3 * torch.eye(5, dtype=torch.float64)
    a = s @ d @ torch.linalg.inv(s)
    w, v = eig_ocl(a)
    we = torch.linalg.eigvals(a)
    close(torch.sort(w.real).values, torch.sort(we.real).values, torch.float64, 1e4)
    check_residual(a, w, v, torch.float64, scale=1e4)
    # triangular and diagonal matrices: balancing's permutations isolate every eigenvalue
    for m in [torch.triu(rand(5, 5, seed=10, dtype=torch.float64)),
              torch.tril(rand(5, 5, seed=12, dtype=torch.float64)),
              torch.diag(torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64)),
              torch.triu(rand(4, 4, seed=13, dtype=torch.complex128))]:
        w, v = eig_ocl(m)
        we, ve = torch.linalg.eig(m)
        close(w, we, torch.float64)
        close_vectors(v, ve, torch.float64)


def test_badly_scaled():
    # balancing's power-of-2 scaling at work, and geev's scaling of tiny matrices
    a = rand(5, 5, seed=14, dtype=torch.float64)
    a = a * torch.tensor([1e-4, 1.0, 1e3, 1e-2, 10.0], dtype=torch.float64)
    for m in [a, a.float(), rand(4, 4, seed=15) * 1e-14]:
        w, v = eig_ocl(m)
        we, ve = torch.linalg.eig(m)
        close(w, we, m.dtype, 10)
        close_vectors(v, ve, m.dtype, 10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex64])
def test_gradients(dtype):
    a = rand(2, 4, 4, seed=16, dtype=dtype)

    def loss(x):
        w, v = torch.linalg.eig(x)
        # invariant to the vectors' phases (as PyTorch requires for eig's backward)
        return (w * w.conj()).real.sum() + w.real.sum() + v.abs().sum()

    xc = a.clone().requires_grad_(True)
    (gc,) = torch.autograd.grad(loss(xc), xc)
    xo = a.to("ocl").requires_grad_(True)
    with torch_ocl.strict():
        (go,) = torch.autograd.grad(loss(xo), xo)
        xv = a.to("ocl").requires_grad_(True)
        (gv,) = torch.autograd.grad(torch.linalg.eigvals(xv).abs().sum(), xv)
    assert go.device.type == "ocl"
    close(go, gc, dtype, 50)
    xc2 = a.clone().requires_grad_(True)
    (gv_cpu,) = torch.autograd.grad(torch.linalg.eigvals(xc2).abs().sum(), xc2)
    close(gv, gv_cpu, dtype, 50)


def test_out_variants():
    a = rand(3, 3, seed=17, dtype=torch.float32)
    w = torch.empty(0, dtype=torch.complex64, device="ocl")
    v = torch.empty(0, dtype=torch.complex64, device="ocl")
    with torch_ocl.strict():
        torch.linalg.eig(a.to("ocl"), out=(w, v))
        wv = torch.empty(0, dtype=torch.complex128, device="ocl")  # a wider dtype is allowed
        torch.linalg.eigvals(a.to("ocl"), out=wv)
    we, ve = torch.linalg.eig(a)
    close(w, we, torch.float32, 10)
    close_vectors(v, ve, torch.float32, 10)
    close(wv.to(torch.complex64), we, torch.float32, 10)


def errors_match(fn, x):
    with pytest.raises(Exception) as cpu:
        fn(x)
    with pytest.raises(type(cpu.value)) as ocl:
        fn(x.to("ocl"))
    assert str(ocl.value) == str(cpu.value)


def test_errors():
    nan = torch.tensor([[1.0, float("nan")], [0.0, 1.0]])
    with torch_ocl.strict():
        errors_match(torch.linalg.eig, nan)
        errors_match(torch.linalg.eig, torch.ones(2, 3))
        errors_match(torch.linalg.eig, torch.ones(3))
        errors_match(torch.linalg.eigvals, torch.ones(2, 3, 4))
        inf = torch.ones(3, 2, 2, dtype=torch.complex64)
        inf[1, 0, 0] = float("inf")
        errors_match(torch.linalg.eig, inf)
        # a real out tensor for complex results
        bad = torch.empty(0, device="ocl")
        with pytest.raises(RuntimeError, match="Expected eigenvalues to be safely castable"):
            torch.linalg.eigvals(torch.ones(2, 2, device="ocl"), out=bad)
    # eigvals does not check finiteness on CPU either: isolated by balancing, the NaN is unused
    with torch_ocl.strict():
        w = torch.linalg.eigvals(nan.to("ocl"))
    close(w, torch.linalg.eigvals(nan), torch.float32)
    # geev's scaling of a matrix with an infinite entry multiplies by 0: NaN eigenvalues, as CPU
    for m in [torch.tensor([[1.0, float("inf")], [0.0, 2.0]]),
              torch.tensor([[1.0, 2.0], [float("inf"), 1.0]])]:
        with torch_ocl.strict():
            w = torch.linalg.eigvals(m.to("ocl")).cpu()
        torch.testing.assert_close(w, torch.linalg.eigvals(m), equal_nan=True)
    # all NaN: the QR iteration cannot converge; LAPACK's info becomes PyTorch's error (CPU's
    # MKL rejects it in its balancing and the process crashes, so there is no CPU call here)
    with torch_ocl.strict():
        with pytest.raises(torch.linalg.LinAlgError, match="failed to converge"):
            torch.linalg.eigvals(torch.full((3, 3), float("nan"), device="ocl"))
    # the process stays usable
    w, _ = eig_ocl(torch.eye(2))
    close(w, torch.ones(2, dtype=torch.complex64), torch.float32)
