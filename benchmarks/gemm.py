"""Matrix engine benchmark: fp32 GEMM of ours (the automatic provider, and each provider forced)
against raw CLBlast SGEMM on the same buffers and CPU PyTorch's own mm on the same host, plus
conv2d layers forward+backward against CPU PyTorch, all in one run.

    python benchmarks/gemm.py [--device 0] [--reps 7] [--quick] [--json out.json]

GEMM shapes (M x K @ K x N): 512^3, 1024^3, 2048^3, and the MLP's training shapes: 64x784 @
784x512 and 64x512 @ 512x512 (forward), 64x784 @ (512x784)^T (linear's x @ W^T), (64x512)^T @
64x784 (a weight gradient, K = 64) and 64x512 @ (784x512)^T (an input gradient through W^T
read transposed). GFLOP/s = 2*M*N*K / median time (each rep finished before timing stops); the
"best" columns use the fastest rep instead (what a quieter machine gives), and "b2b" 20 products
enqueued back to back before one synchronize (per-call overhead and wake-ups left out).
Ratios: ours / CPU PyTorch (target >= 0.7) and ours / raw CLBlast (target >= 1). Conv: a small CNN
layer (1->32 and 32->64 channels, 3x3, 28x28, batch 64), a ResNet-style 3x3 64->64 layer on
56x56 (batch 8), a grouped (4 groups), a depthwise and a stride-2 transposed layer, forward +
backward (input and weight gradients) time, ratio = CPU time / ours
(target >= 0.5). CPU PyTorch runs in a child process without torch-ocl loaded (our BLAS threads
keep spinning for a while after a call and would slow CPU PyTorch's OpenMP threads in the same
process), asked for one figure at a time: --rounds rounds of (CPU, ours) back to back per shape,
medians over rounds, and the ratio of each round printed too; --cpu-in-process measures it here
instead. On a machine shared with other work the
figures are noisy: compare the ratios within one run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import torch
from _timing import median_time, rep_times  # benchmarks/_timing.py, beside this script
if "--cpu-only" not in sys.argv:  # the CPU child runs without torch-ocl (and its threads)
    import torch_ocl  # noqa: F401  (registers the device)
    from torch_ocl import _C

PROVIDERS = ["host_blas", "cpu_tile", "clblast", "tiled"]


# (M, K, N, layout): layout "nn" is A (M x K) @ B (K x N); "nt" reads B as the transpose of a
# row-major N x K matrix, "tn" reads A as the transpose of a row-major K x M one.
BIG = [(512, 512, 512, "nn"), (1024, 1024, 1024, "nn")]
TRAIN = [(64, 784, 512, "nn"), (64, 512, 512, "nn"), (64, 784, 512, "nt"), (512, 64, 784, "tn"),
         (64, 512, 784, "nt")]


def shape_name(m, k, n, layout):
    a = f"({k}x{m})^T" if layout[0] == "t" else f"{m}x{k}"
    b = f"({n}x{k})^T" if layout[1] == "t" else f"{k}x{n}"
    return f"{a} @ {b}"


def operands(m, k, n, layout, g):
    a = torch.randn(k, m, generator=g).t() if layout[0] == "t" else torch.randn(m, k, generator=g)
    b = torch.randn(n, k, generator=g).t() if layout[1] == "t" else torch.randn(k, n, generator=g)
    return a, b


def on_device(t, dev):
    """t's copy on dev with the same (transposed) layout."""
    if t.is_contiguous():
        return t.to(dev)
    return t.t().contiguous().to(dev).t()


def cpu_figures(reps, shapes):
    """CPU PyTorch's mm GFLOP/s per shape and conv2d times, measured in this process."""
    g = torch.Generator().manual_seed(0)
    out = {"gemm": {}, "conv": {}}
    for m, k, n, lay in shapes:
        a, b = operands(m, k, n, lay, g)
        c = torch.empty(m, n)
        out["gemm"][f"{m}x{k}x{n}{lay}"] = 2.0 * m * n * k / median_time(
            lambda: torch.mm(a, b, out=c), reps, lambda: None) / 1e9
    for name, *layer in CONV_LAYERS:
        out["conv"][name] = conv_times("cpu", *layer[:4], reps, lambda: None, *layer[4:])
    return out


