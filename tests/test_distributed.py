"""The ocl_gloo c10d backend: collectives, Work objects, errors and DDP with 2 processes.

One pair of worker processes (this file run as a script) performs every check and writes one
result per check; each pytest test then reports its own check. Every expected value is computed
on the CPU from the same inputs (each rank can build the other rank's inputs: they are a
deterministic function of the rank). The workers run the checks in strict mode, so a hidden CPU
fallback fails them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import timedelta

import pytest

WORLD = 2
CHECKS: list[str] = []


def check(fn):
    CHECKS.append(fn.__name__)
    return fn


# ---------------------------------------------------------------- worker side (2 processes)


def _inputs(rank, shape, dtype, seed=0):
    import torch

    g = torch.Generator().manual_seed(1000 * seed + rank)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    hi = 4 if dtype in (torch.uint8, torch.int8) else 50
    return torch.randint(1, hi, shape, generator=g).to(dtype)


def _ocl(t, noncontig=False):
    """t on ocl; noncontig gives a transposed view holding the same values."""
    if not noncontig:
        return t.to("ocl")
    return t.t().contiguous().to("ocl").t()


def _close(a, b, dtype=None):
    import torch

    a = a.cpu()
    dtype = dtype or b.dtype
    if dtype in (torch.float16, torch.bfloat16):
        torch.testing.assert_close(a.float(), b.float(), rtol=2e-2, atol=2e-2)
    elif dtype.is_floating_point:
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    else:
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def _reduce(tensors, op):
    import torch
    import torch.distributed as dist

    if op == dist.ReduceOp.SUM:
        out = tensors[0].clone()
        for t in tensors[1:]:
            out = out + t
        return out.to(tensors[0].dtype)
    if op == dist.ReduceOp.PRODUCT:
        out = tensors[0].clone()
        for t in tensors[1:]:
            out = out * t
        return out.to(tensors[0].dtype)
    if op == dist.ReduceOp.MIN:
        return torch.stack(tensors).amin(0)
    if op == dist.ReduceOp.MAX:
        return torch.stack(tensors).amax(0)
    if op == dist.ReduceOp.BAND:
        out = tensors[0].clone()
        for t in tensors[1:]:
            out = out & t
        return out
    if op == dist.ReduceOp.BOR:
        out = tensors[0].clone()
        for t in tensors[1:]:
            out = out | t
        return out
    if op == dist.ReduceOp.BXOR:
        out = tensors[0].clone()
        for t in tensors[1:]:
            out = out ^ t
        return out
    raise AssertionError(op)


def _dtypes():
    import torch

    import torch_ocl

    dts = [torch.float32, torch.int32, torch.int64, torch.bfloat16, torch.float16, torch.uint8]
    if torch_ocl.get_device_properties(0).fp64:
        dts.append(torch.float64)
    return dts


@check
def broadcast(rank):
    import torch
    import torch.distributed as dist

    for dtype in _dtypes():
        for src in (0, 1):
            for nc in (False, True):
                x = _ocl(_inputs(rank, (5, 7), dtype), nc)
                dist.broadcast(x, src=src)
                _close(x, _inputs(src, (5, 7), dtype))
    z = torch.empty(0, device="ocl")
    dist.broadcast(z, src=0)


@check
def all_reduce_ops(rank):
    import torch
    import torch.distributed as dist

    R = dist.ReduceOp
    for dtype in _dtypes():
        ops = [R.SUM, R.MIN, R.MAX, R.PRODUCT]
        if not dtype.is_floating_point:
            ops += [R.BAND, R.BOR, R.BXOR]
        for op in ops:
            for nc in (False, True):
                x = _ocl(_inputs(rank, (6, 9), dtype, seed=int(op)), nc)
                dist.all_reduce(x, op=op)
                want = _reduce([_inputs(r, (6, 9), dtype, seed=int(op)) for r in range(WORLD)], op)
                _close(x, want)
    b = _ocl(_inputs(rank, (17,), torch.bool))
    dist.all_reduce(b, op=R.BOR)
    _close(b, _inputs(0, (17,), torch.bool) | _inputs(1, (17,), torch.bool))


@check
def all_reduce_avg_premul(rank):
    import torch
    import torch.distributed as dist

    xs = [_inputs(r, (33,), torch.float32) for r in range(WORLD)]
    x = _ocl(xs[rank])
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    _close(x, (xs[0] + xs[1]) / 2)
    for factor in (0.25, torch.tensor(3.0, device="ocl")):
        x = _ocl(xs[rank])
        dist.all_reduce(x, op=dist._make_nccl_premul_sum(factor))
        f = float(factor)
        _close(x, xs[0] * f + xs[1] * f)


@check
def all_reduce_coalesced(rank):
    import torch
    import torch.distributed as dist

    shapes = [(3,), (4, 5), (0,), (2, 2, 2)]
    xs = [_ocl(_inputs(rank, s, torch.float32, seed=i)) for i, s in enumerate(shapes)]
    xs[1] = xs[1].t()  # non-contiguous
    dist.all_reduce_coalesced(xs)
    for i, s in enumerate(shapes):
        want = _inputs(0, s, torch.float32, seed=i) + _inputs(1, s, torch.float32, seed=i)
        _close(xs[i], want.t() if i == 1 else want)
    ys = [_ocl(_inputs(rank, (6,), torch.int64, seed=9)), _ocl(_inputs(rank, (2,), torch.int64))]
    dist.all_reduce_coalesced(ys, op=dist.ReduceOp.MAX)
    _close(ys[0], torch.maximum(_inputs(0, (6,), torch.int64, 9), _inputs(1, (6,), torch.int64, 9)))
    _close(ys[1], torch.maximum(_inputs(0, (2,), torch.int64), _inputs(1, (2,), torch.int64)))


@check
def all_gather(rank):
    import torch
    import torch.distributed as dist

    for dtype in (torch.float32, torch.int64, torch.bfloat16):
        x = _ocl(_inputs(rank, (4, 3), dtype), noncontig=True)
        outs = [torch.empty(4, 3, dtype=dtype, device="ocl") for _ in range(WORLD)]
        dist.all_gather(outs, x)
        for r in range(WORLD):
            _close(outs[r], _inputs(r, (4, 3), dtype))
        out = torch.empty(8, 3, dtype=dtype, device="ocl")
        dist.all_gather_into_tensor(out, x)
        _close(out, torch.cat([_inputs(r, (4, 3), dtype) for r in range(WORLD)]))
        stacked = torch.empty(2, 4, 3, dtype=dtype, device="ocl")
        dist.all_gather_into_tensor(stacked, x)
        _close(stacked, torch.stack([_inputs(r, (4, 3), dtype) for r in range(WORLD)]))


@check
def reduce_scatter(rank):
    import torch
    import torch.distributed as dist

    for dtype in (torch.float32, torch.int32):
        full = [_inputs(r, (6, 5), dtype) for r in range(WORLD)]
        want = _reduce(full, dist.ReduceOp.SUM).chunk(WORLD)[rank]
        out = torch.empty(3, 5, dtype=dtype, device="ocl")
        dist.reduce_scatter_tensor(out, _ocl(full[rank]))
        _close(out, want)
        out2 = torch.empty(3, 5, dtype=dtype, device="ocl")
        dist.reduce_scatter(out2, [_ocl(c) for c in full[rank].chunk(WORLD)])
        _close(out2, want)
    full = [_inputs(r, (8,), torch.float32) for r in range(WORLD)]
    out = torch.empty(4, device="ocl")
    dist.reduce_scatter_tensor(out, _ocl(full[rank]), op=dist.ReduceOp.AVG)
    _close(out, ((full[0] + full[1]) / 2).chunk(WORLD)[rank])
    out = torch.empty(4, device="ocl")
    dist.reduce_scatter_tensor(out, _ocl(full[rank]), op=dist.ReduceOp.MAX)
    _close(out, torch.maximum(full[0], full[1]).chunk(WORLD)[rank])


@check
def gather_scatter_coalesced(rank):
    """_coalescing_manager batches of all_gather_into_tensor / reduce_scatter_tensor reach the
    backend's allgather_into_tensor_coalesced / reduce_scatter_tensor_coalesced; the list form
    reaches allgather_coalesced."""
    import torch
    import torch.distributed as dist

    shapes = [(4,), (2, 3), (0,), (3, 1)]
    ins = [_ocl(_inputs(rank, s, torch.float32, seed=i), noncontig=len(s) == 2)
           for i, s in enumerate(shapes)]
    outs = [torch.empty((WORLD * s[0],) + s[1:], device="ocl") for s in shapes]
    with dist._coalescing_manager(async_ops=True) as cm:
        for o, x in zip(outs, ins):
            dist.all_gather_into_tensor(o, x)
    cm.wait()
    for i, s in enumerate(shapes):
        _close(outs[i], torch.cat([_inputs(r, s, torch.float32, seed=i) for r in range(WORLD)]))

    full_shapes = [(4,), (6, 2), (2, 5)]
    fulls = [[_inputs(r, s, torch.float32, seed=10 + i) for r in range(WORLD)]
             for i, s in enumerate(full_shapes)]
    outs = [torch.empty((s[0] // WORLD,) + s[1:], device="ocl") for s in full_shapes]
    with dist._coalescing_manager():
        for o, f in zip(outs, fulls):
            dist.reduce_scatter_tensor(o, _ocl(f[rank]))
    for o, f in zip(outs, fulls):
        _close(o, _reduce(f, dist.ReduceOp.SUM).chunk(WORLD)[rank])

    lists = [[torch.empty(s, device="ocl") for s in shapes] for _ in range(WORLD)]
    with pytest.warns(FutureWarning):
        dist.all_gather_coalesced(lists, ins)
    for r in range(WORLD):
        for i, s in enumerate(shapes):
            _close(lists[r][i], _inputs(r, s, torch.float32, seed=i))


@check
def all_to_all(rank):
    import torch
    import torch.distributed as dist

    # Uneven: rank r sends (r + 1 + dst) elements to dst.
    def piece(src, dst):
        return torch.arange(src + 1 + dst, dtype=torch.float32) + 100 * src + 10 * dst

    ins = [_ocl(piece(rank, d)) for d in range(WORLD)]
    outs = [torch.empty(s + 1 + rank, device="ocl") for s in range(WORLD)]
    dist.all_to_all(outs, ins)
    for s in range(WORLD):
        _close(outs[s], piece(s, rank))
    x = _ocl(_inputs(rank, (4, 3), torch.int64))
    out = torch.empty(4, 3, dtype=torch.int64, device="ocl")
    dist.all_to_all_single(out, x)
    want = torch.cat([_inputs(s, (4, 3), torch.int64).chunk(WORLD)[rank] for s in range(WORLD)])
    _close(out, want)
    in_splits = [1, 3] if rank == 0 else [2, 2]
    out_splits = [[1, 3], [2, 2]][0][rank], [[1, 3], [2, 2]][1][rank]
    out = torch.empty(sum(out_splits), 3, dtype=torch.int64, device="ocl")
    dist.all_to_all_single(out, x, list(out_splits), in_splits)
    parts = []
    for s in range(WORLD):
        sp = [1, 3] if s == 0 else [2, 2]
        parts.append(_inputs(s, (4, 3), torch.int64).split(sp)[rank])
    _close(out, torch.cat(parts))


@check
def send_recv(rank):
    import torch
    import torch.distributed as dist

    peer = 1 - rank
    x = _ocl(_inputs(rank, (3, 4), torch.float32), noncontig=True)
    y = torch.empty(3, 4, device="ocl")
    if rank == 0:
        dist.send(x, peer)
        dist.recv(y, peer)
    else:
        dist.recv(y, peer)
        dist.send(x, peer)
    _close(y, _inputs(peer, (3, 4), torch.float32))
    reqs = dist.batch_isend_irecv(
        [dist.P2POp(dist.isend, x, peer), dist.P2POp(dist.irecv, y.zero_(), peer)]
    )
    for q in reqs:
        q.wait()
    _close(y, _inputs(peer, (3, 4), torch.float32))
    if rank == 0:
        z = torch.empty(5, dtype=torch.int64, device="ocl")
        src = dist.recv(z)  # any source
        assert src == 1, src
        _close(z, torch.arange(5) * 7)
    else:
        dist.send((torch.arange(5) * 7).to("ocl"), 0)


@check
def gather_scatter_reduce(rank):
    import torch
    import torch.distributed as dist

    x = _ocl(_inputs(rank, (5,), torch.float32))
    outs = [torch.empty(5, device="ocl") for _ in range(WORLD)] if rank == 1 else None
    dist.gather(x, outs, dst=1)
    if rank == 1:
        for r in range(WORLD):
            _close(outs[r], _inputs(r, (5,), torch.float32))
    out = torch.empty(5, device="ocl")
    src_list = [_ocl(_inputs(r, (5,), torch.float32, seed=3)) for r in range(WORLD)]
    dist.scatter(out, src_list if rank == 0 else None, src=0)
    _close(out, _inputs(rank, (5,), torch.float32, seed=3))
    y = _ocl(_inputs(rank, (5,), torch.float32, seed=4))
    dist.reduce(y, dst=0, op=dist.ReduceOp.MAX)
    if rank == 0:
        _close(y, torch.maximum(_inputs(0, (5,), torch.float32, 4), _inputs(1, (5,), torch.float32, 4)))


@check
def barrier_and_objects(rank):
    import torch
    import torch.distributed as dist

    dist.barrier()
    # torch.distributed.monitored_barrier() is gloo-only in Python; the ocl backend's own
    # monitored_barrier (delegating to its gloo) is reachable on the backend object.
    pg = dist.distributed_c10d._get_default_group()
    pg._get_backend(torch.device("ocl")).monitored_barrier(timedelta(seconds=20), True)
    objs = [None] * WORLD
    dist.all_gather_object(objs, {"rank": rank})
    assert objs == [{"rank": 0}, {"rank": 1}], objs
    lst = [rank * 10] if rank == 0 else [None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [0]


@check
def cpu_tensors_keep_gloo(rank):
    import torch
    import torch.distributed as dist

    x = torch.ones(4) * (rank + 1)
    dist.all_reduce(x)
    assert x.device.type == "cpu"
    assert x.tolist() == [3.0] * 4


@check
def async_work_and_future(rank):
    import torch
    import torch.distributed as dist

    xs = [_ocl(_inputs(rank, (1000,), torch.float32, seed=i)) for i in range(4)]
    works = [dist.all_reduce(x, async_op=True) for x in xs]
    futs = [w.get_future() for w in works]
    chained = futs[0].then(lambda f: f.value()[0] * 2)
    for w in works:
        w.wait()
        assert w.is_completed() and w.is_success()
    for i, (x, f) in enumerate(zip(xs, futs)):
        want = _inputs(0, (1000,), torch.float32, seed=i) + _inputs(1, (1000,), torch.float32, seed=i)
        _close(x, want)
        v = f.wait()
        assert v[0].device.type == "ocl"
        _close(v[0], want)
    _close(chained.wait(), 2 * (_inputs(0, (1000,), torch.float32, 0) + _inputs(1, (1000,), torch.float32, 0)))
    # the result is usable on the caller's stream right after wait()
    y = _ocl(torch.full((256,), float(rank)))
    dist.all_reduce(y, async_op=True).wait()
    _close(y + 1, torch.full((256,), 2.0))


@check
def errors_keep_process_usable(rank):
    import torch
    import torch.distributed as dist

    def raises(fn, text):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            assert text in str(e), f"expected {text!r} in {e!r}"
            return
        raise AssertionError(f"no error, expected {text!r}")

    raises(lambda: dist.all_reduce(torch.ones(3, dtype=torch.int16, device="ocl")), "unsupported dtype")
    raises(
        lambda: dist.all_gather_into_tensor(torch.empty(5, device="ocl"), torch.ones(3, device="ocl")),
        "world_size times",
    )
    raises(
        lambda: dist.all_gather(
            [torch.empty(3, device="ocl"), torch.empty(4, device="ocl")], torch.ones(3, device="ocl")
        ),
        "invalid tensor size",
    )
    # bitwise ops on floats are rejected by gloo; the error comes back through wait()
    raises(lambda: dist.all_reduce(torch.ones(3, device="ocl"), op=dist.ReduceOp.BAND), "")
    x = torch.ones(3, device="ocl")
    dist.all_reduce(x)
    _close(x, torch.full((3,), 2.0))


def _mlp(seed, unused=False):
    import torch

    torch.manual_seed(seed)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 16)
            self.b = torch.nn.Linear(16, 4)
            self.unused = torch.nn.Linear(4, 4) if unused else None

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    return M()


def _batch(step):
    import torch

    g = torch.Generator().manual_seed(77 + step)
    return torch.randn(12, 8, generator=g), torch.randn(12, 4, generator=g)


def _reference(steps, unused=False, accumulate=False):
    import torch

    m = _mlp(0, unused)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for s in range(steps):
        x, y = _batch(s)
        opt.zero_grad()
        if accumulate:  # two micro-batches, gradients summed
            for xi, yi in zip(x.chunk(2), y.chunk(2)):
                torch.nn.functional.mse_loss(m(xi), yi).backward()
        else:
            torch.nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    return m


def _ddp_run(rank, steps, unused=False, hook=None, accumulate=False, **ddp_kw):
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    m = _mlp(0, unused).to("ocl")
    ddp = DDP(m, bucket_cap_mb=0.0005, find_unused_parameters=unused, **ddp_kw)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for s in range(steps):
        x, y = _batch(s)
        xs, ys = x.chunk(WORLD)[rank].to("ocl"), y.chunk(WORLD)[rank].to("ocl")
        opt.zero_grad()
        if accumulate:
            # the rank's half of each micro-batch: no_sync on the first, sync on the second
            x0, x1 = xs.chunk(2)
            y0, y1 = ys.chunk(2)
            with ddp.no_sync():
                torch.nn.functional.mse_loss(ddp(x0), y0).backward()
            torch.nn.functional.mse_loss(ddp(x1), y1).backward()
        else:
            torch.nn.functional.mse_loss(ddp(xs), ys).backward()
        opt.step()
    return m


def _compare_models(got, want, atol):
    import torch

    for (n, p), q in zip(got.named_parameters(), want.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=atol, atol=atol, msg=n)


@check
def ddp_matches_single_process(rank):
    _compare_models(_ddp_run(rank, 3), _reference(3), 1e-5)


@check
def ddp_no_sync(rank):
    # Each rank's micro-batch halves; the reference sums the gradients of the two global halves
    # (the ranks' first quarters, then their second quarters), each a mean over 6 rows.
    import torch

    m = _mlp(0)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for s in range(2):
        x, y = _batch(s)
        opt.zero_grad()
        q = [c.chunk(2) for c in x.chunk(WORLD)]
        qy = [c.chunk(2) for c in y.chunk(WORLD)]
        for k in range(2):
            xk = torch.cat([q[r][k] for r in range(WORLD)])
            yk = torch.cat([qy[r][k] for r in range(WORLD)])
            torch.nn.functional.mse_loss(m(xk), yk).backward()
        opt.step()
    _compare_models(_ddp_run(rank, 2, accumulate=True), m, 1e-5)


@check
def ddp_find_unused_parameters(rank):
    got = _ddp_run(rank, 2, unused=True)
    _compare_models(got, _reference(2, unused=True), 1e-5)


@check
def ddp_fp16_compress_hook(rank):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    got = _ddp_run(rank, 2, hook=default_hooks.fp16_compress_hook)
    _compare_models(got, _reference(2), 2e-3)


@check
def timeout_raises(rank):
    import torch
    import torch.distributed as dist

    g = dist.new_group([0, 1], timeout=timedelta(seconds=2), backend="ocl_gloo")
    if rank == 0:
        t0 = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4, device="ocl"), group=g)
        except Exception as e:  # noqa: BLE001
            took = time.monotonic() - t0
            assert took < 20, took
            assert "imed out" in str(e) or "Timeout" in str(e) or "timeout" in str(e), e
        else:
            raise AssertionError("an allreduce that rank 1 never joins did not time out")
    else:
        time.sleep(6)  # alive, but never joins: rank 0 must see a timeout, not a reset


@check
def peer_death_raises(rank):
    """Last check: rank 1 exits; rank 0's next allreduce raises within the timeout."""
    import torch
    import torch.distributed as dist

    g = dist.new_group([0, 1], timeout=timedelta(seconds=10), backend="ocl_gloo")
    dist.barrier(group=g)
    if rank == 1:
        return "exit"
    time.sleep(1)
    t0 = time.monotonic()
    try:
        dist.all_reduce(torch.ones(4, device="ocl"), group=g)
    except Exception:  # noqa: BLE001
        assert time.monotonic() - t0 < 20
    else:
        raise AssertionError("an allreduce with a dead peer did not raise")


