"""Compiled average pooling on ocl against CPU eager, gradients included. Inductor 2.13's
avg_pool2d/3d backward lowerings divide a last window that ceil_mode lets run past the padded
input by the whole kernel (pytorch/pytorch#198119, wrong on CPU Inductor too); on ocl those cases
call our eager kernel (torch_ocl/_inductor/lowering.py, register_avg_pool_backward). Strict mode:
nothing runs on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def _grads(fn, x, compiled):
    x = x.detach().clone().requires_grad_()
    f = torch.compile(fn) if compiled else fn
    y = f(x)
    # a non-uniform upstream gradient, so that each window's own divisor shows
    (y * torch.linspace(-1, 2, y.numel(), device=y.device).view_as(y)).sum().backward()
    return y.detach().cpu(), x.grad.cpu()


CASES_2D = [
    # (input H, W), kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ((5, 5), 3, None, 0, True, True, None),    # last window holds 2 of 3 rows / columns
    ((7, 6), (4, 3), (3, 2), 1, True, True, None),
    ((1, 1), 320, None, 0, True, True, None),  # EfficientNet's pooler on a 1x1 map
    ((5, 5), 3, None, 0, True, False, None),
    ((5, 5), 3, None, 0, True, True, 2),
    ((6, 6), 3, None, 1, False, True, None),
    ((9, 4), 2, 1, 1, True, True, None),       # ceil_mode without an overhang
]


@pytest.mark.parametrize("hw,k,s,p,ceil,cip,div", CASES_2D)
def test_avg_pool2d_compiled_gradient_matches_cpu(hw, k, s, p, ceil, cip, div):
    x = torch.randn(2, 3, *hw, generator=torch.Generator().manual_seed(sum(hw)))

    def fn(t):
        return F.avg_pool2d(t, k, s, p, ceil_mode=ceil, count_include_pad=cip,
                            divisor_override=div)

    y_ref, g_ref = _grads(fn, x, compiled=False)
    with torch_ocl.strict():
        y, g = _grads(fn, x.to("ocl"), compiled=True)
    torch.testing.assert_close(y, y_ref, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(g, g_ref, atol=1e-6, rtol=1e-5)


def test_avg_pool1d_and_channels_last_compiled_gradient_matches_cpu():
    g = torch.Generator().manual_seed(1)
    # both with a last window past the input (8 = 3 + 2 * 2 + 1; 6 and 8 likewise)
    x1 = torch.randn(2, 4, 8, generator=g)
    x2 = torch.randn(2, 4, 6, 8, generator=g).contiguous(memory_format=torch.channels_last)
    f1 = lambda t: F.avg_pool1d(t, 3, 2, 0, ceil_mode=True)  # noqa: E731
    f2 = lambda t: F.avg_pool2d(t, 3, 2, 0, ceil_mode=True)  # noqa: E731
    for fn, x in ((f1, x1), (f2, x2)):
        y_ref, g_ref = _grads(fn, x, compiled=False)
        with torch_ocl.strict():
            y, gr = _grads(fn, x.to("ocl"), compiled=True)
        torch.testing.assert_close(y, y_ref, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(gr, g_ref, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("ceil,cip", [(True, True), (True, False), (False, True)])
def test_avg_pool3d_compiled_gradient_matches_cpu(ceil, cip):
    x = torch.randn(1, 2, 5, 4, 5, generator=torch.Generator().manual_seed(3))

    def fn(t):
        return F.avg_pool3d(t, 3, 2, 1, ceil_mode=ceil, count_include_pad=cip)

    y_ref, g_ref = _grads(fn, x, compiled=False)
    with torch_ocl.strict():
        y, g = _grads(fn, x.to("ocl"), compiled=True)
    torch.testing.assert_close(y, y_ref, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(g, g_ref, atol=1e-6, rtol=1e-5)
