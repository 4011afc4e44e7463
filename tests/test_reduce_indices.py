"""max/min with indices, argmax/argmin, prod, nansum and vector norms over one dim against CPU
PyTorch, in strict mode; and sum, prod, amax/amin and the indexed ops of integer and bool inputs.

On CPU drivers (PoCL), a non-last dim of a contiguous float/double/half/bfloat16 tensor whose
lines are at least 32 elements wide (inner, the product of the sizes after the reduced dim) runs
in the column tiles of kernels/reduce_cols.cl (rc_index for the indexed ops, rc_reduce for prod,
nansum and the norms of orders 2, 1, 0 and +-inf), with row groups merged by rc_final when there
are too few tiles for the cores. Integer and bool inputs take the same tiles (reduce_cols.cpp's
RC_INT program) for sum/nansum and prod (in int64), amax/amin and max/min with indices and
argmax/argmin. Everything else (narrow lines, the last dim, non-contiguous inputs, other norm
orders) takes the reduction generator. Indices must equal CPU's exactly: the first occurrence of
the maximum (minimum), and where a line holds NaN the index of its first NaN.
test_gpu_launch_shapes reruns this file with TORCH_OCL_TREE_REDUCTIONS=1 (the GPU shapes).
"""

import pytest
import torch

import torch_ocl
from test_kernels_fast import rerun_with_gpu_shapes  # beside this file
from test_reduce_cols import FLOATS, STRIDED_VIEWS, TILE_SHAPES, rand

INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-9, atol=1e-9),
       torch.float16: dict(rtol=1e-2, atol=1e-2), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}

# (shape, dim): test_reduce_cols.py's column tile shapes, then the generator's.
SHAPES = TILE_SHAPES + [
    ((2500, 17), 0),  # narrow lines (inner < 32): the generator
    ((3, 17, 5), 1),
    ((300, 64), 1),  # the last dim: the generator
]


