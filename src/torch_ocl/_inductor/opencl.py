"""OpenCL C for Inductor's index expressions and ops: the expression printer, the ops table,
dtype handling and the helper functions generated kernels use. The math, half/bfloat16 loads and
stores and the prelude come from the eager generator (exported from C++), not a second table."""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import sympy
import torch
from sympy.printing.precedence import PRECEDENCE
from torch._inductor.codegen.common import IndentedBuffer, OpOverrides
from torch._inductor.utils import get_bounds_index_expr
from torch._inductor.virtualized import V, ops
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


def _index_type() -> str:
    """The current kernel's index variable type: "int" where Inductor proved 32-bit indexing
    safe, else "long"."""
    from torch._inductor.virtualized import V

    try:
        return getattr(V.kernel, "idx_t", "long")
    except (AttributeError, AssertionError):
        return "long"


def _vector_kernel() -> bool:
    """Whether the current kernel is a vector pointwise kernel (codegen.OclKernel.vec)."""
    try:
        return bool(getattr(V.kernel, "vec", 0))
    except (AttributeError, AssertionError):
        return False


def _nonneg_quotient(expr: sympy.Expr) -> bool:
    x, div = expr.args
    return bool(x.is_nonnegative) and isinstance(div, sympy.Integer) and int(div) > 0


class OclExprPrinter(ExprPrinter_):
    """Sympy index expressions as OpenCL C (the kernel's index type, 64- or 32-bit)."""

    def _print_FloorDiv(self, expr: sympy.Expr) -> str:
        x, div = (self.doprint(a) for a in expr.args)
        if expr.is_integer and _vector_kernel() and _nonneg_quotient(expr):
            # int16 index vectors: C division is floor division for these operands
            return f"(({x}) / ({div}))"
        if expr.is_integer:
            if _index_type() == "int":
                return f"ocl_floordiv_int((int)({x}), (int)({div}))"
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
        lit = value_to_cl(val, dtype)
        cse = getattr(getattr(V, "kernel", None), "cse", None)
        if (isinstance(val, (int, float)) and not isinstance(val, bool) and math.isfinite(val)
                and hasattr(cse, "uniform_literals")):
            floating = dtype is not None and dtype.is_floating_point
            cse.uniform_literals[lit] = repr(float(val) if floating else int(val))
        return lit

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
            if not var.name.endswith("[xl]"):  # else a per-lane array, declared up front
                V.kernel.compute.writeline(f"{var_type(dtype)} {var};")
            V.kernel.compute.writeline(f"if ({mask}) {{")
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
            dt = (getattr(a, "dtype", None), getattr(b, "dtype", None))
            if torch.float64 in dt:
                return f"pow({a}, {b})"
            uniform = getattr(getattr(V.kernel, "cse", None), "uniform", {})
            if str(a) in uniform and str(b) in uniform and hasattr(V.kernel, "hoist"):
                # Both operands are the same in every work item (an optimizer's beta ** step):
                # the wrapper computes the power once per launch and passes it by value. Per
                # work item, pow stops PoCL's vectorization and ocl_pow_float's loop of
                # squarings runs scalar in a combo kernel: small GPT's compiled AdamW took
                # ~200 us of device time per step this way, ~30 us hoisted.
                host = f"ocl_pow_f32({uniform[str(a)]}, {uniform[str(b)]})"
                return V.kernel.hoist("float", host)
            return f"ocl_pow_float({a}, {b})"
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
        return f"(({x}) < 0 ? 0 : ({x}))"  # NaN stays NaN, as on CPU

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


def _install_unimplemented() -> None:
    """Ops without OpenCL C here (special functions such as erfinv, digamma, bessel) fail the
    compile with their name instead of a bare NotImplementedError."""
    from torch._inductor.codegen.common import pointwise_overrides_data

    def unimplemented(name: str):
        def fn(*args, **kwargs):
            raise NotImplementedError(
                f"torch-ocl's compiled path has no OpenCL C for ops.{name} yet; run this part "
                "eagerly (torch.compiler.disable) until it does"
            )

        fn.is_unimplemented = True  # what Inductor's own OpOverrides._unimplemented sets
        return staticmethod(fn)

    from torch._inductor.ops_handler import OpsHandler

    names = set(pointwise_overrides_data) | {n for n in dir(OpsHandler) if not n.startswith("_")}
    for name in sorted(names):
        if OclOverrides._is_unimplemented(name):
            setattr(OclOverrides, name, unimplemented(name))


_install_unimplemented()


# ---- vector pointwise kernels (CPU drivers) -------------------------------------------------

VECTOR_WIDTH = 16


class NotVectorizable(Exception):
    """Raised while a kernel is generated as vectors (codegen.OclKernel.vec) at the first thing
    that has no vector form; the kernel is then generated scalar."""


