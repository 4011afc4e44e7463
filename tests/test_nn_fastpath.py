"""nn ops outside the OpInfo matrix, native on ocl and compared with CPU on the same inputs in
strict mode: the Transformer fast path (_native_multi_head_attention, _transform_bias_rescale_qkv,
_transformer_encoder_layer_fwd, the nested path TransformerEncoder takes with a padding mask),
_masked_softmax(+backward), _weight_norm_interface(+backward), batch_norm_update_stats,
_add_relu, _aminmax, _int_mm, glu_jvp / glu_backward_jvp."""

import copy
import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-9, atol=1e-10),
       torch.float16: dict(rtol=2e-2, atol=2e-2), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def close(o, e, dtype=torch.float32, **kw):
    tol = dict(TOL[dtype], **kw)
    torch.testing.assert_close(o.cpu(), e, equal_nan=True, **tol)


def ocl(t):
    return None if t is None else t.to("ocl")


def test_ops_are_registered_for_ocl():
    for name in ["_native_multi_head_attention", "_transform_bias_rescale_qkv",
                 "_transformer_encoder_layer_fwd", "_masked_softmax", "_masked_softmax_backward",
                 "_weight_norm_interface", "_weight_norm_interface_backward",
                 "batch_norm_update_stats", "_add_relu.Tensor", "_add_relu.Scalar",
                 "_add_relu_.Tensor", "_add_relu_.Scalar", "_add_relu.out", "_aminmax",
                 "_aminmax.dim", "_int_mm", "_int_mm.out", "glu_jvp", "glu_backward_jvp",
                 "_nested_tensor_from_mask", "_nested_tensor_from_mask_left_aligned"]:
        assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + name, "PrivateUse1"), name


# ---- _masked_softmax ----------------------------------------------------------------------------

MASK_CASES = [  # (input shape, mask shape, dim, mask_type)
    ((2, 3, 5, 5), (5, 5), 3, 0),
    ((2, 3, 5, 5), (2, 5), 3, 1),
    ((2, 3, 5, 5), (2, 3, 5, 5), 3, 2),
    ((2, 3, 5, 5), (5, 5), 2, 0),  # non-last dim: CPU expands the mask
    ((2, 3, 5, 5), (2, 5), 0, 1),
    ((3, 7, 9), (3, 7, 9), 1, 2),
    ((11,), (11,), 0, None),  # not 4-D: type 2 whatever was passed
    ((0, 3, 4, 4), (0, 4), 3, 1),
    ((), (), 0, 2),
]


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("case", MASK_CASES)
def test_masked_softmax(case, dtype):
    shape, mshape, dim, mt = case
    x = torch.randn(shape, generator=gen(1)).to(dtype)
    m = torch.rand(mshape, generator=gen(2)) > 0.6
    if len(mshape) >= 1 and m.numel() > 0:
        m.view(-1, mshape[-1])[0] = True  # a fully masked row: NaN on CPU
    e = torch._masked_softmax(x, m, dim, mt)
    with torch_ocl.strict():
        o = torch._masked_softmax(ocl(x), ocl(m), dim, mt)
    assert o.dtype == e.dtype and o.shape == e.shape
    close(o, e, dtype)


def test_masked_softmax_noncontiguous_and_broadcast_views():
    x = torch.randn(2, 5, 5, 3, generator=gen(3))
    m = torch.rand(2, 3, 5, 5, generator=gen(4)) > 0.5
    xt = x.permute(0, 3, 1, 2)  # (2, 3, 5, 5), not contiguous
    # CPU's kernel writes a contiguous result into an output strided like the input, so its
    # non-contiguous answer is scrambled; the reference is the contiguous input's result.
    e = torch._masked_softmax(xt.contiguous(), m, 3, 2)
    with torch_ocl.strict():
        o = torch._masked_softmax(ocl(xt), ocl(m), 3, 2)
        o2 = torch._masked_softmax(ocl(xt.contiguous()), ocl(m.transpose(2, 3)).transpose(2, 3),
                                   -1, 2)
    close(o, e)
    close(o2, e)


