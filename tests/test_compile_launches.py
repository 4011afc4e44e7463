"""Fewer launches per compiled graph on ocl: kernels with slack joining later combo launches,
combo kernels passing shared and in-place arguments once, addmm's bias in the GEMM epilogue
where nothing would fuse it, and a stack of many tiny tensors fused into its reader.

Every numeric test runs in strict mode and compares with CPU PyTorch on the same inputs. Launch
counts are upper bounds (or differences between two compiles in one process) of deterministic
counts, never timings. They are counted with the host BLAS doing float32 products as on a
machine whose BLAS is as wide as the device: where it is narrower (OpenBLAS's AVX2 kernels on an
AVX-512 CPU), cpu_tile runs them instead and packs a B read transposed in a launch of its own.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torch_ocl
from torch._inductor.utils import run_and_get_code

pytestmark = pytest.mark.usefixtures("fresh_dynamo")


@pytest.fixture(autouse=True)
def wide_blas_rule():
    """The provider rule of a host BLAS as wide as the device, whatever this machine's is."""
    torch_ocl._C._set_host_blas_narrow_override(0)
    yield
    torch_ocl._C._set_host_blas_narrow_override(-1)


def assert_close(actual, expected, atol=1e-5, rtol=1e-5):
    torch.testing.assert_close(actual.cpu(), expected, atol=atol, rtol=rtol)


def launches(fn, *args):
    fn(*args)  # compile, first run
    before = torch_ocl._C._kernel_launch_count()
    out = fn(*args)
    return out, torch_ocl._C._kernel_launch_count() - before


def compiled_backward_launches(cpu_model, x):
    """A copy of cpu_model on ocl, its forward compiled: the gradients of
    ``model(x).square().sum()`` and the launches of the second forward + backward."""
    import copy

    model = copy.deepcopy(cpu_model).to("ocl")
    fwd = torch.compile(model)
    xo = x.to("ocl")

    def step():
        model.zero_grad(set_to_none=True)
        fwd(xo).square().sum().backward()

    step()
    before = torch_ocl._C._kernel_launch_count()
    step()
    return [p.grad for p in model.parameters()], torch_ocl._C._kernel_launch_count() - before


def with_default_grouping(fn):
    """fn run with Inductor's own combo grouping (nodes of one topological level only), with
    the compile caches off (the grouping is not part of their keys)."""
    import torch._inductor.config as inductor_config
    from torch._inductor.scheduler import ForeachKernelSchedulerNode

    from torch_ocl._inductor import combo, register_inductor

    register_inductor()
    ForeachKernelSchedulerNode.set_group_algorithm_for_combo_kernels(
        ForeachKernelSchedulerNode._default_group_nodes_for_combo_kernels)
    try:
        with inductor_config.patch(force_disable_caches=True):
            return fn()
    finally:
        combo.install()


def test_reduction_with_slack_joins_a_later_launch():
    """h.sum(0) (a bias gradient) is ready next to the second GEMM but read only by the output:
    it runs in the launch of the kernel after that GEMM. One launch fewer than Inductor's
    grouping, the same results as CPU."""
    from torch_ocl._inductor import config

    def f(x, w1, w2):
        h = x @ w1
        s = h.sum(0)
        y = torch.tanh(h @ w2) + h[:, :7]  # h lives on: the move costs no memory
        return s, y

    torch.manual_seed(0)
    args = (torch.randn(33, 20), torch.randn(20, 31), torch.randn(31, 7))
    oargs = [a.to("ocl") for a in args]
    expected = f(*args)
    with torch_ocl.strict(), config.patch(small_mm_max_macs=0):
        (s, y), ours = launches(torch.compile(f), *oargs)
        torch._dynamo.reset()
        (s2, y2), theirs = with_default_grouping(lambda: launches(torch.compile(f), *oargs))
    for got in ((s, y), (s2, y2)):
        assert_close(got[0], expected[0], atol=1e-4)
        assert_close(got[1], expected[1], atol=1e-5)
    assert ours == theirs - 1, (ours, theirs)


