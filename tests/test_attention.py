"""scaled_dot_product_attention on ocl (our fused kernels behind the 'overrideable' SDPA backend)
against F.scaled_dot_product_attention on CPU: outputs and q/k/v (and float mask) gradients for
odd shapes, E != Ev, masks, causal with L != S, GQA, scale, dropout (statistics,
reproducibility, backward on the same mask), the floating dtypes, strict mode."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
import torch_ocl._attention

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-9, atol=1e-10),
       torch.float16: dict(rtol=2e-2, atol=2e-2), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}
FLOATS = list(TOL)
OVERRIDEABLE = 4  # at::SDPBackend::overrideable


def gen(seed):
    return torch.Generator().manual_seed(seed)


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=gen(seed))


def ref_dtype(dtype):
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def run_both(dtype, q, k, v, mask=None, grads=True, mask_grad=False, **kw):
    """Runs SDPA on ocl (strict) and on CPU (reference dtype); compares outputs and grads."""
    rd = ref_dtype(dtype)
    tol = TOL[dtype]
    leaves_d = [t.to(dtype).to("ocl") for t in (q, k, v)]
    leaves_c = [t.to(dtype).to(rd).clone() for t in (q, k, v)]
    md = mc = None
    if mask is not None:
        md = mask.to("ocl") if mask.dtype == torch.bool else mask.to(dtype).to("ocl")
        mc = mask.clone() if mask.dtype == torch.bool else mask.to(dtype).to(rd).clone()
        if mask_grad:
            md.requires_grad_()
            mc.requires_grad_()
    if grads:
        for t in leaves_d + leaves_c:
            t.requires_grad_()
    assert torch._fused_sdp_choice(*leaves_d, attn_mask=md, **{
        k_: v_ for k_, v_ in kw.items() if k_ != "dropout_p"}) == OVERRIDEABLE
    with torch_ocl.strict():
        out = F.scaled_dot_product_attention(*leaves_d, attn_mask=md, **kw)
        w = torch.rand(out.shape, generator=gen(7)).to(dtype)
        if grads:
            (out * w.to("ocl")).sum().backward()
    exp = F.scaled_dot_product_attention(*leaves_c, attn_mask=mc, **kw)
    assert out.device.type == "ocl" and out.dtype == dtype and out.shape == exp.shape
    torch.testing.assert_close(out.detach().cpu().to(rd), exp.detach(), **tol)
    if grads:
        (exp * w.to(rd)).sum().backward()
        for d, c, name in zip(leaves_d, leaves_c, "qkv"):
            assert d.grad is not None, name
            torch.testing.assert_close(d.grad.cpu().to(rd), c.grad, **tol, msg=f"grad {name}")
        if mask_grad:
            torch.testing.assert_close(md.grad.cpu().to(rd), mc.grad, **tol)
    return out


SHAPES = [  # B, H, Hk, L, S, E, Ev
    (2, 3, 3, 5, 7, 8, 6),
    (1, 2, 2, 1, 1, 4, 4),
    (1, 1, 1, 13, 9, 70, 66),  # head dims above the kernel's 64-column chunk
]


def qkv(B, H, Hk, L, S, E, Ev, seed=0):
    return rand(B, H, L, E, seed=seed), rand(B, Hk, S, E, seed=seed + 1), \
        rand(B, Hk, S, Ev, seed=seed + 2)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_plain(dtype, shape):
    run_both(dtype, *qkv(*shape))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("L,S", [(5, 9), (9, 5), (6, 6)])
def test_causal_and_scale(dtype, L, S):
    q, k, v = qkv(2, 2, 2, L, S, 8, 5, seed=3)
    run_both(dtype, q, k, v, is_causal=True)
    run_both(dtype, q, k, v, scale=0.3)


@pytest.mark.parametrize("dtype", FLOATS)
def test_masks(dtype):
    q, k, v = qkv(2, 3, 3, 6, 7, 8, 8, seed=5)
    bool_mask = torch.rand(6, 7, generator=gen(1)) > 0.3
    bool_mask[:, 0] = True  # every row keeps a key
    run_both(dtype, q, k, v, mask=bool_mask)
    run_both(dtype, q, k, v, mask=torch.rand(2, 1, 6, 7, generator=gen(2)) > 0.4)
    run_both(dtype, q, k, v, mask=rand(1, 3, 1, 7, seed=3))
    run_both(dtype, q, k, v, mask=rand(2, 3, 6, 7, seed=4), mask_grad=True)
    run_both(dtype, q, k, v, mask=rand(6, 7, seed=6), mask_grad=True)


def test_fully_masked_row_matches_cpu():
    q, k, v = qkv(1, 1, 1, 3, 4, 4, 4)
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False
    exp = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    got = F.scaled_dot_product_attention(q.to("ocl"), k.to("ocl"), v.to("ocl"),
                                         attn_mask=mask.to("ocl")).cpu()
    torch.testing.assert_close(got, exp, equal_nan=True)


@pytest.mark.parametrize("vector", [True, False], ids=["vector", "scalar"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("Ev", [16, 80, 136])
def test_rows_masked_by_finite_minimum(dtype, Ev, vector):
    # A float mask of finfo.min (or -1e9) on every key of a row, as Hugging Face's 4-D masks
    # give padded rows: softmax of equal scores, so the row's output is the mean of v, and the
    # gradients are those of that softmax (CPU's math path; its flash kernel rounds as ours did).
    # There lse = mx + log(l) rounds to mx, so exp(s - lse) weighed every key 1: the two-pass
    # forward of wide heads gave the sum of v, and every backward kernel those weights.
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (rand(2, 2, n, e, seed=i) for i, (n, e) in enumerate(((5, 24), (9, 24), (9, Ev))))
    mask = torch.zeros(2, 1, 5, 9, dtype=dtype)
    mask[:, :, 1] = torch.finfo(dtype).min
    # -1e9 swamps the scores in float32 (its ulp is 64); in float64 it only rounds them, and
    # CPU's own result is then no closer than 1e-8
    mask[1, :, 3] = -1e9 if dtype == torch.float32 else torch.finfo(dtype).min
    mask[0, :, 4, 2:] = torch.finfo(dtype).min
    q, k, v = (t.to(dtype) for t in (q, k, v))
    w = rand(2, 2, 5, Ev, seed=7).to(dtype)

    def run(dev):
        leaves = [t.detach().to(dev, copy=True).requires_grad_() for t in (q, k, v, mask)]
        if dev == "cpu":
            with sdpa_kernel([SDPBackend.MATH]):
                out = F.scaled_dot_product_attention(*leaves[:3], attn_mask=leaves[3])
        else:
            with torch_ocl.strict():
                out = F.scaled_dot_product_attention(*leaves[:3], attn_mask=leaves[3])
        (out * w.to(dev)).sum().backward()
        return [out.detach().cpu()] + [t.grad.cpu() for t in leaves]

    exp = run("cpu")
    old = torch_ocl._attention.set_sdpa_gemm_min_work(0)  # the fused kernels
    old_vec = torch_ocl._attention.set_sdpa_vector(vector)
    try:
        got = run("ocl")
    finally:
        torch_ocl._attention.set_sdpa_gemm_min_work(old)
        torch_ocl._attention.set_sdpa_vector(old_vec)
    for name, a, b in zip(("out", "dq", "dk", "dv", "dmask"), got, exp):
        torch.testing.assert_close(a, b, **TOL[dtype], msg=name)
    torch.testing.assert_close(got[0][:, :, 1], v.mean(2), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_gqa(dtype):
    q, k, v = qkv(2, 6, 2, 5, 7, 8, 4, seed=9)
    run_both(dtype, q, k, v, enable_gqa=True)
    run_both(dtype, q, k, v, enable_gqa=True, is_causal=True)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q.to("ocl"), k.to("ocl"), v.to("ocl"))


def test_non_contiguous_inputs():
    # the usual (B, L, H, E) -> (B, H, L, E) transposed layout, and a sliced value
    q = rand(2, 5, 3, 8).transpose(1, 2)
    k = rand(2, 7, 3, 8, seed=1).transpose(1, 2)
    v = rand(2, 3, 7, 12, seed=2)[..., ::2]
    run_both(torch.float32, q, k, v)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 4, 2, 5, 7, 8, 6), (1, 2, 2, 9, 9, 70, 66)])
def test_transposed_layout_outputs_written_in_place(dtype, shape):
    # q/k/v as a GPT's projection makes them: (B, L, H, E) viewed as (B, H, L, E). The kernels
    # write the output and dQ/dK/dV at the inputs' strides (PyTorch's layout for these outputs),
    # so a call is one kernel launch with no copy to or from a contiguous buffer.
    B, H, Hk, L, S, E, Ev = shape
    q = rand(B, L, H, E).transpose(1, 2)
    k = rand(B, S, Hk, E, seed=1).transpose(1, 2)
    v = rand(B, S, Hk, Ev, seed=2).transpose(1, 2)
    out = run_both(dtype, q, k, v, is_causal=L == S, enable_gqa=H != Hk)
    assert out.transpose(1, 2).is_contiguous()
    qd, kd, vd = (t.to(dtype).to("ocl").requires_grad_() for t in (q, k, v))
    assert not qd.is_contiguous() and qd.transpose(1, 2).is_contiguous()
    o = F.scaled_dot_product_attention(qd, kd, vd, enable_gqa=H != Hk)
    go = torch.ones_like(o)
    torch.ocl.synchronize()
    before = torch_ocl._C._kernel_launch_count()
    dq, dk, dv = torch.autograd.grad(o, (qd, kd, vd), go)
    assert torch_ocl._C._kernel_launch_count() - before == 2  # sdpa_bwd_q, sdpa_bwd_kv
    for g, t in zip((dq, dk, dv), (qd, kd, vd)):
        assert g.stride() == t.stride()
    before = torch_ocl._C._kernel_launch_count()
    F.scaled_dot_product_attention(qd.detach(), kd.detach(), vd.detach(), enable_gqa=H != Hk)
    assert torch_ocl._C._kernel_launch_count() - before == 1  # sdpa_fwd


def test_gradcheck_float64():
    q, k, v = (t.double().to("ocl").requires_grad_() for t in qkv(1, 2, 1, 3, 4, 3, 2))
    m = rand(3, 4, seed=8).double().to("ocl").requires_grad_()
    # gradcheck itself uses ops (max, ...) outside this family, so no strict mode here; the
    # other tests prove the attention ops are native.
    if True:
        assert torch.autograd.gradcheck(
            lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                              enable_gqa=True), (q, k, v, m))
        assert torch.autograd.gradcheck(
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                           enable_gqa=True), (q, k, v))


def _dropout_run(seed, p, q, k, v, **kw):
    torch.manual_seed(seed)
    return F.scaled_dot_product_attention(q, k, v, dropout_p=p, **kw)


def test_dropout_reproducible_and_statistics():
    B, H, L, S = 2, 2, 16, 64
    q, k = rand(B, H, L, 8).to("ocl"), rand(B, H, S, 8, seed=1).to("ocl")
    eye = torch.eye(S).expand(B, H, S, S).to("ocl")  # out = dropped attention matrix
    with torch_ocl.strict():
        a = _dropout_run(0, 0.3, q, k, eye).cpu()
        b = _dropout_run(0, 0.3, q, k, eye).cpu()
        c = _dropout_run(1, 0.3, q, k, eye).cpu()
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    attn = torch.softmax(q.cpu() @ k.cpu().transpose(-1, -2) / math.sqrt(8), -1)
    kept = a != 0
    frac = kept.float().mean().item()
    assert abs(frac - 0.7) < 0.03, frac
    torch.testing.assert_close(a[kept], attn[kept] / 0.7, rtol=1e-4, atol=1e-6)
    # masks differ between rows, heads and batches
    assert not torch.equal(kept[0, 0], kept[0, 1]) and not torch.equal(kept[0, 0], kept[1, 0])
    full = _dropout_run(0, 1.0, q, k, eye).cpu()
    assert torch.count_nonzero(full) == 0


@pytest.mark.parametrize("causal", [False, True])
def test_dropout_backward_uses_forward_mask(causal):
    B, H, L, S, E, Ev = 1, 2, 5, 6, 4, 3
    q, k, v = qkv(B, H, H, L, S, E, Ev, seed=11)
    p = 0.4
    # The mask: from the same seed with value = identity.
    eye = torch.eye(S).expand(B, H, S, S).to("ocl")
    with torch_ocl.strict():
        dropped = _dropout_run(5, p, q.to("ocl"), k.to("ocl"), eye, is_causal=causal).cpu()
    zmask = (dropped != 0).double() / (1 - p)
    qd, kd, vd = (t.to("ocl").requires_grad_() for t in (q, k, v))
    with torch_ocl.strict():
        out = _dropout_run(5, p, qd, kd, vd, is_causal=causal)
        out.sum().backward()
    qc, kc, vc = (t.double().requires_grad_() for t in (q, k, v))
    s = qc @ kc.transpose(-1, -2) / math.sqrt(E)
    if causal:
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    exp = (torch.softmax(s, -1) * zmask) @ vc
    exp.sum().backward()
    torch.testing.assert_close(out.detach().cpu().double(), exp.detach(), rtol=1e-4, atol=1e-5)
    for d, c in ((qd, qc), (kd, kc), (vd, vc)):
        torch.testing.assert_close(d.grad.cpu().double(), c.grad, rtol=1e-4, atol=1e-5)


def test_math_path_when_backend_excluded():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = qkv(1, 2, 2, 4, 5, 8, 8)
    with sdpa_kernel([SDPBackend.MATH]):
        assert torch._fused_sdp_choice(q.to("ocl"), k.to("ocl"), v.to("ocl")) == 0
    exp = F.scaled_dot_product_attention(q, k, v)
    got = F.scaled_dot_product_attention(q.to("ocl"), k.to("ocl"), v.to("ocl"))
    torch.testing.assert_close(got.cpu(), exp, **TOL[torch.float32])


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_long_attention_takes_the_math_path_on_cpu_drivers(dropout):
    """On CPU drivers, calls of 2^20 multiply-adds of scores or more (batch * heads * L * S *
    head dim; here 2 * 3 * 70 * 50 * 80) take PyTorch's math path: batched products on our
    matrix engine around our softmax, 1.6-2.1x faster than the fused kernels from 2^23 on.
    Smaller calls, and every call with the threshold at 0, keep the fused kernels. Forward and
    gradients against CPU (no dropout), and the dropout statistics, in strict mode."""
    cpu_driver = torch_ocl._C.get_device_properties(0)["type"] == "CPU"
    q, k, v = rand(2, 3, 70, 80, seed=1), rand(2, 3, 50, 80, seed=2), rand(2, 3, 50, 24, seed=3)
    qd, kd, vd = (t.to("ocl") for t in (q, k, v))
    small = [t[:, :1, :8, :8].contiguous() for t in (qd, kd, vd)]
    assert torch._fused_sdp_choice(*small) == OVERRIDEABLE
    assert torch._fused_sdp_choice(qd, kd, vd) == (0 if cpu_driver else OVERRIDEABLE)
    old = torch_ocl._attention.set_sdpa_gemm_min_work(0)
    try:
        assert torch._fused_sdp_choice(qd, kd, vd) == OVERRIDEABLE
    finally:
        torch_ocl._attention.set_sdpa_gemm_min_work(old)
    if dropout == 0:
        leaves_d = [t.clone().requires_grad_() for t in (qd, kd, vd)]
        leaves_c = [t.clone().requires_grad_() for t in (q, k, v)]
        g = rand(2, 3, 70, 24, seed=4)
        with torch_ocl.strict():
            out = F.scaled_dot_product_attention(*leaves_d, is_causal=True)
            out.backward(g.to("ocl"))
        exp = F.scaled_dot_product_attention(*leaves_c, is_causal=True)
        exp.backward(g)
        torch.testing.assert_close(out.detach().cpu(), exp.detach(), **TOL[torch.float32])
        for a, b in zip(leaves_d, leaves_c):
            torch.testing.assert_close(a.grad.cpu(), b.grad, **TOL[torch.float32])
    else:
        ones = torch.ones(2, 3, 70, 50, device="ocl")
        # with v = identity columns the output rows are the kept, rescaled probabilities
        with torch_ocl.strict():
            out = F.scaled_dot_product_attention(qd, kd, torch.eye(50, device="ocl").expand(
                2, 3, 50, 50), dropout_p=dropout)
        kept = (out != 0).float().mean().item()
        assert abs(kept - (1 - dropout)) < 0.02, kept
        del ones


def test_bad_input_errors():
    q, k, v = (t.to("ocl") for t in qkv(1, 2, 2, 4, 5, 8, 8))
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, k[..., :4], v)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, k, v.half())
    assert F.scaled_dot_product_attention(q, k, v).isfinite().all()


@pytest.mark.parametrize("shapes", [((0, 2, 3, 4), (0, 2, 5, 4)), ((1, 2, 0, 4), (1, 2, 5, 4)),
                                    ((1, 2, 3, 4), (1, 2, 0, 4))])
def test_zero_size_as_cpu(shapes):
    qs, ks = shapes
    q, k, v = rand(*qs), rand(*ks, seed=1), rand(*ks, seed=2)
    exp = F.scaled_dot_product_attention(q, k, v)
    with torch_ocl.strict():
        got = F.scaled_dot_product_attention(q.to("ocl"), k.to("ocl"), v.to("ocl"))
    assert got.shape == exp.shape
    torch.testing.assert_close(got.cpu(), exp)
