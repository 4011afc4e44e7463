"""Bandwidth of the ocl_gloo backend against gloo on CPU tensors, measured in the same run.

    python benchmarks/distributed.py [--sizes-mib 1 16 64] [--iters 5] [--latency-iters 300]

Spawns 2 processes on this machine (each opens its own ocl device) with
backend="cpu:gloo,ocl:ocl_gloo": CPU tensors go to gloo directly, ocl tensors through the
ocl_gloo staging pipeline into its own gloo. For each size it times allreduce and
all_gather_into_tensor of ocl tensors and of CPU tensors of the same size, interleaved, and prints
algorithm bandwidth (bytes of the input per second) and the ratio ocl / cpu. It times the
latency of a 4 KiB all_reduce the same way (median of --latency-iters, each followed by a device
synchronisation). Then it times a DDP training step of a small MLP on 2 ranks against the same
step without DDP (each rank alone, both at once, so that both figures share the machine alike).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _time(fn, iters, sync):
    fn()
    sync()
    dist.barrier()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _worker(rank, world, init, sizes, iters, lat_iters, out_q):
    import torch_ocl  # noqa: F401

    dist.init_process_group("cpu:gloo,ocl:ocl_gloo", init_method=f"file://{init}", rank=rank,
                            world_size=world)
    sync = torch.ocl.synchronize
    rows = []
    for mib in sizes:
        n = int(mib * 2**20) // 4
        for op in ("all_reduce", "all_gather_into_tensor"):
            res = {}
            for dev in ("cpu", "ocl"):
                x = torch.ones(n, device=dev)
                if op == "all_reduce":
                    fn = lambda x=x: dist.all_reduce(x)  # noqa: E731
                else:
                    out = torch.empty(n * world, device=dev)
                    fn = lambda x=x, out=out: dist.all_gather_into_tensor(out, x)  # noqa: E731
                res[dev] = _time(fn, iters, sync)
            rows.append((op, mib, res["cpu"], res["ocl"]))

    # Small-message latency: 4 KiB all_reduce, interleaved rounds of CPU and ocl tensors.
    lat = {"cpu": [], "ocl": []}
    for _ in range(3):
        for dev in ("cpu", "ocl"):
            x = torch.ones(1024, device=dev)
            lat[dev].append(_time(lambda x=x: dist.all_reduce(x), lat_iters, sync))
    lat = {k: min(v) for k, v in lat.items()}

    # DDP step overhead: 2-rank DDP step vs the same per-rank step without DDP.
    from torch.nn.parallel import DistributedDataParallel as DDP

    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                   torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                   torch.nn.Linear(1024, 256)).to("ocl")

    x = torch.randn(64, 256, device="ocl")

    def stepper(m):
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            m(x).square().mean().backward()
            opt.step()
        return step

    # Interleaved rounds, the best median of each: the machine's noise hits both alike.
    plain_step, ddp_step = stepper(make()), stepper(DDP(make()))
    plains, ddps = [], []
    for _ in range(3):
        plains.append(_time(plain_step, 2 * iters, sync))
        ddps.append(_time(ddp_step, 2 * iters, sync))
    plain, ddp = min(plains), min(ddps)
    if rank == 0:
        out_q.put((rows, lat, plain, ddp))
    dist.barrier()
    dist.destroy_process_group()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes-mib", type=float, nargs="+", default=[1, 16, 64])
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--latency-iters", type=int, default=300)
    args = ap.parse_args()
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    init = os.path.join(tempfile.mkdtemp(), "init")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(r, 2, init, args.sizes_mib, args.iters,
                                                 args.latency_iters, q))
             for r in range(2)]
    for p in procs:
        p.start()
    rows, lat, plain, ddp = q.get(timeout=1800)
    for p in procs:
        p.join()
    print(f"{'op':24s} {'MiB':>6s} {'gloo cpu GB/s':>14s} {'ocl_gloo GB/s':>14s} {'ratio':>6s}")
    for op, mib, tc, to in rows:
        b = mib * 2**20
        print(f"{op:24s} {mib:6.1f} {b / tc / 1e9:14.3f} {b / to / 1e9:14.3f} {tc / to:6.2f}")
    print(f"all_reduce 4 KiB latency: gloo cpu {lat['cpu'] * 1e6:.0f} us, ocl_gloo "
          f"{lat['ocl'] * 1e6:.0f} us, ratio {lat['cpu'] / lat['ocl']:.2f}")
    print(f"DDP step (2 ranks) {ddp * 1e3:.2f} ms vs the same step without DDP "
          f"{plain * 1e3:.2f} ms: overhead {(ddp / plain - 1) * 100:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