def test_masked_softmax_errors():
    x = torch.randn(2, 3, 4, 4, device="ocl")
    with pytest.raises(RuntimeError, match="Mask should be a boolean tensor"):
        torch._masked_softmax(x, torch.zeros(4, 4, device="ocl"), 3, 0)
    with pytest.raises(RuntimeError, match="Mask Type should be defined"):
        torch._masked_softmax(x, torch.zeros(4, 4, dtype=torch.bool, device="ocl"), 3, None)
    with pytest.raises(RuntimeError, match="Mask Type should be 0"):
        torch._masked_softmax(x, torch.zeros(4, 4, dtype=torch.bool, device="ocl"), 3, 7)
    with pytest.raises(RuntimeError, match="mask shape should be"):
        torch._masked_softmax(x, torch.zeros(3, 4, dtype=torch.bool, device="ocl"), 3, 0)
    assert torch.ocl.is_available()  # the process stays usable


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("dim", [3, 1, -1])
def test_masked_softmax_backward_and_autograd(dtype, dim):
    x = torch.randn(2, 3, 5, 6, generator=gen(5)).to(dtype)
    m = torch.rand(2, 3, 5, 6, generator=gen(6)) > 0.6
    g = torch.randn(2, 3, 5, 6, generator=gen(7)).to(dtype)
    y = torch._masked_softmax(x, m, dim, 2)
    e = torch.ops.aten._masked_softmax_backward(g, y, m, dim)
    with torch_ocl.strict():
        o = torch.ops.aten._masked_softmax_backward(ocl(g), ocl(y), ocl(m), dim)
    close(o, e, dtype)
    if dtype in (torch.float32, torch.float64):
        xc = x.clone().requires_grad_()
        xd = ocl(x).requires_grad_()
        (torch._masked_softmax(xc, m, dim, 2).nan_to_num() * g).sum().backward()
        with torch_ocl.strict():
            (torch._masked_softmax(xd, ocl(m), dim, 2).nan_to_num() * ocl(g)).sum().backward()
        close(xd.grad, xc.grad, dtype)


# ---- Transformer fast path ----------------------------------------------------------------------

def _mha_pair(E=12, H=4, seed=0, dtype=torch.float32):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True).eval().to(dtype)
    return mha, copy.deepcopy(mha).to("ocl")


KPM = torch.tensor([[False] * 7, [False] * 4 + [True] * 3, [True] * 7])  # last: all keys padded


@pytest.fixture(params=["materialised", "sdpa"])
def attention_route(request, monkeypatch):
    """Without need_weights, MHA materialises the scores unless they pass
    TORCH_OCL_MHA_SCORES_MIB; 0 sends every call through the SDPA kernel."""
    if request.param == "sdpa":
        monkeypatch.setenv("TORCH_OCL_MHA_SCORES_MIB", "0")
    return request.param


