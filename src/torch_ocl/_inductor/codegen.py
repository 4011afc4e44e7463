"""OpenCL C code generation for Inductor, modelled on Inductor's Metal backend (codegen/mps.py).

One kernel per fused node group. Indexing is 64-bit; sizes are kernel arguments (``ks0``,
``xnumel``), never baked into the source, so ``dynamic=True`` compiles once.

Kernel shapes:
- pointwise: one work item per element of ``x`` (local size 256), guarded by ``xnumel``;
- reductions: one work group of ``RBLOCK`` work items per output row. Every work item strides
  through the row (``r0_index = lid, lid + RBLOCK, ...``), keeping a private accumulator, and a
  hand-written ``__local`` tree combines the work items (PoCL has no OpenCL 2.0 work-group
  functions). Pointwise work that needs a reduction result over the row runs in another loop
  over the row, as Inductor schedules it (one loop per reduction stage).

Values are computed in float for float16/bfloat16 (storage only without cl_khr_fp16) with the
eager generator's load/store helpers and math (``ocl_exp``/``ocl_erf``), exported from C++.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import sympy
import torch
from sympy.printing.precedence import PRECEDENCE
from torch._inductor.codegen.common import (
    CSE,
    BackendFeature,
    CSEVariable,
    DeferredLine,
    IndentedBuffer,
    OpOverrides,
    PythonPrinter,
)
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel, SIMDScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen
from torch._inductor.utils import get_bounds_index_expr, get_kernel_metadata
from torch._inductor.virtualized import V, ops
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.printers import ExprPrinter as ExprPrinter_

from .. import _C

_C10_NAME = {
    torch.bool: "Bool",
    torch.uint8: "Byte",
    torch.int8: "Char",
    torch.int16: "Short",
    torch.int32: "Int",
    torch.int64: "Long",
    torch.float16: "Half",
    torch.bfloat16: "BFloat16",
    torch.float32: "Float",
    torch.float64: "Double",
}


@functools.cache
def _dtype_table() -> dict:
    return _C._dtype_codegen()


def _info(dtype: torch.dtype) -> dict:
    name = _C10_NAME.get(dtype)
    if name is None:
        raise NotImplementedError(
            f"torch-ocl's compiled path does not support {dtype} yet (supported: "
            f"{', '.join(str(d) for d in _C10_NAME)})"
        )
    return _dtype_table()[name]


@functools.cache
def _device_is_cpu(index: int) -> bool:
    return _C.get_device_properties(index)["type"] == "CPU"


@functools.cache
def _device_has_fp64() -> bool:
    return bool(_C.get_device_properties(0)["fp64"])


def storage_type(dtype: torch.dtype) -> str:
    return _info(dtype)["storage"]


def var_type(dtype: torch.dtype | None) -> str:
    """OpenCL C type of a generated variable: float for half/bfloat16, bool for bool."""
    if dtype is None:
        return "__auto_type"
    if dtype == torch.bool:
        return "bool"
    if dtype == torch.float64 and not _device_has_fp64():
        # Scalar arithmetic Inductor keeps in float64 (sizes, Python floats); buffers of float64
        # are refused in load/store, so no float64 tensor is ever downcast.
        return "float"
    return _info(dtype)["compute"]


def _check_buffer_dtype(name: str, dtype: torch.dtype) -> None:
    if dtype == torch.float64 and not _device_has_fp64():
        raise RuntimeError(
            f"torch-ocl: buffer {name} is float64, but the device lacks cl_khr_fp64 "
            "(torch-ocl never downcasts silently; convert to float32 explicitly)"
        )
    _info(dtype)


def value_to_cl(val: Any, dtype: torch.dtype | None = None) -> str:
    if isinstance(val, bool):
        return "true" if val else "false"
    if isinstance(val, float):
        if val == math.inf:
            return "INFINITY"
        if val == -math.inf:
            return "-INFINITY"
        if val != val:
            return "NAN"
        if dtype is not None and not dtype.is_floating_point:
            return f"(({var_type(dtype)}){val!r})"
        if dtype == torch.float64 and _device_has_fp64():
            return repr(val)
        return f"{val!r}f"
    if isinstance(val, int):
        if dtype is not None and dtype.is_floating_point:
            return f"(({var_type(dtype)}){val})"
        if dtype == torch.int64 or not -(2**31) <= val < 2**31:
            return f"{val}L"
        return str(val)
    return str(val)


class OclExprPrinter(ExprPrinter_):
    """Sympy index expressions as OpenCL C (64-bit integers)."""

    def _print_FloorDiv(self, expr: sympy.Expr) -> str:
        x, div = (self.doprint(a) for a in expr.args)
        if expr.is_integer:
            return f"ocl_floordiv((long)({x}), (long)({div}))"
        return f"(floor({x}) / ({div}))"

    def _print_ModularIndexing(self, expr: sympy.Expr) -> str:
        x, div, mod = expr.args
        x = self.doprint(x)
        if div != 1:
            x = f"({x}) / ({self.doprint(div)})"
        return f"(({x}) % ({self.doprint(mod)}))"

    def _print_CleanDiv(self, expr: sympy.Expr) -> str:
        x, div = (self.doprint(a) for a in expr.args)
        return f"(({x}) / ({div}))"

    def _print_min_max(self, expr: sympy.Expr, op: str) -> str:
        args = [self._print(a) for a in expr.args]
        result = args[0]
        for a in args[1:]:
            result = f"(({result}) {op} ({a}) ? ({result}) : ({a}))"
        return result

    def _print_Min(self, expr: sympy.Expr) -> str:
        return self._print_min_max(expr, "<")

    def _print_Max(self, expr: sympy.Expr) -> str:
        return self._print_min_max(expr, ">")

    def _print_Abs(self, expr: sympy.Expr) -> str:
        x = self._print(expr.args[0])
        return f"(({x}) < 0 ? -({x}) : ({x}))"

    def _print_RoundToInt(self, expr: sympy.Expr) -> str:
        return f"((long)rint({self._print(expr.args[0])}))"

    def _print_IntTrueDiv(self, expr: sympy.Expr) -> str:
        a, b = (self._print(x) for x in expr.args)
        return f"((float)({a}) / (float)({b}))"

    def _print_FloatTrueDiv(self, expr: sympy.Expr) -> str:
        a, b = (self._print(x) for x in expr.args)
        return f"(({a}) / ({b}))"

    def _print_PowByNatural(self, expr: sympy.Expr) -> str:
        base, exp = expr.args
        if isinstance(exp, sympy.Integer) and 0 <= int(exp) <= 8:
            b = self._print(base)
            return "(" + " * ".join([f"({b})"] * int(exp)) + ")" if int(exp) else "1"
        b, e = self._print(base), self._print(exp)
        return f"((long)pown((float)({b}), (int)({e})))"

    def _print_ToFloat(self, expr: sympy.Expr) -> str:
        return f"((float)({self._print(expr.args[0])}))"

    def _print_Float(self, expr: sympy.Expr) -> str:
        if expr.is_integer:
            return str(int(expr))
        return f"{float(expr)!r}f"

    def _print_FloorToInt(self, expr: sympy.Expr) -> str:
        return f"((long)floor((float)({self._print(expr.args[0])})))"

    _print_floor = _print_FloorToInt

    def _print_CeilToInt(self, expr: sympy.Expr) -> str:
        return f"((long)ceil((float)({self._print(expr.args[0])})))"

    _print_ceiling = _print_CeilToInt

    def _print_TruncToInt(self, expr: sympy.Expr) -> str:
        return f"((long)trunc({self._print(expr.args[0])}))"

    def _print_Where(self, expr: sympy.Expr) -> str:
        c, p, q = (self.parenthesize(a, PRECEDENCE["Atom"] - 0.5) for a in expr.args)
        return f"({c} ? {p} : {q})"

    def _print_Identity(self, expr: sympy.Expr) -> str:
        return self._print(expr.args[0])


@functools.cache
def _math_names(ct: str) -> dict[str, str]:
    """The eager generator's names of exp/erf for OpenCL C type `ct` (its math macros)."""
    names = {}
    for line in _C._math_macros(ct).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "#define":
            names[parts[1]] = parts[2]
    return names


