"""Vector pointwise kernels of the compiled path on CPU drivers (codegen.OclKernel.vec): 16
elements per work item in float16/int16, against CPU PyTorch on the same inputs, in strict mode.
Covers sizes that are and are not multiples of 16 (the last work item's lanes repeat the last
element), broadcasts whose lanes are consecutive, uniform or gathered, transposed inputs,
in-place updates, combo kernels, dynamic sizes, and the fallback to scalar kernels."""

from __future__ import annotations

import logging

import pytest
import torch
import torch_ocl
from torch._inductor import config as inductor_config
from torch._inductor.utils import run_and_get_code

from torch_ocl._inductor import config

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

F = torch.nn.functional


def _on_cpu_driver() -> bool:
    return torch.ocl.get_device_properties(0).type == "CPU"


def _run(fn, *args, **kw):
    with torch_ocl.strict():
        got, code = run_and_get_code(torch.compile(fn, **kw), *[a.to("ocl") for a in args])
    return got, "\n".join(code)


def _close(got, expected, atol=2e-6, rtol=2e-6):
    got = got if isinstance(got, (list, tuple)) else [got]
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        if e.dtype.is_floating_point:
            torch.testing.assert_close(g.cpu(), e, atol=atol, rtol=rtol, equal_nan=True)
        else:
            assert torch.equal(g.cpu(), e)


def _special(x: torch.Tensor) -> torch.Tensor:
    """x with NaN, +-inf, +-0 and large values in its first elements."""
    flat = x.view(-1)
    vals = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 30.0, -30.0, 1e-30]
    flat[: min(len(vals), flat.numel())] = torch.tensor(vals[: flat.numel()])
    return x


def _math(x, y):
    # (gelu of +-inf: CPU's is NaN, ours the limit; the clamp keeps NaN)
    return [F.gelu(x.clamp(-50, 50)), torch.exp(x) * y, torch.erf(x) + 1, torch.tanh(x),
            torch.sigmoid(x),
            torch.relu(x), torch.where(x > y, x, y * 2), torch.maximum(x, y),
            torch.minimum(x, y), torch.sqrt(x.abs()) - torch.floor(y), (x < 0.5).float() * y,
            torch.ops.aten.gelu_backward(y, x), F.silu(x) / (y.abs() + 1)]


@pytest.mark.parametrize("shape", [(64, 128), (1000, 77), (17,), (3, 7)])
def test_math_matches_cpu(shape):
    g = torch.Generator().manual_seed(3)
    x = _special(torch.randn(*shape, generator=g) * 3)
    y = torch.randn(*shape, generator=g)
    got, code = _run(_math, x, y, dynamic=False)
    _close(got, _math(x, y), atol=1e-5, rtol=1e-5)
    n = x.numel()
    if _on_cpu_driver() and n >= 16:
        assert "float16 tmp" in code and "vload16" in code
        # the last work item's lanes repeat the last element where n is not a multiple of 16
        assert ("xfull" in code) == (n % 16 != 0)
    elif n < 16:
        assert "float16 tmp" not in code


def test_integers_and_conversions():
    g = torch.Generator().manual_seed(4)
    a = torch.randint(-1000, 1000, (50, 40), generator=g, dtype=torch.int32)
    b = torch.randint(1, 50, (50, 40), generator=g, dtype=torch.int32)
    x = torch.randn(50, 40, generator=g) * 100

    def f(a, b, x):
        return [a * b - a, (a & 0xFF) | b, torch.maximum(a, b), a.abs(), (x * 3).int(),
                a.float() * x, (a > b).int() + a, torch.where(a < 0, x, -x)]

    got, code = _run(f, a, b, x, dynamic=False)
    _close(got, f(a, b, x))
    if _on_cpu_driver():
        assert "int16 tmp" in code


