"""`python -m torch_ocl` doctor / analyze / bench / warmup on the test device (small sizes).

Commands run in-process through torch_ocl.cli.main where the process state allows it, and in
a fresh interpreter where they must (device filtering happens at discovery, warmup must start
with an empty in-memory kernel cache, `python -m` itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import cpu_only_ops
import torch_ocl
from torch_ocl.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(args, env=None, cwd=None, timeout=240):
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run([sys.executable, "-m", "torch_ocl", *args], capture_output=True,
                       text=True, env=full_env, cwd=cwd or ROOT, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# A tiny workload that follows the examples/<name>.py contract (WORKLOAD.md).
TINY_WORKLOAD = '''
from dataclasses import dataclass
from typing import Callable
import torch

@dataclass
class Workload:
    name: str
    kind: str
    items_per_step: int
    model: torch.nn.Module
    step: Callable[[], torch.Tensor]

def workload(device="ocl", *, seed=0, small=False):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(8, 16, generator=g).to(device)
    y = torch.randint(0, 4, (8,), generator=g).to(device)

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    return Workload("tiny", "train", 8, model, step)
'''

NEEDS_EXTRA = '''
def workload(device="ocl", *, seed=0, small=False):
    raise ImportError("pip install some-package-that-is-not-here")
'''


@pytest.fixture
def examples_dir(tmp_path, monkeypatch):
    """A directory holding clitest_examples/{tiny,extra}.py, made the current directory."""
    pkg = tmp_path / "clitest_examples"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tiny.py").write_text(TINY_WORKLOAD)
    (pkg / "extra.py").write_text(NEEDS_EXTRA)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---- help and usage ----------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", ["doctor", "analyze", "bench", "warmup"])
def test_every_command_has_help(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main([cmd, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m torch_ocl " + cmd)
    assert max(len(line) for line in out.splitlines()) <= 100


def test_no_command_and_bad_usage(capsys):
    assert main([]) == 2
    assert "doctor" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["nosuchcommand"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["bench", "--only", "nosuchsection"])
    assert e.value.code == 2


# ---- doctor ------------------------------------------------------------------------------------


def test_doctor_text(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "ocl:0" in out
    assert "self-test: PASS" in out
    assert "kernel cache:" in out and "autoload" in out
    assert out.rstrip().splitlines()[-1].startswith("OK: working device(s): ocl:0")
    assert max(len(line) for line in out.splitlines()) <= 100


def test_doctor_json(capsys):
    assert main(["doctor", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] is True and rep["device_count"] == torch.ocl.device_count()
    first = next(d for d in rep["devices"] if d["ocl_index"] == 0)
    props = first["properties"]
    assert props["name"] == torch.ocl.get_device_name(0)
    assert props["max_alloc_size"] > 0 and props["compute_units"] > 0
    assert props["fp64"] == torch.ocl.get_device_properties(0).fp64
    assert first["self_test"]["ok"], first["self_test"]
    assert {t["test"] for t in first["self_test"]["tests"]} >= {"matmul", "softmax"}
    assert rep["kernel_cache"]["torch_ocl"]["dir"]
    assert rep["autoload"]["entry_point_registered"] is True


def test_doctor_fails_clearly_when_every_device_is_filtered_away():
    n = len(torch_ocl._C.all_devices())
    rc, out, err = run_cli(["doctor"], env={"TORCH_OCL_DEVICES": str(n + 5)})
    assert rc == 1, (out, err)
    assert "FAILED: no working OpenCL device." in out
    assert "unset TORCH_OCL_DEVICES" in " ".join(out.split())
    assert "filtered out" in out  # the devices are still listed, marked as such


def test_doctor_fails_with_install_hint_without_any_platform(tmp_path):
    # An empty vendor directory: the ICD loader finds no OpenCL platform at all.
    rc, out, _ = run_cli(["doctor", "--json"], env={"OCL_ICD_VENDORS": str(tmp_path),
                                                    "OPENCL_VENDOR_PATH": str(tmp_path)})
    rep = json.loads(out)
    assert rc == 1 and rep["ok"] is False and rep["device_count"] == 0 and rep["devices"] == []
    assert "no OpenCL platform" in rep["discovery_error"]
    assert "pocl-opencl-icd" in rep["fix"] and "NVIDIA driver" in rep["fix"]
    assert "clinfo" in rep["fix"]


# ---- analyze -----------------------------------------------------------------------------------

CUDA_SCRIPT = (
    cpu_only_ops.DEFINE_SOURCE
    + '''
import sys

assert torch.cuda.is_available(), "analyze maps CUDA to ocl"
dev = torch.device("cuda")
x = torch.randn(64, 32).cuda()
w = torch.randn(32, 16, device="cuda:0", requires_grad=True)
y = (x @ w).relu().sum()
y.backward()
z = torch.ops.ocl_test.cpu_gcd(x.long(), torch.full_like(x, 6).long())  # FALLBACK_LINE
print("devices", x.device.type, w.grad.device.type, z.device.type)
with torch.autocast("cuda", dtype=torch.bfloat16):
    a = x @ w.detach()
print("autocast", a.device.type, a.dtype)  # float32 when autocast is not supported
torch.cuda.synchronize()
if len(sys.argv) > 1 and sys.argv[1] == "--fail":
    raise ValueError("the script itself failed")
'''
)


@pytest.fixture
def cuda_script(tmp_path):
    p = tmp_path / "train_cuda.py"
    p.write_text(CUDA_SCRIPT)
    line = next(i for i, s in enumerate(CUDA_SCRIPT.splitlines(), 1) if "FALLBACK_LINE" in s)
    return str(p), line


def test_analyze_json_lists_fallback_and_native_ops(cuda_script, capsys):
    script, fallback_line = cuda_script
    assert main(["analyze", "--json", script]) == 0
    captured = capsys.readouterr()
    rep = json.loads(captured.out)  # the script's own prints went to stderr
    assert "devices ocl ocl ocl" in captured.err
    from torch_ocl.cli.analyze import ocl_autocast_supported

    if ocl_autocast_supported():  # autocast("cuda") became autocast("ocl")
        assert "autocast ocl torch.bfloat16" in captured.err
    else:  # ran in full precision, and the report says so
        assert any(f["feature"].startswith("autocast") for f in rep["unsupported_features"])
    ops = {r["op"]: r for r in rep["ops"]}
    fb = ops[cpu_only_ops.GCD]  # a test-only op with a CPU kernel only
    assert fb["where"] == "fallback" and fb["has_native_kernel"] is False
    assert fb["source"] == f"{script}:{fallback_line}"  # the script is not below the cwd
    assert fb["bytes_to_host"] > 0 and fb["bytes_to_device"] > 0
    assert fb["op"] in rep["fallback_ops"]
    # the feature list names the op that really ran on the CPU and its caller
    feat = next(f for f in rep["unsupported_features"] if "cpu_gcd" in f["feature"])
    assert feat["uses"] == 1 and "CPU fallback" in feat["note"] and f"{fallback_line}" in feat["note"]
    mm = ops["aten::mm"]
    assert mm["native_calls"] >= 2  # fp32 forward and the backward of w
    assert any(r["source"].startswith("backward (") for r in rep["ops"])
    s = rep["summary"]
    assert 0 < s["native_call_share"] < 1 and 0 < s["native_time_share"] < 1
    assert s["calls"] == sum(r["calls"] for r in rep["ops"])
    h2d = sum(r["bytes_to_device"] for r in rep["ops"] if r["op"] == "aten::_to_copy")
    assert h2d >= 64 * 32 * 4  # x.cuda() moved x to the device
    assert rep["exit_status"] == 0 and rep["error"] is None


def test_analyze_text_and_markdown(cuda_script, capsys, tmp_path):
    script, _ = cuda_script
    assert main(["analyze", script]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "fallback" in out and "summary:" in out and "ran natively on ocl" in flat
    assert "not supported natively:" in out and "gcd" in out
    assert max(len(line) for line in out.splitlines()) <= 100
    md = tmp_path / "report.md"
    assert main(["analyze", "--markdown", "-o", str(md), script]) == 0
    text = md.read_text()
    assert text.startswith("### torch-ocl analyze: `train_cuda.py`")
    assert "| `aten::mm` |" in text and "gcd" in text


def test_analyze_exit_status_and_restores_cuda(cuda_script, capsys):
    script, _ = cuda_script
    assert main(["analyze", "--fail-on-fallback", script]) == 3
    assert main(["analyze", script, "--fail"]) == 1
    out = capsys.readouterr().out
    assert "script raised ValueError" in out
    # nothing of the mapping leaks out of the run
    assert torch.cuda.is_available() is False
    assert torch.nn.Module.cuda is not None and torch.compile.__module__.startswith("torch")
    assert main(["analyze", "/no/such/script.py"]) == 2


# ---- bench -------------------------------------------------------------------------------------


def test_bench_quick_limits_and_ops(capsys, tmp_path):
    out_json = tmp_path / "bench.json"
    rc = main(["bench", "--quick", "--quiet", "--only", "limits", "--only", "ops",
               "-o", str(out_json), "--reps", "2"])
    text = capsys.readouterr().out
    res = json.loads(out_json.read_text())
    assert rc == 0, text
    lim = res["limits"]
    # Figures, not timing relations: a loaded machine can make any of them slow (a comparison of
    # the round-trip launch with the back-to-back one failed a CI run at load 6).
    for k in ("copy_gbps", "fill_gbps", "h2d_gbps", "d2h_gbps", "launch_us", "launch_roundtrip_us"):
        assert lim[k] > 0, k
    rows = {r["op"]: r for r in res["ops"]}
    add = rows["add"]
    assert add["native"] is True and add["ocl_s"] > 0 and add["cpu_s"] > 0
    assert add["of_limit"] == pytest.approx(add["ocl_rate"] / lim["copy_gbps"])
    if hasattr(torch_ocl._C, "_raw_sgemm"):
        assert rows["mm fp32"]["of_limit"] > 0
    else:
        assert rows["mm fp32"]["of_limit"] is None and "no reference" in text
    assert "device limits" in text and "add" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    # the JSON re-prints and re-plots without measuring again
    assert main(["bench", "--from", str(out_json), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ops"] == res["ops"]


def test_bench_models_and_plots(examples_dir, capsys, tmp_path):
    rc = main(["bench", "--quick", "--quiet", "--only", "models", "--model",
               "clitest_examples.tiny", "--model", "clitest_examples.extra", "--model",
               "nosuchmodel", "--json"])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0
    tiny, extra, missing = res["models"]
    assert tiny["ocl"]["status"] == "ok" and tiny["cpu"]["status"] == "ok"
    assert tiny["ocl"]["step_s"] > 0 and tiny["ocl"]["first_step_s"] > 0
    assert tiny["ocl"]["peak_memory_bytes"] > 0 and tiny["ocl"]["throughput"] > 0
    assert tiny["result_abs_diff"] < 1e-4  # same seed: same loss on ocl and CPU
    assert extra["status"] == "not available" and "pip install" in extra["ocl"]["reason"]
    assert missing["status"] == "not available" and "examples.nosuchmodel" in missing["ocl"]["reason"]
    pytest.importorskip("matplotlib")
    res["ops"] = [{"op": "add", "kind": "memory", "unit": "GB/s", "ocl_s": 0.002, "cpu_s": 0.0025,
                   "speedup_vs_cpu": 1.25, "ocl_rate": 5.0, "cpu_rate": 4.0, "native": True,
                   "limit": 10.0, "of_limit": 0.5}]
    src = tmp_path / "r.json"
    src.write_text(json.dumps(res))
    assert main(["bench", "--from", str(src), "--plot", str(tmp_path / "img")]) == 0
    for name in ("ops_vs_limits.png", "model_steps.png"):
        data = (tmp_path / "img" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_bench_startup_cold_and_warm(capsys):
    assert main(["bench", "--quick", "--quiet", "--only", "startup", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)["startup"]
    assert st["cold"]["compiles"] > 0
    assert st["warm"]["disk_hits"] > 0 and st["warm"]["compiles"] < st["cold"]["compiles"]
    assert st["cold"]["first_step_s"] > st["warm"]["first_step_s"]


# ---- warmup ------------------------------------------------------------------------------------


def test_warmup_compiles_in_a_fresh_process(examples_dir):
    rc, out, err = run_cli(["warmup", "--no-tune", "--model", "clitest_examples.tiny", "--json"],
                           cwd=str(examples_dir))
    assert rc == 0, err
    rep = json.loads(out)
    (m,) = rep["models"]
    assert m["status"] == "ok" and m["model"] == "clitest_examples.tiny"
    assert m["kernels_compiled"] + m["disk_cache_hits"] > 0
    assert rep["kernels_compiled"] >= m["kernels_compiled"]
    assert "warmup 1/1" in err  # progress went to stderr


def test_warmup_reports_missing_models(examples_dir, capsys, monkeypatch):
    assert main(["warmup", "--no-tune", "--quiet", "--model", "nosuchmodel"]) == 1
    out = capsys.readouterr().out
    assert "not available" in out and "examples.nosuchmodel" in out
    assert main(["warmup", "--no-tune", "--quiet", "--model", "clitest_examples.extra",
                 "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["models"][0]["status"] == "not available"
    # nothing asked for and none of the default examples importable: nothing to warm up is a
    # failure, said plainly (the repo's own examples/ is on sys.path under pytest, so the defaults
    # are replaced by names that cannot import)
    from torch_ocl.cli import _models

    monkeypatch.setattr(_models, "DEFAULT_MODELS", ("clitest_absent_model",))
    assert main(["warmup", "--no-tune", "--quiet"]) == 1
