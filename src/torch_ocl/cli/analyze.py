"""``python -m torch_ocl analyze SCRIPT [ARGS...]``: will my CUDA program run natively on ocl?

Runs SCRIPT in this process with its CUDA requests mapped to ``ocl`` (``"cuda"``/``"cuda:N"``,
``torch.device("cuda")``, ``.cuda()``, ``torch.cuda.is_available()`` and friends, autocast and
GradScaler) for the duration of the run only; the script file is never edited. Every aten op that
reaches the device is recorded: calls, whether it ran natively or on the CPU fallback, wall time,
bytes moved between host and device, and the first source line outside torch that called it.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import runpy
import sys
import sysconfig
import threading
import time
import textwrap
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import torch
import torch.utils._pytree as pytree
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import torch_ocl
from torch_ocl import _C

from ._progress import fit

_TORCH_DIR = os.path.dirname(torch.__file__)
_OCL_DIR = os.path.dirname(torch_ocl.__file__)
_STDLIB_DIRS = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})

# torch.cuda functions that have a torch.ocl twin with the same meaning.
_CUDA_TWINS = (
    "is_available", "device_count", "current_device", "set_device", "get_device_name",
    "get_device_properties", "get_device_capability", "synchronize", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
    "get_rng_state_all", "set_rng_state_all", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats", "memory_stats",
    "empty_cache", "mem_get_info", "set_per_process_memory_fraction", "is_bf16_supported",
    "is_initialized", "init", "Stream", "Event", "current_stream", "default_stream", "stream",
    "set_stream", "device", "device_of",
)
_COPY_OPS = ("aten::copy_", "aten::_to_copy", "aten::_copy_from", "aten::_copy_from_and_resize")


def _map_device(d: Any) -> Any:
    """cuda / cuda:N (str or torch.device) -> ocl / ocl:N; anything else unchanged."""
    if isinstance(d, torch.device) and d.type == "cuda":
        return torch.device("ocl", d.index) if d.index is not None else torch.device("ocl")
    if isinstance(d, str) and (d == "cuda" or d.startswith("cuda:")):
        return "ocl" + d[4:]
    return d


def _map_tree(obj: Any) -> Any:
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_map_tree(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _map_tree(v) for k, v in obj.items()}
    return _map_device(obj)


class CudaToOcl(TorchFunctionMode):
    """Rewrites CUDA device arguments of every torch function (factories, .to, .cuda) to ocl."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.cuda:
            self_, *rest = args
            device = rest[0] if rest else kwargs.get("device")
            target = "ocl" if device is None else (
                f"ocl:{device}" if isinstance(device, int) else _map_device(device))
            return self_.to(target, non_blocking=kwargs.get("non_blocking", False))
        return func(*_map_tree(args), **_map_tree(kwargs))


@dataclass
class OpRecord:
    op: str
    calls: int = 0
    seconds: float = 0.0
    compile_seconds: float = 0.0
    native_calls: int = 0
    fallback_calls: int = 0
    has_native_kernel: bool = False
    bytes_to_host: int = 0
    bytes_to_device: int = 0
    fallback_inside: list = field(default_factory=list)
    source: str = ""

    @property
    def where(self) -> str:
        if self.fallback_calls == 0:
            return "native"
        if self.native_calls == 0:
            return "fallback"
        return "mixed"


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _show_path(path: str) -> str:
    """Relative to the current directory when below it, absolute otherwise."""
    cwd = os.getcwd() + os.sep
    return path[len(cwd):] if path.startswith(cwd) else path


def _user_frame() -> str:
    """The innermost frame outside torch, torch_ocl and the standard library; for an op run by
    autograd, the backward node that ran it."""
    node = torch._C._current_autograd_node()
    if node is not None:
        return f"backward ({node.name()})"
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith((_TORCH_DIR, _OCL_DIR)) or fn.startswith(_STDLIB_DIRS)
                or fn.startswith("<")):
            return f"{_show_path(fn)}:{f.f_lineno}"
        f = f.f_back
    return "(no user frame)"


