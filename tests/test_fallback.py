"""Tier 3: the CPU fallback — correct, loud (one warning per op), counted, and an error in strict
mode."""

import warnings

import pytest
import torch

import cpu_only_ops
import torch_ocl
from conftest import make_cpu, run_py


@pytest.fixture(autouse=True)
def _clean_report():
    torch_ocl.reset_fallback_report()
    yield
    torch_ocl.reset_fallback_report()


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [w for w in caught if "torch-ocl" in str(w.message)]


def _ops():
    return {r["op"]: r for r in torch_ocl.fallback_report(print_table=False)}


def test_fallback_op_is_correct():
    a_c, b_c = make_cpu((33, 17), torch.float32, 1), make_cpu((33, 17), torch.float32, 2)
    a, b = a_c.to("ocl"), b_c.to("ocl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = {
            "add": (torch.add(a, b), torch.add(a_c, b_c)),
            "add alpha": (torch.add(a, b, alpha=2), torch.add(a_c, b_c, alpha=2)),
            "non-contiguous": (a.t() * b.t(), a_c.t() * b_c.t()),
            "step": (a[::2, 1::3] - b[::2, ::3], a_c[::2, 1::3] - b_c[::2, ::3]),
            "broadcast": (a + b[0], a_c + b_c[0]),
            "expanded": (a[:1].expand(33, 17) * 3, a_c[:1].expand(33, 17) * 3),
            "matmul": (a @ b.t(), a_c @ b_c.t()),
            "sum dim": (a.sum(dim=1), a_c.sum(dim=1)),
            "int": (a.to(torch.int64) // 3, a_c.to(torch.int64) // 3),
            "zero-size": (a[:0] + b[:0], a_c[:0] + b_c[:0]),
            "odd size": (a.reshape(-1)[:1023].neg(), a_c.reshape(-1)[:1023].neg()),
        }
        for name, (got, want) in cases.items():
            assert got.device.type == "ocl", name
            assert got.dtype == want.dtype and got.shape == want.shape, name
            torch.testing.assert_close(got.cpu(), want, msg=name)
        # Several outputs.
        v, i = a.max(dim=1)
        vc, ic = a_c.max(dim=1)
        assert v.device.type == "ocl" and i.device.type == "ocl"
        assert torch.equal(v.cpu(), vc) and torch.equal(i.cpu(), ic)


def test_fallback_in_place_and_out():
    c = make_cpu((6, 8), torch.float32)
    d = c.to("ocl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptr = d.data_ptr()
        d.mul_(2)
        c.mul_(2)
        assert d.data_ptr() == ptr  # in place really is in place
        assert torch.equal(d.cpu(), c)
        # In place on a strided view writes back into the base only where the view is.
        d[:, ::3].add_(100)
        c[:, ::3].add_(100)
        d.t()[2].sub_(1)
        c.t()[2].sub_(1)
        assert torch.equal(d.cpu(), c)
        # out= with a destination of the right size, and one that must be resized.
        out = torch.empty(6, 8, device="ocl")
        torch.mul(d, d, out=out)
        assert torch.equal(out.cpu(), c * c)
        out2 = torch.empty(0, device="ocl")
        torch.add(d, 1, out=out2)
        assert out2.shape == (6, 8) and torch.equal(out2.cpu(), c + 1)


def test_warns_once_per_op():
    # torch.ops calls do not turn C++ warnings into Python ones, so a fresh interpreter's stderr
    # shows them (the ops are cpu_only_ops', which never get an ocl kernel).
    rc, out, err = run_py(
        cpu_only_ops.DEFINE_SOURCE
        + """
import torch_ocl
a = torch.ones(5, dtype=torch.int32, device="ocl")
r = torch.ops.ocl_test.cpu_gcd(a, a)
assert r.device.type == "ocl" and torch.equal(r.cpu(), torch.ones(5, dtype=torch.int32))
print("CALL1", flush=True)
torch.ops.ocl_test.cpu_gcd(a, a)
print("CALL2", flush=True)
torch.ops.ocl_test.cpu_lcm(a, a)  # a different op warns on its own
print("CALL3", flush=True)
torch_ocl.reset_fallback_report()  # after a reset the op is new again
torch.ops.ocl_test.cpu_gcd(a, a)
print("DONE", flush=True)
""",
        env={"TORCH_OCL_STRICT": "0"},
    )
    assert rc == 0 and "DONE" in out, err
    warned = [line for line in err.splitlines() if "torch-ocl:" in line and "no native" in line]
    assert len(warned) == 3, err
    assert cpu_only_ops.GCD in warned[0] and "CPU" in warned[0] and "fallback_report" in warned[0]
    assert cpu_only_ops.LCM in warned[1] and cpu_only_ops.GCD in warned[2]


def _fake_quant_args(device):
    x = torch.linspace(-3, 5, 20).reshape(4, 5)
    state = (torch.ones(1, dtype=torch.long), torch.ones(1, dtype=torch.long), torch.zeros(1),
             torch.zeros(1), torch.ones(1), torch.zeros(1, dtype=torch.int32))
    return (x.to(device), *(t.to(device) for t in state), 0.01, 0, 255, 0)


def test_fallback_warning_reaches_python_as_user_warning():
    # Called through torch's Python functions, the warning is a Python UserWarning, once per op
    # until the report is reset (through torch.ops it goes to stderr: PyTorch's op call has no
    # Python warning handler). The op is the fake-quantisation observer, which tools/
    # aten_coverage.py lists as not native; if it gets a kernel, pick another op from that list.
    fq = torch.fused_moving_avg_obs_fake_quant
    with torch_ocl.strict(), pytest.raises(NotImplementedError, match="_fused_moving_avg_obs_fq"):
        fq(*_fake_quant_args("ocl"))
    torch_ocl.reset_fallback_report()
    got, w = _record(lambda: fq(*_fake_quant_args("ocl")))
    assert len(w) == 1 and w[0].category is UserWarning
    assert "aten::_fused_moving_avg_obs_fq_helper" in str(w[0].message)
    assert got.device.type == "ocl"
    torch.testing.assert_close(got.cpu(), fq(*_fake_quant_args("cpu")))
    _, w = _record(lambda: fq(*_fake_quant_args("ocl")))
    assert w == []


def test_report_counts_calls_bytes_and_time():
    n = 1000
    a = torch.ones(n, dtype=torch.int32, device="ocl")
    b = torch.ones(n, dtype=torch.int32, device="ocl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            cpu_only_ops.gcd(a, b)
        cpu_only_ops.lcm(a, a)
    ops = _ops()
    add = ops[cpu_only_ops.GCD]
    assert add["calls"] == 3
    # Per call: self and other go to the host; the result comes back.
    assert add["bytes_to_host"] == 3 * 2 * n * 4
    assert add["bytes_to_device"] == 3 * n * 4
    assert add["seconds"] > 0
    assert ops[cpu_only_ops.LCM]["calls"] == 1
    rows = torch_ocl.fallback_report(print_table=False)
    assert [r["seconds"] for r in rows] == sorted((r["seconds"] for r in rows), reverse=True)
    assert set(rows[0]) == {"op", "calls", "bytes_to_host", "bytes_to_device", "seconds"}
    # The printed table.
    import io

    buf = io.StringIO()
    torch_ocl.fallback_report(file=buf)
    text = buf.getvalue()
    assert cpu_only_ops.GCD in text and "2 op(s) ran on the CPU" in text
    torch_ocl.reset_fallback_report()
    assert torch_ocl.fallback_report(print_table=False) == []
    buf = io.StringIO()
    torch_ocl.fallback_report(file=buf)
    assert "no op fell back" in buf.getvalue()


def test_native_ops_do_not_fall_back():
    c = make_cpu((7, 9), torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warning would fail the test
        d = c.to("ocl")
        e = torch.empty(3, 4, device="ocl")
        e.fill_(2.5)
        e.zero_()
        f = d.view(9, 7).t().contiguous()
        g = d.clone()
        h = d.to(torch.float16).to(torch.int32)
        i = torch.zeros(5, device="ocl")
        j = torch.ones(5, dtype=torch.int64, device="ocl")
        k = torch.full((2, 2), 3.0, device="ocl")
        g.copy_(d.t().t())
        d[2:4, ::2].copy_(torch.zeros(2, 5))
        back = d.cpu()
        s = d[1, 1].item()
        d.resize_(100)
        u = d.unfold(0, 4, 2).as_strided((2, 2), (1, 1))
        del e, f, g, h, i, j, k, back, s, u
    assert torch_ocl.fallback_report(print_table=False) == []


def test_strict_mode_context_manager():
    a = torch.ones(4, dtype=torch.int32, device="ocl")
    with torch_ocl.strict():
        assert torch_ocl._C.is_strict()
        with pytest.raises(NotImplementedError, match=cpu_only_ops.GCD) as info:
            cpu_only_ops.gcd(a, a)
        assert "strict mode" in str(info.value)
        # Native ops still run.
        b = a.clone()
        b.fill_(3)
        assert b[0].item() == 3.0
        with torch_ocl.strict(False), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.equal(cpu_only_ops.gcd(a, a).cpu(), torch.ones(4, dtype=torch.int32))
        with pytest.raises(NotImplementedError):
            cpu_only_ops.lcm(a, a)
    assert not torch_ocl._C.is_strict()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.equal(cpu_only_ops.lcm(a, a).cpu(), torch.ones(4, dtype=torch.int32))
    # The failed calls were not counted.
    assert cpu_only_ops.GCD in _ops()
    assert _ops()[cpu_only_ops.GCD]["calls"] == 1


def test_strict_mode_environment_variable():
    rc, out, err = run_py(
        cpu_only_ops.DEFINE_SOURCE
        + """
import torch_ocl
assert torch_ocl._C.is_strict()
a = torch.ones(3, dtype=torch.int32, device="ocl")
b = a.clone().fill_(2)            # native: fine
assert b[1].item() == 2.0
try:
    torch.ops.ocl_test.cpu_gcd(a, b)
except NotImplementedError as e:
    assert "ocl_test::cpu_gcd" in str(e), str(e)
    print("RAISED")
""",
        env={"TORCH_OCL_STRICT": "1"},
    )
    assert rc == 0, err
    assert "RAISED" in out
    rc, out, err = run_py(
        """
        import torch, torch_ocl, warnings
        warnings.simplefilter("ignore")
        assert not torch_ocl._C.is_strict()
        assert torch.add(torch.ones(2, device="ocl"), 1).cpu().tolist() == [2.0, 2.0]
        print("OK")
        """,
        env={"TORCH_OCL_STRICT": "0"},
    )
    assert rc == 0 and "OK" in out, err


def test_sparse_tensors_raise_a_clear_error(ocl):
    # Sparse COO and CSR have native basics (tests/test_sparse*.py); any other sparse op raises a
    # NotImplementedError naming the op and the layout, never the dispatcher's raw "Sparseocl
    # backend" message; dense work goes on afterwards.
    x = torch.eye(3)
    for make, layout in (
        (lambda: torch.sin(x.to_sparse().to(ocl)), "sparse COO"),
        (lambda: x.to_sparse().to(ocl) + x.to_sparse().to(ocl), "sparse COO"),
        # CSR has native basics too (tests/test_sparse_csr.py); its other ops raise.
        (lambda: torch.exp(x.to_sparse_csr().to(ocl)), "sparse compressed"),
        (lambda: x.to_sparse_csr().to(ocl) + x.to_sparse_csr().to(ocl), "sparse compressed"),
    ):
        with pytest.raises(NotImplementedError, match=f"torch-ocl: aten::.* on a {layout}.*not "
                                                      "supported on ocl") as info:
            make()
        assert "Sparseocl" not in str(info.value)
    assert (x.to(ocl) * 2).sum().item() == 6.0


def test_strict_blocks_on_threads_end_in_any_order():
    # Strict mode is process-wide (autograd's threads must see it); two threads whose blocks
    # close out of order must not leave it stuck on or off.
    import threading

    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def thread_a():
        with torch_ocl.strict():
            a_in.set()
            b_in.wait(10)
        a_out.set()  # A closes first, while B's strict(False) block is still open

    def thread_b():
        a_in.wait(10)
        with torch_ocl.strict(False):
            b_in.set()
            a_out.wait(10)
            seen["b_after_a"] = torch_ocl._C.is_strict()
        seen["b_done"] = torch_ocl._C.is_strict()

    base = torch_ocl._C.is_strict()
    ts = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert seen == {"b_after_a": False, "b_done": base}
    assert torch_ocl._C.is_strict() == base
    with pytest.raises(RuntimeError, match="not open"):
        torch_ocl._C._pop_strict(10**9)
