"""fill_ / zero_ of large contiguous tensors on CPU drivers: a kernel of 1 KB blocks (a 64-byte
pattern per vstore16) plus clEnqueueFillBuffer for the tail; smaller, unaligned or strided
tensors keep the other paths. Every result against CPU, in strict mode."""
from __future__ import annotations

import pytest
import torch
import torch_ocl

CASES = [(torch.float32, 1.5), (torch.float64, -2.25), (torch.float16, 0.5),
         (torch.bfloat16, -3.0), (torch.int8, -3), (torch.uint8, 200), (torch.int16, 7),
         (torch.int64, -(1 << 40)), (torch.bool, True), (torch.complex64, 1 - 2j),
         (torch.complex128, 1 + 2j)]


@pytest.mark.parametrize("dtype,value", CASES, ids=[str(d)[6:] for d, _ in CASES])
def test_large_fill_matches_cpu(dtype, value):
    size = torch.empty(0, dtype=dtype).element_size()
    with torch_ocl.strict():
        for n in [(1 << 20) // size, (1 << 20) // size + 1, 300001, (1 << 21) // size + 77]:
            t = torch.full((n,), 0 if dtype != torch.bool else False, dtype=dtype, device="ocl")
            t.fill_(value)  # whole tensor: blocks and, past the last 1 KB, the tail
            assert torch.equal(t.cpu(), torch.full((n,), value, dtype=dtype))
            u = torch.zeros(n + 5, dtype=dtype, device="ocl")
            u[3:].fill_(value)  # an offset that is not 64-byte aligned: the old path
            want = torch.zeros(n + 5, dtype=dtype)
            want[3:] = value
            assert torch.equal(u.cpu(), want)
            t.zero_()
            assert torch.equal(t.cpu(), torch.zeros(n, dtype=dtype))


def test_large_fill_in_a_2d_view_and_its_neighbours():
    """A fill of a contiguous slice of rows leaves the rows around it alone."""
    base = torch.arange(2048 * 1024, dtype=torch.float32).view(2048, 1024)
    d = base.to("ocl")
    d[512:1536].fill_(-1.0)  # 4 MiB at a 2 MiB (64-byte aligned) offset
    base[512:1536] = -1.0
    assert torch.equal(d.cpu(), base)


@pytest.mark.skipif(not hasattr(torch._C, "_acceleratorGraph"),
                    reason="torch without torch.accelerator.Graph")
def test_large_fill_replays_in_a_graph():
    x = torch.empty(1 << 20, device="ocl")
    v = torch.zeros((), device="ocl")
    x.fill_(0.0)  # warm-up: the kernel's build outside the capture
    torch.accelerator.synchronize()
    g = torch.accelerator.Graph()
    with g:
        x.fill_(3.0)
        y = x + v
    x.zero_()
    g.replay()
    assert torch.equal(y.cpu(), torch.full((1 << 20,), 3.0))
