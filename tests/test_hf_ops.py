"""Ops that Hugging Face models reach on ocl and that tools/hf_sweep.py found missing, against
CPU in strict mode.

Integer torch.histc: transformers' mixture-of-experts routing (Mixtral, Qwen2-MoE, ...) counts
tokens per expert with histc of int32 expert ids on every non-CPU device. CPU has no integer
histc; CUDA bins integers in integer arithmetic, (v - min) * bins / (max - min). For the small
integers used here, CPU's float64 histc of the same values gives the same bins (the exact quotient
is at least 1 / (max - min) away from the next integer, far above float64's rounding), so it is
the reference.
"""

import pytest
import torch
import torch_ocl

INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def _ref(x, bins, lo, hi):
    return torch.histc(x.double(), bins=bins, min=lo, max=hi).to(x.dtype)


def _check(x, bins, lo, hi):
    ref = _ref(x, bins, lo, hi)
    with torch_ocl.strict():
        got = torch.histc(x.to("ocl"), bins=bins, min=lo, max=hi)
    assert got.dtype == x.dtype and got.device.type == "ocl"
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)


def test_histc_moe_expert_counts():
    # the routing pattern: top-2 of 8 experts for 37 tokens, bins = experts, range [0, experts-1]
    g = torch.Generator().manual_seed(0)
    ids = torch.rand(37, 8, generator=g).topk(2, dim=-1).indices.to(torch.int32)
    _check(ids.reshape(-1), 8, 0, 7)
    _check(ids, 8, 0, 7)  # 2-D input counts every element


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_histc_integer_dtypes_out_of_range_non_contiguous(dtype):
    g = torch.Generator().manual_seed(int(torch.tensor([], dtype=dtype).element_size()))
    lo_v = 0 if dtype == torch.uint8 else -20
    base = torch.randint(lo_v, 30, (9, 14), generator=g).to(dtype)
    x = base.t()[::2]  # (7, 9), non-contiguous
    assert not x.is_contiguous()
    lo = 0 if dtype == torch.uint8 else -5
    _check(x, 7, lo, 12)  # values below, above and on both range ends
    _check(base, 5, lo, 29)  # bins that do not divide the range
    _check(base, 1, lo, 12)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_histc_integer_range_from_data(dtype):
    x = torch.tensor([3, 9, 4, 4, 7, 11, 3], dtype=dtype)
    ref = torch.histc(x.double(), bins=4).to(dtype)  # min == max == 0: the data's range
    with torch_ocl.strict():
        got = torch.histc(x.to("ocl"), bins=4)
        same = torch.histc(torch.full((5,), 6, dtype=dtype, device="ocl"), bins=3, min=6, max=6)
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)
    # all equal, min == max: the range widens to [v - 1, v + 1], as on CPU
    torch.testing.assert_close(same.cpu(), torch.histc(torch.full((5,), 6.0, dtype=torch.double),
                                                       bins=3, min=6, max=6).to(dtype))


def test_histc_integer_zero_size_and_out():
    e = torch.empty(0, 3, dtype=torch.int32)
    _check(e, 4, 0, 3)
    with torch_ocl.strict():
        got = torch.histc(e.to("ocl"), bins=2)  # empty with min == max: [-1, 1]
        out = torch.empty(0, dtype=torch.int32, device="ocl")
        r = torch.histc(torch.tensor([0, 1, 1, 2], dtype=torch.int32, device="ocl"), bins=3,
                        min=0, max=2, out=out)
    assert got.shape == (2,) and got.sum().item() == 0
    assert r is out and out.cpu().tolist() == [1, 2, 1]


def test_histc_integer_errors():
    x = torch.tensor([1, 2, 3], dtype=torch.int32, device="ocl")
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histc(x, bins=0)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(x, bins=3, min=5, max=2)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.histc(x, bins=3, min=0, max=3, out=torch.empty(3, device="ocl"))
    assert torch.histc(x, bins=3, min=1, max=3).cpu().tolist() == [1, 1, 1]  # still usable


def test_isin_of_a_column_slice_matches_cpu_without_a_copy_warning():
    # generate()'s stopping criteria: isin(input_ids[:, -1:], eos_ids), whose flattening is a
    # strided view. A fresh interpreter, as searchsorted's copy warning fires once per process.
    from conftest import run_ok

    out = run_ok("""
        import warnings, torch, torch_ocl
        ids = torch.tensor([[5, 2, 7, 9], [1, 3, 2, 2], [0, 9, 9, 4]])
        test = torch.tensor([2, 9])
        for cols in (slice(-1, None), slice(1, 3), slice(None, None, 2)):
            ref = torch.isin(ids[:, cols], test)
            with warnings.catch_warnings(record=True) as w, torch_ocl.strict():
                warnings.simplefilter("always")
                got = torch.isin(ids.to("ocl")[:, cols], test.to("ocl"))
            assert torch.equal(got.cpu(), ref), (cols, got, ref)
            assert not [x for x in w if "searchsorted" in str(x.message)], [str(x.message) for x in w]
        print("ok")
    """)
    assert out.strip() == "ok"
