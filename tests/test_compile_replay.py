"""Compiled graphs called again and again: results stay those of eager ocl and CPU when the
inputs change between calls, outputs of earlier calls are never overwritten by later ones, and
whole training steps track eager for several steps, also with ``mode="reduce-overhead"``
(compiled graphs replayed as captured graphs; tests/test_graph.py has its own tests).

Strict mode throughout: a hidden CPU fallback fails the test.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch_ocl
from torch_ocl._inductor import runtime as ocl_runtime


pytestmark = pytest.mark.usefixtures("fresh_dynamo")


def small_net() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(12, 24), torch.nn.LayerNorm(24), torch.nn.GELU(), torch.nn.Linear(24, 5)
    )


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_inputs_change_between_calls_and_old_outputs_survive(mode):
    cpu = small_net()
    dev = copy.deepcopy(cpu).to("ocl")
    xs = [torch.randn(7, 12) * (i + 1) for i in range(4)]
    with torch_ocl.strict(), torch.no_grad():
        f = torch.compile(dev, mode=mode)
        outs = [f(x.to("ocl")) for x in xs]
        # The same input buffer refilled in place: a replayed graph that copied its inputs
        # once would return the first result again.
        buf = torch.empty(7, 12, device="ocl")
        again = []
        for x in xs:
            buf.copy_(x)
            again.append(f(buf).clone())
    for x, out, out2 in zip(xs, outs, again):
        want = cpu(x).detach()
        torch.testing.assert_close(out.cpu(), want, atol=2e-5, rtol=2e-5)
        torch.testing.assert_close(out2.cpu(), want, atol=2e-5, rtol=2e-5)
    # Every call returned its own storage (no output buffer reused across calls).
    assert len({o.untyped_storage().data_ptr() for o in outs}) == len(outs)


def make_step(model, opt, batches):
    it = iter(range(10**9))

    @torch._dynamo.disable
    def next_batch():
        return batches[next(it) % len(batches)]

    def step():
        x, y = next_batch()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss.detach()

    return step


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_whole_training_step_tracks_eager_and_cpu_for_several_steps(mode):
    cpu_model = small_net()
    eager_model = copy.deepcopy(cpu_model).to("ocl")
    comp_model = copy.deepcopy(cpu_model).to("ocl")
    g = torch.Generator().manual_seed(3)
    batches = [(torch.randn(9, 12, generator=g), torch.randint(0, 5, (9,), generator=g))
               for _ in range(3)]
    dev_batches = [(x.to("ocl"), y.to("ocl")) for x, y in batches]

    def adamw(m):
        return torch.optim.AdamW(m.parameters(), lr=0.05, weight_decay=0.1)

    cpu_step = make_step(cpu_model, adamw(cpu_model), batches)
    eager_step = make_step(eager_model, adamw(eager_model), dev_batches)
    comp_step = make_step(comp_model, adamw(comp_model), dev_batches)
    comp_step = torch.compile(comp_step, mode=mode)
    with torch_ocl.strict():
        for i in range(5):  # the batches change every step and repeat from the fourth
            want = cpu_step()
            eager = eager_step().cpu()
            got = comp_step().cpu()
            torch.testing.assert_close(eager, want, atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5, msg=f"step {i}")
    for (name, p), q in zip(cpu_model.named_parameters(), comp_model.parameters()):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), atol=2e-5, rtol=2e-5, msg=name)


def test_hoisted_power_follows_a_changing_step_count():
    """beta ** step with both operands the same for every element (AdamW's bias corrections)
    is computed by the wrapper per call and passed to the kernel: it must follow the 0-d CPU
    step tensor as it changes between calls, special values included."""

    def f(x, step):
        return x * (1 - 0.999 ** step) + 0.9 ** step + (-2.0) ** step

    x = torch.randn(300)
    ox = x.to("ocl")
    with torch_ocl.strict():
        cf = torch.compile(f)
        for step in (1.0, 2.0, 3.0, 10.0, 0.0, -1.0, 1000.0, 2.5):
            s = torch.tensor(step)  # an optimizer's step: a 0-d CPU float tensor
            got = cf(ox, s)
            torch.testing.assert_close(got.cpu(), f(x, s), atol=1e-6, rtol=1e-6, equal_nan=True)
    src = "\n".join(open(m.__file__).read() for m in _generated_modules())
    assert "ocl_pow_f32(" in src, "the uniform powers were not computed by the wrapper"


def _generated_modules():
    import sys

    return [m for name, m in list(sys.modules.items())
            if getattr(m, "__file__", None) and "torchinductor" in str(m.__file__)
            and hasattr(m, "call")]


def test_wrapper_power_matches_cpu_float32_pow_on_special_values():
    """runtime.pow_f32 (the wrapper's beta ** step) against CPU float32 pow: zeros of both
    signs, negative bases with odd, even and non-integral exponents, overflow, NaN, inf."""
    import math

    vals = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.999, 0.9, 3e38, float("inf"), -float("inf"),
            float("nan"), 1e-30]
    exps = [0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 0.5, 1e6, 1e6 + 1, 12345.0, float("inf"),
            -float("inf"), float("nan")]
    for a, b in [(a, b) for _ in range(2) for a in vals for b in exps]:  # twice: the cache
        want = torch.tensor(a).pow(torch.tensor(b)).item()
        got = torch.tensor(ocl_runtime.pow_f32(a, b), dtype=torch.float32).item()
        if math.isnan(want):
            assert math.isnan(got), (a, b, got)
        else:
            assert got == pytest.approx(want, rel=1.2e-7, abs=0), (a, b, got, want)
            assert math.copysign(1, got) == math.copysign(1, want), (a, b, got, want)
