"""AdamW step over 100 parameters of mixed sizes: kernel launches per step through the fused and
foreach paths (torch_ocl._C._kernel_launch_count), and time per step on ocl against CPU PyTorch
(medians of warm steps; the first step, with kernel compiles, is reported apart), and against a
raw OpenCL copy in the same run: AdamW reads 4 and writes 3 tensors of the parameters' size, as
much traffic as a copy of 3.5x their bytes ("of copy" = that copy's time / the step's time).
Targets: foreach faster than the for-loop (one launch per op and tensor), fused faster than
foreach. Prints JSON, then a short table.

    .venv/bin/python benchmarks/optim.py [--steps 20] [--params 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

import torch_ocl


def make_params(n: int, device: str) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    sizes = [(i % 7 + 1) * (i % 5 + 1) * 257 for i in range(n)]  # 257 .. 9k elements
    sizes[0] = 1 << 20  # one large (embedding-like) parameter
    params = []
    for s in sizes:
        p = torch.randn(s, generator=g).to(device).requires_grad_()
        p.grad = torch.randn(s, generator=g).to(device)
        params.append(p)
    return params


def sync(device: str) -> None:
    if device == "ocl":
        torch.ocl.synchronize()


def run(device: str, path: str, n: int, steps: int) -> dict:
    params = make_params(n, device)
    kw = {"fused": True} if path == "fused" else {"foreach": path == "foreach"}
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw)
    t0 = time.perf_counter()
    opt.step()
    sync(device)
    first = time.perf_counter() - t0
    times, launches = [], []
    for _ in range(steps):
        before = torch_ocl._C._kernel_launch_count()
        t0 = time.perf_counter()
        opt.step()
        sync(device)
        times.append(time.perf_counter() - t0)
        launches.append(torch_ocl._C._kernel_launch_count() - before)
    return {
        "device": device,
        "path": path,
        "params": n,
        "elements": sum(p.numel() for p in params),
        "first_step_s": first,
        "median_step_ms": statistics.median(times) * 1e3,
        "launches_per_step": launches[-1] if device == "ocl" else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--params", type=int, default=100)
    args = ap.parse_args()
    rows = []
    for device, path in (("ocl", "fused"), ("ocl", "foreach"), ("ocl", "for-loop"),
                         ("cpu", "fused"), ("cpu", "foreach")):
        rows.append(run(device, path, args.params, args.steps))
    cpu_best = min(r["median_step_ms"] for r in rows if r["device"] == "cpu")
    nbytes = int(rows[0]["elements"] * 4 * 3.5)
    raw_ms = statistics.median(torch_ocl._C._raw_transfer(0, "d2d", nbytes, 7)) * 1e3
    for r in rows:
        r["ratio_vs_best_cpu"] = r["median_step_ms"] / cpu_best
        r["of_raw_copy"] = raw_ms / r["median_step_ms"] if r["device"] == "ocl" else None
    ocl = {r["path"]: r["median_step_ms"] for r in rows if r["device"] == "ocl"}
    summary = {"raw_copy_ms": raw_ms, "for_loop_over_foreach": ocl["for-loop"] / ocl["foreach"],
               "foreach_over_fused": ocl["foreach"] / ocl["fused"]}
    print(json.dumps({"benchmark": "adamw_step", "device_name": torch.ocl.get_device_name(0),
                      "rows": rows, "summary": summary}, indent=2))
    print(f"\n{'device':6} {'path':9} {'launches':>8} {'first (s)':>9} {'median (ms)':>11} "
          f"{'x best CPU':>10} {'of copy':>8}")
    for r in rows:
        la = "-" if r["launches_per_step"] is None else str(r["launches_per_step"])
        oc = "-" if r["of_raw_copy"] is None else f"{r['of_raw_copy']:.2f}"
        print(f"{r['device']:6} {r['path']:9} {la:>8} {r['first_step_s']:9.2f} "
              f"{r['median_step_ms']:11.2f} {r['ratio_vs_best_cpu']:10.2f} {oc:>8}")
    print(f"raw copy of {nbytes >> 20} MiB: {raw_ms:.2f} ms; for-loop / foreach "
          f"{summary['for_loop_over_foreach']:.2f}x, foreach / fused "
          f"{summary['foreach_over_fused']:.2f}x (above 1: the second is faster)")


if __name__ == "__main__":
    main()
