"""Tier 2: data movement — host/device copies for every dtype and layout, conversions on the
device, fill_/zero_, views, resize_/set_, and copies between two ocl devices."""

import warnings

import pytest
import torch

import torch_ocl

from conftest import TWO_DEVICES, assert_same, dtypes_for_device, make_cpu, run_ok

DTYPES = dtypes_for_device()
ODD_SIZES = [1, 7, 1023, 4097]


def _id(d: torch.dtype) -> str:
    return str(d).replace("torch.", "")


# ---- host <-> device, every dtype ------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_roundtrip_contiguous(dtype):
    for n in ODD_SIZES:
        c = make_cpu((n,), dtype, seed=n)
        d = c.to("ocl")
        assert d.is_contiguous()
        assert_same(d, c)
        # D2D: a clone and a copy_ into another device tensor.
        assert_same(d.clone(), c)
        e = torch.empty(n, dtype=dtype, device="ocl")
        e.copy_(d)
        assert_same(e, c)
        # D2H into an existing CPU tensor.
        h = torch.empty(n, dtype=dtype)
        h.copy_(e)
        assert torch.equal(h, c)
    c = make_cpu((3, 5, 7), dtype)
    assert_same(c.to("ocl"), c)


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_roundtrip_non_contiguous(dtype):
    base = make_cpu((9, 13), dtype, seed=3)
    sources = {
        "transpose": base.t(),
        "step": base[::2, 1::3],
        "negative-free step 3d": make_cpu((4, 6, 5), dtype).permute(2, 0, 1)[:, ::2],
        "expand": make_cpu((1, 13), dtype).expand(9, 13),
        "broadcast 0-stride middle": make_cpu((5, 1, 3), dtype).expand(5, 4, 3),
        "column": base[:, 4],
    }
    for name, c in sources.items():
        # H2D from a non-contiguous host tensor.
        d = c.to("ocl")
        assert_same(d, c.contiguous())
        # Strided device views: D2H, D2D contiguous(), clone.
        dev_base = base.to("ocl")
        dv = {
            "transpose": dev_base.t(),
            "step": dev_base[::2, 1::3],
            "column": dev_base[:, 4],
        }.get(name)
        if dv is not None:
            assert not dv.is_contiguous()
            assert_same(dv, c)
            assert_same(dv.contiguous(), c.contiguous())
            assert dv.contiguous().is_contiguous()
            assert_same(dv.clone(), c)


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_expanded_device_source(dtype):
    row = make_cpu((1, 7), dtype, seed=1)
    d = row.to("ocl").expand(5, 7)
    assert d.stride() == (0, 1)
    assert_same(d.contiguous(), row.expand(5, 7).contiguous())
    out = torch.empty(5, 7, dtype=dtype, device="ocl")
    out.copy_(d)
    assert_same(out, row.expand(5, 7).contiguous())
    # Broadcasting copy_: a (7,) source into a (5, 7) destination, both on the device.
    out2 = torch.zeros(5, 7, dtype=dtype, device="ocl")
    out2.copy_(row[0].to("ocl"))
    assert_same(out2, row.expand(5, 7).contiguous())
    # ... and from the host.
    out3 = torch.zeros(5, 7, dtype=dtype, device="ocl")
    out3.copy_(row[0])
    assert_same(out3, row.expand(5, 7).contiguous())


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_scalar_and_item(dtype):
    c = make_cpu((), dtype, seed=5)
    d = c.to("ocl")
    assert d.dim() == 0
    assert_same(d, c)
    assert d.item() == c.item()
    assert type(d.item()) is type(c.item())
    # item() of an element inside a strided view.
    v = make_cpu((4, 6), dtype, seed=6)
    dv = v.to("ocl")
    assert dv[2, 3].item() == v[2, 3].item()
    assert dv.t()[5, 1].item() == v.t()[5, 1].item()
    assert dv[1:, ::2][2, 2].item() == v[1:, ::2][2, 2].item()
    one = v[3:4, 5:6].to("ocl")
    assert one.item() == v[3, 5].item()
    with pytest.raises(RuntimeError, match="a Tensor with 24 elements cannot be converted"):
        dv.item()


