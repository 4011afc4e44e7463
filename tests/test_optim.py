"""Native multi-tensor (_foreach_*) ops and fused optimizers (_fused_adam_/_fused_adamw_/
_fused_sgd_) against CPU PyTorch on the same inputs, in strict mode (any CPU fallback fails), plus
launch counts from torch_ocl._C._kernel_launch_count() (deterministic counts, not timings)."""

import math

import pytest
import torch

import torch_ocl
from conftest import fp64_supported

FLOATS = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if fp64_supported() else []
)
TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
}
SHAPES = [(1,), (7,), (1000,), (4099,), (3, 5), (0,), (2, 0, 3)]


def launches():
    return torch_ocl._C._kernel_launch_count()


def tensors(dtype, seed, low=-2.0, high=2.0, shapes=SHAPES):
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.rand(s, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
        for s in shapes
    ]


def to_ocl(ts):
    return [t.to("ocl") for t in ts]


def assert_lists_close(got, expected, dtype=None):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.device.type == "ocl"
        assert g.dtype == e.dtype and g.shape == e.shape
        torch.testing.assert_close(g.cpu(), e, equal_nan=True, **TOL[dtype or e.dtype])


def run_both(fn, *lists_and_args, inplace=False):
    """fn(*args) on CPU copies and on ocl copies; returns (cpu_result_lists, ocl_result_lists)."""
    def is_tensors(a):
        return isinstance(a, list) and a and isinstance(a[0], torch.Tensor)

    cpu_args = [[t.clone() for t in a] if is_tensors(a) else a for a in lists_and_args]
    dev_args = [to_ocl(a) if is_tensors(a) else a for a in lists_and_args]
    expected = fn(*cpu_args)
    with torch_ocl.strict():
        got = fn(*dev_args)
    if inplace:
        return cpu_args[0], dev_args[0]
    return expected, got


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow"]


# every op in float32; the other dtypes on a few ops (each (op, form, dtype) is one program)
BINARY_CASES = [(op, torch.float32) for op in BINARY] + [
    (op, dt) for op in ("add", "mul", "maximum") for dt in FLOATS if dt != torch.float32
]


@pytest.mark.parametrize("op,dtype", BINARY_CASES)
def test_binary_scalar_list_scalarlist(op, dtype):
    x = tensors(dtype, 1, 0.5, 2.0) if op == "pow" else tensors(dtype, 1)
    y = tensors(dtype, 2, 0.5, 2.0)
    f = getattr(torch, f"_foreach_{op}")
    f_ = getattr(torch, f"_foreach_{op}_")
    scalars = [0.5 + 0.25 * i for i in range(len(x))]
    for args in ([x, 1.5], [x, y], [x, scalars]):
        e, g = run_both(f, *args)
        assert_lists_close(g, e)
        e, g = run_both(f_, *args, inplace=True)
        assert_lists_close(g, e)


@pytest.mark.parametrize("dtype", FLOATS)
def test_add_sub_alpha_and_tensor_forms(dtype):
    x, y = tensors(dtype, 3), tensors(dtype, 4)
    for f in (torch._foreach_add, torch._foreach_sub):
        e, g = run_both(lambda a, b: f(a, b, alpha=-0.75), x, y)
        assert_lists_close(g, e)
    scalar = torch.tensor(1.25)
    for name in ("add", "mul", "div"):
        f = getattr(torch, f"_foreach_{name}")
        f_ = getattr(torch, f"_foreach_{name}_")
        extra = {"alpha": 2.0} if name == "add" else {}
        expected = f([t.clone() for t in x], scalar, **extra)
        dev = to_ocl(x)
        with torch_ocl.strict():
            got = f(dev, scalar.to("ocl"), **extra)  # device scalar tensor
            got_cpu_scalar = f(dev, scalar, **extra)  # CPU 0-d tensor
            f_(dev, scalar.to("ocl"), **extra)
        assert_lists_close(got, expected)
        assert_lists_close(got_cpu_scalar, expected)
        assert_lists_close(dev, expected)