def ties(shape, seed=0, dtype=torch.float32, low=-3, high=4):
    """Small integers: every line holds many ties of its maximum and minimum."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g).to(dtype)


def indexed(d, keepdim=False):
    return {
        "max": lambda t: t.max(d, keepdim=keepdim),
        "min": lambda t: t.min(d, keepdim=keepdim),
        "argmax": lambda t: t.argmax(d, keepdim=keepdim),
        "argmin": lambda t: t.argmin(d, keepdim=keepdim),
    }


def valued(d, keepdim=False):
    vn = torch.linalg.vector_norm
    return {
        "prod": lambda t: t.prod(d, keepdim=keepdim),
        "nansum": lambda t: t.nansum(d, keepdim=keepdim),
        "norm2": lambda t: vn(t, 2, dim=d, keepdim=keepdim),
        "norm1": lambda t: vn(t, 1, dim=d, keepdim=keepdim),
        "norm0": lambda t: vn(t, 0, dim=d, keepdim=keepdim),
        "norm_inf": lambda t: vn(t, float("inf"), dim=d, keepdim=keepdim),
        "norm_neginf": lambda t: vn(t, -float("inf"), dim=d, keepdim=keepdim),
        "norm3": lambda t: vn(t, 3, dim=d, keepdim=keepdim),  # the generator's pow
        "torch.norm": lambda t: torch.norm(t, dim=d, keepdim=keepdim),
    }


def exact(got, want, what):
    """Same dtype, shape and values, bit for bit (NaN as NaN, the sign of zeros)."""
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    if want.is_floating_point():
        same = (got == want) | (got.isnan() & want.isnan())
        same &= got.signbit() == want.signbit()
        assert bool(same.all()), f"{what}: {int((~same).sum())} differ"
    else:
        assert torch.equal(got, want), f"{what}: {int((got != want).sum())} differ"


def exact_or_same_error(f, x, what):
    """f on ocl (strict) equals f on CPU exactly, or raises the error type CPU raises."""
    try:
        want = f(x)
    except (IndexError, RuntimeError) as e:
        with pytest.raises(type(e)):
            f(x.to("ocl"))
        return
    with torch_ocl.strict():
        got = f(x.to("ocl"))
    pairs = [(got, want)] if isinstance(want, torch.Tensor) else list(zip(got, want))
    for g, w in pairs:
        exact(g, w, what)


def check_indexed(x, d, keepdim=False, view=lambda t: t):
    """view: taken of x and of its device copy (strided views made on the device: .to("ocl")
    of a sliced CPU tensor would arrive contiguous)."""
    for name, f in indexed(d, keepdim).items():
        try:
            want = f(view(x))
        except RuntimeError as e:  # argmax/argmin of bool: the same refusal
            with pytest.raises(RuntimeError, match=str(e).split(":")[0]):
                f(view(x.to("ocl")))
            continue
        with torch_ocl.strict():
            got = f(view(x.to("ocl")))
        what = f"{name} over dim {d} of {tuple(view(x).shape)} {x.dtype} keepdim={keepdim}"
        if isinstance(want, torch.Tensor):
            exact(got, want, what)
        else:
            exact(got.values, want.values, what + " values")
            exact(got.indices, want.indices, what + " indices")


def check_valued(x, d, keepdim=False, view=lambda t: t):
    tol = TOL[x.dtype]
    for name, f in valued(d, keepdim).items():
        if name == "prod" and x.dtype in (torch.float16, torch.bfloat16):
            continue  # test_prod_reduced_precision
        want = f(view(x))
        with torch_ocl.strict():
            got = f(view(x.to("ocl")))
        got = got.cpu()
        what = f"{name} over dim {d} of {tuple(view(x).shape)} {x.dtype} keepdim={keepdim}"
        assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape,
                                                                     want.dtype, want.shape)
        try:
            torch.testing.assert_close(got, want, equal_nan=True, **tol)
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}")


def _check_cases(cases, x, xo, check):
    """Each case f(tensor, device) on CPU and, in strict mode, on ocl; check(got, want, i) on
    every output pair."""
    for i, f in enumerate(cases):
        want = f(x, "cpu")
        with torch_ocl.strict():
            got = f(xo, "ocl")
        pairs = [(got, want)] if isinstance(want, torch.Tensor) else list(zip(got, want))
        for g, w in pairs:
            check(g, w, i)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", SHAPES, ids=[f"{s}-d{d}" for s, d in SHAPES])
def test_indexed_ties_against_cpu(shape, dim, dtype):
    check_indexed(ties(shape, dtype=dtype), dim)
    check_indexed(rand(*shape, seed=1, dtype=dtype), dim)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", SHAPES, ids=[f"{s}-d{d}" for s, d in SHAPES])
def test_valued_against_cpu(shape, dim, dtype):
    check_valued(rand(*shape, dtype=dtype), dim)


# ---- integer and bool inputs ----
# The tiles' shapes, then the generator's (narrow lines, the last dim).
INT_SHAPES = TILE_SHAPES + [((2500, 17), 0), ((300, 64), 1)]


def int_ties(shape, dtype, seed=0):
    """Few distinct values: many ties of every line's maximum and minimum."""
    if dtype == torch.bool:
        return ties(shape, seed, low=0, high=2).bool()
    return ties(shape, seed, dtype=torch.int64, low=-3 if dtype != torch.uint8 else 0,
                high=4).to(dtype)


def int_ops(d, keepdim=False):
    """The integer reductions that run on the tiles (any/all only of bool; argmax/argmin of bool:
    CPU refuses)."""
    return {
        "sum": lambda t: t.sum(d, keepdim=keepdim),
        "nansum": lambda t: t.nansum(d, keepdim=keepdim),
        "prod": lambda t: t.prod(d, keepdim=keepdim),
        "amax": lambda t: t.amax(d, keepdim=keepdim),
        "amin": lambda t: t.amin(d, keepdim=keepdim),
        "any": lambda t: t.any(d, keepdim=keepdim),  # of bool: amax's tiles
        "all": lambda t: t.all(d, keepdim=keepdim),
        **indexed(d, keepdim),
    }


