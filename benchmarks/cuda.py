"""ocl (ours, through the vendor's OpenCL driver) against CUDA PyTorch on the same NVIDIA GPU, in
one process: bandwidth ops, fp32 GEMM, and the example models' training steps.

    python benchmarks/cuda.py [--device 0] [--reps 7] [--quick] [--json out.json]

Rows: a device-to-device copy_ and c = a + b (GB/s of bytes read plus written), softmax over rows
of 4096, fp32 mm at 4096 (TF32 off on CUDA, so both do fp32 arithmetic), and one training step of
examples/mlp.py, cnn.py and gpt.py at their full sizes. Every figure is the median of --reps
repetitions, each finished with a synchronize of its device; ratio = CUDA time / ours (1.0 = as
fast as CUDA PyTorch). Without a CUDA device (or without an ocl one) those columns say so and the
rest still runs, so the script can be tried on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def timed(fn, sync, reps: int) -> float:
    """Median seconds per call: the timer of `python -m torch_ocl bench`, so both report alike."""
    from torch_ocl.cli.bench import _time

    return _time(fn, sync, reps)


def op_cases(quick: bool):
    n = (1 << 22) if quick else (1 << 26)  # fp32 elements: 16 MiB or 256 MiB per tensor
    g = 1024 if quick else 4096
    rows = 512 if quick else 16384

    def copy(dev):
        a = torch.randn(n, device=dev)
        b = torch.empty_like(a)
        return (lambda: b.copy_(a)), 2 * 4 * n, "GB/s"

    def add(dev):
        a, b = torch.randn(n, device=dev), torch.randn(n, device=dev)
        c = torch.empty_like(a)
        return (lambda: torch.add(a, b, out=c)), 3 * 4 * n, "GB/s"

    def softmax(dev):
        x = torch.randn(rows, 4096, device=dev)
        return (lambda: torch.softmax(x, -1)), 2 * 4 * x.numel(), "GB/s"

    def mm(dev):
        a, b = torch.randn(g, g, device=dev), torch.randn(g, g, device=dev)
        return (lambda: torch.mm(a, b)), 2 * g ** 3, "GFLOP/s"

    return [("copy_ (d2d)", copy), ("add", add), ("softmax rows of 4096", softmax),
            (f"fp32 mm {g}", mm)]


def model_step(name: str, dev: str, small: bool, reps: int, sync) -> float:
    mod = __import__(f"examples.{name}", fromlist=["workload"])
    w = mod.workload(dev, seed=0, small=small)
    for _ in range(3):
        w.step()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(5):
            w.step()
        sync()
        times.append((time.perf_counter() - t0) / 5)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0, help="ocl device index")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    ap.add_argument("--models", nargs="*", default=["mlp", "cnn", "gpt"])
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()

    backends = {}
    try:
        import torch_ocl  # noqa: F401

        if torch.ocl.device_count() > args.device:
            backends["ocl"] = (f"ocl:{args.device}", lambda: torch.ocl.synchronize(args.device),
                               torch.ocl.get_device_name(args.device))
    except Exception as e:  # noqa: BLE001 (reported, the CUDA side still runs)
        print(f"ocl: not available ({e})")
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        backends["cuda"] = ("cuda:0", torch.cuda.synchronize, torch.cuda.get_device_name(0))
    else:
        print("cuda: not available (no CUDA device or a CPU build of torch)")
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "devices": {k: v[2] for k, v in backends.items()},
           "quick": args.quick, "rows": []}
    print(f"ocl vs CUDA PyTorch, {res['date']}, torch {res['torch']}: "
          + ", ".join(f"{k} = {v}" for k, v in res["devices"].items()))

    def add_row(name, unit, times, work=None):
        row = {"name": name, "unit": unit}
        for k, t in times.items():
            row[f"{k}_s"] = t
            if work is not None and t:
                row[f"{k}_rate"] = work / t / 1e9
        if times.get("ocl") and times.get("cuda"):
            row["ratio"] = times["cuda"] / times["ocl"]
        res["rows"].append(row)
        cells = []
        for k in ("ocl", "cuda"):
            t = times.get(k)
            if t is None:
                cells.append(f"{'-':>22}")
            elif work is not None:
                cells.append(f"{work / t / 1e9:>12.1f} {unit:<9}")
            else:
                cells.append(f"{t * 1e3:>12.3f} ms       ")
        ratio = f"{row['ratio']:8.2f}" if "ratio" in row else f"{'-':>8}"
        print(f"{name:<28}" + "".join(cells) + ratio, flush=True)

    print(f"{'':<28}{'ocl (ours)':>22}{'CUDA PyTorch':>22}{'ratio':>8}")
    for name, make in op_cases(args.quick):
        times, work, unit = {}, None, ""
        for k, (dev, sync, _) in backends.items():
            try:
                fn, work, unit = make(dev)
                times[k] = timed(fn, sync, args.reps)
                del fn
            except Exception as e:  # noqa: BLE001
                print(f"  {name} on {k} failed: {str(e).splitlines()[0][:200]}")
        add_row(name, unit, times, work)
    for m in args.models:
        times = {}
        for k, (dev, sync, _) in backends.items():
            try:
                times[k] = model_step(m, dev, args.quick, max(3, args.reps // 2), sync)
            except Exception as e:  # noqa: BLE001
                print(f"  {m} step on {k} failed: {str(e).splitlines()[0][:200]}")
        add_row(f"{m} training step", "ms", times)
    print("ratio: CUDA time / ours (1.0 = as fast as CUDA PyTorch on the same GPU)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