UNARY = [
    "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor",
    "frac", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid",
    "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
]
POSITIVE = {"log", "log10", "log2", "sqrt", "rsqrt", "reciprocal"}


@pytest.mark.parametrize("op", UNARY)
def test_unary_float32(op):
    lo, hi = (0.25, 3.0) if op in POSITIVE else (-0.9, 0.9)
    x = tensors(torch.float32, 5, lo, hi)
    e, g = run_both(getattr(torch, f"_foreach_{op}"), x)
    assert_lists_close(g, e)
    e, g = run_both(getattr(torch, f"_foreach_{op}_"), x, inplace=True)
    assert_lists_close(g, e)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["neg", "sqrt", "reciprocal", "exp"])
def test_unary_dtypes(op, dtype):
    x = tensors(dtype, 6, 0.25, 2.0)
    e, g = run_both(getattr(torch, f"_foreach_{op}"), x)
    assert_lists_close(g, e)


@pytest.mark.parametrize("dtype", FLOATS)
def test_ternary_and_lerp(dtype):
    x, y, z = tensors(dtype, 7), tensors(dtype, 8), tensors(dtype, 9, 0.5, 2.0)
    w = tensors(dtype, 10, 0.0, 1.0)
    scalars = [0.1 * (i + 1) for i in range(len(x))]
    for name in ("addcmul", "addcdiv"):
        f, f_ = getattr(torch, f"_foreach_{name}"), getattr(torch, f"_foreach_{name}_")
        for s in (0.3, scalars, torch.tensor(scalars)):
            e, g = run_both(lambda a, b, c: f(a, b, c, s), x, y, z)
            assert_lists_close(g, e)
            e, g = run_both(lambda a, b, c: f_(a, b, c, s), x, y, z, inplace=True)
            assert_lists_close(g, e)
    for weight in (0.3, 0.8, scalars):
        e, g = run_both(lambda a, b: torch._foreach_lerp(a, b, weight), x, y)
        assert_lists_close(g, e)
        e, g = run_both(lambda a, b: torch._foreach_lerp_(a, b, weight), x, y, inplace=True)
        assert_lists_close(g, e)
    e, g = run_both(torch._foreach_lerp, x, y, w)
    assert_lists_close(g, e)
    e, g = run_both(torch._foreach_lerp_, x, y, w, inplace=True)
    assert_lists_close(g, e)


@pytest.mark.parametrize("dtype", FLOATS)
def test_zero_copy_and_norm(dtype):
    x = tensors(dtype, 11)
    e, g = run_both(torch._foreach_zero_, x, inplace=True)
    assert_lists_close(g, e)
    src = tensors(torch.float32, 12)
    e, g = run_both(torch._foreach_copy_, x, src, inplace=True)
    assert_lists_close(g, e)
    nonempty = [t for t in x if t.numel() > 0]
    for ord_ in (1, 2, math.inf):
        e, g = run_both(lambda a: torch._foreach_norm(a, ord_), nonempty)
        assert_lists_close(g, e)
    e, g = run_both(lambda a: torch._foreach_norm(a, 2), x)  # empty tensors have norm 0
    assert_lists_close(g, e)
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="infinity norm on an empty tensor"):
            torch._foreach_norm([t.to(dev) for t in x], math.inf)
    if dtype != torch.float64:  # float64 -> float32 would narrow (an error on CPU too)
        e, g = run_both(lambda a: torch._foreach_norm(a, 2, dtype=torch.float32), x)
        assert_lists_close(g, e, torch.float32)


