"""Tier 3: the program cache — in process (no recompiles) and on disk (a second process loads the
binary instead of compiling)."""

import json
import os

import pytest
import torch

import torch_ocl
from conftest import run_py

KEYS = {
    "memory_hits",
    "disk_hits",
    "disk_misses",
    "disk_corrupt",
    "disk_writes",
    "compiles",
    "compile_seconds",
    "disk_enabled",
    "disk_every_program",
    "disk_dir",
}


def test_stats_keys():
    s = torch_ocl._C.program_cache_stats(0)
    assert set(s) == KEYS
    for k in KEYS - {"disk_enabled", "disk_every_program", "disk_dir", "compile_seconds"}:
        assert isinstance(s[k], int) and s[k] >= 0, k
    assert isinstance(s["compile_seconds"], float)
    assert isinstance(s["disk_enabled"], bool) and isinstance(s["disk_every_program"], bool)
    assert isinstance(s["disk_dir"], str)


def test_in_process_cache_reuses_programs():
    c = torch.arange(35, dtype=torch.int16).reshape(5, 7)
    d = c.to("ocl")
    d.t().contiguous()  # builds (or finds) the int16 copy program
    before = torch_ocl._C.program_cache_stats(0)
    for _ in range(3):
        r = d.t().contiguous()
    after = torch_ocl._C.program_cache_stats(0)
    assert torch.equal(r.cpu(), c.t().contiguous())
    assert after["compiles"] == before["compiles"]
    assert after["memory_hits"] >= before["memory_hits"] + 3


def test_default_disk_cache_choice():
    s = torch_ocl._C.program_cache_stats(0)
    platform = torch.ocl.get_device_properties(0).platform_name
    if os.environ.get("TORCH_OCL_CACHE") is None and s["disk_dir"]:
        # NVIDIA's driver caches binaries itself; elsewhere ours is on, on PoCL (whose binaries
        # cost a compile of every kernel) for generated and user programs only.
        assert s["disk_enabled"] is ("NVIDIA" not in platform)
        assert s["disk_every_program"] is ("Portable Computing Language" not in platform)


_MIXED = """
import json, torch, torch_ocl
x = torch.arange(12, dtype=torch.float32, device="ocl")
y = (x * 3).cpu()  # an eager program
lib = torch_ocl.compile_kernel(
    "__kernel void twice(__global float* o, ulong oo, __global const float* i, ulong io) {"
    "  size_t k = get_global_id(0);"
    "  ((__global float*)((__global char*)o + oo))[k] = 2 * ((__global const float*)"
    "((__global const char*)i + io))[k]; }")
z = torch.empty_like(x)
lib.twice(z, x, global_size=(12,))
s = torch_ocl._C.program_cache_stats(0)
s["ok"] = torch.equal(y, torch.arange(12.) * 3) and torch.equal(z.cpu(), torch.arange(12.) * 2)
print(json.dumps(s))
"""


def test_pocl_default_stores_only_programs_whose_kernels_all_run(tmp_path):
    """On PoCL by default a user (or generated) program's binary is stored, an eager program's
    is not; TORCH_OCL_CACHE=1 stores both."""
    if "Portable Computing Language" not in torch.ocl.get_device_properties(0).platform_name:
        pytest.skip("the per-program rule applies to PoCL only")
    runs = {}
    for mode in ("default", "1"):
        env = {"TORCH_OCL_CACHE_DIR": str(tmp_path / mode), "TORCH_OCL_CACHE": None}
        if mode == "1":
            env["TORCH_OCL_CACHE"] = "1"
        rc, out, err = run_py(_MIXED, env=env)
        assert rc == 0, err
        cold = json.loads(out.strip().splitlines()[-1])
        rc, out, err = run_py(_MIXED, env=env)
        assert rc == 0, err
        warm = json.loads(out.strip().splitlines()[-1])
        assert cold["ok"] and warm["ok"]
        runs[mode] = (cold, warm)
    cold, warm = runs["default"]
    assert not cold["disk_every_program"] and cold["disk_writes"] >= 1
    # the user program comes from our disk; the eager programs are built again (PoCL's cache)
    assert warm["disk_hits"] >= 1 and warm["compiles"] >= 1
    cold1, warm1 = runs["1"]
    assert cold1["disk_every_program"] and cold1["disk_writes"] > cold["disk_writes"]
    assert warm1["compiles"] == 0 and warm1["disk_hits"] == cold1["disk_writes"]


_PROBE = """
import json, torch, torch_ocl
c = torch.arange(60, dtype=torch.float32).reshape(6, 10)
d = c.to("ocl")
ok = torch.equal(d.t().contiguous().cpu(), c.t().contiguous())
ok = ok and torch.equal(d[:, ::3].to(torch.int32).cpu(), c[:, ::3].to(torch.int32))
s = torch_ocl._C.program_cache_stats(0)
s["ok"] = ok
print(json.dumps(s))
"""


def _probe(cache_dir, enabled="1"):
    rc, out, err = run_py(_PROBE, env={"TORCH_OCL_CACHE": enabled, "TORCH_OCL_CACHE_DIR": str(cache_dir)})
    assert rc == 0, err
    stats = json.loads(out.strip().splitlines()[-1])
    assert stats["ok"], stats
    return stats


def test_disk_cache_across_processes(tmp_path):
    cache = tmp_path / "cache"
    first = _probe(cache)
    assert first["disk_enabled"] is True
    assert first["disk_dir"] == str(cache)
    assert first["compiles"] >= 2  # float copy and float->int32 programs
    assert first["disk_writes"] == first["compiles"]
    assert first["disk_hits"] == 0
    binaries = sorted(p.name for p in cache.iterdir())
    assert len(binaries) == first["disk_writes"], binaries
    assert all(name.endswith(".clbin") for name in binaries), binaries
    assert not [p for p in cache.iterdir() if p.stat().st_size == 0]

    second = _probe(cache)
    assert second["compiles"] == 0
    assert second["disk_hits"] == first["compiles"]
    assert second["disk_writes"] == 0
    assert sorted(p.name for p in cache.iterdir()) == binaries

    # A corrupt entry is detected, rebuilt and rewritten.
    victim = cache / binaries[0]
    victim.write_bytes(b"not a program binary" * 10)
    third = _probe(cache)
    assert third["disk_corrupt"] == 1
    assert third["compiles"] == 1
    assert third["disk_hits"] == first["compiles"] - 1
    assert victim.stat().st_size > 200
    fourth = _probe(cache)
    assert fourth["compiles"] == 0 and fourth["disk_corrupt"] == 0


def test_disk_cache_disabled(tmp_path):
    cache = tmp_path / "off"
    stats = _probe(cache, enabled="0")
    assert stats["disk_enabled"] is False
    assert stats["disk_writes"] == 0 and stats["disk_hits"] == 0
    assert not cache.exists() or not any(cache.iterdir())
