"""``python -m torch_ocl warmup``: compile a model's kernels ahead of time.

Runs one step of each model's workload (examples/<name>.py; small sizes by default, because
kernels are specialised on dtype, rank and contiguity, never on sizes) so that every kernel it
needs is compiled and lands in the on-disk caches (torch-ocl's, or the driver's own where it keeps
one, e.g. PoCL and NVIDIA). The first real step of a later process then starts fast. It also
measures the matrix engine's providers once per device and keeps the fastest per shape class in
the GEMM tuning table on disk (--retune measures again, --no-tune skips it).
"""

from __future__ import annotations

import json
import math
import os
import statistics
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


# Representative sizes of the tuning table's shape classes (csrc/aten/linalg/gemm_tuning.h):
# rows and columns <= 96, <= 768, more; K <= 96, <= 768, <= 2048, more; each in the layouts "nn"
# (B read in place), "np" (B row-major but packed: columns not whole panels), "nt" (B read
# transposed, a linear's x @ W^T) and "tn" (A read transposed, a weight gradient x^T @ dy).
_TUNE_MN = (64, 384, 1024)
_TUNE_K = (64, 512, 1536, 4096)
_TUNE_LAYOUTS = ("nn", "np", "nt", "tn")
# Shapes that models run, measured in their classes too (M, K, N, layout): the MLP's training
# shapes (forward, x @ W^T, input and weight gradients) and a 512 square.
_TUNE_EXTRA = ((64, 784, 512, "nn"), (64, 512, 512, "nn"), (64, 784, 512, "nt"),
               (512, 64, 784, "tn"), (64, 512, 784, "nt"), (512, 512, 512, "nn"),
               (784, 64, 512, "tn"))
_TUNE_PROVIDERS = ("host_blas", "cpu_tile", "clblast", "tiled")
# Another provider replaces the built-in rule's in a class only when it is faster by this factor:
# on PoCL host_blas and cpu_tile are within 10-30 % of each other on most classes, and a table
# measured on a loaded machine (2 cores, load 5) with a 1.1 margin ran the MLP's training shapes
# slower than the built-in rule (0.38-0.61 of CPU against 0.53-0.69).
_TUNE_MARGIN = 1.25


def _tune_shapes(quick: bool):
    shapes = []
    for m in _TUNE_MN[:2] if quick else _TUNE_MN:
        for n in _TUNE_MN[:2] if quick else _TUNE_MN:
            for k in _TUNE_K[:2] if quick else _TUNE_K:
                if m * n * k > 2 ** 32:  # 1024 x 1024 x 4096: the built-in rule is fine there
                    continue
                for lay in _TUNE_LAYOUTS:
                    shapes.append((m, k, n + 8 if lay == "np" else n, lay))
    if not quick:
        shapes += list(_TUNE_EXTRA)
    return sorted(shapes, key=lambda s: s[0] * s[1] * s[2])


def _tune_operands(m, k, n, lay, dt, dev, g):
    a = (torch.randn(k, m, generator=g).to(dt).to(dev).t() if lay[0] == "t"
         else torch.randn(m, k, generator=g).to(dt).to(dev))
    b = (torch.randn(n, k, generator=g).to(dt).to(dev).t() if lay[1] == "t"
         else torch.randn(k, n, generator=g).to(dt).to(dev))
    return a, b


def _read_table(path: str) -> list[list[str]]:
    try:
        with open(path) as f:
            return [line.rstrip("\n").split("\t") for line in f
                    if line.strip() and not line.startswith("#")]
    except OSError:
        return []