def vec_type(dtype: torch.dtype | None, bounds=None) -> str:
    """OpenCL C type of a value of a vector kernel: 16 lanes of float or int. A bool is an
    int16 of -1 (true) and 0, as vector comparisons give it. An int64 value is an int16 where
    its bounds (Inductor's value ranges: index expressions, constants, their arithmetic) fit
    in 32 bits."""
    t = {torch.float32: "float", torch.int32: "int", torch.bool: "int"}.get(dtype)
    if t is None and dtype == torch.int64 and _fits_int32(bounds):
        t = "int"
    if t is None:
        raise NotVectorizable(f"a {dtype} value")
    return f"{t}{VECTOR_WIDTH}"


def _fits_int32(bounds) -> bool:
    try:
        lo, hi = int(bounds.lower), int(bounds.upper)
    except (AttributeError, TypeError, ValueError, OverflowError):
        return False  # unknown or infinite
    return -(2**31) <= lo and hi < 2**31


# Ops whose scalar OpenCL C (above, or Inductor's defaults) means the same on vectors: C
# operators, selects with a comparison as condition, builtins with vector overloads. The
# vector kernels' own forms are in OclVecOverrides; every other op is not vectorized.
_VEC_SAME = {
    "add", "sub", "mul", "truediv", "neg", "reciprocal", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_not", "logical_xor", "where", "maximum", "minimum",
    "abs", "sqrt", "rsqrt", "floor", "ceil", "trunc", "round", "isnan", "isinf", "signbit",
    "copysign", "atan2", "hypot", "log", "log2", "log10", "log1p", "exp2", "expm1", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erfc",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "and_", "or_", "xor",
    "libdevice_sqrt",
    "libdevice_log", "libdevice_abs", "identity", "square",
}


def _vmath(name: str):
    """The prelude's float math instantiated for float16 (VEC_MATH): the eager generator's name
    for float (``_math_names``) with the width appended."""

    def fn(x):
        if getattr(x, "dtype", None) != torch.float32:
            raise NotVectorizable(f"{name} of a non-float")
        return f"{_math_names('float')[name]}{VECTOR_WIDTH}({x})"

    return staticmethod(fn)


class OclVecOverrides(OclOverrides):
    """OclOverrides for vector kernels: values are float16/int16 (vec_type)."""

    @staticmethod
    def to_dtype(x, dtype, src_dtype=None, use_compute_types=True):
        # (int64 values are int16 here, their range checked where a variable gets the type)
        ints = (torch.int32, torch.int64)
        src = src_dtype if src_dtype is not None else getattr(x, "dtype", None)
        if dtype == torch.bool:
            return f"(({x}) != 0)"
        if dtype not in (torch.float32, *ints) or src not in (torch.float32, torch.bool, *ints):
            raise NotVectorizable(f"to_dtype {src} -> {dtype}")
        if src == torch.bool:
            x = f"(-({x}))"  # -1 -> 1
            if dtype == torch.int64:
                # 0 or 1: an int16 whatever bounds Inductor knows (none in reductions' bodies)
                from torch.utils._sympy.value_ranges import ValueRanges

                k = V.kernel
                return k.cse.generate(k.compute, f"({x})", bounds=ValueRanges(0, 1),
                                      dtype=torch.int64)
        if src == dtype or (src in ints and dtype in ints):
            return f"({x})"
        return f"convert_{'float' if dtype == torch.float32 else 'int'}{VECTOR_WIDTH}({x})"

    @staticmethod
    def constant(val, dtype):
        if dtype == torch.bool or (isinstance(val, bool) and dtype is None):
            return "(-1)" if val else "0"
        if dtype == torch.int64 and isinstance(val, int):
            if not -(2**31) <= val < 2**31:
                raise NotVectorizable(f"the int64 constant {val}")
            return str(val)  # an int: a long scalar does not mix with int16 vectors
        return OclOverrides.constant(val, dtype)

    @staticmethod
    def index_expr(expr, dtype):
        # the expression itself: the variable CSEProxy makes of it gets the FX node's bounds
        k = V.kernel
        index = k.rename_indexing(k.prepare_indexing(expr))
        k._vec_check_expr(index, vector=True)
        # (a vector reduction's x variables are scalars: the cast makes every index a vector)
        text = f"((int{VECTOR_WIDTH})({k.sexpr(index)}))"
        if dtype in (torch.int32, torch.int64):
            return text
        if dtype == torch.float32:
            return f"convert_float{VECTOR_WIDTH}({text})"
        raise NotVectorizable(f"index_expr as {dtype}")

    @staticmethod
    def value_expr(expr, dtype):
        return OclVecOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask, body, other):
        """The body runs where any lane holds the mask (as the scalar kernel's ``if``); its
        loads read only those lanes (guarded gathers, OclKernel._vec_load), and a select keeps
        ``other`` in the others."""
        k = V.kernel
        scoped_body = IndentedBuffer()
        saved_idx = dict(k.vec_loads_idx)
        k.vec_masks.append(str(mask))
        try:
            with k.swap_buffers(scoped_body), scoped_body.indent():
                rc = body()
        finally:
            k.vec_masks.pop()
            k.vec_loads_idx = saved_idx
        dtype = getattr(rc, "dtype", None)
        other_s = OclVecOverrides.constant(other, dtype)
        bounds = getattr(rc, "bounds", None)
        vt = vec_type(dtype, bounds)
        # a variable (CSEProxy reads the dtype of masked's result from it, as for Triton)
        var = k.cse.newvar(dtype=dtype, bounds=bounds)
        k.compute.writeline(f"{vt} {var};")
        k.compute.writeline(f"if (any({mask})) {{")
        k.compute.splice(scoped_body)
        with k.compute.indent():
            k.compute.writeline(f"{var} = select(({vt})({other_s}), {rc}, {mask});")
        k.compute.writeline(f"}} else {var} = ({vt})({other_s});")
        return var

    exp = _vmath("ocl_exp")
    libdevice_exp = exp
    erf = _vmath("ocl_erf")
    tanh = _vmath("ocl_tanh")
    sigmoid = _vmath("ocl_sigmoid")

    @staticmethod
    def relu(x):
        zero = f"({vec_type(getattr(x, 'dtype', None))})(0)"
        return f"select({x}, {zero}, ({x}) < 0)"  # NaN stays NaN

    @staticmethod
    def pow(a, b):
        uniform = getattr(getattr(V.kernel, "cse", None), "uniform", {})
        if getattr(a, "dtype", None) == torch.float32 and str(a) in uniform and str(b) in uniform:
            return OclOverrides.pow(a, b)  # computed by the wrapper, passed by value
        raise NotVectorizable("pow")


