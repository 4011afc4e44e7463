"""Tier 3: fork(). OpenCL drivers do not survive it, so a child of a process that loaded the
driver gets a clear error (never a hang); a child that leaves the device alone, or a fork before
the driver was loaded, works."""

import os
import signal
import textwrap

import pytest
import torch

from conftest import run_ok

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _in_child(fn, timeout_s: int = 60) -> tuple[int, str]:
    """Runs fn() in a forked child; returns (exit code, what fn returned as text)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            signal.alarm(timeout_s)  # never hang the test run
            msg = str(fn())
        except BaseException as e:  # noqa: BLE001 - report everything to the parent
            msg = f"{type(e).__name__}: {e}"
            code = 1
        finally:
            try:
                os.write(w, msg.encode()[:60000])
            finally:
                os._exit(code)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode()


def test_child_touching_device_after_parent_used_it():
    x = torch.ones(4, device="ocl")  # the parent uses the device
    torch.ocl.synchronize()
    assert torch.ocl.is_initialized()

    rc, msg = _in_child(lambda: torch.ones(1, device="ocl"))
    assert rc == 1
    assert msg.startswith("RuntimeError"), msg
    assert "forked" in msg and "spawn" in msg

    # Touching a tensor inherited from the parent raises too.
    rc, msg = _in_child(lambda: x.cpu())
    assert rc == 1 and "RuntimeError" in msg and "forked" in msg, msg

    rc, msg = _in_child(lambda: torch.ocl._is_in_bad_fork())
    assert rc == 0 and msg == "True"
    # The parent is unaffected.
    assert not torch.ocl._is_in_bad_fork()
    assert torch.equal(x.cpu(), torch.ones(4))


def test_child_not_touching_device_is_fine():
    torch.ones(2, device="ocl")

    def cpu_work():
        torch.manual_seed(3)  # seeds every device lazily: must not fail in the child
        return (torch.arange(5.0) * 2).tolist()

    rc, msg = _in_child(cpu_work)
    assert rc == 0, msg
    assert msg == "[0.0, 2.0, 4.0, 6.0, 8.0]"


def test_dataloader_fork_workers():
    torch.ones(2, device="ocl")
    ds = torch.utils.data.TensorDataset(torch.arange(8.0))
    dl = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context="fork")
    batches = [b[0] for b in dl]
    assert [b.tolist() for b in batches] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
    assert torch.equal(batches[1].to("ocl").cpu(), torch.arange(4.0, 8.0))


_FORK_SNIPPET = """
import os, signal, sys
import torch
assert not torch.ocl.is_initialized()
{before}
pid = os.fork()
if pid == 0:
    signal.alarm(60)
    try:
        t = torch.arange(6.0).to("ocl")
        ok = t.view(2, 3).t().contiguous().cpu().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        print("CHILD", "OK" if ok else "WRONG", flush=True)
        os._exit(0 if ok else 3)
    except RuntimeError as e:
        print("CHILD RuntimeError:", e, flush=True)
        os._exit(4)
_, status = os.waitpid(pid, 0)
print("CHILD_RC", os.waitstatus_to_exitcode(status))
print("PARENT", torch.ones(2, device="ocl").cpu().tolist(), torch.ocl.is_initialized())
"""


def test_fork_before_initialization_works():
    out = run_ok(_FORK_SNIPPET.format(before="import torch_ocl"))
    assert "CHILD OK" in out, out
    assert "CHILD_RC 0" in out
    assert "PARENT [1.0, 1.0] True" in out


def test_fork_after_driver_query_raises_instead_of_hanging():
    # Asking for the device count loads the OpenCL driver (PoCL starts its threads then).
    out = run_ok(_FORK_SNIPPET.format(before="assert torch.ocl.device_count() >= 1"))
    assert "CHILD RuntimeError" in out and "forked" in out, out
    assert "CHILD_RC 4" in out
    assert "PARENT [1.0, 1.0] True" in out


def test_spawned_child_can_use_device(tmp_path):
    script = tmp_path / "spawn_child.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            import torch.multiprocessing as mp

            def work(q):
                q.put(torch.arange(4.0).to("ocl")[::2].contiguous().cpu().tolist())

            if __name__ == "__main__":
                torch.ones(1, device="ocl")  # the parent uses the device first
                ctx = mp.get_context("spawn")
                q = ctx.Queue()
                p = ctx.Process(target=work, args=(q,))
                p.start()
                print("RESULT", q.get(timeout=60))
                p.join(60)
                print("RC", p.exitcode)
            """
        )
    )
    out = run_ok(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')")
    assert "RESULT [0.0, 2.0]" in out and "RC 0" in out, out
