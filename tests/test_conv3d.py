"""3-D convolutions (conv3d, conv_transpose3d) and nn.functional.unfold/fold (im2col/col2im) on the
device against CPU in strict mode: strides, padding, dilation, groups, depthwise, odd sizes,
non-contiguous inputs, zero-size batches, float64 and 16-bit, gradients of input, weight and bias."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10),
       torch.bfloat16: (3e-2, 3e-2), torch.float16: (3e-3, 3e-3)}


def compare(fn, *cpu_args, dtype=torch.float32, grad=True):
    """fn on CPU and on ocl with the same leaves; compares outputs and every leaf's gradient."""
    ref_args = [a.detach().clone().requires_grad_(grad and a.is_floating_point())
                for a in cpu_args]
    ocl_args = [a.detach().to("ocl").requires_grad_(grad and a.is_floating_point())
                for a in cpu_args]
    rtol, atol = TOL[dtype]
    ref = fn(*ref_args)
    with torch_ocl.strict():
        got = fn(*ocl_args)
        torch.testing.assert_close(got.cpu(), ref, rtol=rtol, atol=atol)
        if grad and ref.numel() > 0:
            g = torch.randn(ref.shape, generator=torch.Generator().manual_seed(1)).to(dtype)
            ref.backward(g)
            got.backward(g.to("ocl"))
            for r, o in zip(ref_args, ocl_args):
                if r.grad is not None:
                    torch.testing.assert_close(o.grad.cpu(), r.grad, rtol=rtol * 10, atol=atol * 10)


def rnd(*shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("cfg", [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=(1, 2, 3), padding=(2, 0, 1), dilation=(2, 1, 1), groups=1),
    dict(stride=1, padding=1, dilation=1, groups=2),
    dict(stride=1, padding="same", dilation=1, groups=1),
])
def test_conv3d(cfg):
    x, w, b = rnd(2, 4, 5, 7, 6), rnd(6, 4 // cfg["groups"], 3, 2, 3, seed=1), rnd(6, seed=2)
    compare(lambda x, w, b: F.conv3d(x, w, b, **cfg), x, w, b)


def test_conv3d_depthwise_noncontiguous_and_empty():
    x = rnd(2, 5, 6, 7, 3).permute(0, 1, 4, 2, 3)  # (2, 5, 3, 6, 7), strided
    w = rnd(10, 1, 2, 3, 3, seed=1)
    compare(lambda x, w: F.conv3d(x, w, padding=1, groups=5), x, w)
    compare(lambda x, w: F.conv3d(x, w), rnd(0, 3, 4, 4, 4), rnd(2, 3, 2, 2, 2, seed=1),
            grad=False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_conv3d_dtypes(dtype):
    x, w = rnd(1, 3, 4, 5, 4, dtype=dtype), rnd(2, 3, 2, 2, 2, dtype=dtype, seed=1)
    compare(lambda x, w: F.conv3d(x, w, stride=(2, 1, 1), padding=1), x, w, dtype=dtype)


@pytest.mark.parametrize("cfg", [
    dict(stride=1, padding=0, output_padding=0, groups=1, dilation=1),
    dict(stride=2, padding=1, output_padding=1, groups=1, dilation=1),
    dict(stride=(2, 1, 3), padding=(0, 1, 1), output_padding=(1, 0, 2), groups=2, dilation=1),
    dict(stride=1, padding=1, output_padding=0, groups=1, dilation=2),
])
def test_conv_transpose3d(cfg):
    x, w, b = rnd(2, 4, 3, 4, 5), rnd(4, 6 // cfg["groups"], 3, 2, 3, seed=1), rnd(6, seed=2)
    compare(lambda x, w, b: F.conv_transpose3d(x, w, b, **cfg), x, w, b)


def test_module_conv3d_training_step():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Conv3d(2, 4, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.ConvTranspose3d(4, 2, 2, stride=2))
    dev = torch.nn.Sequential(*[m for m in __import__("copy").deepcopy(ref)]).to("ocl")
    x = rnd(2, 2, 4, 5, 6)
    with torch_ocl.strict():
        out = dev(x.to("ocl"))
        out.square().mean().backward()
    r = ref(x)
    r.square().mean().backward()
    torch.testing.assert_close(out.cpu(), r, rtol=1e-4, atol=1e-5)
    for p, q in zip(dev.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cfg", [
    dict(kernel_size=2),
    dict(kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
    dict(kernel_size=3, padding=2, stride=3),
])
@pytest.mark.parametrize("batched", [True, False])
def test_unfold_fold(cfg, batched):
    x = rnd(2, 3, 7, 8) if batched else rnd(3, 7, 8)
    compare(lambda x: F.unfold(x, **cfg), x)
    cols = F.unfold(x, **cfg)
    compare(lambda c: F.fold(c, output_size=(7, 8), **cfg), cols)
    # a strided view
    compare(lambda x: F.unfold(x.transpose(-1, -2), **cfg), x)


def test_unfold_fold_errors():
    x = rnd(1, 2, 3, 3).to("ocl")
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.unfold(x, kernel_size=5)
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(rnd(1, 5, 4).to("ocl"), output_size=(3, 3), kernel_size=2)
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(rnd(1, 8, 5).to("ocl"), output_size=(3, 3), kernel_size=2)
    assert F.unfold(x, kernel_size=2).shape == (1, 8, 4)  # the process stays usable
