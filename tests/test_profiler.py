"""torch.profiler sees the ocl device: kernel, memcpy and memset rows with device times from
OpenCL profiling events, linked to the aten op that enqueued them, in key_averages() and in the
exported Chrome trace; no event is created while no profiler records device activity."""

from __future__ import annotations

import json
import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import torch_ocl
from torch_ocl import _C

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def _device_events(prof):
    return [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


def _run_ops():
    a_cpu = torch.arange(1, 4098, dtype=torch.float32).reshape(17, 241)
    b_cpu = torch.linspace(-2, 2, 241)
    with torch_ocl.strict():
        a = a_cpu.to("ocl")  # memcpy HtoD
        b = b_cpu.to("ocl")
        c = torch.mul(a, b)  # kernel
        d = torch.add(c.t(), 1.5)  # kernel on a non-contiguous operand
        z = torch.zeros(33, device="ocl")  # memset
        out = d.cpu()  # memcpy DtoH
        z_cpu = z.cpu()
    return out, (a_cpu * b_cpu).t() + 1.5, z_cpu


@pytest.fixture(scope="module")
def profiled():
    _run_ops()  # compile the kernels outside the profiled region
    torch.ocl.synchronize()
    with profile(activities=ACTIVITIES) as prof:
        out, ref, z = _run_ops()
        torch.ocl.synchronize()
    return prof, out, ref, z


def test_results_unchanged_under_profiling(profiled):
    _, out, ref, z = profiled
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(z, torch.zeros(33))


def test_kernel_rows_have_sane_device_times(profiled):
    prof = profiled[0]
    kernels = [e for e in _device_events(prof) if "Memcpy" not in e.name and "Memset" not in e.name]
    names = [e.name for e in kernels]
    assert any(n.startswith("mul") for n in names), names
    assert any(n.startswith("add") for n in names), names
    cpu = [e for e in prof.events() if e.device_type == DeviceType.CPU]
    # Times are relative to the trace start, in us; the device clock is mapped onto the host's,
    # so a kernel lies inside the span of the CPU events (with slack for the mapping).
    lo = min(e.time_range.start for e in cpu) - 2000
    hi = max(e.time_range.end for e in cpu) + 2000
    for e in kernels:
        assert e.time_range.end >= e.time_range.start
        assert lo <= e.time_range.start <= hi, (e.name, e.time_range, lo, hi)
        assert e.time_range.elapsed_us() < 1e6


def test_kernels_linked_to_their_aten_ops(profiled):
    prof = profiled[0]
    by_op = {}
    for e in prof.events():
        if e.device_type == DeviceType.CPU and e.kernels:
            by_op.setdefault(e.name, []).extend(k.name for k in e.kernels)
    assert any(k.startswith("mul") for k in by_op.get("aten::mul", [])), by_op
    assert any(k.startswith("add") for k in by_op.get("aten::add", [])), by_op
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mul"].device_time_total > 0
    assert avg["aten::add"].device_time_total > 0
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=20)
    assert "aten::mul" in table


def test_memcpy_and_memset_rows(profiled):
    prof = profiled[0]
    names = [e.name for e in _device_events(prof)]
    assert any("Memcpy HtoD" in n for n in names), names
    assert any("Memcpy DtoH" in n for n in names), names
    assert any("Memset" in n for n in names), names


def test_chrome_trace_contains_device_rows(profiled, tmp_path):
    prof = profiled[0]
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    cats = {}
    for ev in events:
        cats.setdefault(ev.get("cat"), []).append(ev)
    assert any(ev["name"].startswith("mul") for ev in cats.get("kernel", [])), sorted(cats, key=str)
    assert cats.get("gpu_memcpy") and cats.get("gpu_memset")
    for ev in cats["kernel"]:
        assert ev["dur"] >= 0 and ev["args"].get("device") == 0
    # Flow arrows from the launching op to its kernels.
    assert cats.get("ac2g"), "no CPU->device flow events in the trace"


def test_no_events_without_profiler():
    _run_ops()
    torch.ocl.synchronize()
    before = _C._profiler_events_created()
    _run_ops()
    # A CPU-only profiler session does not record device activity either.
    with profile(activities=[ProfilerActivity.CPU]):
        _run_ops()
    torch.ocl.synchronize()
    assert _C._profiler_events_created() == before
    assert not _C._profiler_active()