def test_item_special_values():
    c = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-40, 3.0e38])
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        ref = c.to(dtype)
        d = ref.to("ocl")
        assert_same(d, ref)
        for i in range(len(ref)):
            a, b = d[i].item(), ref[i].item()
            assert (a != a and b != b) or a == b, (dtype, i, a, b)
    for v in (2**63 - 1, -(2**63)):
        assert torch.tensor(v).to("ocl").item() == v


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_zero_size(dtype):
    for shape in [(0,), (3, 0), (0, 4, 5)]:
        c = torch.empty(shape, dtype=dtype)
        d = c.to("ocl")
        assert d.shape == c.shape and d.numel() == 0
        assert_same(d, c)
        assert_same(d.clone(), c)
        d.fill_(1)
        d.zero_()
        e = torch.empty(shape, dtype=dtype, device="ocl")
        e.copy_(d)
        assert_same(e, c)
        assert_same(d.to(torch.float32), c.to(torch.float32))
    # A zero-size view of a non-empty tensor.
    big = make_cpu((5, 6), dtype).to("ocl")
    assert big[:, 3:3].cpu().shape == (5, 0)
    assert big[2:2].t().contiguous().shape == (6, 0)


# ---- dtype conversion on the device ------------------------------------------------------------

# Values every dtype holds exactly (non-negative and small so that every int and float pair
# converts without overflow or rounding), plus signed ones for pairs of signed types.
_NONNEG = torch.tensor([0, 1, 2, 3, 7, 15, 31, 63, 100, 127] * 3, dtype=torch.float64)
_SIGNED = torch.tensor([0, -1, 2, -3, 7, -15, 31, -63, 100, -127] * 3, dtype=torch.float64)
_FRAC = torch.tensor([0.0, 0.5, -0.5, 1.25, -1.75, 2.5, -3.5, 100.75, -127.25, 0.25] * 3)


def _values(src: torch.dtype, dst: torch.dtype) -> torch.Tensor:
    signed_ok = src not in (torch.bool, torch.uint8) and dst not in (torch.bool, torch.uint8)
    frac_ok = (src.is_floating_point or src.is_complex) and dst != torch.uint8
    if src == torch.bool:
        return torch.tensor([True, False, True] * 10)
    if frac_ok:
        v = _FRAC
    elif signed_ok:
        v = _SIGNED
    else:
        v = _NONNEG
    if src.is_complex:
        im = torch.arange(30, dtype=torch.float64) / 4 - 3
        return torch.complex(v.to(torch.float64), im).to(src)
    return v.to(src)


_CONVERSION_PAIRS = [(s, d) for s in DTYPES for d in DTYPES if s != d]


@pytest.mark.parametrize("src,dst", _CONVERSION_PAIRS, ids=lambda d: _id(d))
def test_dtype_conversion(src, dst):
    c = _values(src, dst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real discards the imaginary part
        ref = c.to(dst)
        d = c.to("ocl").to(dst)
    assert_same(d, ref)
    # Strided source, strided destination.
    c2 = c.reshape(5, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch.zeros(6, 5, dtype=dst, device="ocl").t()
        out.copy_(c2.to("ocl").t().t())
        assert_same(out, c2.to(dst))
        assert_same(c2.to("ocl").t().to(dst), c2.t().to(dst))


def test_conversion_to_and_from_host_dtype():
    # Conversion while crossing the host boundary: ocl float32 -> cpu float16 and back.
    c = _FRAC.to(torch.float32)
    d = c.to("ocl")
    assert torch.equal(d.to("cpu", torch.float16), c.to(torch.float16))
    assert_same(c.to("ocl", torch.bfloat16), c.to(torch.bfloat16))
    assert_same(c.to(torch.float64).to("ocl", torch.int32), c.to(torch.int32))
    h = torch.empty(30, dtype=torch.int64)
    h.copy_(d)
    assert torch.equal(h, c.to(torch.int64))


def test_float_rounding_matches_cpu():
    g = torch.Generator().manual_seed(0)
    c = torch.randn(4097, generator=g, dtype=torch.float64) * 1000
    for dst in (torch.float32, torch.float16, torch.bfloat16):
        assert_same(c.to("ocl").to(dst), c.to(dst))
    c32 = c.to(torch.float32)
    for dst in (torch.float16, torch.bfloat16):
        assert_same(c32.to("ocl").to(dst), c32.to(dst))
    # Values around the float16 range and subnormals.
    edge = torch.tensor([65504.0, 65519.0, 65520.0, 1e5, -1e5, 6e-8, 3e-8, 1e-45, float("nan")])
    assert_same(edge.to("ocl").to(torch.float16), edge.to(torch.float16))
    assert_same(edge.to("ocl").to(torch.bfloat16), edge.to(torch.bfloat16))


def test_conversion_edge_values():
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-30, 7.0])
    for src in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        c = special.to(src)
        for dst in (torch.bool, torch.float32, torch.float64, torch.float16, torch.bfloat16,
                    torch.complex64):
            if dst == src:
                continue
            assert_same(c.to("ocl").to(dst), c.to(dst))
    # Integers that float types cannot hold exactly round the same way as on the CPU.
    big = torch.tensor([2**24 + 1, 2**53 + 1, -(2**62) - 1, 2**63 - 1, 65519, 65520, 2049, 257])
    for dst in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64):
        assert_same(big.to("ocl").to(dst), big.to(dst))
    i32 = torch.tensor([2**24 + 1, 2**31 - 1, -(2**31), 16777217], dtype=torch.int32)
    for dst in (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16):
        assert_same(i32.to("ocl").to(dst), i32.to(dst))
    # Narrowing integer conversions wrap as on the CPU.
    wide = torch.tensor([300, -129, 65535, -1, 2**40 + 7], dtype=torch.int64)
    for dst in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.bool):
        assert_same(wide.to("ocl").to(dst), wide.to(dst))


