"""nn.EmbeddingBag / F.embedding_bag against CPU PyTorch in strict mode: sum, mean, max,
per_sample_weights, padding_idx, include_last_offset, 2-D input, empty bags, int32 indices,
16-bit and float64 weights, gradients of the weight and of per_sample_weights."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

from conftest import fp64_supported

TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-5),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=1e-2, atol=1e-2),
    torch.bfloat16: dict(rtol=5e-2, atol=5e-2),
}


def compare(num, dim, inp, offsets=None, dtype=torch.float32, psw=False, **kw):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(num, dim, generator=g, dtype=torch.float64).to(dtype)
    ref_dtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    p = torch.rand(inp.numel(), generator=g, dtype=torch.float64).to(dtype) if psw else None

    def run(device, dt):
        wd = w.to(dt).to(device).detach().clone().requires_grad_()
        pd = p.to(dt).to(device).detach().clone().requires_grad_() if p is not None else None
        out = F.embedding_bag(inp.to(device), wd, offsets.to(device) if offsets is not None else None,
                              per_sample_weights=pd, **kw)
        gw = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape)
        (out * gw.to(device, out.dtype)).sum().backward()
        return out, wd.grad, pd.grad if pd is not None else None

    ref = run("cpu", ref_dtype)
    with torch_ocl.strict():
        got = run("ocl", dtype)
    assert got[0].device.type == "ocl" and got[0].dtype == dtype
    for a, b in zip(got, ref):
        if b is None:
            assert a is None
            continue
        torch.testing.assert_close(a.detach().cpu().to(ref_dtype), b.detach(), **TOL[dtype])


IDX = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
OFFS = torch.tensor([0, 3, 3, 7, 10])  # an empty bag, a bag of one


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_modes(mode):
    compare(10, 7, IDX, OFFS, mode=mode)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_padding_idx_and_include_last_offset(mode):
    compare(10, 5, IDX, torch.tensor([0, 2, 6, 11]), mode=mode, padding_idx=5,
            include_last_offset=True)


def test_per_sample_weights_and_int32():
    compare(10, 70, IDX.int(), OFFS.int(), mode="sum", psw=True)
    compare(10, 6, IDX, OFFS, mode="sum", psw=True, padding_idx=1)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_two_dimensional_input(mode):
    compare(12, 9, torch.tensor([[1, 2, 2, 11], [0, 2, 7, 7]]), mode=mode)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq(mode):
    # Each index's gradient is divided by how often it occurs in the batch, as for F.embedding
    # (CUDA's definition). CPU's embedding_bag divides by the count of another index here (row 11,
    # which occurs once, gets 1/3), so the reference is F.embedding reduced over each bag on CPU.
    x = torch.tensor([[1, 2, 2, 11], [0, 2, 7, 7]])
    w = torch.randn(12, 5, generator=torch.Generator().manual_seed(0))
    gout = torch.randn(2, 5, generator=torch.Generator().manual_seed(1))
    wr = w.clone().requires_grad_()
    rows = F.embedding(x, wr, scale_grad_by_freq=True)
    (rows.sum(1) if mode == "sum" else rows.mean(1)).backward(gout)
    wo = w.to("ocl").requires_grad_()
    with torch_ocl.strict():
        out = F.embedding_bag(x.to("ocl"), wo, mode=mode, scale_grad_by_freq=True)
        out.backward(gout.to("ocl"))
    torch.testing.assert_close(wo.grad.cpu(), wr.grad, **TOL[torch.float32])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_dtypes(mode, dtype):
    if dtype == torch.float64 and not fp64_supported():
        pytest.skip("no cl_khr_fp64")
    compare(10, 7, IDX, OFFS, dtype=dtype, mode=mode)


def test_module_and_empty_inputs(ocl):
    torch.manual_seed(0)
    m = torch.nn.EmbeddingBag(20, 8, mode="mean")
    x, offs = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
    ref = m(x, offs)
    m.to(ocl)
    with torch_ocl.strict():
        out = m(x.to(ocl), offs.to(ocl))
        empty = m(torch.empty(0, dtype=torch.long, device=ocl), torch.tensor([0, 0], device=ocl))
    torch.testing.assert_close(out.detach().cpu(), ref.detach(), **TOL[torch.float32])
    assert empty.shape == (2, 8) and empty.abs().sum().item() == 0


def test_errors(ocl):
    w = torch.randn(10, 3, device=ocl)
    with pytest.raises(RuntimeError, match="index 10 is out of bounds"):
        F.embedding_bag(torch.tensor([1, 10], device=ocl), w, torch.tensor([0], device=ocl)).cpu()
    with pytest.raises(RuntimeError, match="Long, Int"):
        F.embedding_bag(torch.tensor([1.0], device=ocl), w, torch.tensor([0], device=ocl))
    with pytest.raises(RuntimeError, match="same device|Expected all tensors"):
        F.embedding_bag(torch.tensor([1, 2]), w, torch.tensor([0], device=ocl))
    assert (w + 1).shape == (10, 3)  # usable afterwards
