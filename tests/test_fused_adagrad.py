"""torch.optim.Adagrad(fused=True) (aten::_fused_adagrad_) on ocl against the CPU's fused kernel,
in strict mode: options, tensor lr, grad_scale / found_inf, float16 params, several steps."""

import pytest
import torch
import torch_ocl

A = torch.ops.aten


def _params(dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = [(5, 3), (7,), (2, 3, 4), (0,)]
    return [torch.randn(s, generator=g).to(dtype) for s in shapes]


def _grads(params, step):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(p.shape, generator=g).to(p.dtype) for p in params]


@pytest.mark.parametrize(
    "opts",
    [
        dict(lr=0.1),
        dict(lr=0.05, lr_decay=0.01, weight_decay=0.1, eps=1e-8),
        dict(lr=0.05, maximize=True, initial_accumulator_value=0.3),
        dict(lr=torch.tensor(0.02), lr_decay=0.1),
    ],
)
def test_adagrad_fused_matches_cpu(opts):
    cpu = [p.clone().requires_grad_() for p in _params(torch.float32)]
    dev = [p.detach().to("ocl").requires_grad_() for p in cpu]
    o_cpu = torch.optim.Adagrad(cpu, fused=True, **opts)
    o_dev = torch.optim.Adagrad(dev, fused=True, **opts)
    for step in range(3):
        for p, q, g in zip(cpu, dev, _grads(cpu, step)):
            p.grad = g.clone()
            q.grad = g.to("ocl")
        o_cpu.step()
        with torch_ocl.strict():
            o_dev.step()
    for p, q in zip(cpu, dev):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(
            o_dev.state[q]["sum"].cpu(), o_cpu.state[p]["sum"], rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("found", [0.0, 1.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_fused_adagrad_op_grad_scale_found_inf(found, dtype):
    params = _params(dtype, seed=1)
    grads = _grads(params, 0)
    sums = [torch.rand(p.shape).to(dtype) for p in params]
    steps = [torch.tensor(3.0) for _ in params]
    scale, inf = torch.tensor(4.0), torch.tensor(found)
    kw = dict(lr=0.1, lr_decay=0.05, weight_decay=0.01, eps=1e-10, maximize=False)
    dp, dg, ds, dst = ([t.to("ocl") for t in ts] for ts in (params, grads, sums, steps))
    A._fused_adagrad_(params, grads, sums, steps, **kw, grad_scale=scale, found_inf=inf)
    with torch_ocl.strict():
        A._fused_adagrad_(
            dp, dg, ds, dst, **kw, grad_scale=scale.to("ocl"), found_inf=inf.to("ocl")
        )
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    for want, got in zip(params + grads + sums, dp + dg + ds):
        torch.testing.assert_close(got.cpu(), want, **tol)


def test_fused_adagrad_errors():
    p = [torch.zeros(3, device="ocl")]
    with torch_ocl.strict(), pytest.raises(RuntimeError, match="same length"):
        A._fused_adagrad_(
            p, p, p, [], lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False
        )
