"""3-D pooling (max with indices, avg, adaptive avg/max, area interpolation) against CPU PyTorch:
outputs, indices and gradients in strict mode, for the four floating dtypes, with
channels_last_3d and non-contiguous inputs, odd sizes and empty batches; max_unpool3d; LP pooling
(composite over the average pools)."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from test_pool import check, rand

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

MAX_CASES = {
    "k2": dict(kernel_size=2),
    "k3s2p1": dict(kernel_size=3, stride=2, padding=1),
    "ceil": dict(kernel_size=(2, 3, 3), stride=2, ceil_mode=True),
    "dilation": dict(kernel_size=(2, 2, 3), stride=(1, 2, 1), padding=(1, 0, 1), dilation=2),
    "overlap": dict(kernel_size=3, stride=1, padding=1),
}


@pytest.mark.parametrize("case", list(MAX_CASES))
def test_max_pool3d(case):
    kw = MAX_CASES[case]
    check(lambda t: F.max_pool3d(t, return_indices=True, **kw), rand((2, 3, 5, 7, 6), 0),
          outputs=lambda r: r)


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_max_pool3d_dtypes(dtype):
    check(lambda t: F.max_pool3d(t, 3, 2, 1, return_indices=True), rand((2, 2, 5, 6, 7), 1),
          dtype=dtype, outputs=lambda r: (r[0], None))


def test_max_pool3d_layouts_nan_unbatched():
    cl = lambda t: t.contiguous(memory_format=torch.channels_last_3d)
    check(lambda t: F.max_pool3d(t, 2, return_indices=True), rand((2, 4, 4, 6, 5), 2), prep=cl,
          outputs=lambda r: r)
    check(lambda t: F.max_pool3d(t, 2, 1), rand((2, 3, 5, 4, 6), 3),
          prep=lambda t: t.transpose(2, 4))
    check(lambda t: F.max_pool3d(t, (1, 2, 2), return_indices=True), rand((3, 4, 5, 5), 4),
          outputs=lambda r: r)
    x = rand((1, 1, 2, 4, 4), 5)
    x[0, 0, 1, 1, 1] = float("nan")
    with torch_ocl.strict():
        got = F.max_pool3d(x.to("ocl"), 2, return_indices=True)
    exp = F.max_pool3d(x, 2, return_indices=True)
    torch.testing.assert_close(got[0].cpu(), exp[0], equal_nan=True)
    assert torch.equal(got[1].cpu(), exp[1])
    with torch_ocl.strict():
        y = F.max_pool3d(cl(rand((2, 3, 4, 4, 4), 6)).to("ocl"), 2)
    assert y.is_contiguous(memory_format=torch.channels_last_3d)


def test_max_pool3d_integers():
    x = torch.randint(-100, 100, (2, 3, 5, 6, 7), generator=torch.Generator().manual_seed(0))
    ref = F.max_pool3d(x, 3, 2, 1, return_indices=True)
    with torch_ocl.strict():
        got = F.max_pool3d(x.to("ocl"), 3, 2, 1, return_indices=True)
    assert torch.equal(got[0].cpu(), ref[0]) and torch.equal(got[1].cpu(), ref[1])


AVG_CASES = {
    "k2": dict(kernel_size=2),
    "pad_include": dict(kernel_size=3, stride=2, padding=1),
    "pad_exclude": dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    "ceil": dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    "ceil_include": dict(kernel_size=(2, 3, 2), stride=2, ceil_mode=True),
    "divisor": dict(kernel_size=3, stride=1, padding=1, divisor_override=5),
}


@pytest.mark.parametrize("case", list(AVG_CASES))
def test_avg_pool3d(case):
    kw = AVG_CASES[case]
    check(lambda t: F.avg_pool3d(t, **kw), rand((2, 3, 5, 7, 6), 0))


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_avg_pool3d_dtypes(dtype):
    check(lambda t: F.avg_pool3d(t, 3, 2, 1), rand((2, 2, 5, 6, 7), 1), dtype=dtype)


def test_avg_pool3d_layouts_unbatched():
    check(lambda t: F.avg_pool3d(t, 2), rand((2, 4, 4, 6, 5), 2),
          prep=lambda t: t.contiguous(memory_format=torch.channels_last_3d))
    check(lambda t: F.avg_pool3d(t, (2, 1, 3), 1), rand((3, 5, 4, 6), 3),
          prep=lambda t: t.transpose(1, 3))


@pytest.mark.parametrize("size", [(1, 1, 1), (2, 3, 4), (5, 7, 3), (7, 9, 11)])
def test_adaptive_pool3d(size):
    x = rand((2, 3, 5, 7, 6), 0)
    check(lambda t: F.adaptive_avg_pool3d(t, size), x)
    check(lambda t: F.adaptive_max_pool3d(t, size, return_indices=True), x, outputs=lambda r: r)


@pytest.mark.parametrize("dtype", DTYPES[1:])
def test_adaptive_pool3d_dtypes(dtype):
    check(lambda t: F.adaptive_avg_pool3d(t, (3, 2, 4)), rand((2, 3, 7, 5, 6), 0), dtype=dtype)
    check(lambda t: F.adaptive_max_pool3d(t, (3, 2, 4)), rand((2, 3, 7, 5, 6), 0), dtype=dtype)


def test_adaptive_pool3d_layouts_unbatched_area():
    cl = lambda t: t.contiguous(memory_format=torch.channels_last_3d)
    check(lambda t: F.adaptive_avg_pool3d(t, 3), rand((2, 3, 5, 6, 7), 1), prep=cl)
    check(lambda t: F.adaptive_max_pool3d(t, (2, 3, 2), return_indices=True),
          rand((2, 3, 5, 6, 7), 2), prep=cl, outputs=lambda r: r)
    check(lambda t: F.adaptive_avg_pool3d(t, (2, 3, 4)), rand((4, 5, 6, 7), 3),
          prep=lambda t: t.transpose(1, 2))
    check(lambda t: F.interpolate(t, size=(3, 4, 2), mode="area"), rand((2, 3, 5, 7, 6), 4))
    check(lambda t: F.interpolate(t, scale_factor=0.5, mode="area"), rand((1, 2, 6, 4, 8), 5))


def test_pool1d_routes_native():
    check(lambda t: F.max_pool1d(t, 3, 2, 1, return_indices=True), rand((2, 3, 17), 0),
          outputs=lambda r: r)
    check(lambda t: F.avg_pool1d(t, 3, 2, 1), rand((2, 3, 17), 1))
    check(lambda t: F.adaptive_avg_pool1d(t, 5), rand((2, 3, 17), 2))
    check(lambda t: F.adaptive_max_pool1d(t, 5, return_indices=True), rand((2, 3, 17), 3),
          outputs=lambda r: r)


def test_pool3d_zero_batch():
    x = torch.empty(0, 3, 4, 4, 4, device="ocl", requires_grad=True)
    with torch_ocl.strict():
        for fn in (lambda t: F.max_pool3d(t, 2), lambda t: F.avg_pool3d(t, 2),
                   lambda t: F.adaptive_avg_pool3d(t, 2), lambda t: F.adaptive_max_pool3d(t, 2)):
            y = fn(x)
            assert y.shape == (0, 3, 2, 2, 2)
            y.sum().backward()
    assert x.grad.shape == x.shape


@pytest.mark.parametrize("fn", [
    lambda t: F.max_pool3d(t, 5),
    lambda t: torch.ops.aten.max_pool3d_with_indices(t, [2, 2], [], [0], [1], False),
    lambda t: F.max_pool3d(t[:, :0], 2),
    lambda t: F.max_pool3d(t[0, 0], 2),
    lambda t: F.avg_pool3d(t, 2, padding=2),
    lambda t: F.avg_pool3d(t, 5),
    lambda t: F.adaptive_avg_pool3d(t[0, 0], 2),
    lambda t: F.adaptive_avg_pool3d(t[:, :0], 2),
    lambda t: torch.ops.aten._adaptive_avg_pool3d(t, [2, 2]),
    lambda t: F.adaptive_max_pool3d(t[0, 0], 2),
    lambda t: torch.ops.aten._adaptive_avg_pool3d_backward(t[0, 0], t),
])
def test_pool3d_errors_match_cpu(fn):
    x = rand((1, 2, 3, 4, 4), 0)
    with pytest.raises(RuntimeError) as cpu_err:
        fn(x)
    with pytest.raises(RuntimeError) as dev_err:
        fn(x.to("ocl"))
    assert str(dev_err.value) == str(cpu_err.value)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_unpool3d(dtype):
    x = rand((2, 3, 5, 6, 7), 0, dtype)
    y, idx = F.max_pool3d(x, 2, return_indices=True)
    yc = y.clone().requires_grad_()
    ref = F.max_unpool3d(yc, idx, 2, output_size=(5, 6, 7))
    g = rand(ref.shape, 1, dtype)
    ref.backward(g)
    yd = y.to("ocl").requires_grad_()
    with torch_ocl.strict():
        got = F.max_unpool3d(yd, idx.to("ocl"), 2, output_size=(5, 6, 7))
        got.backward(g.to("ocl"))
        unbatched = F.max_unpool3d(yd[0].detach(), idx[0].to("ocl"), 2, output_size=(5, 6, 7))
    assert torch.equal(got.detach().cpu(), ref.detach()) and torch.equal(yd.grad.cpu(), yc.grad)
    assert torch.equal(unbatched.cpu(), F.max_unpool3d(y[0], idx[0], 2, output_size=(5, 6, 7)))
    with pytest.raises(RuntimeError, match="out of bounds"):  # CPU: "Found an invalid max index"
        F.max_unpool3d(y.to("ocl"), idx.to("ocl"), 2).cpu()


@pytest.mark.parametrize("args", [
    ([4, 4], [2, 2, 2], [0, 0, 0]),
    ([4, 4, 4], [2, 2], [0, 0, 0]),
    ([4, 4, 4], [2, 2, 2], [0, 0]),
    ([4, 4, 4], [0, 2, 2], [0, 0, 0]),
])
def test_max_unpool3d_errors_match_cpu(args):
    y, idx = F.max_pool3d(rand((1, 2, 4, 4, 4), 0), 2, return_indices=True)
    cases = [(y, idx, args), (y, idx.int(), args), (y[0, 0], idx[0, 0], args),
             (y, idx[:, :1], args), (y[:, :0], idx[:, :0], args)]
    for a, i, (size, stride, pad) in cases:
        with pytest.raises(RuntimeError) as cpu_err:
            torch.ops.aten.max_unpool3d(a, i, size, stride, pad)
        with pytest.raises(RuntimeError) as dev_err:
            torch.ops.aten.max_unpool3d(a.to("ocl"), i.to("ocl"), size, stride, pad)
        assert str(dev_err.value) == str(cpu_err.value)


def test_lp_pool_native():
    x = rand((2, 3, 6, 7, 8), 0).abs() + 0.1
    check(lambda t: F.lp_pool3d(t, 2, 2), x)
    check(lambda t: F.lp_pool2d(t, 3, (2, 3), stride=2), x[:, :, 0])
    check(lambda t: F.lp_pool1d(t, 1.5, 3), x[:, :, 0, 0])


def test_avg_pool_int64_native_like_cpu():
    # CPU sums in int64 and divides truncating; other integer dtypes are CPU errors
    x = torch.randint(-50, 50, (2, 3, 5, 6, 7), generator=torch.Generator().manual_seed(0))
    cases = [(F.avg_pool3d, x, dict(kernel_size=2)),
             (F.avg_pool3d, x, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                    count_include_pad=False)),
             (F.avg_pool2d, x[:, :, 0], dict(kernel_size=2, divisor_override=-3)),
             (F.avg_pool1d, x[:, :, 0, 0], dict(kernel_size=3, stride=2, padding=1))]
    for fn, inp, kw in cases:
        ref = fn(inp, **kw)
        with torch_ocl.strict():
            got = fn(inp.to("ocl"), **kw)
        assert got.dtype == torch.int64 and torch.equal(got.cpu(), ref)
    with pytest.raises(RuntimeError) as cpu_err:
        F.avg_pool3d(x.int(), 2)
    with pytest.raises(RuntimeError) as ocl_err:
        F.avg_pool3d(x.int().to("ocl"), 2)
    assert str(ocl_err.value).split("\n")[0] == str(cpu_err.value).split("\n")[0]
