"""Reductions, scans and softmax on ocl against CPU PyTorch, in strict mode (no CPU fallback).

Covers the reduction generator's three launch shapes (item per output, work-group per output,
chunked two-pass), dims/keepdim/dtype/out=, non-contiguous and zero-size inputs, odd sizes,
NaN and tie rules, errors, and gradients.
"""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-9, atol=1e-9),
       torch.float16: dict(rtol=2e-2, atol=2e-2), torch.bfloat16: dict(rtol=6e-2, atol=6e-2)}


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def on_ocl(fn, *xs):
    with torch_ocl.strict():
        return fn(*[x.to("ocl") for x in xs])


def same(got, want, tol=None):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, tol)
        return
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape,
                                                                 want.shape)
    if want.dtype.is_floating_point:
        torch.testing.assert_close(got, want, equal_nan=True, **(tol or TOL[want.dtype]))
    else:
        assert torch.equal(got, want), (got, want)


def check(fn, *xs, tol=None):
    same(on_ocl(fn, *xs), fn(*xs), tol)


def with_dims(name):
    """fn(x, dim, keepdim) for op `name`; dim None means the op's all-dims form."""
    def fn(x, dim, keepdim):
        op = getattr(torch, name)
        if dim is None:
            return op(x)
        return op(x, dim, keepdim=keepdim)
    return fn


MULTI_DIM_OPS = {
    "sum": with_dims("sum"),
    "mean": with_dims("mean"),
    "amax": lambda x, d, k: torch.amax(x, () if d is None else d, keepdim=k),
    "amin": lambda x, d, k: torch.amin(x, () if d is None else d, keepdim=k),
    "var": lambda x, d, k: torch.var(x, d, keepdim=k),
    "std": lambda x, d, k: torch.std(x, d, correction=0, keepdim=k),
    "var_mean": lambda x, d, k: torch.var_mean(x, d, correction=2, keepdim=k),
    "std_mean": lambda x, d, k: torch.std_mean(x, d, keepdim=k),
    "norm": lambda x, d, k: torch.linalg.vector_norm(x, 2, d, keepdim=k),
    "norm1": lambda x, d, k: torch.linalg.vector_norm(x, 1, d, keepdim=k),
    "norm0": lambda x, d, k: torch.linalg.vector_norm(x, 0, d, keepdim=k),
    "norm_inf": lambda x, d, k: torch.linalg.vector_norm(x, math.inf, d, keepdim=k),
    "norm_neginf": lambda x, d, k: torch.linalg.vector_norm(x, -math.inf, d, keepdim=k),
    "norm3.5": lambda x, d, k: torch.linalg.vector_norm(x, 3.5, d, keepdim=k),
    "logsumexp": lambda x, d, k: torch.logsumexp(x, tuple(range(x.dim())) if d is None else d, keepdim=k),
    "any": lambda x, d, k: (x > 1).any() if d is None else torch.any(x > 1, d, keepdim=k),
    "all": lambda x, d, k: (x > -2).all() if d is None else torch.all(x > -2, d, keepdim=k),
}

ONE_DIM_OPS = {
    "prod": lambda x, d, k: torch.prod(x) if d is None else torch.prod(x, d, keepdim=k),
    "max": lambda x, d, k: torch.max(x) if d is None else torch.max(x, d, keepdim=k),
    "min": lambda x, d, k: torch.min(x) if d is None else torch.min(x, d, keepdim=k),
    "argmax": lambda x, d, k: torch.argmax(x, d, keepdim=k),
    "argmin": lambda x, d, k: torch.argmin(x, d, keepdim=k),
}


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", list(MULTI_DIM_OPS))
def test_multi_dim_ops(name, dim, keepdim):
    fn = MULTI_DIM_OPS[name]
    x = rand(4, 5, 7)
    check(lambda a: fn(a, dim, keepdim), x)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", list(ONE_DIM_OPS))
