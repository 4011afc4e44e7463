"""sum/mean reductions, log_softmax and nll_loss (so cross_entropy) on ocl against CPU, strict."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def strict(fn, *args, **kwargs):
    with torch_ocl.strict():
        return fn(*args, **kwargs)


TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-10),
       torch.float16: dict(rtol=2e-2, atol=2e-2), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}


@pytest.mark.parametrize("dims", [None, (0,), (1,), (2,), (0, 2), (-1,), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean_dims(dims, keepdim):
    x = rand(4, 5, 7)
    for op in (torch.sum, torch.mean):
        if dims is None:
            got, want = strict(op, x.to("ocl")).cpu(), op(x)
        else:
            got, want = strict(op, x.to("ocl"), dims, keepdim=keepdim).cpu(), op(x, dims, keepdim=keepdim)
        torch.testing.assert_close(got, want, **TOL[torch.float32])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int32,
                                   torch.int64, torch.uint8, torch.bool])
def test_sum_dtypes_and_promotion(dtype):
    x = (rand(6, 9) * 4).to(dtype)
    got, want = strict(torch.sum, x.to("ocl"), 1).cpu(), torch.sum(x, 1)
    assert got.dtype == want.dtype  # ints and bool sum to int64, as on CPU
    if want.dtype.is_floating_point:
        torch.testing.assert_close(got, want, **TOL[want.dtype])
    else:
        assert torch.equal(got, want)
    got = strict(torch.sum, x.to("ocl"), dtype=torch.float64).cpu()
    torch.testing.assert_close(got, torch.sum(x, dtype=torch.float64))


def test_sum_non_contiguous_zero_size_and_out():
    x = rand(8, 6, 5)
    v = x.transpose(0, 2)[:, ::2]
    torch.testing.assert_close(strict(torch.sum, v.to("ocl"), (0, 1)).cpu(), v.sum((0, 1)))
    torch.testing.assert_close(strict(torch.sum, x.to("ocl").transpose(0, 2)[:, ::2], 1).cpu(),
                               v.sum(1))
    assert torch.equal(strict(torch.sum, torch.empty(0, 3, device="ocl"), 0).cpu(), torch.zeros(3))
    assert torch.isnan(strict(torch.mean, torch.empty(0, device="ocl")).cpu())
    out = torch.empty(0, device="ocl")
    strict(torch.sum, x.to("ocl"), 2, out=out)
    torch.testing.assert_close(out.cpu(), x.sum(2))
    with pytest.raises(RuntimeError):
        torch.mean(torch.ones(3, dtype=torch.int64, device="ocl"))  # as on CPU


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_log_softmax_forward_backward(dim, dtype):
    x = rand(5, 7, 3, dtype=dtype) * 3
    xd = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    scale = torch.arange(3, dtype=dtype).to("ocl")
    with torch_ocl.strict():
        yd = F.log_softmax(xd, dim)
        (yd * scale).sum().backward()
    yc = F.log_softmax(xc, dim)
    (yc * torch.arange(3, dtype=dtype)).sum().backward()
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), **TOL[dtype])
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **TOL[dtype])


def test_log_softmax_strided_input_and_extremes():
    x = rand(6, 8).t()
    torch.testing.assert_close(strict(F.log_softmax, x.to("ocl"), 1).cpu(), F.log_softmax(x, 1))
    big = torch.tensor([[1000.0, 0.0, -1000.0], [float("-inf"), 0.0, 1.0]])
    torch.testing.assert_close(strict(F.log_softmax, big.to("ocl"), 1).cpu(), F.log_softmax(big, 1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_forward_backward(reduction, weighted, ignore_index):
    x = rand(9, 5)
    t = torch.tensor([0, 4, 2, 2, 1, 3, 0, 4, 2])
    w = torch.rand(5, generator=torch.Generator().manual_seed(1)) if weighted else None
    xd = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    with torch_ocl.strict():
        ld = F.cross_entropy(xd, t.to("ocl"), weight=None if w is None else w.to("ocl"),
                             reduction=reduction, ignore_index=ignore_index)
        ld.sum().backward()
    lc = F.cross_entropy(xc, t, weight=w, reduction=reduction, ignore_index=ignore_index)
    lc.sum().backward()
    torch.testing.assert_close(ld.detach().cpu(), lc.detach(), **TOL[torch.float32])
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **TOL[torch.float32])


def test_nll_loss_one_dimensional_input_and_all_ignored():
    x = F.log_softmax(rand(5), 0)
    t = torch.tensor(3)
    torch.testing.assert_close(strict(F.nll_loss, x.to("ocl"), t.to("ocl")).cpu(), F.nll_loss(x, t))
    xs, ts = F.log_softmax(rand(3, 4), 1), torch.tensor([1, 1, 1])
    got = strict(F.nll_loss, xs.to("ocl"), ts.to("ocl"), ignore_index=1).cpu()
    assert torch.isnan(got) and torch.isnan(F.nll_loss(xs, ts, ignore_index=1))  # 0 / 0


def test_out_of_range_target_raises_at_the_next_sync_and_process_stays_usable():
    # a device-side check (test_losses.py has the full contract): raised when the loss is read
    x = F.log_softmax(rand(4, 3), 1).to("ocl")
    loss = F.nll_loss(x, torch.tensor([0, 7, 1, 1]).to("ocl"))
    with pytest.raises(RuntimeError, match="Target 7 is out of bounds"):
        loss.item()
    loss = F.nll_loss(x, torch.tensor([0, -3, 1, 1]).to("ocl"), reduction="none")
    with pytest.raises(RuntimeError, match="Target -3 is out of bounds"):
        loss.cpu()
    assert F.nll_loss(x, torch.tensor([0, 2, 1, 1]).to("ocl")).isfinite().item()
