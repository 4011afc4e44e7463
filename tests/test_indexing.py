"""Indexing ops (gather, scatter*, index_select, index_add, index, index_put_, masked_*,
nonzero, embedding, flip) against CPU PyTorch on the same inputs, in strict mode: any CPU
fallback fails the test."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import fp64_supported

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
}

REAL = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
        torch.float16, torch.bfloat16, torch.float32]
if fp64_supported():
    REAL.append(torch.float64)
ARITH = [d for d in REAL if d != torch.bool]
FLOATS = [d for d in REAL if d.is_floating_point]


def make(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        # Quarter steps: exact in every float dtype, so sums in any order agree.
        return (torch.randint(-12, 13, shape, generator=g).to(torch.float64) / 4).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 6, shape, generator=g).to(dtype)
    return torch.randint(-5, 6, shape, generator=g).to(dtype)


def to_dev(x):
    if isinstance(x, torch.Tensor):
        return x.to("ocl")
    if isinstance(x, (list, tuple)):
        return type(x)(to_dev(v) for v in x)
    return x


def assert_same(got, expected):
    if isinstance(expected, (tuple, list)):
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    assert got.device.type == "ocl"
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    if expected.dtype in TOL:
        torch.testing.assert_close(got, expected, equal_nan=True, **TOL[expected.dtype])
    else:
        assert torch.equal(got, expected), (got, expected)


def check(fn, *args):
    expected = fn(*args)
    dev = [to_dev(a) for a in args]
    with torch_ocl.strict():
        got = fn(*dev)
    assert_same(got, expected)


# ---- gather / scatter ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL + [torch.complex64])
def test_gather_dtypes(dtype):
    x = make((5, 7), dtype) if not dtype.is_complex else torch.randn(5, 7, dtype=dtype)
    idx = torch.randint(0, 5, (4, 7))
    check(lambda a, i: torch.gather(a, 0, i), x, idx)
    check(lambda a, i: torch.gather(a, -1, i), x, torch.randint(0, 7, (5, 3)))
    check(lambda a, i: torch.gather(a, 1, i), x, torch.randint(0, 7, (2, 3), dtype=torch.int32))


def test_gather_noncontiguous_and_sizes():
    x = make((8, 6, 5), torch.float32).transpose(0, 2)  # (5, 6, 8), non-contiguous
    idx = torch.randint(0, 6, (5, 4, 8)).transpose(0, 2)[:, :, :3].transpose(0, 2)
    check(lambda a, i: torch.gather(a, 1, i), x, idx)
    check(lambda a, i: torch.gather(a, 0, i), make((4099,), torch.float32),
          torch.randint(0, 4099, (1000,)))
    check(lambda a, i: torch.gather(a, 0, i), make((3, 4), torch.float32),
          torch.zeros(0, 4, dtype=torch.long))
    check(lambda a, i: torch.gather(a, 0, i), make((), torch.float32),
          torch.zeros((), dtype=torch.long))
    out = torch.empty(2, 2, device="ocl")
    with torch_ocl.strict():
        torch.gather(make((3, 2), torch.float32).to("ocl"), 0,
                     torch.tensor([[2, 0], [1, 1]], device="ocl"), out=out)
    assert_same(out, torch.gather(make((3, 2), torch.float32), 0, torch.tensor([[2, 0], [1, 1]])))


@pytest.mark.parametrize("dtype", REAL)
def test_scatter_src_value(dtype):
    x = make((6, 5), dtype)
    src = make((6, 5), dtype, seed=1)
    # A permutation per column: no duplicate targets, so the result is deterministic.
    idx = torch.stack([torch.randperm(6)[:4] for _ in range(5)], 1)
    check(lambda a, i, s: a.scatter(0, i, s), x, idx, src)
    check(lambda a, i: a.clone().scatter_(0, i, 1), x, idx)
    check(lambda a, i, s: a.scatter(1, i, s), x, idx[:, :1] % 5, src)


@pytest.mark.parametrize("dtype", ARITH)
def test_scatter_add_duplicates(dtype):
    x = make((5, 4), dtype)
    src = make((9, 4), dtype, seed=2)
    idx = torch.randint(0, 5, (9, 4))  # many duplicates
    check(lambda a, i, s: a.scatter_add(0, i, s), x, idx, src)
    check(lambda a, i, s: a.scatter(0, i, s, reduce="add"), x, idx, src)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32,
                                   torch.int64])
def test_scatter_reduce(reduce, include_self, dtype):
    if reduce == "mean" and not dtype.is_floating_point:
        pytest.skip("integer mean divides with floor_divide, another family's op")
    x = make((4, 3), dtype)
    src = make((7, 3), dtype, seed=3)
    idx = torch.randint(0, 4, (7, 3))
    check(lambda a, i, s: a.scatter_reduce(0, i, s, reduce, include_self=include_self), x, idx,
          src)


def test_scatter_multiply_value_reduce():
    x = make((4, 3), torch.float32)
    idx = torch.randint(0, 4, (5, 3))
    check(lambda a, i: a.clone().scatter_(0, i, 2.0, reduce="multiply"), x, idx)
    check(lambda a, i, s: a.clone().scatter_(0, i, s, reduce="multiply"), x, idx,
          make((5, 3), torch.float32, 4))


# ---- index_select / index_add / embedding -------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL)
def test_index_select(dtype):
    x = make((7, 5), dtype)
    check(lambda a, i: a.index_select(0, i), x, torch.tensor([6, 0, 0, 3]))
    check(lambda a, i: a.index_select(-1, i), x.t(), torch.tensor([1, 1, 4], dtype=torch.int32))


def test_index_select_shapes():
    check(lambda a, i: a.index_select(1, i), make((3, 4099), torch.float32),
          torch.randint(0, 4099, (1000,)))
    check(lambda a, i: a.index_select(0, i), make((3, 4), torch.float32),
          torch.zeros(0, dtype=torch.long))
    check(lambda a, i: a.index_select(0, i), make((), torch.float32), torch.tensor([0]))
    check(lambda a, i: a.index_select(0, i), make((5, 3), torch.float32)[::2],
          torch.tensor([2, 1, 0])[::2])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int16])
def test_index_add(dtype):
    x = make((5, 3), dtype)
    src = make((6, 3), dtype, 1)
    idx = torch.tensor([0, 4, 0, 2, 4, 4])
    check(lambda a, i, s: a.index_add(0, i, s), x, idx, src)
    if dtype.is_floating_point:
        check(lambda a, i, s: a.clone().index_add_(1, i, s, alpha=2), x.t().contiguous(), idx,
              src.t())


def test_index_select_and_gather_grads():
    w = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    wd = w.detach().to("ocl").requires_grad_()
    idx = torch.tensor([5, 0, 5, 2])
    gidx = torch.randint(0, 6, (8, 4))
    for fn in (lambda t, i, g: t.index_select(0, i).sum() + (t.gather(0, g) ** 2).sum(),):
        fn(w, idx, gidx).backward()
        with torch_ocl.strict():
            fn(wd, idx.to("ocl"), gidx.to("ocl")).backward()
        assert_same(wd.grad, w.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_forward_backward(dtype, padding_idx, scale):
    w = make((10, 6), dtype).requires_grad_()
    wd = w.detach().to("ocl").requires_grad_()
    idx = torch.tensor([[1, 2, 9], [2, 2, 0]])
    go = make((2, 3, 6), dtype, 5)
    out = F.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale)
    out.backward(go)
    with torch_ocl.strict():
        outd = F.embedding(idx.to("ocl"), wd, padding_idx=padding_idx, scale_grad_by_freq=scale)
        outd.backward(go.to("ocl"))
    assert_same(outd.detach(), out.detach())
    assert_same(wd.grad, w.grad)


def test_gradcheck_gather_index_select():
    x = torch.randn(4, 3, dtype=torch.float64, device="ocl", requires_grad=True)
    i = torch.tensor([[0, 3, 1], [3, 3, 0]], device="ocl")
    j = torch.tensor([2, 0, 2], device="ocl")
    # gradcheck's own bookkeeping uses ops of other families; the ops under test are strict above.
    assert torch.autograd.gradcheck(lambda t: t.gather(0, i), (x,))
    assert torch.autograd.gradcheck(lambda t: t.index_select(0, j), (x,))


# ---- advanced indexing --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL)
def test_index_tensor_dtypes(dtype):
    x = make((5, 6, 4), dtype)
    check(lambda a, i: a[i], x, torch.tensor([4, -1, 0, 2]))
    check(lambda a, i, j: a[i, :, j], x, torch.tensor([[0], [3]]), torch.tensor([1, -4, 2]))


def test_index_tensor_patterns():
    x = make((5, 6, 7), torch.float32)
    check(lambda a, m: a[m], x, make((5, 6, 7), torch.bool, 4))
    check(lambda a, m: a[m], x, make((5,), torch.bool, 5))
    check(lambda a, m: a[:, m], x, make((6,), torch.bool, 6))
    check(lambda a, i, j: a[i, j], x.transpose(0, 2), torch.tensor([6, 1]), torch.tensor([0, 5]))
    check(lambda a, i: a[:, :, i], x[:, ::2], torch.tensor([[0, 6], [3, 3]]))
    check(lambda a, i: a[i], x, torch.zeros(0, dtype=torch.long))
    check(lambda a, i: a[i, 1:3], x, torch.tensor([1, 1, 1], dtype=torch.int32))
    check(lambda a, i: a[..., i], make((4099,), torch.float32), torch.randint(-4099, 4099, (1000,)))


@pytest.mark.parametrize("dtype", REAL)
def test_index_put(dtype):
    x = make((6, 4), dtype)
    v = make((3, 4), dtype, 1)

    def put(a, i, val):
        a = a.clone()
        a[i] = val
        return a

    check(put, x, torch.tensor([5, 0, 2]), v)
    check(put, x, make((6, 4), torch.bool, 2), make((), dtype, 3))
    check(lambda a, i, j, val: a.index_put((i, j), val), x, torch.tensor([1, 2]),
          torch.tensor([3, 0]), make((2,), dtype, 4))


@pytest.mark.parametrize("dtype", ARITH)
def test_index_put_accumulate(dtype):
    x = make((5, 3), dtype)
    idx = torch.tensor([0, 4, 0, 0, 2, -1])
    v = make((6, 3), dtype, 1)
    check(lambda a, i, val: a.index_put((i,), val, accumulate=True), x, idx, v)
    check(lambda a, i, j, val: a.index_put((i, j), val, accumulate=True), x, idx,
          torch.tensor([2, 2, 2, 1, 0, 2]), make((6,), dtype, 2))


def test_index_grad():
    w = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    wd = w.detach().to("ocl").requires_grad_()
    i = torch.tensor([4, 0, 4, 1])
    (w[i] * 3).sum().backward()
    with torch_ocl.strict():
        (wd[i.to("ocl")] * 3).sum().backward()
    assert_same(wd.grad, w.grad)
    x = torch.randn(3, 4, dtype=torch.float64, device="ocl", requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: t[torch.tensor([2, 0, 2], device="ocl")], (x,))


@pytest.mark.parametrize("dtype", REAL)
def test_masked_fill(dtype):
    x = make((5, 6), dtype)
    m = make((5, 6), torch.bool, 1)
    val = True if dtype == torch.bool else 3
    check(lambda a, mm: a.masked_fill(mm, val), x, m)
    check(lambda a, mm: a.masked_fill(mm, torch.tensor(val)), x.t(), m.t())
    check(lambda a, mm: a.masked_fill(mm, val), x, m[0])  # broadcast mask


@pytest.mark.parametrize("dtype", REAL)
def test_nonzero_masked_select(dtype):
    x = make((7, 5), dtype)
    check(torch.nonzero, x)
    check(torch.nonzero, x.t())
    check(torch.argwhere, x)
    check(lambda a: torch.where(a != 0), x)
    check(lambda a, m: torch.masked_select(a, m), x, make((7, 5), torch.bool, 1))
    check(lambda a, m: torch.masked_select(a, m), x, make((5,), torch.bool, 2))


def test_nonzero_sizes():
    for shape in [(0,), (1,), (4099,), (3, 0, 2), ()]:
        check(torch.nonzero, make(shape, torch.float32, 1))
    check(torch.nonzero, torch.zeros(1000))
    check(torch.nonzero, torch.ones(2, 3, 4, 5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.float16])
def test_masked_scatter(dtype):
    x = make((4, 5), dtype)
    m = make((4, 5), torch.bool, 1)
    src = make((30,), dtype, 2)
    check(lambda a, mm, s: a.masked_scatter(mm, s), x, m, src)
    check(lambda a, mm, s: a.masked_scatter(mm, s), x, m[1], src)


def test_masked_grads():
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    m = make((4, 5), torch.bool, 3)
    (x.masked_fill(m, 0.0) * 2 + torch.masked_select(x, m).sum()).sum().backward()
    with torch_ocl.strict():
        md = m.to("ocl")
        (xd.masked_fill(md, 0.0) * 2 + torch.masked_select(xd, md).sum()).sum().backward()
    assert_same(xd.grad, x.grad)


# ---- flip ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL + [torch.complex64])
def test_flip(dtype):
    x = make((3, 4, 5), dtype) if not dtype.is_complex else torch.randn(3, 4, 5, dtype=dtype)
    check(lambda a: a.flip(0), x)
    check(lambda a: a.flip(-1, 0), x)
    check(lambda a: a.flip(1), x.transpose(0, 2)[::2])
    check(lambda a: a.flip(0), make((4099,), torch.float32))
    check(lambda a: a.flip(0), make((0, 3), torch.float32))


def test_flip_grad():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    (x.flip(1) * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    with torch_ocl.strict():
        w = torch.arange(4.0, dtype=torch.float64).to("ocl")
        (xd.flip(1) * w).sum().backward()
    assert_same(xd.grad, x.grad)


# ---- argument errors stay PyTorch's -------------------------------------------------------------


def test_argument_errors_match_cpu():
    def cases(dev):
        long = dict(dtype=torch.long, device=dev)
        return [
            lambda a: torch.gather(a, 0, torch.zeros(2, 5, **long)),  # index larger than self
            lambda a: a.index_select(0, torch.zeros(2, 2, **long)),
            lambda a: a.masked_fill(torch.zeros(3, 4, **long), 1.0),
            lambda a: a[torch.zeros(1, **long), torch.zeros(1, **long), torch.zeros(1, **long)],
            lambda a: a.scatter_(0, torch.zeros(2, 2, **long), a.int()[:2, :2]),  # dtype mismatch
        ]

    x = torch.randn(3, 4)
    for cpu_case, dev_case in zip(cases("cpu"), cases("ocl")):
        with pytest.raises(Exception) as cpu_err:
            cpu_case(x)
        with pytest.raises(cpu_err.type):
            dev_case(x.to("ocl"))
    # the device stays usable
    check(lambda a, i: a.index_select(0, i), x, torch.tensor([1]))


def test_masked_select_zero_dim():
    # CUDA views 0-dim operands as 1-dim; a 0-dim tensor cannot be indexed by a mask directly
    x = torch.tensor(3.0)
    for m in (torch.tensor(True), torch.tensor(False), torch.tensor([True, False, True])):
        check(lambda a, mm: torch.masked_select(a, mm), x, m)
    check(lambda a, mm: torch.masked_select(a, mm), make((3,), torch.float32), torch.tensor(True))
