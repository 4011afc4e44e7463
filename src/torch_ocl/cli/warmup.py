"""``python -m torch_ocl warmup``: compile a model's kernels ahead of time.

Runs one step of each model's workload (examples/<name>.py; small sizes by default, because
kernels are specialised on dtype, rank and contiguity, never on sizes) so that every kernel it
needs is compiled and lands in the on-disk caches (torch-ocl's, or the driver's own where it keeps
one, e.g. PoCL and NVIDIA). The first real step of a later process then starts fast.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Optional, Sequence

import torch

from torch_ocl import _C

from . import _models
from ._progress import Progress, fit


def _compiles(index: int) -> dict:
    s = _C.program_cache_stats(index)
    return {k: s[k] for k in ("compiles", "compile_seconds", "disk_hits", "memory_hits")}


def warm_matrix_engine(index: int) -> dict[str, Any]:
    """Compiles the matrix engine's kernels for every provider and dtype the device runs: which
    provider a product uses depends on its shape, so a small model step alone may miss some."""
    before, t0 = _compiles(index), time.perf_counter()
    dev = torch.device("ocl", index)
    dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
    if torch.ocl.get_device_properties(index).fp64:
        dtypes.append(torch.float64)
    forced = _C._forced_gemm_provider()
    # The providers the automatic choice can pick here (per dtype, and by shape).
    wanted = set(_C._gemm_providers(index).values())
    if _C._gemm_shape_rule(index):
        wanted.add("cpu_tile")
    ran: dict[str, list[str]] = {}
    try:
        for provider in [p for p in ("host_blas", "cpu_tile", "clblast", "tiled") if p in wanted]:
            _C._set_gemm_provider(provider)
            for dt in dtypes:
                a = torch.ones(70, 70, dtype=dt, device=dev)
                torch.mm(a, a.t())  # B transposed: cpu_tile's packing kernel too
                if _C._last_gemm_provider() == provider:
                    ran.setdefault(provider, []).append(str(dt).replace("torch.", ""))
        torch.ocl.synchronize(index)
    finally:
        _C._set_gemm_provider(forced)
    after = _compiles(index)
    return {"providers": ran, "kernels_compiled": after["compiles"] - before["compiles"],
            "seconds": time.perf_counter() - t0}


def warmup(models: Optional[Sequence[str]] = None, *, device: str = "ocl", steps: int = 1,
           full: bool = False, progress: bool = True) -> dict[str, Any]:
    """Runs ``steps`` steps of each model on ``device``; returns what was compiled per model."""
    if _C.device_count() == 0:
        raise RuntimeError(f"torch-ocl: {_C.discovery_error()} Run `python -m torch_ocl doctor`.")
    dev = torch.device(device)
    index = dev.index if dev.index is not None else torch.ocl.current_device()
    explicit = bool(models)
    specs = list(models) if models else list(_models.DEFAULT_MODELS)
    bar = Progress(len(specs) * steps, "warmup", enabled=progress)
    results = []
    t_all = time.perf_counter()
    start_stats = _compiles(index)
    engine = warm_matrix_engine(index)
    for spec in specs:
        entry: dict[str, Any] = {"model": _models.module_name(spec)}
        bar.step(f"{spec}: loading")
        mod, why = _models.load(spec)
        wl = None
        if mod is not None:
            try:
                wl, why = _models.make(mod, str(dev), small=not full)
            except Exception as e:
                why = f"failed to build: {type(e).__name__}: {e}"
        if wl is None:
            entry.update(status="not available" if why.startswith("not available") else "failed",
                         reason=why)
            bar.advance(steps, f"{spec}: {why}")
            results.append(entry)
            continue
        before = _compiles(index)
        t0 = time.perf_counter()
        try:
            for i in range(steps):
                bar.step(f"{spec}: step {i + 1}")
                bar.tick_while(lambda: f"({_compiles(index)['compiles'] - before['compiles']} "
                                       "kernels compiled)")
                wl.step()
                torch.ocl.synchronize(index)
                bar.stop_ticking()
                bar.advance()
            entry["status"] = "ok"
        except Exception as e:
            bar.stop_ticking()
            entry.update(status="failed", reason=f"{type(e).__name__}: {str(e)[:300]}")
        after = _compiles(index)
        entry.update(
            seconds=time.perf_counter() - t0,
            kernels_compiled=after["compiles"] - before["compiles"],
            compile_seconds=after["compile_seconds"] - before["compile_seconds"],
            disk_cache_hits=after["disk_hits"] - before["disk_hits"],
        )
        results.append(entry)
    end_stats = _compiles(index)
    bar.close("done")
    cache = _C.program_cache_stats(index)
    return {
        "device": f"ocl:{index} {torch.ocl.get_device_name(index)}",
        "models": results,
        "matrix_engine": engine,
        "kernels_compiled": end_stats["compiles"] - start_stats["compiles"],
        "compile_seconds": end_stats["compile_seconds"] - start_stats["compile_seconds"],
        "seconds": time.perf_counter() - t_all,
        "disk_cache": {"dir": cache["disk_dir"], "enabled": cache["disk_enabled"]},
        "ok": all(r["status"] == "ok" for r in results) if explicit
        else any(r["status"] == "ok" for r in results)
        and not any(r["status"] == "failed" for r in results),
    }


def format_text(rep: dict) -> str:
    out = [f"torch-ocl warmup on {rep['device']}"]
    out.append(f"{'model':<22}{'status':<15}{'kernels':>8}{'compile s':>11}{'step s':>9}")
    for r in rep["models"]:
        if r["status"] == "ok" or "seconds" in r:
            out.append(f"{r['model']:<22}{r['status']:<15}{r['kernels_compiled']:>8}"
                       f"{r['compile_seconds']:>11.2f}{r['seconds']:>9.2f}")
            if r["status"] != "ok":
                out.append(f"  {r['reason'][:90]}")
        else:
            out.append(f"{r['model']:<22}{r['status']:<15}  {r['reason'][:60]}")
    me = rep["matrix_engine"]
    out.append(f"matrix engine: {me['kernels_compiled']} program(s) for "
               + ", ".join(f"{p} ({'/'.join(d)})" for p, d in me["providers"].items()))
    out.append(f"compiled {rep['kernels_compiled']} kernel program(s) in "
               f"{rep['compile_seconds']:.2f} s (total {rep['seconds']:.2f} s)")
    dc = rep["disk_cache"]
    out.append(f"kept in: {dc['dir']}" if dc["enabled"] else
               "kept in: the driver's own kernel cache (torch-ocl's disk cache is off for this "
               "driver; TORCH_OCL_CACHE=1 turns it on)")
    if not rep["ok"]:
        out.append("FAILED: see the status column; `python -m torch_ocl doctor` checks the device.")
    return fit("\n".join(out))


def add_parser(sub) -> None:
    p = sub.add_parser("warmup", help="compile a model's kernels ahead of time",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--model", action="append", metavar="MODULE",
                   help="examples.<name> or a module with workload() (repeatable; default: "
                        "mlp, cnn, gpt, minilm, those available)")
    p.add_argument("--device", default="ocl", help="ocl device (default ocl)")
    p.add_argument("--steps", type=int, default=1, help="steps per model (default 1)")
    p.add_argument("--full", action="store_true", help="full sizes instead of small ones")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    try:
        rep = warmup(args.model, device=args.device, steps=args.steps, full=args.full,
                     progress=not args.quiet)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2) if args.json else format_text(rep))
    return 0 if rep["ok"] else 1
