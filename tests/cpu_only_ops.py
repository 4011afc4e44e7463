"""Test-only operators with a CPU (and a Meta) kernel and none for ocl.

On ocl they always take the counted CPU fallback, whichever aten ops become native, so the
fallback, strict-mode and analyze tests do not depend on an aten op staying unimplemented.
"""

import torch

NAMESPACE = "ocl_test"
SCHEMAS = {
    "cpu_gcd": ("cpu_gcd(Tensor a, Tensor b) -> Tensor", torch.gcd),
    "cpu_lcm": ("cpu_lcm(Tensor a, Tensor b) -> Tensor", torch.lcm),
    "cpu_add": ("cpu_add(Tensor a, Tensor b) -> Tensor", torch.add),
}
# The Python snippet that defines them where this module is not imported (scripts run by the
# tests); it leaves them alone where they exist already.
DEFINE_SOURCE = f"""
import torch
if not hasattr(torch.ops.{NAMESPACE}, "cpu_gcd"):
    _ocl_test_lib = torch.library.Library({NAMESPACE!r}, "DEF")
    for _name, _schema, _fn in (
        ("cpu_gcd", "cpu_gcd(Tensor a, Tensor b) -> Tensor", torch.gcd),
        ("cpu_lcm", "cpu_lcm(Tensor a, Tensor b) -> Tensor", torch.lcm),
        ("cpu_add", "cpu_add(Tensor a, Tensor b) -> Tensor", torch.add),
    ):
        _ocl_test_lib.define(_schema)
        _ocl_test_lib.impl(_name, _fn, "CPU")
        _ocl_test_lib.impl(_name, _fn, "Meta")
"""

_lib = None


def _define():
    global _lib
    if _lib is not None:
        return
    ns = getattr(torch.ops, NAMESPACE)
    if all(hasattr(ns, name) for name in SCHEMAS):  # defined by another copy of this module
        return
    _lib = torch.library.Library(NAMESPACE, "DEF")
    for name, (schema, fn) in SCHEMAS.items():
        _lib.define(schema)
        _lib.impl(name, fn, "CPU")
        _lib.impl(name, fn, "Meta")  # shapes for torch.compile's fake tensors


_define()
gcd = torch.ops.ocl_test.cpu_gcd
lcm = torch.ops.ocl_test.cpu_lcm
add = torch.ops.ocl_test.cpu_add
GCD = "ocl_test::cpu_gcd"
LCM = "ocl_test::cpu_lcm"
ADD = "ocl_test::cpu_add"
