"""Pooling and upsampling (max/avg pool 1-D and 2-D, adaptive avg/max, nearest and bilinear
upsampling) against CPU PyTorch: outputs, indices and gradients. float32 runs in strict mode;
float64/float16/bfloat16 are checked too."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=1e-2, atol=1e-2),
    torch.bfloat16: dict(rtol=5e-2, atol=5e-2),
}


def rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def check(fn, x, dtype=torch.float32, prep=lambda t: t, outputs=lambda r: (r, None)):
    """fn on CPU and ocl in strict mode; the first output and its input gradient are compared
    with dtype tolerances, a second output (indices) exactly. half/bfloat16 references are
    computed in float32 on the same rounded inputs."""
    x = x.to(dtype)
    ref_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    xc = x.to(ref_dtype).clone().requires_grad_()
    xd = x.to("ocl").requires_grad_()
    rc, ic = outputs(fn(prep(xc)))
    grad = rand(rc.shape, 7, dtype)
    rc.backward(grad.to(ref_dtype))
    with torch_ocl.strict():
        rd, idx = outputs(fn(prep(xd)))
        rd.backward(grad.to("ocl"))
    assert rd.device.type == "ocl" and rd.dtype == dtype and rd.shape == rc.shape
    torch.testing.assert_close(rd.detach().cpu().to(ref_dtype), rc.detach(), **TOL[dtype])
    if ic is not None:
        assert torch.equal(idx.cpu(), ic)
    torch.testing.assert_close(xd.grad.cpu().to(ref_dtype), xc.grad, **TOL[dtype])


MAX_CASES = {
    "k2": dict(kernel_size=2),
    "k3s2p1": dict(kernel_size=3, stride=2, padding=1),
    "ceil": dict(kernel_size=3, stride=2, ceil_mode=True),
    "dilation": dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), dilation=2),
    "overlap": dict(kernel_size=3, stride=1, padding=1),
}


@pytest.mark.parametrize("case", list(MAX_CASES))
def test_max_pool2d(case):
    kw = MAX_CASES[case]
    check(lambda t: F.max_pool2d(t, return_indices=True, **kw), rand((2, 3, 9, 11), 0),
          outputs=lambda r: r)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_max_pool2d_dtypes(dtype):
    check(lambda t: F.max_pool2d(t, 3, 2, 1), rand((2, 3, 9, 11), 0), dtype=dtype)


def test_max_pool2d_layouts_and_nan():
    check(lambda t: F.max_pool2d(t, 2), rand((2, 4, 6, 8), 1),
          prep=lambda t: t.contiguous(memory_format=torch.channels_last))
    check(lambda t: F.max_pool2d(t, 3, 1), rand((5, 7, 6), 2), prep=lambda t: t.transpose(1, 2))
    x = rand((1, 1, 4, 4), 3)
    x[0, 0, 1, 1] = float("nan")
    x[0, 0, 3, 0] = float("-inf")
    with torch_ocl.strict():
        got = F.max_pool2d(x.to("ocl"), 2, return_indices=True)
    exp = F.max_pool2d(x, 2, return_indices=True)
    torch.testing.assert_close(got[0].cpu(), exp[0], equal_nan=True)
    assert torch.equal(got[1].cpu(), exp[1])


def test_max_pool1d_and_unbatched():
    check(lambda t: F.max_pool1d(t, 3, 2, 1), rand((2, 3, 17), 4))
    check(lambda t: F.max_pool2d(t, 2), rand((3, 7, 5), 5))
    check(lambda t: F.max_pool2d(t, 2), rand((1, 1, 2, 2), 6))


AVG_CASES = {
    "k2": dict(kernel_size=2),
    "pad_include": dict(kernel_size=3, stride=2, padding=1),
    "pad_exclude": dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    "ceil": dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    "ceil_include": dict(kernel_size=(2, 3), stride=2, ceil_mode=True),
    "divisor": dict(kernel_size=3, stride=1, padding=1, divisor_override=5),
    "divisor_negative": dict(kernel_size=2, divisor_override=-2),  # allowed by PyTorch
}


@pytest.mark.parametrize("case", list(AVG_CASES))
def test_avg_pool2d(case):
    kw = AVG_CASES[case]
    check(lambda t: F.avg_pool2d(t, **kw), rand((2, 3, 9, 10), 0))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_avg_pool2d_dtypes(dtype):
    check(lambda t: F.avg_pool2d(t, 3, 2, 1), rand((2, 3, 9, 11), 0), dtype=dtype)


def test_avg_pool1d_and_layouts():
    check(lambda t: F.avg_pool1d(t, 4, 3, 2, ceil_mode=True), rand((2, 3, 19), 1))
    check(lambda t: F.avg_pool2d(t, 2), rand((2, 4, 6, 8), 2),
          prep=lambda t: t.contiguous(memory_format=torch.channels_last))


@pytest.mark.parametrize("size", [(1, 1), (3, 4), (7, 5), (10, 13), (4, 1)])
def test_adaptive_avg_pool2d(size):
    check(lambda t: F.adaptive_avg_pool2d(t, size), rand((2, 3, 7, 9), 0))


@pytest.mark.parametrize("size", [(1, 1), (3, 4), (7, 5), (10, 13)])
def test_adaptive_max_pool2d(size):
    check(lambda t: F.adaptive_max_pool2d(t, size, return_indices=True), rand((2, 3, 7, 9), 0),
          outputs=lambda r: r)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_adaptive_dtypes(dtype):
    check(lambda t: F.adaptive_avg_pool2d(t, (3, 2)), rand((2, 3, 7, 5), 0), dtype=dtype)
    check(lambda t: F.adaptive_max_pool2d(t, (3, 2)), rand((2, 3, 7, 5), 0), dtype=dtype)


def test_adaptive_avg_pool_unbatched_and_1d():
    check(lambda t: F.adaptive_avg_pool2d(t, 3), rand((4, 5, 6), 0))
    check(lambda t: F.adaptive_avg_pool1d(t, 4), rand((2, 3, 11), 1))


def test_pool_errors_match_cpu():
    x = rand((1, 1, 4, 4), 0)
    for fn in (lambda t: F.max_pool2d(t, 5), lambda t: F.avg_pool2d(t, 2, padding=2)):
        with pytest.raises(RuntimeError) as cpu_err:
            fn(x)
        with pytest.raises(RuntimeError) as dev_err:
            fn(x.to("ocl"))
        assert str(dev_err.value) == str(cpu_err.value)
    assert F.max_pool2d(x.to("ocl"), 2).shape == (1, 1, 2, 2)


def test_pool_zero_batch():
    with torch_ocl.strict():
        assert F.max_pool2d(torch.empty(0, 3, 4, 4, device="ocl"), 2).shape == (0, 3, 2, 2)
        assert F.avg_pool2d(torch.empty(0, 3, 4, 4, device="ocl"), 2).shape == (0, 3, 2, 2)


def test_integer_adaptive_max_pool_errors_like_cpu():
    # CPU has no integer adaptive max pooling; ocl gives its error (through the counted fallback)
    # rather than an answer CPU would not give. Integer max_pool2d is native (above).
    x = torch.randint(-50, 50, (1, 2, 4, 4))
    with pytest.raises(NotImplementedError) as cpu_err:
        F.adaptive_max_pool2d(x, 2)
    with pytest.raises(NotImplementedError) as ocl_err:
        F.adaptive_max_pool2d(x.to("ocl"), 2)
    assert str(ocl_err.value).split("\n")[0] == str(cpu_err.value).split("\n")[0]


UP_CASES = {
    "nearest_x2": dict(scale_factor=2, mode="nearest"),
    "nearest_size": dict(size=(7, 5), mode="nearest"),
    "nearest_down": dict(size=(2, 3), mode="nearest"),
    "nearest_scale_frac": dict(scale_factor=(1.7, 0.6), mode="nearest"),
    "bilinear_x2": dict(scale_factor=2, mode="bilinear"),
    "bilinear_size": dict(size=(7, 11), mode="bilinear"),
    "bilinear_align": dict(size=(7, 11), mode="bilinear", align_corners=True),
    "bilinear_down_align": dict(size=(3, 2), mode="bilinear", align_corners=True),
    "bilinear_scale_frac": dict(scale_factor=(1.5, 2.3), mode="bilinear"),
    "bilinear_recompute": dict(scale_factor=1.3, mode="bilinear", recompute_scale_factor=True),
    "bilinear_to1": dict(size=(1, 1), mode="bilinear", align_corners=True),
}


@pytest.mark.parametrize("case", list(UP_CASES))
def test_upsample(case):
    kw = UP_CASES[case]
    check(lambda t: F.interpolate(t, **kw), rand((2, 3, 5, 4), 0))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_upsample_dtypes(dtype):
    check(lambda t: F.interpolate(t, scale_factor=2, mode="nearest"), rand((1, 2, 3, 5), 0),
          dtype=dtype)
    check(lambda t: F.interpolate(t, size=(6, 7), mode="bilinear"), rand((1, 2, 3, 5), 0),
          dtype=dtype)


def test_upsample_layouts():
    check(lambda t: F.interpolate(t, scale_factor=2, mode="bilinear"), rand((2, 3, 4, 5), 0),
          prep=lambda t: t.contiguous(memory_format=torch.channels_last))
    check(lambda t: F.interpolate(t, size=(5, 9), mode="nearest"), rand((2, 3, 5, 4), 1),
          prep=lambda t: t.transpose(2, 3))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_max_pool2d_integers(dtype):
    # Integers start from the dtype's lowest value (a window of minima keeps it) and compare
    # exactly; outputs and indices must equal CPU's.
    info = torch.iinfo(dtype)
    g = torch.Generator().manual_seed(5)
    x = torch.randint(max(info.min, -100), min(info.max, 100), (2, 3, 9, 11), generator=g).to(dtype)
    x[0, 0, :3, :3] = info.min
    xt = x.transpose(2, 3)  # non-contiguous input
    for inp in (x, xt):
        for k, s, p, d, ceil in [(3, 3, 0, 1, False), (2, 1, 1, 1, False), (3, 2, 1, 2, True)]:
            ref = F.max_pool2d(inp, k, s, p, d, ceil_mode=ceil, return_indices=True)
            with torch_ocl.strict():
                got = F.max_pool2d(inp.to("ocl"), k, s, p, d, ceil_mode=ceil, return_indices=True)
            assert torch.equal(got[0].cpu(), ref[0]) and torch.equal(got[1].cpu(), ref[1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_upsample_nearest1d(dtype):
    x = rand((2, 3, 7), 4, dtype)
    for kw in (dict(scale_factor=2), dict(size=11), dict(size=4), dict(scale_factor=1.7)):
        xc = x.clone().requires_grad_()
        xd = x.to("ocl").requires_grad_()
        ref = F.interpolate(xc, mode="nearest", **kw)
        with torch_ocl.strict():
            got = F.interpolate(xd, mode="nearest", **kw)
            g = rand(ref.shape, 5, dtype)
            got.backward(g.to("ocl"))
        ref.backward(g)
        torch.testing.assert_close(got.detach().cpu(), ref.detach())
        torch.testing.assert_close(xd.grad.cpu(), xc.grad)