def check_ints(x, d, keepdim=False, view=lambda t: t, ops=None):
    """Every op of int_ops (or those named in ops) exactly as CPU: dtypes, values, indices.
    view: taken of x and of its device copy."""
    for name, f in int_ops(d, keepdim).items():
        if ops is not None and name not in ops:
            continue
        what = f"{name} over dim {d} of {tuple(view(x).shape)} {x.dtype} keepdim={keepdim}"
        try:
            want = f(view(x))
        except (RuntimeError, IndexError) as e:  # the same refusal
            with pytest.raises(type(e)):
                f(view(x.to("ocl")))
            continue
        with torch_ocl.strict():
            got = f(view(x.to("ocl")))
        if isinstance(want, torch.Tensor):
            exact(got, want, what)
        else:
            exact(got.values, want.values, what + " values")
            exact(got.indices, want.indices, what + " indices")


@pytest.mark.parametrize("dtype", INTS + [torch.bool], ids=str)
@pytest.mark.parametrize("shape,dim", INT_SHAPES, ids=[f"{s}-d{d}" for s, d in INT_SHAPES])
def test_integers_and_bool(shape, dim, dtype):
    """Ties, then products of +-1 with a few 2s and 3s (they grow, but exactly: integer products
    wrap the same way in any order)."""
    x = int_ties(shape, dtype)
    check_ints(x, dim)
    if dtype != torch.bool:
        g = torch.Generator().manual_seed(5)
        pm = torch.where(torch.rand(shape, generator=g) < 0.5, -1, 1)
        few = torch.where(torch.rand(shape, generator=g) < 0.01, 3 - (pm < 0).long(), pm)
        check_ints((few.abs() if dtype == torch.uint8 else few).to(dtype), dim, ops=["prod"])


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("rows", [40, 700, 3000], ids=["one-group", "groups", "many-groups"])
def test_integer_extremes(rows, dtype):
    """The type's limits: columns all at the minimum or the maximum (argmax/argmin: index 0;
    amax of an int64 at its limits), both limits in one column, the extreme in the last row (the
    last group) only; int32 sums that overflow int32 but not int64."""
    lo, hi = torch.iinfo(dtype).min, torch.iinfo(dtype).max
    x = int_ties((rows, 48), dtype, seed=4)
    x[:, 0] = lo
    x[:, 1] = hi
    x[3, 2], x[rows - 2, 2] = hi, lo
    x[rows - 1, 3], x[rows - 1, 4] = hi, lo
    x[:, 5] = hi
    x[rows // 2, 5] = hi - 1
    x[:, 6] = lo
    x[rows - 1, 6] = lo + 1
    x[0, 7], x[rows - 1, 7] = lo, lo  # the first of two minima
    check_ints(x, 0, ops=["sum", "amax", "amin", "max", "min", "argmax", "argmin"])
    check_ints(x.reshape(rows, 3, 16).transpose(0, 1).contiguous(), 1,
               ops=["sum", "amax", "amin", "max", "min"])
    if dtype == torch.int32:  # near 2^31 - 1 in every row: sums up to rows * 2^31
        big = (hi - int_ties((rows, 40), torch.int64, seed=6).abs()).to(dtype)
        want = big.sum(0)
        assert int(want.max()) > hi  # the test's point: past int32, within int64
        with torch_ocl.strict():
            exact(big.to("ocl").sum(0), want, "int32 sum past 2^31")
            exact(big.to("ocl").sum(0, dtype=torch.int32), big.sum(0, dtype=torch.int32),
                  "int32 sum into int32 (wraps as CPU)")


@pytest.mark.parametrize("rows", [65535, 65537], ids=["int-lanes", "long-lanes"])
def test_int16_sums_at_the_int32_bound(rows):
    """Sums of bool, uint8, int8 and int16 accumulate in int lanes while rows times the type's
    largest magnitude stays below 2^31 (int16: up to 65535 rows), else in long: at the type's
    limits, one row more must leave int32 exactly as CPU's int64 does."""
    x = torch.full((rows, 33), -32768, dtype=torch.int16)
    x[:, 1] = 32767
    x[: rows // 2, 2] = 32767
    x[1::7, 3] = 5
    want = x.sum(0)
    if rows > 65535:
        assert int(want[0]) < -(2**31)
    with torch_ocl.strict():
        exact(x.to("ocl").sum(0), want, f"int16 sum over {rows} rows")


@pytest.mark.parametrize("dtype", [torch.int8, torch.int64, torch.bool], ids=str)
def test_integer_strided_keepdim_zero_size(dtype):
    for shape, view, d in STRIDED_VIEWS:
        x = int_ties(shape, dtype)
        assert not view(x.to("ocl")).is_contiguous()
        check_ints(x, d, view=view)
    check_ints(int_ties((6, 40, 19), dtype), -2, keepdim=True)
    check_ints(int_ties((300, 35), dtype), 0, keepdim=True)
    for shape, d in [((0, 40), 0), ((5, 0), 0), ((3, 0, 40), 1), ((2, 3, 0), 1)]:
        check_ints(torch.empty(shape, dtype=dtype), d)


def test_integer_out_variants():
    x = int_ties((700, 40), torch.int32)
    xo = x.to("ocl")
    L = torch.long
    cases = [
        lambda t, dev: torch.sum(t, 0, out=torch.empty(0, dtype=L, device=dev)),
        lambda t, dev: torch.sum(t, 0, dtype=torch.int16, out=torch.empty(0, dtype=torch.int16,
                                                                          device=dev)),
        lambda t, dev: torch.sum(t, 0, dtype=torch.float32),  # a float result: the generator
        lambda t, dev: torch.prod(t.clamp(-1, 1), 0, out=torch.empty(0, dtype=L, device=dev)),
        lambda t, dev: torch.nansum(t, 0, out=torch.empty(0, dtype=L, device=dev)),
        lambda t, dev: torch.amax(t, 0, out=torch.empty(0, dtype=torch.int32, device=dev)),
        lambda t, dev: torch.amin(t, 0, keepdim=True, out=torch.empty(0, dtype=torch.int32,
                                                                      device=dev)),
        lambda t, dev: torch.max(t, 0, out=(torch.empty(0, dtype=torch.int32, device=dev),
                                            torch.empty(0, dtype=L, device=dev))),
        lambda t, dev: torch.argmin(t, 0, out=torch.empty(0, dtype=L, device=dev)),
        lambda t, dev: torch.any(t > 0, 0, out=torch.empty(0, dtype=torch.bool, device=dev)),
        lambda t, dev: torch.all(t > -3, 0, keepdim=True,
                                 out=torch.empty(0, dtype=torch.bool, device=dev)),
    ]
    _check_cases(cases, x, xo, lambda g, w, i: exact(g, w, f"case {i}"))
    # A non-contiguous out (a row of a wider tensor): the generator writes through it.
    wide = torch.zeros(2, 40, dtype=L, device="ocl")
    with torch_ocl.strict():
        torch.sum(xo, 0, out=wide[1])
    exact(wide[1], x.sum(0), "sum into a row of a wider out")
    with pytest.raises(RuntimeError):
        torch.amax(xo, 0, out=torch.empty(0, dtype=L, device="ocl"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_keepdim_and_negative_dim(dtype):
    check_indexed(ties((6, 40, 19), dtype=dtype), -2, keepdim=True)
    check_indexed(ties((300, 35), dtype=dtype), 0, keepdim=True)
    check_valued(rand(6, 40, 19, dtype=dtype), -2, keepdim=True)
    check_valued(rand(300, 35, dtype=dtype), 0, keepdim=True)


def put_specials(x, c0=0):
    """test_nan_inf_and_signed_zeros's special columns, at columns c0 to c0 + 12 of x."""
    rows = x.shape[0]
    nan, inf = float("nan"), float("inf")
    x[5, c0 + 0], x[rows - 3, c0 + 0] = nan, nan  # two NaN: the first one's index
    x[rows - 1, c0 + 1] = nan  # NaN in the last row (the last group)
    x[:, c0 + 2] = -inf  # all -inf: index 0 for both max and min
    x[:, c0 + 3] = inf
    x[3, c0 + 4], x[rows - 2, c0 + 4] = inf, -inf
    x[:, c0 + 5] = -0.0
    x[rows // 2, c0 + 5] = 0.0  # -0.0 first: max and min give index 0 and -0.0
    x[:, c0 + 6] = 0.0
    x[rows // 3, c0 + 6] = -0.0
    x[:, c0 + 7] = 0.0
    x[0, c0 + 7] = -0.0
    x[rows - 1, c0 + 8] = 100  # the maximum in the last row only
    x[rows - 1, c0 + 9] = -100
    x[: rows // 2, c0 + 10] = nan  # NaN in the first groups, then values
    x[rows // 2 :, c0 + 11] = inf  # +inf in the last groups only
    x[0, c0 + 12], x[1, c0 + 12] = nan, inf


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("rows", [40, 700, 3000], ids=["one-group", "groups", "many-groups"])
def test_nan_inf_and_signed_zeros(rows, dtype):
    """The first NaN's index; ties of +-inf; -0.0 and +0.0 compare equal, so the first one's
    index and sign come back; columns whose extremes sit in the last row group only."""
    x = ties((rows, 48), seed=3).to(dtype)
    put_specials(x)
    check_indexed(x, 0)
    # nansum skips the NaN; the norms carry it (and inf) as CPU does.
    check_valued(x, 0)
    # The middle dim with the same columns.
    check_indexed(x.reshape(rows, 3, 16).transpose(0, 1).contiguous(), 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("rows", [40, 700], ids=["one-group", "groups"])
def test_nan_inf_in_register_strips(rows, dtype):
    """1000 columns, one tile: its whole vectors are walked in strips of 8 held in registers, the
    rest (float: 7 vectors, the last partial; double: 5) one at a time. The special columns sit
    in both parts, with ties everywhere else."""
    x = ties((rows, 1000), seed=8).to(dtype)
    put_specials(x, 300)
    put_specials(x, 987)  # to the last column
    check_indexed(x, 0)
    check_valued(x, 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_strided_inputs(dtype):
    """Not contiguous (transposed, sliced, made so on the device): the generator, same answers."""
    for shape, view, d in STRIDED_VIEWS:
        x = ties(shape, dtype=dtype)
        assert not view(x.to("ocl")).is_contiguous()
        check_indexed(x, d, view=view)
        check_valued(x / 4, d, view=view)


def test_prod_reduced_precision():
    """CPU multiplies float16/bfloat16 in their own precision per step (over 3000 bfloat16 rows
    it drifts by 76 %); ours (and the generator's) in float, rounded once at the end. Compared
    with CPU's float result on the same values, and over 37 rows with CPU's own result at the
    tolerance of its rounding."""
    for dtype in (torch.float16, torch.bfloat16):
        for shape, d in [((37, 1000), 0), ((3000, 40), 0), ((5, 300, 33), 1)]:
            x = (rand(*shape) / 16 + 1).to(dtype)
            with torch_ocl.strict():
                got = x.to("ocl").prod(d).cpu()
            assert got.dtype == dtype
            torch.testing.assert_close(got, x.float().prod(d).to(dtype), **TOL[dtype])
            if shape[d] <= 37:
                torch.testing.assert_close(got.float(), x.prod(d).float(), rtol=0.1, atol=0)


def test_out_variants():
    x = ties((700, 40))
    xo = x.to("ocl")
    cases = [
        lambda t, dev: torch.max(t, 0, out=(torch.empty(0, device=dev),
                                            torch.empty(0, dtype=torch.long, device=dev))),
        lambda t, dev: torch.min(t, 0, keepdim=True, out=(
            torch.empty(0, device=dev), torch.empty(0, dtype=torch.long, device=dev))),
        lambda t, dev: torch.argmax(t, 0, out=torch.empty(0, dtype=torch.long, device=dev)),
        lambda t, dev: torch.argmin(t, 0, keepdim=True,
                                    out=torch.empty(1, 40, dtype=torch.long, device=dev)),
        lambda t, dev: torch.prod(t / 4, 0, out=torch.empty(0, device=dev)),
        lambda t, dev: torch.nansum(t, 0, out=torch.empty(0, device=dev)),
        lambda t, dev: torch.linalg.vector_norm(t, 2, dim=0, out=torch.empty(0, device=dev)),
        lambda t, dev: torch.norm(t, 1, dim=0, out=torch.empty(0, device=dev)),
    ]
    _check_cases(cases, x, xo, lambda g, w, i: torch.testing.assert_close(
        g.cpu(), w, rtol=1e-5, atol=1e-5, msg=f"case {i}"))
    # A non-contiguous out (a column of a wider tensor): the generator writes through it.
    wide = torch.zeros(2, 40, dtype=torch.long, device="ocl")
    with torch_ocl.strict():
        torch.argmax(xo, 0, out=wide[0])
    exact(wide[0], x.argmax(0), "argmax into a row of a wider out")
    # Wrong out dtypes raise as on CPU.
    with pytest.raises(RuntimeError):
        torch.max(xo, 0, out=(torch.empty(0, device="ocl"), torch.empty(0, device="ocl")))


def test_zero_size():
    for shape, d in [((0, 40), 0), ((5, 0), 0), ((3, 0, 40), 1), ((2, 3, 0), 1)]:
        x = torch.empty(shape)
        for name, f in valued(d).items():
            try:
                want = f(x)
            except RuntimeError:  # +-inf norms of an empty dim: no identity
                with pytest.raises(RuntimeError, match="does not have an identity"):
                    f(x.to("ocl"))
                continue
            with torch_ocl.strict():
                got = f(x.to("ocl"))
            assert got.shape == want.shape and got.dtype == want.dtype, name
            torch.testing.assert_close(got.cpu(), want, msg=name)
        for name, f in indexed(d).items():
            exact_or_same_error(f, x, f"{name} over dim {d} of {shape}")


# ---- the last dim in the generator's vector lanes ----
# A contiguous last dim (rows) on CPU drivers: red_item keeps amax/amin, the +-inf norms, max/min
# with indices and argmax/argmin in vectors of lanes (16 of 32-bit types and of the small
# integers widened to int, 8 of 64-bit ones), in two sets (blocks of 2 x 16 or 2 x 8), merged
# lane against lane, then the tail past the last full block one element at a time. Lengths 1..17
# and those around 8, 16, 32 and 48 cross every boundary of both widths.
LANE_LENGTHS = list(range(1, 18)) + [23, 24, 25, 31, 32, 33, 47, 48, 49, 64, 100, 1000]


def extremes(d):
    """amax/amin and the +-inf norms, compared as values (CPU's sign of a zero extremum depends
    on its own vector width), NaN as NaN."""
    vn = torch.linalg.vector_norm
    return {
        "amax": lambda t: t.amax(d),
        "amin": lambda t: t.amin(d),
        "norm_inf": lambda t: vn(t, float("inf"), dim=d),
        "norm_neginf": lambda t: vn(t, -float("inf"), dim=d),
    }


def check_extremes(x, d, view=lambda t: t):
    for name, f in extremes(d).items():
        if name.startswith("norm") and not x.is_floating_point():
            continue
        want = f(view(x))
        with torch_ocl.strict():
            got = f(view(x.to("ocl"))).cpu()
        what = f"{name} over dim {d} of {tuple(view(x).shape)} {x.dtype}"
        assert got.dtype == want.dtype and got.shape == want.shape, what
        assert bool(((got == want) | (got.isnan() & want.isnan())).all()), what


def lane_specials(x):
    """NaN and infinities at the lanes' edges of rows of length n = x.shape[1] (12 rows)."""
    n = x.shape[1]
    nan, inf = float("nan"), float("inf")
    x[0, n - 1] = nan  # in the tail past the last full block (or the last block)
    x[1, n // 2] = nan  # several NaN: the first one's index
    x[1, n - 1] = nan
    x[1, max(0, n - 2)] = nan
    x[2, 0] = nan  # the first element (the lanes' starting values)
    x[3, ::3] = nan  # NaN in every lane and both sets
    x[4, :] = nan  # all NaN
    x[5, :] = -inf  # all -inf: index 0 for max, and for min
    x[6, n - 1] = inf  # the maximum last
    x[7, :] = 1.0  # all equal: index 0
    x[8, n // 3] = -inf
    x[8, n - 1] = inf
    x[9, min(n - 1, 17)] = nan  # the second set's first block (float) / the third block
    x[10, min(n - 1, 40)] = nan  # past two blocks of 16, in the single block or the tail
    x[11, :] = -0.0
    x[11, n - 1] = 0.0


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("n", LANE_LENGTHS)
def test_last_dim_lanes_floats(n, dtype):
    """Ties everywhere, then NaN/inf at the lanes' edges: the first maximum's (first NaN's) index,
    and amax/amin/+-inf norms NaN where a row holds one, as CPU."""
    check_indexed(ties((5, n), seed=n, dtype=dtype), -1)
    check_extremes(ties((5, n), seed=n, dtype=dtype), -1)
    x = ties((12, n), seed=n + 1).to(dtype)
    lane_specials(x)
    check_indexed(x, -1)
    check_extremes(x, -1)


@pytest.mark.parametrize("dtype", INTS + [torch.bool], ids=str)
@pytest.mark.parametrize("n", LANE_LENGTHS)
def test_last_dim_lanes_integers(n, dtype):
    """Ties, and the type's extremes (the lanes are widened to int for the small types)."""
    x = int_ties((6, n), dtype, seed=n)
    if dtype != torch.bool:
        info = torch.iinfo(dtype)
        x[0, n - 1] = info.max  # in the tail
        x[1, :] = info.min
        x[2, :] = info.max
        x[3, n // 2] = info.min
        x[4, 0] = info.max
    check_ints(x, -1, ops=["amax", "amin", "max", "min", "argmax", "argmin"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8, torch.int64],
                         ids=str)
def test_last_dim_lanes_chunks(dtype):
    """A few long rows: each is split into chunks for the cores (partials merged by red_final),
    the lanes' indices offset by their chunk's start. The extremes sit in later chunks, ties of
    the maximum across chunks, NaN in a middle chunk."""
    n = 40000 + 37
    x = int_ties((4, n), dtype if dtype.is_floating_point else torch.int64, seed=9).to(dtype)
    x[0, 30000] = 100  # the maximum in the fourth chunk
    x[1, 9000] = 100  # ties in two chunks: the first
    x[1, 35000] = 100
    x[2, n - 1] = -100  # the minimum in the tail
    if dtype.is_floating_point:
        x[3, 20000] = float("nan")
        x[3, 33000] = float("nan")
    check_indexed(x, -1)
    check_extremes(x, -1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32], ids=str)
def test_last_dim_lanes_non_contiguous(dtype):
    """Rows of a wider tensor, every other row, an expanded (stride-0) dim: the last dim still
    has stride 1 (the lanes); a transposed tensor and a step in the last dim (one element at a
    time)."""
    x = int_ties((30, 70), torch.int64, seed=4).to(dtype)
    if dtype.is_floating_point:
        x[3, 20] = x[7, 2] = x[7, 45] = float("nan")
    views = [
        lambda t: t[:, 3:53],
        lambda t: t[::2, :41],
        lambda t: t[:, None, 5:38].expand(30, 3, 33),
        lambda t: t.t(),
        lambda t: t[:, ::2],
    ]
    for view in views:
        assert not view(x.to("ocl")).is_contiguous()
        check_indexed(x, -1, view=view)
        check_extremes(x, -1, view=view)


def test_last_dim_lanes_zero_size():
    """Empty rows raise as on CPU (no identity); no rows give empty results."""
    for shape in [(0, 40), (3, 0), (2, 0, 5)]:
        for dtype in [torch.float32, torch.int64]:
            x = torch.empty(shape, dtype=dtype)
            for name, f in {**indexed(-1), **extremes(-1)}.items():
                if name.startswith("norm") and dtype == torch.int64:
                    continue
                exact_or_same_error(f, x, f"{name} over the last dim of {shape} {dtype}")


def test_gpu_launch_shapes():
    """This file again with TORCH_OCL_TREE_REDUCTIONS=1: the GPU kernel shapes."""
    rerun_with_gpu_shapes(__file__)
