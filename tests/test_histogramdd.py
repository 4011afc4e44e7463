"""torch.histogramdd (bin counts, ranges, edges tensors, weights, density) and float16/bfloat16
torch.histc on ocl against CPU, in strict mode."""

import pytest
import torch
import torch_ocl


def _pair(ref, out):
    torch.testing.assert_close(out.hist.cpu(), ref.hist, equal_nan=True)
    assert len(out.bin_edges) == len(ref.bin_edges)
    for a, b in zip(out.bin_edges, ref.bin_edges):
        torch.testing.assert_close(a.cpu(), b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,bins",
                         [((37, 2), [3, 5]), ((4, 9, 3), [2, 7, 1]), ((0, 2), [4, 3])])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
def test_bin_counts(dtype, shape, bins, weighted, density):
    g = torch.Generator().manual_seed(len(shape) * 7 + bins[0])
    x = torch.randn(*shape, generator=g).to(dtype)
    w = torch.rand(*shape[:-1], generator=g).to(dtype) if weighted else None
    ref = torch.histogramdd(x, bins, weight=w, density=density)
    with torch_ocl.strict():
        out = torch.histogramdd(x.to("ocl"), bins, weight=None if w is None else w.to("ocl"),
                                density=density)
    _pair(ref, out)


def test_range_edges_and_non_contiguous():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(50, 6, generator=g) * 3
    base[7, 2] = float("nan")  # a NaN row is not counted (with a range; without, CPU raises)
    x = base[:, ::2]  # (50, 3), non-contiguous
    edges = [torch.tensor([-2.0, -0.5, 0.0, 3.0]), torch.tensor([-9.0, 9.0]),
             torch.tensor([-1.0, 1.0, 1.5, 2.0, 8.0])]
    ref_r = torch.histogramdd(x, [4, 2, 3], range=[-1.0, 1.0, -5.0, 5.0, 0.0, 0.0])
    ref_e = torch.histogramdd(x, edges, density=True)
    assert ref_r.hist.sum() < 50
    x_ocl = base.to("ocl")[:, ::2]
    assert not x_ocl.is_contiguous()
    with torch_ocl.strict():
        out_r = torch.histogramdd(x_ocl, [4, 2, 3], range=[-1.0, 1.0, -5.0, 5.0, 0.0, 0.0])
        out_e = torch.histogramdd(x_ocl, [e.to("ocl") for e in edges], density=True)
    _pair(ref_r, out_r)
    _pair(ref_e, out_e)
    # Elements on the edges: the last bin includes its right edge.
    x = torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    ref = torch.histogramdd(x, [2, 2], range=[0.0, 1.0, 0.0, 1.0])
    with torch_ocl.strict():
        _pair(ref, torch.histogramdd(x.to("ocl"), [2, 2], range=[0.0, 1.0, 0.0, 1.0]))


def test_errors():
    x = torch.randn(5, 2, device="ocl")
    with torch_ocl.strict():
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            torch.histogramdd(torch.randn(5, device="ocl"), [2])
        with pytest.raises(RuntimeError, match="range should have 4 elements"):
            torch.histogramdd(x, [2, 2], range=[0.0, 1.0])
        with pytest.raises(RuntimeError, match="min should not exceed max"):
            torch.histogramdd(x, [2, 2], range=[1.0, 0.0, 0.0, 1.0])
        with pytest.raises(RuntimeError, match="same dtype"):
            torch.histogramdd(x, [torch.tensor([0.0, 1.0], device="ocl", dtype=torch.float64),
                                  torch.tensor([0.0, 1.0], device="ocl", dtype=torch.float64)])
        with pytest.raises(RuntimeError, match="weight"):
            torch.histogramdd(x, [2, 2], weight=torch.ones(4, device="ocl"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("bins,lo,hi", [(7, 0, 0), (10, -1.0, 2.5), (33, -0.3, 0.7), (1, 0, 0)])
def test_histc_16_bit_bins_like_cpu(dtype, bins, lo, hi):
    # CPU finds the bin in the 16-bit type itself (rounding after every operation) and counts in
    # it; 200 elements keep every count exact in bfloat16 too (CPU's count past 256 depends on
    # how its threads split the input).
    for seed in range(6):
        g = torch.Generator().manual_seed(seed)
        x = (torch.randn(200, generator=g) * (seed + 1)).to(dtype)
        x[::7] = x[3]  # repeated values, some of them on edges
        ref = torch.histc(x, bins, lo, hi)
        with torch_ocl.strict():
            out = torch.histc(x.to("ocl")[::1], bins, lo, hi)
        assert out.dtype == dtype
        torch.testing.assert_close(out.cpu(), ref, rtol=0, atol=0)
