"""torch.fft on the device (VkFFT plans behind _fft_c2c/_fft_r2c/_fft_c2r) against CPU PyTorch
(pocketfft) in strict mode: fft/ifft/rfft/irfft/hfft/ihfft, fft2/fftn/rfftn/irfftn with dims in any
order (non-last dims, more than three dims), every norm, odd, prime (Bluestein) and power-of-two
sizes, non-contiguous inputs, zero-size and size-1 dims, float64, out=, gradients, fftshift and
stft/istft."""

import pytest
import torch

import torch_ocl
from conftest import TWO_DEVICES, fp64_supported, run_ok

NORMS = [None, "forward", "backward", "ortho"]


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        real = torch.randn(*shape, 2, generator=g, dtype=torch.float64)
        return torch.view_as_complex(real).to(dtype)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def close(got, ref):
    assert got.device.type == "ocl", got.device
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    double = ref.dtype in (torch.float64, torch.complex128)
    scale = ref.abs().max().item() if ref.numel() else 1.0
    atol = (1e-11 if double else 3e-6) * max(scale, 1.0)
    torch.testing.assert_close(got.cpu(), ref, rtol=1e-9 if double else 1e-4, atol=atol)


def check(fn, *inputs):
    ref = fn(*inputs)
    dev = [t.to("ocl") for t in inputs]
    with torch_ocl.strict():
        got = fn(*dev)
    close(got, ref)
    for t, d in zip(inputs, dev):  # inputs are never written
        assert torch.equal(d.cpu(), t)
    return got


@pytest.mark.parametrize("n", [1, 2, 15, 17, 64, 1000, 1009])
def test_fft_ifft_1d_every_norm(n):
    x = rand(3, n, dtype=torch.complex64)
    for norm in NORMS:
        check(lambda t: torch.fft.fft(t, norm=norm), x)
        check(lambda t: torch.fft.ifft(t, norm=norm), x)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17])
