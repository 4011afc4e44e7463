"""nn.functional.ctc_loss on the device against CPU in strict mode: padded and concatenated
targets, every reduction, zero_infinity, repeated labels, empty targets, float64, gradients."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl


def case(T=12, N=3, C=6, S=5, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T, N, C, generator=g, dtype=dtype).log_softmax(2)
    il = torch.randint(T // 2, T + 1, (N,), generator=g)
    tl = torch.randint(0, S + 1, (N,), generator=g)
    tg = torch.randint(1, C, (N, S), generator=g)
    tg[0, :3] = 2  # repeated labels need a blank between them
    return lp, tg, il, tl


def run(lp, tg, il, tl, **kw):
    x = lp.detach().clone().requires_grad_()
    ref = F.ctc_loss(x, tg, il, tl, **kw)
    y = lp.detach().to("ocl").requires_grad_()
    with torch_ocl.strict():
        got = F.ctc_loss(y, tg.to("ocl"), il.to("ocl"), tl.to("ocl"), **kw)
        gout = torch.randn(ref.shape, generator=torch.Generator().manual_seed(5), dtype=lp.dtype)
        got.backward(gout.to("ocl"))
    ref.backward(gout)
    tol = 1e-5 if lp.dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got.detach().cpu(), ref.detach(), rtol=tol * 10, atol=tol * 10)
    # an impossible alignment without zero_infinity has NaN gradients on CPU too
    torch.testing.assert_close(y.grad.cpu(), x.grad, rtol=tol * 10, atol=tol * 10, equal_nan=True)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_padded_targets(reduction, dtype):
    run(*case(dtype=dtype), reduction=reduction)


def test_concatenated_targets_and_int32():
    lp, tg, il, tl = case(seed=1)
    flat = torch.cat([tg[b, : tl[b]] for b in range(tg.shape[0])])
    run(lp, flat, il, tl, reduction="none")
    run(lp, tg.int(), il.int(), tl.int(), reduction="sum")


def test_impossible_alignment_and_zero_infinity():
    lp, tg, il, tl = case(T=4, S=6, seed=2)
    tl = torch.tensor([6, 0, 2])
    il = torch.tensor([4, 4, 1])  # batch 0 cannot fit 6 labels in 4 steps: infinite loss
    for zi in (False, True):
        run(lp, tg, il, tl, reduction="none", zero_infinity=zi)
    run(lp, tg, il, tl, reduction="mean", zero_infinity=True)


def test_blank_not_zero_and_long_sequence():
    lp, tg, il, tl = case(T=70, N=2, C=5, S=30, seed=3)
    tg = tg.clamp(0, 3)  # labels 0..3, blank 4
    run(lp, tg, il, tl, blank=4, reduction="none")


def test_module_and_errors():
    lp, tg, il, tl = case()
    loss = torch.nn.CTCLoss()
    with torch_ocl.strict():
        v = loss(lp.to("ocl"), tg.to("ocl"), il, tl)
    torch.testing.assert_close(v.cpu(), loss(lp, tg, il, tl), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp.to("ocl"), tg.to("ocl"), il, tl, blank=10)
    with pytest.raises(RuntimeError, match="input_lengths to have value at most"):
        F.ctc_loss(lp.to("ocl"), tg.to("ocl"), il + 20, tl)