# ---- fill_ / zero_ -------------------------------------------------------------------------------

_FILL_VALUES = {
    torch.bool: [True, False],
    torch.uint8: [0, 255, 7],
    torch.int8: [-128, 127, -3],
    torch.int16: [-32768, 1234],
    torch.int32: [-(2**31), 2**31 - 1],
    torch.int64: [-(2**63), 2**63 - 1, 5],
    torch.float16: [1.5, -65504.0, float("inf")],
    torch.bfloat16: [1.5, -3.0e38, float("nan")],
    torch.float32: [3.25, -1e-30, float("nan")],
    torch.float64: [1e300, -2.5],
    torch.complex64: [complex(1.5, -2.0), 3.0],
    torch.complex128: [complex(1e200, 0.5)],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_fill_and_zero(dtype):
    for value in _FILL_VALUES[dtype]:
        for n in (1, 7, 4097):
            c = torch.empty(n, dtype=dtype)
            d = torch.empty(n, dtype=dtype, device="ocl")
            assert_same(d.fill_(value), c.fill_(value))
        # Strided views: only the viewed elements change.
        base_c = make_cpu((6, 10), dtype, seed=2)
        base_d = base_c.to("ocl")
        for view in (
            lambda t: t[:, ::3],
            lambda t: t.t()[1:4],
            lambda t: t[1::2, 2:9:2],
            lambda t: t[:, 5],
        ):
            view(base_c).fill_(value)
            view(base_d).fill_(value)
            assert_same(base_d, base_c)
        # fill_ with a 0-dim tensor, on the device and on the host.
        t = torch.empty(5, dtype=dtype, device="ocl")
        t.fill_(torch.tensor(value, dtype=dtype))
        assert_same(t, torch.full((5,), value, dtype=dtype))
        t.fill_(torch.tensor(value, dtype=dtype).to("ocl"))
        assert_same(t, torch.full((5,), value, dtype=dtype))
    base_c = make_cpu((6, 10), dtype, seed=4)
    base_d = base_c.to("ocl")
    base_c[::2, 1::4].zero_()
    base_d[::2, 1::4].zero_()
    assert_same(base_d, base_c)
    base_d.zero_()
    assert_same(base_d, torch.zeros(6, 10, dtype=dtype))
    # Factories that fill.
    assert_same(torch.zeros(3, 4, dtype=dtype, device="ocl"), torch.zeros(3, 4, dtype=dtype))
    assert_same(torch.ones(7, dtype=dtype, device="ocl"), torch.ones(7, dtype=dtype))
    v = _FILL_VALUES[dtype][0]
    assert_same(torch.full((2, 3), v, dtype=dtype, device="ocl"), torch.full((2, 3), v, dtype=dtype))


def test_fill_with_device_tensor_stays_on_device():
    # fill_ with a 0-d ocl tensor is a broadcast copy on the device (as at::native::fill_ does),
    # not a read to the host: strided and aliasing destinations, another dtype, against CPU.
    import torch_ocl

    base_c = make_cpu((6, 10), torch.float32, seed=5)
    base_d = base_c.to("ocl")
    with torch_ocl.strict():
        base_d[:, ::3].fill_(base_d[2, 3])  # the value is a view of the tensor being filled
        base_d[1::2, 1:4].fill_(torch.tensor(7, dtype=torch.int64).to("ocl"))
        ints = torch.zeros(3, 4, dtype=torch.int32, device="ocl").t()
        ints.fill_(torch.tensor(-2.75, dtype=torch.float64).to("ocl"))
        torch.empty(0, 3, device="ocl").fill_(base_d[0, 0])
    base_c[:, ::3].fill_(base_c[2, 3])
    base_c[1::2, 1:4].fill_(torch.tensor(7, dtype=torch.int64))
    assert_same(base_d, base_c)
    assert_same(ints, torch.zeros(3, 4, dtype=torch.int32).t().fill_(torch.tensor(-2.75)))


def test_fill_rejects_non_scalar_tensor():
    t = torch.empty(4, device="ocl")
    with pytest.raises(RuntimeError, match="0-dimension"):
        t.fill_(torch.ones(2, device="ocl"))


# ---- views -----------------------------------------------------------------------------------


def test_views_share_storage_and_values():
    c = make_cpu((4, 6), torch.float32)
    d = c.to("ocl")
    cases = {
        "view": lambda t: t.view(6, 4),
        "view -1": lambda t: t.view(-1),
        "reshape": lambda t: t.reshape(2, 12),
        "narrow": lambda t: t.narrow(1, 2, 3),
        "t": lambda t: t.t(),
        "as_strided": lambda t: t.as_strided((3, 3), (5, 2), 1),
        "unfold": lambda t: t.unfold(1, 3, 2),
        "select": lambda t: t[2],
        "unsqueeze": lambda t: t.unsqueeze(1),
        "permute": lambda t: t.view(2, 2, 6).permute(2, 0, 1),
        "diagonal": lambda t: t.diagonal(),
        "expand": lambda t: t[1:2].expand(3, 6),
        "view.dtype": lambda t: t.view(torch.int32),
        "chunk": lambda t: t.chunk(2, dim=1)[1],
    }
    for name, f in cases.items():
        dv, cv = f(d), f(c)
        assert dv._is_view() == cv._is_view(), name
        assert dv.untyped_storage().data_ptr() == d.untyped_storage().data_ptr(), name
        assert dv.stride() == cv.stride() and dv.storage_offset() == cv.storage_offset(), name
        assert_same(dv, cv)
    # Writes through a view reach the base.
    d.narrow(1, 2, 3).fill_(-1)
    c.narrow(1, 2, 3).fill_(-1)
    assert_same(d, c)
    # reshape of a non-viewable layout copies.
    r = d.t().reshape(24)
    assert_same(r, c.t().reshape(24))
    assert r.untyped_storage().data_ptr() != d.untyped_storage().data_ptr()


def test_view_as_real_complex():
    c = make_cpu((5, 3), torch.complex64)
    d = c.to("ocl")
    real = torch.view_as_real(d)
    assert real.shape == (5, 3, 2) and real.dtype == torch.float32
    assert_same(real, torch.view_as_real(c))
    back = torch.view_as_complex(real)
    assert_same(back, c)
    real[..., 1].fill_(0.5)  # imaginary parts, through the view
    c2 = c.clone()
    torch.view_as_real(c2)[..., 1].fill_(0.5)
    assert_same(d, c2)
    assert_same(d.real.contiguous(), c2.real.contiguous())
    assert_same(d.imag.contiguous(), c2.imag.contiguous())


def test_unfold_and_as_strided_overlapping():
    c = torch.arange(20, dtype=torch.float32)
    d = c.to("ocl")
    assert_same(d.unfold(0, 5, 3), c.unfold(0, 5, 3))
    assert_same(d.unfold(0, 5, 3).contiguous(), c.unfold(0, 5, 3).contiguous())
    assert_same(d.as_strided((4, 4), (1, 1)).clone(), c.as_strided((4, 4), (1, 1)).clone())
    assert_same(d.as_strided((3, 2), (6, 3), 2), c.as_strided((3, 2), (6, 3), 2))


def test_copy_into_strided_destination():
    for dtype in (torch.float32, torch.int16, torch.complex64, torch.bfloat16):
        src = make_cpu((5, 4), dtype, seed=7)
        base_c = make_cpu((4, 10), dtype, seed=8)
        base_d = base_c.to("ocl")
        # device -> strided device destination
        base_c[:, ::2].t().copy_(src)
        base_d[:, ::2].t().copy_(src.to("ocl"))
        assert_same(base_d, base_c)
        # host -> strided device destination
        base_c[1:, 1::3].copy_(src[:3, :3])
        base_d[1:, 1::3].copy_(src[:3, :3])
        assert_same(base_d, base_c)
        # strided device -> strided host destination
        h = make_cpu((8, 5), dtype, seed=9)
        h_ref = h.clone()
        h[::2].copy_(base_d[:, ::2])
        h_ref[::2].copy_(base_c[:, ::2])
        assert torch.equal(h, h_ref)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.bool, torch.complex64,
                                   torch.int8], ids=_id)
