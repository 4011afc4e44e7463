"""Convolutions (conv1d/conv2d/conv_transpose, stride, padding incl. 'same', dilation, groups,
depthwise, output_padding) against CPU PyTorch: outputs and gradients. float32 runs in strict
mode, so the whole forward and backward must be native; float64/float16/bfloat16 check values
(their GEMMs may still take the counted CPU fallback). Also a small CNN trained one step."""

import contextlib

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-2, atol=3e-2),
    torch.bfloat16: dict(rtol=5e-2, atol=1.5e-1),
}


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1


def check_fn(fn, tensors, dtype=torch.float32, prep=None, strict=None):
    """fn(*tensors) on ocl vs CPU: output and the grads of every input. Half/bfloat16 are
    compared with a float32 CPU reference on the same (rounded) inputs. prep (e.g. a layout
    change) is applied to the leaf tensors on both sides."""
    strict = dtype == torch.float32 if strict is None else strict
    prep = prep or (lambda i, t: t)
    cpu = [t.to(dtype) for t in tensors]
    ref_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    ref_leaf = [t.to(ref_dtype).clone().requires_grad_() for t in cpu]
    dev_leaf = [t.to("ocl").requires_grad_() for t in cpu]
    ref = fn(*[prep(i, t) for i, t in enumerate(ref_leaf)])
    grad = rand(ref.shape, 99).to(dtype)
    ref.backward(grad.to(ref_dtype))
    with torch_ocl.strict() if strict else contextlib.nullcontext():
        out = fn(*[prep(i, t) for i, t in enumerate(dev_leaf)])
        out.backward(grad.to("ocl"))
    assert out.device.type == "ocl" and out.dtype == dtype and out.shape == ref.shape
    torch.testing.assert_close(out.detach().cpu().to(ref_dtype), ref.detach(), **TOL[dtype])
    for d, r in zip(dev_leaf, ref_leaf):
        torch.testing.assert_close(d.grad.cpu().to(ref_dtype), r.grad, **TOL[dtype])


CASES = {
    "conv2d_bias": (lambda x, w, b: F.conv2d(x, w, b), [(2, 3, 7, 9), (4, 3, 3, 3), (4,)]),
    "conv2d_stride_pad_dil": (
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, dilation=2),
        [(2, 3, 7, 9), (4, 3, 3, 3), (4,)],
    ),
    "conv2d_asym": (
        lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(2, 0), dilation=(1, 2)),
        [(1, 2, 6, 11), (3, 2, 2, 3)],
    ),
    "conv2d_same_even": (lambda x, w: F.conv2d(x, w, padding="same"), [(2, 3, 7, 9), (4, 3, 2, 3)]),
    "conv2d_groups": (
        lambda x, w, b: F.conv2d(x, w, b, groups=2, padding=(1, 2)),
        [(2, 4, 6, 5), (6, 2, 3, 3), (6,)],
    ),
    "depthwise": (lambda x, w: F.conv2d(x, w, groups=4, padding=1), [(2, 4, 6, 5), (8, 1, 3, 3)]),
    "pointwise_1x1": (lambda x, w: F.conv2d(x, w), [(3, 5, 4, 4), (7, 5, 1, 1)]),
    "batch1_odd": (lambda x, w: F.conv2d(x, w, padding=(0, 1)), [(1, 1, 1, 7), (1, 1, 1, 3)]),
    "unbatched": (lambda x, w: F.conv2d(x, w, padding=1), [(3, 5, 5), (2, 3, 3, 3)]),
    "conv1d": (
        lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
        [(3, 2, 11), (5, 2, 3), (5,)],
    ),
    "conv1d_groups_dil": (
        lambda x, w: F.conv1d(x, w, groups=3, dilation=3, padding="same"),
        [(2, 3, 13), (6, 1, 3)],
    ),
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        [(2, 4, 5, 6), (4, 3, 3, 3), (3,)],
    ),
    "conv_transpose2d_groups_dil": (
        lambda x, w: F.conv_transpose2d(x, w, stride=(2, 1), padding=(0, 1), groups=2, dilation=2),
        [(2, 4, 5, 6), (4, 3, 3, 2)],
    ),
    "conv_transpose1d": (
        lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=2, output_padding=1),
        [(2, 3, 7), (3, 2, 4), (2,)],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_conv_float32(case):
    fn, shapes = CASES[case]
    check_fn(fn, [rand(s, i) for i, s in enumerate(shapes)])


