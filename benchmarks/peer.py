"""Peer comparison: MLP and CNN inference on ocl (ours), on CPU PyTorch and on pytorch_dlprim (the
OpenCL peer, https://github.com/artyom-beilis/pytorch_dlprim) on the same OpenCL device.

    python benchmarks/peer.py [--dlprim-lib PATH] [--reps 9] [--iters 20] [--rounds 2]
                              [--json out.json]

Models (issue 10's table), inference in eval mode under no_grad, batch 64:
  mlp  Linear 784-512-512-10 with ReLU;
  cnn  the peer's own mnist.py Net: conv 1->32 3x3 (no bias) + BatchNorm + ReLU + max-pool 2,
       conv 32->64 3x3, max-pool 2, ReLU, Linear 1600->128, ReLU, Linear 128->10.
Every figure is the median over --reps repetitions of the mean time of --iters forward passes,
each repetition finished with a device synchronize before the clock stops; --rounds rounds of
(ours, CPU, peer) run one after another and each backend keeps its best round.

Both backends claim PyTorch's PrivateUse1 device as "ocl", so they cannot share a process: ours
runs here, CPU PyTorch and the peer each run in a child process of this run (the CPU child without
torch-ocl loaded, whose GEMM threads would otherwise compete with CPU PyTorch's OpenMP threads;
the peer child with TORCH_DEVICE_BACKEND_AUTOLOAD=0 and the same POCL_AFFINITY that our runtime
sets). PATH is the peer's built `pt_ocl*.so` or the folder that holds its `pytorch_ocl/` package
(`<build>/pytorch_ocl/pt_ocl.so` from its CMake build). Without --dlprim-lib the peer is skipped.
The same seeded weights and inputs go to every backend; the result's largest difference from CPU
is printed as a check. On a shared machine the figures are noisy: compare ratios within one run.
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
import torch.nn as nn
import torch.nn.functional as F

MODELS = ("mlp", "cnn")
BATCH = 64


class PeerMnistNet(nn.Module):
    """pytorch_dlprim's mnist.py Net (use_bn=True, use_gp=False)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=0, bias=False)
        self.bn = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=0)
        self.fc1 = nn.Linear(5 * 5 * 64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu_(self.bn(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def build(name: str) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        x = torch.randn(BATCH, 784)
    else:
        model = PeerMnistNet()
        with torch.no_grad():  # non-trivial running statistics, so eval batch norm does work
            model.bn.running_mean.uniform_(-0.5, 0.5)
            model.bn.running_var.uniform_(0.5, 2.0)
        x = torch.randn(BATCH, 1, 28, 28)
    return model.eval(), x


def measure(device: str, sync, reps: int, iters: int, models) -> dict:
    out = {}
    for name in models:
        model, x = build(name)
        ref = model(x).detach()
        model, x = model.to(device), x.to(device)
        with torch.no_grad():
            for _ in range(3):  # compiles, caches
                y = model(x)
            sync()
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                for _ in range(iters):
                    y = model(x)
                sync()
                times.append((time.perf_counter() - t0) / iters)
        out[name] = {"median_s": statistics.median(times), "min_s": min(times),
                     "max_abs_diff_vs_cpu": float((y.cpu() - ref).abs().max())}
    return out


def child_main(args) -> int:
    if args.role == "cpu":
        res = measure("cpu", lambda: None, args.reps, args.iters, args.models)
        res["_info"] = {"threads": torch.get_num_threads()}
    else:
        path = os.path.abspath(args.dlprim_lib)
        if os.path.isfile(path):  # .../pytorch_ocl/pt_ocl*.so -> import the package beside it
            path = os.path.dirname(os.path.dirname(path))
        sys.path.insert(0, path)
        import pytorch_ocl  # noqa: F401  (pytorch_dlprim; registers "ocl")

        res = measure("ocl", lambda: torch.ocl.synchronize(), args.reps, args.iters, args.models)
        res["_info"] = {"module": os.path.dirname(pytorch_ocl.__file__)}
    print("@@RESULT@@" + json.dumps(res))
    return 0


def run_child(role: str, args, env_extra: dict) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--role", role, "--reps", str(args.reps),
           "--iters", str(args.iters), "--models", *args.models]
    if args.dlprim_lib:
        cmd += ["--dlprim-lib", args.dlprim_lib]
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", **env_extra)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    for line in p.stdout.splitlines()[::-1]:
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-5:])
    return {"error": f"exit {p.returncode}: {tail}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dlprim-lib", metavar="PATH", help="pytorch_dlprim's pt_ocl .so or its folder")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of (ours, CPU, peer)")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", help="write the results here as JSON")
    ap.add_argument("--role", choices=("cpu", "peer"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role:
        return child_main(args)

    import torch_ocl  # noqa: F401  (ours; registers "ocl")

    props = torch.ocl.get_device_properties(0)
    res: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "torch": torch.__version__, "batch": BATCH, "reps": args.reps, "iters": args.iters,
        "load_average": os.getloadavg()[0],
    }
    # Rounds of (ours, CPU, peer), each backend keeping its best round: a load spike from other
    # work on the machine then hurts no backend more than the others.
    rounds: dict = {"ocl": [], "cpu": [], "peer": []}
    for _ in range(args.rounds):
        rounds["ocl"].append(measure("ocl", lambda: torch.ocl.synchronize(), args.reps,
                                     args.iters, args.models))
        rounds["cpu"].append(run_child("cpu", args, {}))
        if args.dlprim_lib:
            rounds["peer"].append(run_child(
                "peer", args, {"POCL_AFFINITY": os.environ.get("POCL_AFFINITY", "1")}))
    for c, rs in rounds.items():
        if not rs:
            continue
        ok = [r for r in rs if "error" not in r]
        if not ok:
            res[c] = rs[0]
            continue
        res[c] = {m: min((r[m] for r in ok), key=lambda x: x["median_s"]) for m in args.models}
        res[c]["_rounds"] = rs

    print(f"peer comparison, {res['date']}, {res['device']}, torch {res['torch']}")
    print(f"batch {BATCH}, inference, median of {args.reps} x {args.iters} forwards, best of "
          f"{args.rounds} rounds (load average {res['load_average']:.1f} on {os.cpu_count()} "
          f"cores at the start)\n")
    cols = ["ocl", "cpu"] + (["peer"] if args.dlprim_lib else [])
    names = {"ocl": "ocl (ours)", "cpu": "CPU PyTorch", "peer": "pytorch_dlprim"}
    for c in cols:
        if "error" in res[c]:
            print(f"{names[c]} failed: {res[c]['error']}\n")
    print(f"{'model':<6}" + "".join(f"{names[c] + ' ms':>20}" for c in cols)
          + f"{'ours/CPU':>10}" + (f"{'peer/ours':>11}" if "peer" in cols else "")
          + "   max |diff| vs CPU (ours" + (", peer)" if "peer" in cols else ")"))
    for m in args.models:
        cell = {c: res[c].get(m) for c in cols}
        line = f"{m:<6}"
        for c in cols:
            line += f"{cell[c]['median_s'] * 1e3:>20.3f}" if cell[c] else f"{'-':>20}"
        o, cpu = cell["ocl"], cell["cpu"]
        line += f"{cpu['median_s'] / o['median_s']:>9.2f}x" if cpu else f"{'-':>10}"
        if "peer" in cols:
            p = cell["peer"]
            line += f"{p['median_s'] / o['median_s']:>10.2f}x" if p else f"{'-':>11}"
        diffs = [f"{cell[c]['max_abs_diff_vs_cpu']:.1e}" for c in cols if c != "cpu" and cell[c]]
        print(line + "   " + ", ".join(diffs))
    print("\nfastest repetition (ms; steadier than the median on a busy machine):")
    for m in args.models:
        cell = {c: res[c].get(m) for c in cols}
        line = f"{m:<6}" + "".join(f"{cell[c]['min_s'] * 1e3:>20.3f}" if cell[c] else f"{'-':>20}"
                                   for c in cols)
        if cell["cpu"]:
            line += f"{cell['cpu']['min_s'] / cell['ocl']['min_s']:>9.2f}x"
        if "peer" in cols and cell["peer"]:
            line += f"{cell['peer']['min_s'] / cell['ocl']['min_s']:>10.2f}x"
        print(line)
    print("\nours/CPU: CPU time / ours (above 1: ours faster); peer/ours: the peer's time / ours "
          "(above 1: ours faster)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
