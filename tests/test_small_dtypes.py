"""uint16/uint32/uint64 and complex32 (ComplexHalf) as storage dtypes on ocl, and hash_tensor.

CPU PyTorch supports these dtypes only partially ("barebones"): creation, copies and conversions,
views, fill_, eq/ne (and bitwise ops for the unsigned ones). ocl runs the same set natively;
everything else raises a NotImplementedError naming the op and dtype. All results are compared
with CPU's exactly, in strict mode (a hidden CPU fallback fails the test).
"""

import warnings

import pytest
import torch
import torch_ocl

from conftest import ALL_DTYPES, fp64_supported

warnings.filterwarnings("ignore", message="ComplexHalf support is experimental")

NEW = [torch.uint16, torch.uint32, torch.uint64, torch.complex32]
UNSIGNED = [torch.uint16, torch.uint32, torch.uint64]
BASE = [d for d in ALL_DTYPES if fp64_supported() or d not in (torch.float64, torch.complex128)]


def assert_same(got, want):
    """Exact equality of values, dtype and shape (NaN equals NaN)."""
    assert got.device.type == "cpu"
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.is_complex:
        got, want = torch.view_as_real(got), torch.view_as_real(want)
    if want.dtype.is_floating_point:
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    else:
        assert torch.equal(got, want), (got, want)


