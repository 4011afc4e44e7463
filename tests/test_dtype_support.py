"""float64 on a device without cl_khr_fp64: a clear error, never a silent downcast."""

import os
import subprocess
import sys
import textwrap

SNIPPET = textwrap.dedent(
    """
    import torch
    assert not torch.ocl.get_device_properties(0).fp64
    checks = {
        "factory": lambda: torch.ones(2, dtype=torch.float64, device="ocl"),
        "to": lambda: torch.ones(2, dtype=torch.float64).to("ocl"),
        "convert": lambda: torch.ones(2, device="ocl").double(),
        "complex128": lambda: torch.zeros(2, dtype=torch.complex128, device="ocl"),
    }
    for name, fn in checks.items():
        try:
            fn()
        except TypeError as e:
            assert "cl_khr_fp64" in str(e), str(e)
            print(name, "ok")
        else:
            raise SystemExit(name + ": no error")
    caps = torch.accelerator.get_device_capability()["supported_dtypes"]
    assert torch.float64 not in caps and torch.complex128 not in caps and torch.float32 in caps
    # float32 still works, and an fp64 host tensor can be converted explicitly.
    x = torch.arange(4, dtype=torch.float64).float().to("ocl")
    assert x.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    """
)


def test_fp64_without_extension_raises_clear_error():
    env = dict(os.environ, TORCH_OCL_DISABLE_FP64="1")
    p = subprocess.run([sys.executable, "-c", SNIPPET], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr + p.stdout
    for name in ("factory", "to", "convert", "complex128"):
        assert f"{name} ok" in p.stdout
