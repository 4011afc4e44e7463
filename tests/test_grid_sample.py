"""grid_sample (grid_sampler_2d/3d and their backward) and affine_grid against CPU PyTorch in strict
mode: every interpolation and padding mode, align_corners, grids reaching outside the input,
non-contiguous and channels_last inputs, the four floating dtypes, gradients for input and grid."""

import itertools

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from test_pool import TOL, rand

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
MODES = list(itertools.product(["bilinear", "nearest", "bicubic"],
                               ["zeros", "border", "reflection"], [False, True]))


def grid_of(n, h, w, seed, spread=1.3):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, h, w, 2, generator=g, dtype=torch.float64) * 2 - 1) * spread


def compare(x, grid, dtype, prep=lambda t: t, **kw):
    ref_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    x, grid = x.to(dtype), grid.to(dtype)
    xc = prep(x.to(ref_dtype)).detach().clone().requires_grad_()
    gc = grid.to(ref_dtype).detach().clone().requires_grad_()
    yc = F.grid_sample(xc, gc, **kw)
    go = rand(yc.shape, 3, dtype)
    yc.backward(go.to(ref_dtype))
    xd = prep(x.to("ocl")).detach().requires_grad_()
    gd = grid.to("ocl").detach().requires_grad_()
    with torch_ocl.strict():
        yd = F.grid_sample(xd, gd, **kw)
        yd.backward(go.to("ocl"))
    assert yd.dtype == dtype
    tol = TOL[dtype] if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(yd.detach().cpu().to(ref_dtype), yc.detach(), **tol)
    torch.testing.assert_close(xd.grad.cpu().to(ref_dtype), xc.grad, **tol)
    if dtype in (torch.float32, torch.float64):  # 16-bit grids move taps across pixels
        torch.testing.assert_close(gd.grad.cpu().to(ref_dtype), gc.grad, **tol)


@pytest.mark.parametrize("mode,padding,align", MODES)
def test_grid_sample(mode, padding, align):
    compare(rand((2, 3, 5, 7), 0), grid_of(2, 4, 6, 1), torch.float32, mode=mode,
            padding_mode=padding, align_corners=align)


@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_dtypes(dtype, mode):
    compare(rand((2, 3, 5, 7), 0), grid_of(2, 4, 6, 2), dtype, mode=mode,
            padding_mode="reflection", align_corners=False)


def test_grid_sample_layouts_and_shapes():
    compare(rand((2, 3, 6, 5), 0), grid_of(2, 3, 4, 3), torch.float32,
            prep=lambda t: t.contiguous(memory_format=torch.channels_last), mode="bilinear",
            padding_mode="zeros", align_corners=False)
    compare(rand((2, 3, 6, 5), 1), grid_of(2, 7, 2, 4), torch.float32,
            prep=lambda t: t.transpose(2, 3), mode="bicubic", padding_mode="border",
            align_corners=True)
    compare(rand((1, 1, 1, 1), 2), grid_of(1, 3, 3, 5), torch.float32, mode="bilinear",
            padding_mode="reflection", align_corners=True)
    with torch_ocl.strict():
        y = F.grid_sample(torch.empty(0, 3, 4, 4, device="ocl"), torch.empty(0, 2, 2, 2,
                                                                              device="ocl"),
                          align_corners=False)
    assert y.shape == (0, 3, 2, 2)


def test_affine_grid_native():
    theta = torch.randn(2, 2, 3, dtype=torch.float64)
    for align in (False, True):
        ref = F.affine_grid(theta, (2, 3, 5, 7), align_corners=align)
        with torch_ocl.strict():
            got = F.affine_grid(theta.to("ocl"), (2, 3, 5, 7), align_corners=align)
        torch.testing.assert_close(got.cpu(), ref)


def test_grid_sample_errors_match_cpu():
    x, g = rand((2, 3, 4, 4), 0), grid_of(2, 3, 3, 0)
    for fn in (lambda a, b: torch.grid_sampler_2d(a, b[:1], 0, 0, False),
               lambda a, b: torch.grid_sampler_2d(a, b[..., :1], 0, 0, False),
               lambda a, b: torch.grid_sampler_2d(a[:, :, :0], b, 0, 0, False),
               lambda a, b: torch.grid_sampler_2d(a[0], b[0], 0, 0, False)):
        with pytest.raises(RuntimeError) as cpu_err:
            fn(x, g)
        with pytest.raises(RuntimeError) as dev_err:
            fn(x.to("ocl"), g.to("ocl"))
        assert str(dev_err.value) == str(cpu_err.value)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_far_outside(mode):
    # several reflections and long border runs
    for padding, align in (("reflection", False), ("reflection", True), ("border", False)):
        compare(rand((1, 2, 4, 5), 4), grid_of(1, 5, 6, 6, spread=3.5), torch.float64,
                mode=mode, padding_mode=padding, align_corners=align)


def grid3_of(n, d, h, w, seed, spread=1.3):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, d, h, w, 3, generator=g, dtype=torch.float64) * 2 - 1) * spread


@pytest.mark.parametrize("mode,padding,align",
                         [m for m in MODES if m[0] != "bicubic"])
def test_grid_sample_3d(mode, padding, align):
    compare(rand((2, 3, 4, 5, 6), 0), grid3_of(2, 3, 2, 4, 1), torch.float32, mode=mode,
            padding_mode=padding, align_corners=align)


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_grid_sample_3d_dtypes_layouts(dtype):
    compare(rand((2, 3, 4, 5, 6), 0), grid3_of(2, 3, 2, 4, 2, spread=3.0), dtype,
            mode="bilinear", padding_mode="reflection", align_corners=False)
    compare(rand((2, 3, 4, 5, 6), 1), grid3_of(2, 2, 3, 2, 3), dtype,
            prep=lambda t: t.contiguous(memory_format=torch.channels_last_3d), mode="nearest",
            padding_mode="border", align_corners=True)


def test_grid_sample_3d_errors_match_cpu():
    x, g = rand((1, 2, 3, 4, 4), 0), grid3_of(1, 2, 2, 2, 0)
    for fn in (lambda a, b: torch.grid_sampler_3d(a, b, 2, 0, False),  # no 3-D bicubic
               lambda a, b: torch.grid_sampler_3d(a[0], b[0], 0, 0, False),
               lambda a, b: torch.grid_sampler_3d(a, b[..., :2], 0, 0, False)):
        with pytest.raises(RuntimeError) as cpu_err:
            fn(x, g)
        with pytest.raises(RuntimeError) as dev_err:
            fn(x.to("ocl"), g.to("ocl"))
        assert str(dev_err.value) == str(cpu_err.value)