@pytest.mark.parametrize("need_weights,average", [(False, True), (True, True), (True, False)])
@pytest.mark.parametrize("masks", ["none", "kpm", "attn", "both", "attn3d"])
def test_multihead_attention_fast_path(need_weights, average, masks, attention_route):
    mha, mha_d = _mha_pair()
    x = torch.randn(3, 7, 12, generator=gen(8))
    kpm = KPM if masks in ("kpm", "both") else None
    am = None
    if masks in ("attn", "both"):
        am = torch.rand(7, 7, generator=gen(9)) > 0.7
    elif masks == "attn3d":
        am = torch.rand(3 * 4, 7, 7, generator=gen(9)) > 0.7
    kw = dict(need_weights=need_weights, average_attn_weights=average)
    with torch.no_grad():
        e = mha(x, x, x, key_padding_mask=kpm, attn_mask=am, **kw)
        xd = ocl(x)
        with torch_ocl.strict():
            o = mha_d(xd, xd, xd, key_padding_mask=ocl(kpm), attn_mask=ocl(am), **kw)
    close(o[0], e[0])
    if need_weights:
        close(o[1], e[1])
    else:
        assert o[1] is None and e[1] is None


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_native_mha_dtypes_and_cross_attention(dtype):
    mha, _ = _mha_pair(E=8, H=2, dtype=dtype)
    args = [p.detach() for p in (mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight,
                                 mha.out_proj.bias)]
    q = torch.randn(2, 5, 8, generator=gen(10)).to(dtype)
    kv = torch.randn(2, 5, 8, generator=gen(11)).to(dtype)
    for key, value in [(q, q), (kv, kv), (kv, q)]:
        e = torch._native_multi_head_attention(q, key, value, 8, 2, *args, None, True, False)
        with torch_ocl.strict():
            o = torch._native_multi_head_attention(ocl(q), ocl(key), ocl(value), 8, 2,
                                                   *[ocl(a) for a in args], None, True, False)
        close(o[0], e[0], dtype)
        close(o[1], e[1], dtype)


@pytest.mark.parametrize("dtype", list(TOL))
def test_transform_bias_rescale_qkv(dtype):
    qkv = torch.randn(3, 5, 3 * 12, generator=gen(12)).to(dtype)
    bias = torch.randn(3 * 12, generator=gen(13)).to(dtype)
    e = torch._transform_bias_rescale_qkv(qkv, bias, 4)
    with torch_ocl.strict():
        o = torch._transform_bias_rescale_qkv(ocl(qkv), ocl(bias), 4)
        o_nc = torch._transform_bias_rescale_qkv(ocl(qkv.transpose(0, 1).contiguous()
                                                     .transpose(0, 1)), ocl(bias), 4)
    for a, b, c in zip(o, e, o_nc):
        assert a.shape == b.shape == (3, 4, 5, 3)
        close(a, b, dtype)
        close(c, b, dtype)
    keep = torch.tensor([[True] * 5, [True] * 2 + [False] * 3, [False] * 5])
    nested = torch._nested_tensor_from_mask(qkv, keep)  # a nested qkv is padded with zeros
    en = torch._transform_bias_rescale_qkv(nested, bias, 4)
    with torch_ocl.strict():
        on = torch._transform_bias_rescale_qkv(torch._nested_tensor_from_mask(ocl(qkv), ocl(keep)),
                                               ocl(bias), 4)
    for a, b in zip(on, en):
        close(a, b, dtype)


def _encoder(norm_first, activation, layers=2, batch_first=True, nested=True, seed=0):
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(12, 4, 20, dropout=0.0, activation=activation,
                                             batch_first=batch_first, norm_first=norm_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=nested).eval()
    return enc, copy.deepcopy(enc).to("ocl")


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("padding", [False, True])
@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer_encoder_eval(norm_first, activation, padding, batch_first, attention_route):
    enc, enc_d = _encoder(norm_first, activation, batch_first=batch_first)
    x = torch.randn(3, 7, 12, generator=gen(14))
    kpm = KPM.clone() if padding else None
    if kpm is not None:
        kpm[2, :2] = False  # left-aligned padding: the nested path
    if not batch_first:
        x = x.transpose(0, 1).contiguous()
    with torch.no_grad():
        e = enc(x, src_key_padding_mask=kpm)
        with torch_ocl.strict():
            o = enc_d(ocl(x), src_key_padding_mask=ocl(kpm))
    close(o, e)