def test_backward_bias_sums_share_launches():
    """A 3-layer MLP's backward: the bias sums join other kernels' launches (fewer launches
    than Inductor's grouping), gradients equal to CPU."""
    from torch_ocl._inductor import config

    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.Tanh(), torch.nn.Linear(40, 40),
                              torch.nn.Tanh(), torch.nn.Linear(40, 5))
    x = torch.randn(17, 24)
    cpu(x).square().sum().backward()
    expected = [p.grad.clone() for p in cpu.parameters()]

    def run():
        return compiled_backward_launches(cpu, x)

    # (products ungrouped: the grouping of independent products is tested below)
    with torch_ocl.strict(), config.patch(small_mm_max_macs=0, group_mm_max_macs=0):
        grads, ours = run()
        torch._dynamo.reset()
        grads2, theirs = with_default_grouping(run)
    for g, g2, e in zip(grads, grads2, expected):
        assert_close(g, e, atol=1e-4, rtol=1e-4)
        assert_close(g2, e, atol=1e-4, rtol=1e-4)
    assert ours < theirs, (ours, theirs)


def test_inplace_foreach_with_shared_scalar_is_one_launch():
    """40 tensors scaled in place by one 0-d device tensor (clip_grad_norm_'s last step): each
    tensor is passed once (not as input and output), the scalar once for all, static sizes as
    literals: one launch within PoCL's 1024 bytes of arguments. Odd sizes, a transposed view
    and an empty tensor included."""
    torch.manual_seed(0)
    ps = [torch.randn(i * 7 + 1) for i in range(38)] + [torch.randn(5, 3).t(), torch.randn(0)]
    coef = torch.tensor(0.37)

    def f(ps, c):
        torch._foreach_mul_(ps, c)

    ops, oc = [p.to("ocl") for p in ps], coef.to("ocl")
    with torch_ocl.strict():
        _, n = launches(torch.compile(f), ops, oc)
    f(ps, coef)
    f(ps, coef)
    for a, b in zip(ops, ps):
        assert_close(a, b)
    assert n == 1, f"{n} launches"


def test_adamw_over_many_parameters_few_launches():
    """Compiled AdamW over 30 parameters: in-place tensors passed once (and their offsets as
    uint element offsets where the device's allocation limit allows), so 12-16 parameters per
    launch (2-3 launches, not one per parameter); parameters equal to CPU."""
    torch.manual_seed(0)
    cpu_ps = [torch.nn.Parameter(torch.randn(3 * i + 2)) for i in range(30)]
    grads = [torch.randn(p.shape) for p in cpu_ps]
    ocl_ps = [torch.nn.Parameter(p.detach().to("ocl")) for p in cpu_ps]
    runs = []
    for ps, dev in ((cpu_ps, "cpu"), (ocl_ps, "ocl")):
        opt = torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1)
        runs.append((ps, opt, torch.compile(opt.step) if dev == "ocl" else opt.step, dev))
    n = None
    with torch_ocl.strict():
        for i in range(3):
            for ps, opt, step, dev in runs:
                for p, g in zip(ps, grads):
                    p.grad = g.to(dev)
                before = torch_ocl._C._kernel_launch_count()
                step()
                if dev == "ocl" and i == 2:
                    n = torch_ocl._C._kernel_launch_count() - before
    for a, b in zip(ocl_ps, cpu_ps):
        assert_close(a.detach(), b.detach(), atol=2e-5, rtol=2e-5)
    assert n <= 3, f"{n} launches"


