"""Large cpu_tile products on a CPU driver run with its worker threads under SCHED_OTHER, and the
workers go back to SCHED_BATCH when the product ends (csrc/runtime/driver_threads.h
setWorkersBatch; the switch in csrc/aten/linalg/gemm.cpp, WorkersNormalScope). Products from 161^3
multiply-adds switch, smaller ones and the host BLAS's do not; the results must match CPU PyTorch
whatever the provider, layout, batch or dtype, and the policy must be restored afterwards (also
when the products were queued back to back)."""

from __future__ import annotations

import os

import pytest
import torch

import torch_ocl
from torch_ocl import _C
import test_gemm  # tests/test_gemm.py, beside this file
from test_driver_threads import _policies  # thread id -> scheduling policy

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux only")

SCHED_OTHER, SCHED_BATCH = 0, 3


def _switchable() -> bool:
    info = _C._driver_threads()
    return info["policy"] == "batch" and info["threads"] > 0


# test_gemm's provider rule, tolerances and check; of its providers, those that switch the workers
# (cpu_tile) or must leave them alone (host_blas).
CASES = [(p, dt) for p, dt in test_gemm.CASES
         if p in ("cpu_tile", "host_blas") and test_gemm._usable(p, dt)]


@pytest.fixture(params=CASES, ids=[f"{p}-{str(dt)[6:]}" for p, dt in CASES])
def provider(request):
    p, dt = request.param
    _C._set_gemm_provider(p)
    yield p, dt
    _C._set_gemm_provider("auto")


_tol, _check = test_gemm._tol, test_gemm._check


def _batch_restored():
    if not _switchable():
        return
    n = _C._driver_threads()["threads"]
    assert sum(v == SCHED_BATCH for v in _policies().values()) >= n


def _operand(rows, cols, dt, g, transposed):
    """A rows x cols operand, as a transposed view of a cols x rows matrix when asked."""
    if transposed:
        return torch.randn(cols, rows, generator=g).to(dt).t()
    return torch.randn(rows, cols, generator=g).to(dt)


