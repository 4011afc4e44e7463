"""nn.Module and autocast behave on ocl as on CUDA: Module.to() moves Parameters in place (so tied
weights stay tied and optimizers built before the move keep working), and torch.autocast("ocl")
applies CUDA's cast policies."""

import pytest
import torch
import torch.nn.functional as F
import torch_ocl

from conftest import OCL_AVAILABLE

pytestmark = pytest.mark.skipif(not OCL_AVAILABLE, reason="no ocl device")


def _tied():
    torch.manual_seed(0)
    m = torch.nn.Module()
    m.emb = torch.nn.Embedding(11, 6)
    m.head = torch.nn.Linear(6, 11, bias=False)
    m.head.weight = m.emb.weight
    return m


def test_to_keeps_parameters_and_ties():
    m = _tied()
    before = m.emb.weight
    m.to("ocl")
    assert m.emb.weight is before and m.head.weight is m.emb.weight
    assert m.emb.weight.device.type == "ocl"
    m.to("cpu")
    assert m.head.weight is m.emb.weight and m.emb.weight.device.type == "cpu"


def test_tied_gradient_matches_cpu():
    cpu, dev = _tied(), _tied().to("ocl")
    idx = torch.tensor([[1, 4, 7], [10, 0, 3]])
    for m, i in ((cpu, idx), (dev, idx.to("ocl"))):
        with torch_ocl.strict():
            F.cross_entropy(m.head(m.emb(i)).flatten(0, 1), i.flatten()).backward()
    assert dev.head.weight.grad is dev.emb.weight.grad
    torch.testing.assert_close(dev.emb.weight.grad.cpu(), cpu.emb.weight.grad)


def test_optimizer_built_before_to_still_updates():
    m = torch.nn.Linear(4, 3)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m.to("ocl")
    w0 = m.weight.detach().cpu().clone()
    m(torch.ones(2, 4, device="ocl")).sum().backward()
    opt.step()
    assert not torch.equal(m.weight.detach().cpu(), w0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_policies(dtype):
    torch.manual_seed(0)
    a, w, b = torch.randn(8, 16), torch.randn(5, 16), torch.randn(5)
    with torch.autocast("ocl", dtype=dtype), torch_ocl.strict():
        y = F.linear(a.to("ocl"), w.to("ocl"), b.to("ocl"))
        s = y.softmax(-1)
        total = y.sum()
    # CUDA's lists: linear in the low dtype, softmax and sum in float32
    assert y.dtype == dtype and s.dtype == torch.float32 and total.dtype == torch.float32
    ref = F.linear(a.to(dtype).float(), w.to(dtype).float(), b.to(dtype).float())
    tol = 1e-2 if dtype == torch.float16 else 5e-2
    torch.testing.assert_close(y.float().cpu(), ref, rtol=tol, atol=tol)
    assert torch.get_autocast_dtype("ocl") is not None
    assert torch.ocl.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