def no_arguments_serves_ocl(rank):
    """init_process_group() on an ocl machine: ocl_gloo for ocl tensors, gloo for CPU tensors
    (torch_ocl adds cpu:gloo to the accelerator-only default, docs/distributed.md)."""
    import torch
    import torch.distributed as dist

    x = torch.full((5,), float(rank + 1), device="ocl")
    dist.all_reduce(x)
    _close(x, torch.full((5,), 3.0))
    assert dist.get_backend() == "undefined"
    assert dist.get_backend_config() == "cpu:gloo,ocl:ocl_gloo", dist.get_backend_config()
    pg = dist.group.WORLD
    assert pg._get_backend(torch.device("ocl")).name() == "ocl_gloo"
    assert pg._get_backend(torch.device("cpu")).name() == "gloo"
    y = torch.arange(6, dtype=torch.float64) * (rank + 1)
    dist.all_reduce(y)
    assert y.device.type == "cpu" and y.tolist() == [3.0 * i for i in range(6)]
    # a new group without a backend inherits the same split
    g = dist.new_group([0, 1])
    z = torch.ones(3, device="ocl")
    dist.all_reduce(z, group=g)
    _close(z, torch.full((3,), 2.0))
    w = torch.ones(3)
    dist.all_reduce(w, group=g)
    assert w.tolist() == [2.0] * 3
    dist.barrier(group=g)