LAYOUT = {
    "channels_last": lambda i, t: t.contiguous(memory_format=torch.channels_last) if i < 2 else t,
    "transposed": lambda i, t: t.transpose(2, 3) if i == 0 else t,
    "sliced": lambda i, t: t[:, :, 1::2, :] if i == 0 else t,
}


@pytest.mark.parametrize("layout", list(LAYOUT))
def test_conv_layouts(layout):
    check_fn(
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1),
        [rand((2, 3, 9, 8), 0), rand((4, 3, 3, 3), 1), rand((4,), 2)],
        prep=LAYOUT[layout],
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", ["conv2d_stride_pad_dil", "depthwise", "conv_transpose2d"])
def test_conv_dtypes(case, dtype):
    fn, shapes = CASES[case]
    check_fn(fn, [rand(s, i) for i, s in enumerate(shapes)], dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_depthwise_direct_is_fully_native(dtype, layout):
    # Depthwise convolutions use direct kernels (no GEMM), so every dtype runs in strict mode.
    check_fn(
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=3),
        [rand((2, 3, 7, 9), 0), rand((6, 1, 3, 2), 1), rand((6,), 2)],
        dtype=dtype,
        strict=True,
        prep=LAYOUT["channels_last"] if layout == "channels_last" else None,
    )


def test_conv_zero_batch():
    x, w = rand((0, 3, 5, 5), 0), rand((4, 3, 3, 3), 1)
    with torch_ocl.strict():
        out = F.conv2d(x.float().to("ocl"), w.float().to("ocl"), padding=1)
    assert out.shape == (0, 4, 5, 5) and out.device.type == "ocl"


def test_conv_large_output_chunks():
    # Big enough that the columns exceed one 128 MiB chunk: batches are processed in pieces. The
    # weight gradient sums 6 * 64 * 64 = 24576 products, so two float32 summation orders differ
    # by ~K * eps * |term| (about 4e-4 here, CPU's own float32 error included): every output and
    # gradient is compared with the float64 result, and may be off by at most 4x CPU's float32.
    x, w = rand((6, 16, 64, 64), 0), rand((8, 16, 3, 3), 1)
    go = rand((6, 8, 64, 64), 99)

    def run(dtype, device):
        xs = x.to(dtype).to(device).detach().clone().requires_grad_()
        ws = w.to(dtype).to(device).detach().clone().requires_grad_()
        with torch_ocl.strict() if device == "ocl" else contextlib.nullcontext():
            out = F.conv2d(xs, ws, padding=1)
            out.backward(go.to(dtype).to(device))
        return [t.detach().cpu().double() for t in (out, xs.grad, ws.grad)]

    truth, cpu, ocl = run(torch.float64, "cpu"), run(torch.float32, "cpu"), run(torch.float32, "ocl")
    for name, t, c, o in zip(("output", "input grad", "weight grad"), truth, cpu, ocl):
        cpu_err, ocl_err = (c - t).abs().max().item(), (o - t).abs().max().item()
        assert ocl_err <= 4 * cpu_err + 1e-5, (name, ocl_err, cpu_err)


def test_conv_gradcheck_float64():
    x = rand((1, 2, 5, 4), 0).to("ocl").requires_grad_()
    w = rand((3, 2, 2, 3), 1).to("ocl").requires_grad_()
    b = rand((3,), 2).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (x, w, b))
    wt = rand((2, 3, 3, 2), 3).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(
        lambda x, w: F.conv_transpose2d(x, w, stride=2, output_padding=1), (x, wt)
    )


