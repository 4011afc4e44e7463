"""Tier 1: streams (in-order OpenCL queues) and events."""

import pytest
import torch

from conftest import TWO_DEVICES, make_cpu, run_ok


def test_stream_objects():
    s = torch.ocl.Stream()
    assert isinstance(s, torch.Stream)
    assert s.device == torch.device("ocl", 0)
    assert s.device_index == 0
    assert s.stream_id != 0  # a pool stream, not the default one
    s2 = torch.Stream(device="ocl")
    assert s2.device.type == "ocl" and s2.device_index == 0
    s3 = torch.Stream(device="ocl:0")
    assert s3.device_index == 0
    assert torch.ocl.Stream(device="ocl:0").device_index == 0
    assert s == s and s != torch.ocl.default_stream()


def test_current_and_default_stream():
    cur = torch.ocl.current_stream()
    default = torch.ocl.default_stream()
    assert cur == default
    assert default.stream_id == 0
    assert torch.ocl.current_stream(0) == torch.accelerator.current_stream(0)
    assert torch.ocl.default_stream("ocl:0") == default


def test_stream_context_manager():
    s = torch.ocl.Stream()
    default = torch.ocl.current_stream()
    with torch.ocl.stream(s):
        assert torch.ocl.current_stream() == s
        assert torch.accelerator.current_stream() == s
    assert torch.ocl.current_stream() == default
    # torch.Stream is a context manager too.
    with s:
        assert torch.ocl.current_stream() == s
    assert torch.ocl.current_stream() == default
    with torch.ocl.stream(None):
        assert torch.ocl.current_stream() == default
    torch.ocl.set_stream(s)
    try:
        assert torch.ocl.current_stream() == s
    finally:
        torch.ocl.set_stream(default)
    assert torch.ocl.current_stream() == default


def test_stream_query_and_synchronize():
    s = torch.ocl.Stream()
    with torch.ocl.stream(s):
        x = torch.empty(1 << 22, device="ocl")
        x.fill_(1.0)
        y = x[::2].contiguous()
    s.synchronize()
    assert s.query() is True
    assert torch.ocl.current_stream().query() is True
    assert torch.equal(y.cpu(), torch.ones(1 << 21))


def test_event_record_query_synchronize():
    e = torch.ocl.Event()
    assert e.query() is True  # never recorded
    x = torch.empty(1 << 20, device="ocl")
    x.fill_(2)
    e.record()
    e.synchronize()
    assert e.query() is True
    assert x[-1].item() == 2.0
    # torch.Event on the device.
    e2 = torch.Event(device="ocl")
    e2.record(torch.ocl.current_stream())
    e2.synchronize()
    assert e2.query()
    ev = torch.ocl.current_stream().record_event()
    ev.synchronize()
    assert ev.query()


def test_event_elapsed_time():
    start = torch.ocl.Event(enable_timing=True)
    end = torch.ocl.Event(enable_timing=True)
    c = make_cpu((512, 512), torch.float32)
    start.record()
    for _ in range(3):
        d = c.to("ocl")
        d = d.t().contiguous()
        back = d.cpu()
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float)
    assert ms >= 0.0
    assert torch.equal(back, c.t().contiguous())
    # torch.Event(enable_timing=True) too.
    a = torch.Event(device="ocl", enable_timing=True)
    b = torch.Event(device="ocl", enable_timing=True)
    a.record()
    torch.ones(1000, device="ocl")
    b.record()
    b.synchronize()
    assert a.elapsed_time(b) >= 0.0
    # Events created without timing refuse elapsed_time.
    n1, n2 = torch.ocl.Event(), torch.ocl.Event()
    n1.record()
    n2.record()
    n2.synchronize()
    with pytest.raises(ValueError, match="enable_timing"):
        n1.elapsed_time(n2)


def test_side_stream_then_event_wait_orders_work():
    """Work on a side stream, an event the default stream waits for, then reads that are right."""
    n = 1 << 22
    default = torch.ocl.current_stream()
    side = torch.ocl.Stream()
    src = torch.ones(n, device="ocl")
    side.wait_stream(default)  # the side stream sees src initialised
    with torch.ocl.stream(side):
        a = torch.empty(n, device="ocl")
        a.copy_(src)  # device copy on the side stream
        a.fill_(5.0)
        b = a.view(2048, -1).t().contiguous()  # strided kernel on the side stream
        done = torch.ocl.Event()
        done.record(side)
    default.wait_event(done)
    # Consumers on the default stream run after the side stream's work.
    c = b.clone()
    c[0, 0] = 7.0
    torch.ocl.synchronize()
    expected = torch.full((n // 2048, 2048), 5.0)
    expected[0, 0] = 7.0
    assert torch.equal(c.cpu(), expected)
    # torch.Event.wait on a stream, and Stream.wait_event.
    e = torch.Event(device="ocl")
    with torch.ocl.stream(side):
        a.fill_(3.0)
        e.record(side)
    e.wait(default)
    assert a[123].item() == 3.0
    side.wait_event(default.record_event())
    side.synchronize()


def test_record_stream_keeps_block_alive():
    side = torch.ocl.Stream()
    default = torch.ocl.current_stream()
    x = torch.empty(1 << 20, device="ocl")
    x.fill_(9)
    side.wait_stream(default)
    with torch.ocl.stream(side):
        y = x.clone()
    x.record_stream(side)
    del x
    z = torch.empty(1 << 20, device="ocl")
    z.fill_(1)
    side.synchronize()
    torch.ocl.synchronize()
    assert torch.equal(y.cpu(), torch.full((1 << 20,), 9.0))
    assert torch.equal(z.cpu(), torch.ones(1 << 20))


def test_streams_on_second_device():
    out = run_ok(
        """
        import torch
        s1 = torch.ocl.Stream(device=1)
        assert s1.device_index == 1
        assert torch.Stream(device="ocl:1").device_index == 1
        with torch.ocl.stream(s1):
            assert torch.ocl.current_device() == 1
            assert torch.ocl.current_stream(1) == s1
            x = torch.ones(1000, device="ocl")
            assert x.device.index == 1
            e = torch.ocl.Event()
            e.record(s1)
        assert torch.ocl.current_device() == 0
        e.synchronize()
        assert torch.equal(x.cpu(), torch.ones(1000))
        assert torch.ocl.default_stream(1).device_index == 1
        print("OK")
        """,
        env=TWO_DEVICES,
    )
    assert out.strip().endswith("OK")
