"""The fast kernels for CPU drivers (explicit-vector softmax, layer norm, two-pass var/std and
logsumexp, block-table foreach and fused optimizers, vectorisable sigmoid/tanh) against CPU
PyTorch on the same inputs, in strict mode; the GPU shapes of the same ops are checked in a
subprocess with TORCH_OCL_TREE_REDUCTIONS=1 (which gives every device the GPU launch shapes)."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import fp64_supported

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if fp64_supported() else [])
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-10),
       torch.float16: dict(rtol=2e-2, atol=2e-2), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}


def rand(*shape, seed=0, dtype=torch.float32, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def close(got, want, dtype=None, **kw):
    tol = dict(TOL[dtype or want.dtype])
    tol.update(kw)
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, **tol)


# (shape, dim): rows longer and shorter than a vector, odd lengths, inner sizes below, at and
# above a vector of lanes (16 floats / 8 doubles) with a partial last block.
SOFTMAX_CASES = [((7, 1023), -1), ((3, 4097), 1), ((5, 16), -1), ((4, 3), -1), ((2, 33, 5), 1),
                 ((4, 9, 37), 1), ((33, 20), 0), ((6, 2, 16), 0), ((1, 1), 0), ((5,), 0),
                 ((3, 5, 100), 1), ((9, 70), 0), ((2, 3, 64), 1)]


@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_backward_shapes(shape, dim, log):
    fn = F.log_softmax if log else F.softmax
    x = rand(*shape, seed=len(shape), scale=3.0)
    g = rand(*shape, seed=7)
    xc = x.clone().requires_grad_()
    want = fn(xc, dim)
    want.backward(g)
    xd = x.to("ocl").requires_grad_()
    with torch_ocl.strict():
        got = fn(xd, dim)
        got.backward(g.to("ocl"))
    close(got.detach(), want.detach())
    close(xd.grad, xc.grad)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax_dtypes(dtype, dim):
    x = rand(6, 37, 19, dtype=dtype, scale=2.0)
    for log in (False, True):
        fn = torch.log_softmax if log else torch.softmax
        xc = x.clone().requires_grad_()
        want = fn(xc, dim)
        want.backward(torch.ones_like(want))
        xd = x.to("ocl").requires_grad_()
        with torch_ocl.strict():
            got = fn(xd, dim)
            got.backward(torch.ones_like(got))
        close(got.detach(), want.detach())
        close(xd.grad, xc.grad)


def test_softmax_half_to_float_non_contiguous_zero_size_and_extremes():
    x = rand(9, 40, dtype=torch.float16)
    with torch_ocl.strict():
        got = torch.ops.aten._softmax(x.to("ocl"), 1, True)
    close(got, torch.ops.aten._softmax(x.float(), 1, False), dtype=torch.float16)
    v = rand(40, 9).t()  # non-contiguous rows
    with torch_ocl.strict():
        close(torch.softmax(v.to("ocl"), 1), torch.softmax(v, 1))
        close(torch.log_softmax(v.to("ocl"), 0), torch.log_softmax(v, 0))
        assert torch.softmax(torch.empty(0, 5, device="ocl"), 1).shape == (0, 5)
        assert torch.softmax(torch.empty(4, 0, device="ocl"), 1).shape == (4, 0)
    e = torch.tensor([[0.0, -float("inf"), 1.0] * 7, [float("inf")] + [0.0] * 20,
                      [1e4] * 21, [-float("inf")] * 21])
    for fn in (torch.softmax, torch.log_softmax):
        with torch_ocl.strict():
            close(fn(e.to("ocl"), 1), fn(e, 1))


LN_SHAPES = [((3, 1027), (1027,)), ((64, 16), (16,)), ((5, 7), (7,)), ((2, 3, 40), (3, 40)),
             ((0, 8), (8,))]


@pytest.mark.parametrize("shape,norm", LN_SHAPES)
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm_forward_backward(shape, norm, affine):
    x = rand(*shape, seed=1, scale=2.0) + 3.0
    w = rand(*norm, seed=2) if affine != "none" else None
    b = rand(*norm, seed=3) if affine == "both" else None
    g = rand(*shape, seed=4)
    leaves_c = [t.clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    leaves_d = [t.to("ocl").requires_grad_() if t is not None else None for t in (x, w, b)]
    want = F.layer_norm(leaves_c[0], norm, leaves_c[1], leaves_c[2], eps=1e-5)
    want.backward(g)
    with torch_ocl.strict():
        got = F.layer_norm(leaves_d[0], norm, leaves_d[1], leaves_d[2], eps=1e-5)
        got.backward(g.to("ocl"))
    close(got.detach(), want.detach(), rtol=1e-4, atol=1e-4)
    for lc, ld in zip(leaves_c, leaves_d):
        if lc is not None:
            close(ld.grad, lc.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_dtypes_and_stats(dtype):
    x = rand(10, 70, dtype=dtype, seed=5)
    w, b = rand(70, dtype=dtype, seed=6), rand(70, dtype=dtype, seed=7)
    with torch_ocl.strict():
        got = torch.native_layer_norm(x.to("ocl"), (70,), w.to("ocl"), b.to("ocl"), 1e-5)
    want = torch.native_layer_norm(x, (70,), w, b, 1e-5)
    for gt, wt in zip(got, want):
        close(gt, wt, dtype=dtype)


@pytest.mark.parametrize("shape,norm", LN_SHAPES)
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("eps", [1e-5, None])
def test_rms_norm_forward_backward(shape, norm, weighted, eps):
    x = rand(*shape, seed=1, scale=2.0)
    w = rand(*norm, seed=2) if weighted else None
    g = rand(*shape, seed=4)
    xc, xd = x.clone().requires_grad_(), x.to("ocl").requires_grad_()
    wc = w.clone().requires_grad_() if weighted else None
    wd = w.to("ocl").requires_grad_() if weighted else None
    want = F.rms_norm(xc, norm, wc, eps=eps)
    want.backward(g)
    with torch_ocl.strict():
        got = F.rms_norm(xd, norm, wd, eps=eps)
        got.backward(g.to("ocl"))
    close(got.detach(), want.detach(), rtol=1e-4, atol=1e-4)
    close(xd.grad, xc.grad, rtol=1e-4, atol=1e-4)
    if weighted:
        close(wd.grad, wc.grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm_dtypes_and_rstd(dtype):
    x, w = rand(10, 70, dtype=dtype, seed=5), rand(70, dtype=dtype, seed=6)
    with torch_ocl.strict():
        got = torch.ops.aten._fused_rms_norm(x.to("ocl"), [70], w.to("ocl"), None)
    want = torch.ops.aten._fused_rms_norm(x, [70], w, None)
    for gt, wt in zip(got, want):
        assert gt.dtype == wt.dtype and gt.shape == wt.shape
        close(gt, wt, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rms_norm_half_input_float_weight(dtype):
    x = rand(6, 3, 20, dtype=dtype, seed=12)
    w = rand(3, 20, seed=13)
    g = rand(6, 3, 20, seed=14)
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    xd, wd = x.to("ocl").requires_grad_(), w.to("ocl").requires_grad_()
    want = F.rms_norm(xc, (3, 20), wc)
    want.backward(g.to(want.dtype))
    with torch_ocl.strict():
        got = F.rms_norm(xd, (3, 20), wd)
        got.backward(g.to(got.dtype).to("ocl"))
    assert got.dtype == want.dtype
    close(got.detach(), want.detach(), dtype=dtype)
    close(xd.grad, xc.grad, dtype=dtype)
    close(wd.grad, wc.grad, dtype=dtype)


@pytest.mark.parametrize("dims", [-1, 0, 1, (0, 2), None])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std_two_pass(dims, correction):
    # A large common offset: a one-pass sum of squares would lose every digit in float.
    x = rand(6, 37, 1029, seed=8) + 1e4
    for fn in (torch.var, torch.std, torch.var_mean, torch.std_mean):
        with torch_ocl.strict():
            got = fn(x.to("ocl"), dims, correction=correction)
        want = fn(x.double(), dims, correction=correction)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for gt, wt in zip(got, want):
            close(gt, wt.float(), rtol=2e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_var_std_dtypes_non_contiguous_and_empty(dtype):
    x = rand(33, 65, dtype=dtype, seed=9)
    with torch_ocl.strict():
        close(torch.var(x.to("ocl"), 1), torch.var(x, 1), dtype=dtype)
        close(torch.std(x.to("ocl").t(), 0), torch.std(x.t(), 0), dtype=dtype)
        close(torch.var(x.to("ocl")[:, ::3], 1), torch.var(x[:, ::3], 1), dtype=dtype)
    with torch_ocl.strict():
        got = torch.var(torch.empty(3, 0, device="ocl", dtype=dtype), 1).cpu()
        one = torch.var(torch.ones(4, 1, device="ocl", dtype=dtype), 1).cpu()
    assert got.shape == (3,) and torch.isnan(got).all()
    assert torch.isnan(one).all()  # n - correction == 0
    inf = torch.tensor([[1.0, float("inf"), 2.0] * 9, [float("nan")] + [1.0] * 26])
    with torch_ocl.strict():
        close(torch.var(inf.to("ocl"), 1), torch.var(inf, 1))


@pytest.mark.parametrize("dims", [-1, 0, (0, 1)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp_two_pass(dims, dtype):
    x = rand(40, 1031, seed=10, dtype=dtype, scale=30.0)
    with torch_ocl.strict():
        got = torch.logsumexp(x.to("ocl"), dims)
    close(got, torch.logsumexp(x, dims), dtype=dtype)
    e = torch.tensor([[-float("inf")] * 20, [float("inf")] + [0.0] * 19,
                      [float("nan")] + [0.0] * 19, [0.0] * 19 + [1e30], [-1e30] * 20])
    with torch_ocl.strict():
        close(torch.logsumexp(e.to("ocl"), 1), torch.logsumexp(e, 1))
        close(torch.logsumexp(torch.empty(3, 0, device="ocl"), 1), torch.logsumexp(
            torch.empty(3, 0), 1))


def special_floats():
    x = torch.cat([torch.linspace(-30, 30, 100001, dtype=torch.float64),
                   torch.logspace(-40, 1.6, 2001, dtype=torch.float64),
                   -torch.logspace(-40, 1.6, 2001, dtype=torch.float64),
                   torch.tensor([0.0, -0.0, 0.29999, 0.3, 0.30001, 88.0, -88.0, 100.0, -100.0,
                                 1e30, -1e30, float("inf"), -float("inf"), float("nan")],
                                dtype=torch.float64)])
    return x.float()


@pytest.mark.parametrize("op", ["sigmoid", "tanh"])
def test_sigmoid_tanh_accuracy_against_double(op):
    x = special_floats()
    fn = getattr(torch, op)
    with torch_ocl.strict():
        got = fn(x.to("ocl")).cpu().double()
    want = fn(x.double())
    eps = torch.finfo(torch.float32).eps
    err = (got - want).abs() / want.abs().clamp_min(torch.finfo(torch.float32).tiny)
    finite = torch.isfinite(want) & (want.abs() > 1e-37)
    assert err[finite].max().item() <= 4 * eps, (x[finite][err[finite].argmax()].item(),)
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    # backward (sigmoid_backward / tanh_backward use the forward's output)
    xd = x[:2000].to("ocl").requires_grad_()
    xc = x[:2000].clone().requires_grad_()
    with torch_ocl.strict():
        fn(xd).sum().backward()
    fn(xc).sum().backward()
    close(xd.grad, xc.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_sigmoid_tanh_dtypes(dtype, approximate):
    x = rand(1001, dtype=dtype, seed=11, scale=4.0)
    with torch_ocl.strict():
        got = [F.gelu(x.to("ocl"), approximate=approximate), torch.sigmoid(x.to("ocl")),
               torch.tanh(x.to("ocl")[::2])]
    want = [F.gelu(x, approximate=approximate), torch.sigmoid(x), torch.tanh(x[::2])]
    for gt, wt in zip(got, want):
        close(gt, wt, dtype=dtype)
    xd = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    with torch_ocl.strict():
        F.gelu(xd, approximate=approximate).sum().backward()
    F.gelu(xc, approximate=approximate).sum().backward()
    close(xd.grad, xc.grad, dtype=dtype)


# Sizes around the block sizes (2048 on CPU drivers, 8192 on GPUs) and empty tensors.
BLOCK_SIZES = [(2047,), (2048,), (2049,), (0,), (8193,), (3, 7), (20001,), (1,)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_foreach_block_table(dtype):
    xs = [rand(*s, seed=i, dtype=dtype) for i, s in enumerate(BLOCK_SIZES)]
    ys = [rand(*s, seed=10 + i, dtype=dtype) for i, s in enumerate(BLOCK_SIZES)]
    zs = [rand(*s, seed=20 + i, dtype=dtype).abs() + 1 for i, s in enumerate(BLOCK_SIZES)]
    xd, yd, zd = ([t.to("ocl") for t in ts] for ts in (xs, ys, zs))
    with torch_ocl.strict():
        outs = [torch._foreach_add(xd, yd, alpha=0.5), torch._foreach_mul(xd, 3.0),
                torch._foreach_addcdiv(xd, yd, zd, value=0.25),
                torch._foreach_lerp(xd, yd, 0.3),
                torch._foreach_sqrt(zd), torch._foreach_add(xd, list(range(len(xd))))]
        torch._foreach_mul_(xd, yd)
    wants = [torch._foreach_add(xs, ys, alpha=0.5), torch._foreach_mul(xs, 3.0),
             torch._foreach_addcdiv(xs, ys, zs, value=0.25), torch._foreach_lerp(xs, ys, 0.3),
             torch._foreach_sqrt(zs), torch._foreach_add(xs, list(range(len(xs))))]
    torch._foreach_mul_(xs, ys)
    for got, want in zip(outs + [xd], wants + [xs]):
        for g, w in zip(got, want):
            close(g, w, dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_foreach_ops_across_blocks(dtype):
    # Every op that walks its blocks in float16 vectors on CPU drivers (float32), and the scalar
    # form of the rest: whole vectors, each block's last elements, a view at an odd storage
    # offset, a scalar tensor and a lerp weight each side of 0.5 and as a list.
    base = rand(30000, seed=40, dtype=dtype)
    xs = [rand(*s, seed=i, dtype=dtype) for i, s in enumerate(BLOCK_SIZES)] + [base[3:4124]]
    ys = [rand(*x.shape, seed=10 + i, dtype=dtype) for i, x in enumerate(xs)]
    zs = [rand(*x.shape, seed=20 + i, dtype=dtype).abs() + 1 for i, x in enumerate(xs)]
    ws = [rand(*x.shape, seed=30 + i, dtype=dtype).abs() for i, x in enumerate(xs)]
    s = torch.tensor(1.5, dtype=dtype)

    def ops(x, y, z, w, s):
        return [torch._foreach_sub(x, y, alpha=2.0), torch._foreach_div(x, z),
                torch._foreach_addcmul(x, y, z, value=-0.5), torch._foreach_rsqrt(z),
                torch._foreach_exp(x), torch._foreach_log(z), torch._foreach_neg(x),
                torch._foreach_reciprocal(z), torch._foreach_abs(x), torch._foreach_sigmoid(x),
                torch._foreach_lerp(x, y, 0.7), torch._foreach_lerp(x, y, w),
                torch._foreach_mul(x, s), torch._foreach_add(x, 2.5), torch._foreach_div(x, 3.0)]

    want = ops(xs, ys, zs, ws, s)
    dev = [[t.to("ocl") for t in ts] for ts in (xs, ys, zs, ws)]
    dev[0][-1] = base.to("ocl")[3:4124]  # the view, at the same storage offset
    with torch_ocl.strict():
        got = ops(*dev, s.to("ocl"))
        copies = [torch.empty_like(t) for t in dev[1]]
        torch._foreach_copy_(copies, dev[1])
        zeroed = [t.clone() for t in dev[1]]
        torch._foreach_zero_(zeroed)
        torch._foreach_addcdiv_(dev[0], dev[1], dev[2], value=0.25)
    torch._foreach_addcdiv_(xs, ys, zs, value=0.25)
    for g_list, w_list in zip(got + [copies, zeroed, dev[0]],
                              want + [ys, [torch.zeros_like(y) for y in ys], xs]):
        for g, w in zip(g_list, w_list):
            close(g, w, dtype=dtype)
    # maximum/minimum/clamp propagate NaN from either side, in vectors and in the tails
    xn = [t.clone() for t in xs]
    yn = [t.clone() for t in ys]
    for t, at in ((xn[6], (100, 20000)), (yn[6], (101, 19999)), (xn[2], (2048,)), (yn[4], (0,))):
        for i in at:
            t.view(-1)[i] = float("nan")

    def minmax(x, y):
        return [torch._foreach_maximum(x, y), torch._foreach_minimum(x, 0.3),
                torch._foreach_clamp_min(x, -0.5), torch._foreach_clamp_max(x, y)]

    with torch_ocl.strict():
        got = minmax([t.to("ocl") for t in xn], [t.to("ocl") for t in yn])
    for g_list, w_list in zip(got, minmax(xn, yn)):
        for g, w in zip(g_list, w_list):
            torch.testing.assert_close(g.cpu(), w, equal_nan=True)


@pytest.mark.parametrize("kind", ["fused", "foreach"])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adamw_across_blocks(kind, amsgrad):
    shapes = [(20001,), (2049,), (3, 5), (8193,)]
    params_c = [rand(*s, seed=i).requires_grad_() for i, s in enumerate(shapes)]
    params_d = [p.detach().to("ocl").requires_grad_() for p in params_c]
    kw = {"fused": True} if kind == "fused" else {"foreach": True}
    oc = torch.optim.AdamW(params_c, lr=1e-2, weight_decay=0.1, amsgrad=amsgrad, foreach=False)
    od = torch.optim.AdamW(params_d, lr=1e-2, weight_decay=0.1, amsgrad=amsgrad, **kw)
    for step in range(3):
        for i, (pc, pd) in enumerate(zip(params_c, params_d)):
            g = rand(*pc.shape, seed=100 * step + i)
            pc.grad, pd.grad = g, g.to("ocl")
        oc.step()
        with torch_ocl.strict():
            od.step()
    for pc, pd in zip(params_c, params_d):
        close(pd.detach(), pc.detach(), rtol=1e-5, atol=1e-6)


def test_fused_sgd_and_amp_unscale_across_blocks():
    shapes = [(20001,), (5,), (4097,)]
    params_c = [rand(*s, seed=i).requires_grad_() for i, s in enumerate(shapes)]
    params_d = [p.detach().to("ocl").requires_grad_() for p in params_c]
    oc = torch.optim.SGD(params_c, lr=0.1, momentum=0.9, nesterov=True, foreach=False)
    od = torch.optim.SGD(params_d, lr=0.1, momentum=0.9, nesterov=True, fused=True)
    for step in range(2):
        for i, (pc, pd) in enumerate(zip(params_c, params_d)):
            g = rand(*pc.shape, seed=50 + 10 * step + i)
            pc.grad, pd.grad = g, g.to("ocl")
        oc.step()
        with torch_ocl.strict():
            od.step()
    for pc, pd in zip(params_c, params_d):
        close(pd.detach(), pc.detach())
    grads = [rand(*s, seed=70 + i) for i, s in enumerate(shapes)]
    grads[2][4096] = float("inf")
    gd = [g.to("ocl") for g in grads]
    found = torch.zeros(1, device="ocl")
    with torch_ocl.strict():
        torch._amp_foreach_non_finite_check_and_unscale_(gd, found, torch.full((1,), 0.5,
                                                                            device="ocl"))
    assert found.item() == 1.0
    close(gd[0], grads[0] * 0.5)
    # A non-finite value in a block's whole vectors, then none at all.
    for where, expect in ((100, 1.0), (None, 0.0)):
        grads = [rand(*s, seed=80 + i) for i, s in enumerate(shapes)]
        if where is not None:
            grads[0][where] = float("nan")
        gd = [g.to("ocl") for g in grads]
        found = torch.zeros(1, device="ocl")
        with torch_ocl.strict():
            torch._amp_foreach_non_finite_check_and_unscale_(gd, found, torch.full((1,), 0.25,
                                                                                device="ocl"))
        assert found.item() == expect
        close(gd[2], grads[2] * 0.25)




def rerun_with_gpu_shapes(path, select="not gpu_launch_shapes"):
    """Runs the tests of the file at path that match select (pytest -k) again in a fresh process
    with TORCH_OCL_TREE_REDUCTIONS=1 (the GPU shapes); skips when this process already has it
    (test_reduce_indices.py uses it too)."""
    if os.environ.get("TORCH_OCL_TREE_REDUCTIONS") == "1":
        pytest.skip("already running with the GPU shapes")
    env = dict(os.environ, TORCH_OCL_TREE_REDUCTIONS="1")
    here = os.path.abspath(path)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        here, "-k", select], env=env, capture_output=True, text=True,
                       timeout=900, cwd=os.path.dirname(here))
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])


def test_gpu_launch_shapes_forced_on_this_device():
    """The same tests with the GPU shapes (work-group trees, 256-item foreach blocks)."""
    rerun_with_gpu_shapes(__file__, "not gpu_launch_shapes and not accuracy_against_double")