def _math(name: str):
    def fn(x):
        dtype = getattr(x, "dtype", None)
        ct = "double" if dtype == torch.float64 and _device_has_fp64() else "float"
        return f"{_math_names(ct)[name]}({x})"

    return staticmethod(fn)


def _is_float(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and dtype.is_floating_point


def _unary(fn: str):
    return staticmethod(lambda x: f"{fn}({x})")


class OclOverrides(OpOverrides):
    """OpenCL C for Inductor's ops. Math goes through the same helpers as the eager generator
    (``ocl_exp``/``ocl_erf`` from prelude.cl and the math macros, half/bf16 rounding)."""

    @staticmethod
    def to_dtype(x, dtype, src_dtype=None, use_compute_types=True):
        if dtype == torch.bool:
            return f"(({x}) != 0)"
        if dtype == torch.float16:
            return f"ocl_round_to_half((float)({x}))"
        if dtype == torch.bfloat16:
            return f"ocl_round_to_bf16((float)({x}))"
        return f"(({var_type(dtype)})({x}))"

    @staticmethod
    def to_dtype_bitcast(x, dtype, src_dtype):
        return f"as_{var_type(dtype)}(({var_type(src_dtype)})({x}))"

    @staticmethod
    def constant(val, dtype):
        return value_to_cl(val, dtype)

    @staticmethod
    def index_expr(expr, dtype):
        idx_str = V.kernel.index_to_str(V.kernel.prepare_indexing(expr))
        var = V.kernel.cse.generate(
            V.kernel.compute, idx_str, bounds=get_bounds_index_expr(expr), dtype=torch.int64
        )
        return ops.to_dtype(var, dtype)

    @staticmethod
    def value_expr(expr, dtype):
        return OclOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask, body, other):
        scoped_body = IndentedBuffer()
        with V.kernel.swap_buffers(scoped_body), scoped_body.indent():
            V.kernel.cse.iter_buffer_ids = itertools.count()
            V.kernel.cse.name_prefix += "_scoped"
            rc = body()
        dtype = rc.dtype
        if dtype is None:
            raise NotImplementedError("torch-ocl's compiled path needs the dtype of a masked value")
        other_str = value_to_cl(other, dtype)
        cache_key = f"{mask}:{scoped_body.getvalue()}:{other_str}"
        var = V.kernel.cse.try_get(cache_key)
        if not var:
            var = V.kernel.cse.newvar(dtype=dtype)
            V.kernel.cse.put(cache_key, var)
            V.kernel.compute.writelines([f"{var_type(dtype)} {var};", f"if ({mask}) {{"])
            with V.kernel.compute.indent():
                V.kernel.compute.splice(scoped_body)
                V.kernel.compute.writeline(f"{var} = {rc};")
            V.kernel.compute.writeline(f"}} else {var} = {other_str};")
        return var

    @staticmethod
    def where(a, b, c):
        return f"(({a}) ? ({b}) : ({c}))"

    @staticmethod
    def remainder(a, b):
        if _is_float(a) or _is_float(b):
            return f"ocl_remainder_f({a}, {b})"
        return f"ocl_remainder_i((long)({a}), (long)({b}))"

    @staticmethod
    def fmod(a, b):
        if _is_float(a) or _is_float(b):
            return f"fmod({a}, {b})"
        return f"(({a}) % ({b}))"

    @staticmethod
    def mod(a, b):
        return OclOverrides.fmod(a, b)

    @staticmethod
    def floordiv(a, b):
        if _is_float(a) or _is_float(b):
            return f"floor(({a}) / ({b}))"
        return f"ocl_floordiv((long)({a}), (long)({b}))"

    @staticmethod
    def truncdiv(a, b):
        if _is_float(a) or _is_float(b):
            return f"trunc(({a}) / ({b}))"
        return f"(({a}) / ({b}))"

    @staticmethod
    def truediv(a, b):
        return f"(({a}) / ({b}))"

    @staticmethod
    def int_truediv(a, b):
        return f"((float)({a}) / (float)({b}))"

    @staticmethod
    def pow(a, b):
        if _is_float(a) or _is_float(b):
            return f"pow({a}, {b})"
        return f"((long)pown((float)({a}), (int)({b})))"

    @staticmethod
    def maximum(a, b):
        if _is_float(a) or _is_float(b):
            return f"((isnan({a}) || isnan({b})) ? ({a}) + ({b}) : fmax({a}, {b}))"
        return f"(({a}) > ({b}) ? ({a}) : ({b}))"

    @staticmethod
    def minimum(a, b):
        if _is_float(a) or _is_float(b):
            return f"((isnan({a}) || isnan({b})) ? ({a}) + ({b}) : fmin({a}, {b}))"
        return f"(({a}) < ({b}) ? ({a}) : ({b}))"

    @staticmethod
    def abs(x):
        if _is_float(x):
            return f"fabs({x})"
        return f"(({x}) < 0 ? -({x}) : ({x}))"

    @staticmethod
    def sign(x):
        return f"((({x}) > 0) - (({x}) < 0))"

    @staticmethod
    def signbit(x):
        return f"(signbit({x}) != 0)"

    @staticmethod
    def isnan(x):
        return f"(isnan({x}) != 0)"

    @staticmethod
    def isinf(x):
        return f"(isinf({x}) != 0)"

    @staticmethod
    def neg(x):
        return f"(-({x}))"

    @staticmethod
    def reciprocal(x):
        return f"(1.0f / ({x}))"

    @staticmethod
    def relu(x):
        return f"(({x}) > 0 ? ({x}) : 0)"

    @staticmethod
    def sigmoid(x):
        if getattr(x, "dtype", None) == torch.float64 and _device_has_fp64():
            return f"(1.0 / (1.0 + {_math_names('double')['ocl_exp']}(-({x}))))"
        return f"(1.0f / (1.0f + {_math_names('float')['ocl_exp']}(-({x}))))"

    @staticmethod
    def logical_and(a, b):
        return f"(({a}) && ({b}))"

    @staticmethod
    def logical_or(a, b):
        return f"(({a}) || ({b}))"

    @staticmethod
    def logical_xor(a, b):
        return f"((({a}) != 0) != (({b}) != 0))"

    @staticmethod
    def logical_not(a):
        return f"(!({a}))"

    @staticmethod
    def round(x):
        return f"rint({x})"

    @staticmethod
    def atan2(a, b):
        return f"atan2({a}, {b})"

    @staticmethod
    def hypot(a, b):
        return f"hypot({a}, {b})"

    @staticmethod
    def copysign(a, b):
        return f"copysign({a}, {b})"

    @staticmethod
    def nextafter(a, b):
        return f"nextafter({a}, {b})"

    @staticmethod
    def rand(seed, offset):
        # The device's Philox stream (prelude.cl); element `offset` under key `seed`.
        return f"ocl_uniform_float(ocl_philox_at((ulong)({seed}), 0, (long)({offset})).x)"

    @staticmethod
    def randn(seed, offset):
        return f"ocl_randn((ulong)({seed}), (long)({offset}))"

    @staticmethod
    def randint64(seed, offset, low, high):
        return f"ocl_randint64((ulong)({seed}), (long)({offset}), (long)({low}), (long)({high}))"

    exp = _math("ocl_exp")
    erf = _math("ocl_erf")
    exp2 = _unary("exp2")
    expm1 = _unary("expm1")
    log = _unary("log")
    log2 = _unary("log2")
    log10 = _unary("log10")
    log1p = _unary("log1p")
    sqrt = _unary("sqrt")
    rsqrt = _unary("rsqrt")
    sin = _unary("sin")
    cos = _unary("cos")
    tan = _unary("tan")
    asin = _unary("asin")
    acos = _unary("acos")
    atan = _unary("atan")
    sinh = _unary("sinh")
    cosh = _unary("cosh")
    tanh = _unary("tanh")
    asinh = _unary("asinh")
    acosh = _unary("acosh")
    atanh = _unary("atanh")
    erfc = _unary("erfc")
    lgamma = _unary("lgamma")
    floor = _unary("floor")
    ceil = _unary("ceil")
    trunc = _unary("trunc")
    libdevice_exp = exp
    libdevice_log = log
    libdevice_sqrt = sqrt
    libdevice_abs = staticmethod(lambda x: OclOverrides.abs(x))