@pytest.mark.parametrize("dtype", FLOATS)
def test_norm_sizes_and_special_values(dtype):
    """_foreach_norm around the vector widths of the CPU drivers' kernel (16 floats, 8 doubles:
    sizes 1-40 and long odd ones, each with a tail), with a NaN or an inf in the vector part and
    in the tail (inf norm keeps the NaN; 1- and 2-norms propagate both)."""
    shapes = [(n,) for n in list(range(1, 41)) + [255, 1024, 4099]]
    x = tensors(dtype, 21, shapes=shapes)
    x[30][3] = float("nan")  # vector part of a 31-element tensor
    x[36][35] = float("nan")  # tail of a 37-element tensor
    x[40][100] = float("inf")
    x[41][1023] = -float("inf")
    for ord_ in (1, 2, math.inf):
        e, g = run_both(lambda a: torch._foreach_norm(a, ord_), x)
        for gi, ei in zip(g, e):
            torch.testing.assert_close(gi.cpu(), ei, equal_nan=True, **TOL[dtype])


def test_norm_work_group_tree_shapes():
    """The norms above again with TORCH_OCL_TREE_REDUCTIONS=1 (the GPU kernel: one work group
    per tensor), in a subprocess (the choice is read once per process)."""
    import os
    import subprocess
    import sys

    if os.environ.get("TORCH_OCL_TREE_REDUCTIONS") == "1":
        pytest.skip("this process already runs the work-group trees")
    env = dict(os.environ, TORCH_OCL_TREE_REDUCTIONS="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"{__file__}::test_norm_sizes_and_special_values",
                        f"{__file__}::test_zero_copy_and_norm"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_copy_between_integer_and_bool_dtypes():
    src = [torch.arange(-3, 4, dtype=torch.int64), torch.tensor([True, False, True])]
    dst = [torch.zeros(7, dtype=torch.float32), torch.zeros(3, dtype=torch.float32)]
    # one dtype per list is the fast route; mixed source dtypes go per tensor
    for s_list, d_list in (([src[0]], [dst[0]]), ([src[1]], [dst[1]]), (src, dst)):
        e, g = run_both(torch._foreach_copy_, d_list, s_list, inplace=True)
        assert_lists_close(g, e, torch.float32)


def test_one_launch_per_call_and_strided_lists():
    x = to_ocl(tensors(torch.float32, 13, shapes=[(n,) for n in range(1, 41)]))
    y = to_ocl(tensors(torch.float32, 14, shapes=[(n,) for n in range(1, 41)]))
    torch._foreach_add_(x, y)  # compile first
    before = launches()
    torch._foreach_add_(x, y, alpha=2.0)
    torch._foreach_addcmul_(x, y, y, 0.5)
    torch._foreach_mul_(x, 0.9)
    torch._foreach_norm(x)
    assert launches() - before == 4
    # Non-contiguous tensors take the per-tensor route and stay correct.
    a = [torch.randn(5, 7), torch.randn(4, 3)]
    b = [torch.randn(7, 5).t(), torch.randn(3, 4).t()]
    expected = torch._foreach_add([t.clone() for t in a], b, alpha=3)
    da, db = to_ocl(a), [t.to("ocl") for t in b]
    with torch_ocl.strict():
        db_t = [t.t().contiguous().t() for t in db]  # keep the transposed strides on ocl
        got = torch._foreach_add(da, db_t, alpha=3)
    assert not db_t[0].is_contiguous()
    assert_lists_close(got, expected)


def test_errors_match_cpu():
    a = [torch.ones(3), torch.ones(4)]
    b = [torch.ones(3)]
    with pytest.raises(RuntimeError, match="same number of tensors"):
        torch._foreach_add(a, b)
    with pytest.raises(RuntimeError, match="same number of tensors"):
        torch._foreach_add(to_ocl(a), to_ocl(b))
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch._foreach_add([], 1.0)
    with pytest.raises(RuntimeError):
        torch._foreach_mul_(to_ocl(a), [1.0])
    # the process stays usable
    out = torch._foreach_add(to_ocl(a), 1.0)
    assert out[1].cpu().tolist() == [2.0] * 4


def test_integer_lists_are_exact():
    x = [torch.arange(10, dtype=torch.int64), torch.arange(5, dtype=torch.int64)]
    got = torch._foreach_add(to_ocl(x), 3)
    for g, e in zip(got, torch._foreach_add(x, 3)):
        assert torch.equal(g.cpu(), e)


# ---- optimizers -------------------------------------------------------------------------------


def make_params(dtype, seed=0, shapes=((7,), (4, 5), (1000,), (1,), (33, 3))):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes]


