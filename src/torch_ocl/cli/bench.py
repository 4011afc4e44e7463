"""``python -m torch_ocl bench``: how fast is the device, against its own limits and CPU PyTorch?

In one run, on the chosen ocl device and on CPU PyTorch: the device's limits measured with raw
OpenCL (copy bandwidth, fill, launch latency) and raw CLBlast (SGEMM); our op microbenchmarks as
ratios of those limits; the example model steps (median step time, throughput, peak device memory,
cold first step versus steady state); process start-up with a cold and a warm kernel cache.
Every figure is a median of repeated runs; ratios are computed inside the run.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Callable, Optional, Sequence

import torch

import torch_ocl
from torch_ocl import _C

from . import _models
from ._progress import Progress, fit, status

SECTIONS = ("limits", "ops", "models", "startup")


def _median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def _time(fn: Callable[[], Any], sync: Callable[[], None], reps: int) -> float:
    """Median seconds per call; each repetition runs enough calls to last ~20 ms."""
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    one = max(time.perf_counter() - t0, 1e-7)
    inner = int(min(max(0.02 / one, 1), 200))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / inner)
    return _median(times)


# ---- device limits -----------------------------------------------------------------------------


def measure_limits(index: int, *, nbytes: int, gemm_n: int, reps: int) -> dict[str, Any]:
    med = lambda kind: _median(_C._raw_transfer(index, kind, nbytes, reps))  # noqa: E731
    d2d = med("d2d")
    lim: dict[str, Any] = {
        "bytes": nbytes,
        "h2d_gbps": nbytes / med("h2d") / 1e9,
        "d2h_gbps": nbytes / med("d2h") / 1e9,
        # a copy reads and writes nbytes: the device's memory bandwidth as ops see it
        "copy_gbps": 2 * nbytes / d2d / 1e9,
        "fill_gbps": nbytes / med("fill_kernel") / 1e9,
    }
    if hasattr(_C, "_raw_launch_latency"):
        lim["launch_us"] = _C._raw_launch_latency(index, "throughput", 2000) * 1e6
        lim["launch_roundtrip_us"] = _C._raw_launch_latency(index, "roundtrip", 200) * 1e6
    if hasattr(_C, "_raw_sgemm"):
        g = torch.Generator().manual_seed(0)
        a = torch.randn(gemm_n, gemm_n, generator=g).to(f"ocl:{index}")
        b = torch.randn(gemm_n, gemm_n, generator=g).to(f"ocl:{index}")
        out = torch.empty(gemm_n, gemm_n, device=f"ocl:{index}")
        secs = _median(_C._raw_sgemm(a, b, out, reps))
        lim["sgemm_n"] = gemm_n
        lim["sgemm_gflops"] = 2 * gemm_n**3 / secs / 1e9
    else:
        lim["sgemm_gflops"] = None  # "no reference": the raw CLBlast probe is not built in
    return lim


# ---- op microbenchmarks ------------------------------------------------------------------------


def _op_cases(n: int, gemm_n: int) -> list[dict]:
    """name, kind (memory: bytes moved / compute: flops), a builder of (fn) for a device."""
    rows = max(1, n // 1024)

    cases = [
        ("add", "memory", 3 * n * 4, lambda d, g: (lambda a, b: lambda: a + b)(
            torch.randn(n, generator=g).to(d), torch.randn(n, generator=g).to(d))),
        ("mul (scalar)", "memory", 2 * n * 4, lambda d, g: (lambda a: lambda: a * 1.5)(
            torch.randn(n, generator=g).to(d))),
        ("gelu", "memory", 2 * n * 4, lambda d, g: (lambda a: lambda: torch.nn.functional.gelu(a))(
            torch.randn(n, generator=g).to(d))),
        ("copy_", "memory", 2 * n * 4, lambda d, g: (lambda a, b: lambda: b.copy_(a))(
            torch.randn(n, generator=g).to(d), torch.empty(n, device=d))),
        ("fill_", "memory", n * 4, lambda d, g: (lambda a: lambda: a.fill_(0.5))(
            torch.empty(n, device=d))),
        ("sum", "memory", n * 4, lambda d, g: (lambda a: lambda: a.sum())(
            torch.randn(n, generator=g).to(d))),
        ("softmax (rows of 1024)", "memory", 2 * rows * 1024 * 4,
         lambda d, g: (lambda a: lambda: torch.softmax(a, -1))(
             torch.randn(rows, 1024, generator=g).to(d))),
        ("layer_norm (rows of 1024)", "memory", 2 * rows * 1024 * 4,
         lambda d, g: (lambda a: lambda: torch.nn.functional.layer_norm(a, (1024,)))(
             torch.randn(rows, 1024, generator=g).to(d))),
        ("add bf16", "memory", 3 * n * 2, lambda d, g: (lambda a, b: lambda: a + b)(
            torch.randn(n, generator=g).to(d, torch.bfloat16),
            torch.randn(n, generator=g).to(d, torch.bfloat16))),
        ("mm fp32", "compute", 2 * gemm_n**3, lambda d, g: (lambda a, b: lambda: a @ b)(
            torch.randn(gemm_n, gemm_n, generator=g).to(d),
            torch.randn(gemm_n, gemm_n, generator=g).to(d))),
        ("linear fp32 (addmm)", "compute", 2 * gemm_n**3,
         lambda d, g: (lambda x, w, b: lambda: torch.nn.functional.linear(x, w, b))(
             torch.randn(gemm_n, gemm_n, generator=g).to(d),
             torch.randn(gemm_n, gemm_n, generator=g).to(d),
             torch.randn(gemm_n, generator=g).to(d))),
        ("conv2d 3x3 (32ch, 32x32, batch 8)", "compute", 2 * 8 * 32 * 32 * 32 * 32 * 9,
         lambda d, g: (lambda x, w: lambda: torch.nn.functional.conv2d(x, w, padding=1))(
             torch.randn(8, 32, 32, 32, generator=g).to(d),
             torch.randn(32, 32, 3, 3, generator=g).to(d))),
    ]
    return [{"name": c[0], "kind": c[1], "work": c[2], "build": c[3]} for c in cases]


def measure_ops(index: int, limits: dict, *, n: int, gemm_n: int, reps: int,
                progress: bool) -> list[dict]:
    dev = torch.device("ocl", index)
    sync_dev = lambda: torch.ocl.synchronize(index)  # noqa: E731
    cases = _op_cases(n, gemm_n)
    bar = Progress(len(cases), "ops", enabled=progress)
    out = []
    with warnings.catch_warnings():  # fallbacks are marked in the rows instead
        warnings.filterwarnings("ignore", message="torch-ocl: .* no native ocl kernel")
        _measure_cases(cases, dev, sync_dev, reps, bar, out, limits)
    bar.close()
    torch_ocl.reset_fallback_report()
    return out


def _measure_cases(cases, dev, sync_dev, reps, bar, out, limits) -> None:
    for c in cases:
        bar.step(c["name"])
        row: dict[str, Any] = {"op": c["name"], "kind": c["kind"], "work": c["work"]}
        try:
            torch_ocl.reset_fallback_report()
            fn = c["build"](dev, torch.Generator().manual_seed(0))
            fn()
            sync_dev()
            fell = [r["op"] for r in torch_ocl.fallback_report(print_table=False)
                    if r["op"] not in ("aten::_to_copy", "aten::copy_")]
            row["native"] = not fell
            row["fallback_ops"] = fell
            row["ocl_s"] = _time(fn, sync_dev, reps)
            cpu_fn = c["build"](torch.device("cpu"), torch.Generator().manual_seed(0))
            row["cpu_s"] = _time(cpu_fn, lambda: None, reps)
            row["speedup_vs_cpu"] = row["cpu_s"] / row["ocl_s"]
            if c["kind"] == "memory":
                row["ocl_rate"] = c["work"] / row["ocl_s"] / 1e9
                row["cpu_rate"] = c["work"] / row["cpu_s"] / 1e9
                row["unit"] = "GB/s"
                row["limit"] = limits.get("copy_gbps")
                row["limit_name"] = "raw OpenCL copy bandwidth"
            else:
                row["ocl_rate"] = c["work"] / row["ocl_s"] / 1e9
                row["cpu_rate"] = c["work"] / row["cpu_s"] / 1e9
                row["unit"] = "GFLOP/s"
                row["limit"] = limits.get("sgemm_gflops")
                row["limit_name"] = ("raw CLBlast SGEMM" if row["limit"] else "no reference")
            row["of_limit"] = row["ocl_rate"] / row["limit"] if row.get("limit") else None
        except NotImplementedError as e:  # the backend has no kernel and the fallback cannot run it
            row["unsupported"] = str(e).splitlines()[0][:200] if str(e) else "not implemented"
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        out.append(row)
        bar.advance()


# ---- model steps (one subprocess per model and device) ----------------------------------------

_WORKER = r"""
import json, statistics, sys, time
import torch
from torch_ocl.cli import _models
spec, device, small, steps = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
if int(sys.argv[5]) > 0:
    torch.set_num_threads(int(sys.argv[5]))
