"""``python -m torch_ocl doctor``: does my OpenCL device work with torch-ocl?

Lists every OpenCL platform and device (also those TORCH_OCL_DEVICES filtered away) with the
properties that matter, says which one is ``ocl:0``, where the kernel caches live and how big they
are, whether autoload is on, and runs a self-test on each device against CPU PyTorch: a few ops
and one tiny training step. Exit status 1 when no device works, with the fix spelled out.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from typing import Any, Optional

import torch

import torch_ocl
from torch_ocl import _C

from ._progress import fit

FIX = (
    "How to fix: install an OpenCL driver and the ICD loader, then re-run "
    "`python -m torch_ocl doctor`.\n"
    "  - CPU device (any x86/ARM machine): sudo apt-get install ocl-icd-libopencl1 pocl-opencl-icd\n"
    "  - NVIDIA GPU: the NVIDIA driver (it ships libnvidia-opencl; check /etc/OpenCL/vendors)\n"
    "  - AMD GPU: ROCm OpenCL (rocm-opencl-runtime) or mesa-opencl-icd (rusticl)\n"
    "  - Intel GPU: intel-opencl-icd\n"
    "  - check what OpenCL itself sees with `clinfo -l`"
)


def _human_bytes(n: Optional[int]) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _dir_size(path: Optional[str]) -> tuple[int, int]:
    """(bytes, files) under path; (0, 0) when it does not exist."""
    total = files = 0
    if not path or not os.path.isdir(path):
        return 0, 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(root, name))
                files += 1
            except OSError:
                pass
    return total, files


def _default_cache_dir() -> Optional[str]:
    """Where torch-ocl's on-disk kernel cache lives (mirrors DiskCache::fromEnvironment)."""
    d = os.environ.get("TORCH_OCL_CACHE_DIR")
    if d:
        return d
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "torch_ocl")
    home = os.environ.get("HOME")
    return os.path.join(home, ".cache", "torch_ocl") if home else None


def _pocl_cache_dir() -> Optional[str]:
    d = os.environ.get("POCL_CACHE_DIR")
    if d:
        return d
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "pocl", "kcache")
    home = os.environ.get("HOME")
    return os.path.join(home, ".cache", "pocl", "kcache") if home else None


def kernel_caches() -> dict[str, Any]:
    ours = _default_cache_dir()
    enabled, every = None, True
    if _C.device_count() > 0:
        stats = _C.program_cache_stats(0)
        ours, enabled = stats["disk_dir"] or ours, bool(stats["disk_enabled"])
        every = bool(stats["disk_every_program"])
    size, files = _dir_size(ours)
    out = {
        "torch_ocl": {"dir": ours, "enabled": enabled, "bytes": size, "files": files,
                      "env": "TORCH_OCL_CACHE_DIR, TORCH_OCL_CACHE=0/1"},
    }
    if enabled:
        out["torch_ocl"]["programs"] = ("every program" if every else
                                        "generated and compile_kernel programs (eager ones: the "
                                        "driver's own cache)")
    pocl = _pocl_cache_dir()
    if pocl:
        psize, pfiles = _dir_size(pocl)
        out["pocl"] = {"dir": pocl, "bytes": psize, "files": pfiles, "env": "POCL_CACHE_DIR"}
    return out


def autoload_status() -> dict[str, Any]:
    """Whether ``import torch`` loads torch-ocl by itself (torch.backends entry point)."""
    from importlib import metadata

    try:
        eps = metadata.entry_points(group="torch.backends")
    except TypeError:  # pragma: no cover - Python < 3.10
        eps = metadata.entry_points().get("torch.backends", [])
    registered = any(ep.value.split(":")[0].startswith("torch_ocl") for ep in eps)
    env = os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "1")
    return {
        "entry_point_registered": registered,
        "TORCH_DEVICE_BACKEND_AUTOLOAD": env,
        "enabled": registered and env != "0",
    }


# ---- self-test ---------------------------------------------------------------------------------


