"""The foreach/fused-optimizer table cache (csrc/aten/optim/foreach.cpp): a multi-tensor call whose
table was uploaded before on the same stream reuses it. Results against CPU PyTorch when tables
repeat with fresh tensors, other shapes, other streams and a fused optimizer; and that a repeated
call really skips the host-to-device write."""

import torch
from torch.profiler import ProfilerActivity, profile

import torch_ocl


def lists(shapes, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g) for s in shapes]


def check_add(shapes, seed):
    a, b = lists(shapes, seed), lists(shapes, seed + 1)
    da, db = [t.to("ocl") for t in a], [t.to("ocl") for t in b]
    torch._foreach_add_(a, b, alpha=0.5)
    with torch_ocl.strict():
        torch._foreach_add_(da, db, alpha=0.5)
    for x, y in zip(da, a):
        torch.testing.assert_close(x.cpu(), y)


def test_repeated_tables_with_fresh_tensors():
    shapes = [(7,), (3, 5), (1000,), (0,), (33, 2)]
    for i in range(6):  # the allocator hands back the same blocks: identical tables
        check_add(shapes, i)
    for i in range(3):  # other tables in between
        check_add([(5,), (9, 9)], 10 + i)
        check_add(shapes, 20 + i)


def test_other_stream():
    shapes = [(17,), (4, 4)]
    check_add(shapes, 0)
    s = torch.ocl.Stream()
    with torch.ocl.stream(s):
        check_add(shapes, 1)
        check_add(shapes, 2)
    torch.ocl.synchronize()
    check_add(shapes, 3)


def test_fused_adamw_steps_match_cpu():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    dmodel = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    dmodel.load_state_dict(model.state_dict())
    dmodel.to("ocl")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    dopt = torch.optim.AdamW(dmodel.parameters(), lr=1e-2, fused=True)
    for step in range(4):
        x = torch.randn(5, 8, generator=torch.Generator().manual_seed(step))
        for m, o, inp in ((model, opt, x), (dmodel, dopt, x.to("ocl"))):
            o.zero_grad(set_to_none=True)
            m(inp).square().sum().backward()
            o.step()
    for p, dp in zip(model.parameters(), dmodel.parameters()):
        torch.testing.assert_close(dp.detach().cpu(), p.detach(), rtol=1e-5, atol=1e-6)


def test_repeat_skips_the_write():
    a = [torch.ones(10, device="ocl"), torch.ones(20, device="ocl")]
    b = [torch.ones(10, device="ocl"), torch.ones(20, device="ocl")]
    torch._foreach_add_(a, b)  # uploads the table
    torch.ocl.synchronize()

    def h2d_rows():
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as p:
            torch._foreach_add_(a, b)
            torch.ocl.synchronize()
        return [e for e in p.events() if "HtoD" in e.name]

    assert h2d_rows() == []
    assert torch.equal(a[1].cpu(), torch.full((20,), 3.0))