# Odd sizes above the switch threshold (161^3), the MLP's training shapes and their transposes.
@pytest.mark.parametrize("n,k,m", [(64, 784, 512), (167, 171, 173), (512, 64, 784), (70, 1030, 65)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_large_mm_matches_cpu_and_restores_batch(provider, n, k, m, ta, tb):
    p, dt = provider
    g = torch.Generator().manual_seed(n * 7 + k + m)
    a, b = _operand(n, k, dt, g, ta), _operand(k, m, dt, g, tb)
    with torch_ocl.strict():
        a_d = a.t().contiguous().to("ocl").t() if ta else a.to("ocl")
        b_d = b.t().contiguous().to("ocl").t() if tb else b.to("ocl")
        out = torch.mm(a_d, b_d)
        torch.ocl.synchronize()
    _check(out, a.double() @ b.double(), dt, p)
    _batch_restored()


def test_large_batched_strided_and_epilogue(provider):
    p, dt = provider
    g = torch.Generator().manual_seed(3)
    a = torch.randn(3, 96, 200, generator=g).to(dt)
    base = torch.randn(3, 300, 200, generator=g).to(dt)  # b = base^T per batch: strided
    bias = torch.randn(300, generator=g).to(dt)
    x = torch.randn(80, 300, generator=g).to(dt)
    w = torch.randn(200, 300, generator=g).to(dt)
    with torch_ocl.strict():
        out = torch.bmm(a.to("ocl"), base.to("ocl").transpose(1, 2))
        lin = torch.nn.functional.linear(x.to("ocl"), w.to("ocl"), None)
        fused = torch.addmm(bias.to("ocl")[:200], x.to("ocl"), w.to("ocl").t())
        relu = torch.relu(fused)
        torch.ocl.synchronize()
    _check(out, a.double() @ base.double().transpose(1, 2), dt, p)
    _check(lin, x.double() @ w.double().t(), dt, p)
    ref = bias.double()[:200] + x.double() @ w.double().t()
    rtol, atol = _tol(dt)
    torch.testing.assert_close(relu.cpu().double(), ref.clamp_min(0), rtol=rtol,
                               atol=atol * max(1.0, ref.abs().max().item()))
    _batch_restored()


def test_zero_size_and_small_products_leave_policy(provider):
    p, dt = provider
    with torch_ocl.strict():
        z = torch.mm(torch.ones(0, 300, dtype=dt, device="ocl"),
                     torch.ones(300, 300, dtype=dt, device="ocl"))
        e = torch.mm(torch.ones(200, 0, dtype=dt, device="ocl"),
                     torch.ones(0, 200, dtype=dt, device="ocl"))
        s = torch.mm(torch.ones(5, 7, dtype=dt, device="ocl"),
                     torch.ones(7, 3, dtype=dt, device="ocl"))
        torch.ocl.synchronize()
    assert z.shape == (0, 300)
    assert e.shape == (200, 200) and not e.cpu().any()
    assert (s.cpu().double() == 7).all()
    _batch_restored()


def test_workers_normal_while_large_product_runs():
    if not _switchable():
        pytest.skip("the driver's threads are not under SCHED_BATCH here")
    _C._set_gemm_provider("cpu_tile")
    try:
        a = torch.randn(1536, 1536, device="ocl")
        b = torch.randn(1536, 1536, device="ocl")
        c = torch.empty(1536, 1536, device="ocl")
        torch.mm(a, b, out=c)
        torch.ocl.synchronize()
        _batch_restored()
        before = _policies()
        # One product of 3.6 G multiply-adds: tens of milliseconds at the least, while reading
        # the policies takes well under one. (Not two: the first one's restoring command runs
        # when it ends and puts the workers back under SCHED_BATCH for the second, by design.)
        torch.mm(a, b, out=c)
        during = _policies()
        torch.ocl.synchronize()
        after = _policies()
    finally:
        _C._set_gemm_provider("auto")
    # the driver's workers (threads they started since inherit SCHED_BATCH and stay there)
    moved = set(_C._driver_threads()["thread_ids"])
    batch_before = {t for t, v in before.items() if v == SCHED_BATCH and t in moved}
    assert batch_before, before
    assert all(during.get(t, SCHED_OTHER) == SCHED_OTHER for t in batch_before), during
    assert all(after.get(t, SCHED_BATCH) == SCHED_BATCH for t in batch_before), after
    assert after[os.getpid()] == SCHED_OTHER


def test_switch_can_be_turned_off():
    if not _switchable():
        pytest.skip("the driver's threads are not under SCHED_BATCH here")
    import json
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import json, os, torch, torch_ocl
        from torch_ocl import _C
        def pol():
            out = {}
            for t in os.listdir("/proc/self/task"):
                s = open(f"/proc/self/task/{t}/stat").read()
                out[int(t)] = int(s[s.rindex(")") + 2:].split()[38])
            return out
        _C._set_gemm_provider("cpu_tile")
        a = torch.randn(1536, 1536, device="ocl")
        c = torch.mm(a, a)
        torch.ocl.synchronize()
        before = {t for t, v in pol().items() if v == 3}
        torch.mm(a, a, out=c)
        torch.mm(a, a, out=c)
        during = pol()
        torch.ocl.synchronize()
        ok = torch.allclose(c.cpu(), a.cpu() @ a.cpu(), rtol=1e-4, atol=1e-3)
        print(json.dumps({"before": len(before), "batch_during": sum(during.get(t) == 3
                                                                     for t in before),
                          "ok": ok}))
    """)
    env = dict(os.environ, TORCH_OCL_GEMM_WORKER_SWITCH="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["ok"] and info["before"] >= 1
    assert info["batch_during"] == info["before"], info


def _watch_while_running(tids, products, a, b, c):
    """Queues `products` products and reads the threads' policies until they are done; returns
    the policies seen for each of tids."""
    seen = {t: set() for t in tids}
    for _ in range(products):
        torch.mm(a, b, out=c)
    done = torch.ocl.Event()
    done.record()
    while not done.query():
        pol = _policies()
        for t in tids:
            seen[t].add(pol.get(t))
    torch.ocl.synchronize()
    return seen


@pytest.mark.parametrize("prov,size,products", [("cpu_tile", 96, 400), ("host_blas", 1024, 4)])
def test_small_and_host_blas_products_keep_batch(prov, size, products):
    """96^3 is below the threshold; the host BLAS never switches."""
    if not _switchable():
        pytest.skip("the driver's threads are not under SCHED_BATCH here")
    if prov not in {p for p, _ in CASES}:
        pytest.skip(f"{prov} does not run here")
    _C._set_gemm_provider(prov)
    try:
        a = torch.randn(size, size, device="ocl")
        c = torch.empty(size, size, device="ocl")
        torch.mm(a, a, out=c)
        torch.ocl.synchronize()
        assert _C._last_gemm_provider() == prov
        batch_before = {t for t, v in _policies().items() if v == SCHED_BATCH}
        seen = _watch_while_running(batch_before, products, a, a, c)
    finally:
        _C._set_gemm_provider("auto")
    assert batch_before
    assert all(seen[t] <= {SCHED_BATCH, None} for t in batch_before), seen
    torch.testing.assert_close(c.cpu(), a.cpu() @ a.cpu(), rtol=1e-4, atol=1e-3)
