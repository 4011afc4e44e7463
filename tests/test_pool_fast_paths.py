"""max_pool2d's fast kernels against CPU PyTorch: the 2x2 / stride-2 kernels (max_pool2_fwd/bwd,
every device) and the per-row kernels of CPU drivers (max_pool_fwd_rows/bwd_rows), on odd sizes,
ties, NaN and -inf, every floating dtype and integers, non-contiguous and zero-size inputs. The
per-element GPU kernels are the same tests under TORCH_OCL_TREE_REDUCTIONS=1."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=0, atol=0),  # a max and its gradient are exact
    torch.bfloat16: dict(rtol=0, atol=0),
}


SUM_TOL = {**TOL, torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}  # overlapping windows add up


def run(x, dtype, prep=lambda t: t, tol=TOL, **kw):
    """Forward (values and indices) and the input gradient, ocl in strict mode against CPU."""
    x = x.to(dtype)
    xc = x.clone().requires_grad_()
    xd = x.to("ocl").requires_grad_()
    yc, ic = F.max_pool2d(prep(xc), return_indices=True, **kw)
    g = torch.randn(yc.shape, generator=torch.Generator().manual_seed(3)).to(dtype)
    yc.backward(g)
    with torch_ocl.strict():
        yd, idx = F.max_pool2d(prep(xd), return_indices=True, **kw)
        yd.backward(g.to("ocl"))
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), equal_nan=True, **TOL[dtype])
    assert torch.equal(idx.cpu(), ic)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, equal_nan=True, **tol[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
# (float32 on CPU drivers: rows of 16 outputs and more in vectors, the last vector overlapping the
# one before: 23 and 16 outputs a row; narrower rows take the 2-D kernels)
@pytest.mark.parametrize("shape", [(2, 3, 9, 11), (1, 1, 2, 2), (3, 16, 17), (2, 5, 32, 33),
                                   (2, 3, 10, 47), (1, 2, 11, 40)])
def test_window2(dtype, shape):
    run(torch.randn(shape, generator=torch.Generator().manual_seed(0)), dtype, kernel_size=2)


def test_window2_ties_nan_inf():
    x = torch.zeros(2, 3, 6, 8)  # all ties: the first index of each window wins
    x[0, 0, 0, 1] = float("nan")
    x[0, 0, 2, 2] = float("nan")
    x[0, 0, 3, 3] = float("nan")  # two NaNs in one window: the later one wins, as on CPU
    x[1, 2] = float("-inf")
    run(x, torch.float32, kernel_size=2)
    # the same in rows of 20 outputs (vectors): in the first vector, in the overlapped part, last
    x = torch.zeros(2, 3, 6, 40)
    for h, w in ((0, 1), (2, 10), (3, 11), (2, 25), (3, 25), (4, 39), (5, 38)):
        x[0, 1, h, w] = float("nan")
    x[1, 0, :, 20:] = float("-inf")
    x[1, 1, 1, 33] = 5.0
    run(x, torch.float32, kernel_size=2)


def test_window2_layouts_and_ceil():
    x = torch.randn(2, 4, 7, 9, generator=torch.Generator().manual_seed(1))
    run(x, torch.float32, prep=lambda t: t.contiguous(memory_format=torch.channels_last),
        kernel_size=2)
    run(x, torch.float32, prep=lambda t: t.transpose(2, 3), kernel_size=2)
    run(x, torch.float32, kernel_size=2, ceil_mode=True)  # partial last windows: other kernels
    run(x, torch.float32, kernel_size=2, stride=2, padding=1)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_window2_integers(dtype):
    info = torch.iinfo(dtype)
    x = torch.randint(max(info.min, -50), min(info.max, 50), (2, 3, 9, 10),
                      generator=torch.Generator().manual_seed(2)).to(dtype)
    x[0, 0, :4, :4] = info.min
    ref = F.max_pool2d(x, 2, return_indices=True)
    with torch_ocl.strict():
        got = F.max_pool2d(x.to("ocl"), 2, return_indices=True)
    assert torch.equal(got[0].cpu(), ref[0]) and torch.equal(got[1].cpu(), ref[1])


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=(3, 2), stride=(2, 1), dilation=(1, 2)),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rows_overlapping(kw, dtype):
    run(torch.randn(3, 5, 13, 10, generator=torch.Generator().manual_seed(4)), dtype, tol=SUM_TOL,
        **kw)


def test_zero_size():
    run(torch.randn(0, 3, 8, 8), torch.float32, kernel_size=2)
    run(torch.randn(0, 3, 8, 8), torch.float32, kernel_size=3, stride=1)