def _vec_operand(x, other_dtype):
    """Operand ``x`` of a binary op whose other operand is of ``other_dtype``, converted as C
    would convert a scalar: vectors of different element types do not mix, and a bool's -1 is
    a 1 in arithmetic."""
    dtype = getattr(x, "dtype", None)
    if dtype == other_dtype or other_dtype is None or dtype is None:
        return x
    if dtype == torch.bool:
        x = f"(-({x}))"
    if other_dtype == torch.float32 and dtype != torch.float32:
        return f"convert_float{VECTOR_WIDTH}({x})"
    return x


def _vec_mixed(name: str, *operands: int):
    """A _VEC_SAME op whose ``operands`` (positions) may differ in dtype (a float divided by an
    int index, an int plus a bool): each converted to the other's kind first."""
    base = getattr(OclOverrides, name)

    def fn(*args):
        args = list(args)
        i, j = operands
        a, b = args[i], args[j]
        args[i] = _vec_operand(a, getattr(b, "dtype", None))
        args[j] = _vec_operand(b, getattr(a, "dtype", None))
        return base(*args)

    return staticmethod(fn)


for _name in ("add", "sub", "mul", "truediv", "maximum", "minimum", "eq", "ne", "lt", "le",
              "gt", "ge", "atan2", "copysign", "hypot"):
    setattr(OclVecOverrides, _name, _vec_mixed(_name, 0, 1))
OclVecOverrides.where = _vec_mixed("where", 1, 2)


def _install_vec_unsupported() -> None:
    from torch._inductor.codegen.common import pointwise_overrides_data
    from torch._inductor.ops_handler import OpsHandler

    def unsupported(name: str):
        def fn(*args, **kwargs):
            raise NotVectorizable(f"ops.{name}")

        return staticmethod(fn)

    own = {n for n, v in vars(OclVecOverrides).items() if isinstance(v, staticmethod)}
    names = set(pointwise_overrides_data) | {n for n in dir(OpsHandler) if not n.startswith("_")}
    for name in sorted(names - own - _VEC_SAME):
        if hasattr(OclOverrides, name):
            setattr(OclVecOverrides, name, unsupported(name))


_install_vec_unsupported()

# The float16 math of the vector kernels (prelude.cl's macro), once per program: a module's
# kernels are built as one program.
VEC_MATH = f"""#ifndef OCL_VEC_MATH
#define OCL_VEC_MATH
OCL_DEFINE_FLOAT_MATH(float{VECTOR_WIDTH}, int{VECTOR_WIDTH}, float{VECTOR_WIDTH})
#endif
"""


# Helpers the generated code needs beyond the prelude: Python-style integer division and
# remainder, normal and integer random numbers from the prelude's Philox.
_KERNEL_HELPERS = r"""
inline long ocl_floordiv(long a, long b) {
  const long q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int ocl_floordiv_int(int a, int b) {
  const int q = a / b;
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
// pow for float: PoCL's pow costs ~150 ns a call and stops vectorization (a compiled AdamW
// step, pow(beta, step) per element, ran 150x slower than without). Integral exponents (step
// counts, x**2) take exponentiation by squaring in double, exact to the float result; others
// call pow.
#ifdef TORCH_OCL_FP64
inline float ocl_pow_float(float a, float b) {
  if (fabs(b) <= 16777216.0f && b == rint(b)) {
    long n = (long)fabs(b);
    double r = 1.0, x = (double)a;
    while (n) {
      if (n & 1) r *= x;
      x *= x;
      n >>= 1;
    }
    return (float)(b < 0 ? 1.0 / r : r);
  }
  return pow(a, b);
}
#else
inline float ocl_pow_float(float a, float b) { return pow(a, b); }
#endif
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


