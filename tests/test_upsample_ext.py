"""Upsampling beyond 2-D nearest/bilinear: linear (1-D), trilinear, bicubic, nearest 3-D and
nearest-exact 1/2/3-D, against CPU PyTorch in strict mode: outputs and gradients, align_corners,
sizes and scale factors (including ones CPU special-cases), the four floating dtypes,
channels_last and non-contiguous inputs, empty batches; antialiased bilinear/bicubic;
pixel_shuffle/pixel_unshuffle (composite)."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from test_pool import check, rand

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

# (mode, input shape, interpolate kwargs)
CASES = {
    "linear_x2": ("linear", (2, 3, 7), dict(scale_factor=2)),
    "linear_size": ("linear", (2, 3, 7), dict(size=12)),
    "linear_down": ("linear", (2, 3, 9), dict(size=4)),
    "linear_align": ("linear", (2, 3, 7), dict(size=12, align_corners=True)),
    "linear_align_to1": ("linear", (2, 3, 7), dict(size=1, align_corners=True)),
    "linear_same_size_scale": ("linear", (2, 3, 5), dict(scale_factor=1.1)),
    "linear_scale_frac": ("linear", (1, 2, 6), dict(scale_factor=1.7)),
    "bilinear_same_size_scale": ("bilinear", (1, 2, 5, 5), dict(scale_factor=1.1)),
    "trilinear_x2": ("trilinear", (2, 2, 3, 4, 5), dict(scale_factor=2)),
    "trilinear_size": ("trilinear", (2, 2, 3, 4, 5), dict(size=(5, 3, 7))),
    "trilinear_align": ("trilinear", (2, 2, 3, 4, 5), dict(size=(5, 7, 2), align_corners=True)),
    "trilinear_scale_frac": ("trilinear", (1, 2, 3, 4, 5), dict(scale_factor=(1.5, 0.7, 2.3))),
    "trilinear_recompute": ("trilinear", (1, 2, 3, 4, 5),
                            dict(scale_factor=1.3, recompute_scale_factor=True)),
    "bicubic_x2": ("bicubic", (2, 3, 5, 4), dict(scale_factor=2)),
    "bicubic_size": ("bicubic", (2, 3, 5, 4), dict(size=(7, 11))),
    "bicubic_down": ("bicubic", (2, 3, 9, 8), dict(size=(3, 5))),
    "bicubic_align": ("bicubic", (2, 3, 5, 4), dict(size=(7, 11), align_corners=True)),
    "bicubic_align_down": ("bicubic", (2, 3, 9, 8), dict(size=(4, 3), align_corners=True)),
    "bicubic_scale_frac": ("bicubic", (1, 2, 5, 6), dict(scale_factor=(1.5, 0.6))),
    "bicubic_same_size_scale": ("bicubic", (1, 2, 5, 5), dict(scale_factor=1.1)),
    "bicubic_to1": ("bicubic", (1, 2, 5, 6), dict(size=(1, 1))),
    "bicubic_from1": ("bicubic", (1, 2, 1, 2), dict(size=(4, 5))),
    "nearest3d_x2": ("nearest", (2, 2, 3, 4, 5), dict(scale_factor=2)),
    "nearest3d_size": ("nearest", (2, 2, 3, 4, 5), dict(size=(5, 3, 7))),
    "nearest3d_scale_frac": ("nearest", (1, 2, 3, 4, 5), dict(scale_factor=(1.7, 0.6, 2.2))),
    "exact1d_size": ("nearest-exact", (2, 3, 7), dict(size=12)),
    "exact1d_down": ("nearest-exact", (2, 3, 9), dict(size=4)),
    "exact1d_scale": ("nearest-exact", (2, 3, 7), dict(scale_factor=1.7)),
    "exact2d_size": ("nearest-exact", (2, 3, 5, 4), dict(size=(7, 11))),
    "exact2d_scale": ("nearest-exact", (2, 3, 5, 4), dict(scale_factor=(1.7, 0.6))),
    "exact2d_x2": ("nearest-exact", (2, 3, 5, 4), dict(scale_factor=2)),
    "exact3d_size": ("nearest-exact", (2, 2, 3, 4, 5), dict(size=(5, 3, 7))),
    "exact3d_scale": ("nearest-exact", (1, 2, 3, 4, 5), dict(scale_factor=(1.5, 0.7, 2.3))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_upsample(case):
    mode, shape, kw = CASES[case]
    check(lambda t: F.interpolate(t, mode=mode, **kw), rand(shape, 0))


@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("mode,shape", [("linear", (2, 3, 7)), ("trilinear", (1, 2, 3, 4, 5)),
                                        ("bicubic", (2, 3, 5, 4)), ("nearest", (1, 2, 3, 4, 5)),
                                        ("nearest-exact", (1, 2, 5, 4))])
def test_upsample_dtypes(dtype, mode, shape):
    size = tuple(s * 2 - 1 for s in shape[2:])
    check(lambda t: F.interpolate(t, size=size, mode=mode), rand(shape, 1), dtype=dtype)


def test_upsample_layouts():
    cl3 = lambda t: t.contiguous(memory_format=torch.channels_last_3d)
    cl2 = lambda t: t.contiguous(memory_format=torch.channels_last)
    check(lambda t: F.interpolate(t, scale_factor=2, mode="trilinear"), rand((2, 3, 3, 4, 5), 0),
          prep=cl3)
    check(lambda t: F.interpolate(t, scale_factor=2, mode="nearest"), rand((2, 3, 3, 4, 5), 1),
          prep=cl3)
    check(lambda t: F.interpolate(t, size=(4, 6, 3), mode="nearest-exact"),
          rand((2, 3, 3, 4, 5), 2), prep=cl3)
    check(lambda t: F.interpolate(t, scale_factor=2, mode="bicubic"), rand((2, 3, 4, 5), 3),
          prep=cl2)
    check(lambda t: F.interpolate(t, size=(5, 9), mode="bicubic", align_corners=True),
          rand((2, 3, 5, 4), 4), prep=lambda t: t.transpose(2, 3))
    check(lambda t: F.interpolate(t, size=9, mode="linear"), rand((2, 7, 3), 5),
          prep=lambda t: t.transpose(1, 2))


def test_upsample_infinities_like_cpu():
    # lower-dimensional ops must not pick up 0 * inf from the size-1 dimensions they run with
    x = rand((1, 1, 6), 0)
    x[0, 0, 2] = float("inf")
    for mode in ("linear", "nearest-exact"):
        ref = F.interpolate(x, size=11, mode=mode)
        with torch_ocl.strict():
            got = F.interpolate(x.to("ocl"), size=11, mode=mode)
        torch.testing.assert_close(got.cpu(), ref, equal_nan=True)


def test_upsample_zero_batch_and_out():
    with torch_ocl.strict():
        for mode, shape in (("linear", (0, 3, 4)), ("trilinear", (0, 2, 3, 4, 5)),
                            ("bicubic", (0, 2, 3, 4)), ("nearest", (0, 2, 3, 4, 5)),
                            ("nearest-exact", (0, 2, 3, 4, 5))):
            x = torch.empty(shape, device="ocl", requires_grad=True)
            y = F.interpolate(x, scale_factor=2, mode=mode)
            assert y.shape == shape[:2] + tuple(2 * s for s in shape[2:])
            y.sum().backward()
            assert x.grad.shape == x.shape
        x = rand((2, 3, 5), 0)
        out = torch.empty(0, device="ocl")
        torch.ops.aten._upsample_nearest_exact1d.out(x.to("ocl"), [8], None, out=out)
    assert torch.equal(out.cpu(), torch.ops.aten._upsample_nearest_exact1d(x, [8], None))


def test_upsample_nearest_uint8_native_other_integers_like_cpu():
    x = torch.randint(0, 255, (1, 2, 3, 4, 5), dtype=torch.uint8)
    for mode, inp in (("nearest", x), ("nearest-exact", x), ("nearest", x[:, :, 0]),
                      ("nearest-exact", x[:, :, 0, 0])):
        ref = F.interpolate(inp, scale_factor=2, mode=mode)
        with torch_ocl.strict():
            got = F.interpolate(inp.to("ocl"), scale_factor=2, mode=mode)
        assert torch.equal(got.cpu(), ref)
    with pytest.raises(RuntimeError) as cpu_err:  # CPU has no int32 nearest
        F.interpolate(x.int(), scale_factor=2)
    with pytest.raises(RuntimeError) as ocl_err:  # its error, through the counted fallback
        F.interpolate(x.int().to("ocl"), scale_factor=2)
    assert str(ocl_err.value).split("\n")[0] == str(cpu_err.value).split("\n")[0]


@pytest.mark.parametrize("fn", [
    lambda t: F.interpolate(t, size=(2, 2), mode="trilinear"),
    lambda t: torch.ops.aten.upsample_trilinear3d(t[0], [4, 4, 4], False),
    lambda t: torch.ops.aten.upsample_bicubic2d(t[0, 0], [4, 4], False),
    lambda t: torch.ops.aten.upsample_linear1d(t[0, 0], [0], False),
    lambda t: torch.ops.aten._upsample_nearest_exact3d(t[:, :0], [4, 4, 4]),
])
def test_upsample_errors_match_cpu(fn):
    x = rand((1, 2, 3, 4, 5), 0)
    with pytest.raises((RuntimeError, ValueError)) as cpu_err:
        fn(x)
    with pytest.raises((RuntimeError, ValueError)) as dev_err:
        fn(x.to("ocl"))
    assert str(dev_err.value) == str(cpu_err.value)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pixel_shuffle_unshuffle_native(dtype):
    x = rand((2, 8, 3, 5), 0, dtype)
    check(lambda t: F.pixel_shuffle(t, 2), x, dtype=dtype)
    check(lambda t: F.pixel_unshuffle(t, 3), rand((2, 2, 6, 9), 1, dtype), dtype=dtype)
    check(lambda t: F.pixel_shuffle(t, 2), rand((8, 3, 5), 2, dtype), dtype=dtype,
          prep=lambda t: t.transpose(1, 2).contiguous().transpose(1, 2))



AA_CASES = [((2, 3, 9, 13), dict(size=(4, 5))), ((2, 3, 6, 5), dict(size=(12, 11))),
            ((1, 2, 7, 7), dict(size=(3, 7))), ((1, 2, 8, 9), dict(size=(8, 3))),
            ((1, 2, 17, 6), dict(scale_factor=(0.3, 1.6))),
            ((1, 2, 9, 13), dict(size=(4, 5), align_corners=True)),
            ((1, 2, 9, 13), dict(size=(1, 1)))]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,kw", AA_CASES)
def test_upsample_antialias(mode, shape, kw):
    check(lambda t: F.interpolate(t, mode=mode, antialias=True, **kw), rand(shape, 0))


@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_upsample_antialias_dtypes_layouts(dtype, mode):
    check(lambda t: F.interpolate(t, size=(4, 11), mode=mode, antialias=True),
          rand((2, 3, 9, 5), 1), dtype=dtype)
    check(lambda t: F.interpolate(t, size=(4, 11), mode=mode, antialias=True),
          rand((2, 3, 9, 5), 2), dtype=dtype,
          prep=lambda t: t.contiguous(memory_format=torch.channels_last))
