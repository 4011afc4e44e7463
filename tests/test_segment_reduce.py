"""segment_reduce (lengths / offsets) and its backward on ocl against CPU, in strict mode."""

import pytest
import torch
import torch_ocl

REDUCTIONS = ["max", "min", "sum", "mean", "prod"]


def _offsets(lengths):
    z = lengths.new_zeros(*lengths.shape[:-1], 1)
    return torch.cat((z, lengths), -1).cumsum(-1)


def _run(data, reduce, form, lengths, axis, initial, unsafe=False):
    kw = dict(axis=axis, initial=initial, unsafe=unsafe)
    kw["lengths" if form == "lengths" else "offsets"] = (
        lengths if form == "lengths" else _offsets(lengths))
    return torch.segment_reduce(data, reduce, **kw)


CASES = [  # data shape, axis, lengths, unsafe
    ((7,), 0, [0, 2, 3, 2], False),
    ((6, 3), 0, [2, 0, 4], False),
    ((11,), 0, [1, 2, 0, 5], True),  # lengths not summing to the size (unsafe)
    ((3, 5), 1, [[0, 1, 2, 2], [5, 0, 0, 0], [1, 1, 1, 2]], False),
    ((2, 5, 3), 1, [[2, 0, 3], [1, 1, 3]], False),
    ((2, 4, 3), -2, [[1, 3], [4, 0]], False),
]


@pytest.mark.parametrize("form", ["lengths", "offsets"])
@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("initial", [None, 2.0])
def test_forward_backward_match_cpu(form, reduce, case, initial):
    shape, axis, lengths, unsafe = CASES[case]
    g = torch.Generator().manual_seed(case)
    data = torch.randn(*shape, generator=g)
    if data.numel() > 2:
        data.view(-1)[1] = 0.0  # a zero for prod's backward
        data.view(-1)[-1] = data.view(-1)[-2]  # a tie for max/min's backward
    lengths = torch.tensor(lengths)
    x = data.detach().requires_grad_()
    ref = _run(x, reduce, form, lengths, axis, initial, unsafe)
    go = torch.randn(ref.shape, generator=g)
    (gref,) = torch.autograd.grad(ref, x, go)
    with torch_ocl.strict():
        xo = data.to("ocl").requires_grad_()
        xv = torch.stack((xo, xo), -1)[..., 0]  # a non-contiguous view of the same values
        assert not xv.is_contiguous()
        out = _run(xv, reduce, form, lengths.to("ocl"), axis, initial, unsafe)
        (gout,) = torch.autograd.grad(out, xo, go.to("ocl"))
    torch.testing.assert_close(out.cpu(), ref, equal_nan=True)
    torch.testing.assert_close(gout.cpu(), gref, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_dtypes_round_like_cpu(dtype, reduce):
    g = torch.Generator().manual_seed(3)
    data = (torch.randn(40, 3, generator=g) * 3).to(dtype)
    lengths = torch.tensor([7, 0, 13, 20])
    ref = torch.segment_reduce(data, reduce, lengths=lengths, initial=1.5)
    with torch_ocl.strict():
        out = torch.segment_reduce(data.to("ocl"), reduce, lengths=lengths.to("ocl"), initial=1.5)
        grad = torch.ops.aten._segment_reduce_backward(
            torch.ones_like(out), out, data.to("ocl"), reduce, lengths=lengths.to("ocl"),
            initial=1.5)
    gref = torch.ops.aten._segment_reduce_backward(
        torch.ones_like(ref), ref, data, reduce, lengths=lengths, initial=1.5)
    assert out.dtype == dtype
    torch.testing.assert_close(out.cpu(), ref, atol=0, rtol=0, equal_nan=True)
    torch.testing.assert_close(grad.cpu(), gref, atol=0, rtol=0, equal_nan=True)


def test_nan_zero_size_and_errors():
    data = torch.tensor([1.0, float("nan"), 3.0, -1.0])
    lengths = torch.tensor([2, 2])
    with torch_ocl.strict():
        for reduce in ("max", "min"):
            torch.testing.assert_close(
                torch.segment_reduce(data.to("ocl"), reduce, lengths=lengths.to("ocl")).cpu(),
                torch.segment_reduce(data, reduce, lengths=lengths), equal_nan=True)
        empty = torch.segment_reduce(torch.zeros(0, 3, device="ocl"), "sum",
                                     lengths=torch.zeros(2, dtype=torch.long, device="ocl"))
        assert empty.shape == (2, 3) and (empty.cpu() == 0).all()
        none = torch.segment_reduce(torch.zeros(4, device="ocl"), "sum",
                                    lengths=torch.zeros(0, dtype=torch.long, device="ocl"),
                                    unsafe=True)
        assert none.shape == (0,)
        d = torch.randn(5, device="ocl")
        with pytest.raises(RuntimeError, match="sum to data.size"):
            torch.segment_reduce(d, "sum", lengths=torch.tensor([1, 2], device="ocl"))
        with pytest.raises(RuntimeError, match="negative"):
            torch.segment_reduce(d, "sum", lengths=torch.tensor([6, -1], device="ocl"))
        with pytest.raises(RuntimeError, match="reduce argument must be"):
            torch.segment_reduce(d, "median", lengths=torch.tensor([5], device="ocl"))
        with pytest.raises(RuntimeError, match="Either lengths or offsets"):
            torch.segment_reduce(d, "sum")
        with pytest.raises(RuntimeError, match="last dimension of lengths"):
            torch.segment_reduce(torch.randn(5, 2, device="ocl"), "sum",
                                 lengths=torch.tensor([5], device="ocl"), axis=1)
