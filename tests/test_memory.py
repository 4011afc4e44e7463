"""Tier 1: the caching device allocator, its statistics, OOM handling and pinned host memory."""

import gc

import pytest
import torch

from conftest import make_cpu

MiB = 2**20

STAT_KEYS = [
    f"{stat}.{pool}.{metric}"
    for stat in (
        "allocation",
        "segment",
        "active",
        "inactive_split",
        "allocated_bytes",
        "reserved_bytes",
        "active_bytes",
        "inactive_split_bytes",
        "requested_bytes",
    )
    for pool in ("all", "small_pool", "large_pool")
    for metric in ("current", "peak", "allocated", "freed")
] + ["num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free", "max_split_size"]


@pytest.fixture(autouse=True)
def _settle():
    torch.ocl.synchronize()
    gc.collect()
    yield
    torch.ocl.set_per_process_memory_fraction(1.0)
    torch.ocl.synchronize()


def test_memory_stats_keys():
    s = torch.ocl.memory_stats()
    missing = [k for k in STAT_KEYS if k not in s]
    assert not missing, missing
    assert s["allocated_bytes.all.current"] == torch.ocl.memory_allocated()
    assert s["reserved_bytes.all.current"] == torch.ocl.memory_reserved()
    assert s["allocated_bytes.all.peak"] == torch.ocl.max_memory_allocated()
    assert s["reserved_bytes.all.peak"] == torch.ocl.max_memory_reserved()
    assert torch.accelerator.memory.memory_stats(0) == torch.ocl.memory_stats(0)


def test_allocated_and_reserved_track_tensors():
    base_alloc = torch.ocl.memory_allocated()
    base = torch.ocl.memory_stats()
    base_count, base_requested = base["allocation.all.current"], base["requested_bytes.all.current"]
    small = torch.empty(1000, device="ocl")  # 4000 bytes -> a 4096-byte block (512 rounding)
    assert torch.ocl.memory_allocated() - base_alloc == 4096
    assert torch.ocl.memory_reserved() >= torch.ocl.memory_allocated()
    large = torch.empty(3 * MiB, dtype=torch.uint8, device="ocl")
    s = torch.ocl.memory_stats()
    assert s["allocation.all.current"] == base_count + 2
    assert torch.ocl.memory_allocated() - base_alloc == 4096 + 3 * MiB
    assert s["allocated_bytes.large_pool.current"] >= 3 * MiB
    assert s["allocated_bytes.small_pool.current"] >= 4096
    # requested bytes are exact; compared with their own baseline (tensors of earlier tests in
    # the same process may hold blocks whose rounding makes allocated > requested)
    assert s["requested_bytes.all.current"] - base_requested == 4000 + 3 * MiB
    # torch.accelerator.memory gives the same figures.
    am = torch.accelerator.memory
    assert am.memory_allocated(0) == torch.ocl.memory_allocated()
    assert am.memory_reserved(0) == torch.ocl.memory_reserved()
    assert am.max_memory_allocated(0) == torch.ocl.max_memory_allocated()
    assert am.max_memory_reserved(0) == torch.ocl.max_memory_reserved()
    del small, large
    assert torch.ocl.memory_allocated() == base_alloc


def test_peak_and_reset():
    base = torch.ocl.memory_allocated()
    x = torch.empty(8 * MiB, dtype=torch.uint8, device="ocl")
    del x
    assert torch.ocl.max_memory_allocated() >= base + 8 * MiB
    torch.ocl.reset_peak_memory_stats()
    assert torch.ocl.max_memory_allocated() == torch.ocl.memory_allocated() == base
    assert torch.ocl.max_memory_reserved() == torch.ocl.memory_reserved()
    y = torch.empty(2 * MiB, dtype=torch.uint8, device="ocl")
    assert torch.ocl.max_memory_allocated() == base + 2 * MiB
    del y
    torch.accelerator.memory.reset_peak_memory_stats(0)
    assert torch.ocl.max_memory_allocated() == base
    torch.ocl.reset_accumulated_memory_stats()
    s = torch.ocl.memory_stats()
    assert s["allocation.all.allocated"] == 0 and s["allocation.all.freed"] == 0


def test_no_leak_after_alloc_loop():
    torch.ocl.empty_cache()
    start = torch.ocl.memory_allocated()
    start_blocks = torch.ocl.memory_stats()["allocation.all.current"]
    sizes = [1, 7, 511, 512, 513, 4097, 65536, MiB - 1, MiB, MiB + 1, 3 * MiB + 5, 12 * MiB + 3]
    for it in range(3):
        live = []
        for n in sizes:
            t = torch.empty(n, dtype=torch.uint8, device="ocl")
            t.fill_(it)
            live.append(t)
            if n % 2:  # free some early so blocks split and merge
                live.pop(0)
        views = [t[1:] for t in live if t.numel() > 1]
        del live
        assert torch.ocl.memory_allocated() > start
        del views, t
    # Every block went back, including after clones and conversions.
    a = make_cpu((33, 17), torch.float32).to("ocl")
    b = a.t().contiguous().to(torch.float16).clone()
    del a, b
    torch.ocl.synchronize()
    assert torch.ocl.memory_allocated() == start
    assert torch.ocl.memory_stats()["allocation.all.current"] == start_blocks


