"""Tier 1: the device itself — torch.device("ocl"), torch.ocl, torch.accelerator, generated
methods and device checks."""

import pytest
import torch

import torch_ocl
from conftest import TWO_DEVICES, make_cpu, run_ok


def test_device_string():
    d = torch.device("ocl")
    assert d.type == "ocl" and d.index is None
    d1 = torch.device("ocl:0")
    assert d1.type == "ocl" and d1.index == 0
    assert torch.device("ocl", 0) == d1
    assert torch._C._get_privateuse1_backend_name() == "ocl"
    t = torch.empty(2, device="ocl")
    assert t.device == torch.device("ocl", 0)
    assert t.device.type == "ocl"
    assert t.get_device() == 0


def test_availability_and_count():
    assert torch.ocl.is_available() is True
    assert torch_ocl.is_available() is True
    n = torch.ocl.device_count()
    assert isinstance(n, int) and n >= 1
    assert torch_ocl.device_count() == n
    assert torch.ocl.is_initialized() in (True, False)
    torch.ocl.init()
    assert torch.ocl.is_initialized()


def test_current_device_and_set_device():
    assert torch.ocl.current_device() == 0
    torch.ocl.set_device(0)
    assert torch.ocl.current_device() == 0
    torch.ocl.set_device("ocl:0")
    torch.ocl.set_device(torch.device("ocl", 0))
    assert torch.ocl.current_device() == 0
    with torch.ocl.device(0):
        assert torch.ocl.current_device() == 0
    with pytest.raises(ValueError, match="Expected an ocl device"):
        torch.ocl.set_device("cpu")


def test_synchronize():
    x = torch.ones(1000, device="ocl")
    torch.ocl.synchronize()
    torch.ocl.synchronize(0)
    torch.ocl.synchronize("ocl:0")
    assert torch.equal(x.cpu(), torch.ones(1000))


def test_device_name_and_properties():
    name = torch.ocl.get_device_name()
    assert isinstance(name, str) and name
    assert torch.ocl.get_device_name(0) == name
    assert torch_ocl.get_device_name(0) == name
    p = torch.ocl.get_device_properties(0)
    for field in (
        "name",
        "vendor",
        "driver_version",
        "opencl_c_version",
        "total_memory",
        "compute_units",
        "max_alloc_size",
        "fp16",
        "fp64",
        "extensions",
        "max_parameter_size",
    ):
        assert hasattr(p, field), field
    assert p.name == name
    # OpenCL's minimum is 1024 bytes (256 on embedded-profile devices)
    assert isinstance(p.max_parameter_size, int) and p.max_parameter_size >= 256
    assert isinstance(p.vendor, str) and p.vendor
    assert isinstance(p.driver_version, str) and p.driver_version
    assert p.opencl_c_version.startswith("OpenCL C ")
    assert isinstance(p.total_memory, int) and p.total_memory > 0
    assert isinstance(p.compute_units, int) and p.compute_units >= 1
    assert 0 < p.max_alloc_size <= p.total_memory
    assert isinstance(p.fp16, bool) and isinstance(p.fp64, bool)
    assert isinstance(p.extensions, str)
    # fp16/fp64 flags agree with the extension list.
    assert p.fp16 == ("cl_khr_fp16" in p.extensions.split())
    if "cl_khr_fp64" in p.extensions.split():
        assert p.fp64
    assert "name=" in repr(p)
    assert torch.ocl.get_device_properties().name == name
    assert torch.ocl.get_device_properties("ocl:0").total_memory == p.total_memory
    cap = torch.ocl.get_device_capability(0)
    assert cap == {"fp16": p.fp16, "fp64": p.fp64, "bf16": True}


def test_bf16_supported():
    assert torch.ocl.is_bf16_supported() is True
    assert torch.ocl.is_bf16_supported(including_emulation=False) is False


def test_invalid_device_index():
    n = torch.ocl.device_count()
    with pytest.raises(IndexError, match=rf"Invalid ocl device index 7: {n} ocl device\(s\)"):
        torch.ones(1, device="ocl:7")
    with pytest.raises(IndexError, match=rf"{n} ocl device\(s\) are available"):
        torch.ocl.set_device(7)
    with pytest.raises(IndexError, match=rf"{n} ocl device\(s\)"):
        torch.empty(3, device=torch.device("ocl", 7))
    with pytest.raises(IndexError, match=rf"{n} ocl device\(s\)"):
        torch.ones(2).to("ocl:7")
    # The failed calls did not change the current device.
    assert torch.ocl.current_device() == 0
    assert torch.ones(1, device="ocl").device.index == 0


def test_accelerator_api():
    acc = torch.accelerator
    assert acc.current_accelerator() == torch.device("ocl")
    assert acc.is_available()
    assert acc.device_count() == torch.ocl.device_count()
    assert acc.current_device_index() == 0
    acc.set_device_index(0)
    assert acc.current_device_index() == 0
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    x = torch.ones(10, device="ocl")
    acc.synchronize()
    acc.synchronize(0)
    s = acc.current_stream()
    assert isinstance(s, torch.Stream)
    assert s.device_type == torch.device("ocl").type or s.device.type == "ocl"
    assert s.device_index == 0
    side = torch.Stream(device="ocl")
    acc.set_stream(side)
    try:
        assert acc.current_stream() == side
        y = x.clone()
    finally:
        acc.set_stream(s)
    assert acc.current_stream() == s
    side.synchronize()
    assert torch.equal(y.cpu(), torch.ones(10))