@pytest.mark.parametrize("shape,perm", [((17, 33), (1, 0)), ((16, 16), (1, 0)), ((1, 40), (1, 0)),
                                        ((40, 1), (1, 0)), ((3, 5, 70, 9), (0, 2, 1, 3)),
                                        ((2, 19, 23), (2, 0, 1)), ((6, 4, 5, 3), (3, 1, 0, 2)),
                                        ((0, 7), (1, 0)), ((130, 3), (1, 0)),
                                        ((3, 5, 7, 37), (0, 2, 1, 3)), ((2, 3, 4, 64), (0, 2, 1, 3)),
                                        ((3, 2, 150), (1, 0, 2)), ((2, 3, 16), (1, 0, 2))])
def test_device_permuted_copies(dtype, shape, perm):
    # Device-to-device copies of permuted views: whole-tile, partial-tile and row blocks on CPU
    # drivers (rows that stay contiguous on both sides in vector pieces of 16 and a tail: the
    # last four shapes), one element per item elsewhere; .contiguous(), copy_ into a strided
    # destination, converting copies and a strided 1-d source.
    src = make_cpu(shape, dtype, seed=11)
    dev = src.to("ocl")
    with torch_ocl.strict():
        assert_same(dev.permute(perm).contiguous(), src.permute(perm).contiguous())
        if len(shape) == 2:  # into a transposed destination
            out_c = torch.zeros(shape, dtype=dtype).t()
            out_d = torch.zeros(shape, dtype=dtype, device="ocl").t()
            out_c.copy_(src.t().contiguous())
            out_d.copy_(dev.t().contiguous())
            assert_same(out_d, out_c)
        if dtype != torch.bool:
            assert_same(dev.permute(perm).to(torch.float64 if dtype != torch.complex64 else
                                             torch.complex64).contiguous(),
                        src.permute(perm).to(torch.float64 if dtype != torch.complex64 else
                                             torch.complex64).contiguous())
        flat = dev.reshape(-1)
        assert_same(flat[1::3].contiguous(), src.reshape(-1)[1::3].contiguous())
        assert_same(dev.expand(2, *shape).permute(0, *[p + 1 for p in perm]).contiguous(),
                    src.expand(2, *shape).permute(0, *[p + 1 for p in perm]).contiguous())


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.uint8])
def test_large_device_copies(dtype):
    # Contiguous same-dtype copies of 2 MiB and more run a vector copy kernel on CPU drivers
    # (whole multiples of 4 bytes at offsets of 4): word counts that are not multiples of 16,
    # views at storage offsets, an odd byte count (uint8: the driver's copy), and the profiler's
    # memcpy row.
    from torch.profiler import ProfilerActivity, profile

    n = (5 << 20) // torch.empty(0, dtype=dtype).element_size() + 7
    src = torch.arange(n, dtype=torch.float64).remainder(251).to(dtype)
    d = src.to("ocl")
    assert torch.equal(d.cpu(), src)
    out = torch.empty_like(d)
    with profile(activities=[ProfilerActivity.PrivateUse1]) as p:
        out.copy_(d)
        torch.ocl.synchronize()
    assert torch.equal(out.cpu(), src)
    assert any("Memcpy DtoD" in e.key for e in p.key_averages())
    base = torch.zeros(n + 64, dtype=dtype, device="ocl")
    base[5:5 + n - 9].copy_(d[3:n - 6])  # both at storage offsets
    want = torch.zeros(n + 64, dtype=dtype)
    want[5:5 + n - 9] = src[3:n - 6]
    assert torch.equal(base.cpu(), want)
    assert torch.equal(d.clone().cpu(), src)


