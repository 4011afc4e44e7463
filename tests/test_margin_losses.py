"""multi_margin_loss and multilabel_margin_loss against CPU in strict mode: p, margin, class
weights, every reduction, 1-D inputs, targets ending at -1, gradients, and CPU's errors."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = dict(rtol=1e-5, atol=1e-6)


def check(fn, x, *rest):
    xc = x.clone().requires_grad_()
    ref = fn(xc, *rest)
    ref.backward(torch.ones_like(ref) if ref.dim() == 0 else torch.linspace(-1, 1, ref.numel()).reshape(ref.shape))
    xo = x.to("ocl").requires_grad_()
    with torch_ocl.strict():
        out = fn(xo, *[r.to("ocl") if isinstance(r, torch.Tensor) else r for r in rest])
        g = torch.ones_like(out) if out.dim() == 0 else torch.linspace(-1, 1, out.numel()).reshape(out.shape).to("ocl")
        out.backward(g)
    assert out.shape == ref.shape
    torch.testing.assert_close(out.detach().cpu(), ref.detach(), **TOL)
    torch.testing.assert_close(xo.grad.cpu(), xc.grad, **TOL)


X = torch.randn(6, 5, generator=torch.Generator().manual_seed(0))
Y = torch.tensor([0, 4, 2, 2, 1, 3])
W = torch.rand(5, generator=torch.Generator().manual_seed(1)) + 0.5


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin(p, reduction):
    check(lambda x, y: F.multi_margin_loss(x, y, p=p, reduction=reduction), X, Y)
    check(lambda x, y, w: F.multi_margin_loss(x, y, p=p, margin=0.7, weight=w,
                                              reduction=reduction), X, Y, W)
    check(lambda x, y: F.multi_margin_loss(x, y, p=p, reduction=reduction), X[2], Y[2])  # 1-D


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin(reduction):
    t = torch.tensor([[3, 0, -1, 1, 1], [0, 1, 2, 3, 4], [-1, 2, 2, 2, 2], [4, 4, -1, 0, 0],
                      [2, -1, 0, 0, 0], [1, 3, 0, -1, 2]])
    check(lambda x, y: F.multilabel_margin_loss(x, y, reduction=reduction), X, t)
    check(lambda x, y: F.multilabel_margin_loss(x, y, reduction=reduction), X[0], t[0])
    with torch_ocl.strict():
        _, is_target = torch.ops.aten.multilabel_margin_loss_forward(X.to("ocl"), t.to("ocl"), 1)
    ref = torch.ops.aten.multilabel_margin_loss_forward(X, t, 1)[1]
    torch.testing.assert_close(is_target.cpu(), ref, rtol=0, atol=0)


def test_errors(ocl):
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):  # checked in Python
        F.multi_margin_loss(X.to(ocl), Y.to(ocl), p=3)
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multi_margin_loss(X.to(ocl), Y[:3].to(ocl))
    with pytest.raises(RuntimeError, match="inconsistent weight size"):
        F.multi_margin_loss(X.to(ocl), Y.to(ocl), weight=W[:2].to(ocl))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(X.to(ocl), Y.to(ocl))