def test_conv_errors_match_cpu():
    x, w = torch.randn(1, 3, 5, 5), torch.randn(4, 2, 3, 3)
    with pytest.raises(RuntimeError) as cpu_err:
        F.conv2d(x, w)
    with pytest.raises(RuntimeError) as dev_err:
        F.conv2d(x.to("ocl"), w.to("ocl"))
    assert str(dev_err.value).split("but got")[0] == str(cpu_err.value).split("but got")[0]
    with pytest.raises(RuntimeError):
        F.conv2d(x.to("ocl"), torch.randn(4, 3, 3, 3))  # weight on the CPU
    out = F.conv2d(x.to("ocl"), torch.randn(4, 3, 3, 3).to("ocl"))  # still usable
    assert out.shape == (1, 4, 3, 3)


INT_CASES = {
    "conv1d_groups_stride": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, groups=2),
                             [(2, 4, 11), (6, 2, 3), (6,)]),
    "conv2d_dil_pad": (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
                       [(2, 3, 7, 9), (5, 3, 3, 2), (5,)]),
    "depthwise2d": (lambda x, w, b: F.conv2d(x, w, b, groups=3, padding=1),
                    [(2, 3, 6, 5), (6, 1, 3, 3), (6,)]),
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, padding=(1, 0, 1), stride=(1, 2, 1)),
               [(2, 3, 4, 5, 6), (4, 3, 2, 3, 2), (4,)]),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, output_padding=2),
                         [(2, 4, 5), (4, 3, 3), (3,)]),
    "conv_transpose2d_groups": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
        [(2, 4, 5, 6), (4, 3, 3, 3), (6,)]),
    "conv_transpose3d": (lambda x, w, b: F.conv_transpose3d(x, w, b, stride=(2, 1, 1)),
                         [(1, 2, 3, 4, 3), (2, 3, 2, 2, 2), (3,)]),
}


@pytest.mark.parametrize("case", list(INT_CASES))
def test_int64_conv_native(case):
    # Integer convolutions run natively (im2col in int64, the integer GEMM): exact against CPU,
    # large values included (products wrap around as CPU's do), channels_last input too.
    fn, shapes = INT_CASES[case]
    g = torch.Generator().manual_seed(3)
    ts = [torch.randint(-50, 50, s, generator=g, dtype=torch.int64) for s in shapes]
    ts[0][0].view(-1)[0] = 2**40
    torch_ocl.reset_fallback_report()
    with torch_ocl.strict():
        out = fn(*[t.to("ocl") for t in ts])
        if ts[0].dim() == 4:
            cl = fn(ts[0].to("ocl").contiguous(memory_format=torch.channels_last),
                    *[t.to("ocl") for t in ts[1:]])
    assert torch_ocl.fallback_report(False) == []
    assert out.dtype == torch.int64
    torch.testing.assert_close(out.cpu(), fn(*ts), rtol=0, atol=0)
    if ts[0].dim() == 4:
        torch.testing.assert_close(cl.cpu(), fn(*ts), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.bool, torch.complex64, torch.complex128])
def test_unfold_dtypes_native(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 6, 7, generator=g, dtype=torch.float64)
    if dtype == torch.bool:
        x = x > 0
    elif dtype.is_complex:
        x = torch.complex(x, torch.randn(2, 3, 6, 7, generator=g, dtype=torch.float64)).to(dtype)
    views = {"plain": lambda t: t, "transposed": lambda t: t.transpose(2, 3),
             "unbatched": lambda t: t[0]}
    if dtype.is_complex:
        views["conj"] = lambda t: t.conj()
    kw = dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    for name, v in views.items():
        with torch_ocl.strict():
            out = F.unfold(v(x.to("ocl")), **kw)
        assert out.dtype == dtype
        torch.testing.assert_close(out.cpu(), F.unfold(v(x), **kw), rtol=0, atol=0, msg=name)
    with torch_ocl.strict():
        empty = F.unfold(x[:0].to("ocl"), 2)
    assert empty.shape == F.unfold(x[:0], 2).shape


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, 2)
        return self.fc(x.flatten(1))


