"""Dense, grouped and depthwise conv2d, each pass on its own: forward, input gradient and weight
gradient of ours against CPU PyTorch on the same shapes, and our raw copy of the same bytes.

    python benchmarks/conv_passes.py [--reps 15] [--rounds 3] [--layers REGEX] [--best]

Per layer and pass: CPU PyTorch's median ms (a child process without torch-ocl, asked for one
figure at a time, interleaved with ours), ours, the ratio CPU / ours (target >= 0.5), and
"copy": our `copy_` of as many bytes as the pass must read and write at least (forward: input +
output; input gradient: grad_output + grad_input; weight gradient: input + grad_output), so
ours / copy says how far a pass is from the device's bandwidth. On a shared machine the figures
are noisy: compare the ratios within one run; --best takes each side's fastest call instead
of medians (the figure least moved by other processes taking a core for a while);
--interleave measures CPU PyTorch in this process instead, one CPU call and one of ours in
turn, so that both sides see the same moments of a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import torch
from _timing import median_time, rep_times  # benchmarks/_timing.py, beside this script

CHILD = "--cpu-server" in sys.argv
if not CHILD:
    import torch_ocl  # noqa: F401  (registers the device)

# (name, batch, in channels, out channels, size, groups, stride, padding); the first two are
# benchmarks/gemm.py's dense rows (the example CNN's second layer, unpadded, and a ResNet layer).
LAYERS = [
    ("cnn conv2 32->64 3x3 26x26 b64", 64, 32, 64, 26, 1, 1, 0),
    ("resnet 64->64 3x3 56x56 b8", 8, 64, 64, 56, 1, 1, 1),
    ("depthwise 64 3x3 28x28 b16", 16, 64, 64, 28, 64, 1, 1),
    ("grouped 64->64 g4 3x3 28x28 b16", 16, 64, 64, 28, 4, 1, 1),
    ("depthwise 128 3x3 56x56 b8", 8, 128, 128, 56, 128, 1, 1),
    ("depthwise 64 3x3 s2 56x56 b16", 16, 64, 64, 56, 64, 2, 1),
    ("grouped 128->128 g8 3x3 28x28 b8", 8, 128, 128, 28, 8, 1, 1),
    ("grouped 64->128 g2 3x3 28x28 b16", 16, 64, 128, 28, 2, 1, 1),
]
PASSES = ["fwd", "grad_input", "grad_weight"]


def make(where, nb, cin, cout, hw, groups, stride, pad):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(nb, cin, hw, hw, generator=g).to(where)
    w = (torch.randn(cout, cin // groups, 3, 3, generator=g) * 0.1).to(where)
    y = torch.nn.functional.conv2d(x, w, stride=stride, padding=pad, groups=groups)
    go = torch.randn(y.shape, generator=g).to(where)
    return x, w, go


def pass_fn(kind, x, w, go, groups, stride, pad):
    if kind == "fwd":
        return lambda: torch.nn.functional.conv2d(x, w, stride=stride, padding=pad, groups=groups)
    mask = [kind == "grad_input", kind == "grad_weight", False]
    return lambda: torch.ops.aten.convolution_backward(
        go, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], groups, mask)


def timer(best):
    """Seconds per call of fn: the median of `reps` synchronised calls, or the fastest."""
    if best:
        return lambda fn, reps, sync: min(rep_times(fn, reps, sync))
    return median_time


def interleaved(cpu_fn, fn, reps, sync):
    """Seconds of `reps` calls of cpu_fn and of fn (synchronised), one of each in turn."""
    cpu_fn()
    fn()
    sync()
    c_t, o_t = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        cpu_fn()
        c_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        fn()
        sync()
        o_t.append(time.perf_counter() - t0)
    return c_t, o_t


def cpu_server(reps, best):
    for line in sys.stdin:
        name, kind = json.loads(line)
        _, *layer = next(lay for lay in LAYERS if lay[0] == name)
        x, w, go = make("cpu", *layer)
        fn = pass_fn(kind, x, w, go, *layer[4:])
        print(json.dumps(timer(best)(fn, reps, lambda: None) * 1e3), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layers", default=".", help="regex over layer names")
    ap.add_argument("--best", action="store_true", help="fastest call instead of medians")
    ap.add_argument("--interleave", action="store_true",
                    help="CPU PyTorch in this process, its calls alternating with ours")
    ap.add_argument("--cpu-server", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cpu_server:
        cpu_server(args.reps, args.best)
        return 0
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    cmd = [sys.executable, os.path.abspath(__file__), "--cpu-server", "--reps", str(args.reps)]
    child = subprocess.Popen(cmd + (["--best"] if args.best else []), env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    sync = torch.ocl.synchronize
    timed = timer(args.best)
    print(f"{'layer':<34}{'pass':<12}{'cpu ms':>8}{'ocl ms':>8}{'cpu/ocl':>8}{'copy ms':>8}"
          f"{'ocl/copy':>9}")
    for name, *layer in LAYERS:
        if not re.search(args.layers, name):
            continue
        x, w, go = make("ocl", *layer)
        for kind in PASSES:
            fn = pass_fn(kind, x, w, go, *layer[4:])
            a, b = (x, go) if kind != "grad_input" else (go, x)
            src = torch.empty(a.numel() + b.numel(), device="ocl")
            dst = torch.empty_like(src)
            # The bytes a pass must move at least: read one tensor, write the other (or, for
            # the weight gradient, read both): a copy of both tensors' elements reads and writes
            # twice that, so half of its time.
            cpu_r, ours_r, copy_r = [], [], []
            cpu_fn = pass_fn(kind, *make("cpu", *layer), *layer[4:]) if args.interleave else None
            for _ in range(args.rounds):
                if args.interleave:
                    c_t, o_t = interleaved(cpu_fn, fn, args.reps, sync)
                    pick = min if args.best else statistics.median
                    cpu_r.append(pick(c_t) * 1e3)
                    ours_r.append(pick(o_t) * 1e3)
                else:
                    child.stdin.write(json.dumps([name, kind]) + "\n")
                    child.stdin.flush()
                    cpu_r.append(json.loads(child.stdout.readline()))
                    time.sleep(0.2)
                    ours_r.append(timed(fn, args.reps, sync) * 1e3)
                copy_r.append(timed(lambda: dst.copy_(src), args.reps, sync) * 1e3 / 2)
                time.sleep(0.2)
            c, o, cp = (statistics.median(r) for r in (cpu_r, ours_r, copy_r))
            print(f"{name:<34}{kind:<12}{c:>8.2f}{o:>8.2f}{c / o:>8.2f}{cp:>8.2f}{o / cp:>9.1f}"
                  "  (per round " + " ".join(f"{a_ / b_:.2f}" for a_, b_ in zip(cpu_r, ours_r))
                  + ")", flush=True)
    child.stdin.close()
    child.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