def test_one_dim_ops(name, dim, keepdim):
    fn = ONE_DIM_OPS[name]
    x = rand(4, 5, 7)
    check(lambda a: fn(a, dim, keepdim), x)


SIZED_OPS = {
    "sum": lambda x, d: x.sum(d),
    "mean": lambda x, d: x.mean(d),
    "prod": lambda x, d: (1 + 1e-3 * x).prod(d),
    "amax": lambda x, d: x.amax(d),
    "max": lambda x, d: x.max(d),
    "argmin": lambda x, d: x.argmin(d),
    "var": lambda x, d: x.var(d),
    "norm": lambda x, d: torch.linalg.vector_norm(x, dim=d),
    "logsumexp": lambda x, d: torch.logsumexp(x, d),
    "any": lambda x, d: (x > 3).any(d),
}


@pytest.mark.parametrize("n", [1, 7, 257, 4099, 100003])
@pytest.mark.parametrize("name", list(SIZED_OPS))
def test_odd_sizes_inner_outer_full(name, n):
    fn = SIZED_OPS[name]
    tol = dict(rtol=1e-3, atol=1e-3)
    x = rand(n, seed=n)
    check(lambda a: fn(a, 0), x, tol=tol)                       # full: chunked two-pass
    check(lambda a: fn(a, -1), x.reshape(1, n).expand(3, n).contiguous(), tol=tol)  # inner rows
    if n <= 4099:
        check(lambda a: fn(a, 0), x.reshape(n, 1).expand(n, 5).contiguous(), tol=tol)  # outer


def test_large_sum_two_pass_and_wide_matrix():
    x = rand(1 << 21, seed=3)
    check(lambda a: a.sum(), x, tol=dict(rtol=1e-4, atol=1e-2))
    m = rand(64, 3000, seed=4)
    check(lambda a: (a.sum(0), a.sum(1), a.amax(0), a.argmax(1), a.mean()), m)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_dtypes(dtype):
    # Few programs per dtype (each is a compile): sums, indexed max/min, amax/any, a scan.
    x = rand(6, 300, seed=1) * 5
    x = x.to(dtype) if dtype != torch.bool else x > 0
    small = x[:, :9]
    low = dtype in (torch.float16, torch.bfloat16)
    check(lambda a: (a.sum(), a.sum(1)), x, tol=dict(rtol=2e-2, atol=2.0) if low else None)
    check(lambda a: (a.amax(1), a.max(), a.any(1), a.all()), x)
    if dtype != torch.bool:  # CPU has no bool argmax / max.dim either
        check(lambda a: (a.max(1), a.argmin(1), a.argmax()), x)
    check(lambda a: a.cumsum(1), small, tol=dict(rtol=3e-2, atol=2e-1) if low else None)
    if dtype in (torch.float16, torch.int32, torch.uint8):
        check(lambda a: (a.prod(1), a.cumprod(1), a.amin(0), a.min(0)),
              small if dtype.is_floating_point else small % 3,
              tol=dict(rtol=3e-2, atol=1e-1) if low else None)
    if dtype.is_floating_point:
        tol = dict(rtol=3e-2, atol=3e-2) if low else None
        check(lambda a: (a.mean(1), a.var(1), torch.linalg.vector_norm(a, dim=1),
                         torch.logsumexp(a, 1)), x, tol=tol)