def run_optimizer(cls, kwargs, dtype, steps=3, device="cpu", grad_seed=1):
    params = [p.to(device).requires_grad_() for p in make_params(dtype)]
    opt = cls(params, **kwargs)
    g = torch.Generator().manual_seed(grad_seed)
    for _ in range(steps):
        for p in params:
            p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64).to(dtype).to(device)
        opt.step()
    return [p.detach().cpu() for p in params]


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True),
]
ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, weight_decay=0.1, amsgrad=True),
    dict(lr=0.01, betas=(0.8, 0.9), maximize=True, weight_decay=0.05),
]


def _cases():
    for kw in SGD_CASES:
        yield torch.optim.SGD, kw
    for cls in (torch.optim.Adam, torch.optim.AdamW):
        for kw in ADAM_CASES:
            yield cls, kw


@pytest.mark.parametrize("path", ["foreach", "fused"])
@pytest.mark.parametrize("cls,kwargs", list(_cases()))
def test_optimizers_match_cpu(cls, kwargs, path):
    kw = dict(kwargs, **{path: True})
    expected = run_optimizer(cls, kw, torch.float32)
    with torch_ocl.strict():
        got = run_optimizer(cls, kw, torch.float32, device="ocl")
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


_O = torch.optim
OTHER_FOREACH_CASES = [
    (_O.RMSprop, dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    (_O.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.01)),
    (_O.Adadelta, dict(lr=1.0, weight_decay=0.01)),
    (_O.Adamax, dict(lr=0.01, weight_decay=0.01)),
    (_O.NAdam, dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.01)),
    (_O.RAdam, dict(lr=0.01, weight_decay=0.01)),
    (_O.ASGD, dict(lr=0.01, weight_decay=0.01)),
    (_O.Rprop, dict(lr=0.01)),
]


@pytest.mark.parametrize("cls,kwargs", OTHER_FOREACH_CASES,
                         ids=[c.__name__ for c, _ in OTHER_FOREACH_CASES])
def test_other_foreach_optimizers_match_cpu(cls, kwargs):
    # The rest of torch.optim on its foreach path (the multi-tensor kernels walk blocks of 2048
    # elements in vectors on CPU drivers: tensors across blocks and with tails).
    shapes = ((7,), (5000,), (2049,), (1,), (33, 3))

    def run(device):
        g = torch.Generator().manual_seed(0)
        ps = [torch.randn(s, generator=g).to(device).requires_grad_() for s in shapes]
        opt = cls(ps, foreach=True, **kwargs)
        for _ in range(4):
            for p in ps:
                p.grad = torch.randn(p.shape, generator=g).to(device)
            opt.step()
        return [p.detach().cpu() for p in ps]

    expected = run("cpu")
    with torch_ocl.strict():
        got = run("ocl")
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16] + (
    [torch.float64] if fp64_supported() else []))
