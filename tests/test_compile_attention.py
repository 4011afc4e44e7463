"""Compiled attention on ocl: from config.sdpa_math_min_scores scores per head on, SDPA and its
backward compile as batched products and fused softmax kernels (attention.py); below it (or
with the threshold at 0) they stay calls of the eager fused attention kernels. Both against CPU,
forward and gradients, in strict mode."""

from __future__ import annotations

import pytest
import torch
import torch_ocl
import torch_ocl._attention
from torch._inductor.utils import run_and_get_code
from torch_ocl._inductor import config as ocl_config


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def check(L, S, causal, min_scores):
    B, H, E, Ev = 2, 2, 16, 8
    q = torch.randn(B, H, L, E)
    k = torch.randn(B, H, S, E)
    v = torch.randn(B, H, S, Ev)
    g = torch.randn(B, H, L, Ev)

    def f(q, k, v, g):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), g)
        return out, dq, dk, dv

    cpu = [t.clone().requires_grad_() for t in (q, k, v)]
    want = f(*cpu, g)
    dev = [t.to("ocl").requires_grad_() for t in (q, k, v)]
    with torch_ocl.strict(), ocl_config.patch(sdpa_math_min_scores=min_scores):
        got, codes = run_and_get_code(torch.compile(f), *dev, g.to("ocl"))
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, want):
        torch.testing.assert_close(a.cpu(), b, atol=2e-5, rtol=2e-5, msg=name)
    return "\n".join(codes)


@pytest.mark.parametrize("causal", [True, False])
def test_long_attention_compiles_as_products_and_softmax(causal):
    code = check(136, 136, causal, 128 * 128)
    assert "_fused_attention_overrideable.default(" not in code
    assert "_fused_attention_overrideable_backward.default(" not in code


def test_cross_attention_of_other_lengths_as_products():
    code = check(40, 200, False, 1000)
    assert "_fused_attention_overrideable.default(" not in code
    assert "_fused_attention_overrideable_backward.default(" not in code


def test_attention_beyond_the_memory_cap_keeps_the_fused_kernels():
    # (eager's own choice of the math path for this much work is off here: it would trace
    # the math path before the compiled decomposition is asked)
    old = torch_ocl._attention.set_sdpa_gemm_min_work(0)
    try:
        with ocl_config.patch(sdpa_math_max_bytes=136 * 136 * 4 * 4 - 1):  # B * H = 4 heads
            code = check(136, 136, True, 128 * 128)
    finally:
        torch_ocl._attention.set_sdpa_gemm_min_work(old)
    assert "_fused_attention_overrideable.default(" in code


def test_short_attention_keeps_the_fused_kernels():
    code = check(24, 24, True, 128 * 128)
    assert "_fused_attention_overrideable.default(" in code
    assert "_fused_attention_overrideable_backward.default(" in code
