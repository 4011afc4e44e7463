"""The im2col lowering of dense convolutions on CPU drivers (im2col_rows, col2im_planes in
kernels/im2col.cl) and the weight gradient as one batched product then a sum (its inner
dimension in pieces of at most 2048 pixels), against CPU PyTorch: every border case of the
in-bounds column spans (padding wider than the kernel's reach, strides, dilation, a row that
lies wholly in the padding), strided and channels_last inputs, zero batch, float64, 16-bit
floats, integers, unfold/fold and transposed convolutions (whose forward is a col2im).
float32 and float64 run in strict mode."""

import contextlib

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from test_conv import TOL, rand  # the same tolerances and inputs as the layer tests


def check(x_shape, w_shape, dtype=torch.float32, layout=None, bias=True, **kw):
    """conv2d forward and all three gradients on ocl vs CPU (16-bit floats against a float32
    reference on the same rounded inputs)."""
    ref_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    x, w = rand(x_shape, 1).to(dtype), (rand(w_shape, 2) * 0.5).to(dtype)
    b = rand((w_shape[0],), 3).to(dtype) if bias else None
    prep = layout or (lambda t: t)

    def run(dev, dt):
        leaves = [t.to(dev, dt).detach().clone().requires_grad_() for t in (x, w) + ((b,) if bias else ())]
        out = F.conv2d(prep(leaves[0]), leaves[1], leaves[2] if bias else None, **kw)
        return out, leaves

    ref, ref_leaves = run("cpu", ref_dtype)
    grad = rand(ref.shape, 4).to(dtype)
    ref.backward(grad.to(ref_dtype))
    strict = dtype in (torch.float32, torch.float64)
    with torch_ocl.strict() if strict else contextlib.nullcontext():
        out, leaves = run("ocl", dtype)
        out.backward(grad.to("ocl"))
    assert out.dtype == dtype and out.shape == ref.shape
    torch.testing.assert_close(out.detach().cpu().to(ref_dtype), ref.detach(), **TOL[dtype])
    for d, r in zip(leaves, ref_leaves):
        torch.testing.assert_close(d.grad.cpu().to(ref_dtype), r.grad, **TOL[dtype])


# (input, weight, conv2d kwargs): odd sizes and every border of the column spans.
CASES = {
    "odd_3x3": ((3, 5, 11, 13), (7, 5, 3, 3), {}),
    "pad1": ((2, 4, 9, 7), (6, 4, 3, 3), dict(padding=1)),
    "pad_beyond_kernel": ((2, 3, 4, 2), (5, 3, 3, 3), dict(padding=3)),
    "stride2_pad1": ((2, 4, 13, 11), (5, 4, 3, 3), dict(stride=2, padding=1)),
    "stride_hw_pad_asym": ((2, 3, 10, 15), (4, 3, 3, 5), dict(stride=(1, 3), padding=(2, 1))),
    "dilation3_width1": ((2, 3, 7, 1), (4, 3, 3, 3), dict(padding=3, dilation=3)),
    "dilation2_stride2": ((2, 3, 15, 14), (6, 3, 3, 3), dict(stride=2, padding=2, dilation=2)),
    "kernel_1x1": ((3, 8, 5, 6), (16, 8, 1, 1), {}),
    "kernel_wider_than_input": ((2, 2, 5, 3), (3, 2, 3, 5), dict(padding=(0, 2))),
    "groups2_wide": ((2, 6, 9, 8), (40, 3, 3, 3), dict(groups=2, padding=1)),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dense_conv_lowering(case, dtype):
    xs, ws, kw = CASES[case]
    check(xs, ws, dtype, **kw)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["pad1", "stride2_pad1", "dilation3_width1"])
def test_dense_conv_lowering_16bit(case, dtype):
    xs, ws, kw = CASES[case]
    check(xs, ws, dtype, **kw)