def worker(rank, init_file, out_dir, mode):
    import torch
    import torch.distributed as dist

    import torch_ocl

    if mode == "device_id":
        dist.init_process_group(
            init_method=f"file://{init_file}", rank=rank, world_size=WORLD,
            device_id=torch.device("ocl", 0), timeout=timedelta(seconds=60),
        )
    elif mode == "no_arguments":
        dist.init_process_group(init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    else:
        dist.init_process_group(
            init_method=f"file://{init_file}", rank=rank, world_size=WORLD,
            backend="cpu:gloo,ocl:ocl_gloo", timeout=timedelta(seconds=60),
        )
    results = {}
    # device_id mode also forces the pinned staging path (TORCH_OCL_DIST_ZERO_COPY=0, set by
    # _run_pair) through the collective checks; the explicit mode maps host-unified memory.
    staged = ["broadcast", "all_reduce_ops", "all_reduce_avg_premul", "all_gather",
              "reduce_scatter", "all_to_all", "async_work_and_future", "cpu_tensors_keep_gloo",
              "ddp_matches_single_process"]
    names = {"device_id": staged, "no_arguments": ["all_gather", "no_arguments_serves_ocl"]}.get(
        mode, CHECKS
    )
    def save():
        with open(os.path.join(out_dir, f"{mode}-{rank}.json"), "w") as f:
            json.dump(results, f)

    for name in names:
        ret = None
        try:
            with torch_ocl.strict():
                ret = globals()[name](rank)
            results[name] = "ok"
        except Exception:  # noqa: BLE001
            results[name] = traceback.format_exc()
        if ret == "exit":
            save()
            os._exit(0)  # dies without destroying the group: the peer must notice
        if name not in ("timeout_raises", "peer_death_raises"):
            dist.barrier()
    save()
    os._exit(0)  # the timed-out groups may hold gloo threads; results are on disk


# ---------------------------------------------------------------- pytest side


def _run_pair(mode):
    out = tempfile.mkdtemp(prefix="ocl-dist-")
    init_file = os.path.join(out, "init")
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    if mode == "device_id":
        env["TORCH_OCL_DIST_ZERO_COPY"] = "0"
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, str(r), init_file, out, mode],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for r in range(WORLD)
    ]
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(timeout=240)[0])
        except subprocess.TimeoutExpired:
            p.kill()
            logs.append(p.communicate()[0])
    results = {}
    for r in range(WORLD):
        path = os.path.join(out, f"{mode}-{r}.json")
        if not os.path.exists(path):
            pytest.fail(f"rank {r} wrote no results:\n" + logs[r][-4000:])
        with open(path) as f:
            results[r] = json.load(f)
    return results