def test_transformer_encoder_takes_fast_path_ops():
    enc, enc_d = _encoder(False, "relu")
    x = ocl(torch.randn(3, 7, 12, generator=gen(15)))
    kpm = torch.tensor([[False] * 7, [False] * 4 + [True] * 3, [False] + [True] * 6])
    with torch.no_grad(), torch.profiler.profile() as prof, torch_ocl.strict():
        enc_d(x, src_key_padding_mask=ocl(kpm))
        enc_d(x)
        enc_d.layers[0].self_attn(x, x, x)
    names = {e.name for e in prof.events()}
    for op in ["aten::_nested_tensor_from_mask", "aten::_transformer_encoder_layer_fwd",
               "aten::_native_multi_head_attention", "aten::_transform_bias_rescale_qkv",
               "aten::to_padded_tensor"]:
        assert op in names, op


def test_transformer_encoder_layer_masks_and_zero_batch():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(12, 4, 20, dropout=0.0, batch_first=True).eval()
    layer_d = copy.deepcopy(layer).to("ocl")
    x = torch.randn(3, 7, 12, generator=gen(16))
    am = torch.rand(7, 7, generator=gen(17)) > 0.8
    with torch.no_grad():
        for kw in [dict(src_key_padding_mask=KPM), dict(src_mask=am),
                   dict(src_mask=am, src_key_padding_mask=KPM)]:
            e = layer(x, **kw)
            with torch_ocl.strict():
                o = layer_d(ocl(x), **{k: ocl(v) for k, v in kw.items()})
            close(o, e)
        z = torch.randn(0, 7, 12)
        with torch_ocl.strict():
            oz = layer_d(ocl(z))
        assert oz.shape == layer(z).shape


# ---- weight norm, batch_norm_update_stats -------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("dim", [0, 2])
def test_weight_norm_interface(dtype, dim):
    v = torch.randn(6, 5, 3, generator=gen(18)).to(dtype)
    g = torch.randn(*[v.size(d) if d == dim else 1 for d in range(3)], generator=gen(19)).to(dtype)
    gw = torch.randn(6, 5, 3, generator=gen(20)).to(dtype)
    e = torch._weight_norm_interface(v, g, dim)
    with torch_ocl.strict():
        o = torch._weight_norm_interface(ocl(v), ocl(g), dim)
    close(o[0], e[0], dtype)
    close(o[1], e[1], dtype)
    assert o[1].dtype == e[1].dtype
    eb = torch.ops.aten._weight_norm_interface_backward(gw, v, g, e[1], dim)
    with torch_ocl.strict():
        ob = torch.ops.aten._weight_norm_interface_backward(ocl(gw), ocl(v), ocl(g), o[1], dim)
    close(ob[0], eb[0], dtype)
    close(ob[1], eb[1], dtype)


@pytest.mark.parametrize("dim", [0, -1, None])
def test_weight_norm_modules_train(dim):
    torch.manual_seed(0)
    for make in (torch.nn.utils.weight_norm,
                 lambda m, dim: torch.nn.utils.parametrizations.weight_norm(m, dim=dim)):
        base = torch.nn.Linear(7, 5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin = make(copy.deepcopy(base), dim=dim)
            lin_d = make(copy.deepcopy(base).to("ocl"), dim=dim)
        x = torch.randn(4, 7, generator=gen(21))
        lin(x).pow(2).sum().backward()
        with torch_ocl.strict():
            lin_d(ocl(x)).pow(2).sum().backward()
        for (n, p), (_, pd) in zip(lin.named_parameters(), lin_d.named_parameters()):
            close(pd.grad, p.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("stats", [True, False])
def test_batch_norm_update_stats(dtype, stats):
    x = torch.randn(4, 3, 5, 2, generator=gen(22)).to(dtype)
    pdt = torch.float32 if dtype == torch.float16 else dtype
    rm = torch.randn(3, generator=gen(23)).to(pdt) if stats else None
    rv = torch.rand(3, generator=gen(24)).to(pdt) if stats else None
    rmd, rvd = ocl(rm), ocl(rv)
    e = torch.batch_norm_update_stats(x, rm, rv, 0.1)
    with torch_ocl.strict():
        o = torch.batch_norm_update_stats(ocl(x), rmd, rvd, 0.1)
    for a, b in zip(o, e):
        assert a.dtype == b.dtype
        close(a, b, dtype)
    if stats:
        close(rmd, rm, dtype)
        close(rvd, rv, dtype)


# ---- _add_relu, _aminmax, _int_mm, glu jvps -----------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64,
                                   torch.int16, torch.int8])