def test_rfft_irfft_hfft_ihfft(n):
    x = rand(4, n)
    c = rand(4, n // 2 + 1, dtype=torch.complex64, seed=1)
    for norm in NORMS:
        check(lambda t: torch.fft.rfft(t, norm=norm), x)
        check(lambda t: torch.fft.ihfft(t, norm=norm), x)
        check(lambda t: torch.fft.irfft(t, n=n, norm=norm), c)
        check(lambda t: torch.fft.hfft(t, n=n, norm=norm), c)
    if n > 1:
        check(lambda t: torch.fft.irfft(t), c)  # default n = 2 * (m - 1)
    check(lambda t: torch.fft.irfft(t, n=2 * n + 3), c)  # zero-padded half spectrum
    check(lambda t: torch.fft.rfft(t, n=n + 4), x)  # zero-padded signal
    check(lambda t: torch.fft.fft(t, n=max(n - 1, 1)), x)  # real input to fft, trimmed


def test_non_last_dims_and_non_contiguous():
    x = rand(10, 7, 12, dtype=torch.complex64)
    check(lambda t: torch.fft.fft(t, dim=0), x)
    check(lambda t: torch.fft.fft(t, dim=1), x)
    check(lambda t: torch.fft.fft(t.transpose(0, 2)), x)
    check(lambda t: torch.fft.ifft(t[:, ::2, 1:]), x)
    r = rand(9, 6, 11)
    check(lambda t: torch.fft.rfft(t, dim=0), r)
    check(lambda t: torch.fft.rfft(t[::2].transpose(1, 2)), r)
    check(lambda t: torch.fft.rfft(t[1:]), r)  # dense, read in place at an element offset
    check(lambda t: torch.fft.rfft2(t[3:]), r)
    check(lambda t: torch.fft.irfft(torch.fft.rfft(t, dim=1), n=6, dim=1), r)
    h = rand(8, 6, dtype=torch.complex64)
    check(lambda t: torch.fft.irfft(t.t(), n=15), h)


def test_2d_and_nd():
    x = rand(3, 10, 12, dtype=torch.complex64)
    for norm in NORMS:
        check(lambda t: torch.fft.fft2(t, norm=norm), x)
        check(lambda t: torch.fft.ifftn(t, norm=norm), x)
    check(lambda t: torch.fft.fftn(t, dim=(2, 0)), x)
    r = rand(5, 6, 7, 8)
    check(lambda t: torch.fft.rfft2(t), r)
    check(lambda t: torch.fft.rfftn(t), r)  # four dims: a real pass of three, one c2c pass
    check(lambda t: torch.fft.fftn(t.to(torch.complex64)), r)
    check(lambda t: torch.fft.rfftn(t, dim=(1, 3, 0)), r)
    c = rand(5, 6, 7, 5, dtype=torch.complex64, seed=2)
    check(lambda t: torch.fft.irfftn(t, s=(6, 7, 8)), c)
    check(lambda t: torch.fft.irfftn(t), c)  # four dims: one c2c pass, a real pass of three
    check(lambda t: torch.fft.irfft2(t, s=(7, 9)), c)
    check(lambda t: torch.fft.hfftn(t, s=(6, 8)), c)


def test_ihfftn():
    check(lambda t: torch.fft.ihfft2(t), rand(5, 6, 7))


def test_zero_size_and_size_one():
    # CPU PyTorch (MKL) raises for an empty batch; the result is the empty tensor of that shape.
    c64 = torch.complex64
    for fn, x, shape, dtype in [
        (lambda t: torch.fft.fft(t), rand(0, 8, dtype=c64), (0, 8), c64),
        (lambda t: torch.fft.rfft(t), rand(0, 8), (0, 5), c64),
        (lambda t: torch.fft.irfft(t, n=8), rand(0, 5, dtype=c64), (0, 8), torch.float32),
        (lambda t: torch.fft.fft2(t), rand(0, 3, 4, dtype=c64), (0, 3, 4), c64),
    ]:
        with torch_ocl.strict():
            got = fn(x.to("ocl"))
        close(got, torch.empty(shape, dtype=dtype))
    check(lambda t: torch.fft.fft2(t), rand(4, 1, 6, dtype=torch.complex64))
    check(lambda t: torch.fft.rfftn(t), rand(1, 6, 1))
    check(lambda t: torch.fft.irfftn(t, s=(1, 1)), rand(3, 1, 1, dtype=torch.complex64))
    check(lambda t: torch.fft.fft(t), rand(1, dtype=torch.complex64))


@pytest.mark.skipif(not fp64_supported(), reason="the device has no cl_khr_fp64")
def test_float64():
    x = rand(3, 17, 8, dtype=torch.complex128)
    for norm in NORMS:
        check(lambda t: torch.fft.fftn(t, norm=norm), x)
        check(lambda t: torch.fft.ifft(t, dim=1, norm=norm), x)
    r = rand(4, 15, dtype=torch.float64)
    check(lambda t: torch.fft.rfft(t, norm="ortho"), r)
    check(lambda t: torch.fft.irfft(t, n=15), x[:, :8, 0].contiguous())
    check(lambda t: torch.fft.rfft2(t), r)


def test_large_and_input_untouched():
    # 2^16 runs as several VkFFT uploads (four-step) with a temp buffer from our allocator.
    x = rand(1 << 16)
    check(lambda t: torch.fft.rfft(t), x)
    check(lambda t: torch.fft.irfft(t), torch.fft.rfft(x))
    check(lambda t: torch.fft.fft(t), rand(2, 1 << 16, dtype=torch.complex64))
    # 2^17 crashed VkFFT's single-upload kernels under PoCL's 2 MiB local memory (now capped).
    check(lambda t: torch.fft.ifft(t), rand(1 << 17, dtype=torch.complex64))
    check(lambda t: torch.fft.irfft(t, n=1 << 17), rand((1 << 16) + 1, dtype=torch.complex64))
    # A length VkFFT's R2C rejects (odd, several uploads): the complex route gives the same.
    odd = 3 * 5 * 7 * 11 * 13 * 17
    check(lambda t: torch.fft.rfft(t), rand(odd))
    check(lambda t: torch.fft.irfft(t, n=odd), rand(odd // 2 + 1, dtype=torch.complex64))


def test_out_variants():
    x = rand(4, 9, dtype=torch.complex64)
    r = rand(4, 9)
    ref = torch.fft.fft(x, norm="ortho")
    out = torch.empty(0, dtype=torch.complex64, device="ocl")
    with torch_ocl.strict():
        got = torch.fft.fft(x.to("ocl"), norm="ortho", out=out)
    assert got is out
    close(out, ref)
    out = torch.empty(0, dtype=torch.complex64, device="ocl")
    with torch_ocl.strict():
        torch.fft.rfft(r.to("ocl"), out=out)
    close(out, torch.fft.rfft(r))
    out = torch.empty(0, dtype=torch.float32, device="ocl")
    with torch_ocl.strict():
        torch.fft.irfft(x.to("ocl"), n=9, out=out)
    close(out, torch.fft.irfft(x, n=9))
    with pytest.raises(RuntimeError):
        torch.fft.fft(x.to("ocl"), out=torch.empty(0, dtype=torch.complex128, device="ocl"))


def test_errors():
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.fft(torch.ones(3, dtype=torch.complex64, device="ocl"), n=0)
    with pytest.raises(RuntimeError, match="Invalid normalization"):
        torch.fft.fft(torch.ones(3, dtype=torch.complex64, device="ocl"), norm="bad")
    # the process stays usable
    check(lambda t: torch.fft.fft(t), rand(5, dtype=torch.complex64))


@pytest.mark.parametrize(
    "fn, dtype",
    [
        (lambda t: torch.fft.fft(t, norm="ortho"), torch.complex64),
        (lambda t: torch.fft.ifft2(t), torch.complex64),
        (lambda t: torch.fft.rfft(t), torch.float32),
        # the backward of a complex-to-real FFT multiplies the complex gradient by a real mask
        (lambda t: torch.fft.irfft(t, n=9), torch.complex64),
        (lambda t: torch.fft.hfft(t, n=8), torch.complex64),
        pytest.param(lambda t: torch.fft.rfftn(t, norm="forward"), torch.float64,
                     marks=pytest.mark.skipif(not fp64_supported(), reason="no cl_khr_fp64")),
    ],
)
def test_gradients(fn, dtype):
    x = rand(3, 5, dtype=dtype, seed=3)

    def loss(y, w):
        return ((torch.view_as_real(y) if y.is_complex() else y) * w).sum()

    y = fn(x)
    w = rand(*(torch.view_as_real(y) if y.is_complex() else y).shape, dtype=torch.float64, seed=4)
    w = w.to(y.real.dtype)
    xc = x.clone().requires_grad_()
    loss(fn(xc), w).backward()
    xo = x.to("ocl").requires_grad_()
    with torch_ocl.strict():
        yo = fn(xo)
        loss(yo, w.to("ocl")).backward()
    close(yo.detach(), y)
    close(xo.grad, xc.grad)


def test_fftshift():
    x = rand(6, 7, dtype=torch.complex64)
    for f in (torch.fft.fftshift, torch.fft.ifftshift):
        check(lambda t: f(t), x)
        check(lambda t: f(t, dim=1), x)
    check(lambda t: torch.fft.fftshift(torch.fft.fftfreq(9, device=t.device) + t), rand(9))
    check(lambda t: torch.fft.rfftfreq(10, d=0.5, device=t.device) + t, rand(6))


def test_stft():
    x = rand(2, 400)
    win = torch.hann_window(64, dtype=torch.float32)
    for center in (True, False):
        check(lambda t, w: torch.stft(t, 64, hop_length=16, window=w, center=center,
                                      return_complex=True), x, win)
    check(lambda t: torch.stft(t, 50, hop_length=20, return_complex=True, onesided=False), x)
    check(lambda t: torch.stft(t, 32, normalized=True, return_complex=True), x[0])


def test_istft():
    x = rand(2, 400)
    win = torch.hann_window(64, dtype=torch.float32)
    spec = torch.stft(x, 64, hop_length=16, window=win, return_complex=True)
    check(lambda s, w: torch.istft(s, 64, hop_length=16, window=w, length=400), spec, win)


def test_threads_share_plans():
    import threading

    x = rand(4, 96, dtype=torch.complex64)
    ref = torch.fft.fft(x)
    xd = x.to("ocl")
    errors = []

    def work():
        try:
            for _ in range(10):
                close(torch.fft.fft(xd), ref)
        except Exception as e:  # reported below
            errors.append(e)

    # strict mode is process-wide: entered once here, not per thread (nested entries from
    # several threads would restore each other's state out of order)
    threads = [threading.Thread(target=work) for _ in range(3)]
    with torch_ocl.strict():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors


def test_second_device():
    out = run_ok(
        """
        import torch, torch_ocl
        x = torch.randn(3, 20, dtype=torch.complex64)
        for dev in ("ocl:0", "ocl:1"):
            with torch_ocl.strict():
                y = torch.fft.fft(x.to(dev))
                r = torch.fft.irfft(y, n=20)
            assert y.device == torch.device(dev) and r.device == torch.device(dev)
            torch.testing.assert_close(y.cpu(), torch.fft.fft(x), rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(r.cpu(), torch.fft.irfft(torch.fft.fft(x), n=20),
                                       rtol=1e-4, atol=1e-5)
        print("ok")
        """,
        env=TWO_DEVICES,
    )
    assert "ok" in out
