"""Long-sequence attention in compiled graphs as matrix products and fused softmax kernels.

Eager ``scaled_dot_product_attention`` on ocl runs our fused attention kernels
(``_scaled_dot_product_fused_attention_overrideable`` and its backward), and a compiled graph
calls them as extern kernels. They are fine for short sequences but slow for long ones on
CPU drivers (nanoGPT's shakespeare-char model, 4 x 256 tokens, 6 heads of 64: ~55 ms forward
and ~140 ms backward per layer on PoCL, 60 % of the step's device time). From
``config.sdpa_math_min_scores`` scores (L * S) on, AOTAutograd traces both ops through the
decompositions below instead: batched products (our GEMM) around a softmax Inductor fuses,
the backward recomputing the probabilities from the saved log-sum-exp as flash attention does.

Both decompositions decide on the same facts (ocl, static sizes, float32/float64, no dropout,
no bias, as many key/value heads as query heads), so the backward always finds the forward's
log-sum-exp in its own convention; anything else keeps the fused kernels.
"""

from __future__ import annotations

import functools
import math

import torch

aten = torch.ops.aten


def _applies(q, k, v, bias, dropout_p) -> bool:
    from . import config

    if config.sdpa_math_min_scores <= 0:
        return False
    ts = (q, k, v)
    if any(t.device.type != "ocl" for t in ts):
        return False
    if any(not isinstance(s, int) for t in ts for s in t.shape):
        return False  # symbolic sizes: the chooser already took the math path
    if q.dim() != 4 or q.dtype not in (torch.float32, torch.float64):
        return False
    if k.dtype != q.dtype or v.dtype != q.dtype or k.size(1) != q.size(1):
        return False
    if dropout_p != 0.0 or (bias is not None and bias.numel() != 0):
        return False
    scores = q.size(2) * k.size(2)
    # The products path holds all scores of the batch at once (the fused kernels do not):
    # beyond config.sdpa_math_max_bytes of them, the fused kernels stay.
    held = q.size(0) * q.size(1) * scores * q.element_size()
    return config.sdpa_math_min_scores <= scores and held <= config.sdpa_math_max_bytes


def _probabilities(q, k, is_causal, scale, lse=None):
    """Scaled, masked scores and, from their log-sum-exp, the probabilities."""
    s = scale if scale is not None else 1.0 / math.sqrt(q.size(-1))
    scores = torch.matmul(q, k.transpose(-2, -1)) * s
    if is_causal:  # top-left aligned, as eager SDPA's is_causal
        keep = torch.ones(q.size(2), k.size(2), dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if lse is None:
        lse = torch.logsumexp(scores, -1)
    return torch.exp(scores - lse.unsqueeze(-1)), lse, s


def sdpa_forward(query, key, value, attn_bias=None, dropout_p=0.0, is_causal=False,
                 return_debug_mask=False, *, scale=None):
    if return_debug_mask or not _applies(query, key, value, attn_bias, dropout_p):
        return NotImplemented
    p, lse, _ = _probabilities(query, key, is_causal, scale)
    out = torch.matmul(p, value)
    empty = query.new_empty(0)
    return (out, lse, empty, empty, query.size(2), key.size(2), empty, empty, empty)


def sdpa_backward(grad_out, query, key, value, attn_bias, grad_input_mask, out, logsumexp,
                  cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed,
                  philox_offset, *, scale=None):
    if not _applies(query, key, value, attn_bias, dropout_p):
        return NotImplemented
    p, _, s = _probabilities(query, key, is_causal, scale, logsumexp)
    grad_v = torch.matmul(p.transpose(-2, -1), grad_out)
    grad_p = torch.matmul(grad_out, value.transpose(-2, -1))
    grad_s = p * (grad_p - (grad_out * out).sum(-1, keepdim=True))
    grad_q = torch.matmul(grad_s, key) * s
    grad_k = torch.matmul(grad_s.transpose(-2, -1), query) * s
    want = list(grad_input_mask)
    return (grad_q if want[0] else None, grad_k if want[1] else None,
            grad_v if want[2] else None, None)


@functools.cache
def register() -> None:
    """Adds both to Inductor's decomposition table (AOTAutograd traces with it); they return
    NotImplemented, which keeps the op, wherever they do not apply."""
    import torch._inductor.lowering  # noqa: F401  (its fallbacks assert no decomposition yet)
    from torch._inductor import decomposition

    decomposition.decompositions[aten._scaled_dot_product_fused_attention_overrideable.default] = (
        sdpa_forward
    )
    decomposition.decompositions[
        aten._scaled_dot_product_fused_attention_overrideable_backward.default
    ] = sdpa_backward
    decomposition.fast_random_decomps.cache_clear()


def register_when_inductor_loads() -> None:
    """Registers once ``torch._inductor.lowering`` is imported (its fallbacks assert that no
    decomposition exists for their ops, and compile_fx imports it before AOTAutograd traces);
    importing it here would make ``import torch._dynamo`` ~1 s slower."""
    from .._import_hook import call_after_import

    call_after_import("torch._inductor.lowering", register)