def test_empty_cache_drops_reserved():
    torch.ocl.empty_cache()
    base_reserved = torch.ocl.memory_reserved()
    x = torch.empty(16 * MiB, dtype=torch.uint8, device="ocl")
    y = torch.empty(1000, device="ocl")
    assert torch.ocl.memory_reserved() >= base_reserved + 16 * MiB
    del x, y
    # Freed blocks stay cached...
    assert torch.ocl.memory_reserved() >= base_reserved + 16 * MiB
    torch.ocl.empty_cache()
    # ...until empty_cache hands them back.
    assert torch.ocl.memory_reserved() == base_reserved
    torch.accelerator.memory.empty_cache()
    assert torch.ocl.memory_reserved() == base_reserved


def test_cached_block_is_reused():
    torch.ocl.empty_cache()
    x = torch.empty(4 * MiB, dtype=torch.uint8, device="ocl")
    ptr = x.data_ptr()
    reserved = torch.ocl.memory_reserved()
    n_dev = torch.ocl.memory_stats()["num_device_alloc"]
    del x
    y = torch.empty(4 * MiB, dtype=torch.uint8, device="ocl")
    assert y.data_ptr() == ptr
    assert torch.ocl.memory_reserved() == reserved
    assert torch.ocl.memory_stats()["num_device_alloc"] == n_dev


def test_mem_get_info():
    free, total = torch.ocl.mem_get_info()
    assert total == torch.ocl.get_device_properties(0).total_memory
    assert 0 < free <= total
    assert torch.accelerator.get_memory_info(0) == torch.ocl.mem_get_info(0)
    torch.ocl.set_per_process_memory_fraction(0.5)
    free_half, total2 = torch.ocl.mem_get_info()
    assert total2 == total
    assert free_half <= total // 2
    with pytest.raises(ValueError, match="Invalid fraction"):
        torch.ocl.set_per_process_memory_fraction(1.5)


def test_out_of_memory_is_recoverable():
    torch.ocl.empty_cache()
    ooms = torch.ocl.memory_stats()["num_ooms"]
    total = torch.ocl.get_device_properties(0).total_memory
    torch.ocl.set_per_process_memory_fraction(32 * MiB / total)
    keep = torch.ones(MiB, dtype=torch.uint8, device="ocl")
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate") as info:
        torch.empty(64 * MiB, dtype=torch.uint8, device="ocl")
    assert "MiB" in str(info.value)
    assert torch.ocl.memory_stats()["num_ooms"] == ooms + 1
    # The failed allocation left the process and the allocator usable.
    c = make_cpu((100, 3), torch.float32)
    x = c.to("ocl")
    assert torch.equal(x.t().contiguous().cpu(), c.t().contiguous())
    assert torch.equal(keep.cpu(), torch.ones(MiB, dtype=torch.uint8))
    torch.ocl.set_per_process_memory_fraction(1.0)
    big = torch.empty(64 * MiB, dtype=torch.uint8, device="ocl")
    big.fill_(3)
    assert big[-1].item() == 3
    del big, keep, x


def test_allocation_over_max_alloc_size():
    p = torch.ocl.get_device_properties(0)
    if p.max_alloc_size + 1 > p.total_memory:
        pytest.skip("max_alloc_size equals the device memory")
    before = torch.ocl.memory_allocated()
    with pytest.raises(ValueError, match="CL_DEVICE_MAX_MEM_ALLOC_SIZE"):
        torch.empty(p.max_alloc_size + 1, dtype=torch.uint8, device="ocl")
    assert torch.ocl.memory_allocated() == before
    assert torch.ones(3, device="ocl").cpu().tolist() == [1.0, 1.0, 1.0]


def test_pin_memory_and_non_blocking_copies():
    c = make_cpu((1 << 16,), torch.float32)
    p = c.pin_memory()
    assert p.is_pinned()
    assert not c.is_pinned()
    assert torch.equal(p, c)
    assert torch.empty(5, pin_memory=True).is_pinned()
    d = p.to("ocl", non_blocking=True)
    back = torch.empty_like(p).pin_memory()
    assert back.is_pinned()
    back.copy_(d, non_blocking=True)
    torch.ocl.synchronize()
    assert torch.equal(back, c)
    # Strided source and destination through pinned memory.
    d2 = d.view(256, 256).t()
    back2 = torch.empty(256, 256).pin_memory()
    back2.copy_(d2, non_blocking=True)
    torch.ocl.synchronize()
    assert torch.equal(back2, c.view(256, 256).t())
    # Many async uploads from one reused pinned buffer.
    outs = []
    for i in range(4):
        src = torch.full((1000,), float(i)).pin_memory()
        outs.append(src.to("ocl", non_blocking=True))
    torch.ocl.synchronize()
    for i, o in enumerate(outs):
        assert torch.equal(o.cpu(), torch.full((1000,), float(i)))
    torch.accelerator.memory.empty_host_cache()
