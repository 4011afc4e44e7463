"""Eager scaled_dot_product_attention's route on CPU drivers (csrc/aten/nn/attention.cpp)."""

import sys

from . import _C


def set_sdpa_gemm_min_work(work: int) -> int:
    """From ``work`` multiply-adds of scores on (batch * heads * L * S * head dim), attention on a
    CPU driver takes PyTorch's math path (batched products on the matrix engine around a
    softmax) instead of the fused kernels; 0 or less: always the fused kernels. Returns the
    previous value (default 2^20, or TORCH_OCL_SDPA_GEMM_MIN_WORK).

    The choice is made while Dynamo traces, so the value is part of the compiled path's cache
    key (``torch_ocl._inductor.config.sdpa_gemm_min_work``)."""
    old = _C._set_sdpa_gemm_min_work(int(work))
    cfg = sys.modules.get("torch_ocl._inductor.config")
    if cfg is not None:
        cfg.sdpa_gemm_min_work = int(work)
    return old


def set_sdpa_vector(on: bool) -> bool:
    """Whether float32 attention on CPU drivers runs the float16 fused kernels
    (``attention_vec.cl``: keys and queries 16 at a time, head dims up to 128) or the scalar
    ones (``attention.cl``). Returns the previous value (default on, or off with
    TORCH_OCL_SDPA_VECTOR=0). Chosen at each call, so compiled graphs need no recompile."""
    return bool(_C._set_sdpa_vector(bool(on)))
