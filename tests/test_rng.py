"""Tier 1: the ocl Philox generator's seeding and state API (the random kernels themselves are
checked bit-exactly in test_random_kernels.py)."""

import pytest
import torch

from conftest import TWO_DEVICES, run_ok

DEFAULT_SEED = 67280421310721


def _state_words(state: torch.Tensor) -> tuple[int, int]:
    b = bytes(state.tolist())
    return int.from_bytes(b[:8], "little"), int.from_bytes(b[8:], "little")


@pytest.fixture(autouse=True)
def _restore_rng():
    states = torch.ocl.get_rng_state_all()
    yield
    torch.ocl.set_rng_state_all(states)


def test_manual_seed_and_initial_seed():
    torch.ocl.manual_seed(123)
    assert torch.ocl.initial_seed() == 123
    torch.ocl.manual_seed_all(2**40 + 5)
    assert torch.ocl.initial_seed() == 2**40 + 5
    torch.ocl.default_generators[0].manual_seed(9)
    assert torch.ocl.initial_seed() == 9
    assert len(torch.ocl.default_generators) == torch.ocl.device_count()


def test_seed_is_random():
    torch.ocl.seed()
    a = torch.ocl.initial_seed()
    torch.ocl.seed()
    b = torch.ocl.initial_seed()
    assert a != b
    torch.ocl.seed_all()
    assert torch.ocl.initial_seed() not in (a, b)


def test_get_rng_state_format():
    torch.ocl.manual_seed(0x0102030405060708)
    st = torch.ocl.get_rng_state()
    assert st.dtype == torch.uint8
    assert st.device == torch.device("cpu")
    assert st.shape == (16,)
    # (seed, offset) as two little-endian 64-bit words; a fresh seed starts at offset 0.
    assert _state_words(st) == (0x0102030405060708, 0)
    assert torch.equal(torch.ocl.get_rng_state(0), st)
    assert torch.equal(torch.ocl.get_rng_state("ocl:0"), st)


def test_set_rng_state_round_trip():
    torch.ocl.manual_seed(42)
    torch.ocl.default_generators[0].set_offset(12)
    saved = torch.ocl.get_rng_state()
    torch.ocl.manual_seed(1000)
    assert not torch.equal(torch.ocl.get_rng_state(), saved)
    torch.ocl.set_rng_state(saved)
    assert torch.equal(torch.ocl.get_rng_state(), saved)
    assert torch.ocl.initial_seed() == 42
    assert _state_words(saved) == (42, 12)
    # set_rng_state copies: mutating the tensor afterwards changes nothing.
    saved[0] = 7
    assert torch.ocl.initial_seed() == 42
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.ocl.set_rng_state(torch.zeros(8, dtype=torch.uint8))


def test_state_replays_random_numbers():
    torch.ocl.manual_seed(3)
    st = torch.ocl.get_rng_state()
    a = torch.rand(1000, device="ocl").cpu()
    assert _state_words(torch.ocl.get_rng_state())[1] > 0  # the offset advanced
    b = torch.rand(1000, device="ocl").cpu()
    assert not torch.equal(a, b)
    torch.ocl.set_rng_state(st)
    assert torch.equal(torch.rand(1000, device="ocl").cpu(), a)
    assert torch.equal(torch.rand(1000, device="ocl").cpu(), b)


def test_torch_manual_seed_seeds_ocl():
    torch.manual_seed(77)
    assert torch.ocl.initial_seed() == 77
    assert torch.initial_seed() == 77
    with torch.random.fork_rng(device_type="ocl"):
        torch.ocl.manual_seed(5)
        assert torch.ocl.initial_seed() == 5
    assert torch.ocl.initial_seed() == 77


def test_generator_object():
    g = torch.Generator(device="ocl")
    assert g.device == torch.device("ocl", 0)
    assert g.initial_seed() == DEFAULT_SEED
    assert g.manual_seed(5) is g
    assert g.initial_seed() == 5
    st = g.get_state()
    assert st.dtype == torch.uint8 and st.shape == (16,)
    assert _state_words(st) == (5, 0)
    g.set_offset(8)
    assert g.get_offset() == 8
    g2 = torch.Generator(device="ocl")
    g2.set_state(g.get_state())
    assert torch.equal(g2.get_state(), g.get_state())
    assert g2.initial_seed() == 5 and g2.get_offset() == 8
    # A private generator does not touch the default one.
    torch.ocl.manual_seed(11)
    g.manual_seed(12)
    assert torch.ocl.initial_seed() == 11
    # The same state gives the same numbers through either generator.
    g.manual_seed(99)
    x = torch.rand(100, device="ocl", generator=g).cpu()
    g2.manual_seed(99)
    y = torch.rand(100, device="ocl", generator=g2).cpu()
    assert torch.equal(x, y)
    cloned = g.clone_state()
    assert torch.equal(cloned.get_state(), g.get_state())
    s = g.seed()
    assert g.initial_seed() == s
    with pytest.raises(RuntimeError, match="16 bytes"):
        g.set_state(torch.zeros(15, dtype=torch.uint8))


def test_generators_per_device():
    out = run_ok(
        """
        import torch
        torch.ocl.manual_seed_all(21)
        assert [torch.ocl.default_generators[i].initial_seed() for i in range(2)] == [21, 21]
        torch.ocl.set_device(1)
        torch.ocl.manual_seed(4)  # the current device only
        assert torch.ocl.initial_seed() == 4
        assert torch.ocl.default_generators[0].initial_seed() == 21
        states = torch.ocl.get_rng_state_all()
        assert len(states) == 2
        torch.ocl.manual_seed_all(0)
        torch.ocl.set_rng_state_all(states)
        assert torch.ocl.default_generators[0].initial_seed() == 21
        assert torch.ocl.default_generators[1].initial_seed() == 4
        torch.manual_seed(8)
        assert torch.ocl.default_generators[0].initial_seed() == 8
        assert torch.ocl.default_generators[1].initial_seed() == 8
        g = torch.Generator(device="ocl:1")
        assert g.device == torch.device("ocl", 1)
        print("OK")
        """,
        env=TWO_DEVICES,
    )
    assert out.strip().endswith("OK")
