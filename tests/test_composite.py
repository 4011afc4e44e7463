"""Ops that are compositions of native ops (csrc/aten/index/composite.cpp, counting.cpp,
unique_consecutive in sort.cpp) against CPU PyTorch in strict mode: any CPU fallback fails the test."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl


def on_ocl(tree):
    return torch.utils._pytree.tree_map(
        lambda t: t.to("ocl") if isinstance(t, torch.Tensor) else t, tree)


def check(fn, *args):
    expected = fn(*args)
    with torch_ocl.strict():
        got = fn(*on_ocl(args))
    for e, g in zip(torch.utils._pytree.tree_leaves(expected), torch.utils._pytree.tree_leaves(got)):
        if isinstance(e, torch.Tensor):
            assert g.device.type == "ocl"
            torch.testing.assert_close(g.cpu(), e, equal_nan=True)
        else:
            assert g == e


def rand(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def test_rsub_equal_trace_count_nonzero():
    a, b = rand(3, 4), rand(4, seed=1)
    check(lambda x, y: torch.rsub(x, y, alpha=2), a, b)
    check(torch.equal, a, a.clone())
    check(torch.equal, a, a + 1)
    check(torch.equal, a, a[:2])
    check(torch.trace, rand(4, 6))
    check(torch.trace, torch.arange(12).view(3, 4))  # int: int64 result
    check(lambda x: torch.count_nonzero(x, dim=(0,)), (a > 0).int())
    with pytest.raises(RuntimeError, match="expected a matrix"):
        torch.trace(a.to("ocl")[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_index_fill_copy_take_put(dtype):
    x = rand(4, 5, dtype=dtype)
    idx = torch.tensor([0, -1, 2])
    check(lambda t, i: t.clone().index_fill_(1, i, 1), x, idx)
    check(lambda t, i, v: t.clone().index_fill_(0, i, v), x, idx, torch.tensor(0, dtype=dtype))
    check(lambda t, i: t.clone().index_fill_(0, i, 1), torch.tensor(3, dtype=dtype), torch.tensor(0))
    src = rand(4, 3, seed=2, dtype=dtype)
    check(lambda t, i, s: t.index_copy(1, i, s), x, torch.tensor([4, 0, 2]), src)
    check(lambda t, i: torch.take(t, i), x.t(), torch.tensor([[0, 19], [-1, 7]]))
    vals = rand(3, seed=3, dtype=dtype)
    check(lambda t, i, v: t.clone().put_(i, v), x.t(), torch.tensor([1, -2, 7]), vals)
    if dtype != torch.bool:
        check(lambda t, i, v: t.clone().put_(i, v, accumulate=True), x, torch.tensor([1, 1, 7]), vals)


def test_cross_and_channel_shuffle():
    a, b = rand(2, 3, 4), rand(1, 3, 1, seed=1)
    check(lambda x, y: torch.linalg.cross(x, y, dim=1), a, b)
    check(lambda x, y: torch.cross(x, y, dim=-2), a, b.expand(2, 3, 4))
    out = torch.empty(0)
    check(lambda x, y, o: torch.linalg.cross(x, y, dim=1, out=o), a, b, out)
    check(lambda x: F.channel_shuffle(x, 2), rand(2, 6, 3, 3))


def test_max_unpool2d_forward_and_backward():
    x = rand(2, 3, 6, 8)
    pooled, ind = F.max_pool2d(x, 2, return_indices=True)
    check(lambda p, i: F.max_unpool2d(p, i, 2), pooled, ind)
    check(lambda p, i: F.max_unpool2d(p, i, 2, output_size=(7, 9)), pooled, ind)
    p = pooled.clone().requires_grad_()
    pd = pooled.to("ocl").requires_grad_()
    g = rand(2, 3, 6, 8, seed=5)
    F.max_unpool2d(p, ind, 2).backward(g)
    with torch_ocl.strict():
        F.max_unpool2d(pd, ind.to("ocl"), 2).backward(g.to("ocl"))
    torch.testing.assert_close(pd.grad.cpu(), p.grad)


def test_unique_consecutive_and_legacy_unique():
    x = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    check(lambda t: torch.unique_consecutive(t, return_inverse=True, return_counts=True), x)
    check(lambda t: torch.unique_consecutive(t), x.view(2, 4))
    check(lambda t: torch.unique_consecutive(t, return_counts=True, dim=1), x.view(2, 4))
    check(lambda t: torch.unique_consecutive(t, return_inverse=True, dim=0), x.view(4, 2))
    check(lambda t: torch.unique_consecutive(t, return_inverse=True), torch.zeros(0))
    check(lambda t: torch.ops.aten._unique(t, True, True), x)
    check(lambda t: torch.unique(t, dim=0, return_counts=True), torch.zeros(0, 3))
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        torch.unique(torch.zeros(0, 3, device="ocl"), dim=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_sinc_entr_xlog1py_nansum(dtype):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([0.0, -0.0, 1.0, -2.5, 0.5, 1e-8, nan, inf, -inf, 3.0]).to(dtype)
    y = torch.tensor([0.0, 2.0, nan, -0.5, 1e-3, -1.0, 4.0, 0.0, 1.0, inf]).to(dtype)
    check(torch.sinc, x)
    check(torch.special.entr, x)
    check(torch.special.xlog1py, x, y)
    check(torch.special.xlog1py, x.view(2, 5), y[:5])  # broadcast
    check(lambda t: torch.nansum(t), x)
    check(lambda t: torch.nansum(t.view(2, 5), dim=1, keepdim=True), x)
    check(lambda t: torch.nanmean(t.view(5, 2), dim=0), x)
    check(lambda t: torch.nansum(t), torch.arange(6).view(2, 3))  # integers: a plain sum


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16])
def test_searchsorted_bucketize_isin(dtype):
    nan = float("nan")
    bd = torch.tensor([-2.0, 0.0, 0.0, 1.5, 3.0, 7.0]).to(dtype)
    vals = torch.tensor([[-3.0, 0.0, 1.0], [7.0, 9.0, 3.0]]).to(dtype)
    for right in (False, True):
        check(lambda b, v: torch.searchsorted(b, v, right=right), bd, vals)
        check(lambda b, v: torch.bucketize(v, b, right=right, out_int32=True), bd, vals)
    check(lambda b: torch.searchsorted(b, 1.5, side="right"), bd)
    rows = torch.stack([bd, bd.flip(0).contiguous()])  # second row sorted through `sorter`
    sorter = torch.stack([torch.arange(6), torch.arange(5, -1, -1)])
    check(lambda b, v, s: torch.searchsorted(b, v, sorter=s), rows, vals, sorter)
    check(lambda v, t: torch.isin(v, t), vals, bd[1:4])
    check(lambda v, t: torch.isin(v, t, invert=True), vals.t(), bd)
    check(lambda v, t: torch.isin(v, t), vals, bd[:0])
    if dtype.is_floating_point:
        x = torch.tensor([nan, 1.0, -0.0]).to(dtype)
        check(lambda b, v: torch.searchsorted(b, v), bd, x)
        check(lambda v, t: torch.isin(v, t), x, torch.tensor([nan, 0.0]).to(dtype))


def test_repeat_interleave_tensor():
    for dtype in (torch.int64, torch.int32):
        r = torch.tensor([2, 0, 3, 1]).to(dtype)
        check(torch.repeat_interleave, r)
        check(lambda x, rr: torch.repeat_interleave(x, rr, dim=0), rand(4, 3), r)
    check(torch.repeat_interleave, torch.zeros(0, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="negative"):
        torch.repeat_interleave(torch.tensor([1, -1], device="ocl"))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_index_reduce(reduce, dtype):
    x = (rand(5, 4) * 4).to(dtype)
    src = (rand(3, 4, seed=1) * 4).to(dtype)
    idx = torch.tensor([4, 0, 4])  # a repeated index
    for include_self in (True, False):
        check(lambda t, i, s: t.index_reduce(0, i, s, reduce, include_self=include_self), x, idx, src)
        check(lambda t, i, s: t.clone().index_reduce_(1, i, s.t(), reduce, include_self=include_self),
              x.t().contiguous(), idx, src)


def test_pow_scalar_base_and_angle():
    e = torch.tensor([[0.5, -1.0, 2.0], [0.0, 3.0, -2.5]])
    check(lambda t: torch.pow(2.0, t), e)
    check(lambda t: torch.pow(1, t), e)  # a fill
    check(lambda t: torch.pow(3, t), torch.tensor([0, 1, 5, 7]))  # integers
    check(lambda t: 2 ** t, e.t())
    check(torch.ldexp, e, torch.tensor([1, -2, 3]))
    nan = float("nan")
    check(torch.angle, torch.tensor([-2.0, 0.0, -0.0, 3.0, nan, -float("inf")]))
    check(torch.angle, torch.tensor([-2, 0, 5]))  # integers: float result


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_embedding_max_norm(dtype):
    w = (rand(10, 4, dtype=torch.float64) * 3).to(dtype)
    idx = torch.tensor([[1, 3, 3], [9, 0, 1]])
    check(lambda ww, i: torch.embedding_renorm_(ww.clone(), i, 1.5, 2.0), w, idx)
    check(lambda ww, i: torch.embedding_renorm_(ww.clone(), i, 2.0, 1.0), w, idx)
    check(lambda ww, i: F.embedding(i, ww.clone(), max_norm=1.0), w, idx)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.int8])
def test_bincount(dtype):
    x = torch.tensor([3, 0, 7, 3, 3, 1], dtype=dtype)
    check(torch.bincount, x)
    check(lambda t: torch.bincount(t, minlength=12), x)
    check(lambda t, w: torch.bincount(t, w), x, torch.linspace(0, 1, 6))  # float: float
    check(lambda t, w: torch.bincount(t, w), x, torch.arange(6, dtype=torch.int32))  # double
    check(lambda t: torch.bincount(t, minlength=3), torch.empty(0, dtype=dtype))


def test_bincount_errors(ocl):
    with pytest.raises(RuntimeError, match="non-negative integral"):
        torch.bincount(torch.tensor([1, -1], device=ocl))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        torch.bincount(torch.tensor([[1]], device=ocl))
    with pytest.raises(RuntimeError, match="same length"):
        torch.bincount(torch.tensor([1, 2], device=ocl), torch.ones(3, device=ocl))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        torch.bincount(torch.tensor([1], device=ocl), minlength=-1)


def test_nonzero_static():
    x = torch.tensor([[0, 1, 0], [2, 0, 3]])
    for size in (0, 2, 3, 6):
        check(lambda t: torch.nonzero_static(t, size=size), x)
        check(lambda t: torch.nonzero_static(t, size=size, fill_value=7), x)
    check(lambda t: torch.nonzero_static(t, size=2), torch.zeros(0, 4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_renorm(dtype):
    x = rand(4, 3, 5, dtype=dtype) * 3
    for p, dim, maxnorm in ((2, 0, 1.5), (1, 1, 4.0), (3, -1, 2.0), (float("inf"), 2, 1.0)):
        expected = torch.renorm(x, p, dim, maxnorm)
        with torch_ocl.strict():
            got = torch.renorm(x.to("ocl"), p, dim, maxnorm)
            inplace = x.to("ocl").renorm_(p, dim, maxnorm)
        tol = dict(rtol=1e-5, atol=1e-6) if dtype in (torch.float32, torch.float64) else {}
        torch.testing.assert_close(got.cpu(), expected, **tol)
        torch.testing.assert_close(inplace.cpu(), expected, **tol)
    g = rand(4, 3, 5).requires_grad_()
    torch.renorm(g, 2, 0, 1.0).sum().backward()
    go = g.detach().to("ocl").requires_grad_()
    with torch_ocl.strict():
        torch.renorm(go, 2, 0, 1.0).sum().backward()
    torch.testing.assert_close(go.grad.cpu(), g.grad, rtol=1e-5, atol=1e-6)