def test_dtype_argument_promotion_and_out():
    x = rand(5, 33)
    check(lambda a: (a.sum(1, dtype=torch.float64), a.mean(0, dtype=torch.float64),
                     a.cumsum(1, dtype=torch.float64), a.prod(1, dtype=torch.float64),
                     torch.linalg.vector_norm(a, dim=1, dtype=torch.float64)), x)
    i = (x * 10).int()
    check(lambda a: (a.sum(1), a.prod(0), a.cumsum(1), a.cumprod(0), a.sum(1, dtype=torch.int32)),
          i[:, :5])
    check(lambda a: torch.logsumexp(a, 1), i[:, :5])

    def outs(a):
        o1 = torch.empty(0, device=a.device)
        torch.sum(a, 1, out=o1)
        o2 = torch.empty(3, 3, device=a.device)  # resized
        torch.amax(a, 0, out=o2)
        v, ix = torch.empty(0, device=a.device), torch.empty(0, dtype=torch.long, device=a.device)
        torch.max(a, 1, out=(v, ix))
        o3 = torch.empty(0, dtype=torch.long, device=a.device)
        torch.argmin(a, 0, out=o3)
        o4 = torch.empty(0, device=a.device)
        torch.var(a, 1, out=o4)
        o5 = torch.empty(0, device=a.device)
        torch.linalg.vector_norm(a, 3, 1, out=o5)
        o6 = torch.empty(0, device=a.device)
        torch.cumsum(a, 0, out=o6)
        o7 = torch.empty(0, device=a.device)
        torch.logsumexp(a, 1, out=o7)
        o8 = torch.empty(0, dtype=torch.bool, device=a.device)
        torch.any(a > 0, 1, out=o8)
        o9 = torch.empty(0, device=a.device)
        torch.max(a, out=o9)
        o10 = torch.empty(0, device=a.device)
        torch.prod(a, 1, out=o10)
        # A non-contiguous out: every other column of a wider buffer.
        o11 = torch.zeros(5, 4, device=a.device)[:, ::2]
        torch.mean(a, 1, keepdim=True, out=o11[:, :1])
        return o1, o2, v, ix, o3, o4, o5, o6, o7, o8, o9, o10, o11
    check(outs, x)


def test_non_contiguous_inputs():
    x = rand(8, 6, 10)
    for f in (lambda a: a.transpose(0, 2), lambda a: a[:, ::2, 1::3], lambda a: a.permute(1, 2, 0)[2:]):
        check(lambda a: (f(a).sum((0, 1)), f(a).sum(1), f(a).amax(0), f(a).max(1), f(a).argmax(),
                         f(a).var(-1), torch.linalg.vector_norm(f(a), 3, (0, 2)),
                         torch.logsumexp(f(a), 0), f(a).cumsum(1), f(a).softmax(0),
                         f(a).log_softmax(-1), f(a).prod(2)), x)
    big = rand(300, 500, seed=2)
    check(lambda a: (a.t().sum(1), a.t().sum(0), a[:, ::3].amax(1), a.t().argmax(1)), big)


def test_zero_size():
    e = torch.empty(0, 4)
    check(lambda a: (a.sum(), a.sum(0), a.sum(1), a.prod(0), a.mean(0), a.any(0), a.all(0),
                     a.var(0), torch.logsumexp(a, 0), torch.linalg.vector_norm(a, dim=0),
                     a.cumsum(0), a.softmax(0), a.amax(1), a.max(1), a.argmax(1)), e)
    with torch_ocl.strict():
        z = torch.empty(0, 4, device="ocl")
        for bad in (lambda: z.max(), lambda: z.amax(0), lambda: z.argmax(), lambda: z.max(0),
                    lambda: z.min(), lambda: torch.linalg.vector_norm(z, math.inf, 0)):
            with pytest.raises((RuntimeError, IndexError)):
                bad()
        assert z.sum().item() == 0 and z.prod().item() == 1  # the process stays usable


def test_nan_and_ties():
    nan = float("nan")
    x = torch.tensor([[1.0, nan, 3.0, nan], [2.0, 5.0, 5.0, -1.0], [7.0, 7.0, 0.0, 7.0]])
    check(lambda a: (a.max(1), a.min(1), a.amax(1), a.amin(0), a.argmax(1), a.argmin(1), a.max(),
                     a.argmax(), a.sum(1), torch.logsumexp(a, 1)), x)
    inf = float("inf")
    y = torch.tensor([[inf, 1.0], [-inf, -inf], [-inf, 2.0]])
    check(lambda a: (torch.logsumexp(a, 1), a.softmax(1), a.amax(1), a.argmin(1)), y)
    t = torch.tensor([3, 1, 3, 1, 3], dtype=torch.int32)
    check(lambda a: (a.argmax(), a.argmin(), a.max(0), a.min(0)), t)