def test_broadcasts_and_layouts():
    """A bias over the last dim (lanes consecutive where the width is a multiple of 16,
    gathered otherwise), a per-row value (uniform over a work item's lanes where the width is),
    a transposed input and a strided slice (gathered), a 0-d tensor."""
    g = torch.Generator().manual_seed(5)
    for rows, cols in ((40, 64), (33, 48), (20, 50), (7, 16)):
        x = torch.randn(rows, cols, generator=g)
        bias = torch.randn(cols, generator=g)
        row = torch.randn(rows, 1, generator=g)
        xt = torch.randn(cols, rows, generator=g).t()
        big = torch.randn(rows, 2 * cols, generator=g)
        s = torch.tensor(1.5)

        def f(x, bias, row, xt, big, s):
            return [F.gelu(x + bias), x * row + 1, torch.exp(xt) - x, big[:, ::2] * x + s]

        got, code = _run(f, x, bias, row, xt, big, s, dynamic=False)
        _close(got, f(x, bias, row, xt, big, s), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("head", [32, 16, 24])
def test_head_split_and_merge_views(head):
    """Attention's (B, T, H, D) <-> (B, H, T, D) views and a cat of the three heads' gradients
    into one (B, T, 3 H D) buffer (a compiled backward's q/k/v): where D is a multiple of 16,
    each work item's lanes are consecutive elements of one head row inside index expressions
    with ModularIndexing and FloorDiv, read with vload16, not gathered."""
    g = torch.Generator().manual_seed(8)
    B, T, H = 2, 24, 4
    q = torch.randn(B, H, T, head, generator=g)
    k = torch.randn(B, H, T, head, generator=g)
    v = torch.randn(B, T, H * head, generator=g)

    def f(q, k, v):
        merged = q.transpose(1, 2).reshape(B, T, H * head)
        qkv = torch.cat([merged * 0.5, k.transpose(1, 2).reshape(B, T, H * head), v], -1)
        split = v.view(B, T, H, head).transpose(1, 2) * 2
        return [qkv, split.contiguous()]

    got, code = _run(f, q, k, v, dynamic=False)
    _close(got, f(q, k, v))
    if _on_cpu_driver():
        gathered = [ln for ln in code.splitlines() if "const int16 vidx" in ln]
        assert bool(gathered) == (head % 16 != 0), gathered


def test_in_place_and_combo():
    """An optimizer-style in-place update (the input is also the output) and a foreach op over
    tensors of several sizes (a combo kernel of vector and scalar sub-kernels)."""
    g = torch.Generator().manual_seed(6)
    ps = [torch.randn(n, generator=g) for n in (4096, 1000, 33, 5)]
    gs = [torch.randn(n, generator=g) for n in (4096, 1000, 33, 5)]

    def step(ps, gs):
        torch._foreach_mul_(ps, 0.9)
        torch._foreach_add_(ps, torch._foreach_sqrt(torch._foreach_abs(gs)), alpha=-0.1)
        return ps

    expected = step([p.clone() for p in ps], gs)
    dev_ps = [p.to("ocl") for p in ps]
    with torch_ocl.strict():
        got, code = run_and_get_code(torch.compile(step), dev_ps, [t.to("ocl") for t in gs])
    _close(got, expected)
    _close(dev_ps, expected)  # updated in place
    if _on_cpu_driver():
        assert "vload16" in "\n".join(code)


def test_dynamic_sizes():
    g = torch.Generator().manual_seed(7)
    f = torch.compile(lambda x, b: F.gelu(x * 2 + b), dynamic=True)
    for n in (16, 40, 1003, 4096):
        x, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
        with torch_ocl.strict():
            got = f(x.to("ocl"), b.to("ocl"))
        _close(got, F.gelu(x * 2 + b), atol=1e-5, rtol=1e-5)


def test_masked_loads():
    """Masked loads (pad, cat, a rotary embedding's rotate-half, a shifted causal mask) as
    guarded gathers and a select: lanes outside the mask read nothing."""
    g = torch.Generator().manual_seed(9)

    def rope(x, cos, sin):
        half = x.shape[-1] // 2
        rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rot * sin

    def f(x, y, z, cos, sin):
        return [F.pad(x, (1, 2, 3, 0), value=-1.5).exp(), torch.cat([x, y * 2, torch.tanh(x)], 1),
                torch.cat([z, z.exp()], 0), rope(z, cos, sin),
                torch.where(torch.ones(40, 33, dtype=torch.bool, device=x.device).tril(3), x,
                            0.0) + 1]

    x, y = torch.randn(40, 33, generator=g), torch.randn(40, 16, generator=g)
    z = _special(torch.randn(3, 5, 64, generator=g))
    cos, sin = torch.randn(5, 64, generator=g), torch.randn(5, 64, generator=g)
    got, code = _run(f, x, y, z, cos, sin, dynamic=False)
    _close(got, f(x, y, z, cos, sin), atol=1e-5, rtol=1e-5)
    if _on_cpu_driver():
        assert "select(" in code and "float16 tmp" in code


def test_scalar_fallback_and_switch():
    """Kernels with something that has no vector form (float64, int64 storage, a random
    number) are generated scalar and stay correct, without messages; config.vector_pointwise=
    False keeps every kernel scalar."""
    g = torch.Generator().manual_seed(8)
    x = torch.randn(64, 32, generator=g)
    for f in (lambda x: (x * 100).long() * 3, lambda x: x.double().exp()):
        torch._dynamo.reset()
        got, code = _run(f, x, dynamic=False)
        _close(got, f(x), atol=1e-6, rtol=1e-6)
        assert "float16 tmp" not in code
    torch._dynamo.reset()
    with torch_ocl.strict():
        r = torch.compile(lambda x: torch.rand_like(x) * x)(x.to("ocl"))
    assert r.shape == x.shape and ((r.cpu().abs() <= x.abs()) | x.isnan()).all()
    torch._dynamo.reset()
    with config.patch(vector_pointwise=False):
        got, code = _run(lambda x: F.gelu(x), x, dynamic=False)
    _close(got, F.gelu(x), atol=1e-6, rtol=1e-6)
    assert "float16 tmp" not in code and "vload16" not in code


def test_no_codegen_error_messages(caplog):
    """A kernel generated scalar after the vector attempt leaves no "Error in codegen" (which
    Inductor's scheduler logs at FATAL for any exception in a node's codegen)."""
    x = torch.randn(64, 32)
    with caplog.at_level(logging.DEBUG), inductor_config.patch(force_disable_caches=True):
        got, _ = _run(lambda x: x.double().exp(), x, dynamic=False)
    _close(got, x.double().exp(), atol=1e-12, rtol=1e-12)
    assert not [r for r in caplog.records if "Error in codegen" in r.getMessage()]
    assert [r for r in caplog.records if "torch-ocl: scalar kernel (" in r.getMessage()]
