"""GradScaler on ocl: _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_ against
the CPU kernels on the same inputs, and a float16 autocast + GradScaler training loop with no CPU
fallback (strict mode)."""

import pytest
import torch

import torch_ocl

from conftest import fp64_supported


def grads_cpu(dtype, with_bad=None):
    g = torch.Generator().manual_seed(0)
    shapes = [(7,), (3, 5), (0,), (65, 3), (1,)]
    ts = [(torch.randn(s, generator=g, dtype=torch.float64) * 100).to(dtype) for s in shapes]
    if with_bad is not None:
        ts[3][10, 1] = with_bad
    return ts


def unscale(ts, device, inv=0.125):
    ts = [t.to(device, copy=True) for t in ts]
    found = torch.zeros(1, device=device)
    torch._amp_foreach_non_finite_check_and_unscale_(ts, found, torch.tensor([inv], device=device))
    return [t.cpu() for t in ts], found.cpu()


DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


@pytest.mark.parametrize("bad", [None, float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("dtype", DTYPES)
def test_unscale_matches_cpu(dtype, bad):
    if dtype == torch.float64 and not fp64_supported():
        pytest.skip("no cl_khr_fp64")
    ts = grads_cpu(dtype, bad)
    ref, ref_found = unscale(ts, "cpu")
    with torch_ocl.strict():
        got, found = unscale(ts, "ocl")
    assert found.item() == ref_found.item() == (0.0 if bad is None else 1.0)
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


def test_unscale_strided_mixed_dtypes_and_found_inf_sticks(ocl):
    base = torch.randn(6, 8) * 4
    ts = [base[:, ::2], base.T, torch.randn(5).half(), torch.randn(9)]  # two strided views
    ts[2][3] = float("inf")
    ref, ref_found = unscale([t.clone() for t in ts], "cpu", inv=0.5)
    dev = [t.to(ocl) for t in ts]
    dev[0], dev[1] = base.to(ocl)[:, ::2], base.to(ocl).T  # strided on the device too
    found = torch.ones(1, device=ocl)  # already set: stays set
    with torch_ocl.strict():
        torch._amp_foreach_non_finite_check_and_unscale_(dev, found,
                                                         torch.full((1,), 0.5, device=ocl))
    assert found.item() == 1.0
    for a, b in zip(dev, ref):
        torch.testing.assert_close(a.cpu(), b, rtol=0, atol=0)
    assert ref_found.item() == 1.0


def test_unscale_errors(ocl):
    g = [torch.randn(3, device=ocl)]
    with pytest.raises(RuntimeError, match="inv_scale must be a float tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(
            g, torch.zeros(1, device=ocl), torch.ones(1, device=ocl, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="found_inf must be a 1-element tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(
            g, torch.zeros(2, device=ocl), torch.ones(1, device=ocl))
    with pytest.raises(RuntimeError, match="same device"):
        torch._amp_foreach_non_finite_check_and_unscale_(
            [torch.randn(3)], torch.zeros(1, device=ocl), torch.ones(1, device=ocl))


@pytest.mark.parametrize("found", [0.0, 1.0])
@pytest.mark.parametrize("tracker", [0, 1, 4])
def test_update_scale_matches_cpu(found, tracker):
    def run(device, scale=2.0**16):
        s = torch.tensor([scale], device=device)
        t = torch.tensor([tracker], dtype=torch.int32, device=device)
        f = torch.tensor([found], device=device)
        out = torch._amp_update_scale_(s, t, f, 2.0, 0.5, 5)
        assert out is s
        return s.cpu(), t.cpu()

    ref = run("cpu")
    with torch_ocl.strict():
        got = run("ocl")
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # Growth that would overflow keeps the scale (and resets the tracker), as on CPU.
    big = run("cpu", 3e38), None
    with torch_ocl.strict():
        big_ocl = run("ocl", 3e38)
    for a, b in zip(big_ocl, big[0]):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_update_scale_errors(ocl):
    s, f = torch.ones(1, device=ocl), torch.zeros(1, device=ocl)
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor"):
        torch._amp_update_scale_(s, torch.zeros(1, device=ocl), f, 2.0, 0.5, 5)
    with pytest.raises(RuntimeError, match="current_scale must be a 1-element tensor"):
        torch._amp_update_scale_(torch.ones(2, device=ocl),
                                 torch.zeros(1, dtype=torch.int32, device=ocl), f, 2.0, 0.5, 5)


def test_gradscaler_float16_training_matches_cpu_without_fallback():
    def train(device):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 4)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler(device, init_scale=2.0**20, growth_interval=2)
        g = torch.Generator().manual_seed(1)
        scales, losses = [], []
        for step in range(6):
            x = torch.randn(5, 8, generator=g).to(device)
            y = torch.randn(5, 4, generator=g).to(device)
            with torch.autocast(device, dtype=torch.float16 if device == "ocl" else torch.bfloat16,
                                enabled=False):
                loss = torch.nn.functional.mse_loss(model(x), y)
            if step == 2:
                loss = loss * float("inf")  # an overflow step: skipped, scale backs off
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            losses.append(loss.item())
        return scales, losses, [p.detach().cpu() for p in model.parameters()]

    ref = train("cpu")
    with torch_ocl.strict():
        got = train("ocl")
    assert got[0] == ref[0]
    assert ref[0][2] < ref[0][1]  # the overflow step backed off
    for a, b in zip(got[2], ref[2]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_gradscaler_with_autocast_float16_runs_natively():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 4)).to("ocl")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("ocl")
    x, y = torch.randn(5, 8, device="ocl"), torch.randn(5, 4, device="ocl")
    torch_ocl.reset_fallback_report()
    with torch_ocl.strict():
        first = None
        for _ in range(5):
            with torch.autocast("ocl", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(x).float(), y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            first = first if first is not None else loss.item()
    assert loss.item() < first
    assert torch_ocl.fallback_report() == []
