"""The float16 attention kernels of attention_vec.cl (float32 on CPU drivers): outputs and q/k/v
(and float mask) gradients against CPU for blocks of 16 keys/queries with partial last blocks,
head dims that are not whole chunks of 16, non-unit head-dimension strides, masks, causal with
L != S, GQA, fully masked rows; the same dropout mask as the scalar kernels; the scalar kernels
beyond 128 columns; and that the switch picks the kernels it says."""

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import torch_ocl
import torch_ocl._attention
from test_attention import gen, qkv, rand, run_both

_C = torch_ocl._C
CPU_DRIVER = _C.get_device_properties(0)["type"] == "CPU"


@pytest.fixture(params=[True, False], ids=["vector", "scalar"])
def kernels(request):
    """Both kernel families on the same cases, fused kernels at every size (no math path)."""
    old_vec = torch_ocl._attention.set_sdpa_vector(request.param)
    old_work = torch_ocl._attention.set_sdpa_gemm_min_work(0)
    try:
        yield request.param
    finally:
        torch_ocl._attention.set_sdpa_vector(old_vec)
        torch_ocl._attention.set_sdpa_gemm_min_work(old_work)


def _sdpa_kernel_names(fn):
    fn()
    torch.ocl.synchronize()
    with profile(activities=[ProfilerActivity.PrivateUse1]) as p:
        fn()
        torch.ocl.synchronize()
    return {e.key for e in p.key_averages() if "sdpa" in e.key}


SHAPES = [  # B, H, Hk, L, S, E, Ev
    (4, 2, 2, 16, 16, 16, 16),  # one whole block, one chunk (the small GPT's heads)
    (2, 3, 3, 37, 50, 40, 24),  # partial blocks and partial chunks
    (1, 2, 2, 33, 17, 64, 64),  # more queries than keys
    (2, 1, 1, 5, 70, 128, 96),  # the widest head the kernels take
    (1, 1, 1, 3, 9, 1, 1),  # a head dim of one
]


@pytest.mark.parametrize("shape", SHAPES)
def test_plain_and_causal(kernels, shape):
    q, k, v = qkv(*shape, seed=3)
    run_both(torch.float32, q, k, v)
    run_both(torch.float32, q, k, v, is_causal=True)
    run_both(torch.float32, q, k, v, scale=0.3)


def test_gqa(kernels):
    q, k, v = qkv(2, 6, 2, 21, 19, 32, 32, seed=9)
    run_both(torch.float32, q, k, v, enable_gqa=True)
    run_both(torch.float32, q, k, v, enable_gqa=True, is_causal=True)


def test_masks(kernels):
    q, k, v = qkv(2, 2, 2, 20, 23, 16, 16, seed=5)
    bool_mask = torch.rand(20, 23, generator=gen(1)) > 0.3
    bool_mask[:, 0] = True
    run_both(torch.float32, q, k, v, mask=bool_mask)
    run_both(torch.float32, q, k, v, mask=rand(2, 1, 20, 23, seed=3))
    run_both(torch.float32, q, k, v, mask=rand(2, 2, 20, 23, seed=4), mask_grad=True)
    # a mask read along queries with a stride (transposed): the dK/dV kernel's mask loads
    run_both(torch.float32, q, k, v, mask=rand(2, 2, 23, 20, seed=6).transpose(-1, -2),
             mask_grad=True)


def test_fully_masked_rows(kernels):
    # rows 1 and 17 keep no key: zeros out, zero gradients through them, as CPU
    q, k, v = qkv(1, 2, 2, 20, 18, 16, 16, seed=2)
    mask = torch.ones(20, 18, dtype=torch.bool)
    mask[1] = False
    mask[17] = False
    exp = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    got = F.scaled_dot_product_attention(q.to("ocl"), k.to("ocl"), v.to("ocl"),
                                         attn_mask=mask.to("ocl")).cpu()
    torch.testing.assert_close(got, exp, equal_nan=True)
    fmask = torch.zeros(20, 18).masked_fill(~mask, float("-inf"))
    fmask[:, 0] = torch.where(mask[:, 0], 0.0, float("-inf"))
    leaves = [t.to("ocl").requires_grad_() for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, attn_mask=fmask.to("ocl"))
    assert (out[0, :, 1] == 0).all() and (out[0, :, 17] == 0).all()
    out.sum().backward()
    assert (leaves[0].grad[0, :, 1] == 0).all()
    assert all(t.grad.isfinite().all() for t in leaves)


def test_non_unit_head_strides(kernels):
    # the usual (B, L, H, E) -> (B, H, L, E) view, and a value with every other column
    q = rand(2, 35, 3, 32).transpose(1, 2)
    k = rand(2, 19, 3, 32, seed=1).transpose(1, 2)
    v = rand(2, 3, 19, 48, seed=2)[..., ::2]
    run_both(torch.float32, q, k, v)
    run_both(torch.float32, q, k, v, is_causal=True)