def test_addmm_feeding_only_externs_keeps_the_bias_in_the_gemm():
    """linear -> another GEMM: the bias stays in the eager addmm's epilogue (no bias-add
    kernel); linear -> tanh keeps mm plus a bias add that fuses into the tanh kernel."""
    from torch_ocl._inductor import config

    def to_extern(x, w, b, w2):
        return F.linear(x, w, b) @ w2

    def to_pointwise(x, w, b):
        return torch.tanh(F.linear(x, w, b)) * 2

    torch.manual_seed(0)
    x, w, b, w2 = torch.randn(9, 16), torch.randn(12, 16), torch.randn(12), torch.randn(12, 5)
    with torch_ocl.strict(), config.patch(small_mm_max_macs=0):
        oargs = [t.to("ocl") for t in (x, w, b, w2)]
        out, (code,) = run_and_get_code(torch.compile(to_extern), *oargs)
        assert_close(out, to_extern(x, w, b, w2), atol=1e-4)
        assert "extern_kernels.addmm(" in code and "ocl_kernel_" not in code
        out, (code,) = run_and_get_code(torch.compile(to_pointwise), *oargs[:3])
        assert_close(out, to_pointwise(x, w, b), atol=1e-4)
        assert "extern_kernels.mm(" in code and code.count("async_compile_ocl(") == 1


def test_stack_of_many_norms_fuses_into_the_total_norm():
    """clip_grad_norm_'s total norm of 30 per-tensor norms: the stack is a pointwise op inside
    the reduction (one generated kernel, not a copy kernel and then the reduction)."""
    torch.manual_seed(0)
    ts = [torch.randn(i + 2) for i in range(30)]

    def f(ts):
        norms = torch._foreach_norm(ts)
        return torch.linalg.vector_norm(torch.stack(norms), 2)

    ots = [t.to("ocl") for t in ts]
    with torch_ocl.strict():
        out, n = launches(torch.compile(f), ots)
        _, n_norm = launches(torch._foreach_norm, ots)
    assert_close(out, f(ts), atol=1e-5)
    assert n - n_norm == 1, (n, n_norm)


def test_grouping_is_installed_for_inductor():
    from torch._inductor.scheduler import ForeachKernelSchedulerNode

    from torch_ocl._inductor import combo, register_inductor

    register_inductor()
    assert (ForeachKernelSchedulerNode.group_algorithm_for_combo_kernels
            is combo.group_nodes_for_combo_kernels)


def test_compile_kernel_uint_element_offsets():
    """A uint after a buffer receives the tensor's offset in elements (what the generated
    kernels use where it always fits): views bind at their storage offset, float32 and int64."""
    lib = torch_ocl.compile_kernel("""
    __kernel void axpy(__global const float* x, uint x_off, __global float* out, uint out_off,
                       __global const long* idx, uint idx_off, float a, long n) {
      x += x_off; out += out_off; idx += idx_off;
      const long i = get_global_id(0);
      if (i < n) out[i] = a * x[i] + (float)idx[i];
    }""")
    assert [p[0] for p in lib.axpy.params] == ["x", "out", "idx", "a", "n"]
    base = torch.arange(20.0)
    ids = torch.arange(30)
    x = base.to("ocl")[3:13]
    out = torch.zeros(12, device="ocl")[2:]
    idx = ids.to("ocl")[7:17]
    lib.axpy(x, out, idx, 2.5, 10, global_size=(16,), local_size=(8,))
    assert torch.equal(out.cpu(), base[3:13] * 2.5 + ids[7:17].float())