def tune_matrix_engine(index: int, *, dtypes=(torch.float32,), quick: bool = False,
                       reps: int = 5) -> dict[str, Any]:
    """Measures every GEMM provider the device runs on a representative shape of each shape class
    and stores the fastest per (device, dtype, class) in the tuning table
    (``_C._gemm_tuning_path()``), which gemm() then follows. A provider more than 8x slower than
    the best on three classes is not measured on the larger ones (CLBlast or the generic kernel
    on a CPU driver)."""
    path = _C._gemm_tuning_path()
    if not path:
        return {"path": "", "entries": 0, "error": "no cache directory (set TORCH_OCL_CACHE_DIR)"}
    dev = torch.device("ocl", index)
    key = _C._gemm_device_key(index)
    forced = _C._forced_gemm_provider()
    was_enabled = _C._gemm_tuning_enabled()
    _C._set_gemm_tuning_enabled(False)
    t0 = time.perf_counter()
    measured: dict[tuple[str, int], dict[str, float]] = {}
    choice: dict[tuple[str, int], str] = {}
    g = torch.Generator().manual_seed(0)
    try:
        for dt in dtypes:
            name = str(dt).replace("torch.", "")
            cname = {"float32": "Float", "float64": "Double", "float16": "Half",
                     "bfloat16": "BFloat16"}.get(name, name)
            strikes: dict[str, int] = {}
            per_class: dict[int, list[dict[str, float]]] = {}
            rule_of: dict[int, list[str]] = {}
            for m, k, n, lay in _tune_shapes(quick):
                a, b = _tune_operands(m, k, n, lay, dt, dev, g)
                c = torch.empty(m, n, dtype=dt, device=dev)
                cls = _C._gemm_shape_class_of(a, b)
                runs: dict[str, list[float]] = {}
                _C._set_gemm_provider("auto")  # the built-in rule's choice (the table is off)
                torch.mm(a, b, out=c)
                rule_of.setdefault(cls, []).append(_C._last_gemm_provider())
                for p in _TUNE_PROVIDERS:
                    if strikes.get(p, 0) >= 3:
                        continue
                    _C._set_gemm_provider(p)
                    torch.mm(a, b, out=c)
                    torch.ocl.synchronize(index)
                    if _C._last_gemm_provider() == p:  # else it does not run this dtype here
                        runs[p] = []
                if not runs:
                    continue
                # Rounds that alternate the providers, so that a load that comes and goes hits
                # all of them alike; the median of each provider's rounds decides. A round of a
                # small shape is several synchronised calls (about 2 ms of the fastest one).
                first = {}
                for p in runs:
                    _C._set_gemm_provider(p)
                    t = time.perf_counter()
                    torch.mm(a, b, out=c)
                    torch.ocl.synchronize(index)
                    first[p] = time.perf_counter() - t
                inner = max(1, min(20, int(2e-3 / max(min(first.values()), 1e-6))))
                for _ in range(reps):
                    for p in runs:
                        _C._set_gemm_provider(p)
                        t = time.perf_counter()
                        for _ in range(inner if first[p] * inner < 0.05 else 1):
                            torch.mm(a, b, out=c)
                            torch.ocl.synchronize(index)
                        runs[p].append((time.perf_counter() - t)
                                       / (inner if first[p] * inner < 0.05 else 1))
                res = {p: 2.0 * m * n * k / statistics.median(ts) / 1e9 for p, ts in runs.items()}
                top = max(res.values())
                for p, v in res.items():
                    if v * 8 < top:
                        strikes[p] = strikes.get(p, 0) + 1
                per_class.setdefault(cls, []).append(res)
            # A class measured on several shapes: the geometric mean over them of each provider
            # that ran all of them.
            for cls, results in per_class.items():
                common = set.intersection(*(set(r) for r in results))
                res = {p: math.exp(sum(math.log(r[p]) for r in results) / len(results))
                       for p in sorted(common)}
                if not res:
                    continue
                measured[(cname, cls)] = res
                # The built-in rule's provider keeps the class unless another one is clearly
                # faster (by more than the noise of a shared machine): a table measured under
                # load then does not flip classes on a few percent.
                best = max(res, key=res.get)
                rule = max(set(rule_of[cls]), key=rule_of[cls].count)
                choice[(cname, cls)] = (rule if rule in res and res[rule] * _TUNE_MARGIN
                                        >= res[best] else best)
    finally:
        _C._set_gemm_provider(forced)
        _C._set_gemm_tuning_enabled(was_enabled)
    # Keep other devices' and dtypes' lines; replace what was measured now.
    rows = [r for r in _read_table(path)
            if len(r) >= 4 and not (r[0] == key and any(r[1] == d for d, _ in measured))]
    for (cname, cls), res in sorted(measured.items()):
        best = choice[(cname, cls)]
        rows.append([key, cname, str(cls), best]
                    + [f"{p}={v:.1f}" for p, v in sorted(res.items())])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write("# torch-ocl GEMM tuning table: device<TAB>dtype<TAB>shape class<TAB>provider"
                "<TAB>GFLOP/s measured per provider (written by python -m torch_ocl warmup)\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    os.replace(tmp, path)  # atomic: a reading process sees the old or the new table
    _C._gemm_tuning_reload()
    chosen: dict[str, int] = {}
    for best in choice.values():
        chosen[best] = chosen.get(best, 0) + 1
    return {"path": path, "classes": len(measured), "chosen": chosen,
            "seconds": time.perf_counter() - t0}


def device_is_tuned(index: int) -> bool:
    return bool(_C._gemm_tuning_table(index))


def warmup(models: Optional[Sequence[str]] = None, *, device: str = "ocl", steps: int = 1,
           full: bool = False, progress: bool = True, tune: Optional[bool] = None,
           retune: bool = False) -> dict[str, Any]:
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
    # The GEMM tuning table: measured once per device (again with --retune), skipped with
    # --no-tune.
    if tune is None:
        tune = True
    if tune and (retune or not device_is_tuned(index)):
        bar.step("matrix engine: measuring the GEMM providers per shape class")
        engine["tuning"] = tune_matrix_engine(index)
    else:
        engine["tuning"] = {"path": _C._gemm_tuning_path(),
                            "classes": len(_C._gemm_tuning_table(index)),
                            "skipped": "already tuned (--retune measures again)" if tune
                            else "--no-tune"}
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
    tu = me.get("tuning", {})
    if tu.get("error"):
        out.append(f"GEMM tuning: {tu['error']}")
    elif "chosen" in tu:
        out.append(f"GEMM tuning: {tu['classes']} shape classes measured in {tu['seconds']:.1f} s "
                   f"({', '.join(f'{p} {n}' for p, n in tu['chosen'].items())}), in {tu['path']}")
    elif tu:
        out.append(f"GEMM tuning: {tu['classes']} shape classes in {tu['path']} "
                   f"({tu['skipped']})")
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
    p.add_argument("--no-tune", action="store_true",
                   help="do not measure the GEMM providers (the tuning table)")
    p.add_argument("--retune", action="store_true",
                   help="measure the GEMM providers again even if this device has a table")


def run(args) -> int:
    try:
        rep = warmup(args.model, device=args.device, steps=args.steps, full=args.full,
                     progress=not args.quiet, tune=not args.no_tune, retune=args.retune)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2) if args.json else format_text(rep))
    return 0 if rep["ok"] else 1
