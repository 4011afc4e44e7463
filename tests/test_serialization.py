"""Tier 2: torch.save / torch.load of ocl tensors, modules and optimizer state."""

import io
import warnings

import pytest
import torch

from conftest import TWO_DEVICES, dtypes_for_device, make_cpu, run_ok


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


@pytest.mark.parametrize("dtype", dtypes_for_device(), ids=lambda d: str(d).replace("torch.", ""))
def test_tensor_round_trip(dtype):
    c = make_cpu((5, 7), dtype, seed=11)
    d = c.to("ocl")
    back = _round_trip(d)
    assert back.device == torch.device("ocl", 0)
    assert back.dtype == dtype and back.shape == c.shape
    assert torch.equal(back.cpu(), c)
    # 0-dim and zero-size.
    for t in (c[2, 3], c[:, :0]):
        r = _round_trip(t.to("ocl"))
        assert r.device.type == "ocl" and r.shape == t.shape
        assert torch.equal(r.cpu(), t)


def test_views_keep_sharing_storage():
    c = make_cpu((6, 8), torch.float32)
    d = c.to("ocl")
    views = {"base": d, "t": d.t(), "row": d[2], "step": d[::2, 1::3], "narrow": d.narrow(1, 2, 4)}
    back = _round_trip(views)
    ptr = back["base"].untyped_storage().data_ptr()
    for name, v in views.items():
        r = back[name]
        assert r.device.type == "ocl", name
        assert r.untyped_storage().data_ptr() == ptr, name
        assert r.stride() == v.stride() and r.storage_offset() == v.storage_offset(), name
        assert torch.equal(r.cpu(), v.cpu()), name
    # A write into the loaded base shows through the loaded views.
    back["base"].fill_(4.0)
    assert torch.equal(back["step"].cpu(), torch.full((3, 3), 4.0))


def test_module_state_dict():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    ref = {k: v.clone() for k, v in m.state_dict().items()}
    m.to("ocl")
    sd = _round_trip(m.state_dict())
    assert set(sd) == set(ref)
    for k, v in sd.items():
        assert v.device.type == "ocl", k
        assert torch.equal(v.cpu(), ref[k]), k
    # Load into a fresh module on the device and into one on the CPU.
    m2 = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    m2.to("ocl").load_state_dict(sd)
    for k, v in m2.state_dict().items():
        assert v.device.type == "ocl" and torch.equal(v.cpu(), ref[k]), k
    m3 = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    m3.load_state_dict(sd)
    for k, v in m3.state_dict().items():
        assert v.device.type == "cpu" and torch.equal(v, ref[k]), k


def test_optimizer_state_dict():
    torch.manual_seed(0)
    m = torch.nn.Linear(6, 3)
    m_cpu = torch.nn.Linear(6, 3)
    m_cpu.load_state_dict(m.state_dict())
    m.to("ocl")
    x = make_cpu((4, 6), torch.float32)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt_cpu = torch.optim.SGD(m_cpu.parameters(), lr=0.1, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ops without native kernels warn (CPU fallback)
        m(x.to("ocl")).sum().backward()
        opt.step()
    m_cpu(x).sum().backward()
    opt_cpu.step()
    sd = _round_trip(opt.state_dict())
    ref = opt_cpu.state_dict()
    assert sd["param_groups"] == ref["param_groups"]
    assert set(sd["state"]) == set(ref["state"]) == {0, 1}
    for i in sd["state"]:
        buf = sd["state"][i]["momentum_buffer"]
        assert buf.device.type == "ocl"
        torch.testing.assert_close(buf.cpu(), ref["state"][i]["momentum_buffer"])
    # The loaded state drives a fresh optimizer on the device.
    opt2 = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    assert opt2.state[m.weight]["momentum_buffer"].device.type == "ocl"


def test_map_location():
    c = make_cpu((4, 3), torch.float32)
    d = c.to("ocl")
    on_cpu = _round_trip(d, map_location="cpu")
    assert on_cpu.device.type == "cpu" and torch.equal(on_cpu, c)
    on_ocl = _round_trip(c, map_location="ocl")
    assert on_ocl.device == torch.device("ocl", 0) and torch.equal(on_ocl.cpu(), c)
    on_ocl0 = _round_trip(c, map_location=torch.device("ocl", 0))
    assert on_ocl0.device == torch.device("ocl", 0) and torch.equal(on_ocl0.cpu(), c)
    mapped = _round_trip(d, map_location={"ocl:0": "cpu"})
    assert mapped.device.type == "cpu" and torch.equal(mapped, c)
    assert torch.equal(_round_trip(d, map_location=lambda s, loc: s).cpu(), c)


def test_file_round_trip(tmp_path):
    c = make_cpu((3, 3), torch.int32)
    path = tmp_path / "t.pt"
    torch.save({"x": c.to("ocl"), "y": [c.to("ocl").t()]}, path)
    back = torch.load(path, weights_only=True)
    assert back["x"].device.type == "ocl" and torch.equal(back["x"].cpu(), c)
    assert torch.equal(back["y"][0].cpu(), c.t())


def test_map_location_second_device(tmp_path):
    path = tmp_path / "two.pt"
    out = run_ok(
        f"""
        import torch
        c = torch.arange(24, dtype=torch.float32).reshape(4, 6)
        torch.save({{"a": c.to("ocl:0"), "b": c.to("ocl:1").t()}}, {str(path)!r})
        back = torch.load({str(path)!r})
        assert back["a"].device == torch.device("ocl", 0), back["a"].device
        assert back["b"].device == torch.device("ocl", 1), back["b"].device
        assert torch.equal(back["b"].cpu(), c.t())
        moved = torch.load({str(path)!r}, map_location="ocl:1")
        assert moved["a"].device == torch.device("ocl", 1)
        assert torch.equal(moved["a"].cpu(), c)
        swapped = torch.load({str(path)!r}, map_location={{"ocl:0": "ocl:1", "ocl:1": "ocl:0"}})
        assert swapped["a"].device.index == 1 and swapped["b"].device.index == 0
        assert torch.equal(swapped["b"].cpu(), c.t())
        print("OK")
        """,
        env=TWO_DEVICES,
    )
    assert out.strip().endswith("OK")