res = {"model": spec, "device": device}
mod, why = _models.load(spec)
wl = None
if mod is not None:
    wl, why = _models.make(mod, device, small=small)
if wl is None:
    res.update(status="not available", reason=why)
    print("@@RESULT@@" + json.dumps(res)); sys.exit(0)
ocl = device.startswith("ocl")
sync = (lambda: torch.ocl.synchronize()) if ocl else (lambda: None)
if ocl:
    import torch_ocl
    torch.ocl.reset_peak_memory_stats()
    torch_ocl.reset_fallback_report()
t0 = time.perf_counter(); out = wl.step(); sync(); first = time.perf_counter() - t0
times = []
for _ in range(steps):
    t0 = time.perf_counter(); out = wl.step(); sync(); times.append(time.perf_counter() - t0)
med = statistics.median(times)
res.update(status="ok", name=wl.name, kind=wl.kind, items_per_step=wl.items_per_step,
           first_step_s=first, step_s=med, steps=steps,
           throughput=wl.items_per_step / med,
           result=float(out.detach().float().mean().cpu()))
if ocl:
    res["peak_memory_bytes"] = torch.ocl.max_memory_allocated()
    res["fallback_ops"] = [r["op"] for r in torch_ocl.fallback_report(print_table=False)]
print("@@RESULT@@" + json.dumps(res))
"""


def _run_worker(spec: str, device: str, small: bool, steps: int, timeout: float,
                cpu_threads: int = 0) -> dict:
    cmd = [sys.executable, "-c", _WORKER, spec, device, "1" if small else "0", str(steps),
           str(cpu_threads or 0)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           cwd=os.getcwd())
    except subprocess.TimeoutExpired:
        return {"model": spec, "device": device, "status": "failed",
                "reason": f"timed out after {timeout:.0f} s"}
    for line in p.stdout.splitlines()[::-1]:
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"model": spec, "device": device, "status": "failed",
            "reason": f"exit {p.returncode}: {tail[:300]}"}


def measure_models(index: int, specs: Sequence[str], *, small: bool, steps: int, timeout: float,
                   progress: bool, cpu_threads: Optional[int] = None) -> list[dict]:
    bar = Progress(len(specs) * 2, "models", enabled=progress)
    out = []
    for spec in specs:
        row: dict[str, Any] = {"model": _models.module_name(spec), "small": small}
        mod, why = _models.load(spec)
        if mod is None:  # no subprocess needed to say so
            row.update(status="not available",
                       ocl={"model": spec, "status": "not available", "reason": why})
            bar.advance(2, f"{spec}: not available")
            out.append(row)
            continue
        for device in (f"ocl:{index}", "cpu"):
            bar.step(f"{spec} on {device}")
            r = _run_worker(spec, device, small, steps, timeout, cpu_threads or 0)
            row["ocl" if device.startswith("ocl") else "cpu"] = r
            bar.advance()
            if r["status"] == "not available":
                bar.advance()
                break
        o, c = row.get("ocl", {}), row.get("cpu", {})
        row["status"] = o.get("status", "failed")
        if o.get("status") == "ok" and c.get("status") == "ok":
            row["speedup_vs_cpu"] = c["step_s"] / o["step_s"]
            row["result_abs_diff"] = abs(o["result"] - c["result"])
        out.append(row)
    bar.close()
    return out


# ---- start-up with a cold and a warm kernel cache ---------------------------------------------

_STARTUP = r"""
import json, time
t0 = time.perf_counter()
import torch, torch_ocl
t1 = time.perf_counter()
torch.manual_seed(0)
if QUICK:
    v = (torch.randn(1000).to("ocl") * 2 + 1).sum().item()