def _host_blas() -> bool:
    return bool(torch_ocl._C._host_blas_info()["available"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mm_group_matches_cpu(dtype):
    """torch_ocl::mm_group on transposed, sliced, odd-sized and empty operands: each product
    equal to CPU's; grouped products are one launch where the host BLAS takes them."""
    torch.manual_seed(0)
    a = [torch.randn(37, 19, dtype=dtype), torch.randn(53, 37, dtype=dtype).t(),
         torch.randn(9, 30, dtype=dtype)[:, ::3], torch.randn(5, 7, dtype=dtype)]
    b = [torch.randn(19, 66, dtype=dtype), torch.randn(53, 11, dtype=dtype),
         torch.randn(10, 4, dtype=dtype), torch.randn(7, 0, dtype=dtype)]
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    for pick in ([0, 1], [0, 1, 2], [0, 1, 2, 3]):
        oa, ob = [a[i].to("ocl") for i in pick], [b[i].to("ocl") for i in pick]
        with torch_ocl.strict():
            out, n = launches(torch.ops.torch_ocl.mm_group, oa, ob)
        for k, i in enumerate(pick):
            assert out[k].shape == (a[i].shape[0], b[i].shape[1])
            assert_close(out[k], a[i] @ b[i], atol=tol, rtol=tol)
        if _host_blas() and 3 not in pick:
            assert n == 1, (pick, n)


def test_backward_input_and_weight_gradients_share_a_launch():
    """A compiled MLP's backward: each layer's input and weight gradients (independent products
    above the small-product threshold) run as one torch_ocl::mm_group, one launch each pair
    fewer than without the grouping; gradients equal to CPU."""
    from torch_ocl._inductor import config

    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(72, 96), torch.nn.GELU(), torch.nn.Linear(96, 80),
                              torch.nn.Tanh(), torch.nn.Linear(80, 40))
    x = torch.randn(33, 72)
    cpu(x).square().sum().backward()
    expected = [p.grad.clone() for p in cpu.parameters()]

    def run():
        return compiled_backward_launches(cpu, x)

    with torch_ocl.strict():
        grads, grouped = run()
        torch._dynamo.reset()
        with config.patch(group_mm_max_macs=0):
            grads2, single = run()
    for g, g2, e in zip(grads, grads2, expected):
        assert_close(g, e, atol=1e-4, rtol=1e-4)
        assert_close(g2, e, atol=1e-4, rtol=1e-4)
    if _host_blas():
        # layers 2 and 3: (input, weight) gradient pairs; layer 1 needs no input gradient
        assert grouped <= single - 2, (grouped, single)


@pytest.mark.parametrize("provider", ["auto", "tiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_addmm_with_activation_matches_cpu(dtype, provider):
    """torch_ocl::addmm_with_activation: the product with its bias and the activation, both
    equal to CPU's addmm and relu/gelu; transposed and sliced operands, a column bias, beta and
    alpha, an empty inner dimension; one launch where the host BLAS runs it."""
    torch.manual_seed(0)
    tol = 2e-5 if dtype == torch.float32 else 1e-12
    cases = [
        (torch.randn(37, dtype=dtype), torch.randn(29, 21, dtype=dtype),
         torch.randn(37, 21, dtype=dtype).t(), 1, 1),
        (torch.randn(29, 1, dtype=dtype), torch.randn(29, 42, dtype=dtype)[:, ::2],
         torch.randn(21, 37, dtype=dtype), 0.5, -2.0),
        (torch.randn(5, 6, dtype=dtype), torch.randn(5, 0, dtype=dtype),
         torch.randn(0, 6, dtype=dtype), 1, 1),
        (torch.randn(6, dtype=dtype), torch.randn(4, 3, dtype=dtype),
         torch.randn(3, 6, dtype=dtype), 0, 1),
    ]
    for i, (bias, m1, m2, beta, alpha) in enumerate(cases):
        for use_gelu in (False, True):
            args = [t.to("ocl") for t in (bias, m1, m2)]
            op = torch.ops.torch_ocl.addmm_with_activation
            # tiled: a provider without the second output (the activation then runs as an op)
            torch_ocl._C._set_gemm_provider(provider)
            try:
                with torch_ocl.strict():
                    (pre, act), n = launches(
                        lambda *a: op(*a, beta=beta, alpha=alpha, use_gelu=use_gelu), *args)
            finally:
                torch_ocl._C._set_gemm_provider("auto")
            want = torch.addmm(bias, m1, m2, beta=beta, alpha=alpha)
            assert_close(pre, want, atol=tol, rtol=tol)
            assert_close(act, F.gelu(want) if use_gelu else F.relu(want), atol=tol, rtol=tol)
            if _host_blas() and i < 2 and provider == "auto":
                assert n == 1, (i, n)


def test_linear_gelu_saved_pre_activation_one_launch():
    """A compiled 3-D linear -> exact GELU -> linear in training: the first product, its bias
    and the GELU are one torch_ocl::addmm_with_activation (the pre-activation kept for GELU's
    backward), one launch fewer per forward than the product plus a generated bias + GELU
    kernel; output and gradients equal to CPU."""
    from torch_ocl._inductor import config

    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.GELU(), torch.nn.Linear(96, 40))
    x = torch.randn(4, 9, 48)
    out_cpu = cpu(x)
    out_cpu.square().sum().backward()
    expected = [p.grad.clone() for p in cpu.parameters()]

    def run():
        import copy

        model = copy.deepcopy(cpu).to("ocl")
        fwd = torch.compile(model)
        xo = x.to("ocl")
        fwd(xo)
        before = torch_ocl._C._kernel_launch_count()
        out = fwd(xo)
        n = torch_ocl._C._kernel_launch_count() - before
        out.square().sum().backward()
        return out, [p.grad for p in model.parameters()], n

    with torch_ocl.strict():
        out, grads, paired = run()
        torch._dynamo.reset()
        with config.patch(addmm_activation_pair=False):
            out2, grads2, single = run()
    for o in (out, out2):
        assert_close(o.detach(), out_cpu.detach(), atol=1e-5, rtol=1e-5)
    for g, g2, e in zip(grads, grads2, expected):
        assert_close(g, e, atol=1e-4, rtol=1e-4)
        assert_close(g2, e, atol=1e-4, rtol=1e-4)
    assert paired == single - 1, (paired, single)


def test_small_gpt_compiled_step_launches_and_cpu_parity():
    """examples/gpt.py's small model, its whole training step compiled (forward, backward,
    clipping, AdamW), in strict mode: at most 47 launches per step (59 before the grouped
    products and addmm_with_activation, 49 before the position embedding as a slice and the
    tied output weight's gradient in a product group; eager 101), parameters after 3 steps
    equal to the same steps on CPU."""
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from examples import gpt

    def run(device, compiled):
        w = gpt.workload(device, small=True, dropout=0.0)
        names = w.step.__code__.co_freevars
        if compiled:  # the batch iterator stays outside the graphs (as benchmarks/compile.py)
            cell = w.step.__closure__[names.index("next_batch")]
            cell.cell_contents = torch._dynamo.disable(cell.cell_contents)
        step = torch.compile(w.step) if compiled else w.step
        n = None
        for i in range(3):
            before = torch_ocl._C._kernel_launch_count()
            step()
            if i == 2:
                n = torch_ocl._C._kernel_launch_count() - before
        return [p.detach().cpu() for p in w.model.parameters()], n

    expected, _ = run("cpu", False)
    with torch_ocl.strict():
        got, n = run("ocl", True)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=2e-4, rtol=2e-4)
    assert n <= 47, n


def test_3d_linear_gelu_inference_is_one_gemm_call():
    """Inference of a 3-D linear -> exact GELU (the reshape between the addmm and the GELU):
    one aten._addmm_activation (bias and GELU in the GEMM), no generated kernel for the
    first layer; output equal to CPU."""
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.GELU()).eval()
    x = torch.randn(4, 9, 48)
    model = copy_to_ocl(cpu)
    with torch.no_grad(), torch_ocl.strict():
        out, (code,) = run_and_get_code(torch.compile(model), x.to("ocl"))
        _, n = launches(torch.compile(model), x.to("ocl"))
    with torch.no_grad():
        assert_close(out, cpu(x), atol=1e-5, rtol=1e-5)
    assert "_addmm_activation" in code and "async_compile_ocl(" not in code
    assert n == 1, n