# Helpers the generated code needs beyond the prelude: Python-style integer division and
# remainder, normal and integer random numbers from the prelude's Philox.
_KERNEL_HELPERS = r"""
inline long ocl_floordiv(long a, long b) {
  const long q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline long ocl_remainder_i(long a, long b) {
  const long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline float ocl_remainder_f(float a, float b) {
  const float r = fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
// Chan et al.'s parallel Welford update of (mean, m2, weight) with another partial.
#define OCL_WELFORD_COMBINE(T, m, m2, w, bm, bm2, bw)                                   \
  if ((bw) != 0) {                                                                    \
    const T ocl_wf_nw = (w) + (bw), ocl_wf_d = (bm) - (m), ocl_wf_r = (bw) / ocl_wf_nw; \
    (m) += ocl_wf_d * ocl_wf_r;                                                         \
    (m2) += (bm2) + ocl_wf_d * ocl_wf_d * (w) * ocl_wf_r;                               \
    (w) = ocl_wf_nw;                                                                    \
  }
inline void ocl_atomic_add_float(__global float* p, float v) {
  volatile __global uint* u = (volatile __global uint*)p;
  uint expected = *u, seen;
  while ((seen = atomic_cmpxchg(u, expected, as_uint(as_float(expected) + v))) != expected)
    expected = seen;
}
inline void ocl_atomic_add_int(__global int* p, int v) { atomic_add((volatile __global int*)p, v); }
inline float ocl_randn(ulong seed, long offset) {
  const uint4 r = ocl_philox_at(seed, 0, offset);
  const float u1 = fmax(ocl_uniform_float(r.x), 1.0e-7f), u2 = ocl_uniform_float(r.y);
  return sqrt(-2.0f * log(u1)) * cos(6.283185307179586f * u2);
}
inline long ocl_randint64(ulong seed, long offset, long low, long high) {
  const uint4 r = ocl_philox_at(seed, 0, offset);
  const ulong bits = ((ulong)r.x << 32) | r.y;
  return low + (long)(bits % (ulong)(high - low));
}
"""


