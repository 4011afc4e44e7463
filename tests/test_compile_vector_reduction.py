"""Vector reductions of the compiled path on CPU drivers (codegen.OclKernel.vec_red): a work
item walks its row in chunks of 16 elements with float16/int16 accumulators, combined across the
lanes after the loop. Against CPU PyTorch on the same inputs, in strict mode: rows that are and
are not multiples of 16 (the last chunk's lanes past the end repeat the last element and are
masked out of sums and Welford), NaN and infinities, fully masked rows, dynamic sizes, backward
graphs, and the scalar kernel for what has no vector form."""

from __future__ import annotations

import functools

import pytest
import torch
import torch_ocl
from torch._inductor import config as inductor_config

from test_compile_vector import _close as _close_tight
from test_compile_vector import _on_cpu_driver
from test_compile_vector import _run as _run_strict
from torch_ocl._inductor import config

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

F = torch.nn.functional
# (sums in another order than CPU's: float32 tolerances for reductions)
_close = functools.partial(_close_tight, atol=1e-5, rtol=1e-5)


def _run(fn, *args, **kw):
    # (caches off: the FX graph cache would hand back code generated before)
    with inductor_config.patch(force_disable_caches=True):
        return _run_strict(fn, *args, **kw)


def _rows(x, w, b):
    return [torch.softmax(x, -1), torch.log_softmax(x, -1), x.sum(-1), x.mean(-1),
            x.amax(-1), x.amin(-1), *torch.var_mean(x, -1), F.layer_norm(x, x.shape[-1:], w, b),
            x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), (x > 2.5).any(-1),
            torch.logsumexp(x, -1)]


@pytest.mark.parametrize("r", [64, 1000, 17, 9, 16, 1027])
def test_row_reductions_match_cpu(r):
    g = torch.Generator().manual_seed(r)
    x = torch.randn(37, r, generator=g) * 3
    w, b = torch.randn(r, generator=g), torch.randn(r, generator=g)
    got, code = _run(_rows, x, w, b, dynamic=False)
    _close(got, _rows(x, w, b), atol=2e-5, rtol=2e-5)
    if _on_cpu_driver():
        assert "r0_valid" in code  # vector reductions
        # a partial last chunk only where r is not a multiple of 16
        assert ("rfull = false" in code) == (r % 16 != 0)


def test_nan_inf_and_masked_rows():
    x = torch.randn(8, 40)
    x[0, 3] = float("nan")  # NaN wins in max, min and sums
    x[1, 39] = float("nan")  # in the partial last chunk
    x[2, :] = -float("inf")  # a fully masked row
    x[3, 7] = float("inf")
    x[4, 33] = -float("inf")

    def fn(t):
        return [t.amax(-1), t.amin(-1), t.sum(-1), torch.ops.aten._safe_softmax(t, -1),
                torch.isinf(t).any(-1), torch.isnan(t).any(-1)]

    got, _ = _run(fn, x, dynamic=False)
    _close(got, fn(x))


def test_integer_max_min():
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-1000, 1000, (9, 45), generator=g, dtype=torch.int32)

    def fn(t):
        return [t.amax(-1), t.amin(-1), (t > 900).any(-1)]

    got, _ = _run(fn, x, dynamic=False)
    _close(got, fn(x))


def test_attention_softmax_with_causal_mask():
    g = torch.Generator().manual_seed(6)
    s = torch.randn(2, 3, 24, 24, generator=g)
    mask = torch.ones(24, 24, dtype=torch.bool).tril()

    def fn(t, m):
        return torch.softmax(t.masked_fill(~m, float("-inf")), -1)

    with torch_ocl.strict():
        got = torch.compile(fn, dynamic=False)(s.to("ocl"), mask.to("ocl"))
    _close(got, fn(s, mask))


def test_backward_matches_cpu():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(33, 70, generator=g)
    w, b = torch.randn(70, generator=g), torch.randn(70, generator=g)

    def fn(t, w, b):
        y = F.layer_norm(t, (70,), w, b)
        return (torch.softmax(y, -1) * torch.arange(70.0, device=t.device)).sum()

    leaves = [a.clone().requires_grad_() for a in (x, w, b)]
    fn(*leaves).backward()
    dev = [a.to("ocl").requires_grad_() for a in (x, w, b)]
    with torch_ocl.strict():
        out = torch.compile(fn, dynamic=False)(*dev)
        out.backward()
    _close(out.detach(), fn(*[a.detach() for a in leaves]), atol=1e-4, rtol=1e-4)
    for d, c in zip(dev, leaves):
        _close(d.grad, c.grad, atol=1e-4, rtol=1e-4)


def test_dynamic_row_lengths():
    def fn(t):
        return torch.softmax(t * 2, -1), t.var(-1)

    cf = torch.compile(fn, dynamic=True)
    for r in (20, 48, 7):
        x = torch.randn(6, r)
        with torch_ocl.strict():
            got = cf(x.to("ocl"))
        _close(list(got), list(fn(x)))


def test_transposed_rows_and_switch():
    g = torch.Generator().manual_seed(8)
    x = torch.randn(40, 24, generator=g)

    def fn(t):
        return t.t().softmax(-1), t.t().sum(-1)  # rows along x's columns: strided

    got, _ = _run(fn, x, dynamic=False)
    _close(list(got), list(fn(x)))
    with config.patch(vector_reductions=False):
        torch._dynamo.reset()
        got, code = _run(lambda t: torch.softmax(t, -1), x, dynamic=False)
    _close(got, torch.softmax(x, -1))
    assert "r0_valid" not in code


@pytest.mark.parametrize("shape", [(50, 64), (9, 1024), (33, 48)])
def test_column_reductions_match_cpu(shape):
    # reductions over the leading dim: the column shape, its columns the lanes of a vector
    g = torch.Generator().manual_seed(shape[1])
    x = torch.randn(*shape, generator=g) * 2
    x[3, 5] = float("nan")
    x[1, 17] = float("inf")
    i = torch.randint(-99, 99, shape, generator=g, dtype=torch.int32)

    def fn(t, i):
        return [t.sum(0), t.amax(0), t.amin(0), *torch.var_mean(t, 0), (t > 3).any(0),
                i.amax(0), (t * 2 + 1).sum(0)]

    got, code = _run(fn, x, i, dynamic=False)
    _close(got, fn(x, i), atol=2e-5, rtol=2e-5)
    if _on_cpu_driver():
        assert "const int r0_lane = 3; const int r0_index = r0_base + 3;" in code
        assert "vacc" in code and "xl <" not in code  # vector columns, not lane arrays


def test_layer_norm_weight_gradients():
    g = torch.Generator().manual_seed(9)
    x = torch.randn(4, 24, 64, generator=g)
    w, b = torch.randn(64, generator=g), torch.randn(64, generator=g)
    up = torch.randn(4, 24, 64, generator=g)

    def fn(t, w, b, up):
        return (F.layer_norm(t, (64,), w, b) * up).sum()

    leaves = [a.clone().requires_grad_() for a in (x, w, b)]
    fn(*leaves, up).backward()
    dev = [a.to("ocl").requires_grad_() for a in (x, w, b)]
    with torch_ocl.strict():
        torch.compile(fn, dynamic=False)(*dev, up.to("ocl")).backward()
    for d, c in zip(dev, leaves):
        _close(d.grad, c.grad, atol=1e-4, rtol=1e-4)
