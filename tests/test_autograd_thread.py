"""The backward of ocl tensors runs on the thread that initialised the device
(csrc/integration/autograd_thread.h), not on PyTorch's autograd device thread;
TORCH_OCL_AUTOGRAD_THREAD=device keeps the device thread. Gradients are the same either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch

import torch_ocl


def _hook_thread(device: str) -> tuple[int, torch.Tensor]:
    x = torch.linspace(-1, 1, 7, device=device).requires_grad_()
    seen = []
    x.register_hook(lambda g: seen.append(threading.get_ident()))
    (x.sin() * x).sum().backward()
    return seen[0], x.grad


def test_backward_runs_on_the_calling_thread():
    torch.ones(1, device="ocl").add_(1)  # initialised (already, in this process)
    o = torch_ocl._C._autograd_thread()
    assert o["policy"] == "caller", o
    assert o["thread"] == threading.get_native_id()  # the main thread initialised the device
    assert not torch.autograd.is_multithreading_enabled()
    ident, grad = _hook_thread("ocl")
    assert ident == threading.get_ident()
    _, ref = _hook_thread("cpu")
    torch.testing.assert_close(grad.cpu(), ref)


def test_other_threads_keep_pytorchs_default():
    """A thread that did not initialise the device keeps autograd's device thread: still correct."""
    out = {}

    def work():
        out["mt"] = torch.autograd.is_multithreading_enabled()
        out["caller"] = threading.get_ident()
        out["hook"], out["grad"] = _hook_thread("ocl")

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert out["mt"]
    assert out["hook"] != out["caller"]
    _, ref = _hook_thread("cpu")
    torch.testing.assert_close(out["grad"].cpu(), ref)


def test_training_step_same_gradients_as_cpu_in_strict_mode():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(13, 17), torch.nn.GELU(), torch.nn.Linear(17, 3))
    x = torch.randn(9, 13)
    y = torch.randint(0, 3, (9,))
    ref = torch.nn.functional.cross_entropy(model(x), y)
    ref.backward()
    dev_model = torch.nn.Sequential(torch.nn.Linear(13, 17), torch.nn.GELU(),
                                    torch.nn.Linear(17, 3)).to("ocl")
    dev_model.load_state_dict(model.state_dict())
    with torch_ocl.strict():
        loss = torch.nn.functional.cross_entropy(dev_model(x.to("ocl")), y.to("ocl"))
        loss.backward()
    torch.testing.assert_close(loss.cpu(), ref.detach(), rtol=1e-5, atol=1e-6)
    for p, q in zip(dev_model.parameters(), model.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-6)


_CHILD = textwrap.dedent("""
    import json, threading, torch, torch_ocl
    x = torch.linspace(-1, 1, 7, device="ocl").requires_grad_()
    seen = []
    x.register_hook(lambda g: seen.append(threading.get_ident()))
    (x.sin() * x).sum().backward()
    print(json.dumps({"o": torch_ocl._C._autograd_thread(), "same": seen[0] == threading.get_ident(),
                      "grad": x.grad.cpu().tolist()}))
""")


@pytest.mark.parametrize("value", ["device", "bogus"])
def test_environment_choice(value):
    env = dict(os.environ, TORCH_OCL_AUTOGRAD_THREAD=value)
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                       timeout=240)
    # A known bug, not fixed yet: with PyTorch's autograd device thread (the "device" policy) the
    # process aborts now and then at exit, after its work is done ("terminate called without an
    # active exception"; 3 of 20 runs of this child on the build before the ninth session, 1 of
    # 20 after). Only that abort is let through, and only there; any other failure fails.
    exit_abort = (value == "device" and r.returncode == -6 and
                  r.stderr.strip() == "terminate called without an active exception")
    assert r.returncode == 0 or exit_abort, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    x = torch.linspace(-1, 1, 7)
    ref = (x.sin() + x * x.cos()).tolist()
    torch.testing.assert_close(torch.tensor(got["grad"]), torch.tensor(ref), rtol=1e-5, atol=1e-6)
    if value == "device":
        assert got["o"]["policy"] == "device" and not got["same"]
    else:
        assert got["o"]["policy"] == "caller" and got["same"]
        assert "TORCH_OCL_AUTOGRAD_THREAD='bogus'" in r.stderr