class OclCSE(CSE):
    """CSE whose declarations carry the OpenCL C type of the new variable (no `auto` in C)."""

    def __init__(self, *args, **kwargs):
        self._next_type = "__auto_type "
        super().__init__(*args, **kwargs)

    @property
    def prefix(self) -> str:
        return self._next_type

    @prefix.setter
    def prefix(self, value: str) -> None:
        pass

    def newvar(self, bounds=None, dtype=None, shape=None):
        from torch.utils._sympy.value_ranges import ValueRanges

        var = super().newvar(bounds if bounds is not None else ValueRanges.unknown(), dtype, shape)
        self._next_type = f"{var_type(dtype)} "
        return var


_POINTWISE_LOCAL = 256
_ROW_LOCAL = 64  # rows per work group when each work item reduces a row (CPU drivers)
_MAX_RBLOCK = 256


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


class OclKernel(SIMDKernel):
    overrides = OclOverrides  # type: ignore[assignment]
    suffix = ";"
    newvar_prefix = ""
    pexpr = PythonPrinter().doprint
    sexpr = OclExprPrinter().doprint
    kexpr = sexpr

    def __init__(self, tiling: dict[str, sympy.Expr], **kwargs: Any) -> None:
        super().__init__(tiling, **kwargs)
        self.cse = OclCSE(self.newvar_prefix, self.suffix)
        self.acc_ids = itertools.count()
        self.local_decls = IndentedBuffer()  # __local arrays: kernel function scope
        self.pre_loop = IndentedBuffer()  # accumulators of the current reduction loop
        self.post_loop = IndentedBuffer()  # work-group combines after the loop
        self.reduction_stores = IndentedBuffer()  # stores of reduction results
        self.outside_loop_vars: OrderedSet[Any] = OrderedSet()
        self.reducing = self.numels.get("r0_", sympy.S.One) != 1
        self.serial_results: dict[str, str] = {}
        self.rblock = self._rblock()

    def _rblock(self) -> int:
        if not self.inside_reduction:
            return 1
        from . import config

        if config.cpu_row_per_work_item and _device_is_cpu(
            V.graph.get_current_device_or_throw().index or 0
        ):
            # CPU drivers run a work group on one thread: a tree there buys nothing but barriers
            # (PoCL, small MiniLM's add+layer_norm kernel: 9.0 ms per step as trees, 4.9 ms
            # this way). One work item per row, rows side by side in a work group, as the eager
            # generator does on CPU drivers.
            return 1
        rnumel = self.numels.get("r0_", sympy.S.One)
        if isinstance(rnumel, (int, sympy.Integer)):
            return max(1, min(_next_pow2(int(rnumel)), _MAX_RBLOCK))
        return _MAX_RBLOCK

    def should_use_persistent_reduction(self) -> bool:
        # Every reduction strides through its row in a loop; rows up to RBLOCK take one trip.
        return False

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return var_type(dtype)

    def create_cse_var(self, *args: Any, **kwargs: Any) -> CSEVariable:
        var = super().create_cse_var(*args, **kwargs)
        if not self.inside_reduction:
            self.outside_loop_vars.add(var)
        return var

    @property
    def _rtree(self):
        if not self.reducing:
            return None
        return next((t for t in self.range_trees if t.is_reduction), None)

    # ---- memory ---------------------------------------------------------------------------

    def load(self, name: str, index: sympy.Expr) -> CSEVariable:
        var = self.args.input(name)
        dtype = V.graph.get_dtype(name)
        if V.graph.is_unspec_arg(name):
            # A 0-d CPU tensor (a Python number Dynamo wrapped, an optimizer's step count):
            # passed by value, as Inductor does for Triton; never read from host memory.
            compute = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
            return self.cse.generate(self.loads, var, dtype=compute)
        index = self.prepare_indexing(index)
        _check_buffer_dtype(name, dtype)
        line = _info(dtype)["load"].replace("@P", var).replace("@I", self.index_to_str(index))
        if dtype == torch.bool:
            line = f"({line} != 0)"
        compute = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        return self.cse.generate(self.loads, line, dtype=compute)

    def store(self, name: str, index: sympy.Expr, value: CSEVariable, mode=None) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        _check_buffer_dtype(name, dtype)
        info = _info(dtype)
        if mode == "atomic_add":
            # Scatter-add (index_put accumulate, embedding backward): OpenCL 1.2 has 32-bit
            # integer atomics; float adds go through a compare-and-swap loop.
            fn = {torch.float32: "ocl_atomic_add_float", torch.int32: "ocl_atomic_add_int"}.get(dtype)
            if fn is None:
                raise NotImplementedError(
                    f"torch-ocl's compiled path has no atomic add for {dtype} yet "
                    "(float32 and int32 only)"
                )
            line = f"{fn}({var} + {self.index_to_str(index)}, ({info['compute']})({value}));"
            if self.inside_reduction:
                self.compute.writeline(DeferredLine(name, line))
            elif self._rtree is not None:
                self.reduction_stores.writeline(DeferredLine(name, f"if (r0_lid == 0) {line}"))
            else:
                self.stores.writeline(DeferredLine(name, line))
            return
        if mode is not None:
            raise NotImplementedError(
                f"torch-ocl's compiled path does not support store mode {mode!r} yet"
            )
        if dtype == torch.bool:
            cast = f"(uchar)(({value}) != 0)"
        else:
            cast = f"({info['compute']})({value})"
        line = (
            info["store"]
            .replace("@P", var)
            .replace("@I", self.index_to_str(index))
            .replace("@V", cast)
        )
        if self.inside_reduction:
            self.compute.writeline(DeferredLine(name, line))
        else:
            if self._rtree is not None:
                # A reduction's result (or x-only work) in a reduction kernel: one work item
                # stores it, after the loop and the work-group combine that produce it.
                self.reduction_stores.writeline(DeferredLine(name, f"if (r0_lid == 0) {line}"))
            else:
                self.stores.writeline(DeferredLine(name, line))

    # ---- reductions -----------------------------------------------------------------------

    def _acc(self, ctype: str, init: str) -> str:
        name = f"acc{next(self.acc_ids)}"
        self.pre_loop.writeline(f"{ctype} {name} = {init};")
        return name

    def _local(self, ctype: str) -> str:
        name = f"lbuf{next(self.acc_ids)}"
        if self.rblock > 1:
            self.local_decls.writeline(f"__local {ctype} {name}[{self.rblock}];")
        return name

    def _barrier(self) -> None:
        if self.rblock > 1:
            self.post_loop.writeline("barrier(CLK_LOCAL_MEM_FENCE);")

    def _tree(self, bufs: list[tuple[str, str]], combine: str) -> None:
        """Combines RBLOCK partials held in `bufs` ((local array, private value) pairs) into
        element 0 of each array. `combine` is a statement over A<k> (lvalues at i) and B<k>
        (values at i + s). With one work item per row the private values are the results."""
        if self.rblock == 1:
            for buf, val in bufs:
                self.serial_results[f"{buf}[0]"] = val
            return
        w = self.post_loop
        for buf, val in bufs:
            w.writeline(f"{buf}[r0_lid] = {val};")
        w.writeline("barrier(CLK_LOCAL_MEM_FENCE);")
        w.writeline(f"for (int s = {self.rblock // 2}; s > 0; s >>= 1) {{")
        with w.indent():
            w.writeline("if (r0_lid < s) {")
            stmt = combine
            for k, (buf, _) in enumerate(bufs):
                stmt = stmt.replace(f"A{k}", f"{buf}[r0_lid]").replace(f"B{k}", f"{buf}[r0_lid + s]")
            with w.indent():
                w.writeline(stmt)
            w.writeline("}")
            w.writeline("barrier(CLK_LOCAL_MEM_FENCE);")
        w.writeline("}")

    def _result(self, expr: str, dtype: torch.dtype) -> CSEVariable:
        expr = self.serial_results.get(expr, expr)
        var = self.cse.newvar(dtype=dtype)
        self.post_loop.writeline(f"const {var_type(dtype)} {var} = {expr};")
        self.outside_loop_vars.add(var)
        return var

    def reduction(self, dtype, src_dtype, reduction_type, value):
        cache_key = (src_dtype, reduction_type, value)
        if cache_key in self.cse.reduction_cache:
            return self.cse.reduction_cache[cache_key]
        result = self._reduction_nocache(dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[cache_key] = result
        return result

    def _reduction_nocache(self, dtype, src_dtype, reduction_type, value):
        assert self.inside_reduction
        w = self.compute
        acc_dtype = (
            torch.float32 if src_dtype in (torch.float16, torch.bfloat16) else src_dtype
        )
        if reduction_type in ("sum", "prod", "xor_sum", "any", "max", "min"):
            # any: a uchar accumulator (bool is not a __local element type everywhere)
            rdtype = torch.uint8 if reduction_type == "any" else acc_dtype
            ct = var_type(rdtype)
            is_float = rdtype.is_floating_point
            if reduction_type == "sum":
                init, upd = "0", "{a} + {b}"
            elif reduction_type == "prod":
                init, upd = "1", "{a} * {b}"
            elif reduction_type == "xor_sum":
                init, upd = "0", "{a} ^ {b}"
            elif reduction_type == "any":
                init, upd = "0", "(({a}) || ({b}))"
            else:
                big = {
                    torch.float32: "INFINITY",
                    torch.float64: "INFINITY",
                    torch.int64: "LONG_MAX",
                    torch.int32: "INT_MAX",
                    torch.int16: "SHRT_MAX",
                    torch.int8: "CHAR_MAX",
                    torch.uint8: "UCHAR_MAX",
                    torch.bool: "1",
                }[rdtype]
                small = {
                    torch.float32: "-INFINITY",
                    torch.float64: "-INFINITY",
                    torch.int64: "LONG_MIN",
                    torch.int32: "INT_MIN",
                    torch.int16: "SHRT_MIN",
                    torch.int8: "CHAR_MIN",
                    torch.uint8: "0",
                    torch.bool: "0",
                }[rdtype]
                cmp = ">" if reduction_type == "max" else "<"
                init = small if reduction_type == "max" else big
                if is_float:  # NaN wins, as in eager
                    upd = f"((isnan({{a}}) || ({{a}}) {cmp} ({{b}})) ? ({{a}}) : ({{b}}))"
                else:
                    upd = f"((({{a}}) {cmp} ({{b}})) ? ({{a}}) : ({{b}}))"
            acc = self._acc(ct, init)
            w.writeline(f"{acc} = {upd.format(a=acc, b=f'({ct})({value})')};")
            buf = self._local(ct)
            self._tree([(buf, acc)], f"A0 = {upd.format(a='A0', b='B0')};")
            res = self._result(f"{buf}[0]", dtype if reduction_type == "any" else rdtype)
            self._barrier()
            return res
        if reduction_type in ("argmax", "argmin"):
            ct = var_type(acc_dtype)
            cmp = ">" if reduction_type == "argmax" else "<"
            is_float = acc_dtype.is_floating_point
            limits = {
                "long": ("LONG_MIN", "LONG_MAX"),
                "int": ("INT_MIN", "INT_MAX"),
                "short": ("SHRT_MIN", "SHRT_MAX"),
                "char": ("CHAR_MIN", "CHAR_MAX"),
                "uchar": ("0", "UCHAR_MAX"),
                "bool": ("0", "1"),
            }
            if is_float:
                init = "-INFINITY" if cmp == ">" else "INFINITY"
            else:
                init = limits[ct][0 if cmp == ">" else 1]
            # take (bv, bi) over (av, ai): NaN first, then the better value, ties to the lower index
            if is_float:
                take = (
                    "((isnan({bv}) && (!isnan({av}) || {bi} < {ai})) || "
                    "(!isnan({av}) && !isnan({bv}) && "
                    f"(({{bv}}) {cmp} ({{av}}) || (({{bv}}) == ({{av}}) && {{bi}} < {{ai}}))))"
                )
            else:
                take = f"(({{bv}}) {cmp} ({{av}}) || (({{bv}}) == ({{av}}) && {{bi}} < {{ai}}))"
            av, ai = self._acc(ct, init), self._acc("long", "LONG_MAX")
            cv = self.cse.generate(w, f"({ct})({value})", dtype=acc_dtype)
            w.writeline(
                f"if ({take.format(bv=cv, bi='r0_index', av=av, ai=ai)}) "
                f"{{ {av} = {cv}; {ai} = r0_index; }}"
            )
            vb, ib = self._local(ct), self._local("long")
            self._tree(
                [(vb, av), (ib, ai)],
                f"if ({take.format(bv='B0', bi='B1', av='A0', ai='A1')}) {{ A0 = B0; A1 = B1; }}",
            )
            res = self._result(f"{ib}[0]", dtype)
            self._barrier()
            return res
        if reduction_type in ("welford_reduce", "welford_combine"):
            ct = "float" if acc_dtype != torch.float64 else var_type(torch.float64)
            m, m2, wt = self._acc(ct, "0"), self._acc(ct, "0"), self._acc(ct, "0")
            if reduction_type == "welford_reduce":
                v = self.cse.generate(
                    w, f"({ct})({value})", dtype=torch.float64 if ct == "double" else torch.float32
                )
                w.writelines(
                    [
                        "{",
                        f"  {wt} += 1;",
                        f"  const {ct} d = {v} - {m};",
                        f"  {m} += d / {wt};",
                        f"  {m2} += d * ({v} - {m});",
                        "}",
                    ]
                )
            else:
                bm, bm2, bw = value
                w.writeline(f"OCL_WELFORD_COMBINE({ct}, {m}, {m2}, {wt}, {bm}, {bm2}, {bw})")
            bufs = [(self._local(ct), m), (self._local(ct), m2), (self._local(ct), wt)]
            self._tree(bufs, f"OCL_WELFORD_COMBINE({ct}, A0, A1, A2, B0, B1, B2)")
            out = tuple(
                self._result(f"{buf}[0]", torch.float32 if ct == "float" else torch.float64)
                for buf, _ in bufs
            )
            self._barrier()
            return out
        raise NotImplementedError(
            f"torch-ocl's compiled path does not support the {reduction_type!r} reduction yet"
        )

    # ---- structure ------------------------------------------------------------------------

    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        line = f"const long {entry.name} = {self.sexpr(self.rename_indexing(entry.expr))};"
        if entry.root.is_loop:
            self.indexing_code.writeline(line)
        else:
            self.body.writeline(line)

    def codegen_body(self) -> None:
        if not (self.loads or self.compute or self.stores or self.post_loop or self.pre_loop
                or self.reduction_stores):
            return
        if self.inside_reduction and self._rtree is not None:
            self.body.splice(self.pre_loop)
            self.body.writeline(
                f"for (long r0_index = r0_lid; r0_index < r0_numel; r0_index += {self.rblock}) {{"
            )
            with self.body.indent():
                self.body.splice(self.indexing_code)
                self.body.splice(self.loads)
                self.body.splice(self.compute)
                self.body.splice(self.stores)
            self.body.writeline("}")
            self.body.splice(self.post_loop)
            self.body.splice(self.reduction_stores)
            # What the loop defined is gone; reduction results and outer values live on.
            self.cse.invalidate(self.outside_loop_vars)
            for node in self.range_tree_nodes.values():
                if node.root.is_loop:
                    node.cache_clear()
        else:
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
            self.body.splice(self.reduction_stores)
        for buf in (self.indexing_code, self.loads, self.compute, self.stores, self.pre_loop,
                    self.post_loop, self.reduction_stores):
            buf.clear()

    def _numel_args(self) -> list[tuple[str, sympy.Expr]]:
        out = []
        for tree in self.range_trees:
            if tree.is_reduction and not self.inside_reduction:
                continue
            out.append((f"{tree.prefix}numel", tree.numel))
        return out

    def codegen_kernel(self, name: str | None = None) -> str:
        self.codegen_body()
        trees = [t for t in self.range_trees if not (t.is_reduction and not self.inside_reduction)]
        if len([t for t in trees if not t.is_reduction]) > 1 or len(
            [t for t in trees if t.is_reduction]
        ) > 1:
            raise NotImplementedError("torch-ocl's compiled path supports 1-d tilings only")
        code = IndentedBuffer()
        code.splice(_KERNEL_HELPERS)
        params = []
        ptr_fix = []
        for outer, inner in self.args.output_buffers.items():
            if outer in self.removed_buffers:
                continue
            st = storage_type(V.graph.get_dtype(outer))
            params += [f"__global {st}* {inner}", f"ulong {inner}_off"]
            ptr_fix.append(f"{inner} = (__global {st}*)((__global char*){inner} + {inner}_off);")
        for outer, inner in self.args.input_buffers.items():
            if V.graph.is_unspec_arg(outer):
                params.append(f"{var_type(V.graph.get_dtype(outer))} {inner}")
                continue
            st = storage_type(V.graph.get_dtype(outer))
            params += [f"__global const {st}* {inner}", f"ulong {inner}_off"]
            ptr_fix.append(
                f"{inner} = (__global const {st}*)((__global const char*){inner} + {inner}_off);"
            )
        for inner in self.args.sizevars.values():
            params.append(f"long {inner}")
        for numel_name, _ in self._numel_args():
            params.append(f"long {numel_name}")
        code.writeline(f"__kernel void {name or 'KERNEL_NAME'}(")
        with code.indent():
            code.writeline(",\n    ".join(params))
        code.writeline(") {")
        with code.indent():
            code.splice(self.local_decls)
            for line in ptr_fix:
                code.writeline(line)
            if self._rtree is not None and self.inside_reduction and self.rblock > 1:
                code.writeline("const long xindex = get_group_id(0);")
                code.writeline("const int r0_lid = (int)get_local_id(0);")
            elif self._rtree is not None and self.inside_reduction:
                code.writeline("const long xindex = get_global_id(0);")
                code.writeline("if (xindex >= xnumel) return;")
                code.writeline("const int r0_lid = 0;")
            else:
                code.writeline("const long xindex = get_global_id(0);")
                code.writeline("if (xindex >= xnumel) return;")
            code.splice(self.body)
        code.writeline("}")
        return code.getvalue()

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        _, call_args, _, arg_types = self.args.python_argdefs()
        by_name = {str(a): t for a, t in zip(call_args, arg_types)}
        args = [*self.args.output_buffers.keys(), *self.args.input_buffers.keys()]
        args = [a for a in args if a not in self.removed_buffers]
        args += [str(v) for v in self.args.sizevars]
        types = [by_name[a] for a in args]
        args = [f"{a}.item()" if V.graph.is_unspec_arg(a) else a for a in args]
        numels = {}
        for numel_name, numel in self._numel_args():
            numels[numel_name] = self.pexpr(V.graph.sizevars.simplify(numel))
            args.append(numels[numel_name])
            types.append(int)
        x = numels["xnumel"]
        static = x.isdigit()  # static sizes: the launch geometry is a constant in the wrapper
        if self._rtree is not None and self.inside_reduction and self.rblock > 1:
            loc = self.rblock
            glob = str(int(x) * loc) if static else f"({x}) * {loc}"
        else:
            loc = _ROW_LOCAL if self._rtree is not None else _POINTWISE_LOCAL
            glob = str((int(x) + loc - 1) // loc * loc) if static else f"(({x}) + {loc - 1}) // {loc} * {loc}"
        args.append(f"global_size=({glob},)")
        args.append(f"local_size=({loc},)")
        types += [list, list]
        wrapper.generate_kernel_call(
            name, args, device=V.graph.get_current_device_or_throw(), triton=False, arg_types=types
        )

    def check_bounds(self, expr, size, lower, upper) -> None:
        # Indirect indices are not checked on the device yet: an out-of-range index reads or
        # writes out of bounds, as in eager kernels without device asserts.
        return


class OclScheduling(SIMDScheduling):
    kernel_type = OclKernel  # type: ignore[assignment]

    def __init__(self, scheduler) -> None:
        super().__init__(scheduler)

    def get_backend_features(self, device):
        # Reductions are never split into two kernels (as for Inductor's C++ and Halide
        # backends): Inductor's split path asserts on mixed-order reductions for non-Triton
        # devices. A full reduction then runs in one work group.
        return OrderedSet([BackendFeature.REDUCE_TO_SINGLE_ELEMENT])

    @classmethod
    def select_tiling(cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None):
        return cls.create_tiling([numel], [reduction_numel])

    def define_kernel(self, src_code: str, node_schedule, kernel: OclKernel) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        kernel_name = f"ocl_kernel_{wrapper.next_kernel_suffix()}"
        wrapper.src_to_kernel[src_code] = kernel_name
        src = src_code.replace("KERNEL_NAME", kernel_name)
        origins, detailed = get_kernel_metadata(node_schedule, wrapper)
        index = V.graph.get_current_device_or_throw().index or 0
        body = f"async_compile_ocl({src!r}, {kernel_name!r}, {index})"
        wrapper.define_kernel(kernel_name, body, f"{origins}\n{detailed}", gpu=False)
        return kernel_name


class OclWrapperCodegen(PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            from torch._inductor.codegen.wrapper import SubgraphPythonWrapperCodegen

            return SubgraphPythonWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return OclWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.imports.writeline("from torch_ocl._inductor.runtime import async_compile_ocl")

    def _generate_kernel_call_helper(self, kernel_name, call_args, *, device=None, triton=True,
                                     **kwargs):
        device = device or V.graph.get_current_device_or_throw()
        if not triton and device.type == "ocl":
            self.writeline(self.wrap_kernel_call(kernel_name, call_args))
            return
        return super()._generate_kernel_call_helper(
            kernel_name, call_args, device=device, triton=triton, **kwargs
        )