def copy_to_ocl(module):
    import copy

    return copy.deepcopy(module).to("ocl")


def test_arange_position_embedding_is_a_slice():
    """A GPT's position embedding, F.embedding(arange(t), weight), compiled for training: with
    config.arange_embedding_as_slice the forward reads weight[:t] in place (no gather kernel of
    its own), one launch fewer than without; output and gradients (padding rows of a longer
    table included) equal to CPU in strict mode. An arange with padding_idx keeps embedding."""
    from torch_ocl._inductor import config

    torch.manual_seed(0)
    tok, pos = torch.randn(50, 24), torch.randn(20, 24)
    idx = torch.randint(0, 50, (3, 13))

    def f(idx, tok, pos, padding_idx=None):
        t = idx.shape[1]
        p = F.embedding(torch.arange(t, device=idx.device), pos, padding_idx=padding_idx)
        return F.layer_norm(F.embedding(idx, tok) + p, (24,)).tanh()

    def run(padding_idx=None):
        leaves = [t.clone().requires_grad_() for t in (tok, pos)]
        out = f(idx, *leaves, padding_idx)
        out.square().sum().backward()
        return out.detach(), [t.grad for t in leaves]

    expected = run()
    expected_padded = run(padding_idx=5)
    counts = {}
    with torch_ocl.strict():
        for on in (True, False):
            torch._dynamo.reset()
            with config.patch(arange_embedding_as_slice=on):
                leaves = [t.to("ocl").requires_grad_() for t in (tok, pos)]
                g = torch.compile(f)
                oidx = idx.to("ocl")
                g(oidx, *leaves)
                before = torch_ocl._C._kernel_launch_count()
                out = g(oidx, *leaves)
                counts[on] = torch_ocl._C._kernel_launch_count() - before
                out.square().sum().backward()
            assert_close(out.detach(), expected[0], atol=1e-5)
            for a, e in zip(leaves, expected[1]):
                assert_close(a.grad, e, atol=1e-4, rtol=1e-4)
        torch._dynamo.reset()
        leaves = [t.to("ocl").requires_grad_() for t in (tok, pos)]
        out = torch.compile(f)(idx.to("ocl"), *leaves, 5)
        out.square().sum().backward()
    assert_close(out.detach(), expected_padded[0], atol=1e-5)
    for a, e in zip(leaves, expected_padded[1]):
        assert_close(a.grad, e, atol=1e-4, rtol=1e-4)
    assert counts[True] == counts[False] - 1, counts


