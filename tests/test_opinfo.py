"""PyTorch OpInfo conformance, quick subset (`make test`): every sample input of each listed
OpInfo runs on the CPU and on `ocl` in strict mode (no CPU fallback allowed) and must match, float32
gradients included. tools/conformance.py runs the same check over the whole op_db (`make
conformance`, docs/compatibility.md). Grow SUBSET as ops become native.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))

F32 = ("float32",)
FLOATS = ("float32", "float16", "bfloat16", "float64")
SOME = ("float32", "float16", "int64")

# (OpInfo name[.variant], dtypes). Only ops that are native on ocl for these dtypes belong here.
SUBSET = [
    ("add", ("float32", "float16", "bfloat16", "int64", "bool")),
    ("sub", SOME),
    ("mul", ("float32", "bfloat16", "int32", "bool")),
    ("div.no_rounding_mode", ("float32", "float64", "int64")),
    # float32 also checks gradients; where only the backward still falls back, the forward is
    # covered in other dtypes and the missing backward op is named.
    ("pow", ("float64", "bfloat16")),  # float32: logical_and.out in the backward; int: fallback
    ("abs", ("float64", "int16")),  # float32: sgn.out in the backward
    ("neg", F32),
    ("exp", ("float32", "bfloat16")),
    ("log", F32),
    ("sqrt", F32),
    ("rsqrt", F32),
    ("sin", ("float32", "float16", "int64")),
    ("cos", F32),
    ("tanh", ("float64", "bfloat16")),  # float32: tanh_backward.grad_input
    ("sigmoid", ("float64",)),  # float32: sigmoid_backward.grad_input
    ("acos", F32),
    ("ceil", F32),
    ("sign", F32),
    ("where", ("float32", "int64")),
    # clamp: the OpInfo's tensor-bound samples need clamp.Tensor_out (not native yet).
    ("sum", ("float32", "float16", "int64")),
    ("mean", F32),
    ("mm", F32),
    ("bmm", F32),
    ("addmm", F32),
    ("baddbmm", F32),
    ("addmv", F32),
    ("addbmm", F32),
    ("matmul", ("float32", "float64", "bfloat16")),
    ("nn.functional.linear", F32),
    ("nn.functional.conv2d", F32),
    ("nn.functional.relu", ("float32", "bfloat16")),
    ("nn.functional.gelu", F32),
    ("nn.functional.silu", F32),
    ("nn.functional.leaky_relu", F32),
    ("cat", ("float32", "int64", "bool")),
    ("clone", ("float32", "uint8")),
    ("contiguous", F32),
    ("broadcast_to", F32),
    ("diff", F32),
    ("fill", ("float32", "int8")),
    ("zeros_like", F32),
    ("ones_like", F32),
    ("nn.functional.softshrink", F32),
    ("nn.functional.glu", F32),
    ("nn.functional.prelu", F32),
    ("special.i1e", ("float32", "bfloat16")),
    ("special.bessel_j0", F32),
    ("polygamma.polygamma_n_2", F32),
    ("igamma", F32),
    ("renorm", F32),
    ("linalg.eig", ("float32", "float64", "complex64")),
    ("linalg.eigvals", F32),
]

CASES = [(name, d) for name, dtypes in SUBSET for d in dtypes]


@pytest.fixture(scope="module")
def ops():
    conformance = pytest.importorskip("conformance")
    pytest.importorskip("expecttest")  # torch.testing._internal needs it
    return conformance, {conformance.op_key(op): op for op in conformance.load_op_db()}


@pytest.mark.parametrize("name,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_opinfo_native(ops, name, dtype):
    conformance, by_key = ops
    op = by_key[name]
    assert dtype in conformance.op_dtypes(op, [dtype]), f"{name} does not support {dtype} on the CPU"
    r = conformance.check(op, dtype, budget=float("inf"))
    assert r["status"] == "native", f"{name} {dtype}: {r['status']}: {r['detail']}"
    assert r["samples"] > 0