def _fallback_totals() -> dict[str, tuple]:
    return {r["op"]: (r["calls"], r["bytes_to_host"], r["bytes_to_device"], r["seconds"])
            for r in _C.fallback_records()}


def _compile_seconds() -> float:
    """Seconds spent compiling OpenCL programs so far, over the initialised devices."""
    return sum(_C.program_cache_stats(i)["compile_seconds"] for i in range(_C.device_count())
               if torch.ocl.is_initialized())


class OpRecorder(TorchDispatchMode):
    """Records every aten op with an ocl tensor among its inputs or outputs."""

    def __init__(self, sync: bool = True):
        super().__init__()
        self.sync = sync
        self.ops: dict[str, OpRecord] = {}
        self.dtypes: dict[str, int] = {}
        self.lock = threading.Lock()  # backward runs on another thread

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        before = _fallback_totals()
        compiled = _compile_seconds()
        t0 = time.perf_counter()
        out = func(*args, **kwargs)
        tin = [t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        tout = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
        ocl = [t for t in tin + tout if t.device.type == "ocl"]
        if not ocl:
            return out
        if self.sync:
            torch.ocl.synchronize(ocl[0].device)
        dt = time.perf_counter() - t0
        compiled = _compile_seconds() - compiled
        after = _fallback_totals()
        name = func.name()
        fell = {op: v for op, v in after.items() if before.get(op, (0,))[0] != v[0]}
        to_host = to_dev = 0
        for op, v in fell.items():
            b = before.get(op, (0, 0, 0, 0.0))
            to_host += v[1] - b[1]
            to_dev += v[2] - b[2]
        base = name.split(".")[0]
        if base in _COPY_OPS or base == "aten::_local_scalar_dense":
            src = tin[1] if base == "aten::copy_" and len(tin) > 1 else tin[0]
            dst = tin[0] if base == "aten::copy_" else (tout[0] if tout else None)
            if base == "aten::_local_scalar_dense":
                to_host += src.element_size()
            elif dst is not None and src.device.type != dst.device.type:
                if dst.device.type == "ocl":
                    to_dev += _nbytes(src)
                else:
                    to_host += _nbytes(src)
        with self.lock:
            rec = self.ops.get(name)
            if rec is None:
                rec = self.ops[name] = OpRecord(
                    op=name, source=_user_frame(),
                    has_native_kernel=torch._C._dispatch_has_kernel_for_dispatch_key(
                        name, "PrivateUse1"))
            rec.calls += 1
            rec.seconds += dt
            rec.compile_seconds += compiled
            rec.bytes_to_host += to_host
            rec.bytes_to_device += to_dev
            if fell:
                rec.fallback_calls += 1
                for op in fell:
                    if op != name and op not in rec.fallback_inside:
                        rec.fallback_inside.append(op)
            else:
                rec.native_calls += 1
            for t in ocl:
                key = str(t.dtype).replace("torch.", "")
                self.dtypes[key] = self.dtypes.get(key, 0) + 1
        return out


class _Features:
    """Things the script used that torch-ocl does not support (or supports differently)."""

    def __init__(self):
        self.items: dict[str, dict] = {}

    def add(self, name: str, note: str) -> None:
        e = self.items.setdefault(name, {"feature": name, "uses": 0, "note": note})
        e["uses"] += 1


def ocl_autocast_supported() -> bool:
    """torch reports autocast as available for every PrivateUse1 backend, but entering it needs
    the device module to list its AMP dtypes."""
    return torch.amp.is_autocast_available("ocl") and hasattr(torch.ocl, "get_amp_supported_dtype")


@contextlib.contextmanager
def cuda_as_ocl(features: Optional[_Features] = None):
    """For the duration of the block, CUDA requests go to ocl (in this process only)."""
    features = features or _Features()
    saved: list = []

    def setattr_saved(obj, name, value):
        saved.append((obj, name, getattr(obj, name, None)))
        setattr(obj, name, value)

    for name in _CUDA_TWINS:
        if hasattr(torch.ocl, name):
            setattr_saved(torch.cuda, name, getattr(torch.ocl, name))

    # Every other public torch.cuda function is recorded as an unsupported feature when called.
    for name, fn in list(vars(torch.cuda).items()):
        if name.startswith("_") or name in _CUDA_TWINS or not inspect.isfunction(fn):
            continue

        def recorder(*a, __name=name, __fn=fn, **k):
            # only the script's own calls count: torch probes some of these internally
            if not sys._getframe(1).f_code.co_filename.startswith(_TORCH_DIR):
                features.add(f"torch.cuda.{__name}", "CUDA-only API with no ocl equivalent")
            return __fn(*a, **k)

        setattr_saved(torch.cuda, name, recorder)

    def module_cuda(self, device=None):
        return self.to("ocl" if device is None else
                       (f"ocl:{device}" if isinstance(device, int) else _map_device(device)))

    setattr_saved(torch.nn.Module, "cuda", module_cuda)

    autocast_cls = torch.amp.autocast_mode.autocast
    orig_autocast_init = autocast_cls.__init__
    ocl_autocast = ocl_autocast_supported()

    def autocast_init(self, device_type, *a, **k):
        if device_type == "cuda":
            if ocl_autocast:
                device_type = "ocl"
            else:
                features.add("autocast (mixed precision)",
                             "no ocl autocast yet: the region ran in full precision")
                device_type, k["enabled"] = "cpu", False
        orig_autocast_init(self, device_type, *a, **k)

    setattr_saved(autocast_cls, "__init__", autocast_init)

    scaler_cls = torch.amp.GradScaler
    orig_scaler_init = scaler_cls.__init__

    def scaler_init(self, device="cuda", *a, **k):
        orig_scaler_init(self, _map_device(device), *a, **k)

    setattr_saved(scaler_cls, "__init__", scaler_init)

    def compile_(model=None, *a, **k):
        features.add("torch.compile", "analyze runs the model eagerly to see every aten op")
        if model is None:
            return lambda m: m
        return model

    setattr_saved(torch, "compile", compile_)

    mode = CudaToOcl()
    try:
        with mode:
            yield features
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


def analyze(script: str, argv: tuple = (), *, sync: bool = True, quiet_script: bool = False
            ) -> dict[str, Any]:
    """Runs ``script`` with CUDA mapped to ocl and returns the report as a dict."""
    if _C.device_count() == 0:
        raise RuntimeError(f"torch-ocl: {_C.discovery_error()} Run `python -m torch_ocl doctor`.")
    script = os.path.abspath(script)
    if not os.path.isfile(script):
        raise FileNotFoundError(f"no such script: {script}")
    features = _Features()
    recorder = OpRecorder(sync=sync)
    old_argv, old_path = sys.argv[:], sys.path[:]
    sys.argv = [script, *argv]
    sys.path.insert(0, os.path.dirname(script))
    torch_ocl.reset_fallback_report()
    status, error = 0, None
    t0 = time.perf_counter()
    out = contextlib.redirect_stdout(sys.stderr) if quiet_script else contextlib.nullcontext()
    try:
        with out, warnings.catch_warnings(), cuda_as_ocl(features), recorder:
            warnings.filterwarnings("ignore", message="torch-ocl: .* no native ocl kernel")
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception as e:  # the report is most useful exactly when the script breaks
        status = 1
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"{f.filename}:{f.lineno}" for f in reversed(tb)
                      if f.filename == script), "")
        error = {"type": type(e).__name__, "message": str(e).strip()[:2000], "where": where}
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
    if torch.ocl.is_initialized():
        torch.ocl.synchronize()
    wall = time.perf_counter() - t0
    return _summarise(script, argv, recorder, features, status, error, wall, sync)