@pytest.fixture(scope="module")
def pair():
    return _run_pair("explicit")


@pytest.mark.parametrize("name", CHECKS)
def test_collective(pair, name):
    for r in range(WORLD):
        assert pair[r][name] == "ok", f"rank {r}:\n{pair[r][name]}"


def test_device_id_picks_ocl_gloo():
    res = _run_pair("device_id")
    for r in range(WORLD):
        for name, v in res[r].items():
            assert v == "ok", f"rank {r} {name}:\n{v}"


def test_init_without_arguments():
    res = _run_pair("no_arguments")
    for r in range(WORLD):
        assert set(res[r]) == {"all_gather", "no_arguments_serves_ocl"}
        for name, v in res[r].items():
            assert v == "ok", f"rank {r} {name}:\n{v}"


def test_registration():
    """What import torch registers, and the backend configuration each init form gets."""
    code = (
        "import sys, torch, torch.distributed as dist\n"
        "from torch.distributed.distributed_c10d import BackendConfig\n"
        "print(dist.Backend.default_device_backend_map.get('ocl'),"
        " dist.Backend.default_device_backend_map.get('cpu'),"
        " 'ocl_gloo' in dist.Backend.backend_list)\n"
        "for b in ('undefined', 'ocl_gloo', 'cpu:gloo,ocl:ocl_gloo', 'gloo'):\n"
        "    print(b, BackendConfig(dist.Backend(b)))\n"
    )
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "ocl_gloo gloo True",
        "undefined cpu:gloo,ocl:ocl_gloo",
        "ocl_gloo ocl:ocl_gloo,cpu:ocl_gloo",
        "cpu:gloo,ocl:ocl_gloo cpu:gloo,ocl:ocl_gloo",
        "gloo cpu:gloo,cuda:gloo",
    ], out.stdout
    env["TORCH_OCL_DIST_DEFAULT_CPU"] = "0"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "undefined ocl:ocl_gloo" in out.stdout.splitlines(), out.stdout + out.stderr


