"""uniform_ and normal_ run natively from the device's Philox generator: same seed, same numbers,
bit-exact against an independent Python Philox-4x32-10."""

import math

import pytest
import torch

import torch_ocl

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox(counter, key):
    c, k = list(counter), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + W0) & MASK, (k[1] + W1) & MASK]
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & MASK, p1 & MASK, ((p0 >> 32) ^ c[3] ^ k[1]) & MASK, p0 & MASK]
    return c


def reference_uniform(seed, offset, n):
    key = [seed & MASK, seed >> 32]
    return [(philox([offset & MASK, offset >> 32, i & MASK, i >> 32], key)[0] >> 8) / 16777216.0
            for i in range(n)]


def test_uniform_matches_reference_philox_bit_exactly():
    torch.ocl.manual_seed(1234)
    first = torch.rand(37, device="ocl").cpu()
    second = torch.rand(37, device="ocl").cpu()  # the offset advanced by one counter block
    assert torch.equal(first, torch.tensor(reference_uniform(1234, 0, 37), dtype=torch.float32))
    assert torch.equal(second, torch.tensor(reference_uniform(1234, 4, 37), dtype=torch.float32))


def test_same_seed_same_numbers_and_state_round_trip():
    torch.ocl.manual_seed(7)
    a = torch.randn(1000, device="ocl").cpu()
    state = torch.ocl.get_rng_state()
    b = torch.randn(1000, device="ocl").cpu()
    torch.ocl.set_rng_state(state)
    c = torch.randn(1000, device="ocl").cpu()
    torch.ocl.manual_seed(7)
    d = torch.randn(1000, device="ocl").cpu()
    assert torch.equal(b, c)
    assert torch.equal(a, d)
    assert not torch.equal(a, b)


def test_explicit_generator_is_independent_of_default():
    g = torch.Generator(device="ocl").manual_seed(99)
    x = torch.empty(100, device="ocl").uniform_(generator=g).cpu()
    g.manual_seed(99)
    torch.ocl.manual_seed(0)
    y = torch.empty(100, device="ocl").uniform_(generator=g).cpu()
    assert torch.equal(x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_distribution_moments_and_range(dtype):
    if dtype == torch.float64 and not torch.ocl.get_device_properties().fp64:
        pytest.skip("device has no cl_khr_fp64")
    torch.ocl.manual_seed(3)
    n = 200_000
    u = torch.empty(n, device="ocl", dtype=dtype).uniform_(-2.0, 3.0).cpu().double()
    assert u.min() >= -2.0 and u.max() < 3.0 or dtype in (torch.float16, torch.bfloat16)
    assert abs(u.mean().item() - 0.5) < 0.02
    assert abs(u.var().item() - 25 / 12) < 0.05
    z = torch.empty(n, device="ocl", dtype=dtype).normal_(1.5, 2.0).cpu().double()
    assert abs(z.mean().item() - 1.5) < 0.03
    assert abs(z.std().item() - 2.0) < 0.03
    assert math.isfinite(z.abs().max().item())


def test_non_contiguous_and_zero_size():
    torch.ocl.manual_seed(5)
    base = torch.zeros(64, 32, device="ocl")
    view = base.t()[::2]  # strided
    view.uniform_()
    host = base.cpu()
    assert (host.t()[::2] > 0).float().mean() > 0.99  # filled (a 0 draw has probability 2^-24)
    assert (host.t()[1::2] == 0).all()  # untouched rows stay zero
    torch.empty(0, device="ocl").normal_()


def test_random_kernels_are_native():
    torch_ocl.reset_fallback_report()
    with torch_ocl.strict():
        torch.rand(10, device="ocl")
        torch.randn(3, 4, device="ocl", dtype=torch.float16)
    assert torch_ocl.fallback_report(print_table=False) == []


def test_integer_dtype_is_rejected():
    with pytest.raises(RuntimeError, match="floating point"):
        torch.empty(4, dtype=torch.int32, device="ocl").uniform_()