def test_expanded_output_gradient(kernels):
    # out.sum() / out.mean() hand the backward an expanded gradient (all strides 0): copied once
    # to unit stride before the kernels read it
    q, k, v = qkv(2, 2, 2, 19, 23, 32, 24, seed=8)
    for reduce, causal in ((torch.sum, False), (torch.mean, True)):
        grads = []
        for dev in ("ocl", "cpu"):
            leaves = [t.to(dev, copy=True).requires_grad_() for t in (q, k, v)]
            with torch_ocl.strict():
                reduce(F.scaled_dot_product_attention(*leaves, is_causal=causal)).backward()
            grads.append([t.grad.cpu() for t in leaves])
        for d, c, name in zip(*grads, "qkv"):
            torch.testing.assert_close(d, c, rtol=1e-4, atol=1e-5, msg=f"grad {name}")


def test_same_dropout_mask_as_scalar_kernels():
    q, k, v = qkv(2, 2, 2, 21, 37, 16, 16, seed=4)
    old = torch_ocl._attention.set_sdpa_gemm_min_work(0)
    results = []
    try:
        for vec in (True, False):
            old_vec = torch_ocl._attention.set_sdpa_vector(vec)
            try:
                leaves = [t.to("ocl").requires_grad_() for t in (q, k, v)]
                torch.manual_seed(11)
                out = F.scaled_dot_product_attention(*leaves, dropout_p=0.3, is_causal=True)
                out.backward(torch.ones_like(out))
                results.append([out.detach().cpu()] + [t.grad.cpu() for t in leaves])
            finally:
                torch_ocl._attention.set_sdpa_vector(old_vec)
    finally:
        torch_ocl._attention.set_sdpa_gemm_min_work(old)
    vec, scalar = results
    assert torch.equal(vec[0] != 0, scalar[0] != 0)  # the same kept elements
    for a, b in zip(vec, scalar):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not CPU_DRIVER, reason="the float16 kernels serve CPU drivers")
def test_switch_and_width_pick_the_kernels():
    def run(E):
        q, k, v = (t.to("ocl").requires_grad_() for t in qkv(1, 2, 2, 5, 6, E, E))
        return lambda: F.scaled_dot_product_attention(q, k, v).sum().backward()

    old = torch_ocl._attention.set_sdpa_vector(True)
    try:
        names = _sdpa_kernel_names(run(32))
        assert len(names) == 3 and all("_vec" in n for n in names), names
        names = _sdpa_kernel_names(run(130))  # beyond 128 columns: the scalar kernels
        assert len(names) == 3 and not any("_vec" in n for n in names), names
        torch_ocl._attention.set_sdpa_vector(False)
        names = _sdpa_kernel_names(run(32))
        assert len(names) == 3 and not any("_vec" in n for n in names), names
        q64 = torch.randn(1, 1, 4, 8, dtype=torch.float64, device="ocl")
        torch_ocl._attention.set_sdpa_vector(True)
        names = _sdpa_kernel_names(lambda: F.scaled_dot_product_attention(q64, q64, q64))
        assert names and not any("_vec" in n for n in names), names  # float64: scalar
    finally:
        torch_ocl._attention.set_sdpa_vector(old)


@pytest.mark.parametrize("vec", [True, False])
def test_fused_op_with_empty_head_or_rows(vec):
    """The fused ops called directly (F.scaled_dot_product_attention sends empty calls to the
    math path) with a head dim of 0 or no query rows: empty operands bind no buffer of their
    own, and the float16 kernels leave head dims of 0 to the scalar ones."""
    import math

    fwd = torch.ops.aten._scaled_dot_product_fused_attention_overrideable
    bwd = torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward
    old = torch_ocl._attention.set_sdpa_vector(vec)
    try:
        q, k, v = rand(1, 2, 5, 8, seed=1), rand(1, 2, 6, 8, seed=2), rand(1, 2, 6, 0, seed=3)
        out, lse = fwd(q.to("ocl"), k.to("ocl"), v.to("ocl"))[:2]
        assert out.shape == (1, 2, 5, 0)
        torch.testing.assert_close(
            lse.cpu(), torch.logsumexp(q @ k.transpose(-1, -2) / math.sqrt(8), -1))
        # E = 0 with scale 1: every score is 0, so each row averages v
        q0, k0, v0 = rand(1, 2, 5, 0), rand(1, 2, 6, 0), rand(1, 2, 6, 4, seed=4)
        out = fwd(q0.to("ocl"), k0.to("ocl"), v0.to("ocl"), scale=1.0)[0]
        torch.testing.assert_close(out.cpu(), v0.mean(2, keepdim=True).expand(1, 2, 5, 4))
        # no query rows: dK and dV are zeros
        qe, ke, ve = (t.to("ocl").requires_grad_() for t in (
            rand(1, 2, 0, 8), rand(1, 2, 6, 8, seed=5), rand(1, 2, 6, 4, seed=6)))
        o = fwd(qe, ke, ve)[0]
        o.sum().backward()
        assert qe.grad.shape == (1, 2, 0, 8)
        assert torch.equal(ke.grad.cpu(), torch.zeros(1, 2, 6, 8))
        assert torch.equal(ve.grad.cpu(), torch.zeros(1, 2, 6, 4))
    finally:
        torch_ocl._attention.set_sdpa_vector(old)