def test_tied_output_weight_gradient_joins_the_input_gradient_group():
    """Weight tying (a GPT's token embedding and output layer): Inductor adds the output
    layer's weight gradient to the embedding's as addmm(embedding grad, dlogits^T, h). Split
    back into mm + add, the product runs in one torch_ocl::mm_group with the output layer's
    input gradient (started long before) and the add joins the last combo launch: one launch
    fewer than with the grouping off; gradients equal to CPU in strict mode."""
    from torch_ocl._inductor import config

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = torch.nn.Embedding(64, 32)
            self.pos = torch.nn.Embedding(16, 32)
            self.ln = torch.nn.LayerNorm(32)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
            return F.linear(self.ln(x), self.tok.weight)

    torch.manual_seed(0)
    cpu = Tied()
    idx = torch.randint(0, 64, (4, 16))
    cpu(idx).square().sum().backward()
    expected = [p.grad.clone() for p in cpu.parameters()]
    with torch_ocl.strict():
        grads, grouped = compiled_backward_launches(cpu, idx)
        torch._dynamo.reset()
        with config.patch(group_mm_max_macs=0):
            grads2, single = compiled_backward_launches(cpu, idx)
    for g, g2, e in zip(grads, grads2, expected):
        assert_close(g, e, atol=1e-4, rtol=1e-4)
        assert_close(g2, e, atol=1e-4, rtol=1e-4)
    if _host_blas():
        assert grouped == single - 1, (grouped, single)