def test_small_cnn_train_step_strict():
    torch.manual_seed(0)
    cpu = SmallCNN()
    dev = SmallCNN()
    dev.load_state_dict(cpu.state_dict())
    dev.to("ocl")
    x = torch.randn(4, 3, 12, 12)
    y = torch.tensor([0, 3, 1, 4])
    loss_cpu = F.cross_entropy(cpu(x), y)
    loss_cpu.backward()
    torch_ocl.reset_fallback_report()
    with torch_ocl.strict():
        loss_dev = F.cross_entropy(dev(x.to("ocl")), y.to("ocl"))
        loss_dev.backward()
    assert torch_ocl.fallback_report(False) == []
    torch.testing.assert_close(loss_dev.cpu(), loss_cpu, rtol=1e-4, atol=1e-5)
    for (name, p_cpu), p_dev in zip(cpu.named_parameters(), dev.parameters()):
        torch.testing.assert_close(p_dev.grad.cpu(), p_cpu.grad, rtol=1e-3, atol=1e-4, msg=name)
    for (name, b_cpu), b_dev in zip(cpu.named_buffers(), dev.buffers()):
        torch.testing.assert_close(b_dev.cpu(), b_cpu, rtol=1e-5, atol=1e-6, msg=name)
    cpu.eval(), dev.eval()
    with torch_ocl.strict():
        out = dev(x.to("ocl"))
    torch.testing.assert_close(out.cpu(), cpu(x), rtol=1e-4, atol=1e-4)


# Grouped, depthwise and transposed convolutions on the per-sample columns and the per-group
# batched GEMMs: every dtype in strict mode (no CPU fallback anywhere, the GEMMs included), odd
# sizes, groups above and below the batch (the two loop orders), dilation, stride, padding,
# output_padding, channels_last and sliced inputs.
GROUP_CASES = {
    "groups3_odd": (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1),
                                              groups=3), [(2, 6, 7, 9), (9, 2, 3, 2), (9,)]),
    "groups_above_batch": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=4),
                           [(1, 8, 5, 6), (8, 2, 3, 3), (8,)]),
    "depthwise_mult2": (lambda x, w: F.conv2d(x, w, stride=2, padding=(0, 1), groups=3),
                        [(3, 3, 8, 7), (6, 1, 2, 3)]),
    "conv1d_groups": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2, groups=2),
                      [(3, 4, 13), (6, 2, 3), (6,)]),
    "transpose_groups_outpad": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 0),
                                           output_padding=(1, 2), groups=2, dilation=(1, 2)),
        [(2, 4, 5, 4), (4, 3, 3, 2), (6,)]),
    "transpose_groups_above_batch": (
        lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=3), [(1, 6, 3, 4), (6, 2, 2, 3)]),
    "transpose_depthwise": (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, groups=4),
                            [(2, 4, 5, 5), (4, 1, 3, 3)]),
    # 16 or more rows per group: all (sample, group) products in one batched GEMM, the weight
    # gradient as one batched GEMM and a sum over the samples (odd channels per group).
    "groups2_batched": (lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=(2, 1),
                                                 dilation=(2, 1), groups=2),
                        [(3, 34, 9, 11), (32, 17, 3, 3), (32,)]),
    "transpose_groups_batched": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                           groups=2),
        [(3, 32, 5, 6), (32, 9, 3, 3), (18,)]),
    "transpose1d_groups": (
        lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, output_padding=1, groups=2),
        [(2, 4, 9), (4, 3, 3), (6,)]),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", list(GROUP_CASES))
def test_grouped_and_transposed_strict(case, dtype):
    fn, shapes = GROUP_CASES[case]
    check_fn(fn, [rand(s, i) for i, s in enumerate(shapes)], dtype=dtype, strict=True)


@pytest.mark.parametrize("case", ["groups3_odd", "transpose_groups_outpad", "depthwise_mult2",
                                  "groups2_batched"])