def test_backward_thread_kernels_recorded():
    x_cpu = torch.linspace(-1, 1, 300)
    x = x_cpu.to("ocl").requires_grad_()
    (x * x).sum().backward()  # warm up
    x.grad = None
    with profile(activities=ACTIVITIES) as prof:
        with torch_ocl.strict():
            (x * x).sum().backward()
        torch.ocl.synchronize()
    torch.testing.assert_close(x.grad.cpu(), 2 * x_cpu)
    assert len(_device_events(prof)) >= 2


def test_bench_profile_writes_a_trace(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from torch_ocl.cli import main

    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # examples/ lives in the repo root
    trace = tmp_path / "step.json"
    assert main(["bench", "--profile", str(trace), "--model", "mlp", "--model-size", "small"]) == 0
    out = capsys.readouterr().out
    assert "Chrome trace" in out and "aten::" in out
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(ev.get("cat") == "kernel" for ev in events)


def test_graph_replay_kernels_recorded():
    """A replayed torch.accelerator.Graph shows its kernels, with device times, under an
    ``ocl::graph_replay`` row, once per replay; replays outside a profiler create no events."""
    x_cpu = torch.linspace(-3, 3, 1000)
    x = x_cpu.to("ocl")
    y = torch.empty_like(x)
    with torch_ocl.strict():
        torch.mul(x, 2.0, out=y).add_(1.0)  # kernels built before the capture
        torch.ocl.synchronize()
        g = torch.accelerator.Graph()
        with g:
            torch.mul(x, 2.0, out=y)
            y.add_(1.0).relu_()
        torch.ocl.synchronize()
        before = _C._profiler_events_created()
        g.replay()
        torch.ocl.synchronize()
        assert _C._profiler_events_created() == before
        with profile(activities=ACTIVITIES) as prof:
            for _ in range(3):
                g.replay()
            torch.ocl.synchronize()
    torch.testing.assert_close(y.cpu(), torch.relu(x_cpu * 2 + 1))
    kernels = [e for e in _device_events(prof) if "Memcpy" not in e.name and "Memset" not in e.name]
    names = [e.name for e in kernels]
    assert sum(n.startswith("mul") for n in names) == 3, names
    assert sum(n.startswith("add") for n in names) == 3, names
    assert len(names) == 9, names  # mul, add and relu's kernel, three times
    for e in kernels:
        assert e.time_range.end >= e.time_range.start
    replays = [e for e in prof.events() if e.name == "ocl::graph_replay"]
    assert len(replays) == 3
    assert all(k.name for r in replays for k in r.kernels)
    assert sum(len(r.kernels) for r in replays) == len(kernels)
    assert prof.key_averages().table(sort_by="device_time_total").count("ocl::graph_replay") == 1


def test_host_blas_product_has_a_device_row():
    """A product the host BLAS runs (a native kernel on PoCL) is a kernel row like the others,
    linked to aten::mm, live and with the same name as in graph replays."""
    caps = _C._gemm_device_caps(0)
    if not (caps["native_kernel"] and caps["host_unified_memory"]
            and _C._host_blas_info()["available"]):
        pytest.skip("no host BLAS provider on this device")
    a_cpu, b_cpu = torch.randn(33, 70), torch.randn(45, 70)
    a, b = a_cpu.to("ocl"), b_cpu.to("ocl")
    _C._set_gemm_provider("host_blas")
    try:
        (a @ b.t()).cpu()  # warm up
        with profile(activities=ACTIVITIES) as prof:
            with torch_ocl.strict():
                c = a @ b.t()
            torch.ocl.synchronize()
    finally:
        _C._set_gemm_provider("auto")
    torch.testing.assert_close(c.cpu(), a_cpu @ b_cpu.t(), rtol=1e-4, atol=1e-4)
    rows = [e for e in _device_events(prof) if e.name == "host_blas::gemm"]
    assert len(rows) == 1, [e.name for e in _device_events(prof)]
    assert rows[0].time_range.end > rows[0].time_range.start
    linked = [k.name for e in prof.events() if e.device_type == DeviceType.CPU and e.name == "aten::mm"
              for k in e.kernels]
    assert "host_blas::gemm" in linked, linked
