"""Sort, topk, unique, padding and composite shape ops (stack, repeat, roll, constant pad) against
CPU PyTorch on the same inputs, in strict mode: any CPU fallback fails the test."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from test_indexing import FLOATS, REAL, assert_same, check, make


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable(dtype, descending):
    x = make((6, 37), dtype)  # many ties: stable order is fully determined
    check(lambda a: torch.sort(a, dim=-1, descending=descending, stable=True), x)
    check(lambda a: torch.sort(a, dim=0, descending=descending, stable=True), x.t())
    check(lambda a: torch.argsort(a, dim=1, descending=descending, stable=True), x)


def test_sort_sizes_and_nan():
    for n in [1, 7, 1000, 4099]:
        x = torch.randperm(n).float()
        check(lambda a: torch.sort(a), x)
    x = torch.tensor([3.0, float("nan"), -1.0, float("inf"), float("nan"), 0.0])
    check(lambda a: torch.sort(a, stable=True), x)
    check(lambda a: torch.sort(a, descending=True, stable=True), x)
    check(lambda a: torch.sort(a), torch.zeros(0, 3))
    check(lambda a: torch.sort(a), torch.tensor(2.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.bfloat16])
def test_topk(dtype):
    x = torch.randperm(200).reshape(4, 50).to(dtype)  # distinct values: no ties
    check(lambda a: torch.topk(a, 5), x)
    check(lambda a: torch.topk(a, 3, dim=0, largest=False), x)
    check(lambda a: torch.topk(a, 0), x)


def test_sort_topk_grads():
    x = torch.randn(4, 9, dtype=torch.float64, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    w = torch.randn(4, 3, dtype=torch.float64)
    (torch.topk(x, 3).values * w).sum().backward()
    with torch_ocl.strict():
        (torch.topk(xd, 3).values * w.to("ocl")).sum().backward()
    assert_same(xd.grad, x.grad)


@pytest.mark.parametrize("dtype", REAL)
def test_unique(dtype):
    x = make((5, 7), dtype)
    check(lambda a: torch.unique(a), x)
    check(lambda a: torch.unique(a, return_inverse=True, return_counts=True), x)
    check(lambda a: torch.unique(a, return_counts=True), x.t())
    check(lambda a: torch.unique(a, return_inverse=True), torch.zeros(0, dtype=dtype))


def test_unique_and_sort_leave_their_input_alone():
    x = torch.tensor([3, 1, 2, 5, 4, 0, 9, 7, 3, 8])
    for fn in (torch.unique, lambda t: torch.sort(t), lambda t: torch.topk(t, 3),
               lambda t: torch.unique(t.view(2, 5), dim=1)):
        xd = x.to("ocl")
        fn(xd)
        assert torch.equal(xd.cpu(), x)


@pytest.mark.parametrize("dtype", REAL)
def test_unique_dim(dtype):
    # Rows (slices along dim) sorted lexicographically, equal ones merged; inverse and counts.
    g = torch.Generator().manual_seed(2)
    x = torch.randint(0, 2, (9, 3, 2), generator=g).to(dtype)
    for dim in (0, 1, 2, -1):
        check(lambda a: torch.unique(a, dim=dim, return_inverse=True, return_counts=True), x)
        check(lambda a: torch.unique(a, dim=dim), x.transpose(0, 2))
    with pytest.raises(RuntimeError):
        torch.unique(torch.zeros(2, 0, device="ocl", dtype=dtype), dim=0)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32])
def test_pad_forward(mode, dtype):
    x1 = make((2, 3, 6), dtype)
    x2 = make((2, 3, 5, 6), dtype)
    check(lambda a: F.pad(a, (2, 3), mode=mode), x1)
    check(lambda a: F.pad(a, (1, 2, 3, 0), mode=mode), x2)
    check(lambda a: F.pad(a, (2, 1, 1, 2), mode=mode), x2.transpose(2, 3))
    check(lambda a: F.pad(a, (3, 3), mode=mode), make((3, 4), dtype))  # unbatched
    x3 = make((2, 2, 4, 5, 3), dtype)
    check(lambda a: F.pad(a, (1, 2, 0, 3, 2, 1), mode=mode), x3)
    check(lambda a: F.pad(a, (2, 0, 1, 1, 2, 1), mode=mode), x3.transpose(2, 4))
    check(lambda a: F.pad(a, (1, 1, 1, 1, 1, 1), mode=mode), make((2, 3, 4, 5), dtype))  # unbatched


@pytest.mark.parametrize("mode", ["reflect", "replicate", "constant"])
def test_pad_backward(mode):
    for shape, pad in [((2, 3, 6), (2, 3)), ((2, 3, 5, 6), (1, 2, 3, 1)),
                       ((1, 2, 3, 4, 5), (1, 2, 2, 0, 1, 2))]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        xd = x.detach().to("ocl").requires_grad_()
        go = torch.randn(F.pad(x, pad, mode=mode).shape, dtype=torch.float64)
        F.pad(x, pad, mode=mode).backward(go)
        with torch_ocl.strict():
            F.pad(xd, pad, mode=mode).backward(go.to("ocl"))
        assert_same(xd.grad, x.grad)
    xd = torch.randn(1, 2, 4, 4, dtype=torch.float64, device="ocl", requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.pad(t, (1, 2, 2, 1), mode=mode), (xd,))


def test_pad_errors_match_cpu():
    x = torch.randn(2, 3, 4)
    for fn, arg in [(lambda a: F.pad(a, (4, 0), mode="reflect"), x),
                    (lambda a: F.pad(a, (0, 0, 0, 0, 3, 0), mode="reflect"), x.reshape(1, 2, 3, 4)),
                    (lambda a: torch.ops.aten.replication_pad1d(a, [1, 1]), x.reshape(24))]:
        with pytest.raises(Exception) as e:
            fn(arg)
        with pytest.raises(e.type):
            fn(arg.to("ocl"))


def test_composite_shape_ops_native():
    x = make((3, 4), torch.float32)
    check(lambda a: torch.stack([a, a * 2], dim=1), x)
    check(lambda a: a.repeat(2, 3), x)
    check(lambda a: torch.roll(a, 1, 0), x)
    check(lambda a: torch.roll(a, (2, -1), (1, 0)), x)
    check(lambda a: F.pad(a, (1, 2), value=7.0), x)


def test_max_dim_backward_uses_native_scatter():
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    x.max(dim=1).values.sum().backward()
    out = xd.max(dim=1).values.sum()  # max.dim itself belongs to the reduction family
    with torch_ocl.strict():
        out.backward()
    assert_same(xd.grad, x.grad)


def test_one_hot():
    i = torch.tensor([0, 3, 1, 3])
    check(lambda a: F.one_hot(a, 5), i)


@pytest.mark.parametrize("dtype", REAL)
def test_tril_triu(dtype):
    x = make((2, 5, 6), dtype)
    for k in [-2, 0, 1, 7]:
        check(lambda a: torch.tril(a, k), x)
        check(lambda a: torch.triu(a, k), x)
    check(lambda a: torch.triu(a.transpose(1, 2), -1), x)
    check(lambda a: a.clone().tril_(1), x[0])
    check(lambda a: torch.tril(a), make((0, 3), dtype))


def test_tril_grad():
    x = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    xd = x.detach().to("ocl").requires_grad_()
    torch.tril(x, -1).sum().backward()
    with torch_ocl.strict():
        torch.tril(xd, -1).sum().backward()
    assert_same(xd.grad, x.grad)