def _check(name: str, fn, results: list) -> None:
    t0 = time.perf_counter()
    try:
        fn()
        results.append({"test": name, "ok": True, "seconds": time.perf_counter() - t0})
    except Exception as e:  # the process must stay usable: report and go on
        results.append({"test": name, "ok": False, "seconds": time.perf_counter() - t0,
                        "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})


def _close(actual: torch.Tensor, expected: torch.Tensor, rtol=1e-4, atol=1e-5) -> None:
    torch.testing.assert_close(actual.cpu(), expected, rtol=rtol, atol=atol)


def self_test(index: int) -> dict[str, Any]:
    """A few ops and one training step on ``ocl:index``, each compared with CPU PyTorch."""
    dev = torch.device("ocl", index)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(33, 17, generator=g)
    b = torch.randn(17, 9, generator=g)
    results: list = []
    torch_ocl.reset_fallback_report()

    _check("copy host<->device", lambda: _close(a.to(dev), a, rtol=0, atol=0), results)
    _check("add/mul (broadcast)",
           lambda: _close(a.to(dev) * 2 + a[0].to(dev), a * 2 + a[0]), results)
    _check("sum/mean", lambda: _close(torch.stack([a.to(dev).sum(), a.to(dev).mean()]),
                                      torch.stack([a.sum(), a.mean()])), results)
    _check("matmul", lambda: _close(a.to(dev) @ b.to(dev), a @ b, rtol=1e-4, atol=1e-4), results)
    _check("softmax", lambda: _close(torch.softmax(a.to(dev), 1), torch.softmax(a, 1)), results)

    def train_step():
        x = torch.randn(16, 8, generator=g)
        y = torch.randint(0, 3, (16,), generator=g)
        losses = []
        for device in ("cpu", dev):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                        torch.nn.Linear(16, 3)).to(device)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(2):
                loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
                opt.zero_grad()
                loss.backward()
                opt.step()
            losses.append((loss.detach().cpu(), model[0].weight.detach().cpu()))
        _close(losses[1][0], losses[0][0], rtol=1e-4, atol=1e-5)
        _close(losses[1][1], losses[0][1], rtol=1e-4, atol=1e-5)

    _check("training step (Linear, ReLU, cross_entropy, SGD)", train_step, results)
    torch.ocl.synchronize(index)
    fallbacks = [r["op"] for r in torch_ocl.fallback_report(print_table=False)]
    torch_ocl.reset_fallback_report()
    return {"ok": all(r["ok"] for r in results), "tests": results, "cpu_fallback_ops": fallbacks}


# ---- the report --------------------------------------------------------------------------------


def gemm_info(index: int) -> dict[str, Any]:
    """Which matrix-engine provider the device runs per dtype, and the host BLAS it may call."""
    try:
        table = _C._gemm_tuning_table(index)
        tuned: dict[str, dict[str, int]] = {}
        # Per operand layout (the class's transposition bits: classes 72 * (A^T + 2 B^T) on).
        layouts: dict[str, dict[str, int]] = {}
        for dtype, cls, prov in table:
            tuned.setdefault(dtype, {})
            tuned[dtype][prov] = tuned[dtype].get(prov, 0) + 1
            lay = {0: "A @ B", 1: "A^T @ B", 2: "A @ B^T", 3: "A^T @ B^T"}[int(cls) // 72 % 4]
            per = layouts.setdefault(f"{dtype.lower()} {lay}", {})
            per[prov] = per.get(prov, 0) + 1
        return {"providers": _C._gemm_providers(index), "caps": _C._gemm_device_caps(index),
                "shape_rule": _C._gemm_shape_rule(index),
                "host_blas": _C._host_blas_info(), "forced": _C._forced_gemm_provider(),
                "tuning": {"path": _C._gemm_tuning_path(), "enabled": _C._gemm_tuning_enabled(),
                           "classes": len(table), "by_dtype": tuned,
                           "by_layout": layouts}}
    except Exception as e:  # a broken device: say why instead of failing the whole report
        return {"error": str(e)}


def doctor(run_self_test: bool = True) -> dict[str, Any]:
    """Everything ``doctor`` prints, as a dict (also the ``--json`` output)."""
    count = _C.device_count()
    report: dict[str, Any] = {
        "torch_ocl_version": torch_ocl.__version__,
        "torch_version": torch.__version__,
        "python": sys.version.split()[0],
        "TORCH_OCL_DEVICES": os.environ.get("TORCH_OCL_DEVICES"),
        "device_count": count,
        "discovery_error": _C.discovery_error() or None,
        "devices": [],
        "kernel_cache": kernel_caches(),
        "autoload": autoload_status(),
        "driver_threads": _C._driver_threads(),
    }
    try:
        found = _C.all_devices()
    except Exception as e:  # discovery itself broke: keep going to print the fix
        found = []
        report["discovery_error"] = report["discovery_error"] or str(e)
    for d in found:
        entry = dict(d)
        if d["ocl_index"] is not None:
            entry["gemm"] = gemm_info(d["ocl_index"])
        if d["ocl_index"] is not None and run_self_test:
            with warnings.catch_warnings():  # fallbacks are listed in the report instead
                warnings.filterwarnings("ignore", message="torch-ocl: .* no native ocl kernel")
                entry["self_test"] = self_test(d["ocl_index"])
        report["devices"].append(entry)
    working = [d for d in report["devices"]
               if d["ocl_index"] is not None and (not run_self_test or d["self_test"]["ok"])]
    report["working_devices"] = [f"ocl:{d['ocl_index']}" for d in working]
    report["ok"] = bool(working)
    report["autograd_thread"] = _C._autograd_thread()  # known once a device was initialised
    if not report["ok"]:
        report["fix"] = _fix_text(report)
    return report


def _fix_text(report: dict) -> str:
    lines = []
    sel = report["TORCH_OCL_DEVICES"]
    if report["devices"] and report["device_count"] == 0:
        lines.append(
            f"OpenCL sees {len(report['devices'])} device(s), but TORCH_OCL_DEVICES={sel!r} "
            "selects none of them. Fix: unset TORCH_OCL_DEVICES, or set it to indices from the "
            "'#' column above (e.g. TORCH_OCL_DEVICES=0)."
        )
    elif report["devices"] and report["device_count"] > 0:
        lines.append(
            "Every device failed its self-test (see above). Fix: update the OpenCL driver, try "
            "another device with TORCH_OCL_DEVICES=<#>, and report the failing test at "
            "https://github.com/ (include `python -m torch_ocl doctor --json`)."
        )
    else:
        lines.append(f"No OpenCL device found. {FIX}")
    return "\n".join(lines)


def format_text(report: dict) -> str:
    out = []
    out.append(f"torch-ocl {report['torch_ocl_version']}, torch {report['torch_version']}, "
               f"Python {report['python']}")
    if report["TORCH_OCL_DEVICES"] is not None:
        out.append(f"TORCH_OCL_DEVICES={report['TORCH_OCL_DEVICES']!r}")
    out.append("")
    if not report["devices"]:
        out.append("OpenCL devices: none")
    else:
        out.append("OpenCL devices (# is the index TORCH_OCL_DEVICES uses):")
        out.append(f"  {'#':>2} {'torch':<7}{'type':<6}{'name':<34}{'platform':<30}")
        for d in report["devices"]:
            name = d["name"][:33]
            out.append(f"  {d['index']:>2} "
                       f"{'ocl:' + str(d['ocl_index']) if d['ocl_index'] is not None else '-':<7}"
                       f"{d['type']:<6}{name:<34}{d['platform'][:29]:<30}")
        for d in report["devices"]:
            p = d.get("properties")
            tag = f"ocl:{d['ocl_index']}" if d["ocl_index"] is not None else "filtered out"
            out.append("")
            out.append(f"  [{d['index']}] {d['name']} ({tag})")
            if p is None:
                out.append(f"      properties unavailable: {d.get('error')}")
                continue
            out.append(f"      vendor {p['vendor']}, driver {p['driver_version']}, "
                       f"{p['device_version']}")
            out.append(f"      {p['opencl_c_version']}; {p['compute_units']} compute units, "
                       f"work-group size {p['max_work_group_size']}")
            out.append(f"      memory {_human_bytes(p['total_memory'])}, max allocation "
                       f"{_human_bytes(p['max_alloc_size'])}, local "
                       f"{_human_bytes(p['local_memory'])}")
            yn = lambda v: "yes" if v else "no"  # noqa: E731
            out.append(f"      float16 {yn(p['fp16'])}, float64 {yn(p['fp64'])}, "
                       f"bfloat16 yes (storage, float arithmetic)")
            gm = d.get("gemm")
            if gm is not None and "providers" in gm:
                provs = ", ".join(f"{k.lower()} {v}" for k, v in gm["providers"].items())
                out.append(f"      GEMM: {provs}" + (f" (forced: {gm['forced']})"
                                                       if gm["forced"] != "auto" else ""))
                tu = gm.get("tuning", {})
                if tu.get("classes"):
                    per = "; ".join(f"{dt.lower()}: " + ", ".join(f"{p} {n}" for p, n in c.items())
                                    for dt, c in tu["by_dtype"].items())
                    out.append(f"        tuned by shape class (warmup, {tu['classes']} classes"
                               f"{'' if tu['enabled'] else ', disabled'}): {per}")
                    for lay, c in tu.get("by_layout", {}).items():
                        out.append(f"          {lay}: "
                                   + ", ".join(f"{p} {n}" for p, n in sorted(c.items())))
                    out.append(f"        table: {tu['path']}")
                elif gm["shape_rule"]:
                    out.append(f"        by shape: {gm['shape_rule']} (not tuned: run "
                               "`python -m torch_ocl warmup`)")
                if tu.get("classes") and gm["shape_rule"]:
                    out.append(f"        untuned classes by shape: {gm['shape_rule']}")
                hb = gm["host_blas"]
                if "host_blas" in gm["providers"].values():
                    out.append(f"      host BLAS (native kernel): {hb['library']}, "
                               f"{hb['threads']} threads; {hb['config']}")
                elif gm["caps"]["native_kernel"] and gm["caps"]["host_unified_memory"]:
                    out.append(f"      host BLAS unavailable: {hb['error']}")
            elif gm is not None:
                out.append(f"      GEMM providers unavailable: {gm['error']}")
            st = d.get("self_test")
            if st is not None:
                passed = sum(t["ok"] for t in st["tests"])
                out.append(f"      self-test: {'PASS' if st['ok'] else 'FAIL'} "
                           f"({passed}/{len(st['tests'])} vs CPU PyTorch)")
                for t in st["tests"]:
                    if not t["ok"]:
                        out.append(f"        FAIL {t['test']}: {t['error'][:70]}")
                if st["cpu_fallback_ops"]:
                    out.append(f"      ops that ran on the CPU fallback: "
                               f"{', '.join(st['cpu_fallback_ops'])}")
    out.append("")
    kc = report["kernel_cache"]
    ours = kc["torch_ocl"]
    state = {True: "on", False: "off (the driver keeps its own cache)", None: "unknown"}
    out.append(f"kernel cache: {ours['dir']} ({_human_bytes(ours['bytes'])}, {ours['files']} "
               f"files), {state[ours['enabled']]}"
               + (f", for {ours['programs']}" if "programs" in ours else ""))
    if "pocl" in kc:
        out.append(f"PoCL kernel cache: {kc['pocl']['dir']} ({_human_bytes(kc['pocl']['bytes'])}, "
                   f"{kc['pocl']['files']} files)")
    dt = report["driver_threads"]
    if dt["policy"] == "batch":
        out.append(f"CPU driver's worker threads: SCHED_BATCH ({dt['threads']} threads; "
                   "TORCH_OCL_DRIVER_THREADS=normal leaves them as the driver made them)")
    elif dt["detail"]:
        out.append(f"CPU driver's worker threads: left as they are ({dt['detail']})")
    at = report.get("autograd_thread")
    if at and at["policy"] == "caller":
        out.append("autograd: backward of ocl tensors runs on the thread that initialised the "
                   "device (TORCH_OCL_AUTOGRAD_THREAD=device: PyTorch's device thread)")
    elif at and at["policy"] == "device":
        out.append("autograd: backward on PyTorch's device thread (TORCH_OCL_AUTOGRAD_THREAD=device)")
    al = report["autoload"]
    out.append(f"autoload (import torch loads torch_ocl): {'on' if al['enabled'] else 'off'}"
               + ("" if al["entry_point_registered"] else " - entry point missing, reinstall")
               + (" - TORCH_DEVICE_BACKEND_AUTOLOAD=0" if al["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "0"
                  else ""))
    out.append("")
    if report["ok"]:
        out.append(f"OK: working device(s): {', '.join(report['working_devices'])}")
    else:
        out.append("FAILED: no working OpenCL device.")
        if report["discovery_error"]:
            out.append(f"torch-ocl says: {report['discovery_error']}")
        out.append(report["fix"])
    return fit("\n".join(out))


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="does my OpenCL device work?",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-self-test", action="store_true",
                   help="only list devices and settings; run nothing on them")


def run(args) -> int:
    report = doctor(run_self_test=not args.no_self_test)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(format_text(report))
    return 0 if report["ok"] else 1