def cpu_figures_subprocess(reps, shapes):
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    cmd = [sys.executable, os.path.abspath(__file__), "--cpu-only", "--reps", str(reps),
           "--shapes", json.dumps(shapes)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


class CpuChild:
    """CPU PyTorch in a child process without torch-ocl, asked for one figure at a time, so that
    its measurements interleave with ours (a shared machine's load then hits both alike)."""

    def __init__(self, reps):
        env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--cpu-server",
                                   "--reps", str(reps)], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def ask(self, what):
        self.p.stdin.write(json.dumps(what) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def cpu_server(reps):
    g = torch.Generator().manual_seed(0)
    cache = {}
    for line in sys.stdin:
        q = json.loads(line)
        if q["kind"] == "gemm":
            m, k, n, lay = q["shape"]
            if (m, k, n, lay) not in cache:
                cache[(m, k, n, lay)] = (*operands(m, k, n, lay, g), torch.empty(m, n))
            a, b, c = cache[(m, k, n, lay)]
            ts = rep_times(lambda: torch.mm(a, b, out=c), reps, lambda: None)
            r = [2.0 * m * n * k / statistics.median(ts) / 1e9, 2.0 * m * n * k / min(ts) / 1e9]
        else:
            name, *layer = next(x for x in CONV_LAYERS if x[0] == q["layer"])
            r = conv_times("cpu", *layer[:4], reps, lambda: None, *layer[4:])
        print(json.dumps(r), flush=True)


# Seconds to wait between CPU PyTorch's figure and ours: both sides' BLAS/OpenMP threads keep
# spinning for a while after a call and would slow the other side's next one.
SETTLE_S = 0.2
# Products per back-to-back batch (the "b2b" column).
B2B_CALLS = 20


def gemm_rows(dev, sync, reps, shapes, providers, cpu, rounds=1):
    rows = []
    g = torch.Generator().manual_seed(0)
    for m, k, n, lay in shapes:
        a_c, b_c = operands(m, k, n, lay, g)
        a, b, c = on_device(a_c, dev), on_device(b_c, dev), torch.empty(m, n, device=dev)
        flops = 2.0 * m * n * k
        row = {"shape": shape_name(m, k, n, lay)}
        # Raw CLBlast takes row-major operands: the same shape, not transposed.
        a_r, b_r = a_c.contiguous().to(dev), b_c.contiguous().to(dev)
        row["raw_clblast_gflops"] = flops / statistics.median(_C._raw_sgemm(a_r, b_r, c, reps)) / 1e9
        _C._set_gemm_provider("auto")
        # Rounds of (CPU PyTorch, then ours) back to back; the figures are medians over rounds.
        cpu_r, ours_r, cpu_best, ours_best = [], [], [], []
        for _ in range(rounds):
            if isinstance(cpu, CpuChild):
                med, best = cpu.ask({"kind": "gemm", "shape": [m, k, n, lay]})
                time.sleep(SETTLE_S)
            else:
                med = best = cpu["gemm"][f"{m}x{k}x{n}{lay}"]
            cpu_r.append(med)
            cpu_best.append(best)
            ts = rep_times(lambda: torch.mm(a, b, out=c), reps, sync)
            ours_r.append(flops / statistics.median(ts) / 1e9)
            ours_best.append(flops / min(ts) / 1e9)
            time.sleep(SETTLE_S if isinstance(cpu, CpuChild) else 0)
        # 20 products enqueued back to back, one synchronize: the per-call cost without the
        # wake-up and wait of each synchronised call (what a model step's GEMMs see).
        b2b = []
        for _ in range(max(3, rounds)):
            t0 = time.perf_counter()
            for _ in range(B2B_CALLS):
                torch.mm(a, b, out=c)
            sync()
            b2b.append((time.perf_counter() - t0) / B2B_CALLS)
        row["ours_b2b_gflops"] = flops / statistics.median(b2b) / 1e9
        row["cpu_torch_gflops"] = statistics.median(cpu_r)
        row["ours_gflops"] = statistics.median(ours_r)
        row["cpu_torch_best_gflops"] = max(cpu_best)
        row["ours_best_gflops"] = max(ours_best)
        row["ratio_vs_cpu_per_round"] = [o / c_ for o, c_ in zip(ours_r, cpu_r)]
        row["ratio_best"] = row["ours_best_gflops"] / row["cpu_torch_best_gflops"]
        row["ours_provider"] = _C._last_gemm_provider()
        for p in providers:
            _C._set_gemm_provider(p)
            torch.mm(a, b, out=c)
            if _C._last_gemm_provider() != p:
                continue
            row[f"{p}_gflops"] = flops / median_time(lambda: torch.mm(a, b, out=c), reps,
                                                     sync) / 1e9
        _C._set_gemm_provider("auto")
        row["ratio_vs_cpu"] = row["ours_gflops"] / row["cpu_torch_gflops"]
        row["ratio_vs_clblast"] = row["ours_gflops"] / row["raw_clblast_gflops"]
        rows.append(row)
    return rows


# (name, batch, in channels, out channels, size, groups, transposed)
CONV_LAYERS = [
    ("cnn conv1 1->32 3x3 28x28 b64", 64, 1, 32, 28, 1, False),
    ("cnn conv2 32->64 3x3 26x26 b64", 64, 32, 64, 26, 1, False),
    ("resnet 64->64 3x3 56x56 b8", 8, 64, 64, 56, 1, False),
    ("grouped 64->64 g4 3x3 28x28 b16", 16, 64, 64, 28, 4, False),
    ("depthwise 64 3x3 28x28 b16", 16, 64, 64, 28, 64, False),
    ("transposed 64->32 s2 14x14 b16", 16, 64, 32, 14, 1, True),
]


def conv_times(where, nb, cin, cout, hw, reps, sync, groups=1, transposed=False):
    """(forward ms, forward+backward ms) of a 3x3 conv2d (or a stride-2 conv_transpose2d) on
    `where`."""
    g = torch.Generator().manual_seed(0)
    pad = 1 if cin == cout or groups > 1 else 0
    x = torch.randn(nb, cin, hw, hw, generator=g).to(where).requires_grad_(True)
    if transposed:
        w = (torch.randn(cin, cout // groups, 3, 3, generator=g) * 0.1).to(where)
    else:
        w = (torch.randn(cout, cin // groups, 3, 3, generator=g) * 0.1).to(where)
    w.requires_grad_(True)

    def conv():
        if transposed:
            return torch.nn.functional.conv_transpose2d(x, w, stride=2, padding=1,
                                                        output_padding=1, groups=groups)
        return torch.nn.functional.conv2d(x, w, padding=pad, groups=groups)

    go = torch.ones_like(conv())

    def fwd():
        conv()

    def fwd_bwd():
        out = conv()
        torch.autograd.grad(out, (x, w), go)

    return median_time(fwd, reps, sync) * 1e3, median_time(fwd_bwd, reps, sync) * 1e3


def conv_rows(dev, sync, reps, cpu, rounds=1):
    rows = []
    for name, *layer in CONV_LAYERS:
        row = {"layer": name}
        cpu_r, ours_r = [], []
        for _ in range(rounds):
            if isinstance(cpu, CpuChild):
                cpu_r.append(cpu.ask({"kind": "conv", "layer": name}))
                time.sleep(SETTLE_S)
            else:
                cpu_r.append(cpu["conv"][name])
            ours_r.append(conv_times(dev, *layer[:4], reps, sync, *layer[4:]))
            time.sleep(SETTLE_S if isinstance(cpu, CpuChild) else 0)
        row["cpu_fwd_ms"] = statistics.median(r[0] for r in cpu_r)
        row["cpu_fwd_bwd_ms"] = statistics.median(r[1] for r in cpu_r)
        row["ocl_fwd_ms"] = statistics.median(r[0] for r in ours_r)
        row["ocl_fwd_bwd_ms"] = statistics.median(r[1] for r in ours_r)
        row["ratio_fwd_bwd_per_round"] = [c_[1] / o[1] for c_, o in zip(cpu_r, ours_r)]
        row["ratio_fwd"] = row["cpu_fwd_ms"] / row["ocl_fwd_ms"]
        row["ratio_fwd_bwd"] = row["cpu_fwd_bwd_ms"] / row["ocl_fwd_bwd_ms"]
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="skip 2048 and the forced providers")
    ap.add_argument("--json", help="write the results here as JSON")
    ap.add_argument("--cpu-in-process", action="store_true",
                    help="measure CPU PyTorch in this process, not in a child")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of (CPU PyTorch, ours) back to back per shape; medians over "
                         "rounds (default 3)")
    ap.add_argument("--train-only", action="store_true",
                    help="only the MLP's training GEMM shapes")
    ap.add_argument("--no-conv", action="store_true", help="skip the convolutions")
    ap.add_argument("--conv-only", action="store_true", help="skip the GEMMs")
    ap.add_argument("--cpu-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cpu-server", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--shapes", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cpu_server:  # the child: CPU PyTorch alone, one figure per request line
        cpu_server(args.reps)
        return 0
    if args.cpu_only:  # the child: CPU PyTorch alone, JSON on stdout
        print(json.dumps(cpu_figures(args.reps, [tuple(s) for s in json.loads(args.shapes)])))
        return 0
    dev = torch.device("ocl", args.device)
    props = torch.ocl.get_device_properties(args.device)
    sync = lambda: torch.ocl.synchronize(args.device)  # noqa: E731
    shapes = ([] if args.train_only else list(BIG)) + TRAIN
    if not args.quick and not args.train_only:
        shapes.insert(2, (2048, 2048, 2048, "nn"))
    providers = [] if args.quick else PROVIDERS
    cpu = cpu_figures(args.reps, shapes) if args.cpu_in_process else CpuChild(args.reps)
    rounds = args.rounds if isinstance(cpu, CpuChild) else 1
    res = {
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch_threads": torch.get_num_threads(),
        "reps": args.reps,
        "gemm_providers": _C._gemm_providers(args.device),
        "cpu_torch_measured": "in this process" if args.cpu_in_process
        else f"in a child process, {rounds} rounds interleaved with ours",
        "gemm": [] if args.conv_only else gemm_rows(dev, sync, args.reps, shapes, providers, cpu,
                                                    rounds),
        "conv": [] if args.no_conv else conv_rows(dev, sync, args.reps, cpu, rounds),
    }
    if isinstance(cpu, CpuChild):
        cpu.close()
    print(f"torch-ocl matrix engine on ocl:{args.device}: {res['device']}")
    print(f"{res['date']}, median of {args.reps}; providers {res['gemm_providers']}; CPU PyTorch "
          f"on {res['torch_threads']} threads, {res['cpu_torch_measured']}\n")
    cols = [p for p in PROVIDERS if any(f"{p}_gflops" in r for r in res["gemm"])]
    print(f"{'fp32 GEMM GFLOP/s':<30}{'ours':>7}{'b2b':>7}{'cpu mm':>7}{'CLBlast':>8}"
          + "".join(f"{p:>10}" for p in cols) + f"{'/cpu':>6}{'best':>6}{'/cpu':>6}"
          f"{'/clblast':>9}  (ours = provider)")
    for r in res["gemm"]:
        print(f"{r['shape']:<30}{r['ours_gflops']:>7.1f}{r['ours_b2b_gflops']:>7.1f}"
              f"{r['cpu_torch_gflops']:>7.1f}"
              f"{r['raw_clblast_gflops']:>8.1f}"
              + "".join(f"{r.get(p + '_gflops', float('nan')):>10.1f}" for p in cols)
              + f"{r['ratio_vs_cpu']:>6.2f}{r['ours_best_gflops']:>6.0f}{r['ratio_best']:>6.2f}"
              f"{r['ratio_vs_clblast']:>9.2f}  ({r['ours_provider']}; "
              + "/cpu per round " + " ".join(f"{x:.2f}" for x in r["ratio_vs_cpu_per_round"])
              + ")")
    print("best: ours at its fastest rep, and its ratio to CPU PyTorch's fastest rep; b2b: ours "
          f"with {B2B_CALLS} products enqueued back to back and one synchronize")
    print("targets: /cpu >= 0.7, /clblast >= 1\n")
    print(f"{'conv2d (ms)':<34}{'cpu fwd':>9}{'ocl fwd':>9}{'ratio':>7}{'cpu f+b':>9}"
          f"{'ocl f+b':>9}{'ratio':>7}")
    for r in res["conv"]:
        print(f"{r['layer']:<34}{r['cpu_fwd_ms']:>9.2f}{r['ocl_fwd_ms']:>9.2f}{r['ratio_fwd']:>7.2f}"
              f"{r['cpu_fwd_bwd_ms']:>9.2f}{r['ocl_fwd_bwd_ms']:>9.2f}{r['ratio_fwd_bwd']:>7.2f}"
              "  (per round " + " ".join(f"{x:.2f}" for x in r["ratio_fwd_bwd_per_round"]) + ")")
    print("target: ratio (cpu time / ours) >= 0.5")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