def values(dtype, for_dst=None):
    """Test values of `dtype`, kept where converting them to `for_dst` is defined behaviour."""
    base = [0, 1, 2, 3, 7, 100, 200, 37, 64, 5, 11, 250]
    if dtype == torch.bool:
        return torch.tensor([True, False, True, True, False, False] * 2)
    if dtype.is_complex:
        re = torch.tensor([0.0, 1.0, 1.00048828125, 1.00146484375, 2.5, 100.25, 65504.0, 3.0,
                           0.333, 1e-3, 7.0, 250.0])
        im = torch.tensor([1.0, -2.0, 0.5, 3.0, 1.00048828125, 0.0, -1.0, 2.0, 9.0, 0.1, 0.0, -4.0])
        if for_dst is None or for_dst.is_floating_point or for_dst.is_complex:
            re[3], im[4], re[8] = float("inf"), float("nan"), -0.0
        return torch.complex(re, im).to(dtype)
    if dtype.is_floating_point:
        v = torch.tensor([0.0, 1.0, 1.00048828125, 1.00146484375, 2.5, 100.25, 65504.0, 3.75,
                          0.333, 1e-3, 7.5, 250.0])
        if for_dst is None or for_dst.is_floating_point or for_dst.is_complex:
            v[3], v[4], v[8] = float("inf"), float("nan"), -0.0
        elif for_dst not in UNSIGNED and for_dst != torch.uint8:
            v[2] = -3.0
        return v.to(dtype)
    return torch.tensor(base, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_round_trip_and_factories(dtype):
    x = values(dtype)
    with torch_ocl.strict():
        d = x.to("ocl")
        assert d.dtype == dtype and d.device.type == "ocl"
        assert_same(d.cpu(), x)
        assert_same(d.clone().cpu(), x)
        for make in (torch.zeros, torch.ones, torch.empty):
            t = make(3, 4, dtype=dtype, device="ocl")
            assert t.shape == (3, 4) and t.dtype == dtype
            if make is not torch.empty:
                assert_same(t.cpu(), make(3, 4, dtype=dtype))
        assert_same(torch.full((2, 3), 5, dtype=dtype, device="ocl").cpu(),
                    torch.full((2, 3), 5, dtype=dtype))
        z = torch.zeros(0, 3, dtype=dtype)
        assert_same(torch.zeros(0, 3, dtype=dtype, device="ocl").cpu(), z)
        assert_same(x[:0].to("ocl").cpu(), x[:0])


def test_uint64_large_values_exact():
    big = torch.tensor([2**63, 2**64 - 1, 2**63 + 12345, 2**53 + 1, 0, 1], dtype=torch.uint64)
    with torch_ocl.strict():
        d = big.to("ocl")
        assert_same(d.cpu(), big)
        for dst in BASE + [torch.uint16, torch.uint32]:
            if dst in (torch.bool, torch.int64) or dst.is_floating_point or dst.is_complex:
                assert_same(d.to(dst).cpu(), big.to(dst))
        f = torch.tensor([2.0**63, 1.5 * 2.0**63, 2.0**64 - 2.0**11, 12345.0], dtype=torch.float64)
        if fp64_supported():
            assert_same(f.to("ocl").to(torch.uint64).cpu(), f.to(torch.uint64))
        f32 = f.float()
        assert_same(f32.to("ocl").to(torch.uint64).cpu(), f32.to(torch.uint64))
        i = torch.tensor([-1, -2**63, 5], dtype=torch.int64)
        assert_same(i.to("ocl").to(torch.uint64).cpu(), i.to(torch.uint64))
        assert_same(d.view(torch.int64).cpu(), big.view(torch.int64))


@pytest.mark.parametrize("src", BASE + NEW, ids=str)
def test_conversions_every_pair(src):
    with torch_ocl.strict():
        for dst in BASE + NEW:
            if src not in NEW and dst not in NEW:
                continue
            x = values(src, dst)
            want = x.to(dst)
            got = x.to("ocl").to(dst).cpu()
            assert_same(got, want)
            # strided source and destination: a transposed view into a preallocated tensor
            x2 = x.reshape(3, 4).t()
            out = torch.empty(4, 3, dtype=dst, device="ocl").t().contiguous().t()
            out.copy_(x2.to("ocl"))
            assert_same(out.cpu(), x2.to(dst))


def test_complex32_rounding_and_specials():
    # float32 values on and between half ties: round to nearest even, as CPU.
    re = torch.tensor([1.0 + 2**-11, 1.0 + 3 * 2**-11, 65519.0, 65520.0, 1e-8, -2.0**-24,
                       float("inf"), float("nan")])
    im = torch.tensor([1.0 + 3 * 2**-11, -(1.0 + 2**-11), 1e5, 0.1, 2**-25, 3 * 2**-26,
                       float("-inf"), 1.0])
    z = torch.complex(re, im)
    with torch_ocl.strict():
        zd = z.to("ocl")
        assert_same(zd.to(torch.complex32).cpu(), z.to(torch.complex32))
        h = zd.to(torch.complex32)
        assert_same(h.to(torch.complex64).cpu(), z.to(torch.complex32).to(torch.complex64))
        assert_same(h.to(torch.float16).cpu(), z.to(torch.complex32).to(torch.float16))
        assert_same(torch.view_as_real(h).cpu(), torch.view_as_real(z.to(torch.complex32)))
        r = torch.view_as_real(z.to(torch.complex32)).to("ocl")
        assert_same(torch.view_as_complex(r).cpu(), z.to(torch.complex32))
        # chalf() and complex(float16, float16), the conformance cells
        assert_same(zd.real.chalf().cpu(), z.real.chalf())
        a, b = re.half(), im.half()
        assert_same(torch.complex(a.to("ocl"), b.to("ocl")).cpu(), torch.complex(a, b))


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_views_fill_and_strided(dtype):
    x = values(dtype).reshape(3, 4)
    with torch_ocl.strict():
        d = x.to("ocl")
        assert_same(d.t().contiguous().cpu(), x.t().contiguous())
        assert_same(d[:, 1::2].clone().cpu(), x[:, 1::2].clone())
        assert_same(d.reshape(2, 6).cpu(), x.reshape(2, 6))
        assert_same(d.transpose(0, 1)[1:].cpu(), x.transpose(0, 1)[1:])
        e, c = d.clone(), x.clone()
        e[:, ::2].fill_(9)
        c[:, ::2].fill_(9)
        assert_same(e.cpu(), c)
        e.t().zero_()
        assert_same(e.cpu(), torch.zeros_like(c))
        e.fill_(3)
        assert_same(e.cpu(), torch.full_like(c, 3))
        if dtype in UNSIGNED:
            e.fill_(2**(8 * dtype.itemsize) - 1)
            assert_same(e.cpu(), torch.full_like(c, 2**(8 * dtype.itemsize) - 1))
        same_size = {2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]
        if dtype != torch.complex32:
            assert_same(d.view(same_size).cpu(), x.view(same_size))


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_eq_ne_bitwise(dtype):
    a = values(dtype).reshape(3, 4)
    b = torch.cat([a[6:], a[:6]]).reshape(3, 4) if dtype == torch.complex32 else torch.tensor(
        [1, 1, 2, 0, 7, 99, 200, 5, 64, 5, 10, 250], dtype=torch.int64).to(dtype).reshape(3, 4)
    with torch_ocl.strict():
        da, db = a.to("ocl"), b.to("ocl")
        assert_same((da == db).cpu(), a == b)
        assert_same((da != db).cpu(), a != b)
        assert_same((da.t() == db.t()).cpu(), a.t() == b.t())
        assert_same((da == 7).cpu(), a == 7)
        cond = torch.tensor([True, False, False, True] * 3).reshape(3, 4)
        assert_same(torch.where(cond.to("ocl"), da, db).cpu(), torch.where(cond, a, b))
        assert_same(torch.where(cond.t().to("ocl"), da.t(), db.t()).cpu(),
                    torch.where(cond.t(), a.t(), b.t()))
        assert_same(da.isnan().cpu(), a.isnan())
        if dtype == torch.complex32:
            assert_same((da + db).cpu(), a + b)
            assert_same((da - db.t().contiguous().t()).cpu(), a - b)
            assert_same(torch.add(da, db, alpha=2).cpu(), torch.add(a, b, alpha=2))
        if dtype in UNSIGNED:
            assert_same((da & db).cpu(), a & b)
            assert_same((da | db.t().contiguous().t()).cpu(), a | b)
            assert_same((da ^ db).cpu(), a ^ b)
            assert_same((da * db).cpu(), a * b)
            big = torch.tensor([2**64 - 1, 2**63], dtype=torch.uint64)
            if dtype == torch.uint64:
                assert_same((big.to("ocl") == big.to("ocl")).cpu(), big == big)
                assert_same((big.to("ocl") & 2**63).cpu(), big & 2**63)


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_unsupported_ops_raise_clear_error(dtype):
    a = values(dtype)
    d = a.to("ocl")
    ops = {"lt": lambda t: t < t, "maximum": lambda t: torch.maximum(t, t)}
    if dtype == torch.complex32:
        ops = {"exp": torch.exp, "div": lambda t: t / t}
    else:
        ops["add"] = lambda t: t + t
    for name, fn in ops.items():
        with pytest.raises(RuntimeError):
            fn(a)  # CPU refuses it too
        with torch_ocl.strict():
            with pytest.raises(NotImplementedError, match=str(dtype).split(".")[1].replace(
                    "uint", "UInt").replace("complex32", "ComplexHalf")):
                fn(d)
    # the process stays usable
    assert_same(d.cpu(), a)


# CPU's xor_sum has no kernel for uint16/32/64 (nor complex): ocl refuses them the same way.
HASH_DTYPES = [d for d in BASE if not d.is_complex]


def hash_input(dtype, shape=(3, 5, 7)):
    g = torch.Generator().manual_seed(0)
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        x = torch.randn(n, generator=g, dtype=torch.float32) * 100
        x[:6] = torch.tensor([0.0, -0.0, float("inf"), float("nan"), 1e-40, -3e-45])
        return x.to(dtype).reshape(shape)
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)