def test_copy_shape_mismatch_raises():
    # As on the CPU: the source must broadcast to the destination (same numel is not enough).
    for src in (torch.ones(6), torch.ones(6, device="ocl")):
        with pytest.raises(RuntimeError):
            torch.empty(2, 3).copy_(src.cpu())
        with pytest.raises(RuntimeError, match="broadcast|size"):
            torch.empty(2, 3, device="ocl").copy_(src)
    with pytest.raises(RuntimeError, match="broadcast|size"):
        torch.empty(2, 3).copy_(torch.ones(3, 2, device="ocl"))


def test_copy_overlapping_is_rejected_or_correct():
    c = torch.arange(10, dtype=torch.float32)
    d = c.to("ocl")
    # Non-overlapping halves of one storage.
    d[:5].copy_(d[5:])
    c[:5].copy_(c[5:])
    assert_same(d, c)
    # Self copy is a no-op.
    d.copy_(d)
    assert_same(d, c)
    with pytest.raises(RuntimeError, match="(?i)overlap|memory location"):
        d[1:].copy_(d[:-1])


# ---- resize_ / set_ -------------------------------------------------------------------------------


def test_resize_growing_preserves_data():
    for dtype in (torch.float32, torch.uint8, torch.complex64):
        c = make_cpu((6,), dtype)
        d = c.to("ocl")
        ptr = d.data_ptr()
        d.resize_(2, 3)  # same bytes: no reallocation
        assert d.data_ptr() == ptr
        assert_same(d, c.view(2, 3))
        d.resize_(5000)
        assert d.shape == (5000,)
        assert d.untyped_storage().nbytes() == 5000 * c.element_size()
        assert_same(d[:6], c)
        d[6:].fill_(1)
        d.resize_(3)  # shrinking keeps the storage
        assert d.untyped_storage().nbytes() == 5000 * c.element_size()
        assert_same(d, c[:3])
    e = torch.empty(0, device="ocl")
    e.resize_(4, 4)
    e.fill_(2)
    assert_same(e, torch.full((4, 4), 2.0))
    # Storage-level resize keeps the leading bytes.
    c = make_cpu((8,), torch.int32)
    d = c.to("ocl")
    s = d.untyped_storage()
    s.resize_(64)
    assert s.nbytes() == 64
    assert_same(torch.empty(0, dtype=torch.int32, device="ocl").set_(s)[:8], c)
    # resize_as_ and memory_format.
    d2 = torch.empty(1, device="ocl").resize_as_(torch.empty(2, 3, 4))
    assert d2.shape == (2, 3, 4)
    d3 = torch.empty(0, device="ocl").resize_(2, 3, 4, 5, memory_format=torch.channels_last)
    assert d3.stride() == torch.empty(2, 3, 4, 5).contiguous(memory_format=torch.channels_last).stride()


