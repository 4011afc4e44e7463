"""A CPU driver's worker threads run under SCHED_BATCH (csrc/runtime/driver_threads.h), so that a
woken worker does not preempt the thread that enqueues; TORCH_OCL_DRIVER_THREADS=normal turns it
off. Linux only (the policy is read back from /proc)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_ocl

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux only")

SCHED_BATCH = 3


def _policies() -> dict[int, int]:
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/stat") as f:
                stat = f.read()
        except FileNotFoundError:  # the thread ended
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        out[int(t)] = int(fields[38])  # field 41: policy
    return out


def _cpu_only() -> bool:
    return all("CPU" in d["type"] for d in torch_ocl._C.all_devices())


def test_worker_threads_batch_main_thread_untouched():
    torch.ones(4, device="ocl").add_(1)
    torch.ocl.synchronize()
    info = torch_ocl._C._driver_threads()
    if not _cpu_only():
        assert info["policy"] == "n/a" and "CPU" in info["detail"]
        return
    if os.environ.get("TORCH_OCL_DRIVER_THREADS") == "normal":
        pytest.skip("TORCH_OCL_DRIVER_THREADS=normal in this environment")
    assert info["policy"] == "batch", info
    assert info["threads"] >= 1
    pol = _policies()
    assert pol[os.getpid()] == 0  # the Python thread keeps SCHED_OTHER
    assert sum(p == SCHED_BATCH for p in pol.values()) >= info["threads"]


def _child(env_value: str) -> dict:
    code = textwrap.dedent("""
        import json, os, torch, torch_ocl
        x = torch.arange(6, device="ocl", dtype=torch.float32)
        assert (x * 2).cpu().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        batch = 0
        for t in os.listdir("/proc/self/task"):
            s = open(f"/proc/self/task/{t}/stat").read()
            batch += int(s[s.rindex(")") + 2:].split()[38]) == 3
        print(json.dumps({**torch_ocl._C._driver_threads(), "batch_threads": batch}))
    """)
    env = dict(os.environ, TORCH_OCL_DRIVER_THREADS=env_value)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    import json

    return json.loads(r.stdout.strip().splitlines()[-1])


def test_normal_leaves_threads_alone():
    info = _child("normal")
    assert info["policy"] == "normal" and info["threads"] == 0
    assert info["batch_threads"] == 0
    assert "TORCH_OCL_DRIVER_THREADS=normal" in info["detail"]


def test_unknown_value_is_reported_and_ignored():
    info = _child("fast")
    assert info["policy"] == "n/a" and info["threads"] == 0 and info["batch_threads"] == 0
    assert "'fast'" in info["detail"]