@pytest.mark.parametrize("cls", [torch.optim.SGD, torch.optim.AdamW])
def test_fused_and_foreach_low_and_double_precision(cls, dtype):
    # eps=1e-3: the default 1e-8 is 0 in float16, and Adam without float32 master weights then
    # divides by zero wherever exp_avg_sq underflows (on CPU too, at other elements).
    kw = (dict(lr=0.01, momentum=0.9) if cls is torch.optim.SGD
          else dict(lr=0.01, weight_decay=0.1, eps=1e-3))
    # Reference: foreach on CPU in dtype; fused on CPU in float32 (for float16/bfloat16: ours do the math
    # in float32 and round once per stored value; CPU's own fused SGD in float16 drifts 0.14 from
    # the float32 result after 3 steps, so it is no reference) or in float64.
    ref_dtype = torch.float64 if dtype == torch.float64 else torch.float32
    tol = {torch.float64: dict(rtol=1e-9, atol=1e-9), torch.float16: dict(rtol=5e-3, atol=5e-3),
           torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}[dtype]
    for path in ("foreach", "fused"):
        # foreach rounds every intermediate list to dtype, exactly like CPU's foreach path
        expected = run_optimizer(cls, dict(kw, **{path: True}),
                                 dtype if path == "foreach" else ref_dtype)
        with torch_ocl.strict():
            got = run_optimizer(cls, dict(kw, **{path: True}), dtype, device="ocl")
        for g, e in zip(got, expected):
            torch.testing.assert_close(g.float(), e.float(), **tol, msg=lambda m: f"{path}: {m}")


def test_fused_adamw_100_params_launch_budget():
    g = torch.Generator().manual_seed(3)
    params = [
        torch.randn((i % 7 + 1) * (i % 5 + 1) * 17, generator=g).to("ocl").requires_grad_()
        for i in range(100)
    ]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-3, fused=True)
    opt.step()  # state init, compiles
    torch.ocl.synchronize()
    before = launches()
    with torch_ocl.strict():
        opt.step()
    n = launches() - before
    assert n <= 8, n


def test_fused_grad_scale_and_found_inf():
    params = make_params(torch.float32)
    grads = [torch.randn_like(p) * 4 for p in params]

    def step(device, found):
        ps = [p.clone().to(device) for p in params]
        gs = [g.clone().to(device) for g in grads]
        ms = [torch.zeros_like(p) for p in ps]
        vs = [torch.zeros_like(p) for p in ps]
        steps = [torch.tensor(1.0, device=device) for _ in ps]
        scale = torch.tensor(4.0, device=device)
        inf = torch.tensor(found, device=device)
        torch._fused_adamw_(ps, gs, ms, vs, [], steps, lr=0.1, beta1=0.9, beta2=0.99,
                            weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False,
                            grad_scale=scale, found_inf=inf)
        return [p.cpu() for p in ps], [g.cpu() for g in gs]

    for found in (0.0, 1.0):
        ep, eg = step("cpu", found)
        with torch_ocl.strict():
            gp, gg = step("ocl", found)
        for a, b in zip(gp + gg, ep + eg):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # found_inf=1 leaves the parameters untouched
    assert all(torch.equal(a, b) for a, b in zip(step("ocl", 1.0)[0], params))


def test_fused_tensor_lr():
    kw = dict(lr=torch.tensor(0.01), fused=True)
    expected = run_optimizer(torch.optim.Adam, kw, torch.float32)
    with torch_ocl.strict():
        got = run_optimizer(torch.optim.Adam, dict(kw, lr=torch.tensor(0.01)), torch.float32,
                            device="ocl")
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_foreach():
    params = make_params(torch.float32)
    grads = [torch.randn_like(p) * 3 for p in params]
    cpu_params = [p.clone().requires_grad_() for p in params]
    for p, g in zip(cpu_params, grads):
        p.grad = g.clone()
    dev_params = [p.to("ocl").requires_grad_() for p in params]
    for p, g in zip(dev_params, grads):
        p.grad = g.to("ocl")
    for norm_type in (2.0, math.inf):
        e = torch.nn.utils.clip_grad_norm_(cpu_params, 1.0, norm_type, foreach=True)
        g = torch.nn.utils.clip_grad_norm_(dev_params, 1.0, norm_type, foreach=True)
        torch.testing.assert_close(g.cpu(), e, rtol=1e-5, atol=1e-5)
        for a, b in zip(dev_params, cpu_params):
            torch.testing.assert_close(a.grad.cpu(), b.grad, rtol=1e-5, atol=1e-6)