def torchrun_worker(out_dir):
    """Started by torchrun: init_process_group() from its environment (env://), no arguments."""
    import torch.distributed as dist

    import torch_ocl

    dist.init_process_group()
    rank = dist.get_rank()
    try:
        with torch_ocl.strict():
            no_arguments_serves_ocl(rank)
        res = "ok"
    except Exception:  # noqa: BLE001
        res = traceback.format_exc()
    with open(os.path.join(out_dir, f"torchrun-{rank}.json"), "w") as f:
        json.dump(res, f)
    dist.destroy_process_group()


def test_torchrun_env_without_arguments():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tempfile.mkdtemp(prefix="ocl-dist-torchrun-")
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    p = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
         "--master-addr", "127.0.0.1", "--master-port", str(port), __file__, "torchrun", out],
        env=env, capture_output=True, text=True, timeout=240,
    )
    for r in range(WORLD):
        path = os.path.join(out, f"torchrun-{r}.json")
        assert os.path.exists(path), f"rank {r} wrote nothing:\n{(p.stdout + p.stderr)[-4000:]}"
        with open(path) as f:
            res = json.load(f)
        assert res == "ok", f"rank {r}:\n{res}"


if __name__ == "__main__":
    if sys.argv[1] == "torchrun":
        torchrun_worker(sys.argv[2])
    else:
        worker(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4])
