"""torch.compile on ocl: Inductor's generated OpenCL C kernels and compile_kernel/kernel_op.

Every numeric test runs in strict mode (a CPU fallback is an error) and compares the compiled ocl
result with CPU PyTorch on the same inputs.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
import cpu_only_ops
import torch_ocl
from torch._dynamo.testing import CompileCounterWithBackend

TOL = {
    torch.float32: dict(atol=1e-5, rtol=1e-5),
    torch.float64: dict(atol=1e-12, rtol=1e-12),
    torch.float16: dict(atol=2e-3, rtol=2e-3),
    torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
}


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def to_ocl(*ts):
    return [t.to("ocl") for t in ts]


def assert_close(actual, expected, dtype=torch.float32, **kw):
    tol = {**TOL.get(dtype, dict(atol=0, rtol=0)), **kw}
    torch.testing.assert_close(actual.cpu(), expected, **tol)


def compiled_on_ocl(fn, *cpu_args, **compile_kw):
    with torch_ocl.strict():
        return torch.compile(fn, **compile_kw)(*to_ocl(*cpu_args))


def test_pointwise_chain_with_broadcasts_and_views_is_one_kernel():
    def f(a, b, c):
        return torch.tanh(a[:, ::2].t() * 2 + b[None, :, None]) * c.exp() - 1

    a, b, c = torch.randn(10, 12), torch.randn(6), torch.randn(1, 10)
    oa, ob, oc = to_ocl(a, b, c)
    with torch_ocl.strict():
        cf = torch.compile(f)
        cf(oa, ob, oc)  # compile
        before = torch_ocl._C._kernel_launch_count()
        out = cf(oa, ob, oc)
        launches = torch_ocl._C._kernel_launch_count() - before
    assert_close(out, f(a, b, c))
    assert launches == 1, f"the fused chain took {launches} kernel launches"


def test_transposed_copies_stay_one_dimensional():
    # Inductor tiles transposes in 2-d for Triton; the ocl kernels index one flat range.
    x = torch.randn(40, 70)
    out = compiled_on_ocl(lambda x: x.t().contiguous() + 1, x)
    assert_close(out, x.t().contiguous() + 1)
    assert out.is_contiguous()


def test_backend_by_name():
    x = torch.randn(33)
    out = compiled_on_ocl(lambda x: x.sin() + 1, x, backend="ocl")
    assert_close(out, x.sin() + 1)


@pytest.mark.parametrize("form", ["row_per_work_item", "work_group_tree"])
def test_every_reduction_kind(form):
    from torch_ocl._inductor import config
    def f(x):
        return (
            x.sum(-1),
            x.sum(0),  # a strided reduction
            x.sum(),  # one row over everything
            x.amax(-1),
            x.amin(0),
            x.argmax(-1),
            x.argmin(0),
            (x > 1.5).any(-1),
            (x > -3).all(-1),
            (x * 0.1).exp().prod(-1),
            *torch.var_mean(x, -1),
            torch.softmax(x, -1),
            torch.logsumexp(x, 0),
            torch.nn.functional.layer_norm(x, (x.shape[-1],)),
        )

    x = torch.randn(7, 300)  # rows longer than a work group: the loop takes two trips
    x[2, 17] = float("nan")  # max/argmax propagate NaN as eager does
    with torch_ocl.strict(), config.patch(cpu_row_per_work_item=form == "row_per_work_item"):
        got = torch.compile(f)(x.to("ocl"))
    for g, e in zip(got, f(x)):
        if e.dtype.is_floating_point:
            torch.testing.assert_close(g.cpu(), e, atol=2e-5, rtol=1e-5, equal_nan=True)
        else:
            assert torch.equal(g.cpu(), e)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32])
def test_row_reductions_in_lanes(dtype):
    """With a work item per row, sums, max, min and Welford's mean/variance keep
    config.sum_lanes accumulators (a lane per position modulo 8, then a tail), merged after the
    loop. Rows of 1..20 elements and long odd ones; NaN and +-inf in different lanes and in the
    tail; a row of only -inf; max/min of integers."""
    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).fp64:
        pytest.skip("device lacks cl_khr_fp64")

    def f(x):
        out = [x.amax(-1), x.amin(-1), x.sum(-1)]
        if x.is_floating_point():
            out += [*torch.var_mean(x, -1), torch.softmax(x, -1),
                    torch.nn.functional.layer_norm(x, x.shape[-1:])]
        return out

    g = torch.Generator().manual_seed(3)
    for n in (1, 2, 7, 8, 9, 15, 17, 257, 1031):
        if dtype.is_floating_point:
            x = torch.randn(12, n, generator=g, dtype=dtype) * 3
            if n > 10:
                x[1, 3] = float("nan")  # a lane
                x[2, n - 1] = float("nan")  # the tail (or a lane)
                x[3, 5] = float("inf")
                x[4, 9] = -float("inf")
                x[5] = -float("inf")
        else:
            x = torch.randint(-1000, 1000, (12, n), generator=g, dtype=dtype)
        with torch_ocl.strict():
            got = torch.compile(f, dynamic=False)(x.to("ocl"))
        for a, e in zip(got, f(x)):
            if e.dtype.is_floating_point:
                tol = 1e-10 if e.dtype == torch.float64 else 2e-5
                torch.testing.assert_close(a.cpu(), e, atol=tol, rtol=tol, equal_nan=True,
                                           msg=f"n={n}")
            else:
                assert torch.equal(a.cpu(), e), n


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8])
def test_small_integer_reductions(dtype):
    def f(x):
        return x.argmax(-1), x.argmin(0), x.amax(-1), x.amin(0), x.sum(-1)

    x = torch.randint(-100, 100, (6, 9)).to(dtype)
    for g, e in zip(compiled_on_ocl(f, x), f(x)):
        assert g.dtype == e.dtype and torch.equal(g.cpu(), e)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int32])
def test_dtypes(dtype):
    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).fp64:
        pytest.skip("device lacks cl_khr_fp64")
    if dtype.is_floating_point:

        def f(a, b):
            return (torch.nn.functional.gelu(a) * b.t()).sum(0), a.sigmoid() + 1, a.var(1)

    else:

        def f(a, b):
            return (a * 3 + b).sum(-1), torch.where(a > b, a, -b)

    a = (torch.randn(17, 19) * 4).to(dtype)
    b = (torch.randn(19, 17) * 4).to(dtype) if dtype.is_floating_point else a.flip(0)
    got = compiled_on_ocl(f, a, b)
    # Eager rounds every intermediate to the dtype, the fused kernel only its result: allow a
    # few roundings of the result's magnitude.
    tol = {torch.float16: 1e-2, torch.bfloat16: 6e-2}.get(dtype)
    for g, e in zip(got, f(a, b)):
        assert g.dtype == e.dtype
        if tol is not None:
            torch.testing.assert_close(g.cpu().float(), e.float(), atol=tol, rtol=tol)
        elif dtype.is_floating_point:
            torch.testing.assert_close(g.cpu().float(), e.float(), **TOL[dtype])
        else:
            assert torch.equal(g.cpu(), e)


def test_mlp_training_step_adamw_matches_cpu():
    def run(device, compiled):
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64), torch.nn.Linear(64, 10)
        ).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        x, y = torch.randn(16, 32).to(device), torch.randint(0, 10, (16,)).to(device)

        def step():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss.detach()

        step = torch.compile(step) if compiled else step
        return torch.stack([step().cpu() for _ in range(4)])

    torch.manual_seed(1)
    with torch_ocl.strict():
        got = run("ocl", True)
    torch.testing.assert_close(got, run("cpu", False), atol=1e-5, rtol=1e-5)
    assert got[-1] < got[0]


@pytest.mark.parametrize("name", ["mlp", "cnn", "gpt", "minilm"])
def test_example_models_compiled_match_cpu(name):
    import importlib
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mod = importlib.import_module(f"examples.{name}")
    kw = {"small": True}
    if "dropout" in mod.workload.__code__.co_varnames:
        kw["dropout"] = 0.0  # ocl and CPU draw different dropout masks

    counter = CompileCounterWithBackend("inductor")

    def run(device, compiled):
        w = mod.workload(device, **kw)
        if compiled:
            # (nn.Module.compile() traced nothing in this PyTorch build: compile forward.)
            w.model.forward = torch.compile(w.model.forward, backend=counter)
        out = [w.step().detach().cpu() for _ in range(5)]
        return w.kind, torch.stack([o if o.numel() == 1 else o.float().norm() for o in out])

    with torch_ocl.strict():
        kind, got = run("ocl", True)
    assert counter.frame_count >= 1 and counter.op_count > 0
    _, want = run("cpu", False)
    torch.testing.assert_close(got, want, atol=2e-5, rtol=2e-5)
    if kind == "train":
        assert got[-1] < got[0]


def test_optimizer_step_and_inference_compile():
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    dev = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    dev.load_state_dict(cpu.state_dict())
    dev.to("ocl")
    opt_cpu = torch.optim.AdamW(cpu.parameters(), lr=0.1)
    opt_dev = torch.optim.AdamW(dev.parameters(), lr=0.1)
    compiled_step = torch.compile(opt_dev.step)
    x = torch.randn(8, 16)
    with torch_ocl.strict():
        for _ in range(3):
            for model, opt, inp, step in (
                (cpu, opt_cpu, x, opt_cpu.step),
                (dev, opt_dev, x.to("ocl"), compiled_step),
            ):
                opt.zero_grad()
                model(inp).square().mean().backward()
                step()
    for a, b in zip(dev.parameters(), cpu.parameters()):
        torch.testing.assert_close(a.detach().cpu(), b.detach(), atol=2e-5, rtol=2e-5)
    dev.eval()
    cpu.eval()
    with torch.no_grad(), torch_ocl.strict():
        got = torch.compile(dev)(x.to("ocl"))
    with torch.no_grad():
        assert_close(got, cpu(x))


def _launches(fn, *args):
    fn(*args)  # compile
    before = torch_ocl._C._kernel_launch_count()
    out = fn(*args)
    return out, torch_ocl._C._kernel_launch_count() - before


@pytest.mark.parametrize("form", ["row_per_work_item", "work_group_tree"])
def test_foreach_ops_are_combo_kernels(form):
    """A foreach op over many tensors (odd sizes, a non-contiguous view, a zero-size tensor)
    runs as one combo kernel; independent reductions too where a row is one work item."""
    from torch_ocl._inductor import config

    shapes = [(5,), (300,), (7, 3), (1024,), (33,), (0,), (2, 257)]
    ps = [torch.randn(s) for s in shapes]
    ps[2] = torch.randn(3, 7).t()  # a transposed view
    gs = [torch.randn(p.shape) for p in ps]

    def f(ps, gs):
        torch._foreach_add_(ps, torch._foreach_mul(gs, 0.5))
        roots = torch._foreach_sqrt(torch._foreach_abs(gs))
        return torch._foreach_norm(ps), roots, [(g * 2).sum() for g in gs]

    ops, ogs = [p.to("ocl") for p in ps], [g.to("ocl") for g in gs]
    with torch_ocl.strict(), config.patch(cpu_row_per_work_item=form == "row_per_work_item"):
        (norms, roots, sums), launches = _launches(torch.compile(f), ops, ogs)
        # _foreach_norm has no Inductor lowering: our eager kernel runs inside the graph
        _, norm_launches = _launches(torch._foreach_norm, ops)
    f(ps, gs)  # the compiled function ran twice: so do the CPU tensors
    expected = f(ps, gs)
    for a, b in zip(ops, ps):
        assert_close(a, b)
    for got, exp in zip((norms, roots, sums), expected):
        for a, b in zip(got, exp):
            assert_close(a, b, atol=1e-4)
    generated = launches - norm_launches
    # add+mul: one kernel; sqrt(abs): one; the sums: one (a row per work item) or one per
    # non-empty tensor (a work-group tree each)
    limit = 3 if form == "row_per_work_item" else 2 + len(shapes)
    assert 2 <= generated <= limit, f"{generated} launches"


def test_long_foreach_lists_split_by_argument_size():
    """60 tensors exceed one kernel's 1024 bytes of arguments: several combo launches, each
    within the limit, still far fewer than one per tensor."""
    ps = [torch.randn(i + 1) for i in range(60)]
    ops = [p.to("ocl") for p in ps]

    def f(ps):
        return torch._foreach_mul(torch._foreach_add(ps, 1.0), 3.0)

    with torch_ocl.strict():
        out, launches = _launches(torch.compile(f), ops)
    for a, b in zip(out, f(ps)):
        assert_close(a, b)
    assert 1 < launches <= 6, f"{launches} launches"


def test_combo_kernel_runs_one_body_per_function():
    """Sub-kernels of one function in a combo kernel are one call whose arguments the work group
    picks (a sequence of selects), not one call per sub-kernel behind a branch: a CPU driver
    if-converts the work-item loop and ran every branch's body, masked, for every work item.
    Sizes are odd, one tensor is a transposed view, one is empty."""
    import re

    from torch._inductor.utils import run_and_get_code

    shapes = [(5,), (300,), (7, 3), (1024,), (33,), (0,), (2, 257), (1,)]
    ps = [torch.randn(s) for s in shapes]
    ps[2] = torch.randn(3, 7).t()
    gs = [torch.randn(p.shape) for p in ps]

    def f(ps, gs):
        torch._foreach_mul_(ps, 0.9)
        torch._foreach_add_(ps, torch._foreach_sqrt(torch._foreach_abs(gs)), alpha=-0.1)

    ops, ogs = [p.clone().to("ocl") for p in ps], [g.to("ocl") for g in gs]
    with torch_ocl.strict():
        _, (code, *_) = run_and_get_code(torch.compile(f), ops, ogs)
    f(ps, gs)
    for a, b in zip(ops, ps):
        assert_close(a, b)
    # symbolic sizes: the work-group ranges are computed in the kernel
    cf = torch.compile(f, dynamic=True)
    for n in (5, 37, 1):
        shapes_n = [(n,), (n + 3,), (2, n), (n, 7)]
        pn, gn = [torch.randn(s) for s in shapes_n], [torch.randn(s) for s in shapes_n]
        opn, ogn = [p.clone().to("ocl") for p in pn], [g.to("ocl") for g in gn]
        with torch_ocl.strict():
            cf(opn, ogn)
        f(pn, gn)
        for a, b in zip(opn, pn):
            assert_close(a, b)
    combos = 0
    for name in re.findall(r"__kernel void (\w+)\(", code):
        body = code.split(f"__kernel void {name}(", 1)[1].split("\\n}\\n", 1)[0]
        subs = set(re.findall(rf"({name}_s\d+)\(", body))
        combos += bool(subs)
        for sub in subs:
            assert body.count(f"{sub}(") == 1, f"{sub} is called more than once in {name}"
    assert combos, "no combo kernel"


def test_optimizer_powers_of_device_step_counts_are_not_per_element():
    """AdamW with its step counts on the device (capturable=True): beta ** step has one element
    per parameter. On CPU drivers it is computed in a kernel of its own, not inlined into the
    per-element update (where pow kept PoCL's work-item loop scalar). Parameters match CPU's
    AdamW after 3 steps; sizes are odd, one parameter is 2-d."""
    import re

    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    shapes = [(300,), (7, 3), (1025,)]
    cpu = [torch.randn(s, requires_grad=True) for s in shapes]
    dev = [p.detach().to("ocl").requires_grad_() for p in cpu]
    grads = [[torch.randn(s) for s in shapes] for _ in range(3)]
    o_cpu = torch.optim.AdamW(cpu, lr=0.01, weight_decay=0.1)
    o_dev = torch.optim.AdamW(dev, lr=0.01, weight_decay=0.1, capturable=True)
    step = torch.compile(o_dev.step)
    codes = []
    with torch_ocl.strict():
        for gs in grads:
            for p, q, g in zip(cpu, dev, gs):
                p.grad, q.grad = g, g.to("ocl")
            o_cpu.step()
            _, code = run_and_get_code(step)
            codes += code
    for p, q in zip(cpu, dev):
        assert_close(q.detach(), p.detach(), atol=2e-5, rtol=2e-5)
    sources = re.findall(r"async_compile_ocl\((\".*?\"), '", "\n".join(codes))
    # (the helper functions every kernel starts with call both: match calls on temporaries)
    pows = [s for s in sources if "ocl_pow_float(tmp" in s]
    assert pows, "no pow kernel"
    if torch_ocl._C.get_device_properties(0)["type"] == "CPU":
        for s in pows:
            assert "sqrt(tmp" not in s, "pow inlined into the update"


def test_generated_kernels_have_descriptive_names():
    """As Triton's triton_poi_fused_add_0: ocl_ + poi/red/cmb + the fused aten ops. The profiler
    shows them as inductor::<name> with their device time."""
    from torch.profiler import ProfilerActivity, profile

    def f(x, w):
        return torch.softmax(torch.sin(x) * w, dim=-1)

    x, w = torch.randn(33, 65), torch.randn(65)
    fn = torch.compile(f)
    with torch_ocl.strict():
        fn(*to_ocl(x, w))
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
            out = fn(*to_ocl(x, w))
            torch.ocl.synchronize()
    assert_close(out, f(x, w))
    names = [e.key for e in prof.key_averages() if e.key.startswith("inductor::")]
    assert names, [e.key for e in prof.key_averages()]
    assert any(n.startswith("inductor::ocl_red_fused_") and "softmax" in n for n in names), names
    for e in prof.key_averages():
        if e.key.startswith("inductor::"):
            assert e.self_device_time_total > 0, e.key


def test_compiled_adamw_and_clipping_few_launches_match_eager_and_cpu():
    """The whole optimizer side of a training step compiled (grad-norm clipping, AdamW with
    weight decay, tensor step counts): a few launches, the same parameters as eager ocl and
    CPU after 3 steps."""
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32),
                              torch.nn.Linear(32, 4))
    eager, comp = (copy_module(cpu).to("ocl") for _ in range(2))
    runs = []
    for model, compiled in ((cpu, False), (eager, False), (comp, True)):
        opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)

        def tail(model=model, opt=opt):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()

        runs.append((model, opt, torch.compile(tail) if compiled else tail))
    x = torch.randn(8, 16)
    launches = 0
    with torch_ocl.strict():
        for i in range(3):
            for model, opt, tail in runs:
                inp = x if model is cpu else x.to("ocl")
                opt.zero_grad()
                model(inp).square().mean().backward()
                before = torch_ocl._C._kernel_launch_count()
                tail()
                if model is comp and i == 2:
                    launches = torch_ocl._C._kernel_launch_count() - before
    for a, b, c in zip(comp.parameters(), eager.parameters(), cpu.parameters()):
        torch.testing.assert_close(a.detach().cpu(), c.detach(), atol=2e-5, rtol=2e-5)
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), atol=2e-5, rtol=2e-5)
    assert launches <= 12, f"the compiled clip+AdamW took {launches} launches for 6 tensors"


def copy_module(m):
    import copy

    return copy.deepcopy(m)


def test_float_pow_integral_and_general_exponents():
    """pow with integral float exponents (squaring in double) and with general ones, special
    values included, against CPU."""
    base = torch.tensor([0.999, 0.9, -2.0, -0.0, 0.0, 3.0, float("inf"), float("nan"), -1.5, 1e-3])
    exps = torch.tensor([1.0, 2.0, 3.0, 0.0, -1.0, 100.0, -2.0, 0.0, 0.5, 2.5, 1e6, -3.0])

    def f(b, e):
        return torch.pow(b[:, None], e[None, :]), b * b, torch.pow(b, 7)

    with torch_ocl.strict():
        got = torch.compile(f)(*to_ocl(base, exps))
    for g, e in zip(got, f(base, exps)):
        torch.testing.assert_close(g.cpu(), e, atol=1e-6, rtol=2e-6, equal_nan=True)


def test_float_pow_of_optimizer_step_counts_within_one_ulp():
    """beta ** step as AdamW computes it (integral float exponents up to 10^5, bases near 1 and
    negative ones): the compiled pow (exp2/log2 in double) within 1 ulp of the exact result."""
    base = torch.tensor([0.9, 0.95, 0.99, 0.999, 0.9999, 1.0001, -0.5, -1.01, 2.0, 1e-3])
    steps = torch.cat([torch.arange(1.0, 200.0), torch.tensor([1023.0, 4096.0, 12345.0, 1e5,
                                                             65535.0, 1048575.0, 16777215.0,
                                                             16777216.0])])
    steps = torch.cat([steps, -steps[:20]])

    def f(b, e):
        return torch.pow(b[:, None], e[None, :])

    with torch_ocl.strict():
        got = torch.compile(f)(*to_ocl(base, steps)).cpu()
    exact = torch.pow(base.double()[:, None], steps.double()[None, :]).float()
    torch.testing.assert_close(got, exact, atol=0, rtol=1.2e-7, equal_nan=True)


def test_dynamic_shapes_compile_once():
    def f(x, w):
        return torch.softmax(x @ w, -1) * x.sum(-1, keepdim=True)

    counter = CompileCounterWithBackend("inductor")
    cf = torch.compile(f, dynamic=True, backend=counter)
    w = torch.randn(24, 24)
    ow = w.to("ocl")
    with torch_ocl.strict():
        for n in (3, 5, 8, 13, 21):
            x = torch.randn(n, 24)
            assert_close(cf(x.to("ocl"), ow), f(x, w), atol=1e-5, rtol=1e-4)
    assert counter.frame_count == 1


@pytest.mark.parametrize("form", ["row_per_work_item", "work_group_tree"])
def test_dynamic_reductions_compile_once(form):
    from torch_ocl._inductor import config

    def f(x):
        return torch.softmax(x, -1), x.sum(0), x.argmax(-1), *torch.var_mean(x, 0)

    counter = CompileCounterWithBackend("inductor")
    with torch_ocl.strict(), config.patch(cpu_row_per_work_item=form == "row_per_work_item"):
        cf = torch.compile(f, dynamic=True, backend=counter)
        for n, m in ((3, 700), (5, 9), (300, 17)):
            x = torch.randn(n, m)
            for g, e in zip(cf(x.to("ocl")), f(x)):
                torch.testing.assert_close(g.cpu(), e, atol=2e-5, rtol=1e-4)
    assert counter.frame_count == 1


def test_gpt_dynamic_sequence_lengths_no_recompile():
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from examples.gpt import GPT, GPTConfig

    cfg = GPTConfig(vocab=64, block=16, layers=2, heads=2, embd=32, dropout=0.0)
    cpu = GPT(cfg)
    dev = GPT(cfg)
    dev.load_state_dict(cpu.state_dict())
    dev.to("ocl")
    counter = CompileCounterWithBackend("inductor")
    f = torch.compile(dev, dynamic=True, backend=counter)
    frames = []
    with torch_ocl.strict():
        for t in (5, 7, 9, 12, 16):
            x, y = torch.randint(0, 64, (2, t)), torch.randint(0, 64, (2, t))
            got = f(x.to("ocl"), y.to("ocl"))
            got.backward()
            want = cpu(x, y)
            want.backward()
            torch.testing.assert_close(got.detach().cpu(), want.detach(), atol=2e-5, rtol=2e-5)
            frames.append(counter.frame_count)
    assert frames[0] >= 1 and frames[-1] == frames[0], frames  # traced once, no recompiles
    for a, b in zip(dev.parameters(), cpu.parameters()):
        torch.testing.assert_close(a.grad.cpu(), b.grad, atol=2e-5, rtol=2e-4)


def test_mark_dynamic_sequence_length():
    def f(x):
        return torch.nn.functional.layer_norm(x, (8,)).relu().sum(1)

    counter = CompileCounterWithBackend("inductor")
    cf = torch.compile(f, backend=counter)
    with torch_ocl.strict():
        for t in (4, 7, 9):
            x = torch.randn(2, t, 8)
            ox = x.to("ocl")
            torch._dynamo.mark_dynamic(ox, 1)
            assert_close(cf(ox), f(x), atol=1e-5, rtol=1e-4)
    assert counter.frame_count == 1


def test_random_ops_run_on_the_device():
    def f(a):
        return torch.nn.functional.dropout(a, 0.5, True), torch.rand_like(a), torch.randn_like(a)

    with torch_ocl.strict():
        drop, u, n = torch.compile(f)(torch.ones(20000, device="ocl"))
    drop, u, n = drop.cpu(), u.cpu(), n.cpu()
    assert set(drop.unique().tolist()) <= {0.0, 2.0}
    assert abs((drop == 0).float().mean().item() - 0.5) < 0.02
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean().item() - 0.5) < 0.02
    assert abs(n.mean().item()) < 0.03 and abs(n.std().item() - 1) < 0.03


def test_gather_embedding_and_scatter_add():
    def f(x, i):
        return (
            torch.gather(x, 1, i.view(1, 4).expand(8, 4)) * 2,
            torch.nn.functional.embedding(i, x).relu(),
            x.index_add(1, i, torch.ones(8, 4, device=x.device)),
        )

    x, i = torch.randn(8, 6), torch.tensor([0, 2, 2, 5])
    got = compiled_on_ocl(f, x, i)
    for g, e in zip(got, f(x, i)):
        assert_close(g, e)


def test_extern_kernels_mm_bmm_conv_sdpa():
    def f(x, w, q):
        return (
            torch.relu(x @ w + 1),
            torch.addmm(w[0], x, w).sigmoid(),
            torch.bmm(q[0], q[0].transpose(1, 2)).tanh(),
            torch.nn.functional.conv2d(x.view(1, 1, 8, 6), w[:3, :3].reshape(1, 1, 3, 3)).exp(),
            torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True) * 2,
        )

    from torch_ocl._inductor import config

    x, w, q = torch.randn(8, 6), torch.randn(6, 6), torch.randn(1, 2, 5, 4)
    with config.patch(small_mm_max_macs=0):  # no product is lowered as a reduction
        got = compiled_on_ocl(f, x, w, q)
    for g, e in zip(got, f(x, w, q)):
        assert_close(g, e, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_small_products_are_fused_reductions(dtype):
    from torch._inductor.utils import run_and_get_code

    from torch_ocl._inductor import config

    def f(x, w, b, q, k):
        h = torch.nn.functional.gelu(torch.addmm(b, x.tanh(), w.t()))  # a pointwise producer
        return (
            torch.relu(h @ w[:, ::2] + 1),  # non-contiguous right operand
            torch.addmm(b[:5], x[:, :7], w[:5, :7].t(), beta=0.5, alpha=2.0),
            torch.addmm(b[:5].expand(9, 5) * float("nan"), x[:, :7], w[:5, :7].t(), beta=0),
            torch.bmm(q, k.transpose(1, 2)).softmax(-1),
            x.t() @ x,  # k = 9 rows, transposed left operand
        )

    args = [torch.randn(9, 13), torch.randn(13, 13), torch.randn(13), torch.randn(3, 5, 7),
            torch.randn(3, 6, 7)]
    args = [a.to(dtype) for a in args]
    with torch_ocl.strict():
        cf = torch.compile(f)
        got, code = run_and_get_code(cf, *to_ocl(*args))
        for op in ("mm", "addmm", "bmm"):
            assert f"extern_kernels.{op}(" not in code[0], "a small product calls the eager GEMM"
        single = torch.compile(lambda x, w, b: torch.relu(torch.addmm(b, x, w)))
        ox, ow, ob = to_ocl(args[0], args[1], args[2])
        single(ox, ow, ob)
        before = torch_ocl._C._kernel_launch_count()
        single(ox, ow, ob)
        assert torch_ocl._C._kernel_launch_count() - before == 1  # bias and relu fused
    tol = dict(atol=1e-4, rtol=1e-4) if dtype == torch.float32 else {}
    for g, e in zip(got, f(*args)):
        assert_close(g, e, dtype, **tol)

    torch._dynamo.reset()
    with torch_ocl.strict(), config.patch(small_mm_max_macs=9 * 13 * 13 - 1):
        _, code = run_and_get_code(torch.compile(lambda x, w: x @ w), *to_ocl(args[0], args[1]))
    assert "extern_kernels.mm(" in code[0]  # above the threshold: the eager GEMM


@pytest.mark.parametrize("lanes", [1, 8])
def test_sum_lanes_odd_and_short_rows(lanes):
    from torch_ocl._inductor import config

    def f(x):
        return (x.sum(-1), x[:, :3].sum(-1), x.mean(0), (x * x).sum(-1).sqrt(), x.amax(-1),
                x.amin(-1))

    x = torch.randn(11, 29)
    x[2, 5] = x[4, 28] = float("nan")  # max/min: a NaN count beside the value, in any lane
    with torch_ocl.strict(), config.patch(sum_lanes=lanes):
        got = torch.compile(f)(x.to("ocl"))
    for g, e in zip(got, f(x)):
        assert_close(g, e, equal_nan=True)


def test_unsupported_op_fails_clearly_in_strict_mode():
    def f(x):
        # a test-only op without an ocl kernel, which Inductor calls as an extern kernel
        xi = (x * 10).to(torch.int32)
        return cpu_only_ops.gcd(xi, xi + 3) + 1

    with pytest.raises(Exception, match="strict mode"):
        compiled_on_ocl(f, torch.randn(4, 6))


def test_op_without_opencl_c_runs_the_eager_kernel():
    def f(x):
        return torch.erfinv(x.clamp(-0.9, 0.9)) * 2 + 1

    x = torch.randn(64)
    assert_close(compiled_on_ocl(f, x), f(x), atol=1e-5, rtol=1e-5)
    # histc has no lowering either: the graph calls its eager ocl kernel.
    assert_close(compiled_on_ocl(lambda x: torch.histc(x, 10, -2, 2) + 1, x),
                 torch.histc(x, 10, -2, 2) + 1)
    from torch_ocl._inductor.opencl import OclOverrides

    with pytest.raises(NotImplementedError, match="no OpenCL C for ops.erfinv"):
        OclOverrides.erfinv("tmp0")


def test_float64_buffer_without_fp64_is_a_clear_error(monkeypatch):
    from torch_ocl._inductor import opencl

    monkeypatch.setattr(opencl, "_device_has_fp64", lambda: False)
    with torch._inductor.config.patch(fx_graph_cache=False):
        with pytest.raises(Exception, match="lacks cl_khr_fp64"):
            torch.compile(lambda x: x * 2 + 1)(torch.ones(4, dtype=torch.float64, device="ocl"))


def test_cpp_wrapper_and_aot_inductor_are_clear_errors():
    # Inductor's C++ wrapper is not built for ocl: AOTInductor and cpp_wrapper=True say so (and
    # the same exported program compiles with the Python wrapper).
    m = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU()).to("ocl")
    x = torch.randn(3, 6).to("ocl")
    ep = torch.export.export(m, (x,))
    with torch._inductor.config.patch(fx_graph_cache=False):
        with pytest.raises(Exception, match="C\\+\\+ wrapper is not supported on ocl"):
            torch._inductor.aoti_compile_and_package(ep)
        with pytest.raises(Exception, match="C\\+\\+ wrapper is not supported on ocl"):
            torch.compile(m, options={"cpp_wrapper": True})(x)
    torch._dynamo.reset()
    with torch_ocl.strict():
        out = torch.compile(ep.module())(x)
    assert_close(out.cpu(), m.cpu()(x.cpu()), atol=1e-5, rtol=1e-5)


def test_registration_is_lazy():
    code = (
        "import sys, torch, torch_ocl\n"
        "assert 'torch._dynamo' not in sys.modules, 'import torch_ocl loaded Dynamo'\n"
        "assert 'torch._inductor.codegen.common' not in sys.modules\n"
        "assert 'torch_ocl._inductor' not in sys.modules\n"
        "torch.compile(lambda x: x + 1)(torch.ones(2, device='ocl'))\n"
        "from torch._inductor.codegen.common import get_custom_backend_config_for_device\n"
        "cfg = get_custom_backend_config_for_device('ocl')\n"
        "assert cfg.device_name == torch.ocl.get_device_name(0), cfg.device_name\n"
        "assert cfg.torch_ocl_version == torch_ocl.__version__ and len(cfg.codegen_hash) == 64\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


# ---- user kernels ---------------------------------------------------------------------------

SCALE = """
__kernel void scale(__global const float* x, ulong x_off, float a, __global float* out,
                    ulong out_off, long n) {
  x = (__global const float*)((__global const char*)x + x_off);
  out = (__global float*)((__global char*)out + out_off);
  const long i = get_global_id(0);
  if (i < n) out[i] = a * x[i];
}
"""


def test_compile_kernel_binds_views_by_offset():
    lib = torch_ocl.compile_kernel(SCALE)
    assert lib.kernel_names == ["scale"]
    assert [p[0] for p in lib.scale.params] == ["x", "a", "out", "n"]
    base = torch.arange(20.0)
    x = base.to("ocl")[3:13]  # a view: storage offset 3 elements
    out = torch.zeros(12, device="ocl")[2:]
    before = torch_ocl._C._kernel_launch_count()
    lib.scale(x, 2.5, out, 10, global_size=(16,), local_size=(8,))
    assert torch_ocl._C._kernel_launch_count() - before == 1
    assert torch.equal(out.cpu(), base[3:13] * 2.5)
    assert torch_ocl.compile_kernel(SCALE).scale.name == "scale"  # the cached program


def test_compile_kernel_local_memory_by_size():
    lib = torch_ocl.compile_kernel("""
    __kernel void rowsum(__global const float* x, ulong x_off, __global float* out, ulong out_off,
                         __local float* scratch, int n) {
      x = (__global const float*)((__global const char*)x + x_off);
      out = (__global float*)((__global char*)out + out_off);
      const int l = get_local_id(0), g = get_group_id(0), w = get_local_size(0);
      float acc = 0;
      for (int i = l; i < n; i += w) acc += x[g * n + i];
      scratch[l] = acc;
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int s = w / 2; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (l == 0) out[g] = scratch[0];
    }""")
    x = torch.randn(5, 100)
    out = torch.empty(5, device="ocl")
    lib.rowsum(x.to("ocl"), out, 64 * 4, 100, global_size=(5 * 64,), local_size=(64,))
    torch.testing.assert_close(out.cpu(), x.sum(1), atol=1e-5, rtol=1e-5)


def test_compile_kernel_errors_are_clear():
    with pytest.raises(RuntimeError, match=r"kernel\.cl:3:.*undeclared identifier 'y'"):
        torch_ocl.compile_kernel("__kernel void bad(__global float* x, ulong o) {\n\n  x[0] = y;\n}")
    with pytest.raises(RuntimeError, match="must be followed by a ulong"):
        torch_ocl.compile_kernel("__kernel void k(__global float* x, float a) { x[0] = a; }").k
    lib = torch_ocl.compile_kernel(SCALE)
    x = torch.ones(4, device="ocl")
    with pytest.raises(TypeError, match="declared float\\* but the tensor is Int"):
        lib.scale(x.int(), 1.0, x, 4, global_size=(4,))
    with pytest.raises(RuntimeError, match="takes 4 arguments"):
        lib.scale(x, 1.0, x, global_size=(4,))
    with pytest.raises(RuntimeError, match="is on cpu"):
        lib.scale(x.cpu(), 1.0, x, 4, global_size=(4,))
    with pytest.raises(AttributeError, match="no kernel 'nope'"):
        lib.nope


def _scale_op():
    if not hasattr(_scale_op, "op"):
        op = torch_ocl.kernel_op(
            "ocl_test::scale",
            SCALE,
            kernel="scale",
            out=lambda x, a: torch.empty(x.shape, dtype=x.dtype, device=x.device),
            grid=lambda x, a: (x.numel(),),
            args=lambda x, a, out: (x.contiguous(), a, out, x.numel()),
        )  # the schema (Tensor x, float a) comes from the kernel's parameters x and a

        def setup(ctx, inputs, output):
            ctx.a = inputs[1]

        op.register_autograd(lambda ctx, g: (op(g, ctx.a), None), setup_context=setup)
        _scale_op.op = op
    return _scale_op.op


def test_kernel_op_schema_sources():
    common = dict(
        kernel="scale",
        grid=lambda x, a: (x.numel(),),
        args=lambda x, a, out: (x, a, out, x.numel()),
    )
    op = torch_ocl.kernel_op(
        "ocl_test::scale_schema", SCALE, out=lambda x, a: torch.empty_like(x),
        schema="(Tensor x, float a) -> Tensor", **common,
    )
    x = torch.randn(6)
    assert torch.equal(op(x.to("ocl"), 0.5).cpu(), x * 0.5)

    def out(x: torch.Tensor, a: float) -> torch.Tensor:
        return torch.empty_like(x)

    op2 = torch_ocl.kernel_op("ocl_test::scale_annotated", SCALE, out=out, **common)
    assert str(op2._opoverload._schema).endswith("(Tensor x, float a) -> Tensor")
    with pytest.raises(TypeError, match="'alpha' of `out` is not a parameter"):
        torch_ocl.kernel_op("ocl_test::bad", SCALE, out=lambda x, alpha: x, **common)


def test_kernel_op_autograd_opcheck_and_compile():
    op = _scale_op()
    x = torch.randn(5, 7)
    ox = x.to("ocl").requires_grad_()
    y = op(ox, 3.0)
    assert torch.equal(y.detach().cpu(), x * 3.0)
    y.sum().backward()
    assert torch.equal(ox.grad.cpu(), torch.full_like(x, 3.0))
    torch.library.opcheck(op, (torch.randn(4, 3, device="ocl"), 2.0))
    # PyTorch's autograd-registration check knows only CPU/CUDA/XPU; the rest also with grads.
    torch.library.opcheck(
        op,
        (torch.randn(4, 3, device="ocl", requires_grad=True), 2.0),
        test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"),
    )
    counter = CompileCounterWithBackend("inductor")
    f = torch.compile(lambda v: op(v.sin(), 2.0) + 1, fullgraph=True, backend=counter)
    with torch_ocl.strict():
        got = f(x.to("ocl"))
    assert_close(got, 2 * x.sin() + 1)
    assert counter.frame_count == 1


def _addmm_act_graph(act):
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(b, x, w):
        return act(torch.addmm(b, x, w))

    args = [torch.randn(96, device="ocl"), torch.randn(64, 80, device="ocl"),
            torch.randn(80, 96, device="ocl")]
    with torch._subclasses.FakeTensorMode(allow_non_fake_inputs=True):
        gm = make_fx(f, tracing_mode="fake")(*args)
    return gm


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh"])
def test_addmm_activation_rewrite(monkeypatch, act):
    """The post-grad rewrite of addmm + relu/gelu into aten._addmm_activation, checked on the
    graph (it only runs where torch-ocl has a native _addmm_activation kernel)."""
    from torch_ocl._inductor import config, lowering

    fn = {"relu": torch.relu, "gelu": torch.nn.functional.gelu,
          "gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh")}[act]
    monkeypatch.setattr(lowering, "has_native_addmm_activation", lambda: False)
    gm = _addmm_act_graph(fn)
    assert lowering.rewrite_addmm_activation(gm.graph) == 0
    monkeypatch.setattr(lowering, "has_native_addmm_activation", lambda: True)
    with config.patch(small_mm_max_macs=0):
        n = lowering.rewrite_addmm_activation(gm.graph)
    targets = [nd.target for nd in gm.graph.nodes if nd.op == "call_function"]
    if act == "gelu_tanh":  # not what _addmm_activation computes off CUDA
        assert n == 0 and torch.ops.aten.addmm.default in targets
        return
    assert n == 1
    assert targets == [torch.ops.aten._addmm_activation.default]
    (node,) = [nd for nd in gm.graph.nodes if nd.op == "call_function"]
    assert node.kwargs["use_gelu"] is (act == "gelu")
    with config.patch(small_mm_max_macs=1 << 30):  # a product lowered as a reduction: kept
        assert lowering.rewrite_addmm_activation(_addmm_act_graph(fn).graph) == 0


@pytest.mark.skipif(
    not torch._C._dispatch_has_kernel_for_dispatch_key("aten::_addmm_activation", "PrivateUse1"),
    reason="no native aten::_addmm_activation for ocl in this build",
)
@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_addmm_activation_compiled_matches_cpu(act):
    from torch._inductor.utils import run_and_get_code

    from torch_ocl._inductor import config

    fn = torch.relu if act == "relu" else torch.nn.functional.gelu
    b, x, w = torch.randn(96), torch.randn(64, 80), torch.randn(80, 96)
    with torch_ocl.strict(), config.patch(small_mm_max_macs=0):
        got, code = run_and_get_code(torch.compile(lambda b, x, w: fn(torch.addmm(b, x, w))),
                                     *to_ocl(b, x, w))
    assert "_addmm_activation" in code[0]
    assert_close(got, fn(torch.addmm(b, x, w)), atol=1e-4, rtol=1e-4)


def test_addmm_bias_add_fuses_into_the_consumer():
    from torch._inductor.utils import run_and_get_code

    from torch_ocl._inductor import config

    def f(b, x, w, r):
        h = torch.addmm(b, x, w)  # above the small-product threshold: the eager GEMM
        return torch.nn.functional.gelu(h) + r, torch.addmm(b, x, w, beta=0.5, alpha=-2.0)

    b, x, w, r = torch.randn(96), torch.randn(64, 80), torch.randn(80, 96), torch.randn(64, 96)
    with torch_ocl.strict(), config.patch(small_mm_max_macs=0):
        got, code = run_and_get_code(torch.compile(f), *to_ocl(b, x, w, r))
    # The first product feeds gelu: bias and gelu in the GEMM (_addmm_activation), the residual
    # add a kernel. The second is a graph output only: the bias (scaled by beta) stays in the
    # eager addmm's epilogue rather than a bias-add kernel of its own.
    assert "_addmm_activation" in code[0] and code[0].count("extern_kernels.addmm(") == 1
    assert code[0].count("async_compile_ocl(") == 1
    for g, e in zip(got, f(b, x, w, r)):
        assert_close(g, e, atol=1e-4, rtol=1e-4)
    torch._dynamo.reset()
    with torch_ocl.strict(), config.patch(small_mm_max_macs=0, unfuse_addmm_bias=False):
        got, code = run_and_get_code(torch.compile(f), *to_ocl(b, x, w, r))
    assert "extern_kernels.addmm(" in code[0]
    for g, e in zip(got, f(b, x, w, r)):
        assert_close(g, e, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.float16])
def test_column_reductions(dtype):
    """Reductions over a strided dim on CPU drivers take the column shape (a work item per
    config.column_lanes neighbouring columns, the rows walked once): sums, extrema with NaN,
    argmax/argmin with ties, Welford, softmax over dim 0 (three loop stages with stores inside
    the last), a layer-norm weight gradient, 3-d and transposed inputs, 1 and 257 rows, widths
    that take 8..64 lanes and widths that keep one work item per column. Checks the shape is
    taken (its lane loop in the source) and that column_lanes=0 turns it off."""
    from torch._inductor.utils import run_and_get_code

    from torch_ocl._inductor import config

    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).fp64:
        pytest.skip("device lacks cl_khr_fp64")
    is_float = dtype.is_floating_point

    def f(x, g, y3):
        out = [x.sum(0), x.amax(0), x.amin(0), x.argmax(0), x.argmin(0), y3.sum((0, 1)),
               y3.sum(1), x.t().contiguous().t().sum(0)]
        if is_float:
            xf = x.float() if dtype == torch.float16 else x
            out += [*torch.var_mean(xf, 0), torch.softmax(xf, 0),
                    (g * torch.nn.functional.layer_norm(xf, xf.shape[-1:])).sum(0)]
        return out

    gen = torch.Generator().manual_seed(5)
    for rows, cols in ((257, 768), (1, 128), (33, 40), (9, 8), (64, 12)):
        if is_float:
            x = (torch.randn(rows, cols, generator=gen) * 3).to(dtype)
            g = torch.randn(rows, cols, generator=gen)
            g = g.double() if dtype == torch.float64 else g
            if rows > 4:
                x[3, 1] = float("nan")
                x[rows - 1, cols - 1] = float("nan")  # the last row of the last lane
                x[2, 2] = x[4, 2] = x.abs().max() + 1  # a tie: the first index wins
        else:
            x = torch.randint(-50, 50, (rows, cols), generator=gen, dtype=dtype)
            g = x
        y3 = x[: max(rows // 3, 1)].reshape(-1, 1, cols).expand(-1, 3, cols) * 2
        with torch_ocl.strict():
            torch._dynamo.reset()
            got, code = run_and_get_code(torch.compile(f, dynamic=False), *to_ocl(x, g, y3))
        expected = f(x, g, y3)
        if cols % 8 == 0 and cols > 8 and rows > 1:
            assert "xs + xl" in code[0], (rows, cols)
        for a, e in zip(got, expected):
            if e.dtype.is_floating_point:
                tol = {torch.float64: 1e-10, torch.float16: 2e-3}.get(e.dtype, 5e-5)
                torch.testing.assert_close(a.cpu(), e.to(a.dtype), atol=tol * 30, rtol=tol,
                                           equal_nan=True, msg=f"{rows}x{cols}")
            else:
                assert torch.equal(a.cpu(), e), (rows, cols)
    torch._dynamo.reset()
    with torch_ocl.strict(), config.patch(column_lanes=0):
        _, code = run_and_get_code(torch.compile(lambda x: x.sum(0)), x.to("ocl"))
    assert "xs + xl" not in code[0]