def test_errors():
    i = torch.arange(6).to("ocl")
    with pytest.raises(RuntimeError):
        i.mean()
    with pytest.raises(RuntimeError):
        i.var()
    with pytest.raises((RuntimeError, IndexError)):
        torch.ones(3, device="ocl").sum(5)
    with pytest.raises(RuntimeError):
        torch.max(torch.ones(3, device="ocl"), 0, out=(torch.empty(0, device="ocl"),
                                                       torch.empty(0, device="ocl")))
    assert i.sum().item() == 15


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("size", [7, 1000])
def test_softmax_forward_backward(dtype, dim, size):
    x = (rand(3, size, 5, seed=size) * 3).to(dtype)
    if dim == -1:
        x = (rand(4, size, seed=size) * 3).to(dtype)  # last dim: long rows take the group kernel
    w = rand(*x.shape, seed=9).to(dtype)
    tol = TOL[dtype] if dtype in (torch.float32, torch.float64) else dict(rtol=5e-2, atol=2e-2)
    for f in (F.softmax, F.log_softmax):
        xd = x.to("ocl").requires_grad_()
        xc = x.clone().requires_grad_()
        with torch_ocl.strict():
            yd = f(xd, dim)
            (yd * w.to("ocl")).sum().backward()
        yc = f(xc.float() if dtype in (torch.float16, torch.bfloat16) else xc, dim).to(dtype)
        (yc * w).sum().backward()
        same(yd.detach(), yc.detach(), tol)
        same(xd.grad, xc.grad, tol)


def test_softmax_half_to_float():
    x = rand(4, 300, seed=5).half()
    with torch_ocl.strict():
        y = torch._softmax(x.to("ocl"), 1, True)
        ly = torch._log_softmax(x.to("ocl"), 1, True)
    assert y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), torch.softmax(x.float(), 1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ly.cpu(), torch.log_softmax(x.float(), 1), rtol=1e-5, atol=1e-5)
    go = rand(4, 300, seed=6)
    with torch_ocl.strict():
        gi = torch._softmax_backward_data(go.to("ocl"), y, 1, torch.float16)
    assert gi.dtype == torch.float16
    want = torch._softmax_backward_data(go, torch.softmax(x.float(), 1), 1, torch.float32).half()
    torch.testing.assert_close(gi.cpu(), want, rtol=1e-2, atol=1e-3)


GRAD_OPS = {
    "sum": lambda a: a.sum(1),
    "mean": lambda a: a.mean((0, 2)),
    "amax": lambda a: a.amax(1),
    "max": lambda a: a.max(),
    "var": lambda a: a.var(1),
    "std": lambda a: a.std(0),
    "var_mean": lambda a: torch.var_mean(a, 2)[0] + torch.var_mean(a, 2)[1],
    "norm": lambda a: torch.linalg.vector_norm(a, dim=1),
    "norm3": lambda a: a.norm(3, dim=2),
    "logsumexp": lambda a: torch.logsumexp(a, 1),
    "softmax": lambda a: a.softmax(1),
    "log_softmax": lambda a: a.log_softmax(0),
}


# Their backward needs masked_fill_ (std, norms) or isnan (max: evenly_distribute_backward), which
# are not native yet (other op families').
BACKWARD_NEEDS_FALLBACK = {"std", "norm", "norm3", "max"}


@pytest.mark.parametrize("name", list(GRAD_OPS))
def test_grads(name):
    fn = GRAD_OPS[name]
    x = rand(3, 6, 4, seed=11)
    xd = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    with torch_ocl.strict():
        yd = fn(xd)
    w = torch.randn(tuple(yd.shape), generator=torch.Generator().manual_seed(12))
    with torch_ocl.strict(name not in BACKWARD_NEEDS_FALLBACK):
        (yd * w.to("ocl")).sum().backward()
    (fn(xc) * w).sum().backward()
    same(xd.grad, xc.grad)


