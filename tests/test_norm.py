"""Batch, layer, group and RMS normalisation against CPU PyTorch: outputs, running statistics,
saved statistics and gradients. float32 runs in strict mode; float64/float16/bfloat16 too."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-2, atol=2e-2),
    torch.bfloat16: dict(rtol=6e-2, atol=6e-2),
}


def rand(shape, seed, dtype=torch.float64, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift).to(dtype)


def check(fn, tensors, dtype=torch.float32, grads=True, prep=lambda i, t: t):
    """fn(*tensors) on CPU vs ocl (strict mode); every floating input gets a gradient. Half and
    bfloat16 references are computed in float32 on the same rounded inputs."""
    ref_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    cpu = [t.to(dtype) for t in tensors]
    rl = [t.to(ref_dtype).clone().requires_grad_(grads) for t in cpu]
    dl = [t.to("ocl").requires_grad_(grads) for t in cpu]
    ref = fn(*[prep(i, t) for i, t in enumerate(rl)])
    grad = rand(ref.shape, 42, dtype)
    if grads:
        ref.backward(grad.to(ref_dtype))
    with torch_ocl.strict():
        out = fn(*[prep(i, t) for i, t in enumerate(dl)])
        if grads:
            out.backward(grad.to("ocl"))
    assert out.device.type == "ocl" and out.dtype == dtype and out.shape == ref.shape
    torch.testing.assert_close(out.detach().cpu().to(ref_dtype), ref.detach(), **TOL[dtype])
    if grads:
        for d, r in zip(dl, rl):
            if r.grad is None:
                assert d.grad is None
                continue
            torch.testing.assert_close(d.grad.cpu().to(ref_dtype), r.grad, **TOL[dtype])


# (the last two: runs of H * W >= 64 elements, which CPU drivers take in vectors a run per item,
# with a tail that is not a whole vector)
BN_SHAPES = [(4, 3), (2, 3, 7), (2, 5, 4, 3), (1, 2, 9, 1), (3, 2, 2, 2, 3), (2, 3, 9, 11),
             (3, 4, 67)]


@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_train(shape, affine):
    c = shape[1]
    rm, rv = rand((c,), 1), rand((c,), 2).abs() + 0.5
    rm_d, rv_d = rm.float().to("ocl"), rv.float().to("ocl")
    rm_c, rv_c = rm.float(), rv.float()

    def fn(x, w, b):
        rmean, rvar = (rm_d, rv_d) if x.device.type == "ocl" else (rm_c, rv_c)
        return F.batch_norm(x, rmean, rvar, w if affine else None, b if affine else None,
                            training=True, momentum=0.3, eps=1e-3)

    check(fn, [rand(shape, 0, scale=2, shift=1), rand((c,), 3), rand((c,), 4)])
    # both sides updated their running statistics twice (forward runs once per side)
    torch.testing.assert_close(rm_d.cpu(), rm_c, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(rv_d.cpu(), rv_c, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 4, 3), (2, 3, 9, 11)])
def test_batch_norm_eval(shape):
    c = shape[1]
    rm, rv = rand((c,), 1), rand((c,), 2).abs() + 0.5

    def fn(x, w, b):
        dev = x.device
        return F.batch_norm(x, rm.float().to(dev), rv.float().to(dev), w, b, training=False)

    check(fn, [rand(shape, 0), rand((c,), 3), rand((c,), 4)])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_batch_norm_dtypes(dtype):
    def fn(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True)

    check(fn, [rand((3, 4, 5, 2), 0), rand((4,), 1), rand((4,), 2)], dtype=dtype)
    check(fn, [rand((2, 3, 9, 11), 5), rand((3,), 6), rand((3,), 7)], dtype=dtype)


def test_batch_norm_module_channels_last_and_saved_stats():
    torch.manual_seed(0)
    cpu = torch.nn.BatchNorm2d(4)
    dev = torch.nn.BatchNorm2d(4).to("ocl")
    x = rand((3, 4, 5, 6), 0, torch.float32, scale=3, shift=2)
    check(lambda t: cpu(t) if t.device.type == "cpu" else dev(t), [x],
          prep=lambda i, t: t.contiguous(memory_format=torch.channels_last))
    torch.testing.assert_close(dev.running_mean.cpu(), cpu.running_mean)
    torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var)
    assert dev.num_batches_tracked.item() == 1
    with torch_ocl.strict():
        out, mean, invstd = torch.ops.aten._native_batch_norm_legit.no_stats(
            x.to("ocl"), None, None, True, 0.1, 1e-5)
    ref = torch.ops.aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5)
    for got, exp in zip((out, mean, invstd), ref):
        torch.testing.assert_close(got.cpu(), exp, rtol=1e-4, atol=1e-5)


LN_CASES = [((4, 7), (7,)), ((2, 3, 10), (10,)), ((2, 3, 4, 5), (4, 5)), ((1, 1000), (1000,)),
            ((3, 1), (1,))]


@pytest.mark.parametrize("shape,norm", LN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shape, norm, affine):
    if affine:
        check(lambda x, w, b: F.layer_norm(x, norm, w, b, eps=1e-4),
              [rand(shape, 0, scale=2, shift=3), rand(norm, 1), rand(norm, 2)])
    else:
        check(lambda x: F.layer_norm(x, norm), [rand(shape, 0)])


def test_layer_norm_noncontiguous_and_stats():
    check(lambda x, w, b: F.layer_norm(x, (6,), w, b), [rand((6, 5), 0), rand((6,), 1),
          rand((6,), 2)], prep=lambda i, t: t.t() if i == 0 else t)
    x = rand((3, 4, 6), 0, torch.float32)
    with torch_ocl.strict():
        got = torch.native_layer_norm(x.to("ocl"), [6], None, None, 1e-5)
    for g, e in zip(got, torch.native_layer_norm(x, [6], None, None, 1e-5)):
        assert g.shape == e.shape and g.dtype == e.dtype
        torch.testing.assert_close(g.cpu(), e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_layer_norm_dtypes(dtype):
    check(lambda x, w, b: F.layer_norm(x, (33,), w, b), [rand((5, 33), 0), rand((33,), 1),
          rand((33,), 2)], dtype=dtype)


def test_layer_norm_mixed_half_input_float_params():
    x = rand((4, 8), 0, torch.float16)
    w, b = rand((8,), 1, torch.float32), rand((8,), 2, torch.float32)
    with torch_ocl.strict():
        got = F.layer_norm(x.to("ocl"), (8,), w.to("ocl"), b.to("ocl"))
    exp = F.layer_norm(x.float(), (8,), w, b)
    assert got.dtype == torch.float16
    torch.testing.assert_close(got.cpu().float(), exp, rtol=2e-2, atol=2e-2)


def test_layer_norm_errors():
    x = torch.randn(2, 5)
    with pytest.raises(RuntimeError) as cpu_err:
        F.layer_norm(x, (4,))
    with pytest.raises(RuntimeError) as dev_err:
        F.layer_norm(x.to("ocl"), (4,))
    assert str(dev_err.value) == str(cpu_err.value)


GN_CASES = [((2, 6, 5), 3), ((2, 4, 3, 3), 2), ((1, 8, 2, 2, 2), 8), ((3, 4), 1)]


@pytest.mark.parametrize("shape,groups", GN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(shape, groups, affine):
    c = shape[1]
    if affine:
        check(lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-4),
              [rand(shape, 0, scale=2, shift=-1), rand((c,), 1), rand((c,), 2)])
    else:
        check(lambda x: F.group_norm(x, groups), [rand(shape, 0)])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_group_norm_dtypes(dtype):
    check(lambda x, w, b: F.group_norm(x, 2, w, b), [rand((2, 4, 3, 5), 0), rand((4,), 1),
          rand((4,), 2)], dtype=dtype)


def test_rms_norm_composite_is_native():
    check(lambda x, w: F.rms_norm(x, (9,), w, eps=1e-5), [rand((4, 9), 0), rand((9,), 1)])


def test_norm_gradcheck_float64():
    x = rand((3, 4, 2), 0).to("ocl").requires_grad_()
    w = rand((4,), 1).to("ocl").requires_grad_()
    b = rand((4,), 2).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
                                    (x, w, b))
    assert torch.autograd.gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    wl = rand((2,), 3).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w: F.layer_norm(x, (2,), w, None), (x, wl))