def _summarise(script, argv, recorder, features, status, error, wall, sync) -> dict[str, Any]:
    ops = sorted(recorder.ops.values(), key=lambda r: (-r.seconds, r.op))
    calls = sum(r.calls for r in ops)
    native_calls = sum(r.native_calls for r in ops)
    secs = sum(r.seconds for r in ops)
    native_secs = sum(r.seconds * r.native_calls / r.calls for r in ops if r.calls)
    fallback_ops = sorted({r.op for r in ops if r.fallback_calls})
    records = torch_ocl.fallback_report(print_table=False)
    props = torch.ocl.get_device_properties(0)
    feats = list(features.items.values())
    if "float64" in recorder.dtypes and not props.fp64:
        feats.append({"feature": "float64 tensors", "uses": recorder.dtypes["float64"],
                      "note": "this device has no cl_khr_fp64"})
    if "float16" in recorder.dtypes and not props.fp16:
        feats.append({"feature": "float16 tensors", "uses": recorder.dtypes["float16"],
                      "note": "no cl_khr_fp16: stored as half, computed in float"})
    for rec in records:  # what actually ran on the CPU, with the op the script called
        callers = [r for r in ops if rec["op"] == r.op or rec["op"] in r.fallback_inside]
        via = "" if not callers or callers[0].op == rec["op"] else f" (inside {callers[0].op})"
        where = f", first from {callers[0].source}" if callers else ""
        feats.append({"feature": rec["op"], "uses": rec["calls"],
                      "note": f"no native ocl kernel: ran on the CPU fallback{via}{where}"})
    return {
        "script": script,
        "args": list(argv),
        "device": f"{props.name} ({props.platform_name})",
        "torch_ocl_version": torch_ocl.__version__,
        "exit_status": status,
        "error": error,
        "wall_seconds": wall,
        "synchronized_per_op": sync,
        "summary": {
            "ops": len(ops),
            "calls": calls,
            "native_calls": native_calls,
            "native_call_share": native_calls / calls if calls else 1.0,
            "op_seconds": secs,
            "compile_seconds": sum(r.compile_seconds for r in ops),
            "native_seconds": native_secs,
            "native_time_share": native_secs / secs if secs else 1.0,
            "bytes_to_host": sum(r.bytes_to_host for r in ops),
            "bytes_to_device": sum(r.bytes_to_device for r in ops),
        },
        "fallback_ops": fallback_ops,
        "fallback_report": records,
        "unsupported_features": feats,
        "dtypes": recorder.dtypes,
        "ops": [dict(asdict(r), where=r.where) for r in ops],
    }


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f}"