def test_set_variants():
    c = make_cpu((12,), torch.float32)
    d = c.to("ocl")
    # set_(Tensor)
    t = torch.empty(0, device="ocl").set_(d)
    assert t.untyped_storage().data_ptr() == d.untyped_storage().data_ptr()
    assert_same(t, c)
    # set_(storage)
    t2 = torch.empty(0, device="ocl").set_(d.untyped_storage())
    assert_same(t2, c)
    # set_(storage, offset, size, stride)
    t3 = torch.empty(0, device="ocl").set_(d.untyped_storage(), 2, (3, 2), (4, 1))
    assert_same(t3, c.as_strided((3, 2), (4, 1), 2))
    d[2] = -5.0  # a write through the base shows in the set_ tensors
    c[2] = -5.0
    assert_same(t3, c.as_strided((3, 2), (4, 1), 2))
    # set_() with no argument: an empty tensor on the device.
    t4 = d.clone().set_()
    assert t4.numel() == 0 and t4.device.type == "ocl"
    # set_ on a larger view grows the storage.
    small = torch.zeros(2, device="ocl")
    small.set_(small.untyped_storage(), 0, (10,), (1,))
    assert small.untyped_storage().nbytes() >= 40
    assert_same(small[:2], torch.zeros(2))
    # set_ across devices is refused.
    with pytest.raises(RuntimeError):
        torch.empty(0).set_(d.untyped_storage())


