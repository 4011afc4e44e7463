"""Fractional max pooling (2-D and 3-D) against CPU PyTorch: with the same _random_samples, the
outputs, indices and gradients must equal CPU's exactly (CPU computes the windows in the input's
dtype; so does ocl); nn.FractionalMaxPool2d/3d draw their samples on the device in strict mode."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_ocl
from test_pool import rand

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def compare(fn, x, samples, prep=lambda t: t):
    xc = x.clone().requires_grad_()
    yc, ic = fn(prep(xc), samples)
    g = rand(yc.shape, 9, x.dtype)
    yc.backward(g)
    xd = x.to("ocl").requires_grad_()
    with torch_ocl.strict():
        yd, idx = fn(prep(xd), samples.to("ocl"))
        yd.backward(g.to("ocl"))
    assert yd.dtype == x.dtype and yd.device.type == "ocl"
    assert torch.equal(idx.cpu(), ic)
    assert torch.equal(yd.detach().cpu(), yc.detach())
    assert torch.equal(xd.grad.cpu(), xc.grad)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2, output_size=(13, 17)),
                                dict(kernel_size=(3, 2), output_ratio=(0.5, 0.7)),
                                dict(kernel_size=3, output_size=(1, 30)),
                                dict(kernel_size=1, output_size=(37, 32))])
def test_fractional_max_pool2d(dtype, kw):
    x = rand((2, 3, 37, 32), 0, dtype)
    samples = torch.rand(2, 3, 2, generator=torch.Generator().manual_seed(1)).to(dtype)
    compare(lambda t, s: F.fractional_max_pool2d(t, return_indices=True, _random_samples=s, **kw),
            x, samples)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2, output_size=(5, 7, 6)),
                                dict(kernel_size=(3, 2, 2), output_ratio=(0.5, 0.7, 0.6)),
                                dict(kernel_size=2, output_size=(1, 3, 11))])
def test_fractional_max_pool3d(dtype, kw):
    x = rand((2, 3, 9, 11, 13), 0, dtype)
    samples = torch.rand(2, 3, 3, generator=torch.Generator().manual_seed(1)).to(dtype)
    compare(lambda t, s: F.fractional_max_pool3d(t, return_indices=True, _random_samples=s, **kw),
            x, samples)


def test_fractional_layouts_unbatched():
    s2 = torch.rand(2, 3, 2, generator=torch.Generator().manual_seed(2))
    compare(lambda t, s: F.fractional_max_pool2d(t, 2, output_size=(5, 6), return_indices=True,
                                                 _random_samples=s),
            rand((2, 3, 11, 13), 3), s2,
            prep=lambda t: t.contiguous(memory_format=torch.channels_last))
    compare(lambda t, s: F.fractional_max_pool2d(t, 2, output_size=(5, 6), return_indices=True,
                                                 _random_samples=s),
            rand((3, 13, 11), 4), s2[:1], prep=lambda t: t.transpose(1, 2))
    s3 = torch.rand(1, 3, 3, generator=torch.Generator().manual_seed(5))
    compare(lambda t, s: F.fractional_max_pool3d(t, 2, output_size=(3, 4, 2), return_indices=True,
                                                 _random_samples=s),
            rand((3, 7, 8, 6), 6), s3)
    compare(lambda t, s: F.fractional_max_pool3d(t, 2, output_size=(3, 4, 2), return_indices=True,
                                                 _random_samples=s),
            rand((1, 3, 7, 8, 6), 7), s3,
            prep=lambda t: t.contiguous(memory_format=torch.channels_last_3d))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fractional_modules_native(dtype):
    # The modules draw _random_samples with torch.rand on the device (the ocl generator).
    torch.manual_seed(0)
    with torch_ocl.strict():
        for mod, shape in ((nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True),
                            (2, 4, 16, 12)),
                           (nn.FractionalMaxPool3d(2, output_size=(3, 4, 5), return_indices=True),
                            (2, 3, 8, 9, 10))):
            x = torch.randn(shape, device="ocl", dtype=dtype, requires_grad=True)
            y, idx = mod(x)
            y.sum().backward()
            # each output is the max of its input plane at its index; the gradient lands there
            planes = x.detach().flatten(2)
            assert torch.equal(planes.gather(2, idx.flatten(2)), y.detach().flatten(2))
            counts = torch.zeros_like(planes).scatter_add_(2, idx.flatten(2),
                                                           torch.ones_like(y).flatten(2))
            assert torch.equal(x.grad.flatten(2), counts)


def test_fractional_errors_match_cpu():
    x = rand((1, 2, 9, 9), 0)
    cases = [
        lambda t, d: F.fractional_max_pool2d(
            t, 2, output_size=(5, 5),
            _random_samples=torch.rand(1, 2, 2, dtype=torch.float64, device=d)),
        lambda t, d: F.fractional_max_pool2d(t, 2, output_size=(5, 5),
                                             _random_samples=torch.rand(1, 3, 2, device=d)),
        lambda t, d: F.fractional_max_pool2d(t, 5, output_size=(6, 6),
                                             _random_samples=torch.rand(1, 2, 2, device=d)),
        lambda t, d: F.fractional_max_pool3d(t[None], 2, output_size=(1, 5, 5),
                                             _random_samples=torch.rand(1, 1, 2, device=d)),
    ]
    for fn in cases:
        with pytest.raises(RuntimeError) as cpu_err:
            fn(x, "cpu")
        with pytest.raises(RuntimeError) as dev_err:
            fn(x.to("ocl"), "ocl")
        assert str(dev_err.value) == str(cpu_err.value)


def test_fractional_3d_backward_errors_match_cpu():
    x, s = rand((1, 2, 9, 9, 9), 0), torch.rand(1, 2, 3)
    y, i = F.fractional_max_pool3d(x, 2, output_size=(4, 5, 6), _random_samples=s,
                                   return_indices=True)
    for args in [(y[:, :, :3].contiguous(), x, [2, 2, 2], [4, 5, 6], i),
                 (y, x, [2, 2, 2], [4, 5, 7], i), (y[0], x, [2, 2, 2], [4, 5, 6], i)]:
        with pytest.raises(RuntimeError) as cpu_err:
            torch.ops.aten.fractional_max_pool3d_backward(*args)
        with pytest.raises(RuntimeError) as dev_err:
            torch.ops.aten.fractional_max_pool3d_backward(
                *[a.to("ocl") if isinstance(a, torch.Tensor) else a for a in args])
        assert str(dev_err.value) == str(cpu_err.value)