@pytest.mark.parametrize("dtype", HASH_DTYPES, ids=str)
def test_hash_tensor_matches_cpu(dtype):
    x = hash_input(dtype)
    with torch_ocl.strict():
        d = x.to("ocl")
        assert_same(torch.hash_tensor(d).cpu(), torch.hash_tensor(x))
        if dtype in (torch.float16, torch.bfloat16):
            # CPU's vectorised path (taken with dim) canonicalises a 16-bit NaN's payload and sign
            # on its way to double, its full-tensor path does not: NaN stays out of these cells.
            x = torch.where(x.isnan(), torch.ones_like(x), x)
            d = x.to("ocl")
        for dim in (1, (0, 2), -1, (0, 1, 2)):
            for keepdim in (False, True):
                assert_same(torch.hash_tensor(d, dim, keepdim=keepdim).cpu(),
                            torch.hash_tensor(x, dim, keepdim=keepdim))
        # non-contiguous input, out= into a strided tensor
        assert_same(torch.hash_tensor(d.transpose(0, 2), 1).cpu(),
                    torch.hash_tensor(x.transpose(0, 2), 1))
        out = torch.empty(7, 3, dtype=torch.uint64, device="ocl").t()
        torch.hash_tensor(d, 1, out=out)
        assert_same(out.cpu(), torch.hash_tensor(x, 1))
        # zero outputs give an empty result (a zero-size reduced dimension is an error, below)
        assert_same(torch.hash_tensor(x[:0].to("ocl"), 1).cpu(), torch.hash_tensor(x[:0], 1))
        assert_same(torch.hash_tensor(d[1, 2, 3]).cpu(), torch.hash_tensor(x[1, 2, 3]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16], ids=str)
