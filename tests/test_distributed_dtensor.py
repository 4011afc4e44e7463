"""DeviceMesh, DTensor, tensor parallelism, FSDP2 and distributed checkpoints on ocl (2 processes).

Same scheme as test_distributed.py: one pair of workers runs every check (in strict mode) and
writes one result per check; expected values come from the CPU on the same inputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from datetime import timedelta

import pytest

WORLD = 2
CHECKS: list[str] = []


def check(fn):
    CHECKS.append(fn.__name__)
    return fn


def _close(a, b, tol=1e-5):
    import torch

    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=tol, atol=tol)


def _mesh():
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("ocl", (WORLD,))


@check
def device_mesh(rank):
    mesh = _mesh()
    assert mesh.device_type == "ocl"
    assert mesh.size() == WORLD and mesh.get_local_rank() == rank


@check
def distribute_tensor_shard_replicate(rank):
    import torch
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    mesh = _mesh()
    torch.manual_seed(0)
    full = torch.randn(6, 5)
    d = distribute_tensor(full.to("ocl"), mesh, [Shard(0)])
    assert d.to_local().device.type == "ocl"
    _close(d.to_local(), full.chunk(WORLD, 0)[rank])
    _close(d.full_tensor(), full)
    d1 = distribute_tensor(full.to("ocl"), mesh, [Shard(1)])  # uneven: 5 columns on 2 ranks
    _close(d1.to_local(), full.chunk(WORLD, 1)[rank])
    _close(d1.full_tensor(), full)
    r = distribute_tensor(full.to("ocl"), mesh, [Replicate()])
    _close(r.to_local(), full)


@check
def redistribute(rank):
    import torch
    from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor

    mesh = _mesh()
    torch.manual_seed(1)
    full = torch.randn(8, 4)
    d = distribute_tensor(full.to("ocl"), mesh, [Shard(0)])
    _close(d.redistribute(mesh, [Replicate()]).to_local(), full)
    _close(d.redistribute(mesh, [Shard(1)]).to_local(), full.chunk(WORLD, 1)[rank])
    # Partial -> Replicate is an allreduce, Partial -> Shard a reduce_scatter.
    from torch.distributed.tensor import DTensor

    part = DTensor.from_local((full * (rank + 1)).to("ocl"), mesh, [Partial()])
    _close(part.redistribute(mesh, [Replicate()]).to_local(), full * 3)
    part = DTensor.from_local((full * (rank + 1)).to("ocl"), mesh, [Partial()])
    _close(part.redistribute(mesh, [Shard(0)]).to_local(), (full * 3).chunk(WORLD)[rank])
    # ops on DTensors
    a = distribute_tensor(full.to("ocl"), mesh, [Shard(0)])
    b = distribute_tensor(full.t().contiguous().to("ocl"), mesh, [Replicate()])
    _close((a @ b).full_tensor(), full @ full.t(), 1e-4)
    _close(a.sum().full_tensor(), full.sum(), 1e-4)


def _mlp():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8), torch.nn.ReLU(),
        torch.nn.Linear(8, 4),
    )


def _data(step, batch=8):
    import torch

    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(batch, 8, generator=g), torch.randn(batch, 4, generator=g)


@check
def tensor_parallel_mlp(rank):
    import torch
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )

    def mlp():
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)
        )

    mesh = _mesh()
    ref = mlp()
    tp = parallelize_module(mlp().to("ocl"), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt_tp = torch.optim.SGD(tp.parameters(), lr=0.1)
    for s in range(2):
        x, y = _data(s)
        out_ref = ref(x)
        out_tp = tp(x.to("ocl"))
        _close(out_tp, out_ref, 1e-5)
        torch.nn.functional.mse_loss(out_ref, y).backward()
        torch.nn.functional.mse_loss(out_tp, y.to("ocl")).backward()
        opt_ref.step()
        opt_tp.step()
        opt_ref.zero_grad()
        opt_tp.zero_grad()
    for (n, p), q in zip(tp.named_parameters(), ref.parameters()):
        full = p.full_tensor() if hasattr(p, "full_tensor") else p
        _close(full, q, 1e-5)


def _fsdp_model():
    from torch.distributed.fsdp import fully_shard

    m = _mlp().to("ocl")
    fully_shard(m[0])
    fully_shard(m[2])
    fully_shard(m)
    return m


@check
def fsdp2_matches_unsharded(rank):
    import torch

    ref = _mlp()
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    m = _fsdp_model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    for s in range(3):
        x, y = _data(s)
        opt_ref.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y).backward()
        opt_ref.step()
        opt.zero_grad()
        xs, ys = x.chunk(WORLD)[rank].to("ocl"), y.chunk(WORLD)[rank].to("ocl")
        torch.nn.functional.mse_loss(m(xs), ys).backward()
        opt.step()
    for (n, p), q in zip(m.named_parameters(), ref.parameters()):
        assert p.to_local().device.type == "ocl"
        _close(p.full_tensor(), q, 1e-5)


@check
def fsdp2_mixed_precision_bf16(rank):
    """bf16 parameters and compute, fp32 gradient reduction: the sharded fp32 master weights
    follow the fp32 unsharded run within bf16 rounding."""
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    m = _mlp().to("ocl")
    fully_shard(m[0], mp_policy=mp)
    fully_shard(m[2], mp_policy=mp)
    fully_shard(m, mp_policy=mp)
    ref = _mlp()
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for s in range(2):
        x, y = _data(s)
        opt_ref.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y).backward()
        opt_ref.step()
        opt.zero_grad()
        out = m(x.chunk(WORLD)[rank].to("ocl"))
        assert out.dtype == torch.bfloat16
        torch.nn.functional.mse_loss(out.float(), y.chunk(WORLD)[rank].to("ocl")).backward()
        opt.step()
    for p, q in zip(m.parameters(), ref.parameters()):
        assert p.dtype == torch.float32
        _close(p.full_tensor(), q, 3e-2)


@check
def dtensor_random_ops(rank):
    """DTensor random ops draw from the ocl generator: a sharded randn is the slice of the
    replicated one drawn with the same seed, and differs between shards."""
    import torch
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    mesh = _mesh()
    torch.manual_seed(5)
    d = distribute_tensor(torch.empty(8, 4, device="ocl"), mesh, [Shard(0)])
    torch.nn.init.normal_(d)
    full = d.full_tensor().cpu()
    assert not torch.equal(full[:4], full[4:])
    torch.manual_seed(5)
    r = distribute_tensor(torch.empty(8, 4, device="ocl"), mesh, [Replicate()])
    torch.nn.init.normal_(r)
    others = [None] * WORLD
    import torch.distributed as dist

    dist.all_gather_object(others, r.to_local().cpu())
    torch.testing.assert_close(others[0], others[1], rtol=0, atol=0)


@check
def dcp_save_load(rank):
    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        get_state_dict,
        set_state_dict,
    )

    m = _fsdp_model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    x, y = _data(0)
    torch.nn.functional.mse_loss(m(x.chunk(WORLD)[rank].to("ocl")), y.chunk(WORLD)[rank].to("ocl")).backward()
    opt.step()
    path = [tempfile.mkdtemp(prefix="ocl-dcp-") if rank == 0 else None]
    dist.broadcast_object_list(path, src=0)
    msd, osd = get_state_dict(m, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=path[0])

    m2 = _fsdp_model()
    with torch.no_grad():
        for p in m2.parameters():
            p.zero_()
    opt2 = torch.optim.AdamW(m2.parameters(), lr=1e-2)
    msd2, osd2 = get_state_dict(m2, opt2)
    sd = {"model": msd2, "optim": osd2}
    dcp.load(sd, checkpoint_id=path[0])
    set_state_dict(m2, opt2, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    for p, q in zip(m2.parameters(), m.parameters()):
        _close(p.full_tensor(), q.full_tensor(), 0)
    s1 = opt.state_dict()["state"]
    s2 = opt2.state_dict()["state"]
    for k in s1:
        _close(s2[k]["exp_avg"].full_tensor(), s1[k]["exp_avg"].full_tensor(), 0)
    # reloaded on another world size: a single process reads the full tensors back
    ref = {k: v.full_tensor() for k, v in msd.items()}
    if rank == 0:
        with open(os.path.join(path[0], "expected.pt"), "wb") as f:
            torch.save({k: v.cpu() for k, v in ref.items()}, f)
    dist.barrier()
    return path[0]


def worker(rank, init_file, out_dir):
    import torch
    import torch.distributed as dist

    import torch_ocl

    dist.init_process_group(
        init_method=f"file://{init_file}", rank=rank, world_size=WORLD,
        device_id=torch.device("ocl", 0), timeout=timedelta(seconds=60),
    )
    results = {}
    for name in CHECKS:
        try:
            with torch_ocl.strict():
                ret = globals()[name](rank)
            results[name] = "ok"
            if ret is not None:
                results[name + ":ret"] = ret
        except Exception:  # noqa: BLE001
            results[name] = traceback.format_exc()
        print(f"rank {rank} {name}: {results[name]}", flush=True)
        dist.barrier()
    with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


@pytest.fixture(scope="module")
def pair():
    out = tempfile.mkdtemp(prefix="ocl-dtensor-")
    init_file = os.path.join(out, "init")
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    procs = [
        subprocess.Popen([sys.executable, __file__, str(r), init_file, out], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
        path = os.path.join(out, f"{r}.json")
        if not os.path.exists(path):
            pytest.fail(f"rank {r} wrote no results:\n" + logs[r][-4000:])
        with open(path) as f:
            results[r] = json.load(f)
    return results


@pytest.mark.parametrize("name", CHECKS)
def test_dtensor(pair, name):
    for r in range(WORLD):
        assert pair[r][name] == "ok", f"rank {r}:\n{pair[r][name]}"


def test_dcp_reload_on_one_process(pair):
    """The 2-rank checkpoint loads into an unsharded model on one process (world size 1)."""
    import torch
    import torch.distributed.checkpoint as dcp

    if pair[0].get("dcp_save_load") != "ok":
        pytest.skip("the save check failed")
    path = pair[0]["dcp_save_load:ret"]
    with open(os.path.join(path, "expected.pt"), "rb") as f:
        expected = torch.load(f)
    m = _mlp().to("ocl")
    sd = {"model": {k: torch.zeros_like(v) for k, v in m.state_dict().items()}}
    dcp.load(sd, checkpoint_id=path, no_dist=True)
    for k, v in expected.items():
        _close(sd["model"][k], v, 0)


if __name__ == "__main__":
    worker(int(sys.argv[1]), sys.argv[2], sys.argv[3])