@pytest.mark.parametrize("name", ["var", "norm3", "logsumexp", "softmax", "sum"])
def test_gradcheck_float64(name):
    # Not strict: gradcheck's own comparisons use ops of other families.
    x = rand(2, 3, 3, seed=13, dtype=torch.float64).to("ocl").requires_grad_()
    assert torch.autograd.gradcheck(GRAD_OPS[name], (x,), eps=1e-6, atol=1e-5)


TREE_SCRIPT = r"""
import torch, torch_ocl
g = torch.Generator().manual_seed(0)
x = torch.randn(3, 5000, generator=g)
x[1, 17] = float("nan")
cases = {
    "sum_all": lambda a: a.sum(), "sum_rows": lambda a: a.sum(1), "mean": lambda a: a.mean(),
    "amax": lambda a: a.amax(1), "max_dim": lambda a: a.max(1), "argmin": lambda a: a.argmin(1),
    "argmax_all": lambda a: a.argmax(), "var": lambda a: a[::2].var(1),
    "logsumexp": lambda a: torch.logsumexp(a[::2], 1), "any": lambda a: (a > 3).any(1),
}
with torch_ocl.strict():
    for name, f in cases.items():
        got, want = f(x.to("ocl")), f(x)
        for gg, ww in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            torch.testing.assert_close(gg.cpu(), ww, rtol=1e-4, atol=1e-3, equal_nan=True, msg=name)
y = torch.randn(4, 3000, generator=g)
w = torch.randn(4, 3000, generator=g)
for dt in (torch.float32, torch.float16):
    for f in (torch.softmax, torch.log_softmax):
        yd = y.to(dt).to("ocl").detach().requires_grad_()
        yc = y.to(dt).detach().clone().requires_grad_()
        with torch_ocl.strict():
            out = f(yd, 1)
            (out * w.to(dt).to("ocl")).sum().backward()
        ref = f(yc, 1)
        (ref * w.to(dt)).sum().backward()
        tol = dict(rtol=1e-4, atol=1e-5) if dt == torch.float32 else dict(rtol=2e-2, atol=1e-2)
        torch.testing.assert_close(out.detach().cpu(), ref.detach(), **tol)
        torch.testing.assert_close(yd.grad.cpu(), yc.grad, **tol)
print("TREE-OK")
"""