def test_hash_tensor_long_rows(dtype):
    # few long rows take the chunked path (partials, then a second pass); odd lengths
    x = hash_input(dtype, (3, 10001))
    x = torch.where(x.isnan(), torch.ones_like(x), x) if dtype.is_floating_point else x
    with torch_ocl.strict():
        d = x.to("ocl")
        assert_same(torch.hash_tensor(d).cpu(), torch.hash_tensor(x))
        assert_same(torch.hash_tensor(d, 1).cpu(), torch.hash_tensor(x, 1))
        assert_same(torch.hash_tensor(d.t(), 0, keepdim=True).cpu(),
                    torch.hash_tensor(x.t(), 0, keepdim=True))
        big = hash_input(dtype, (2, 4096 * 1024 + 3))
        if dtype.is_floating_point:
            big = torch.where(big.isnan(), torch.ones_like(big), big)
        assert_same(torch.hash_tensor(big.to("ocl"), 1).cpu(), torch.hash_tensor(big, 1))


def test_hash_tensor_errors_match_cpu():
    x = torch.ones(3)
    d = x.to("ocl")
    with torch_ocl.strict():
        for fn, args, kw in [
            (torch.hash_tensor, (torch.empty(0),), {}),
            (torch.hash_tensor, (x,), {"mode": 1}),
            (torch.hash_tensor, (torch.ones(2, dtype=torch.complex64),), {}),
            (torch.hash_tensor, (torch.ones(2, 0, 3),), {"dim": 1}),
            (torch.hash_tensor, (torch.ones(2, 0, 3),), {"dim": (0, 1)}),
        ] + [(torch.hash_tensor, (torch.ones(3, dtype=t),), {}) for t in UNSIGNED]:
            with pytest.raises((RuntimeError, IndexError)) as cpu_err:
                fn(*args, **kw)
            dev_args = tuple(a.to("ocl") for a in args)
            with pytest.raises(type(cpu_err.value)) as ocl_err:
                fn(*dev_args, **kw)
            want = str(cpu_err.value).split("\n")[0].replace("_cpu", "_ocl")
            assert str(ocl_err.value).split("\n")[0] == want
        assert_same(torch.hash_tensor(d).cpu(), torch.hash_tensor(x))