@pytest.mark.parametrize("layout", ["channels_last", "sliced"])
def test_grouped_and_transposed_layouts(case, layout):
    fn, shapes = GROUP_CASES[case]
    prep = {"channels_last": lambda i, t: t.contiguous(memory_format=torch.channels_last)
            if i < 2 else t,
            "sliced": lambda i, t: t[:, :, :, ::2] if i == 0 else t}[layout]
    shapes = [list(s) for s in shapes]
    if layout == "sliced":
        shapes[0][3] = shapes[0][3] * 2 - 1
    check_fn(fn, [rand(tuple(s), i) for i, s in enumerate(shapes)], prep=prep, strict=True)


@pytest.mark.parametrize("case", ["groups3_odd", "transpose_groups_outpad", "depthwise_mult2",
                                  "groups2_batched"])
def test_grouped_and_transposed_zero_batch(case):
    check_zero_batch(*GROUP_CASES[case])


def check_zero_batch(fn, shapes):
    """fn's forward and backward with the first input's batch emptied, against CPU."""
    ts = [rand(s, i) for i, s in enumerate(shapes)]
    ts[0] = ts[0][:0]
    ref_leaf = [t.clone().requires_grad_() for t in ts]
    dev_leaf = [t.to("ocl").requires_grad_() for t in ts]
    ref = fn(*ref_leaf)
    ref.sum().backward()
    with torch_ocl.strict():
        out = fn(*dev_leaf)
        out.sum().backward()
    assert out.shape == ref.shape
    for d, r in zip(dev_leaf, ref_leaf):
        torch.testing.assert_close(d.grad.cpu(), r.grad)


def test_conv_batch_chunks_accumulate_weight_grad():
    # The input gradient runs in 4 MiB chunks of columns, the weight gradient in 128 MiB ones:
    # 17 samples of 32 x 3 x 3 x 60 x 60 columns per group (8.3 MB a sample) take two weight
    # chunks, whose sums are added in place (groups too). Compared with the float64 result; may
    # be off by at most 4x CPU's own float32 error (long sums, as test_conv_large_output_chunks).
    x, w = rand((17, 64, 60, 60), 0), rand((8, 32, 3, 3), 1)
    go = rand((17, 8, 60, 60), 99)

    def run(dtype, device):
        xs = x.to(dtype).to(device).detach().clone().requires_grad_()
        ws = w.to(dtype).to(device).detach().clone().requires_grad_()
        with torch_ocl.strict() if device == "ocl" else contextlib.nullcontext():
            out = F.conv2d(xs, ws, padding=1, groups=2)
            out.backward(go.to(dtype).to(device))
        return [t.detach().cpu().double() for t in (out, xs.grad, ws.grad)]

    truth, cpu, ocl = run(torch.float64, "cpu"), run(torch.float32, "cpu"), run(torch.float32, "ocl")
    for name, t, c, o in zip(("output", "input grad", "weight grad"), truth, cpu, ocl):
        cpu_err, ocl_err = (c - t).abs().max().item(), (o - t).abs().max().item()
        assert ocl_err <= 4 * cpu_err + 1e-5, (name, ocl_err, cpu_err)


def test_grouped_batched_weight_grad_chunks_accumulate():
    # Groups of 16 output channels: the weight gradient is one batched GEMM over (sample, group)
    # per 8 MiB chunk of columns plus a sum over the samples; 3 samples of 32 x 3 x 3 x 60 x 60
    # columns (4.2 MB a sample, both groups) take two chunks, the second added in place.
    # Compared with the float64 result, as the test above.
    x, w = rand((3, 32, 60, 60), 3), rand((32, 16, 3, 3), 4)
    go = rand((3, 32, 60, 60), 98)

    def run(dtype, device):
        xs = x.to(dtype).to(device).detach().clone().requires_grad_()
        ws = w.to(dtype).to(device).detach().clone().requires_grad_()
        with torch_ocl.strict() if device == "ocl" else contextlib.nullcontext():
            out = F.conv2d(xs, ws, padding=1, groups=2)
            out.backward(go.to(dtype).to(device))
        return [t.detach().cpu().double() for t in (out, xs.grad, ws.grad)]

    truth, cpu, ocl = run(torch.float64, "cpu"), run(torch.float32, "cpu"), run(torch.float32, "ocl")
    for name, t, c, o in zip(("output", "input grad", "weight grad"), truth, cpu, ocl):
        cpu_err, ocl_err = (c - t).abs().max().item(), (o - t).abs().max().item()
        assert ocl_err <= 4 * cpu_err + 1e-5, (name, ocl_err, cpu_err)
    # float64 runs the same batched path.
    torch.testing.assert_close(run(torch.float64, "ocl")[2], truth[2], rtol=1e-10, atol=1e-10)