def test_add_relu(dtype):
    x = (torch.randn(5, 7, generator=gen(25)) * 10).to(dtype)
    y = (torch.randn(7, generator=gen(26)) * 10).to(dtype)  # broadcast
    if dtype.is_floating_point:
        x[0, 0] = float("inf")  # CPU clamps to the dtype's maximum
    with torch_ocl.strict():
        o = torch._VF._add_relu(ocl(x), ocl(y), alpha=2)
        os_ = torch.ops.aten._add_relu.Scalar(ocl(x), 3, alpha=-1)
        xi = ocl(x).clone()
        torch._VF._add_relu_(xi, ocl(y))
        xs = ocl(x).clone()
        torch.ops.aten._add_relu_.Scalar(xs, 2)
        out = torch.empty(0, dtype=dtype, device="ocl")
        torch.ops.aten._add_relu.out(ocl(x), ocl(y), alpha=1, out=out)
        onc = torch._VF._add_relu(ocl(x).t(), ocl(x).t())
    torch.testing.assert_close(o.cpu(), torch._VF._add_relu(x, y, alpha=2))
    torch.testing.assert_close(os_.cpu(), torch.ops.aten._add_relu.Scalar(x, 3, alpha=-1))
    torch.testing.assert_close(xi.cpu(), torch._VF._add_relu(x, y))
    torch.testing.assert_close(xs.cpu(), torch.ops.aten._add_relu.Scalar(x, 2))
    torch.testing.assert_close(out.cpu(), torch._VF._add_relu(x, y))
    torch.testing.assert_close(onc.cpu(), torch._VF._add_relu(x.t(), x.t()))


def test_add_relu_unsupported_dtype():
    with pytest.raises(RuntimeError, match="Unsupported datatype for add_relu"):
        torch._VF._add_relu(torch.ones(3, dtype=torch.uint8, device="ocl"),
                            torch.ones(3, dtype=torch.uint8, device="ocl"))


@pytest.mark.filterwarnings("ignore:_aminmax is deprecated")
def test_aminmax_aliases():
    x = torch.randn(4, 9, generator=gen(27))
    with torch_ocl.strict():
        a = torch.ops.aten._aminmax(ocl(x))
        d = torch.ops.aten._aminmax.dim(ocl(x).t(), 1, True)
    for o, e in zip(a + d, torch.ops.aten._aminmax(x) + torch.ops.aten._aminmax.dim(x.t(), 1, True)):
        torch.testing.assert_close(o.cpu(), e)


@pytest.mark.parametrize("shape", [(37, 70, 19), (1, 1, 1), (16, 33, 48), (5, 0, 3), (0, 4, 6)])
def test_int_mm_exact(shape):
    M, K, N = shape
    a = torch.randint(-128, 128, (M, K), generator=gen(28), dtype=torch.int8)
    b = torch.randint(-128, 128, (K, N), generator=gen(29), dtype=torch.int8)
    e = torch._int_mm(a, b)
    with torch_ocl.strict():
        o = torch._int_mm(ocl(a), ocl(b))
        o_nc = torch._int_mm(ocl(a.t().contiguous()).t(), ocl(b.t().contiguous()).t())
        out = torch.empty(0, dtype=torch.int32, device="ocl")
        torch._int_mm(ocl(a), ocl(b), out=out)
    for t in (o, o_nc, out):
        assert t.dtype == torch.int32
        torch.testing.assert_close(t.cpu(), e, rtol=0, atol=0)


