"""Tier 3: the backend loads itself with `import torch`, and without a usable device it says why
(and the process still exits cleanly)."""

from conftest import run_py


def test_autoload_without_importing_torch_ocl():
    rc, out, err = run_py(
        """
        import sys
        import torch
        assert "torch_ocl" in sys.modules          # loaded through the torch.backends entry point
        t = torch.ones(3, device="ocl")
        assert t.device.type == "ocl"
        assert t.cpu().tolist() == [1.0, 1.0, 1.0]
        assert torch.accelerator.current_accelerator() == torch.device("ocl")
        assert hasattr(torch, "ocl") and torch.ocl.is_available()
        assert t.is_ocl
        print("OK")
        """
    )
    assert rc == 0, err
    assert out.strip() == "OK"


def test_import_torch_ocl_first():
    # `import torch_ocl` before `import torch`: torch's autoload then meets a half-imported package.
    rc, out, err = run_py(
        """
        import torch_ocl
        import torch
        assert torch.ones(2, device="ocl").cpu().tolist() == [1.0, 1.0]
        assert torch_ocl.device_count() == torch.ocl.device_count() >= 1
        print("OK")
        """
    )
    assert rc == 0, err
    assert out.strip() == "OK"


def test_autoload_disabled_until_import():
    rc, out, err = run_py(
        """
        import sys
        import torch
        assert "torch_ocl" not in sys.modules
        assert not hasattr(torch, "ocl")
        try:
            torch.ones(1, device="ocl")
        except RuntimeError as e:
            assert "ocl" in str(e)
            print("FAILED_BEFORE_IMPORT")
        import torch_ocl
        assert torch.ones(2, device="ocl").cpu().tolist() == [1.0, 1.0]
        assert torch.ocl.device_count() >= 1
        print("OK")
        """,
        env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert rc == 0, err
    assert out.split() == ["FAILED_BEFORE_IMPORT", "OK"]


_NO_DEVICE_PROBE = """
import torch
import torch_ocl
assert torch.ocl.is_available() is False
assert torch.ocl.device_count() == 0
assert torch_ocl.is_available() is False
assert torch.accelerator.is_available() is False
assert torch.accelerator.device_count() == 0
print("REASON:", torch_ocl._C.discovery_error())
for name, fn in [
    ("ones", lambda: torch.ones(1, device="ocl")),
    ("to", lambda: torch.zeros(2).to("ocl")),
    ("init", torch.ocl.init),
    ("props", lambda: torch.ocl.get_device_properties(0)),
    ("synchronize", torch.ocl.synchronize),
    ("memory", torch.ocl.memory_allocated),
]:
    try:
        fn()
    except RuntimeError as e:
        print(name, "RAISED:", str(e).replace("\\n", " "))
    else:
        print(name, "DID NOT RAISE")
torch.manual_seed(0)        # seeding every device must not fail without one
print("CPU", torch.ones(2).add(1).tolist())
"""


def test_out_of_range_device_selection():
    rc, out, err = run_py(_NO_DEVICE_PROBE, env={"TORCH_OCL_DEVICES": "5"})
    assert rc == 0, err  # no crash, including at exit
    assert "DID NOT RAISE" not in out, out
    lines = [ln for ln in out.splitlines() if "RAISED" in ln]
    assert len(lines) == 6, out
    for ln in lines:
        # The error names the variable, the bad value and the devices that exist.
        assert "TORCH_OCL_DEVICES='5'" in ln, ln
        assert "OpenCL device(s) were found" in ln and "valid indices" in ln, ln
    assert "CPU [2.0, 2.0]" in out
    assert "Traceback" not in err and "Segmentation" not in err


def test_no_opencl_platform():
    rc, out, err = run_py(_NO_DEVICE_PROBE, env={"OCL_ICD_VENDORS": "/nonexistent"})
    assert rc == 0, err
    assert "DID NOT RAISE" not in out, out
    lines = [ln for ln in out.splitlines() if "RAISED" in ln]
    assert len(lines) == 6, out
    for ln in lines:
        assert "no OpenCL platform found" in ln, ln
        assert "pocl" in ln.lower(), ln  # how to install a CPU OpenCL driver
    assert "CPU [2.0, 2.0]" in out
    assert "Traceback" not in err and "Segmentation" not in err
