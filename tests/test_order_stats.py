"""kthvalue, median and nanmedian against CPU in strict mode: values exactly, indices by what
they select (ties may pick another equal element), NaN rows, keepdim, out=, integers, gradients."""

import pytest
import torch

import torch_ocl

NAN = float("nan")


def check(fn, x, dim=None, view=lambda t: t):
    """fn(view(x)) on CPU and on ocl (the view taken on the device, so it stays strided)."""
    ref = fn(view(x))
    with torch_ocl.strict():
        got = fn(view(x.to("ocl")))
    x = view(x)
    if isinstance(ref, torch.Tensor):
        torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0, equal_nan=True)
        return
    torch.testing.assert_close(got[0].cpu(), ref[0], rtol=0, atol=0, equal_nan=True)
    idx = got[1].cpu()
    assert idx.dtype == torch.long and idx.shape == ref[1].shape
    if idx.dim() < x.dim():
        idx = idx.unsqueeze(dim)
    picked = x.gather(dim, idx)
    expect = ref[0] if ref[0].dim() == x.dim() else ref[0].unsqueeze(dim)
    torch.testing.assert_close(picked, expect, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                   torch.int64, torch.int32, torch.uint8])
@pytest.mark.parametrize("keepdim", [False, True])
def test_against_cpu(dtype, keepdim):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 9, (5, 6, 7), generator=g).to(dtype)  # many ties
    for dim in (0, 1, -1):
        check(lambda t: torch.kthvalue(t, 3, dim, keepdim), x, dim)
        check(lambda t: torch.median(t, dim, keepdim), x, dim)
        check(lambda t: torch.nanmedian(t, dim, keepdim), x, dim)
    check(torch.median, x)
    check(torch.nanmedian, x)
    check(lambda t: torch.median(t, 1), x, 1, view=lambda t: t[:, ::2].transpose(0, 2))


def test_nan_rows():
    x = torch.tensor([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN], [4.0, 1.0, 2.0, 3.0],
                      [NAN, 5.0, NAN, 0.5]])
    for fn in (torch.median, torch.nanmedian):
        check(lambda t: fn(t, 1), x, 1)
        check(fn, x)
    check(lambda t: torch.kthvalue(t, 4, 1), x, 1)
    check(lambda t: torch.median(t, 0), torch.tensor([NAN]), 0)
    check(torch.nanmedian, torch.tensor([NAN, NAN]))


def test_zero_dim_out_and_errors(ocl):
    s = torch.tensor(2.5)
    check(lambda t: torch.kthvalue(t, 1), s, 0)
    check(lambda t: torch.median(t, 0), s, 0)
    x = torch.randn(4, 5)
    vals, idx = torch.empty(0, device=ocl), torch.empty(0, dtype=torch.long, device=ocl)
    with torch_ocl.strict():
        torch.median(x.to(ocl), 1, out=(vals, idx))
    torch.testing.assert_close(vals.cpu(), torch.median(x, 1).values, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="k out of range"):
        torch.kthvalue(x.to(ocl), 6, 1)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.median(x.to(ocl), 1, out=(vals.long(), idx))


def test_gradients():
    x = torch.randn(4, 7, generator=torch.Generator().manual_seed(3))
    for fn in (lambda t: torch.median(t, 1).values, lambda t: torch.kthvalue(t, 2, 0).values,
               lambda t: torch.nanmedian(t)):
        a = x.clone().requires_grad_()
        fn(a).sum().backward()
        b = x.to("ocl").requires_grad_()
        with torch_ocl.strict():
            fn(b).sum().backward()
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=0, atol=0)