def test_accelerator_device_capability():
    caps = torch.accelerator.get_device_capability()
    assert caps == torch.accelerator.get_device_capability("ocl:0")
    dtypes = caps["supported_dtypes"]
    for ok in (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
               torch.float16, torch.bfloat16, torch.float32, torch.complex64):
        assert ok in dtypes, ok
        torch.zeros(2, dtype=ok, device="ocl")  # what it lists, the device can hold
    fp64 = torch.ocl.get_device_properties(0).fp64
    assert (torch.float64 in dtypes) == fp64 and (torch.complex128 in dtypes) == fp64
    # the barebones dtypes are storage dtypes (tests/test_small_dtypes.py); quantized ones absent
    for storage in (torch.complex32, torch.uint16, torch.uint32, torch.uint64):
        assert storage in dtypes, storage
        torch.zeros(2, dtype=storage, device="ocl")
    assert torch.qint8 not in dtypes


def test_generated_methods():
    c = make_cpu((3, 4), torch.float32)
    t = c.ocl()
    assert t.is_ocl and not c.is_ocl
    assert t.device.type == "ocl"
    assert torch.equal(t.cpu(), c)
    assert c.ocl(0).device == torch.device("ocl", 0)
    # A storage method too.
    st = t.untyped_storage()
    assert st.is_ocl
    assert c.untyped_storage().ocl().is_ocl
    # Module.ocl() moves parameters and buffers.
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    ref = [p.detach().clone() for p in m.state_dict().values()]
    m.ocl()
    for p, r in zip(m.state_dict().values(), ref):
        assert p.device.type == "ocl"
        assert torch.equal(p.cpu(), r)
    assert all(p.is_ocl for p in m.parameters())


def test_device_mismatch_error():
    a = torch.ones(3, 4, device="ocl")
    b = torch.ones(3, 4)
    msg = "Expected all tensors to be on the same device"
    with pytest.raises(RuntimeError, match=msg):
        torch.add(a, b)
    with pytest.raises(RuntimeError, match=msg):
        a + b
    with pytest.raises(RuntimeError, match=msg):
        b.add_(a)
    # A 0-dim CPU tensor is a scalar: allowed, as on CUDA.
    r = a + torch.tensor(2.0)
    assert r.device.type == "ocl"
    assert torch.equal(r.cpu(), torch.full((3, 4), 3.0))
    # Copies between devices are explicit and fine.
    b.copy_(a)
    assert torch.equal(b, torch.ones(3, 4))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_device_mismatch_error_native_mm():
    a = torch.ones(2, 2, device="ocl")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(a, torch.ones(2, 2))


def test_two_devices_in_subprocess():
    out = run_ok(
        """
        import torch
        assert torch.ocl.device_count() == 2, torch.ocl.device_count()
        assert torch.accelerator.device_count() == 2
        torch.ocl.set_device(1)
        assert torch.ocl.current_device() == 1
        assert torch.accelerator.current_device_index() == 1
        assert torch.empty(1, device="ocl").device == torch.device("ocl", 1)
        torch.accelerator.set_device_index(0)
        assert torch.ocl.current_device() == 0
        with torch.ocl.device(1):
            assert torch.ocl.current_device() == 1
            assert torch.empty(1, device="ocl").device.index == 1
        assert torch.ocl.current_device() == 0
        with torch.accelerator.device_index(1):
            assert torch.ones(2, device="ocl").device.index == 1
        assert torch.accelerator.current_device_index() == 0
        assert torch.ocl.get_device_name(1) == torch.ocl.get_device_name(0)
        x = torch.arange(6.0).to("ocl:1")
        with torch.ocl.device_of(x):
            assert torch.ocl.current_device() == 1
        try:
            torch.ones(1, device="ocl:2")
        except IndexError as e:
            assert "2 ocl device(s)" in str(e), str(e)
        else:
            raise AssertionError("ocl:2 did not raise")
        # Tensors of two ocl devices in one op: PyTorch's device error, also for ops that run
        # through the CPU fallback.
        import warnings
        warnings.simplefilter("ignore")
        a, b = torch.ones(2, 2, device="ocl:0"), torch.ones(2, 2, device="ocl:1")
        for name, fn in [("add", lambda: a + b), ("mm", lambda: torch.mm(a, b)),
                         ("mm reversed", lambda: torch.mm(b, a)),
                         ("cat", lambda: torch.cat([a, b])), ("add_", lambda: b.add_(a))]:
            try:
                fn()
            except RuntimeError as e:
                assert "Expected all tensors to be on the same device" in str(e), (name, str(e))
            else:
                raise AssertionError(name + " did not raise")
        assert torch.equal(torch.mm(b, b).cpu(), torch.full((2, 2), 2.0))
        assert torch.mm(b, b).device == torch.device("ocl", 1)
        print("OK")
        """,
        env=TWO_DEVICES,
    )
    assert out.strip().endswith("OK")