def test_int_mm_errors():
    with pytest.raises(RuntimeError, match="Expected self dtype to be of type int8"):
        torch._int_mm(torch.ones(2, 2, device="ocl"), torch.ones(2, 2, device="ocl"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])  # CPU's kernels: no half
def test_glu_jvp_and_forward_ad(dtype):
    x = torch.randn(4, 6, 3, generator=gen(30)).to(dtype)
    dx = torch.randn(4, 6, 3, generator=gen(31)).to(dtype)
    glu = F.glu(x, 1)
    e = torch.ops.aten.glu_jvp(glu, x, dx, 1)
    gx = torch.randn(4, 6, 3, generator=gen(32)).to(dtype)
    gg = torch.randn(4, 3, 3, generator=gen(33)).to(dtype)
    dgg = torch.randn(4, 3, 3, generator=gen(34)).to(dtype)
    eb = torch.ops.aten.glu_backward_jvp(gx, gg, x, dgg, dx, 1)
    with torch_ocl.strict():
        o = torch.ops.aten.glu_jvp(ocl(glu), ocl(x), ocl(dx), 1)
        ob = torch.ops.aten.glu_backward_jvp(ocl(gx), ocl(gg), ocl(x), ocl(dgg), ocl(dx), 1)
    close(o, e, dtype)
    close(ob, eb, dtype)
    if dtype == torch.float64:
        import torch.autograd.forward_ad as fwAD
        with fwAD.dual_level():
            tc = fwAD.unpack_dual(F.glu(fwAD.make_dual(x, dx), -2)).tangent
            with torch_ocl.strict():
                td = fwAD.unpack_dual(F.glu(fwAD.make_dual(ocl(x), ocl(dx)), -2)).tangent
        close(td, tc, dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("padding", [False, True])
def test_transformer_encoder_dtypes_noncontiguous(dtype, padding):
    enc, _ = _encoder(False, "gelu")
    enc = enc.to(dtype)
    enc_d = copy.deepcopy(enc).to("ocl")
    x = torch.randn(7, 3, 12, generator=gen(35)).to(dtype).transpose(0, 1)  # (B, T, E) view
    kpm = torch.tensor([[False] * 7, [False] * 4 + [True] * 3, [False] + [True] * 6])
    kpm = kpm if padding else None
    with torch.no_grad():
        e = enc(x, src_key_padding_mask=kpm)
        xd = ocl(x.transpose(0, 1)).transpose(0, 1)
        assert not xd.is_contiguous()
        with torch_ocl.strict():
            o = enc_d(xd, src_key_padding_mask=ocl(kpm))
    close(o, e, dtype)


def test_multihead_attention_nested_query(attention_route):
    mha, mha_d = _mha_pair(E=8, H=2)
    x = torch.randn(3, 5, 8, generator=gen(36))
    keep = torch.tensor([[True] * 5, [True] * 3 + [False] * 2, [True] + [False] * 4])
    with torch.no_grad():
        nt = torch._nested_tensor_from_mask(x, keep)
        e = mha(nt, nt, nt, need_weights=False)[0].to_padded_tensor(0.0)
        with torch_ocl.strict():
            ntd = torch._nested_tensor_from_mask(ocl(x), ocl(keep))
            assert ntd.is_nested and ntd.device.type == "ocl"
            od = mha_d(ntd, ntd, ntd, need_weights=False)[0]
            assert od.is_nested
            o = od.to_padded_tensor(0.0)
        close(o, e)
        with pytest.raises(RuntimeError, match="need_weights=False only"):
            mha_d(ntd, ntd, ntd, need_weights=True)


def test_multihead_attention_zero_batch():
    mha, mha_d = _mha_pair()
    x = torch.randn(0, 7, 12)
    with torch.no_grad():
        e = mha(x, x, x, need_weights=False)[0]
        xd = ocl(x)
        with torch_ocl.strict():
            o = mha_d(xd, xd, xd, need_weights=False)[0]
    assert o.shape == e.shape == (0, 7, 12)