LAYOUTS = {
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
    "sliced_width": lambda t: t[..., ::2],  # image column stride 2: im2col's strided path
    "transposed_hw": lambda t: t.transpose(2, 3),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", ["pad1", "stride2_pad1"])
def test_dense_conv_lowering_layouts(layout, case):
    xs, ws, kw = CASES[case]
    if layout == "sliced_width":  # the leaf twice as wide, sliced back to the case's width
        xs = (xs[0], xs[1], xs[2], 2 * xs[3])
    elif layout == "transposed_hw":
        xs = (xs[0], xs[1], xs[3], xs[2])
    check(xs, ws, layout=LAYOUTS[layout], **kw)


def test_weight_grad_inner_dimension_in_pieces():
    # 2 x 3 x 50 x 50 with padding 1: 2500 pixels per sample, so the batched weight-gradient
    # products run in two pieces of K (and a third sample makes the batch odd).
    check((3, 3, 50, 50), (16, 3, 3, 3), padding=1)
    check((2, 4, 47, 45), (20, 4, 3, 3), torch.float64, padding=2, stride=1)


def test_weight_grad_batch_chunks():
    # Enough samples that the weight gradient's products are summed over two chunks (the
    # products of a chunk are kept within 4 M elements: 128 x 1152 each here, 28 samples; 256
    # pixels, the fewest that take the batched products).
    x = rand((30, 128, 16, 16), 5).float().to("ocl")
    w = rand((128, 128, 3, 3), 6).float().to("ocl")
    go = rand((30, 128, 16, 16), 7).float().to("ocl")
    with torch_ocl.strict():
        _, gw, _ = torch.ops.aten.convolution_backward(
            go, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False])
    _, ref, _ = torch.ops.aten.convolution_backward(
        go.cpu(), x.cpu(), w.cpu(), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [False, True, False])
    torch.testing.assert_close(gw.cpu(), ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dense_conv_zero_batch(dtype):
    x = torch.empty(0, 3, 8, 8, dtype=dtype)
    w = rand((5, 3, 3, 3), 1).to(dtype)
    xo, wo = x.to("ocl").requires_grad_(), w.to("ocl").requires_grad_()
    with torch_ocl.strict():
        out = F.conv2d(xo, wo, padding=1)
        out.sum().backward()
    assert out.shape == (0, 5, 8, 8)
    torch.testing.assert_close(wo.grad.cpu(), torch.zeros_like(w))
    assert xo.grad.shape == x.shape


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_conv_lowering(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-5, 5, (2, 3, 9, 8), generator=g, dtype=dtype)
    w = torch.randint(-3, 3, (4, 3, 3, 3), generator=g, dtype=dtype)
    for kw in (dict(padding=1), dict(stride=2, padding=2, dilation=2)):
        with torch_ocl.strict():
            out = F.conv2d(x.to("ocl"), w.to("ocl"), **kw)
        assert torch.equal(out.cpu(), F.conv2d(x.long(), w.long(), **kw).to(dtype))


UNFOLD = [
    dict(kernel_size=3),
    dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
    dict(kernel_size=3, padding=4),
    dict(kernel_size=3, stride=3, dilation=2, padding=1),
]


@pytest.mark.parametrize("kw", UNFOLD, ids=[str(i) for i in range(len(UNFOLD))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_unfold_fold_match_cpu(kw, dtype):
    x = rand((2, 3, 7, 6), 8).to(dtype)
    with torch_ocl.strict():
        col = F.unfold(x.to("ocl"), **kw)
    ref = F.unfold(x, **kw)
    assert torch.equal(col.cpu(), ref)  # a gather: exact
    col_in = rand(ref.shape, 9).to(dtype)
    ctx = torch_ocl.strict() if dtype != torch.float16 else contextlib.nullcontext()
    with ctx:
        img = F.fold(col_in.to("ocl"), (7, 6), **kw)
    ref_img = F.fold(col_in.float(), (7, 6), **kw) if dtype == torch.float16 else F.fold(
        col_in, (7, 6), **kw)
    torch.testing.assert_close(img.cpu().to(ref_img.dtype), ref_img, **TOL[dtype])


def test_unfold_noncontiguous_input():
    x = rand((2, 4, 9, 16), 10).float()
    xo = x.to("ocl")
    views = [lambda t: t[..., ::2], lambda t: t.contiguous(memory_format=torch.channels_last),
             lambda t: t.transpose(2, 3)]
    for view in views:
        with torch_ocl.strict():
            col = F.unfold(view(xo), 3, padding=1, stride=(1, 2))
        assert torch.equal(col.cpu(), F.unfold(view(x), 3, padding=1, stride=(1, 2)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_conv_transpose_col2im_planes(dtype):
    # The transposed convolution's forward adds columns up through col2im (planes on CPU
    # drivers), with strides, padding, dilation and output padding.
    x = rand((2, 6, 5, 7), 11).to(dtype)
    w = rand((6, 4, 3, 3), 12).to(dtype)
    for kw in (dict(stride=2, padding=1, output_padding=1), dict(stride=(1, 3), dilation=2),
               dict(padding=(2, 0))):
        xo, wo = x.to("ocl").requires_grad_(), w.to("ocl").requires_grad_()
        xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
        with torch_ocl.strict():
            out = F.conv_transpose2d(xo, wo, **kw)
            out.backward(torch.ones_like(out))
        ref = F.conv_transpose2d(xc, wc, **kw)
        ref.backward(torch.ones_like(ref))
        torch.testing.assert_close(out.detach().cpu(), ref.detach(), **TOL[dtype])
        torch.testing.assert_close(xo.grad.cpu(), xc.grad, **TOL[dtype])
        torch.testing.assert_close(wo.grad.cpu(), wc.grad, **TOL[dtype])
