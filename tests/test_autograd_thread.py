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
    # rc 0 every time, also with PyTorch's autograd device thread: see test_exit_is_clean below.
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    x = torch.linspace(-1, 1, 7)
    ref = (x.sin() + x * x.cos()).tolist()
    torch.testing.assert_close(torch.tensor(got["grad"]), torch.tensor(ref), rtol=1e-5, atol=1e-6)
    if value == "device":
        assert got["o"]["policy"] == "device" and not got["same"]
    else:
        assert got["o"]["policy"] == "caller" and got["same"]
        assert "TORCH_OCL_AUTOGRAD_THREAD='bogus'" in r.stderr


# Backward passes on PyTorch's autograd device thread, then an immediate exit. The device thread
# can release a finished backward's graph task after backward() has returned, and releasing it
# drops Python objects (the contextvars.Context torch.autograd stashes in the task's thread-local
# state), which takes the GIL; during Py_FinalizeEx CPython ends such a thread with pthread_exit,
# and its forced unwind through the engine's noexcept frames aborted the process ("terminate
# called without an active exception", rc -6) in about 1 of 8 runs of these children before
# torch_ocl's atexit hook waited for the device threads (csrc/integration/autograd_thread.h).
_EXIT_CHILD = textwrap.dedent("""
    import json, threading, torch, torch_ocl
    x = torch.linspace(-1, 1, 7, device=DEVICE).requires_grad_()
    w = torch.linspace(0, 2, 7, device=DEVICE).requires_grad_()
    x.register_hook(lambda g: g * 2)
    y = x.sin() * w
    y.register_hook(lambda g: g + 1)
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    g, = torch.autograd.grad((x.cos() * w).sum(), x)
    if THREAD:  # the default policy: other threads keep the device thread
        t = threading.Thread(target=lambda: (x * w).sum().backward())
        t.start()
        t.join()
    RESULT = [torch_ocl._C._autograd_thread()["policy"],
              [t.detach().cpu().tolist() for t in (x.grad, w.grad, g)]]
    if DEVICE == "ocl":
        print(json.dumps(RESULT))
""")


@pytest.mark.parametrize("policy", ["device", "default"])
def test_exit_is_clean(policy):
    env = dict(os.environ)
    env.pop("TORCH_OCL_AUTOGRAD_THREAD", None)
    if policy == "device":
        env["TORCH_OCL_AUTOGRAD_THREAD"] = "device"
    thread = policy == "default"
    ref = {"DEVICE": "cpu", "THREAD": thread}
    exec(_EXIT_CHILD, ref)
    code = f"DEVICE = 'ocl'\nTHREAD = {thread}\n" + _EXIT_CHILD
    runs, parallel = 10, 2
    for start in range(0, runs, parallel):
        procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for _ in range(start, min(runs, start + parallel))]
        for p in procs:
            out, err = p.communicate(timeout=240)
            assert p.returncode == 0, (start, p.returncode, err)
            policy_got, grads = json.loads(out.strip().splitlines()[-1])
            if policy == "device":
                assert policy_got == "device"
            for got, want in zip(grads, ref["RESULT"][1]):
                torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-5,
                                           atol=1e-6)