def test_gpu_launch_shapes_forced_on_this_device():
    """The work-group tree kernels (the GPU shapes) checked on any device, in a subprocess."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCH_OCL_TREE_REDUCTIONS="1")
    r = subprocess.run([sys.executable, "-c", TREE_SCRIPT], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "TREE-OK" in r.stdout, r.stderr[-3000:]


# The CPU drivers' column kernel (red_cols): one strided reduced dim whose innermost kept dim is
# contiguous and >= 64 wide, read in blocks of rows by work-groups of up to 1024 columns; two-pass
# ops (var/std) and index outputs (argmax) through it too, a last partial group of columns,
# several chunks of rows, NaN, and reduced dtypes.
@pytest.mark.parametrize("shape,dim", [((300, 1000), 0), ((37, 130), 0), ((5, 200, 70), 1),
                                       ((17, 64), 0), ((2, 1100, 3, 96), 1)])
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "argmax", "var", "std",
                                  "var_mean", "prod"])
def test_column_reductions(shape, dim, name):
    x = rand(*shape, seed=len(shape) + shape[0])
    if name == "prod":
        x = 1 + 0.01 * x
    fns = {"sum": lambda t: t.sum(dim), "mean": lambda t: t.mean(dim),
           "amax": lambda t: t.amax(dim), "amin": lambda t: t.amin(dim),
           "argmax": lambda t: t.argmax(dim), "var": lambda t: t.var(dim),
           "std": lambda t: t.std(dim, correction=0), "var_mean": lambda t: torch.var_mean(t, dim),
           "prod": lambda t: t.prod(dim)}
    same(on_ocl(fns[name], x), fns[name](x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_column_reductions_dtypes_and_nan(dtype):
    x = rand(129, 200, seed=3, dtype=dtype)
    same(on_ocl(lambda t: t.sum(0), x), x.sum(0), TOL[dtype])
    same(on_ocl(lambda t: t.var(0), x), x.var(0), TOL[dtype])
    x[5, 7] = float("nan")
    x[100, 150] = float("nan")
    same(on_ocl(lambda t: t.amax(0), x), x.amax(0), TOL[dtype])
    same(on_ocl(lambda t: t.sum(0, keepdim=True), x), x.sum(0, keepdim=True), TOL[dtype])
    same(on_ocl(lambda t: t.var(0), x), x.var(0), TOL[dtype])


# The row-blocked column kernels of CPU drivers (softmax_fwd_vcols_blk, lse_vcols_blk): a
# non-last dim over whole column stretches (inner a multiple of 64 floats for softmax, of the
# vector width for logsumexp), several work-groups, infinities and NaN in some columns.
@pytest.mark.parametrize("shape,dim", [((100, 1024), 0), ((3, 50, 128), 1), ((2, 19, 4, 64), 1),
                                       ((300, 160), 0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_column_softmax_and_logsumexp(shape, dim, dtype):
    x = rand(*shape, seed=shape[0], dtype=dtype) * 3
    flat = x.view(-1)
    flat[7] = float("inf")
    flat[shape[-1] * 2 + 9] = float("-inf")
    flat[shape[-1] + 20] = float("nan")
    for fn in (lambda t: t.softmax(dim), lambda t: t.log_softmax(dim),
               lambda t: t.logsumexp(dim), lambda t: t.logsumexp(dim, keepdim=True)):
        same(on_ocl(fn, x), fn(x), TOL[dtype])
    # A column of all -inf: logsumexp -inf, softmax NaN, as on CPU.
    y = x.clone()
    y.select(dim, 0).fill_(0)
    idx = [slice(None)] * len(shape)
    idx[-1] = 3
    y[tuple(idx)] = float("-inf")
    for fn in (lambda t: t.softmax(dim), lambda t: t.logsumexp(dim)):
        same(on_ocl(fn, y), fn(y), TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_contiguous_rows_in_lanes(dtype):
    """Reductions over a contiguous range with a scalar accumulator (sum, prod, norms, any/all)
    keep eight lanes (element r in lane r % 8), merged pairwise: rows shorter than a lane block,
    with tails, and long ones (an LM head's 32000 logits), NaN and +-inf in a lane and in the
    tail, against CPU."""
    g = torch.Generator().manual_seed(5)
    for n in (1, 3, 8, 9, 15, 17, 1031, 32000):
        if dtype.is_floating_point:
            x = torch.randn(6, n, generator=g, dtype=dtype)
            if n >= 9:
                x[1, 2] = float("nan")
                x[2, n - 1] = float("nan")
                x[3, 4] = float("inf")
                x[4, n - 1] = -float("inf")
        else:
            x = torch.randint(-50, 50, (6, n), generator=g, dtype=dtype)
        fns = [lambda t: t.sum(-1), lambda t: (t != 0).any(-1), lambda t: (t > -40).all(-1)]
        if dtype.is_floating_point:
            fns += [lambda t: t.nansum(-1), lambda t: t.norm(dim=-1),
                    lambda t: t.abs().sum(-1), lambda t: (t * 0.01 + 1).prod(-1),
                    lambda t: t.mean(-1)]
        for fn in fns:
            got, exp = on_ocl(fn, x), fn(x)
            if exp.dtype.is_floating_point:
                torch.testing.assert_close(got.cpu(), exp, equal_nan=True, **TOL[dtype])
            else:
                assert torch.equal(got.cpu(), exp), (n, fn)
