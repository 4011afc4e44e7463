"""OpenCL C code generation for Inductor, modelled on Inductor's Metal backend (codegen/mps.py).

One kernel per fused node group. Indexing is 32-bit where Inductor proves it safe, else 64-bit;
sizes are kernel arguments (``ks0``, ``xnumel``), never baked into the source, so
``dynamic=True`` compiles once.

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

import contextlib
import functools
import itertools
import logging
from typing import Any

import sympy
import torch
from torch._inductor.codegen.common import (
    CSE,
    BackendFeature,
    CSEVariable,
    DeferredLine,
    IndentedBuffer,
    PythonPrinter,
)
from torch._inductor.codegen.simd import IterationRangesEntry, SIMDKernel, SIMDScheduling
from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen
from torch._inductor.utils import get_kernel_metadata, sympy_subs
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.functions import FloorDiv, Identity, ModularIndexing
from torch.utils._sympy.symbol import SymT, symbol_is_type

from .opencl import (
    _KERNEL_HELPERS,
    VEC_MATH,
    VECTOR_WIDTH,
    NotVectorizable,
    OclExprPrinter,
    OclOverrides,
    OclVecOverrides,
    _check_buffer_dtype,
    _device_is_cpu,
    _info,
    storage_type,
    var_type,
    vec_type,
)


class OclCSE(CSE):
    """CSE whose declarations carry the OpenCL C type of the new variable (no `auto` in C)."""

    def __init__(self, *args, **kwargs):
        self._next_type = "__auto_type "
        self.vec = 0  # a vector kernel's CSE: its values are vec_type
        super().__init__(*args, **kwargs)
        # Variables whose value is the same in every work item and known to the wrapper:
        # name -> the Python expression of that value (a literal, a by-value argument's
        # ``.item()``). uniform_literals: OpenCL C literal -> Python literal (ops.constant).
        self.uniform: dict[str, str] = {}
        self.uniform_literals: dict[str, str] = {}

    def clone(self):
        new = super().clone()
        new.vec = self.vec  # a masked body's scoped CSE (swap_buffers) in a vector kernel
        return new

    def generate(self, buffer, expr, *args, **kwargs):
        var = super().generate(buffer, expr, *args, **kwargs)
        if isinstance(expr, str) and expr in self.uniform_literals:
            self.uniform[str(var)] = self.uniform_literals[expr]
        return var

    @property
    def prefix(self) -> str:
        return self._next_type

    @prefix.setter
    def prefix(self, value: str) -> None:
        pass

    def newvar(self, bounds=None, dtype=None, shape=None):
        from torch.utils._sympy.value_ranges import ValueRanges

        vt = vec_type(dtype, bounds) if self.vec else None  # NotVectorizable for other dtypes
        var = super().newvar(bounds if bounds is not None else ValueRanges.unknown(), dtype, shape)
        if vt:
            self._next_type = f"{vt} "
        else:  # a per-lane array of the column shape is declared at the kernel's top (_col_array)
            self._next_type = "" if var.name.endswith("[xl]") else f"{var_type(dtype)} "
        return var


log = logging.getLogger(__name__)

_POINTWISE_LOCAL = 256
_VEC_LOCAL = 64  # work items (of VECTOR_WIDTH elements each) per group of a vector kernel
_COL_ROW_LANES = 4  # rows whose updates a vector column reduction keeps apart (accumulators)
_ROW_LOCAL = 64  # rows per work group when each work item reduces a row (CPU drivers)
# Column-shaped reductions with more elements than this run alone (OclKernel.flat).
_COL_COMBO_MAX_ELEMENTS = 1 << 18
_MAX_RBLOCK = 256


def _lanes() -> int:
    from . import config

    return int(config.sum_lanes)


@functools.cache
def _device_compute_units(index: int) -> int:
    from .. import _C

    return int(_C.get_device_properties(index)["compute_units"])


def _reads_columns(features, rnumel: sympy.Expr) -> bool:
    """Whether a reduction kernel reads mostly along its x dim: for each read of its reduction
    nodes that depends on both x and the reduction, unit stride in x and none in the reduction
    counts for columns, unit stride in the reduction for rows. (Inductor's own OUTER hint is
    DEFAULT whenever x has more than 64 elements per compute unit, which on a CPU driver is
    nearly always.)"""
    from torch._inductor.dependencies import MemoryDep

    sizevars = V.graph.sizevars

    # optimization_hint since torch 2.12, size_hint before
    sized = getattr(sizevars, "optimization_hint", None) or sizevars.size_hint

    def hint(e) -> int:
        return int(sized(e, fallback=8192))

    rn = hint(rnumel)
    cols = rows = 0
    for node in features.reduction_nodes():
        for dep in node.read_writes.reads:
            if not isinstance(dep, MemoryDep) or not dep.ranges:
                continue
            names = list(dep.ranges)
            # the trailing index variables whose sizes multiply to the reduction's size
            prod, k = 1, len(names)
            while k > 0 and prod < rn:
                k -= 1
                prod *= hint(dep.ranges[names[k]])
            if prod != rn or k == 0:
                continue
            strides = sizevars.stride_hints(dep.index, names)
            xs, rs = strides[:k], strides[k:]
            if not any(xs) or not any(rs):
                continue  # broadcast along x or along the reduction: either shape reads it once
            if 1 in rs:
                rows += 1
            elif xs[-1] == 1:
                cols += 1
    return cols > rows


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
        self._ctor = (tiling, dict(kwargs))  # for a second, vector attempt (OclScheduling)
        self.in_combo = False
        # Vector pointwise kernel (CPU drivers): VECTOR_WIDTH elements per work item; 0 for the
        # other shapes. See vector_candidate.
        self.vec = 0
        self.vec_red = False  # a vector reduction: x scalar per work item, r in chunks of vec
        # a vector column reduction: x in lanes (vec consecutive columns), r a scalar loop
        self.vec_col = False
        self.vec_ids = itertools.count()
        self.vec_loads_idx: dict[str, str] = {}  # index expression -> its int16 variable
        self.vec_masks: list[str] = []  # the masks of the ops.masked bodies being generated
        self.cse = OclCSE(self.newvar_prefix, self.suffix)
        self.acc_ids = itertools.count()
        self.local_decls = IndentedBuffer()  # __local arrays: kernel function scope
        self.pre_loop = IndentedBuffer()  # accumulators of the current reduction loop
        self.post_loop = IndentedBuffer()  # work-group combines after the loop
        self.reduction_stores = IndentedBuffer()  # stores of reduction results
        self.outside_loop_vars: OrderedSet[Any] = OrderedSet()
        self.reducing = self.numels.get("r0_", sympy.S.One) != 1
        self.serial_results: dict[str, str] = {}
        # Values computed once by the wrapper and passed by value: (type, parameter name, Python
        # expression), after the numels (hoist()).
        self.hoisted: list[tuple[str, str, str]] = []
        self.rblock = self._rblock()
        # Column shape (reductions over a strided dim on CPU drivers): each work item owns
        # col_xl neighbouring x indices; 0 for the other shapes. See _column_lanes.
        self.col_xl = self._column_lanes()
        self.col_x_lines: list[str] = []  # definitions of x's index variables, per lane block
        self.col_decls = IndentedBuffer()  # per-lane arrays of values that outlive a lane block
        self.uses_lanes = False  # a float sum split into config.sum_lanes accumulators (rblock 1)
        # Index variables: 32-bit where Inductor proves every index fits (its
        # select_index_dtype, as for Triton). PoCL vectorizes 32-bit index arithmetic; 64-bit
        # division and remainder by a constant stop it (MiniLM's bias + gelu kernel: 3x slower).
        self.idx_t = "int" if self.get_index_dtype_as_torch_dtype() == torch.int32 else "long"

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

    def _column_lanes(self) -> int:
        """How many neighbouring x indices (columns) one work item reduces together, or 0.

        A reduction over a strided dim (the sums over the batch in layer-norm and bias weight
        gradients) with one work item per column walks each column with the row stride. PoCL
        vectorizes the loop inside a work item, not the work items of a group, so that loop
        ran on gathers: a compiled (4096, 768).sum(0) took 4.0 ms on PoCL (loaded, 2 cores),
        the eager column-tile kernel 0.16 ms. Here a work item owns ``col_xl`` consecutive
        columns and walks the rows once; for each row an inner loop over its columns (a
        constant trip count, unit stride: whole cache lines) updates an array of accumulators:
        0.40 ms for that sum, 3-19x faster across the shapes of
        ``benchmarks/compile.py --reductions``. (The inner loop is probably still scalar, as
        PoCL leaves loops inside a work item: eager's vector-typed column kernels stay
        ahead.) Static x sizes divisible by the lane
        count only: no tile overlaps or runs past the end, so stores need no guard."""
        from . import config

        if not (self.reducing and self.inside_reduction and self.rblock == 1):
            return 0
        xnumel = self.numels.get("x")
        if not isinstance(xnumel, (int, sympy.Integer)) or int(xnumel) <= 1:
            return 0
        if not _reads_columns(self.features, self.numels["r0_"]):
            return 0
        n, cap = int(xnumel), int(config.column_lanes)
        cores = _device_compute_units(V.graph.get_current_device_or_throw().index or 0)
        for xl in (64, 32, 16, 8):
            # the widest tile that still gives every core a few work items
            if xl <= cap and n % xl == 0 and (n // xl >= 2 * cores or xl == 8):
                return xl
        return 0

    def should_use_persistent_reduction(self) -> bool:
        # Every reduction strides through its row in a loop; rows up to RBLOCK take one trip.
        return False

    # ---- vector pointwise kernels (CPU drivers) ----------------------------------------------

    def vector_candidate(self) -> bool:
        """Whether to try this kernel as a vector kernel: pointwise, 32-bit indexing, a CPU
        driver, and in a combo kernel a static size.

        PoCL vectorizes the work items of a group 8 wide (ymm) and calls nothing it cannot
        inline; explicit float16 code fills zmm registers. A compiled gelu (1024 x 512, PoCL,
        2 cores) took 294 us of device time as one element per work item, 122 us as 16 per
        work item in float16, with the same erf polynomial; eager's vector kernels are the same
        kind. The vector kernel is an attempt: anything without a vector form
        (NotVectorizable) gives the scalar kernel instead."""
        from . import config

        if self.reducing:
            if self.col_xl:
                # the column shape (_column_lanes) with its columns as the lanes of a vector
                return (config.vector_reductions and self.idx_t == "int"
                        and int(self.numels["x"]) % VECTOR_WIDTH == 0)
            return self._vec_reduction_candidate()
        if not config.vector_pointwise or self.col_xl or self.idx_t != "int":
            return False
        trees = [t for t in self.range_trees if not t.is_reduction]
        if len(trees) != 1 or trees[0].prefix != "x":
            return False
        if not _device_is_cpu(V.graph.get_current_device_or_throw().index or 0):
            return False
        x = self.numels["x"]
        if isinstance(x, (int, sympy.Integer)):
            return int(x) >= VECTOR_WIDTH
        return not self.in_combo

    def _vec_reduction_candidate(self) -> bool:
        """Whether to try this reduction kernel as a vector reduction: one work item per row
        (rblock 1: CPU drivers), 32-bit indexing, one x and one r range.

        The scalar row loop (config.sum_lanes accumulators) runs a work group's rows side by
        side in ymm registers at best, and through gathers when the rows are contiguous. Here a
        work item walks its row in chunks of VECTOR_WIDTH consecutive elements: vload16 of
        each row's chunk, float16 math and accumulators, one horizontal combine per row after
        the loop. Anything without a vector form (argmax, float64, a gather along the row)
        gives the scalar kernel (NotVectorizable)."""
        from . import config

        if not (config.vector_reductions and self.inside_reduction and self.rblock == 1) \
                or self.col_xl or self.idx_t != "int":
            return False
        if [t.prefix for t in self.range_trees] != ["x", "r0_"]:
            return False
        return True

    def enable_vector(self) -> None:
        self.vec = VECTOR_WIDTH
        if self.col_xl:
            self.vec_col, self.col_xl = True, 0
        else:
            self.vec_red = self.reducing
        self.cse.vec = VECTOR_WIDTH
        self.overrides = OclVecOverrides

    @property
    def _vec_exact(self) -> bool:
        """Every work item's VECTOR_WIDTH elements exist (a static size, a multiple of it):
        x's for a pointwise kernel, a row's for a vector reduction."""
        n = self.numels["r0_" if self.vec_red else "x"]
        return isinstance(n, (int, sympy.Integer)) and int(n) % VECTOR_WIDTH == 0

    @property
    def _vec_full(self) -> str:
        """The name of the flag that says a work item's (or a row chunk's) lanes all exist."""
        return "rfull" if self.vec_red else "xfull"

    def _vec_symbol(self, sym: sympy.Symbol) -> bool:
        """Whether index variable ``sym`` differs across a vector's lanes (r's variables in a
        vector reduction, where x's are one row's scalars; x's in pointwise kernels and vector
        column reductions, where r's are the loop's scalars)."""
        if sym not in self.range_tree_nodes:
            return False
        return self.range_tree_nodes[sym].root.is_reduction == self.vec_red

    def _vec_lane_kind(self, sym: sympy.Symbol) -> str:
        """How x index variable ``sym`` varies over a work item's lanes (its first element is a
        multiple of VECTOR_WIDTH): "lane" (lane k is the first + k), "uniform" (the same in
        every lane) or "vector"."""
        if not self._vec_symbol(sym):
            return "uniform"
        node = self.range_tree_nodes[sym]
        e, xi, w = node.expr, node.root.symbol(), VECTOR_WIDTH
        if e == xi:
            return "lane"
        if isinstance(e, ModularIndexing) and e.args[0] == xi:
            div, mod = e.args[1], e.args[2]
            if div == 1 and isinstance(mod, sympy.Integer) and int(mod) % w == 0:
                return "lane"
            if isinstance(div, sympy.Integer) and int(div) % w == 0:
                return "uniform"
        if isinstance(e, FloorDiv) and e.args[0] == xi:
            if isinstance(e.args[1], sympy.Integer) and int(e.args[1]) % w == 0:
                return "uniform"
        return "vector"

    def _vec_check_expr(self, expr: sympy.Expr, vector: bool) -> None:
        """Raises NotVectorizable unless ``expr`` prints as int arithmetic that is valid on
        int16 vectors (``vector``: no 64-bit size parameters in it) or scalars."""
        for node in sympy.preorder_traversal(expr):
            if isinstance(node, sympy.Symbol):
                if node in self.range_tree_nodes or node.name in ("xindex", "xbase",
                                                                  "r0_index", "r0_base"):
                    continue
                if not vector and symbol_is_type(node, (SymT.SIZE, SymT.PRECOMPUTED_SIZE)):
                    continue
                raise NotVectorizable(f"index symbol {node}")
            if isinstance(node, sympy.Integer) or (
                    isinstance(node, (sympy.Add, sympy.Mul, ModularIndexing, Identity))):
                continue
            if isinstance(node, FloorDiv) and node.args[0].is_nonnegative:
                continue
            raise NotVectorizable(f"index expression {node}")

    def _vec_access(self, index: sympy.Expr) -> tuple[str, str]:
        """(kind, first): how a load or store at ``index`` spans a work item's lanes: "lane"
        (consecutive elements), "uniform" (one element) or "vector" (gathered), and the index
        of its first lane as a scalar expression."""
        index = self.rename_indexing(index)
        self._vec_check_expr(index, vector=False)
        index = index.replace(Identity, lambda a: a)  # (a cat's index), or diff sees no x
        xs = [v for v in index.free_symbols if self._vec_symbol(v)]
        kinds = {v: self._vec_lane_kind(v) for v in xs}
        first = sympy_subs(index, {v: sympy.Symbol(f"{v.name}_b", integer=True, nonnegative=True)
                                   for v in xs})
        first_s = self.sexpr(first)
        if all(k == "uniform" for k in kinds.values()):
            return "uniform", first_s
        if "vector" in kinds.values():
            return "vector", first_s
        return self._vec_lane_form(index, kinds), first_s

    def _vec_lane_form(self, index: sympy.Expr, kinds: dict) -> str:
        """"lane", "uniform" or "vector" for ``index`` over x variables of lane kinds ``kinds``
        ("lane" or "uniform"). A "lane" variable v is v_b + L over the lanes L = 0..15 with v_b a
        multiple of VECTOR_WIDTH and v_b + 15 in its range, so inside ``index``
        ModularIndexing(v, d, m) and FloorDiv(v, d) with d a multiple of VECTOR_WIDTH are the
        same in every lane, and ModularIndexing(v, 1, m) with m a multiple of it is
        ModularIndexing(v_b, 1, m) + L. A view that splits or merges dimensions of whole chunks
        of 16 (attention's (B, T, H, 32) <-> (B, H, T, 32)) then reads 16 consecutive elements
        with one vload16 instead of 16 loads."""
        w = VECTOR_WIDTH
        lane = sympy.Symbol("ocl_lane", integer=True, nonnegative=True)
        base = {v: sympy.Symbol(f"{v.name}_b", integer=True, nonnegative=True) for v in kinds}
        lanes = {v for v, k in kinds.items() if k == "lane"}

        def whole(d) -> bool:
            return isinstance(d, sympy.Integer) and int(d) % w == 0

        def mod(a, d, m):
            if a in lanes and whole(d):
                return ModularIndexing(base[a], d, m)
            if a in lanes and d == 1 and whole(m):
                return ModularIndexing(base[a], 1, m) + lane
            return ModularIndexing(a, d, m)

        def div(a, d):
            return FloorDiv(base[a], d) if a in lanes and whole(d) else FloorDiv(a, d)

        e = index.replace(ModularIndexing, mod).replace(FloorDiv, div)
        e = sympy.expand(sympy_subs(e, {v: base[v] + (lane if v in lanes else 0)
                                        for v in kinds}))
        if lane not in e.free_symbols:
            return "uniform"
        rest = sympy.expand(e - lane)
        return "lane" if lane not in rest.free_symbols else "vector"

    def _vec_index(self, buf: IndentedBuffer, index: sympy.Expr) -> str:
        """An int16 variable holding ``index`` per lane (for a gather or a scatter)."""
        index = self.rename_indexing(index)
        self._vec_check_expr(index, vector=True)
        text = self.sexpr(index)
        if buf is self.loads and text in self.vec_loads_idx:
            return self.vec_loads_idx[text]  # the same gather's index: its loads CSE to one
        name = f"vidx{next(self.vec_ids)}"
        buf.writeline(f"const int{VECTOR_WIDTH} {name} = {text};")
        if buf is self.loads:
            self.vec_loads_idx[text] = name
        return name

    def _vec_load(self, var: str, index: sympy.Expr, dtype: torch.dtype) -> str:
        """A load of ``var`` at ``index`` as a vector value: float16 or int16 (a bool buffer's
        uchar elements become -1/0)."""
        is_bool = dtype == torch.bool
        vt = vec_type(dtype)
        kind, first = self._vec_access(index)
        if kind == "vector" and self.vec_red:
            # a gather along the row: the scalar kernel, whose work items run side by side, reads
            # such rows (columns of a transposed input) better
            raise NotVectorizable("a gather along a reduced row")
        fast = f"vload{VECTOR_WIDTH}(0, {var} + ({first}))"
        if is_bool:
            fast = f"(convert_int{VECTOR_WIDTH}({fast}) != 0)"

        def gather(guard: str | None = None) -> str:
            """Lane by lane through an int16 index; with ``guard``, only lanes whose masks
            (``guard`` with the lane's component) hold read, the others are 0."""
            idx = self._vec_index(self.loads, index)
            zero = "0.0f" if dtype == torch.float32 else "0"
            cast = "(int)" if is_bool else ""
            lanes = [f"{cast}{var}[{idx}.s{k:x}]" for k in range(VECTOR_WIDTH)]
            if guard is not None:
                lanes = [f"({guard.format(k=f's{k:x}')}) ? {v} : {zero}"
                         for k, v in enumerate(lanes)]
            out = f"(({vt})(" + ", ".join(lanes) + "))"
            return f"({out} != 0)" if is_bool else out

        uniform = f"(-({vt})({var}[{first}] != 0))" if is_bool else f"(({vt})({var}[{first}]))"
        if kind == "uniform":
            # one element for every lane (inside ops.masked too: the body runs where some lane
            # holds the mask, and every lane's address is that lane's)
            return uniform
        if self.vec_masks:
            # inside ops.masked: a lane reads only where every enclosing mask holds. Lanes that
            # all hold it (most of a cat's or a pad's work items) read without a guard each.
            whole = f"all({' & '.join(self.vec_masks)})"
            guard = " && ".join(f"{m}.{{k}}" for m in self.vec_masks)
            if kind != "lane":
                return f"(({whole}) ? {gather()} : {gather(guard)})"
            if not self._vec_exact:
                whole = f"{self._vec_full} && {whole}"
            return f"(({whole}) ? {fast} : {gather(guard)})"
        if kind == "vector":
            return gather()
        return fast if self._vec_exact else f"({self._vec_full} ? {fast} : {gather()})"

    def _vec_store(self, var: str, index: sympy.Expr, value: CSEVariable,
                   dtype: torch.dtype) -> str:
        kind, first = self._vec_access(index)
        if kind == "vector" and self.vec_red:
            raise NotVectorizable("a scatter along a reduced row")
        if kind == "uniform" and self.vec_red:  # a row's result: every lane holds it
            lane0 = f"{value}.s0"
            return f"{var}[{first}] = {f'(uchar)({lane0} != 0)' if dtype == torch.bool else lane0};"
        if dtype == torch.bool:  # -1/0 -> uchar 1/0
            value = f"convert_uchar{VECTOR_WIDTH}(-({value}))"

        def scatter() -> str:
            b = IndentedBuffer()
            idx = self._vec_index(b, index)
            return "{ " + b.getvalue().strip() + " " + " ".join(
                f"{var}[{idx}.s{k:x}] = {value}.s{k:x};" for k in range(VECTOR_WIDTH)) + " }"

        if kind != "lane":
            return scatter()
        fast = f"vstore{VECTOR_WIDTH}({value}, 0, {var} + ({first}));"
        return fast if self._vec_exact else f"if ({self._vec_full}) {fast} else {scatter()}"

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return var_type(dtype)

    def create_cse_var(self, *args: Any, **kwargs: Any) -> CSEVariable:
        var = super().create_cse_var(*args, **kwargs)
        if not self.inside_reduction:
            self.outside_loop_vars.add(var)
            if self.col_xl:
                self._col_array(var)
        return var

    def _col_array(self, var: CSEVariable) -> None:
        """Column shape: a value that outlives its lane block (computed after a reduction loop,
        or a reduction's result) is an array with an element per lane, ``tmpN[xl]``."""
        self.col_decls.writeline(f"{var_type(var.dtype)} {var.name}[{self.col_xl}];")
        var.name += "[xl]"

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
            result = self.cse.generate(self.loads, var, dtype=compute)
            self.cse.uniform[str(result)] = f"{name}.item()"
            return result
        index = self.prepare_indexing(index)
        _check_buffer_dtype(name, dtype)
        if self.vec:
            if dtype not in (torch.float32, torch.int32, torch.bool):
                raise NotVectorizable(f"a load of {dtype}")
            return self.cse.generate(self.loads, self._vec_load(var, index, dtype), dtype=dtype)
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
        if self.vec:
            if mode is not None or dtype not in (torch.float32, torch.int32, torch.bool):
                raise NotVectorizable(f"a store of {dtype} (mode {mode})")
            if getattr(value, "dtype", None) != dtype:
                raise NotVectorizable(f"a store of {getattr(value, 'dtype', None)} as {dtype}")
            # (a vector kernel's row result is one store, in every work item's lanes alike)
            self._place_store(name, self._vec_store(var, index, value, dtype), guard=False)
            return
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
            self._place_store(name, line)
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
        self._place_store(name, line)

    def _place_store(self, name: str, line: str, guard: bool = True) -> None:
        """A store inside the reduction loop goes with its body; a reduction's result (or x-only
        work) in a reduction kernel after the loop and the work-group combine that produce it,
        by one work item (``guard``); any other with the kernel's stores."""
        if self.inside_reduction:
            self.compute.writeline(DeferredLine(name, line))
        elif self._rtree is not None:
            prefix = "if (r0_lid == 0) " if guard else ""
            self.reduction_stores.writeline(DeferredLine(name, prefix + line))
        else:
            self.stores.writeline(DeferredLine(name, line))

    # ---- reductions -----------------------------------------------------------------------

    def _acc(self, ctype: str, init: str) -> str:
        name = f"acc{next(self.acc_ids)}"
        if self.col_xl:
            self.pre_loop.writeline(f"{ctype} {name}[{self.col_xl}];")
            self.pre_loop.writeline(f"for (int xl = 0; xl < {self.col_xl}; ++xl) {name}[xl] = {init};")
            return f"{name}[xl]"
        self.pre_loop.writeline(f"{ctype} {name} = {init};")
        return name

    def _pairwise(self, lanes: str, lo: int, n: int, combine: str = "({a} + {b})") -> str:
        if n == 1:
            return f"{lanes}[{lo}]"
        h = n // 2
        return combine.format(a=self._pairwise(lanes, lo, h, combine),
                              b=self._pairwise(lanes, lo + h, n - h, combine))

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
        if self.col_xl:
            self._col_array(var)
            self.post_loop.writeline(f"{var} = {expr};")
        else:
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
        if self.vec:
            return self._vec_reduction(dtype, src_dtype, reduction_type, value)
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
                # bitwise: the operands are 0/1, and a short-circuit || is a branch per element
                # (_safe_softmax's any() in a loop stage of compiled attention: 3.4-5.2 ms ->
                # 0.87-0.95 ms of device time on PoCL for 4096 rows of 64)
                init, upd = "0", "(({a}) | ({b}))"
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
            # Float max/min with a work item per row or column: a plain select for the value and a
            # count of NaNs beside it (NaN wins at the end). The NaN test inside the select kept
            # the driver from vectorizing the loop: compiled amax over rows of 1024 floats on
            # PoCL took 278 us of device time, now 77 (a sum: ~50). A count, not an or: the
            # column shape's amax of (1024, 1024) took 211 us with |=, 143 with +=. It cannot
            # wrap: with 32-bit indices (idx_t int) a reduction has fewer than 2^31 elements.
            nan_flag = reduction_type in ("max", "min") and is_float and self.rblock == 1
            plain = f"((({{b}}) {cmp} ({{a}})) ? ({{b}}) : ({{a}}))" if nan_flag else upd
            if ((reduction_type == "sum" and is_float) or reduction_type in ("max", "min")) \
                    and self.rblock == 1 and _lanes() > 1 and not self.col_xl:
                # One work item per row: a single accumulator is a dependent chain (an add per
                # ~4 cycles; a max or min longer); config.sum_lanes accumulators, combined
                # pairwise after the loop, let the driver overlap them (codegen_body splits the
                # loop into lanes). max and min are exact in any order. amax over rows of 1024 on
                # PoCL ran 5.5x the eager kernel's time with one accumulator.
                n = _lanes()
                lanes = f"lacc{next(self.acc_ids)}"
                self.pre_loop.writeline(f"{ct} {lanes}[{n}] = {{{', '.join([init] * n)}}};")
                lane = f"{lanes}[r0_lane]"
                v = self.cse.generate(w, f"({ct})({value})", dtype=rdtype)
                w.writeline(f"{lane} = {plain.format(a=lane, b=v)};")
                acc = self._pairwise(lanes, 0, n, "(" + plain + ")")
                if nan_flag:
                    flags = f"lnan{next(self.acc_ids)}"
                    self.pre_loop.writeline(
                        f"{self.idx_t} {flags}[{n}] = {{{', '.join(['0'] * n)}}};")
                    w.writeline(f"{flags}[r0_lane] += ({v} != {v});")
                    acc = f"({self._pairwise(flags, 0, n, '({a} | {b})')} ? ({ct})NAN : {acc})"
                self.uses_lanes = True
            else:
                acc = self._acc(ct, init)
                v = self.cse.generate(w, f"({ct})({value})", dtype=rdtype)
                w.writeline(f"{acc} = {plain.format(a=acc, b=v)};")
                if nan_flag:
                    flag = self._acc(self.idx_t, "0")
                    w.writeline(f"{flag} += ({v} != {v});")
                    acc = f"({flag} ? ({ct})NAN : {acc})"
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
            if (reduction_type == "welford_reduce" and self.rblock == 1 and _lanes() > 1
                    and not self.col_xl):
                # One work item per row: each Welford update waits for the last one's division;
                # config.sum_lanes independent (mean, m2, weight) states, merged after the loop
                # with Chan's update. layer_norm over rows of 1024 on PoCL ran 13-17x the eager
                # kernel's time with one state.
                n = _lanes()
                i = next(self.acc_ids)
                lm, lm2, lw = f"lwm{i}", f"lwm2_{i}", f"lww{i}"
                for arr in (lm, lm2, lw):
                    self.pre_loop.writeline(f"{ct} {arr}[{n}] = {{{', '.join('0' * n)}}};")
                v = self.cse.generate(
                    w, f"({ct})({value})", dtype=torch.float64 if ct == "double" else torch.float32
                )
                _welford_update(w, ct, v, f"{lm}[r0_lane]", f"{lm2}[r0_lane]", f"{lw}[r0_lane]")
                self.uses_lanes = True
                pw = self.post_loop
                pw.writeline(f"{m} = {lm}[0]; {m2} = {lm2}[0]; {wt} = {lw}[0];")
                pw.writeline(f"for (int k = 1; k < {n}; ++k) {{")
                pw.writeline(f"  OCL_WELFORD_COMBINE({ct}, {m}, {m2}, {wt}, {lm}[k], {lm2}[k], {lw}[k])")
                pw.writeline("}")
            elif reduction_type == "welford_reduce":
                v = self.cse.generate(
                    w, f"({ct})({value})", dtype=torch.float64 if ct == "double" else torch.float32
                )
                _welford_update(w, ct, v, m, m2, wt)
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

    def _vec_hreduce(self, acc: str, base: str, op: str) -> str:
        """The expression that combines the lanes of vector ``acc`` (of ``base`` elements) with
        ``op`` (a format over {a} and {b}), halving the width each step."""
        n = next(self.acc_ids)
        cur, width = acc, VECTOR_WIDTH
        while width > 2:
            width //= 2
            name = f"h{n}_{width}"
            self.post_loop.writeline(
                f"const {base}{width} {name} = {op.format(a=cur + '.lo', b=cur + '.hi')};")
            cur = name
        return op.format(a=f"{cur}.s0", b=f"{cur}.s1")

    def _vec_result(self, expr: str, dtype: torch.dtype) -> CSEVariable:
        """A row's result as a vector value (every lane the same), for the code after the loop."""
        var = self.cse.newvar(dtype=dtype)
        vt = vec_type(dtype)
        self.post_loop.writeline(f"const {vt} {var} = ({vt})({expr});")
        self.outside_loop_vars.add(var)
        return var

    @staticmethod
    def _vec_sum_max_min(reduction_type, src_dtype, vdtype) -> tuple[bool, str, str]:
        """(is_float, element type, start value) of a vector sum, max or min; NotVectorizable
        for what has no vector form (sums of ints: int64 results)."""
        if src_dtype not in (torch.float32, torch.int32) or vdtype != src_dtype or (
                reduction_type == "sum" and src_dtype != torch.float32):
            raise NotVectorizable(f"a {reduction_type} of {src_dtype}")
        is_float = src_dtype == torch.float32
        if reduction_type == "sum":
            init = "0"
        elif is_float:
            init = "-INFINITY" if reduction_type == "max" else "INFINITY"
        else:
            init = "INT_MIN" if reduction_type == "max" else "INT_MAX"
        return is_float, "float" if is_float else "int", init

    def _vec_reduction(self, dtype, src_dtype, reduction_type, value):
        """A reduction of a vector reduction kernel: an accumulator per lane (float16/int16),
        combined across the lanes after the loop. In a row's last, partial chunk the lanes past
        the end repeat its last element (OclKernel.codegen_body): max, min and any take them
        as they are, sum and Welford mask them out with ``r0_valid``."""
        w, W = self.compute, VECTOR_WIDTH
        vdtype = getattr(value, "dtype", None) if not isinstance(value, tuple) else None
        i = next(self.acc_ids)
        if self.vec_col:
            return self._vec_col_reduction(dtype, src_dtype, reduction_type, value, vdtype, i)
        if reduction_type in ("sum", "max", "min"):
            is_float, base, init = self._vec_sum_max_min(reduction_type, src_dtype, vdtype)
            vt = f"{base}{W}"
            acc = f"vacc{i}"
            self.pre_loop.writeline(f"{vt} {acc} = ({vt})({init});")
            if reduction_type == "sum":
                w.writeline(f"{acc} += select(({vt})(0), {value}, r0_valid);")
                res = self._vec_hreduce(acc, base, "({a} + {b})")
                return self._vec_result(res, dtype)
            cmp = ">" if reduction_type == "max" else "<"
            w.writeline(f"{acc} = select({acc}, {value}, {value} {cmp} {acc});")
            fn = ("fmax" if is_float else "max") if reduction_type == "max" else (
                "fmin" if is_float else "min")
            res = self._vec_hreduce(acc, base, fn + "({a}, {b})")
            if is_float:
                # NaN wins, as in eager: a lane flag beside the plain select
                nan = f"vnan{i}"
                self.pre_loop.writeline(f"int{W} {nan} = (int{W})(0);")
                w.writeline(f"{nan} |= ({value} != {value});")
                res = f"(any({nan}) ? NAN : {res})"
            return self._vec_result(res, dtype)
        if reduction_type == "any":
            if vdtype != torch.bool:
                raise NotVectorizable(f"any of {vdtype}")
            acc = f"vacc{i}"
            self.pre_loop.writeline(f"int{W} {acc} = (int{W})(0);")
            w.writeline(f"{acc} |= {value};")
            return self._vec_result(f"(any({acc}) ? -1 : 0)", dtype)
        if reduction_type == "welford_reduce":
            if vdtype != torch.float32:
                raise NotVectorizable(f"welford_reduce of {vdtype}")
            vt = f"float{W}"
            m, m2, wt, d = f"vwm{i}", f"vwm2_{i}", f"vww{i}", f"vwd{i}"
            for name in (m, m2, wt):
                self.pre_loop.writeline(f"{vt} {name} = ({vt})(0);")
            zero = f"({vt})(0)"
            # In whole chunks every lane has the same weight: one scalar division, not 16.
            w.writelines([
                f"{wt} += select({zero}, ({vt})(1), r0_valid);",
                f"const {vt} {d} = {value} - {m};",
                f"const {vt} {d}r = rfull ? ({vt})(1.0f / {wt}.s0) : ({vt})(1.0f) / {wt};",
                f"{m} += select({zero}, {d} * {d}r, r0_valid);",
                f"{m2} += select({zero}, {d} * ({value} - {m}), r0_valid);",
            ])
            p = self.post_loop
            sm, sm2, sw = f"wm{i}", f"wm2_{i}", f"ww{i}"
            p.writeline(f"float {sm} = {m}.s0, {sm2} = {m2}.s0, {sw} = {wt}.s0;")
            for k in range(1, W):
                c = f".s{k:x}"
                p.writeline(f"OCL_WELFORD_COMBINE(float, {sm}, {sm2}, {sw}, "
                            f"{m}{c}, {m2}{c}, {wt}{c})")
            return tuple(self._vec_result(v, torch.float32) for v in (sm, sm2, sw))
        raise NotVectorizable(f"a {reduction_type} reduction")

    def _vec_col_reduction(self, dtype, src_dtype, reduction_type, value, vdtype, i):
        """A reduction of a vector column reduction: each lane is its own column's accumulator
        (no combine across lanes; the lanes past a partial last vector repeat the last column
        and store its own result again). Sums, max, min and any keep _COL_ROW_LANES
        accumulators, one per row of a block of rows (r0_lane, codegen_body), so that
        consecutive rows' updates do not wait for each other; combined pairwise after the
        loop."""
        w, W, n = self.compute, VECTOR_WIDTH, _COL_ROW_LANES

        def lanes(vt: str, init: str) -> str:
            arr = f"vacc{i}_{next(self.acc_ids)}"
            self.pre_loop.writeline(f"{vt} {arr}[{n}] = {{{', '.join([f'({vt})({init})'] * n)}}};")
            return arr

        if reduction_type in ("sum", "max", "min"):
            is_float, base, init = self._vec_sum_max_min(reduction_type, src_dtype, vdtype)
            vt = f"{base}{W}"
            acc = lanes(vt, init)
            if reduction_type == "sum":
                w.writeline(f"{acc}[r0_lane] += {value};")
                return self._vec_result(self._pairwise(acc, 0, n), dtype)
            cmp = ">" if reduction_type == "max" else "<"
            lane = f"{acc}[r0_lane]"
            w.writeline(f"{lane} = select({lane}, {value}, {value} {cmp} {lane});")
            best = self._pairwise(acc, 0, n, f"select({{a}}, {{b}}, {{b}} {cmp} {{a}})")
            if not is_float:
                return self._vec_result(best, dtype)
            nan = lanes(f"int{W}", "0")  # NaN wins, as in eager
            w.writeline(f"{nan}[r0_lane] |= ({value} != {value});")
            return self._vec_result(
                f"select({best}, ({vt})(NAN), {self._pairwise(nan, 0, n, '({a} | {b})')})",
                dtype)
        if reduction_type == "any":
            if vdtype != torch.bool:
                raise NotVectorizable(f"any of {vdtype}")
            acc = lanes(f"int{W}", "0")
            w.writeline(f"{acc}[r0_lane] |= {value};")
            return self._vec_result(self._pairwise(acc, 0, n, "({a} | {b})"), dtype)
        if reduction_type == "welford_reduce":
            if vdtype != torch.float32:
                raise NotVectorizable(f"welford_reduce of {vdtype}")
            vt = f"float{W}"
            m, m2, cnt, d = f"vwm{i}", f"vwm2_{i}", f"vwn{i}", f"vwd{i}"
            for name in (m, m2):
                self.pre_loop.writeline(f"{vt} {name} = ({vt})(0);")
            self.pre_loop.writeline(f"float {cnt} = 0.0f;")  # every lane's weight
            w.writelines([
                f"{cnt} += 1.0f;",
                f"const {vt} {d} = {value} - {m};",
                f"{m} += {d} * (1.0f / {cnt});",
                f"{m2} += {d} * ({value} - {m});",
            ])
            return tuple(self._vec_result(v, torch.float32) for v in (m, m2, cnt))
        raise NotVectorizable(f"a {reduction_type} reduction")

    # ---- structure ------------------------------------------------------------------------

    def codegen_iteration_ranges_entry(self, entry: IterationRangesEntry) -> None:
        if self.vec and (entry.root.is_loop if self.vec_red else not entry.root.is_reduction):
            # per lane (int16) and, for addresses of consecutive or uniform lanes, lane 0's
            # (a vector reduction's r variables: at the chunk's first element; a vector column
            # reduction's r variables are the loop's scalars)
            expr = self.rename_indexing(entry.expr)
            self._vec_check_expr(expr, vector=True)
            buf = self.indexing_code if self.vec_red else self.body
            buf.writeline(f"const int{VECTOR_WIDTH} {entry.name} = {self.sexpr(expr)};")
            base = "r0_base" if self.vec_red else "xbase"
            first = sympy_subs(expr, {entry.root.symbol(): sympy.Symbol(base, integer=True,
                                                                        nonnegative=True)})
            buf.writeline(f"const int {entry.name}_b = {self.sexpr(first)};")
            return
        line = f"const {self.idx_t} {entry.name} = {self.sexpr(self.rename_indexing(entry.expr))};"
        if entry.root.is_loop:
            self.indexing_code.writeline(line)
        elif self.col_xl:
            self.col_x_lines.append(line)  # x's indices differ per lane: each lane block has them
        else:
            self.body.writeline(line)

    def _col_lane_block(self, bufs) -> None:
        """Column shape: ``bufs`` once per lane of the work item's columns (an inner loop of
        constant trip count: neighbouring lanes, neighbouring addresses)."""
        b = self.body
        b.writeline(f"for (int xl = 0; xl < {self.col_xl}; ++xl) {{")
        with b.indent():
            b.writeline(f"const {self.idx_t} xindex = ({self.idx_t})(xs + xl);")
            for line in self.col_x_lines:
                b.writeline(line)
            for buf in bufs:
                b.splice(buf)
        b.writeline("}")

    def _vec_row_loop(self, loop_body) -> None:
        """A vector reduction's loop stage: the row in whole chunks of VECTOR_WIDTH, then the
        partial chunk, if any, with its lanes past the end clamped to the last element and
        marked in ``r0_valid`` (the same code: in whole chunks the flags are constants)."""
        b, W = self.body, VECTOR_WIDTH
        lanes = f"(int{W})({', '.join(str(k) for k in range(W))})"

        def chunk(index: str, valid: str, full: str) -> None:
            with b.indent():
                b.writeline(f"const int{W} r0_index = {index};")
                b.writeline(f"const int{W} r0_valid = {valid};")
                b.writeline(f"const bool rfull = {full};")
                for buf in loop_body:
                    b.splice(buf)
            b.writeline("}")

        b.writeline("{  // one loop stage over the row, in chunks of its elements")
        b.writeline("int r0_base = 0;")
        b.writeline(f"for (; r0_base + {W} <= r0_numel; r0_base += {W}) {{")
        chunk(f"r0_base + {lanes}", f"(int{W})(-1)", "true")
        if not self._vec_exact:
            b.writeline("if (r0_base < r0_numel) {")
            chunk(f"min(r0_base + {lanes}, (int)(r0_numel - 1))",
                  f"(r0_base + {lanes}) < (int)r0_numel", "false")
        b.writeline("}")

    def _row_lane_blocks(self, loop_body, n: int, unrolled: bool) -> None:
        """A loop stage over the row in whole blocks of ``n`` rows, ``r0_lane`` each row's place
        in its block (accumulator arrays index it), as an inner loop or written out ``n``
        times, then the rest of the row with ``r0_lane`` 0."""
        b, it = self.body, self.idx_t
        b.writeline("{  // one loop stage over the row")
        b.writeline(f"{it} r0_base = 0;")
        b.writeline(f"for (; r0_base + {n} <= r0_numel; r0_base += {n}) {{")
        with b.indent():
            if unrolled:
                for k in range(n):
                    b.writeline(f"{{ const int r0_lane = {k}; const {it} r0_index = r0_base + {k};")
                    with b.indent():
                        for buf in loop_body:
                            b.splice(buf)
                    b.writeline("}")
            else:
                b.writeline(f"for (int r0_lane = 0; r0_lane < {n}; ++r0_lane) {{")
                with b.indent():
                    b.writeline(f"const {it} r0_index = r0_base + r0_lane;")
                    for buf in loop_body:
                        b.splice(buf)
                b.writeline("}")
        b.writeline("}")
        b.writeline(f"for ({it} r0_index = r0_base; r0_index < r0_numel; ++r0_index) {{")
        with b.indent():
            b.writeline("const int r0_lane = 0;")
            for buf in loop_body:
                b.splice(buf)
        b.writeline("}")
        b.writeline("}")

    def codegen_body(self) -> None:
        if not (self.loads or self.compute or self.stores or self.post_loop or self.pre_loop
                or self.reduction_stores):
            return
        if self.inside_reduction and self._rtree is not None:
            self.body.splice(self.pre_loop)
            loop_body = [self.indexing_code, self.loads, self.compute, self.stores]
            if self.vec_red:
                self._vec_row_loop(loop_body)
            elif self.vec_col:
                # the body once per row of the block (one accumulator each): as a loop, PoCL
                # kept the accumulator arrays in memory
                self._row_lane_blocks(loop_body, _COL_ROW_LANES, unrolled=True)
            elif self.col_xl:
                # Column shape: the rows once, each row's lanes in an inner loop.
                self.body.writeline(
                    f"for ({self.idx_t} r0_index = 0; r0_index < r0_numel; ++r0_index) {{"
                )
                with self.body.indent():
                    self._col_lane_block(loop_body)
                self.body.writeline("}")
            elif self.uses_lanes:
                # Whole blocks of config.sum_lanes (a constant inner loop: unrolled, lanes in
                # registers), then the rest; in order over r0_index, so other reductions of the
                # kernel see the usual sequence.
                self._row_lane_blocks(loop_body, _lanes(), unrolled=False)
            else:
                self.body.writeline(
                    f"for ({self.idx_t} r0_index = r0_lid; r0_index < r0_numel; "
                    f"r0_index += {self.rblock}) {{"
                )
                with self.body.indent():
                    for buf in loop_body:
                        self.body.splice(buf)
                self.body.writeline("}")
            self.uses_lanes = False
            if self.col_xl:
                self._col_lane_block([self.post_loop, self.reduction_stores])
            else:
                self.body.splice(self.post_loop)
                self.body.splice(self.reduction_stores)
            # What the loop defined is gone; reduction results and outer values live on.
            self.cse.invalidate(self.outside_loop_vars)
            for node in self.range_tree_nodes.values():
                if node.root.is_loop:
                    node.cache_clear()
        elif self.col_xl:
            self._col_lane_block([self.loads, self.compute, self.stores, self.reduction_stores])
        else:
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
            self.body.splice(self.reduction_stores)
        for buf in (self.indexing_code, self.loads, self.compute, self.stores, self.pre_loop,
                    self.post_loop, self.reduction_stores):
            buf.clear()
        self.vec_loads_idx.clear()  # their declarations were in the loads just written

    def _numel_args(self) -> list[tuple[str, sympy.Expr]]:
        out = []
        for tree in self.range_trees:
            if tree.is_reduction and not self.inside_reduction:
                continue
            out.append((f"{tree.prefix}numel", tree.numel))
        return out

    def hoist(self, ctype: str, host_expr: str) -> str:
        """A parameter that the wrapper computes as ``host_expr`` (Python, over the graph's
        values) before the launch; returns its name, for use in the kernel's code."""
        for t, n, e in self.hoisted:
            if e == host_expr and t == ctype:
                return n
        name = f"hoisted{len(self.hoisted)}"
        self.hoisted.append((ctype, name, host_expr))
        return name

    def _aliased_inputs(self) -> dict[str, str]:
        """Inputs that are also outputs of this kernel (a buffer mutated in place, as the
        optimizer's parameters and states): outer name -> the output's parameter name. They
        are passed once, as the output (a combo kernel of many such tensors stays within the
        device's parameter-size limit in fewer launches)."""
        outs = {o: i for o, i in self.args.output_buffers.items() if o not in self.removed_buffers}
        return {o: outs[o] for o in self.args.input_buffers
                if o in outs and not V.graph.is_unspec_arg(o)}

    def bindings(self) -> list[tuple[str, Any, list[tuple[str, str]]]]:
        """The kernel's arguments in call order: (Python expression of the wrapper's value, its
        type for the wrapper, the (declared type, name) parameters it binds: a tensor binds a
        buffer and its byte offset, a number one by-value parameter)."""
        wrapper = V.graph.wrapper_code
        for v in self.args.sizevars:
            wrapper.ensure_size_computed(v)
        _, call_args, _, arg_types = self.args.python_argdefs()
        by_name = {str(a): t for a, t in zip(call_args, arg_types)}
        aliased = self._aliased_inputs()
        out = []
        for outer, inner in self.args.output_buffers.items():
            if outer in self.removed_buffers:
                continue
            st = storage_type(V.graph.get_dtype(outer))
            out.append((outer, by_name[outer],
                        [(f"__global {st}*", inner), _offset_param(outer, inner)]))
        for outer, inner in self.args.input_buffers.items():
            if outer in aliased:
                continue
            if V.graph.is_unspec_arg(outer):
                out.append((f"{outer}.item()", by_name[outer],
                            [(var_type(V.graph.get_dtype(outer)), inner)]))
                continue
            st = storage_type(V.graph.get_dtype(outer))
            out.append((outer, by_name[outer],
                        [(f"__global const {st}*", inner), _offset_param(outer, inner)]))
        for outer, inner in self.args.sizevars.items():
            out.append((str(outer), by_name[str(outer)], [("long", inner)]))
        for numel_name, numel in self._numel_args():
            out.append((self.pexpr(V.graph.sizevars.simplify(numel)), int, [("long", numel_name)]))
        for t, n, expr in self.hoisted:
            out.append((expr, float, [(t, n)]))
        return out

    def _params(self) -> list[tuple[str, str]]:
        """(declared type, name) of every kernel parameter, in call order."""
        return [p for _, _, params in self.bindings() for p in params]

    def _ptr_fixes(self) -> list[str]:
        out = []
        for outer, inner in self.args.output_buffers.items():
            if outer in self.removed_buffers:
                continue
            st = storage_type(V.graph.get_dtype(outer))
            out.append(_offset_fix(outer, inner, f"__global {st}*"))
        aliased = self._aliased_inputs()
        for outer, inner in self.args.input_buffers.items():
            if V.graph.is_unspec_arg(outer):
                continue
            st = storage_type(V.graph.get_dtype(outer))
            if outer in aliased:
                out.append(f"__global const {st}* {inner} = {aliased[outer]};")
                continue
            out.append(_offset_fix(outer, inner, f"__global const {st}*"))
        return out

    @property
    def flat(self) -> bool:
        """One work item per x index (pointwise kernels, and reductions with one work item per
        row): such kernels can run side by side in one combo kernel."""
        if self.col_xl or self.vec_col:
            # A column-shaped reduction joins a combo kernel while it is small: there its work
            # items share one work group (one thread of a CPU driver); a large one runs alone,
            # a work group per work item.
            return int(self.numels["x"]) * self._static_rnumel() <= _COL_COMBO_MAX_ELEMENTS
        return self.rblock == 1

    def _static_rnumel(self) -> int:
        r = self.numels.get("r0_", sympy.S.One)
        return int(r) if isinstance(r, (int, sympy.Integer)) else _COL_COMBO_MAX_ELEMENTS + 1

    def work_items(self, xnumel: str) -> str:
        """The number of work items the kernel needs, given the wrapper's xnumel expression."""
        if self.vec and not self.vec_red:
            return str(-(-int(xnumel) // self.vec))  # static in combo kernels
        return str(int(xnumel) // self.col_xl) if self.col_xl else xnumel

    def codegen_kernel(self, name: str | None = None, *, as_function: bool = False) -> str:
        """The kernel's OpenCL C source. With ``as_function``, a helper function of a combo
        kernel instead: no prelude, and ``xindex`` is a parameter."""
        self.codegen_body()
        trees = [t for t in self.range_trees if not (t.is_reduction and not self.inside_reduction)]
        if len([t for t in trees if not t.is_reduction]) > 1 or len(
            [t for t in trees if t.is_reduction]
        ) > 1:
            raise NotImplementedError("torch-ocl's compiled path supports 1-d tilings only")
        code = IndentedBuffer()
        params = [f"{t} {n}" for t, n in self._params()]
        if as_function:
            assert self.flat
            params.append("const long xindex_wide")
            # Inlined at every call: a shared function called from several branches was left
            # out of line, and a call per work item stops PoCL from vectorizing the work group.
            code.writeline(f"static inline __attribute__((always_inline)) void {name}(")
        else:
            code.splice(_KERNEL_HELPERS)
            if self.vec:
                code.splice(VEC_MATH)
            code.writeline(f"__kernel void {name or 'KERNEL_NAME'}(")
        with code.indent():
            code.writeline(",\n    ".join(params))
        code.writeline(") {")
        with code.indent():
            code.splice(self.local_decls)
            for line in self._ptr_fixes():
                code.writeline(line)
            if self._rtree is not None and self.inside_reduction and self.rblock > 1:
                code.writeline(f"const {self.idx_t} xindex = ({self.idx_t})get_group_id(0);")
                code.writeline("const int r0_lid = (int)get_local_id(0);")
            elif self.vec and not self.vec_red:
                # VECTOR_WIDTH elements per work item; past the end (a size that is not a
                # multiple), lanes repeat the last element: every address stays in range and
                # the repeated stores write the last element's own value again
                wide = "xindex_wide" if as_function else "(long)get_global_id(0)"
                lanes = ", ".join(str(k) for k in range(self.vec))
                code.writeline(f"const long xbase_wide = {wide} * {self.vec};")
                code.writeline("if (xbase_wide >= xnumel) return;")
                code.writeline("const int xbase = (int)xbase_wide;")
                lane_ids = f"xbase + (int{self.vec})({lanes})"
                if self._vec_exact:
                    code.writeline(f"const int{self.vec} xindex = {lane_ids};")
                else:
                    code.writeline(f"const bool xfull = xbase_wide + {self.vec} <= xnumel;")
                    code.writeline(f"const int{self.vec} xindex = min({lane_ids}, "
                                   "(int)(xnumel - 1));")
            elif self.col_xl:
                # the first of this work item's columns; xnumel is a multiple of col_xl
                wide = "xindex_wide" if as_function else "(long)get_global_id(0)"
                code.writeline(f"const long xs = {wide} * {self.col_xl};")
                code.writeline("if (xs >= xnumel) return;")
                code.writeline("const int r0_lid = 0;")
                code.splice(self.col_decls)
            else:
                # The bound check on the wide value: a global size rounded up to the local
                # size may pass 2^31 where xnumel does not.
                wide = "xindex_wide" if as_function else "(long)get_global_id(0)"
                code.writeline(f"if ({wide} >= xnumel) return;")
                code.writeline(f"const {self.idx_t} xindex = ({self.idx_t})({wide});")
                if self._rtree is not None and self.inside_reduction:
                    code.writeline("const int r0_lid = 0;")
            code.splice(self.body)
        code.writeline("}")
        return code.getvalue()

    def launch_args(self) -> tuple[list[str], list[Any], str]:
        """Arguments of the wrapper's call (Python expressions), their types, and xnumel."""
        binds = self.bindings()
        xnumel = self.pexpr(V.graph.sizevars.simplify(dict(self._numel_args())["xnumel"]))
        return [e for e, _, _ in binds], [t for _, t, _ in binds], xnumel

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        args, types, x = self.launch_args()
        static = x.isdigit()  # static sizes: the launch geometry is a constant in the wrapper
        if self._rtree is not None and self.inside_reduction and self.rblock > 1:
            loc = self.rblock
            glob = str(int(x) * loc) if static else f"({x}) * {loc}"
        elif self.col_xl or self.vec_col:
            # a work group per work item: few work items, and each core should get some
            loc, glob = 1, str(int(x) // (self.col_xl or self.vec))
        elif self.vec and not self.vec_red:
            loc, w = _VEC_LOCAL, self.vec
            glob = (str((-(-int(x) // w) + loc - 1) // loc * loc) if static
                    else f"((({x}) + {w - 1}) // {w} + {loc - 1}) // {loc} * {loc}")
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


def _param_bytes(ctype: str) -> int:
    if ctype.endswith("*"):
        return 8  # a cl_mem handle
    return {"char": 1, "uchar": 1, "bool": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4,
            "float": 4}.get(ctype, 8)


def _max_parameter_bytes() -> int:
    from .. import _C

    index = V.graph.get_current_device_or_throw().index or 0
    return int(_C.get_device_properties(index).get("max_parameter_size", 1024))


@functools.cache
def _element_offsets_fit(device: int, itemsize: int) -> bool:
    """Whether any tensor's offset into its buffer, in elements of `itemsize` bytes, fits 32
    bits on this device (no buffer exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE)."""
    from .. import _C

    return int(_C.get_device_properties(device)["max_alloc_size"]) // itemsize < 2**32


def _elem_offset(outer: str) -> bool:
    dtype = V.graph.get_dtype(outer)
    index = V.graph.get_current_device_or_throw().index or 0
    return _element_offsets_fit(index, dtype.itemsize)


def _offset_param(outer: str, inner: str) -> tuple[str, str]:
    """The parameter after a buffer: its offset in elements as a uint where that always fits
    (4 bytes of arguments, not 8: more sub-kernels per combo launch), else in bytes."""
    return ("uint", f"{inner}_off") if _elem_offset(outer) else ("ulong", f"{inner}_off")


def _offset_fix(outer: str, inner: str, ptype: str) -> str:
    if _elem_offset(outer):
        return f"{inner} = {inner} + {inner}_off;"
    char = "__global const char*" if "const" in ptype else "__global char*"
    return f"{inner} = ({ptype})(({char}){inner} + {inner}_off);"


def _combo_keys(kernel: OclKernel, binds=None) -> list[tuple[Any, list[tuple[str, str]]]]:
    """(key, parameters) of each argument of a sub-kernel in a combo kernel: equal keys are
    one argument (the same buffer or value); None for a static size (a literal, no parameter)."""
    out = []
    for expr, typ, params in binds if binds is not None else kernel.bindings():
        if typ is int and expr.isdigit():
            out.append((None, params))
        else:
            out.append(((expr, tuple(t for t, _ in params)), params))
    return out


class _DropCodegenErrors(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error in codegen")


@contextlib.contextmanager
def _quiet_node_codegen_errors():
    """Inductor's scheduler logs "Error in codegen for <node>" at FATAL for any exception in a
    node's codegen, NotVectorizable included; during a vector attempt that is not an error."""
    logger = logging.getLogger("torch._inductor.scheduler")
    f = _DropCodegenErrors()
    logger.addFilter(f)
    try:
        yield
    finally:
        logger.removeFilter(f)


class OclScheduling(SIMDScheduling):
    kernel_type = OclKernel  # type: ignore[assignment]

    def __init__(self, scheduler) -> None:
        super().__init__(scheduler)

    def get_backend_features(self, device):
        # Reductions are never split into two kernels (as for Inductor's C++ and Halide
        # backends): Inductor's split path asserts on mixed-order reductions for non-Triton
        # devices. A full reduction then runs in one work group.
        # FOREACH: the optimizer's foreach ops (and other horizontal groups) become combo
        # kernels, one launch for many tensors (see codegen_combo_kernel).
        return OrderedSet([BackendFeature.REDUCE_TO_SINGLE_ELEMENT, BackendFeature.FOREACH])

    def codegen_node_schedule_with_kernel(self, node_schedule, kernel) -> None:
        """Generates the kernel as a vector kernel where it can be one (OclKernel.
        vector_candidate): an attempt on a second kernel object whose state the kernel takes
        on success; at the first op without a vector form, the usual scalar kernel."""
        if kernel.vector_candidate():
            trial = type(kernel)(kernel._ctor[0], **kernel._ctor[1])
            trial.in_combo = kernel.in_combo
            trial.enable_vector()
            try:
                with _quiet_node_codegen_errors():
                    super().codegen_node_schedule_with_kernel(node_schedule, trial)
            except NotVectorizable as e:
                log.debug("torch-ocl: scalar kernel (%s)", e)
            except Exception as e:  # a bug of the vector form must not fail the compile
                log.warning("torch-ocl: the vector form of a kernel failed (%s: %s); "
                            "generating it scalar", type(e).__name__, e)
            else:
                kernel.__dict__.update(trial.__dict__)
                return
        super().codegen_node_schedule_with_kernel(node_schedule, kernel)

    def codegen_combo_kernel(self, combo_kernel_node) -> None:
        """A group of independent nodes (a foreach op over a parameter list, and what fused into
        it) as few launches: each sub-kernel becomes a function of its x index, and one kernel
        hands consecutive ranges of its work items to the functions in turn. Sub-kernels that
        need a work group per row (reductions on GPU drivers) launch on their own. A combo
        kernel's arguments stay within the device's parameter-size limit (1024 bytes on PoCL),
        so long lists split into several launches."""
        from torch._inductor.codegen.simd_kernel_features import SIMDKernelFeatures

        kernels = []
        for sub in combo_kernel_node.get_subkernel_nodes():
            nodes = sub.get_nodes()
            _, (numel, rnumel) = max(nodes, key=lambda n: int(n.is_reduction())).group
            schedule = self.generate_node_schedule(nodes, numel, rnumel)
            features = SIMDKernelFeatures(schedule, numel, rnumel)
            kernel = self.kernel_type(self.select_tiling(schedule, numel, rnumel),
                                      features=features)
            kernel.in_combo = True
            self.process_kernel(kernel, schedule)
            kernels.append((kernel, schedule))
        budget = _max_parameter_bytes() - 64
        group: list = []
        used = 0
        seen: set = set()  # arguments the current group passes already

        def flush() -> None:
            nonlocal group, used
            seen.clear()
            if len(group) == 1:
                kernel, schedule = group[0]
                with V.set_kernel_handler(kernel):
                    src = kernel.codegen_kernel()
                name = self.define_kernel(src, schedule, kernel)
                self.codegen_comment(schedule, name)
                kernel.call_kernel(name)
            elif group:
                self._codegen_combo_group(combo_kernel_node, group)
            group, used = [], 0

        for kernel, schedule in kernels:
            if not kernel.flat:
                group_save, used_save = group, used
                group, used = [(kernel, schedule)], 0
                flush()
                group, used = group_save, used_save
                continue
            keys = {k: sum(_param_bytes(t) for t, _ in p) for k, p in _combo_keys(kernel)
                    if k is not None}
            if group and used + sum(b for k, b in keys.items() if k not in seen) > budget:
                flush()
            group.append((kernel, schedule))
            used += sum(b for k, b in keys.items() if k not in seen)
            seen.update(keys)
        flush()
        self.free_buffers_in_scheduler()

    def _codegen_combo_group(self, combo_kernel_node, group) -> None:
        code = IndentedBuffer()
        code.splice(_KERNEL_HELPERS)
        if any(kernel.vec for kernel, _ in group):
            code.splice(VEC_MATH)
        params, calls, args, types, numels = [], [], [], [], []
        functions: dict[str, str] = {}  # source -> name: equal sub-kernels share one function
        # One parameter per distinct argument (a clipping coefficient that scales every
        # gradient, a size variable), and static sizes as literals: more sub-kernels fit the
        # device's parameter-size limit.
        shared: dict[tuple, list[str]] = {}
        for i, (kernel, _) in enumerate(group):
            with V.set_kernel_handler(kernel):
                src = kernel.codegen_kernel("SUB_NAME", as_function=True)
                _, _, x = kernel.launch_args()
                binds = kernel.bindings()
            if src not in functions:
                functions[src] = f"KERNEL_NAME_s{len(functions)}"
                code.splice(src.replace("SUB_NAME", functions[src]))
            names = []
            for (key, bparams), (expr, typ, _) in zip(_combo_keys(kernel, binds), binds):
                if key is None:  # a static size
                    names.append(f"{expr}L")
                    continue
                if key not in shared:
                    shared[key] = [f"s{i}_{n}" for _, n in bparams]
                    params += [f"{t_} s{i}_{n}" for t_, n in bparams]
                    args.append(expr)
                    types.append(typ)
                names += shared[key]
            # xnumel is the first of the numels, after the buffers and size variables
            xnumel = names[[n for _, n in kernel._params()].index("xnumel")]
            if kernel.col_xl or (kernel.vec and not kernel.vec_red):
                # a static size: the work items as a literal
                x = kernel.work_items(x)
                xnumel = f"{x}L"
            numels.append(x)
            calls.append((functions[src], names, xnumel, [t_ for t_, _ in kernel._params()]))
        code.writeline("__kernel void KERNEL_NAME(")
        with code.indent():
            code.writeline(",\n    ".join(params))
        code.writeline(") {")
        with code.indent():
            _codegen_combo_dispatch(code, calls)
        code.writeline("}")
        schedule = [n for _, sch in group for n in sch]
        name = self.define_kernel(code.getvalue(), schedule, group[0][0], "cmb")
        self.codegen_comment(schedule, name)
        loc = _POINTWISE_LOCAL
        if all(x.isdigit() for x in numels):
            glob = str(sum((int(x) + loc - 1) // loc * loc for x in numels))
        else:
            glob = " + ".join(f"(({x}) + {loc - 1}) // {loc} * {loc}" for x in numels)
        args += [f"global_size=({glob},)", f"local_size=({loc},)"]
        types += [list, list]
        V.graph.wrapper_code.generate_kernel_call(
            name, args, device=V.graph.get_current_device_or_throw(), triton=False,
            arg_types=types,
        )

    # Kernels index one flat x range (and one reduction range): no 2-d tiles.
    @classmethod
    def select_tiling(cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None):
        return cls.create_tiling([numel], [reduction_numel])

    @classmethod
    def get_tiling_and_scores(
        cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None
    ):
        return cls.create_tiling([numel], [reduction_numel]), None

    def define_kernel(self, src_code: str, node_schedule, kernel: OclKernel,
                      category: str | None = None) -> str:
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        if category is None:
            category = "red" if kernel.features.is_reduction() else "poi"
        kernel_name = _kernel_name(category, node_schedule, wrapper.next_kernel_suffix())
        wrapper.src_to_kernel[src_code] = kernel_name
        src = src_code.replace("KERNEL_NAME", kernel_name)
        origins, detailed = get_kernel_metadata(node_schedule, wrapper)
        index = V.graph.get_current_device_or_throw().index or 0
        from . import config

        if config.one_program_per_module and src.startswith(_spliced_helpers()):
            # built with the module's other kernels
            body = f"async_compile_ocl({src!r}, {kernel_name!r}, {index}, _ocl_shared_source)"
        else:
            body = f"async_compile_ocl({src!r}, {kernel_name!r}, {index})"
        wrapper.define_kernel(kernel_name, body, f"{origins}\n{detailed}", gpu=False)
        return kernel_name


def _welford_update(w, ct: str, v, m: str, m2: str, wt: str) -> None:
    """One Welford step of value ``v`` into the state (m, m2, wt) (lvalues of type ``ct``)."""
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


def _codegen_combo_dispatch(code: IndentedBuffer, calls) -> None:
    """The body of a combo kernel: each work group runs one block of ``_POINTWISE_LOCAL`` work
    items of one sub-kernel. ``calls``: (function, argument expressions, xnumel, parameter
    types) per sub-kernel.

    Sub-kernels of one function are one call whose arguments the work group picks, not one call
    per sub-kernel behind a branch. CPU drivers run a work group as a loop over its work items
    and vectorize that loop by if-converting its body, so every call behind a branch ran, masked,
    for every work item: PoCL took 868 us of device time for small GPT's compiled AdamW (16
    sub-kernels of one function, 17408 work items), 5 us for one sub-kernel of 4096 alone.
    The picks are a sequence of selects (``a = g >= end ? next : a``): as nested ``?:`` LLVM
    folded them into a switch, and "loop contains a switch statement" kept PoCL's work-item
    loop scalar (the gradient-clipping combo: 76 -> 37 us). A work item now runs one body per
    distinct function."""
    loc = _POINTWISE_LOCAL
    rank = {fn: r for r, fn in enumerate(dict.fromkeys(c[0] for c in calls))}
    order = sorted(range(len(calls)), key=lambda i: rank[calls[i][0]])  # stable
    code.writeline("const long g = get_group_id(0);")
    code.writeline("const long lid = get_local_id(0);")
    # ends[k]: the first work group after sub-kernel order[k]; literal where sizes are static
    ends: list[str] = []
    total: int | None = 0
    for k, i in enumerate(order):
        xnumel = calls[i][2]
        lit = xnumel[:-1] if xnumel.endswith("L") else xnumel
        if total is not None and lit.isdigit():
            total += (int(lit) + loc - 1) // loc
            ends.append(f"{total}L")
        else:
            prev = ends[-1] if ends else "0L"
            code.writeline(f"const long end{k} = {prev} + ({xnumel} + {loc - 1}) / {loc};")
            ends.append(f"end{k}")
            total = None
    k = 0
    while k < len(order):
        fn = calls[order[k]][0]
        last = k
        while last + 1 < len(order) and calls[order[last + 1]][0] == fn:
            last += 1
        members = list(range(k, last + 1))
        nargs = len(calls[order[k]][1])
        code.writeline(f"if (g < {ends[last]}) {{")
        with code.indent():
            args = []
            starts = [ends[m - 1] if m > 0 else "0L" for m in members]
            cols = [[calls[order[m]][1][a] for m in members] for a in range(nargs)]
            ctypes = calls[order[k]][3] + ["long"]
            for a, vals in enumerate(cols + [starts]):
                if len(set(vals)) == 1:
                    args.append(vals[0])
                    continue
                var = f"a{a}"
                code.writeline(f"{ctypes[a]} {var} = {vals[0]};")
                for j in range(1, len(vals)):
                    code.writeline(f"{var} = g >= {ends[members[j - 1]]} ? {vals[j]} : {var};")
                args.append(var)
            first = args.pop()
            code.writeline(f"{fn}({', '.join(args)}, (g - {first}) * {loc} + lid);")
            code.writeline("return;")
        code.writeline("}")
        k = last + 1


def _kernel_name(category: str, node_schedule, suffix: str) -> str:
    """A name that says what the kernel is, as Triton's ``triton_poi_fused_add_mul_0``:
    ``ocl_`` + poi (pointwise), red (reduction) or cmb (combo kernel) + the fused aten ops
    (``config.triton.descriptive_names``) + a number unique in the module. It is what the
    profiler's kernel rows and the driver's build log show."""
    from torch._inductor import config as inductor_config
    from torch._inductor.utils import get_fused_kernel_name

    mode = inductor_config.triton.descriptive_names
    fused = get_fused_kernel_name(node_schedule, mode) if mode else ""
    # OpenCL C identifiers: the driver's limits are generous, but a combo kernel fuses dozens
    # of ops; keep names readable in profiler tables.
    fused = fused[:48].rstrip("_")
    return "_".join(p for p in ("ocl", category, fused, suffix) if p)


@functools.cache
def _spliced_helpers() -> str:
    """_KERNEL_HELPERS as codegen_kernel writes it at the top of a kernel's source."""
    code = IndentedBuffer()
    code.splice(_KERNEL_HELPERS)
    return code.getvalue()


class _OclWrapperHostCode:
    """What the graph wrappers of ocl graphs (the module's ``call``, graph partitions, control
    flow subgraphs) do on the host each step, in fewer Python-level calls than Inductor's:

    - all input size/stride asserts of a graph as one ``ocl_assert_inputs(...)`` line at the
      top of the function (one C++ call, ~0.35 us per input before), instead of one
      ``assert_size_stride`` line per input before the first kernel that reads it;
    - ocl allocations through ``empty_strided_ocl`` (torch_ocl._C._empty_strided_ocl), as CUDA's
      go through ``empty_strided_cuda``, instead of ``empty_strided(..., device='ocl', dtype=)``
      and its argument parser (~1.1 us each)."""

    def _ocl_header(self) -> bool:
        """Whether the module's header (the root wrapper's) binds the helpers this code calls:
        a subgraph's code lies in its root's module, whose wrapper may be another device's."""
        root = self.get_root_graph() if isinstance(self, SubgraphPythonWrapperCodegen) else self
        return isinstance(root, OclWrapperCodegen)

    def codegen_input_size_asserts(self) -> None:
        # Nothing goes to _pending_input_asserts, so the scheduler's codegen_deferred_input_asserts
        # emits no per-input lines. Graph partitions: the module's call checks all graph inputs
        # once (a partition only sees graph inputs the call already checked), unless the call
        # skips its asserts for cudagraph partitions (write_prefix), as the base class does.
        from torch._inductor import ir
        from torch._inductor.utils import (
            is_codegen_graph_partition_subgraph,
            is_using_cudagraph_partition,
            sympy_product,
        )

        if not self._ocl_header():
            return super().codegen_input_size_asserts()
        if is_codegen_graph_partition_subgraph(self) and not is_using_cudagraph_partition():
            return
        names, specs = [], []
        for name, buf in self.get_graph_inputs().items():
            if buf is None or isinstance(buf, (sympy.Basic, ir.TorchBindObject,
                                                ir.GeneratorState, ir.OpaqueObjectState)):
                continue
            # A partition may take an IRNode output of an earlier partition (as the base).
            if name not in V.graph.graph_input_names:
                continue
            # As the base: no asserts for tensors known to be empty.
            if sympy_product(buf.get_size()) == 0:
                continue
            size = self.codegen_shape_tuple(buf.get_size())
            stride = self.codegen_shape_tuple(buf.get_stride())
            names.append(name)
            specs.append(f"({size}, {stride})")
        if names:
            # Static specs are literals: CPython folds the nested tuple into one constant.
            self.prefix.writeline(
                f"ocl_assert_inputs(({', '.join(names)},), ({', '.join(specs)},))")

    def _codegen_assert_size_stride(self, code, name, size, stride, op_name) -> None:
        # The outputs of extern kernels (one line each, 64 a small-GPT training step):
        # torch_ocl._C._assert_size_stride runs the same test in ~60 ns instead of 0.35-0.85 us,
        # and PyTorch's assert_size_stride (its error) on a mismatch.
        if not self._ocl_header():
            return super()._codegen_assert_size_stride(code, name, size, stride, op_name)
        code.writeline(f"ocl_assert_size_stride({name}, {size}, {stride}, {op_name!r})")

    def make_allocation(self, name, device, dtype, shape, stride, allocation_shape=None,
                        is_pinned=False):
        if (device.type != "ocl" or not self._ocl_header()
                or torch._inductor.config.test_configs.track_memory_lifecycle):
            return super().make_allocation(name, device, dtype, shape, stride, allocation_shape,
                                           is_pinned)
        if allocation_shape is None:
            allocation_shape = shape
        shape_tuple = self.codegen_python_shape_tuple(shape)
        allocation_tuple = self.codegen_python_shape_tuple(allocation_shape)
        stride_tuple = self.codegen_python_shape_tuple(stride)
        out = f"{name} = empty_strided_ocl({allocation_tuple}, {stride_tuple}, {dtype})"
        if shape_tuple != allocation_tuple:
            out += f".as_strided({shape_tuple}, {stride_tuple})"
        return out

    # Kernel calls of ocl kernels: a plain call (the kernel launches on the current stream), in
    # the module's call and in subgraphs (torch.cond branches, while_loop bodies) alike.
    def _generate_kernel_call_helper(self, kernel_name, call_args, *, device=None, triton=True,
                                     **kwargs):
        device = device or V.graph.get_current_device_or_throw()
        if not triton and device.type == "ocl":
            self.writeline(self.wrap_kernel_call(kernel_name, call_args))
            return
        return super()._generate_kernel_call_helper(
            kernel_name, call_args, device=device, triton=triton, **kwargs
        )


class OclSubgraphWrapperCodegen(_OclWrapperHostCode, SubgraphPythonWrapperCodegen):
    """Graph partitions and control flow subgraphs of ocl graphs: code in the module of the
    root OclWrapperCodegen, whose header binds what they call."""


class OclWrapperCodegen(_OclWrapperHostCode, PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return OclSubgraphWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return OclWrapperCodegen()

    def write_header(self) -> None:
        super().write_header()
        self.imports.writeline("from torch_ocl._C import _empty_strided_ocl as empty_strided_ocl")
        self.imports.writeline(
            "from torch_ocl._C import _assert_size_stride as ocl_assert_size_stride")
        self.imports.writeline(
            "from torch_ocl._inductor.runtime import assert_inputs as ocl_assert_inputs")
        self.imports.writeline("from torch_ocl._inductor.runtime import async_compile_ocl")
        self.imports.writeline("from torch_ocl._inductor.runtime import pow_f32 as ocl_pow_f32")
        self.imports.writeline(
            "from torch_ocl._inductor.runtime import wait_kernels as ocl_wait_kernels")
        # The helpers every kernel starts with, once: the runtime builds the module's kernels
        # as one program with them at the top.
        self.header.writeline(f"_ocl_shared_source = {_spliced_helpers()!r}")

    def write_async_compile_wait(self) -> None:
        super().write_async_compile_wait()
        self.prefix.writeline("ocl_wait_kernels(globals())")
