"""Reduction benchmark: sum / softmax bandwidth as ratios of a raw OpenCL device-to-device copy
measured in the same process on the same device.

    python benchmarks/reduce.py [--device 0] [--mib 128] [--reps 7] [--json out.json]

A row's "GB/s" is the tensor's size in bytes over the median time (the bytes read; softmax also
writes as many, like the copy). The raw copy figure is _C._raw_transfer(dev, "d2d", nbytes) for
the same nbytes (benchmarks/runtime.py uses the same definition); ratio = raw_time / our_time
(1.0 = as fast as the raw copy; the target for the full sum is >= 0.6). CPU PyTorch on the same
machine is listed for information.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import time

import torch
import torch_ocl
from torch_ocl import _C


def median_time(fn, reps: int, sync) -> float:
    fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--mib", type=int, default=128, help="size of the full-sum input in MiB")
    ap.add_argument("--side", type=int, default=4096, help="side of the square matrix")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()

    dev = torch.device("ocl", args.device)
    props = torch.ocl.get_device_properties(args.device)
    sync = lambda: torch.ocl.synchronize(args.device)  # noqa: E731
    results: dict = {
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "reps": args.reps,
        "rows": [],
    }

    def raw_copy(nbytes: int) -> float:
        return statistics.median(_C._raw_transfer(args.device, "d2d", nbytes, args.reps))

    def row(name: str, nbytes: int, fn, cpu_fn, target: str):
        ours = median_time(fn, args.reps, sync)
        ref = raw_copy(nbytes)
        cpu = median_time(cpu_fn, args.reps, lambda: None)
        gbps = lambda t: nbytes / t / 1e9  # noqa: E731
        results["rows"].append({"name": name, "bytes": nbytes, "ours_s": ours, "raw_copy_s": ref,
                                "cpu_torch_s": cpu, "ratio": ref / ours, "target": target,
                                "ours_gbps": gbps(ours), "raw_gbps": gbps(ref),
                                "cpu_gbps": gbps(cpu)})

    n = (args.mib << 20) // 4
    host = torch.randn(n)
    x = host.to(dev)
    row(f"sum, {n >> 20}M fp32", n * 4, lambda: x.sum(), lambda: host.sum(), ">= 0.6")
    del x

    s = args.side
    hm = torch.randn(s, s)
    m = hm.to(dev)
    nb = s * s * 4
    row(f"sum(dim=-1), {s}x{s}", nb, lambda: m.sum(-1), lambda: hm.sum(-1), "(info)")
    row(f"sum(dim=0), {s}x{s}", nb, lambda: m.sum(0), lambda: hm.sum(0), "(info)")
    row(f"softmax(dim=-1), {s}x{s}", nb, lambda: m.softmax(-1), lambda: hm.softmax(-1), "(info)")
    row(f"amax(dim=-1), {s}x{s}", nb, lambda: m.amax(-1), lambda: hm.amax(-1), "(info)")
    row(f"var(dim=-1), {s}x{s}", nb, lambda: m.var(-1), lambda: hm.var(-1), "(info)")

    print(f"torch-ocl reduction benchmark on ocl:{args.device}: {results['device']}")
    print(f"{results['date']}, median of {args.reps}\n")
    print(f"{'':<28}{'ours GB/s':>11}{'raw copy':>10}{'ratio':>8}{'CPU torch':>11}  target")
    for r in results["rows"]:
        print(f"{r['name']:<28}{r['ours_gbps']:>11.2f}{r['raw_gbps']:>10.2f}{r['ratio']:>8.2f}"
              f"{r['cpu_gbps']:>11.2f}  {r['target']}")
    print()
    print(json.dumps(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
