"""torch.compile on ocl against eager ocl: step time and kernel launches per step of the example
models, and cold vs warm compile time (a fresh process each, with empty and then warm caches:
Inductor's, our program cache's and PoCL's). Medians of warm steps; the compile (first call) is
reported apart. Prints JSON, then a short table.

Two compiled forms: "compiled" compiles the model's forward (so its backward; loss outside the
model, clipping and the optimizer stay eager), "step" compiles the whole training step
(``torch.compile(step)``: forward and loss, backward, clipping and the optimizer step, with
Dynamo's graph break at ``backward()``).

    .venv/bin/python benchmarks/compile.py [--models mlp,gpt] [--steps 10] [--small] [--no-cold]
                                           [--cpu]   # also Inductor's C++ backend on CPU tensors
                                           [--fused-mm MACS]  # also a step with small products
                                                              # lowered as fused reductions
                                           [--rounds N]  # interleaved repeats, best median
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import torch_ocl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def workload(name: str, small: bool, device: str = "ocl"):
    mod = importlib.import_module(f"examples.{name}")
    kw = {"small": small}
    if "dropout" in mod.workload.__code__.co_varnames:
        kw["dropout"] = 0.0  # dropout on: the same numbers, but eager and compiled draw differently
    return mod.workload(device, **kw)


def sync(device: str) -> None:
    if device == "ocl":
        torch.ocl.synchronize()


def compile_step(step):
    """torch.compile of a workload's whole step. Its batch iterator (a Python counter) stays
    outside the graphs: traced, the counter would be a constant and every step a recompile."""
    names = step.__code__.co_freevars
    if "next_batch" in names:
        cell = step.__closure__[names.index("next_batch")]
        cell.cell_contents = torch._dynamo.disable(cell.cell_contents)
    return torch.compile(step)


def measure(name: str, compiled, steps: int, small: bool, device: str = "ocl") -> dict:
    torch._dynamo.reset()
    w = workload(name, small, device)
    step = w.step
    if compiled == "step":
        step = compile_step(w.step)
    elif compiled:
        # torch.compile of the model's forward (and so its backward); the optimizer stays eager.
        # (nn.Module.compile() traced nothing in this PyTorch build.)
        w.model.forward = torch.compile(w.model.forward)
    t0 = time.perf_counter()
    step()
    sync(device)
    first = time.perf_counter() - t0
    step()  # a second warm-up: compiled steps may recompile once (e.g. optimizer state)
    sync(device)
    times, launches = [], []
    for _ in range(steps):
        n0 = torch_ocl._C._kernel_launch_count()
        t0 = time.perf_counter()
        step()
        sync(device)
        times.append(time.perf_counter() - t0)
        launches.append(torch_ocl._C._kernel_launch_count() - n0)
    return {
        "first_step_s": first,
        "step_ms": statistics.median(times) * 1e3,
        "launches_per_step": statistics.median(launches),
    }


def compile_time_in_fresh_process(name: str, small: bool, cache_dir: str) -> dict:
    code = (
        "import sys, time, torch, torch_ocl\n"
        f"sys.argv = ['x']; sys.path.insert(0, {ROOT!r})\n"
        "from benchmarks.compile import workload\n"
        f"w = workload({name!r}, {small!r})\n"
        "w.model.forward = torch.compile(w.model.forward)\n"
        "t0 = time.perf_counter(); w.step(); torch.ocl.synchronize()\n"
        "print('FIRST', time.perf_counter() - t0)\n"
        "from torch._dynamo.utils import counters\n"
        "print('HITS', counters['inductor']['fxgraph_cache_hit'])\n"
        "print('AOTHITS', counters['aot_autograd']['autograd_cache_hit'])\n"
        "s = torch_ocl._C.program_cache_stats(0)\n"
        "print('PROGRAMS', s['disk_hits'], s['compiles'], s['compile_seconds'])\n"
    )
    # Every cache in cache_dir: Inductor's, our program binaries, PoCL's (a cold process builds
    # everything; the warm one finds what the cold one left).
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache_dir,
           "TORCH_OCL_CACHE_DIR": os.path.join(cache_dir, "torch_ocl"),
           "POCL_CACHE_DIR": os.path.join(cache_dir, "pocl")}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("FIRST"):
            out["seconds"] = float(line.split()[1])
        if line.startswith("HITS"):
            out["fxgraph_cache_hits"] = int(line.split()[1])
        if line.startswith("AOTHITS"):
            out["aot_autograd_cache_hits"] = int(line.split()[1])
        if line.startswith("PROGRAMS"):  # our program cache: binaries loaded, built from source
            _, hits, builds, seconds = line.split()
            out["program_disk_hits"], out["program_builds"] = int(hits), int(builds)
            out["program_build_s"] = float(seconds)
    if "seconds" not in out:
        raise RuntimeError(r.stderr[-2000:])
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,gpt")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--no-cold", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="also torch.compile on CPU tensors")
    ap.add_argument("--fused-mm", type=int, default=None, metavar="MACS",
                    help="also the whole step with products up to MACS multiply-adds lowered "
                         "as fused reductions (config.small_mm_max_macs)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure every form this many times, interleaved; report the best")
    args = ap.parse_args()
    results = {"device": torch.ocl.get_device_name(0), "small": args.small, "models": {}}
    for name in args.models.split(","):
        r: dict = {}

        def best(key, *a):  # the lowest median over the rounds (others' load only adds time)
            m = measure(name, *a)
            if key not in r or m["step_ms"] < r[key]["step_ms"]:
                r[key] = {**m, "first_step_s": r.get(key, m)["first_step_s"]}

        for _ in range(args.rounds):  # interleaved: eager and compiled see the same load
            best("eager", False, args.steps, args.small)
            best("compiled", True, args.steps, args.small)
            best("step", "step", args.steps, args.small)
            if args.fused_mm is not None:
                from torch_ocl._inductor import config as ocl_config

                with ocl_config.patch(small_mm_max_macs=args.fused_mm):
                    best("step_fused_mm", "step", args.steps, args.small)
        if args.cpu:  # Inductor's C++ backend on CPU tensors, same cores
            r["cpu_compiled"] = measure(name, True, args.steps, args.small, "cpu")
        if not args.no_cold:
            with tempfile.TemporaryDirectory() as d:
                cold = compile_time_in_fresh_process(name, args.small, d)
                warm = compile_time_in_fresh_process(name, args.small, d)
                r["cold_compile_s"], r["warm_compile_s"] = cold["seconds"], warm["seconds"]
                r["warm_fxgraph_cache_hits"] = warm.get("fxgraph_cache_hits", 0)
                r["warm_aot_autograd_cache_hits"] = warm.get("aot_autograd_cache_hits", 0)
                r["cold_program_builds"] = cold.get("program_builds", 0)
                r["warm_program_disk_hits"] = warm.get("program_disk_hits", 0)
                r["warm_program_builds"] = warm.get("program_builds", 0)
        results["models"][name] = r
    print(json.dumps(results, indent=2))
    print(f"\n{results['device']} ({'small' if args.small else 'default'} models)")
    print(f"{'model':<8}{'eager ms':>10}{'compiled ms':>13}{'speedup':>9}"
          f"{'step ms':>9}{'speedup':>9}"
          f"{'launches e/c/s':>17}{'cold s':>8}{'warm s':>8}{'cpu-compiled ms':>17}")
    for name, r in results["models"].items():
        e, c, st = r["eager"], r["compiled"], r["step"]
        print(f"{name:<8}{e['step_ms']:>10.2f}{c['step_ms']:>13.2f}"
              f"{e['step_ms'] / c['step_ms']:>8.2f}x{st['step_ms']:>9.2f}"
              f"{e['step_ms'] / st['step_ms']:>8.2f}x"
              f"{e['launches_per_step']:>7.0f}/{c['launches_per_step']:.0f}"
              f"/{st['launches_per_step']:<5.0f}"
              f"{r.get('cold_compile_s', float('nan')):>8.1f}{r.get('warm_compile_s', float('nan')):>8.1f}"
              f"{r.get('cpu_compiled', {}).get('step_ms', float('nan')):>17.2f}")
        if "cold_compile_s" in r:
            print(f"{'':<8}warm/cold {r['warm_compile_s'] / r['cold_compile_s']:.0%}; warm process: "
                  f"{r['warm_fxgraph_cache_hits']} FX-graph and {r['warm_aot_autograd_cache_hits']} "
                  f"AOT-autograd cache hits, {r['warm_program_disk_hits']} programs from our "
                  f"disk cache, {r['warm_program_builds']} built from source "
                  f"(cold: {r['cold_program_builds']})")
        if "step_fused_mm" in r:
            f = r["step_fused_mm"]
            print(f"{'':<8}step with products <= {args.fused_mm} MACs fused: {f['step_ms']:.2f} ms "
                  f"({e['step_ms'] / f['step_ms']:.2f}x), {f['launches_per_step']:.0f} launches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
