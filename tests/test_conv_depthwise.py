"""Depthwise and grouped convolutions on the vectorised row kernels (unit width stride; the input gradient also
needs a unit height stride) and on the general direct kernels, against CPU PyTorch in strict mode:
output, input, weight and bias gradients, every floating dtype, odd and wide rows (more than one
32-column block), several row blocks per image, channel multipliers, dilation, padding beyond
the taps, non-contiguous and channels_last inputs, batch 1 and zero-size batches, 1-D."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from test_conv import LAYOUT, check_fn, check_zero_batch, rand

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

# name: (fn, shapes (input, weight[, bias]))
CASES = {
    # The benchmark's layer shape, smaller batch: rows of 28 (one column block, 4 lanes unused).
    "3x3_pad1": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=8),
                 [(2, 8, 28, 28), (8, 1, 3, 3), (8,)]),
    # Rows wider than one 32-column block, odd width, no padding.
    "wide_odd": (lambda x, w: F.conv2d(x, w, groups=3), [(1, 3, 5, 71), (3, 1, 3, 3)]),
    # Channel multiplier 2 (input gradient sums two filters per channel), 5x5, padding 2.
    "mult2_5x5": (lambda x, w, b: F.conv2d(x, w, b, padding=2, groups=4),
                  [(3, 4, 9, 37), (8, 1, 5, 5), (8,)]),
    # Dilation and asymmetric padding; height stride 2 (forward and weight gradient vectorised,
    # the input gradient on the general kernel).
    "dil_stride_h2": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(2, 1), dilation=(2, 3),
                                            groups=5), [(2, 5, 13, 34), (5, 1, 3, 2)]),
    # Padding larger than (K - 1) * dilation: the input gradient's padding is negative.
    "pad_beyond_taps": (lambda x, w: F.conv2d(x, w, padding=(2, 3), groups=2),
                        [(2, 2, 6, 7), (2, 1, 2, 3)]),
    # Width stride 2: forward and weight gradient on the row kernels (staged in two phases),
    # the input gradient on the general kernel; odd and wide rows, dilation, 5 taps.
    "stride2": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=6),
                [(2, 6, 15, 17), (6, 1, 3, 3), (6,)]),
    "stride2_wide_dil": (lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(1, 2), dilation=(1, 2),
                                               groups=3), [(2, 3, 6, 141), (3, 1, 3, 3)]),
    "stride2_5x5_mult2": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=2, groups=2),
                          [(2, 2, 13, 70), (4, 1, 5, 5), (4,)]),
    # Width stride 3: the general kernels.
    "stride3": (lambda x, w: F.conv2d(x, w, stride=(1, 3), padding=1, groups=2),
                [(2, 2, 7, 20), (2, 1, 3, 3)]),
    # One tall image (several row blocks of few items), batch 1.
    "tall_batch1": (lambda x, w: F.conv2d(x, w, padding=1, groups=2), [(1, 2, 300, 20),
                                                                         (2, 1, 3, 3)]),
    # A 7x7 kernel (taps at the staged row's limit: 32 + 6 columns, 7 rows).
    "7x7": (lambda x, w: F.conv2d(x, w, padding=3, groups=3), [(2, 3, 11, 40), (3, 1, 7, 7)]),
    # Taps beyond the vectorised kernels' buffers (9 rows): the general kernels.
    "9x1": (lambda x, w: F.conv2d(x, w, padding=(4, 0), groups=2), [(2, 2, 12, 10), (2, 1, 9, 1)]),
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, padding=1, groups=4), [(3, 4, 50), (4, 1, 3),
                                                                         (4,)]),
    "conv1d_mult3_dil": (lambda x, w: F.conv1d(x, w, padding=4, dilation=2, groups=2),
                         [(2, 2, 33), (6, 1, 5)]),
}


# Grouped convolutions with few output channels a group (conv_rows: blocks of 8, 4 or 1 output
# channels, the last one partial; the weight gradient per (output, input) channel pair).
CASES.update({
    "g4_16x16": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=4),
                 [(2, 64, 12, 14), (64, 16, 3, 3), (64,)]),
    "g2_og6_wide": (lambda x, w: F.conv2d(x, w, padding=(1, 2), groups=2),
                    [(1, 6, 7, 45), (12, 3, 3, 5)]),
    "g3_og3_dil": (lambda x, w, b: F.conv2d(x, w, b, padding=2, dilation=2, groups=3),
                   [(2, 6, 9, 10), (9, 2, 3, 3), (9,)]),
    "g2_og10_stride_h2": (lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1, groups=2),
                          [(2, 4, 11, 13), (20, 2, 3, 3)]),
    "g2_stride2": (lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2),
                   [(2, 4, 11, 13), (8, 2, 3, 3)]),
    "g2_conv1d": (lambda x, w, b: F.conv1d(x, w, b, padding=1, groups=2),
                  [(3, 8, 40), (8, 4, 3), (8,)]),
})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_depthwise_strict(case, dtype):
    fn, shapes = CASES[case]
    check_fn(fn, [rand(s, i) for i, s in enumerate(shapes)], dtype=dtype, strict=True)


@pytest.mark.parametrize("layout", ["channels_last", "transposed", "sliced"])
@pytest.mark.parametrize("case", ["3x3_pad1", "mult2_5x5", "dil_stride_h2", "g4_16x16",
                                  "g2_og6_wide"])
def test_depthwise_layouts(case, layout):
    fn, shapes = CASES[case]
    shapes = [list(s) for s in shapes]
    if layout == "transposed":  # square images, so that the transposed view has the same shape
        shapes[0][3] = shapes[0][2]
    check_fn(fn, [rand(tuple(s), i) for i, s in enumerate(shapes)], prep=LAYOUT[layout],
             strict=True)


@pytest.mark.parametrize("case", ["3x3_pad1", "mult2_5x5", "conv1d", "g4_16x16"])
def test_depthwise_zero_batch(case):
    check_zero_batch(*CASES[case])


@pytest.mark.parametrize("groups,cout", [(4, 4), (4, 8), (2, 20)])
@pytest.mark.parametrize("go_layout", ["contiguous", "channels_last", "sliced"])
def test_backward_one_gradient_at_a_time(groups, cout, go_layout):
    # convolution_backward with one gradient asked for at a time (the others not computed), and
    # grad_output in other layouts (read through its strides or copied).
    x, w = rand((2, 4, 10, 33), 0), rand((cout, 4 // groups, 3, 3), 1)
    go_full = rand((2, cout, 10, 66 if go_layout == "sliced" else 33), 2)
    lay = {"contiguous": lambda t: t,
           "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
           "sliced": lambda t: t[:, :, :, ::2]}[go_layout]
    go, go_dev = lay(go_full), lay(go_full.to("ocl"))
    assert go_dev.stride() == go.stride()
    args = ([cout], [1, 1], [1, 1], [1, 1], False, [0, 0], groups)
    for mask in ([True, False, False], [False, True, False], [False, False, True]):
        ref = torch.ops.aten.convolution_backward(go, x, w, *args, mask)
        with torch_ocl.strict():
            out = torch.ops.aten.convolution_backward(go_dev, x.to("ocl"), w.to("ocl"), *args,
                                                      mask)
        for o, r in zip(out, ref):
            assert (o is None) == (r is None)
            if r is not None:
                torch.testing.assert_close(o.cpu(), r, rtol=1e-10, atol=1e-10)