def summary_line(rep: dict) -> str:
    s = rep["summary"]
    return (f"{s['native_call_share'] * 100:.1f}% of {s['calls']} op calls and "
            f"{s['native_time_share'] * 100:.1f}% of {s['op_seconds'] * 1e3:.1f} ms op time "
            f"({s['compile_seconds'] * 1e3:.0f} ms of it compiling kernels) ran natively on ocl; {len(rep['fallback_ops'])} op(s) fell back to the CPU")


def format_text(rep: dict, top: int = 25) -> str:
    out = [f"torch-ocl analyze: {_show_path(rep['script'])} on {rep['device']}",
           f"script exit status {rep['exit_status']}, {rep['wall_seconds']:.2f} s"
           + ("" if rep["synchronized_per_op"] else " (ops not synchronized: times are launch times)")]
    if rep["error"]:
        out.append(f"script raised {rep['error']['type']} at {rep['error']['where']}: "
                   f"{rep['error']['message'].splitlines()[0][:80] if rep['error']['message'] else ''}")
    out.append("")
    out.append(f"{'op':<32}{'calls':>6} {'where':<9}{'ms':>9}{'compile':>8}{'MiB h<>d':>9}"
               "  first called from")
    for r in rep["ops"][:top]:
        moved = r["bytes_to_host"] + r["bytes_to_device"]
        where = r["where"] if r["where"] != "native" or not r["fallback_inside"] else "mixed"
        comp = f"{r['compile_seconds'] * 1e3:.0f}" if r["compile_seconds"] else "-"
        out.append(f"{r['op'][:31]:<32}{r['calls']:>6} {where:<9}{r['seconds'] * 1e3:>9.2f}"
                   f"{comp:>8}{_mib(moved) if moved else '-':>9}  {r['source'][-32:]}")
    if len(rep["ops"]) > top:
        out.append(f"... {len(rep['ops']) - top} more ops (--top N, or --json for all)")
    out.append("")
    out += textwrap.wrap("summary: " + summary_line(rep), 100, subsequent_indent="  ")
    if rep["unsupported_features"]:
        out.append("not supported natively:")
        for f in rep["unsupported_features"]:
            out += textwrap.wrap(f"- {f['feature']} ({f['uses']}x): {f['note']}", 100,
                                 initial_indent="  ", subsequent_indent="    ")
    else:
        out.append("not supported natively: nothing - every op ran on the device")
    return fit("\n".join(out))


