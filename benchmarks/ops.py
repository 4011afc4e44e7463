"""Op benchmark: large elementwise ops as a fraction of raw device-to-device copy bandwidth, and
fp32 GEMM (torch.mm) against raw CLBlast SGEMM on the same buffers, all measured in one run.

    python benchmarks/ops.py [--device 0] [--numel 16777216] [--gemm 1024 2048] [--reps 7]
                             [--json out.json]

Byte accounting: a copy of B bytes reads B and writes B, so raw bandwidth = 2 * B / t_copy
(clEnqueueCopyBuffer, torch_ocl._C._raw_transfer "d2d"). A binary op over n float32 elements
reads 2 * 4n bytes and writes 4n; a unary op (gelu) reads 4n and writes 4n. ratio = our bytes per
second / raw copy bytes per second (target >= 0.7). GEMM: ratio = raw SGEMM time / torch.mm time
(target >= 0.9). Every figure is the median of --reps repetitions, each finished before timing
stops.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics

import torch
import torch_ocl  # noqa: F401  (registers the device)
from torch_ocl import _C
from _timing import median_time  # benchmarks/_timing.py, beside this script


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--numel", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--gemm", type=int, nargs="*", default=[1024, 2048])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()

    dev = torch.device("ocl", args.device)
    props = torch.ocl.get_device_properties(args.device)
    sync = lambda: torch.ocl.synchronize(args.device)  # noqa: E731
    n = args.numel
    nbytes = 4 * n
    results: dict = {
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "numel": n,
        "reps": args.reps,
        "elementwise": [],
        "gemm": [],
    }

    copy_s = statistics.median(_C._raw_transfer(args.device, "d2d", nbytes, args.reps))
    copy_bw = 2 * nbytes / copy_s
    results["raw_d2d_copy_s"] = copy_s
    results["raw_d2d_copy_gbps"] = copy_bw / 1e9
    # The same bytes moved by a plain OpenCL copy kernel: what a kernel can reach on this device.
    # On CPU drivers clEnqueueCopyBuffer is a memcpy that kernels cannot match, so both are shown.
    kcopy_s = statistics.median(_C._raw_transfer(args.device, "copy_kernel", nbytes, args.reps))
    kcopy_bw = 2 * nbytes / kcopy_s
    results["raw_copy_kernel_gbps"] = kcopy_bw / 1e9

    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, generator=g).to(dev)
    y = torch.rand(n, generator=g).to(dev)
    out = torch.empty(n, device=dev)
    cases = [
        ("add", lambda: torch.add(x, y, out=out), 3),
        ("mul", lambda: torch.mul(x, y, out=out), 3),
        ("gelu", lambda: torch.nn.functional.gelu(x, approximate="none"), 2),
        ("gelu tanh", lambda: torch.nn.functional.gelu(x, approximate="tanh"), 2),
        ("sigmoid", lambda: torch.sigmoid(x), 2),
        ("tanh", lambda: torch.tanh(x), 2),
        ("erf", lambda: torch.erf(x), 2),
        ("exp", lambda: torch.exp(x), 2),
        ("silu", lambda: torch.nn.functional.silu(x), 2),
        ("pow 2", lambda: torch.pow(x, 2), 2),
        ("pow 1.7", lambda: torch.pow(x, 1.7), 2),
    ]
    # The same ops in CPU PyTorch, as a fraction of CPU PyTorch's own copy: where that is low too
    # (gelu on a CPU), the op is compute-bound on this hardware whatever the implementation.
    xc, yc, outc = x.cpu(), y.cpu(), out.cpu()
    cpu_copy_bw = 2 * nbytes / median_time(lambda: outc.copy_(xc), args.reps, lambda: None)
    cpu_cases = {
        "add": lambda: torch.add(xc, yc, out=outc),
        "mul": lambda: torch.mul(xc, yc, out=outc),
        "gelu": lambda: torch.nn.functional.gelu(xc, approximate="none"),
        "gelu tanh": lambda: torch.nn.functional.gelu(xc, approximate="tanh"),
        "sigmoid": lambda: torch.sigmoid(xc),
        "tanh": lambda: torch.tanh(xc),
        "erf": lambda: torch.erf(xc),
        "exp": lambda: torch.exp(xc),
        "silu": lambda: torch.nn.functional.silu(xc),
        "pow 2": lambda: torch.pow(xc, 2),
        "pow 1.7": lambda: torch.pow(xc, 1.7),
    }
    for name, fn, touched in cases:
        t = median_time(fn, args.reps, sync)
        bw = touched * nbytes / t
        cpu_t = median_time(cpu_cases[name], args.reps, lambda: None)
        cpu_bw = touched * nbytes / cpu_t
        results["elementwise"].append(
            {"op": name, "ours_s": t, "ours_gbps": bw / 1e9, "ratio": bw / copy_bw,
             "ratio_vs_copy_kernel": bw / kcopy_bw, "cpu_torch_ratio_vs_cpu_copy":
             cpu_bw / cpu_copy_bw, "cpu_torch_s": cpu_t, "vs_cpu_torch": cpu_t / t,
             "target": ">= 0.7" if name in ("add", "mul") else ">= 1 x CPU"})
    del x, y, out, xc, yc, outc

    for size in args.gemm:
        a = torch.randn(size, size, generator=g).to(dev)
        b = torch.randn(size, size, generator=g).to(dev)
        c = torch.empty(size, size, device=dev)
        raw = statistics.median(_C._raw_sgemm(a, b, c, args.reps))
        ours = median_time(lambda: torch.mm(a, b, out=c), args.reps, sync)
        flops = 2.0 * size ** 3
        results["gemm"].append(
            {"size": size, "ours_s": ours, "raw_s": raw, "ours_gflops": flops / ours / 1e9,
             "raw_gflops": flops / raw / 1e9, "ratio": raw / ours, "target": ">= 0.9"})
        del a, b, c

    print(f"torch-ocl op benchmark on ocl:{args.device}: {results['device']}")
    print(f"{results['date']}, median of {args.reps}; raw d2d copy "
          f"{results['raw_d2d_copy_gbps']:.2f} GB/s, raw copy kernel "
          f"{results['raw_copy_kernel_gbps']:.2f} GB/s (read+write) on {nbytes >> 20} MiB\n")
    print(f"{'elementwise fp32, ' + str(n) + ' elements':<36}{'ms':>9}{'GB/s':>9}{'vs d2d':>8}"
          f"{'vs kern':>8}{'cpu ref':>8}{'x CPU':>7}  target")
    for r in results["elementwise"]:
        print(f"{r['op']:<36}{r['ours_s'] * 1e3:>9.2f}{r['ours_gbps']:>9.2f}{r['ratio']:>8.2f}"
              f"{r['ratio_vs_copy_kernel']:>8.2f}{r['cpu_torch_ratio_vs_cpu_copy']:>8.2f}"
              f"{r['vs_cpu_torch']:>7.2f}  {r['target']}")
    print("(cpu ref: the same op in CPU PyTorch against CPU PyTorch's own copy, this host;\n"
          " x CPU: CPU PyTorch's time for the op / ours, same run: above 1 we are faster)")
    print()
    print(f"{'fp32 GEMM (torch.mm vs CLBlast SGEMM)':<36}{'ours ms':>9}{'raw ms':>9}{'GFLOP/s':>9}{'ratio':>8}  target")
    for r in results["gemm"]:
        print(f"{str(r['size']) + ' x ' + str(r['size']):<36}{r['ours_s'] * 1e3:>9.1f}{r['raw_s'] * 1e3:>9.1f}"
              f"{r['ours_gflops']:>9.1f}{r['ratio']:>8.2f}  {r['target']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