def test_storage_copy_and_tensor_construction():
    c = make_cpu((10,), torch.int64)
    d = c.to("ocl")
    s = d.untyped_storage()
    assert s.device.type == "ocl"
    assert s.nbytes() == 80
    host = s.cpu()
    assert torch.equal(torch.tensor([], dtype=torch.int64).set_(host), c)
    s2 = s.clone()
    assert s2.data_ptr() != s.data_ptr()
    assert_same(torch.empty(0, dtype=torch.int64, device="ocl").set_(s2), c)
    assert_same(torch.tensor([1, 2, 3], device="ocl"), torch.tensor([1, 2, 3]))
    assert_same(torch.as_tensor([[1.5, 2.5]], device="ocl"), torch.tensor([[1.5, 2.5]]))
    assert_same(torch.empty_like(d).copy_(d), c)


# ---- two devices -------------------------------------------------------------------------------


def test_copy_between_two_devices():
    out = run_ok(
        """
        import torch
        assert torch.ocl.device_count() == 2
        g = torch.Generator().manual_seed(0)
        for dtype in (torch.float32, torch.int64, torch.float16, torch.complex64, torch.bool):
            c = (torch.randn(33, 17, generator=g) * 10).to(dtype)
            a = c.to("ocl:0")
            b = a.to("ocl:1")
            assert b.device == torch.device("ocl", 1), b.device
            assert torch.equal(b.cpu(), c), dtype
            # strided source on one device, strided destination on the other
            dst = torch.zeros(17, 33, dtype=dtype, device="ocl:1").t()
            dst.copy_(a)
            assert torch.equal(dst.cpu(), c), dtype
            dst2 = torch.zeros(17, 33, dtype=dtype, device="ocl:0")
            dst2.copy_(b.t())
            assert torch.equal(dst2.cpu(), c.t()), dtype
            # with a dtype conversion across devices
            assert torch.equal(a.to("ocl:1", torch.float64).cpu(), c.to(torch.float64))
            back = b.to("ocl:0", non_blocking=True)
            torch.ocl.synchronize(0)
            assert torch.equal(back.cpu(), c)
        # The device guard picks the device of `device="ocl"` inside the block.
        with torch.ocl.device(1):
            assert torch.empty(1, device="ocl").device.index == 1
            x = torch.ones(4, device="ocl")
            assert torch.ocl.memory_allocated(1) > 0
        assert torch.empty(1, device="ocl").device.index == 0
        # Ops on a tensor of device 1 run there even when device 0 is current.
        y = x.clone()
        assert y.device.index == 1 and torch.equal(y.cpu(), torch.ones(4))
        z = x.t().contiguous() if x.dim() == 2 else x[::2].contiguous()
        assert z.device.index == 1 and torch.equal(z.cpu(), torch.ones(2))
        x.fill_(3)
        assert x[1].item() == 3.0
        assert torch.ocl.current_device() == 0
        print("OK")
        """,
        env=TWO_DEVICES,
    )
    assert out.strip().endswith("OK")


def test_conjugate_and_negative_views():
    """Lazy conj()/neg views copy resolved in every direction (ATen's math-bit fallback used to
    recurse through _copy_from until the stack overflowed for an ocl source)."""
    z = torch.randn(5, 3, dtype=torch.complex64)
    assert torch.equal(z.conj().to("ocl").cpu(), z.conj().resolve_conj())
    zc = z.to("ocl").conj()
    assert zc.is_conj() and torch.equal(zc.cpu(), z.conj().resolve_conj())
    assert torch.equal(zc.t().cpu(), z.conj().t().resolve_conj())
    assert torch.equal(zc.to("ocl").cpu(), z.conj().resolve_conj())
    x = torch.randn(4, dtype=torch.complex64)
    assert torch.allclose(torch.fft.hfft(x.real.to("ocl")).cpu(), torch.fft.hfft(x.real))
    neg = torch.randn(6)._neg_view()
    assert torch.equal(neg.to("ocl").cpu(), neg.resolve_neg())
    assert torch.equal(neg.to("ocl")._neg_view().cpu(), neg.resolve_neg().neg())