def format_markdown(rep: dict) -> str:
    out = [f"### torch-ocl analyze: `{os.path.basename(rep['script'])}`", "",
           f"- device: {rep['device']}, torch-ocl {rep['torch_ocl_version']}, "
           f"torch {torch.__version__}",
           f"- script exit status: {rep['exit_status']}, wall time {rep['wall_seconds']:.2f} s",
           f"- **{summary_line(rep)}**"]
    if rep["error"]:
        out.append(f"- script raised `{rep['error']['type']}` at `{rep['error']['where']}`")
    out += ["", "| op | calls | where | ms | of which compile ms | MiB host<->device | "
            "first called from |", "|---|---:|---|---:|---:|---:|---|"]
    for r in rep["ops"]:
        moved = r["bytes_to_host"] + r["bytes_to_device"]
        out.append(f"| `{r['op']}` | {r['calls']} | {r['where']} | {r['seconds'] * 1e3:.2f} | "
                   f"{_mib(moved) if moved else '-'} | `{r['source']}` |")
    out += ["", "**Not supported natively**", ""]
    if rep["unsupported_features"]:
        out += [f"- `{f['feature']}` ({f['uses']}x): {f['note']}"
                for f in rep["unsupported_features"]]
    else:
        out.append("- nothing: every op ran on the device")
    return "\n".join(out) + "\n"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "analyze", help="run a CUDA script on ocl and report which ops run natively",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
        epilog="Exit status: the script's own (1 when it raised), 3 with --fail-on-fallback when "
               "an op fell back to the CPU, 2 on bad usage.")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the report as JSON")
    fmt.add_argument("--markdown", action="store_true",
                     help="print a Markdown report to paste into an issue")
    p.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    p.add_argument("--top", type=int, default=25, help="ops shown in the text table (default 25)")
    p.add_argument("--no-sync", action="store_true",
                   help="do not synchronize after each op (faster; times become launch times)")
    p.add_argument("--fail-on-fallback", action="store_true",
                   help="exit with status 3 when any op ran on the CPU fallback")


def run(args) -> int:
    machine = args.json or args.markdown
    try:
        rep = analyze(args.script, tuple(args.args), sync=not args.no_sync,
                      quiet_script=machine and not args.output)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        text = json.dumps(rep, indent=2, default=str)
    elif args.markdown:
        text = format_markdown(rep)
    else:
        text = format_text(rep, args.top)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + ("\n" if not text.endswith("\n") else ""))
        print(f"report written to {args.output}; summary: {summary_line(rep)}", file=sys.stderr)
    else:
        print(text)
    if rep["exit_status"]:
        return int(rep["exit_status"]) if isinstance(rep["exit_status"], int) else 1
    if args.fail_on_fallback and rep["fallback_ops"]:
        return 3
    return 0