# Grouped 3 x 3 weight gradients with 4 to 16 output channels a group run conv_wgrad_grp4/8 on
# CPU drivers (per work item all input channels of one group and sample, OB output channels at
# a time): odd channels per group (a partial last block of OB), batch 1, taller than one row
# block (32 rows) and wider than one block of columns (32), strides, padding, dilation.
# (x shape, w shape, stride, padding, dilation, groups)
GRP_WGRAD_CASES = {
    "g2_og8": ((3, 14, 9, 11), (16, 7, 3, 3), 1, 1, 1, 2),
    "g3_og5_s2_dil": ((2, 15, 10, 13), (15, 5, 3, 3), (2, 1), (0, 2), (1, 2), 3),
    "g4_og12_b1_tall_wide": ((1, 12, 37, 41), (48, 3, 3, 3), 1, 1, (2, 1), 4),
    "g4_og16_s2": ((2, 36, 8, 9), (64, 9, 3, 3), 2, 1, 1, 4),
    "g3_og7_s12": ((2, 9, 40, 35), (21, 3, 3, 3), (1, 2), (1, 0), 1, 3),
}


def check_grouped_wgrad(case, dtype, layout):
    xs, ws, stride, padding, dilation, groups = GRP_WGRAD_CASES[case]
    if layout == "sliced":
        xs = xs[:3] + (xs[3] * 2 - 1,)
    x, w = rand(xs, 5).to(dtype), rand(ws, 6).to(dtype)
    if layout == "sliced":
        x = x[..., ::2]
    elif layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)

    def grads(x, w):
        x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
        y = F.conv2d(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
        go = rand(y.shape, 97).to(dtype).to(y.device)
        return [y] + list(torch.autograd.grad(y, (x, w), go))

    ref = grads(x, w)
    with torch_ocl.strict():
        got = grads(x.to("ocl"), w.to("ocl"))
    for name, g, r in zip(("output", "input grad", "weight grad"), got, ref):
        assert g.device.type == "ocl" and g.dtype == dtype and g.shape == r.shape, name
        torch.testing.assert_close(g.cpu(), r, **TOL[dtype], msg=name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", list(GRP_WGRAD_CASES))
def test_grouped_weight_grad_register_tiles(case, dtype):
    check_grouped_wgrad(case, dtype, "contiguous")


@pytest.mark.parametrize("layout", ["channels_last", "sliced"])
@pytest.mark.parametrize("case", ["g3_og5_s2_dil", "g4_og12_b1_tall_wide"])
def test_grouped_weight_grad_register_tiles_layouts(case, layout):
    check_grouped_wgrad(case, torch.float32, layout)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_grouped_weight_grad_register_tiles_16bit(dtype):
    # 16-bit inputs: partial sums in float, one rounding at the end (against float32 CPU).
    xs, ws, stride, padding, dilation, groups = GRP_WGRAD_CASES["g2_og8"]
    check_fn(lambda x, w: F.conv2d(x, w, stride=stride, padding=padding, dilation=dilation,
                                   groups=groups), [rand(xs, 5), rand(ws, 6)], dtype=dtype,
             strict=True)


@pytest.mark.parametrize("case", ["g2_og8", "g4_og16_s2"])
def test_grouped_weight_grad_register_tiles_zero_batch(case):
    xs, ws, stride, padding, dilation, groups = GRP_WGRAD_CASES[case]
    check_zero_batch(lambda x, w: F.conv2d(x, w, stride=stride, padding=padding,
                                           dilation=dilation, groups=groups),
                     [(0,) + xs[1:], ws])
