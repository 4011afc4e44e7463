"""randperm, multinomial, aminmax and _assert_async on ocl: native in strict mode, reproducible
from the device generator, distributions and errors as on CPU."""

import pytest
import torch
import torch_ocl

from conftest import OCL_AVAILABLE

pytestmark = pytest.mark.skipif(not OCL_AVAILABLE, reason="no ocl device")


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 4099])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32])
def test_randperm_is_a_permutation(n, dtype):
    with torch_ocl.strict():
        torch.ocl.manual_seed(3)
        p = torch.randperm(n, device="ocl", dtype=dtype)
        torch.ocl.manual_seed(3)
        q = torch.randperm(n, device="ocl", dtype=dtype)
    assert p.dtype == dtype and p.shape == (n,)
    assert sorted(p.cpu().long().tolist()) == list(range(n))
    assert torch.equal(p.cpu(), q.cpu())


def test_randperm_is_not_identity_and_errors():
    with torch_ocl.strict():
        p = torch.randperm(1000, device="ocl").cpu()
    assert not torch.equal(p, torch.arange(1000))
    # first elements of many permutations are roughly uniform
    firsts = torch.stack([torch.randperm(4, device="ocl")[0] for _ in range(400)]).cpu()
    counts = torch.bincount(firsts, minlength=4)
    assert counts.min() > 60, counts
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="negative"):
            torch.randperm(-1, device=dev)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_distribution(replacement):
    torch.ocl.manual_seed(0)
    w = torch.tensor([0.1, 0.0, 0.6, 0.3])
    with torch_ocl.strict():
        if replacement:
            s = torch.multinomial(w.to("ocl"), 40000, replacement=True).cpu()
        else:
            s = torch.cat([torch.multinomial(w.to("ocl"), 1) for _ in range(2000)]).cpu()
    n = s.numel()
    freq = torch.bincount(s, minlength=4).double() / n
    assert freq[1] == 0
    tol = 4 * (0.25 / n) ** 0.5  # four standard deviations at worst
    torch.testing.assert_close(freq, w.double(), atol=tol, rtol=0)


def test_multinomial_without_replacement_and_shapes():
    torch.ocl.manual_seed(1)
    with torch_ocl.strict():
        s = torch.multinomial(torch.ones(5, 9, device="ocl"), 9)
        r = torch.multinomial(torch.rand(3, 4, device="ocl") + 0.1, 6, replacement=True)
    assert s.dtype == torch.int64 and s.shape == (5, 9)
    assert all(sorted(row) == list(range(9)) for row in s.cpu().tolist())
    assert r.shape == (3, 6) and int(r.min()) >= 0 and int(r.max()) < 4
    torch.ocl.manual_seed(7)
    a = torch.multinomial(torch.rand(4, 10, device="ocl"), 5, replacement=True).cpu()
    torch.ocl.manual_seed(7)
    b = torch.multinomial(torch.rand(4, 10, device="ocl"), 5, replacement=True).cpu()
    assert torch.equal(a, b)


@pytest.mark.parametrize("bad", [[0.5, -1.0], [float("nan"), 1.0], [float("inf"), 1.0]])
def test_multinomial_bad_probabilities(bad):
    for replacement in (True, False):
        with pytest.raises(RuntimeError, match="probability tensor contains"):
            torch.multinomial(torch.tensor(bad), 1, replacement=replacement)
        with pytest.raises(RuntimeError, match="probability tensor contains"):
            torch.multinomial(torch.tensor(bad, device="ocl"), 1, replacement=replacement)
    x = torch.zeros(2, 3, device="ocl")
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        torch.multinomial(x, 2, replacement=True)
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(torch.ones(3, device="ocl"), 4)
    assert torch.ocl.synchronize() is None  # still usable


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16])
def test_aminmax(dim, keepdim, dtype):
    x = (torch.randn(7, 33) * 100).to(dtype)
    with torch_ocl.strict():
        got = torch.aminmax(x.to("ocl").t().t(), dim=dim, keepdim=keepdim)
    exp = torch.aminmax(x, dim=dim, keepdim=keepdim)
    for g, e in zip(got, exp):
        assert torch.equal(g.cpu(), e)


def test_aminmax_errors_as_cpu():
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="cannot compute aminmax"):
            torch.aminmax(torch.randn(0, device=dev))
        with pytest.raises(IndexError, match="Expected reduction dim 0"):
            torch.aminmax(torch.randn(0, 3, device=dev), dim=0)


def test_assert_async():
    with torch_ocl.strict():
        torch._assert_async(torch.tensor(1, device="ocl"))
        torch._assert_async(torch.tensor(2.0, device="ocl"), "fine")
        with pytest.raises(RuntimeError, match="boom"):
            torch._assert_async(torch.tensor(0, device="ocl"), "boom")
