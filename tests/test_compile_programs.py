"""The kernels of a generated module build as one program (a few where there are many), not one
program each (src/torch_ocl/_inductor/runtime.py: _Batch); a kernel that does not build in the
batch still reports its own error, and the others still run."""

from __future__ import annotations

import random

import pytest
import torch
from torch._inductor.utils import run_and_get_code

import torch_ocl
from torch_ocl import _C
from torch_ocl._inductor import config as ocl_config
from torch_ocl._inductor import runtime

HELPERS = "inline float twice(float x) { return 2.0f * x; }\n"


def _kernel(name: str, expr: str) -> str:
    return (f"__kernel void {name}(__global float* a, ulong ao, __global const float* b, ulong bo,"
            f" int n) {{ int i = get_global_id(0); if (i < n) "
            f"a[ao / 4 + i] = {expr}; }}\n")


def _fresh(tag: str) -> str:
    # A source no cache has seen, from the OS's randomness: other tests seed `random`, and a name
    # repeated from an earlier process's run came from the disk cache (0 compiles; CI failed so).
    return f"{tag}_{random.SystemRandom().getrandbits(40):x}"


def test_batch_builds_one_program_and_kernels_run():
    names = [_fresh("k") for _ in range(3)]
    srcs = [HELPERS + _kernel(n, f"twice(b[bo / 4 + i]) + {j}.0f") for j, n in enumerate(names)]
    before = _C.program_cache_stats(0)["compiles"]
    scope = {n: runtime.async_compile_ocl(s, n, 0, HELPERS) for n, s in zip(names, srcs)}
    assert all(isinstance(v, runtime._BatchedKernel) for v in scope.values())
    runtime.wait_kernels(scope)
    assert _C.program_cache_stats(0)["compiles"] - before == 1
    b_cpu = torch.linspace(-3, 3, 37)
    b = b_cpu.to("ocl")
    for j, n in enumerate(names):
        a = torch.empty(37, device="ocl")
        scope[n](a, b, 37, global_size=(64,), local_size=(64,))
        torch.testing.assert_close(a.cpu(), 2 * b_cpu + j)


def test_placeholder_is_callable_before_any_wait():
    n = _fresh("k")
    k = runtime.async_compile_ocl(HELPERS + _kernel(n, "twice(b[bo / 4 + i])"), n, 0, HELPERS)
    b = torch.arange(5.0, device="ocl")
    a = torch.empty(5, device="ocl")
    k(a, b, 5, global_size=(8,), local_size=(8,))
    torch.testing.assert_close(a.cpu(), 2 * torch.arange(5.0))


def test_a_kernel_that_does_not_build_reports_its_own_error():
    good, bad = _fresh("good"), _fresh("bad")
    scope = {good: runtime.async_compile_ocl(HELPERS + _kernel(good, "twice(b[bo / 4 + i])"),
                                             good, 0, HELPERS),
             bad: runtime.async_compile_ocl(HELPERS + _kernel(bad, "no_such_function(1.0f)"),
                                            bad, 0, HELPERS)}
    with pytest.raises(RuntimeError, match="no_such_function"):
        runtime.wait_kernels(scope)
    k = scope[good]  # the good one was swapped in before the bad one raised, or builds now
    k = k.result() if isinstance(k, runtime._BatchedKernel) else k
    b = torch.ones(4, device="ocl")
    a = torch.empty(4, device="ocl")
    k(a, b, 4, global_size=(4,), local_size=(4,))
    torch.testing.assert_close(a.cpu(), torch.full((4,), 2.0))


def _several_kernels(x, w):
    # reductions over different dims and a pointwise tail: several generated kernels
    c = 1.0 + random_scale
    a = (x * c).softmax(-1)
    b = (x.t() * w).sum(1)
    return a.amax(0) + b, (x - x.mean()).abs().amax(1)


random_scale = random.random()  # new constants, so the kernels are not in any cache


def _programs_looked_up() -> int:
    s = _C.program_cache_stats(0)
    return s["compiles"] + s["memory_hits"] + s["disk_hits"]


@pytest.mark.parametrize("one_program", [True, False])
def test_compiled_module_programs_match_cpu(one_program):
    with ocl_config.patch(one_program_per_module=one_program):
        _compiled_module_programs_match_cpu(one_program)


def _compiled_module_programs_match_cpu(one_program):
    torch._dynamo.reset()
    x_cpu, w_cpu = torch.randn(29, 31), torch.randn(29)
    before = _programs_looked_up()
    with torch_ocl.strict():
        out, code = run_and_get_code(torch.compile(_several_kernels), x_cpu.to("ocl"),
                                     w_cpu.to("ocl"))
    built = _programs_looked_up() - before  # built, or found in memory or on disk
    src = "\n".join(code)
    kernels = src.count("= async_compile_ocl(")
    assert kernels >= 3, src
    if one_program:
        assert "_ocl_shared_source)" in src and "ocl_wait_kernels(globals())" in src
        assert built <= -(-kernels // runtime._KERNELS_PER_PROGRAM) + 1, (built, kernels)
    else:
        assert "_ocl_shared_source)" not in src
        assert built >= kernels
    ref = _several_kernels(x_cpu, w_cpu)
    for o, r in zip(out, ref):
        torch.testing.assert_close(o.cpu(), r, rtol=1e-5, atol=1e-5)
    torch._dynamo.reset()