else:
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 10))
    model.to("ocl")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(32, 64).to("ocl"); y = torch.randint(0, 10, (32,)).to("ocl")
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward(); opt.step()
    v = loss.item()
t2 = time.perf_counter()
s = torch_ocl._C.program_cache_stats(0)
print("@@RESULT@@" + json.dumps({"import_s": t1 - t0, "first_step_s": t2 - t1,
      "compiles": s["compiles"], "disk_hits": s["disk_hits"]}))
"""


def measure_startup(reps: int, progress: bool, quick: bool = False, timeout: float = 600) -> dict:
    """Cold: TORCH_OCL_CACHE_DIR and POCL_CACHE_DIR point at fresh empty directories (and our
    disk cache is forced on); warm: the same process again with the same directories."""
    bar = Progress(2 * reps, "start-up", enabled=progress)
    runs: dict[str, list] = {"cold": [], "warm": []}
    for _ in range(reps):
        with tempfile.TemporaryDirectory(prefix="torch_ocl_bench_") as tmp:
            env = os.environ.copy()
            env.update(TORCH_OCL_CACHE_DIR=os.path.join(tmp, "torch_ocl"),
                       POCL_CACHE_DIR=os.path.join(tmp, "pocl"), TORCH_OCL_CACHE="1")
            for kind in ("cold", "warm"):
                bar.step(kind)
                t0 = time.perf_counter()
                code = f"QUICK = {quick}\n" + _STARTUP
                p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, env=env, timeout=timeout)
                wall = time.perf_counter() - t0
                line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@RESULT@@")),
                            None)
                if line is None:
                    bar.close()
                    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
                    return {"error": f"start-up probe failed (exit {p.returncode}): {tail}"}
                r = json.loads(line[len("@@RESULT@@"):])
                r["process_s"] = wall
                runs[kind].append(r)
                bar.advance()
    bar.close()
    out: dict[str, Any] = {"reps": reps, "workload": "import, (x * 2 + 1).sum().item()" if quick
                           else "import, one MLP training step, .item()"}
    for kind, rs in runs.items():
        out[kind] = {k: _median([r[k] for r in rs])
                     for k in ("process_s", "import_s", "first_step_s", "compiles", "disk_hits")}
    out["warm_speedup"] = out["cold"]["process_s"] / out["warm"]["process_s"]
    return out


# ---- the whole suite ---------------------------------------------------------------------------


def bench(*, device: int = 0, quick: bool = False, sections: Sequence[str] = SECTIONS,
          models: Optional[Sequence[str]] = None, model_size: str = "auto",
          reps: Optional[int] = None, cpu_threads: Optional[int] = None,
          progress: bool = True) -> dict[str, Any]:
    """Runs the suite and returns the results (what ``--output`` writes as JSON)."""
    if cpu_threads:
        torch.set_num_threads(cpu_threads)
    if _C.device_count() == 0:
        raise RuntimeError(f"torch-ocl: {_C.discovery_error()} Run `python -m torch_ocl doctor`.")
    props = torch.ocl.get_device_properties(device)
    reps = reps or (3 if quick else 7)
    cfg = {
        "quick": quick, "reps": reps,
        "bytes": (4 << 20) if quick else (64 << 20),
        "op_elements": (1 << 18) if quick else (1 << 22),
        "gemm_n": 128 if quick else 512,
        "model_steps": 2 if quick else 10,
    }
    small = (quick or props.type == "CPU") if model_size == "auto" else model_size == "small"
    cfg["model_size"] = "small" if small else "full"
    res: dict[str, Any] = {
        "tool": "python -m torch_ocl bench",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": {"index": device, "name": props.name, "type": props.type,
                   "platform": props.platform_name, "driver": props.driver_version,
                   "opencl_c": props.opencl_c_version, "compute_units": props.compute_units,
                   "memory": props.total_memory},
        "host": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                 "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
                 "torch_ocl": torch_ocl.__version__, "python": platform.python_version(),
                 "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None},
        "config": cfg,
    }
    limits: dict[str, Any] = {}
    if "limits" in sections or "ops" in sections:
        status("measuring device limits (raw OpenCL, raw CLBlast)...", enabled=progress)
        limits = measure_limits(device, nbytes=cfg["bytes"], gemm_n=cfg["gemm_n"], reps=reps)
        res["limits"] = limits
    if "ops" in sections:
        res["ops"] = measure_ops(device, limits, n=cfg["op_elements"], gemm_n=cfg["gemm_n"],
                                 reps=reps, progress=progress)
    if "models" in sections:
        specs = list(models) if models else list(_models.DEFAULT_MODELS)
        res["models"] = measure_models(device, specs, small=small, steps=cfg["model_steps"],
                                       timeout=300 if quick else 1200, progress=progress,
                                       cpu_threads=cpu_threads)
    if "startup" in sections:
        res["startup"] = measure_startup(1 if quick else 3, progress, quick)
    return res


# ---- one profiled step --------------------------------------------------------------------------


def profile_step(*, device: int, spec: str, model_size: str, trace: str,
                 row_limit: int = 25) -> int:
    """Runs one warm step of model `spec` on ocl:`device` under torch.profiler (CPU and device
    activity), writes the Chrome trace to `trace` and prints the ops by device time."""
    from torch.profiler import ProfilerActivity, profile

    props = torch.ocl.get_device_properties(device)
    small = props.type == "CPU" if model_size == "auto" else model_size == "small"
    mod, why = _models.load(spec)
    wl = None
    if mod is not None:
        wl, why = _models.make(mod, f"ocl:{device}", small=small)
    if wl is None:
        print(f"error: model {spec}: {why}", file=sys.stderr)
        return 1
    wl.step()  # compiles the kernels: the profiled step is a steady-state one
    torch.ocl.synchronize(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        wl.step()
        torch.ocl.synchronize(device)
    prof.export_chrome_trace(trace)
    print(f"one step of {wl.name} ({'small' if small else 'full'}) on ocl:{device} "
          f"({props.name}); Chrome trace: {trace}")
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=row_limit))
    return 0


# ---- output ------------------------------------------------------------------------------------


def format_text(res: dict) -> str:
    d = res["device"]
    out = [f"torch-ocl bench, {res['date']}: ocl:{d['index']} {d['name']} ({d['platform']}, "
           f"driver {d['driver']})",
           f"CPU PyTorch {res['host']['torch']} with {res['host']['torch_threads']} threads; "
           f"medians of {res['config']['reps']} runs"
           + (" (--quick: tiny sizes)" if res["config"]["quick"] else "")]
    load, cores = res["host"].get("load_average"), res["host"]["cores"]
    if load is not None and cores and load > cores:
        out.append(f"note: the machine was busy (load average {load:.1f} on {cores} cores): "
                   "figures are noisy")
    lim = res.get("limits")
    if lim:
        out += ["", "device limits (raw OpenCL / CLBlast):",
                f"  copy {lim['copy_gbps']:.1f} GB/s (read+write), fill {lim['fill_gbps']:.1f} "
                f"GB/s, host->device {lim['h2d_gbps']:.1f} GB/s, device->host "
                f"{lim['d2h_gbps']:.1f} GB/s"]
        if "launch_us" in lim:
            out.append(f"  empty kernel launch {lim['launch_us']:.1f} us back to back, "
                       f"{lim['launch_roundtrip_us']:.1f} us with a host wait")
        out.append(f"  SGEMM {lim['sgemm_gflops']:.1f} GFLOP/s (n={lim['sgemm_n']})"
                   if lim.get("sgemm_gflops") else "  SGEMM: no reference (raw CLBlast probe "
                   "not built in): GEMM rows have no ratio")
    if res.get("ops"):
        out += ["", f"{'op':<34}{'ocl ms':>9}{'cpu ms':>9}{'vs cpu':>8}{'ocl rate':>16}"
                    f"{'of limit':>10}  native"]
        for r in res["ops"]:
            if "error" in r or "unsupported" in r:
                why = f"error: {r['error']}" if "error" in r else "not supported on ocl yet"
                out.append(f"{r['op'][:33]:<34}  {why[:64]}")
                continue
            frac = f"{r['of_limit'] * 100:.0f}%" if r["of_limit"] is not None else "no ref"
            out.append(f"{r['op'][:33]:<34}{r['ocl_s'] * 1e3:>9.3f}{r['cpu_s'] * 1e3:>9.3f}"
                       f"{r['speedup_vs_cpu']:>7.2f}x{r['ocl_rate']:>9.1f} {r['unit']:<7}"
                       f"{frac:>9}  {'yes' if r['native'] else 'CPU fallback'}")
    if res.get("models"):
        out += ["", f"{'model':<16}{'size':<6}{'ocl step ms':>12}{'first ms':>10}{'cpu step ms':>12}"
                    f"{'vs cpu':>8}{'items/s':>10}{'peak MiB':>9}"]
        for m in res["models"]:
            o, c = m.get("ocl", {}), m.get("cpu", {})
            name = m["model"].replace("examples.", "")
            if o.get("status") != "ok":
                why = o.get("reason", "")
                if not why.startswith(o.get("status", "failed")):
                    why = f"{o.get('status', 'failed')}: {why}"
                out.append(f"{name:<16}{why[:300]}")
                continue
            cpu_ms = f"{c['step_s'] * 1e3:.1f}" if c.get("status") == "ok" else "-"
            sp = f"{m['speedup_vs_cpu']:.2f}x" if "speedup_vs_cpu" in m else "-"
            out.append(f"{name:<16}{'small' if m['small'] else 'full':<6}"
                       f"{o['step_s'] * 1e3:>12.1f}{o['first_step_s'] * 1e3:>10.1f}{cpu_ms:>12}"
                       f"{sp:>8}{o['throughput']:>10.1f}{o['peak_memory_bytes'] / 2**20:>9.1f}")
            if o.get("fallback_ops"):
                out.append(f"  CPU fallback: {', '.join(o['fallback_ops'])}")
    st = res.get("startup")
    if st:
        out.append("")
        if "error" in st:
            out.append(f"start-up: {st['error']}")
        else:
            c, w = st["cold"], st["warm"]
            out.append(f"start-up ({st['workload']}), median of {st['reps']}:")
            out.append(f"  cold kernel cache {c['process_s']:.2f} s (first step "
                       f"{c['first_step_s']:.2f} s, {c['compiles']:.0f} compiles)")
            out.append(f"  warm kernel cache {w['process_s']:.2f} s (first step "
                       f"{w['first_step_s']:.2f} s, {w['disk_hits']:.0f} disk hits); "
                       f"{st['warm_speedup']:.2f}x faster")
    return fit("\n".join(out))


def plot(res: dict, outdir: str) -> list[str]:
    """PNG charts from a bench result: ops against the device limits, model steps, start-up."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise RuntimeError("--plot needs matplotlib: pip install matplotlib") from e
    os.makedirs(outdir, exist_ok=True)
    written = []
    title_dev = f"{res['device']['name']} ({res['device']['platform']}), {res['date'][:10]}"
    ops = [r for r in res.get("ops", []) if "error" not in r and "unsupported" not in r]
    if ops:
        groups = [("memory", "GB/s", "raw OpenCL copy bandwidth"),
                  ("compute", "GFLOP/s", "raw CLBlast SGEMM")]
        fig, axes = plt.subplots(1, 2, figsize=(13, 0.45 * max(len(ops), 6) + 1.5))
        for ax, (kind, unit, limname) in zip(axes, groups):
            rows = [r for r in ops if r["kind"] == kind][::-1]
            ys = range(len(rows))
            ax.barh([y + 0.2 for y in ys], [r["ocl_rate"] for r in rows], height=0.4,
                    label="torch-ocl", color="#2a7ab9")
            ax.barh([y - 0.2 for y in ys], [r["cpu_rate"] for r in rows], height=0.4,
                    label="CPU PyTorch", color="#bbbbbb")
            ax.set_yticks(list(ys))
            ax.set_yticklabels([r["op"] + ("" if r["native"] else " (fallback)") for r in rows],
                               fontsize=8)
            lim = rows[0]["limit"] if rows else None
            if lim:
                ax.axvline(lim, color="#c0392b", ls="--", label=f"device limit: {limname}")
                for y, r in zip(ys, rows):
                    ax.text(r["ocl_rate"], y + 0.2, f" {r['ocl_rate'] / lim * 100:.0f}%",
                            va="center", fontsize=7)
            else:
                ax.set_title("no reference", fontsize=8, loc="right")
            ax.set_xlabel(unit)
            ax.set_title(f"{kind}-bound ops", fontsize=10, loc="left")
            ax.legend(fontsize=7, loc="lower right")
        fig.suptitle(f"Ops against the device limits - {title_dev}", fontsize=10)
        fig.tight_layout()
        p = os.path.join(outdir, "ops_vs_limits.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)
    models = [m for m in res.get("models", []) if m.get("ocl", {}).get("status") == "ok"]
    if models:
        fig, ax = plt.subplots(figsize=(8, 4))
        xs = range(len(models))
        ocl_ms = [m["ocl"]["step_s"] * 1e3 for m in models]
        first_ms = [m["ocl"]["first_step_s"] * 1e3 for m in models]
        cpu_ms = [m["cpu"]["step_s"] * 1e3 if m.get("cpu", {}).get("status") == "ok" else 0
                  for m in models]
        ax.bar([x - 0.27 for x in xs], first_ms, width=0.27, label="torch-ocl first step",
               color="#9ecae1")
        ax.bar(list(xs), ocl_ms, width=0.27, label="torch-ocl steady step", color="#2a7ab9")
        ax.bar([x + 0.27 for x in xs], cpu_ms, width=0.27, label="CPU PyTorch step",
               color="#bbbbbb")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{m['model'].replace('examples.', '')}\n({m['ocl']['kind']}, "
                            f"{'small' if m['small'] else 'full'})" for m in models], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("ms per step (log)")
        ax.legend(fontsize=8)
        ax.set_title(f"Model steps, median - {title_dev}", fontsize=9)
        fig.tight_layout()
        p = os.path.join(outdir, "model_steps.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)
    st = res.get("startup")
    if st and "error" not in st:
        fig, ax = plt.subplots(figsize=(6, 2.6))
        labels = ["cold kernel cache", "warm kernel cache"]
        imp = [st["cold"]["import_s"], st["warm"]["import_s"]]
        first = [st["cold"]["first_step_s"], st["warm"]["first_step_s"]]
        rest = [st[k]["process_s"] - st[k]["import_s"] - st[k]["first_step_s"]
                for k in ("cold", "warm")]
        ax.barh(labels, rest, label="interpreter start", color="#dddddd")
        ax.barh(labels, imp, left=rest, label="import torch", color="#bbbbbb")
        ax.barh(labels, first, left=[a + b for a, b in zip(rest, imp)],
                label="first training step", color="#2a7ab9")
        ax.set_xlabel("seconds")
        ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"Process start-up to first result - {title_dev}", fontsize=8)
        fig.tight_layout()
        p = os.path.join(outdir, "startup.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)
    return written


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmark ocl against its limits and CPU PyTorch",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--device", type=int, default=0, help="ocl device index (default 0)")
    p.add_argument("--quick", action="store_true", help="tiny sizes and few repetitions (seconds)")
    p.add_argument("--only", action="append", choices=SECTIONS, metavar="SECTION",
                   help=f"run only these sections (repeatable): {', '.join(SECTIONS)}")
    p.add_argument("--model", action="append", metavar="MODULE",
                   help="model workloads (repeatable; default mlp, cnn, gpt, minilm)")
    p.add_argument("--model-size", choices=("auto", "small", "full"), default="auto",
                   help="auto: small on CPU OpenCL devices and with --quick, full elsewhere")
    p.add_argument("--reps", type=int, help="repetitions per figure (default 7, --quick 3)")
    p.add_argument("--cpu-threads", type=int, help="torch.set_num_threads for the CPU baseline")
    p.add_argument("-o", "--output", help="write the results as JSON to this file")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--plot", metavar="DIR", help="write PNG charts into DIR (needs matplotlib)")
    p.add_argument("--from", dest="from_json", metavar="JSON",
                   help="do not measure: print/plot an earlier --output file")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--profile", metavar="TRACE",
                   help="instead of the suite: one step of the first --model (default mlp) under "
                        "torch.profiler; writes its Chrome trace to TRACE and prints the ops by "
                        "device time")


def run(args) -> int:
    if args.profile:
        return profile_step(device=args.device, spec=(args.model or ["mlp"])[0],
                            model_size=args.model_size, trace=args.profile)
    if args.from_json:
        with open(args.from_json) as f:
            res = json.load(f)
    else:
        try:
            res = bench(device=args.device, quick=args.quick, sections=args.only or SECTIONS,
                        models=args.model, model_size=args.model_size, reps=args.reps,
                        cpu_threads=args.cpu_threads, progress=not args.quiet)
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    if args.output and not args.from_json:
        with open(args.output, "w") as f:
            json.dump(res, f, indent=2)
    print(json.dumps(res, indent=2) if args.json else format_text(res))
    if args.plot:
        try:
            paths = plot(res, args.plot)
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"charts: {', '.join(paths)}", file=sys.stderr)
    failed = [r for r in res.get("ops", []) if "error" in r]
    failed += [m for m in res.get("models", []) if m.get("status") == "failed"]
    return 1 if failed or "error" in res.get("startup", {}) else 0
