"""Device-side index checks: an out-of-range index recorded by a kernel raises at the next
synchronisation point (synchronize, .cpu(), .item(), stream synchronize), and the device stays
usable afterwards."""

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

MSG = "device-side check failed"


def dev(t):
    return t.to("ocl")


CASES = {
    "index_select": lambda x: x.index_select(0, dev(torch.tensor([0, 7]))),
    "gather": lambda x: x.gather(0, dev(torch.tensor([[5, 0, 0, 0]]))),
    "gather_negative": lambda x: x.gather(0, dev(torch.tensor([[-1, 0, 0, 0]]))),
    "scatter": lambda x: x.clone().scatter_(0, dev(torch.tensor([[9, 0, 0, 0]])), 1.0),
    "scatter_add": lambda x: x.scatter_add(0, dev(torch.tensor([[5, 0, 0, 0]])), x[:1]),
    "scatter_reduce": lambda x: x.scatter_reduce(0, dev(torch.tensor([[5, 0, 0, 0]])), x[:1],
                                                 "amax"),
    "index": lambda x: x[dev(torch.tensor([1, 5]))],
    "index_negative": lambda x: x[dev(torch.tensor([-6]))],
    "index_put": lambda x: x.clone().index_put_((dev(torch.tensor([6])),), dev(torch.ones(4))),
    "index_put_accumulate": lambda x: x.clone().index_put_((dev(torch.tensor([6])),),
                                                           dev(torch.ones(4)), accumulate=True),
    "index_add": lambda x: x.clone().index_add_(0, dev(torch.tensor([5])), x[:1]),
    "embedding": lambda x: F.embedding(dev(torch.tensor([[0, 5]])), x),
    "nll_loss": lambda x: F.nll_loss(x, dev(torch.tensor([0, 1, 4, 2, 3]))),
    "nll_loss_none": lambda x: F.nll_loss(x, dev(torch.tensor([0, 1, -2, 2, 3])),
                                          reduction="none"),
    "nll_loss2d": lambda x: F.nll_loss(x.view(1, 5, 2, 2), dev(torch.tensor([[[0, 1], [5, 2]]]))),
    "binary_cross_entropy": lambda x: F.binary_cross_entropy(x / 10, x * 0),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("sync", ["synchronize", "cpu", "item", "stream"])
def test_out_of_range_raises_at_sync(name, sync):
    x = dev(torch.arange(20.0).reshape(5, 4))
    result = CASES[name](x)  # no host sync here: the kernel only records the error
    with pytest.raises(RuntimeError, match=MSG):
        if sync == "synchronize":
            torch.ocl.synchronize()
        elif sync == "cpu":
            result.cpu()
        elif sync == "item":
            result.sum().item() if result.numel() else x.sum().item()
        else:
            torch.ocl.current_stream().synchronize()
    # the record was cleared and the device keeps working
    torch.ocl.synchronize()
    y = x.index_select(0, dev(torch.tensor([4, 0])))
    assert torch.equal(y.cpu(), torch.arange(20.0).reshape(5, 4)[[4, 0]])


def test_message_names_index_bound_and_op():
    x = dev(torch.arange(5.0))
    x.index_select(0, dev(torch.tensor([7])))
    with pytest.raises(RuntimeError) as e:
        torch.ocl.synchronize()
    msg = str(e.value)
    assert "index 7 is out of bounds for dimension 0 with size 5 (index_select)" in msg
    F.nll_loss(x.view(1, 5), dev(torch.tensor([5])))
    with pytest.raises(RuntimeError) as e:
        torch.ocl.synchronize()
    assert "Target 5 is out of bounds (nll_loss, 5 classes)" in str(e.value)


def test_first_error_wins_and_valid_ops_unaffected():
    x = dev(torch.arange(5.0))
    x.index_select(0, dev(torch.tensor([9])))
    x.gather(0, dev(torch.tensor([11])))
    with pytest.raises(RuntimeError, match="index 9 .*index_select"):
        torch.ocl.synchronize()
    torch.ocl.synchronize()  # nothing left
    assert x[dev(torch.tensor([-1]))].item() == 4.0  # negative indices wrap for index
