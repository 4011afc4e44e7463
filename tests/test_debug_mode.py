"""Debug mode (TORCH_OCL_LAUNCH_BLOCKING=1 / torch_ocl.debug_mode()): a device-side check failure
is raised by the op that launched the failing kernel, named, and the device stays usable."""

import pytest
import torch

import torch_ocl

from conftest import run_ok


def test_debug_mode_raises_at_the_failing_op(ocl):
    x = torch.arange(10.0, device=ocl)
    bad = torch.tensor([1, 12], device=ocl)
    assert not torch_ocl._C.is_launch_blocking()
    with torch_ocl.debug_mode():
        assert torch_ocl._C.is_launch_blocking()
        with pytest.raises(RuntimeError, match=r"aten::index_select failed: .*index 12 is out of "
                                               r"bounds for dimension 0 with size 10"):
            x.index_select(0, bad)
        # The device stays usable, and results are still right, in debug mode.
        torch.testing.assert_close((x * 2).sum().cpu(), torch.tensor(90.0))
    assert not torch_ocl._C.is_launch_blocking()


def test_without_debug_mode_the_error_waits_for_a_sync(ocl):
    x = torch.arange(10.0, device=ocl)
    y = x.index_select(0, torch.tensor([12], device=ocl))  # returns: kernels never sync
    z = y + 1
    with pytest.raises(RuntimeError, match="index 12 is out of bounds"):
        z.cpu()
    assert (x + 1).sum().item() == 55.0


def test_env_variable_turns_it_on_for_the_process():
    out = run_ok(
        """
        import torch, torch_ocl
        print(torch_ocl._C.is_launch_blocking())
        x = torch.randn(10, device="ocl")
        try:
            x[torch.tensor([3, -20], device="ocl")]
        except RuntimeError as e:
            print(str(e).splitlines()[0])
        print(torch.ones(3, device="ocl").sum().item())
        """,
        env={"TORCH_OCL_LAUNCH_BLOCKING": "1"},
    )
    lines = out.strip().splitlines()
    assert lines[0] == "True"
    assert "debug mode" in lines[1] and "aten::index failed" in lines[1] and "-20" in lines[1]
    assert lines[2] == "3.0"
