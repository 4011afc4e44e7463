"""Reductions and softmax over a non-last dimension against CPU PyTorch, in strict mode.

On CPU drivers (PoCL), lines of at least 32 elements (inner, the product of the sizes after the
reduced dim) run in the column-tile kernels of kernels/reduce_cols.cl: one work item per (outer
slice, group of rows, tile of up to 4 KB of columns), and a merging pass when the rows are split
into groups (tall, narrow inputs). Narrower lines take softmax.cl's _vcols kernels (softmax,
var/std, logsumexp) or the reduction generator. The shapes below cover both, tiles with a partial
last vector (inner 33, 40, 1000, 1030), one and several row groups, dims 0, 1 and the middle of
3-D tensors, keepdim, size-1 and zero-size dims, infinities and NaN, and every floating dtype.
Inputs that are not contiguous (transposed, sliced) take the reduction generator and are checked
here too. TORCH_OCL_TREE_REDUCTIONS=1 runs the same cases through the GPU shapes.
"""

import pytest
import torch

import torch_ocl

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-9, atol=1e-9),
       torch.float16: dict(rtol=1e-2, atol=1e-2), torch.bfloat16: dict(rtol=4e-2, atol=4e-2)}

# (shape, dim): inner = the product of the sizes after dim. The column tiles' shapes
# (test_reduce_indices.py takes them too), then narrower lines.
TILE_SHAPES = [
    ((37, 1000), 0),  # one tile with a partial last vector, one group
    ((3000, 40), 0),  # few columns: rows split into 11 groups, merged by rc_final
    ((600, 1030), 0),  # two tiles, 2 row groups
    ((5, 300, 33), 1),  # middle dim, inner 33 (one lane in the last vector)
    ((2, 1100, 40), 1),  # middle dim, 4 row groups per outer slice
    ((3, 17, 1000), 0),  # dim 0 of a 3-D tensor: inner 17000, 17 tiles
    ((4, 1, 70), 1),  # a reduced dim of size 1
]
SHAPES = TILE_SHAPES + [
    ((3000, 17), 0),  # narrow lines (inner < 32): _vcols kernels and the generator
    ((3, 17, 3), 1),
    ((4, 1, 7), 1),
]


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


# Non-contiguous inputs as (base shape, view, dim): the views are to be taken on the device
# (.to("ocl") of a sliced CPU tensor would arrive contiguous). Transposed, sliced with a step, a
# slice of rows with a step, an inner slice, a 3-D transpose (test_reduce_indices.py too).
STRIDED_VIEWS = [
    ((300, 130), lambda t: t.t(), 0),
    ((300, 130), lambda t: t.t(), 1),
    ((300, 130), lambda t: t[:, ::2], 0),
    ((300, 130), lambda t: t[::3], 0),
    ((300, 130), lambda t: t[:, 1:-2], 0),
    ((4, 50, 30), lambda t: t.transpose(0, 2), 1),
]


def same(got, want, tol):
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    torch.testing.assert_close(got, want, equal_nan=True, **tol)


def reductions(d, keepdim=False):
    return {
        "sum": lambda t: t.sum(d, keepdim=keepdim),
        "mean": lambda t: t.mean(d, keepdim=keepdim),
        "amax": lambda t: t.amax(d, keepdim=keepdim),
        "amin": lambda t: t.amin(d, keepdim=keepdim),
        "var": lambda t: t.var(d, keepdim=keepdim),
        "std0": lambda t: t.std(d, correction=0, keepdim=keepdim),
        "var_mean": lambda t: torch.var_mean(t, d, keepdim=keepdim),
        "std_mean": lambda t: torch.std_mean(t, d, keepdim=keepdim),
        "logsumexp": lambda t: t.logsumexp(d, keepdim=keepdim),
    }


def softmaxes(d, dtype):
    def bwd(log):
        op = (torch.ops.aten._log_softmax_backward_data if log
              else torch.ops.aten._softmax_backward_data)

        def f(t, gy):
            y = t.log_softmax(d) if log else t.softmax(d)
            return op(gy, y, d, dtype)

        return f

    return {
        "softmax": lambda t, gy: t.softmax(d),
        "log_softmax": lambda t, gy: t.log_softmax(d),
        "softmax_backward": bwd(False),
        "log_softmax_backward": bwd(True),
    }


def check_all(x, d, dtype, keepdim=False, view=lambda t: t):
    """view: taken of x and of its device copy (STRIDED_VIEWS)."""
    tol = TOL[dtype]
    xd = x.to("ocl")
    x, xd = view(x), view(xd)
    for name, f in reductions(d, keepdim).items():
        want = f(x)
        with torch_ocl.strict():
            got = f(xd)
        pairs = [(got, want)] if isinstance(want, torch.Tensor) else list(zip(got, want))
        for g, w in pairs:
            try:
                same(g, w, tol)
            except AssertionError as e:
                raise AssertionError(f"{name} over dim {d} of {tuple(x.shape)} {dtype}: {e}")
    gy = rand(*x.shape, seed=7, dtype=dtype)
    for name, f in softmaxes(d, dtype).items():
        want = f(x, gy)
        with torch_ocl.strict():
            got = f(xd, gy.to("ocl"))
        try:
            same(got, want, tol)
        except AssertionError as e:
            raise AssertionError(f"{name} over dim {d} of {tuple(x.shape)} {dtype}: {e}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape,dim", SHAPES, ids=[f"{s}-d{d}" for s, d in SHAPES])
def test_against_cpu(shape, dim, dtype):
    check_all(rand(*shape, dtype=dtype), dim, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_keepdim_and_negative_dim(dtype):
    check_all(rand(6, 40, 19, dtype=dtype), -2, dtype, keepdim=True)
    check_all(rand(300, 3, dtype=dtype), 0, dtype, keepdim=True)


@pytest.mark.parametrize("rows", [40, 700], ids=["one-group", "groups"])
@pytest.mark.parametrize("cols,at", [(40, [0]), (1000, [300, 993])], ids=["narrow", "strips"])
def test_infinities_and_nan(rows, cols, at):
    """cols 1000: one tile whose whole vectors go in register strips of 8, the rest one at a
    time; the special columns in a strip and in the last (partial) vectors."""
    x = rand(rows, cols)
    for c in at:
        x[:, c + 0] = -float("inf")  # a column of -inf
        x[5, c + 1] = float("inf")  # one +inf
        x[rows - 1, c + 2] = float("nan")  # one NaN (the last row: the last group)
        x[3, c + 3], x[rows - 2, c + 3] = float("inf"), -float("inf")
        x[: rows // 2, c + 4] = -float("inf")  # -inf in the first groups only
        x[:, c + 5] = 1e4  # large and equal
        x[rows // 2 :, c + 6] = float("inf")  # +inf in the last groups only
    check_all(x, 0, torch.float32)


# Large float32 softmaxes (reduce_cols.cpp's colsSoftmaxCpu): on a device whose reported global
# memory cache (PoCL: the L3) is smaller than the tensors the kernel walks, the outputs go out
# through non-temporal stores (whole aligned vectors, inner a multiple of 16); softmaxPlan's
# narrower tiles of all the rows replace plan()'s row groups where a tile's columns fit a
# quarter of that cache over the compute units. On a 2-core PoCL with 32 MiB: (1000, 4096)
# narrower tiles, cached stores; (2100, 4096) narrower tiles, non-temporal stores; (9000, 1024)
# row groups and rc_final, non-temporal; (3, 1500, 2048) a middle dim, narrower tiles and
# non-temporal; (2100, 4100) narrower tiles with a partial last vector, cached stores.
BIG_SHAPES = [((1000, 4096), 0), ((2100, 4096), 0), ((9000, 1024), 0), ((3, 1500, 2048), 1),
              ((2100, 4100), 0)]


@pytest.mark.parametrize("shape,dim,dtype",
                         [(s, d, torch.float32) for s, d in BIG_SHAPES] +
                         [((2100, 2048), 0, torch.float64)],  # double: MOVNTPD, 8-lane tiles
                         ids=[f"{s}-d{d}" for s, d in BIG_SHAPES] + ["(2100, 2048)-d0-double"])
def test_large_softmaxes(shape, dim, dtype):
    x = rand(*shape, dtype=dtype)
    flat = x.view(-1, x.shape[-1])
    flat[:, 5] = -float("inf")  # special values in a strip (columns 0-127) of every tile row
    flat[7, 9], flat[3, 11], flat[9, 12] = float("nan"), float("inf"), 1e30
    gy = rand(*shape, seed=7, dtype=dtype)
    for name, f in softmaxes(dim, dtype).items():
        want = f(x, gy)
        with torch_ocl.strict():
            got = f(x.to("ocl"), gy.to("ocl"))
        try:
            same(got, want, TOL[dtype])
        except AssertionError as e:
            raise AssertionError(f"{name} over dim {dim} of {shape} {dtype}: {e}")
    with torch_ocl.strict():
        got = x.to("ocl").logsumexp(dim)
    same(got, x.logsumexp(dim), TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_strided_inputs(dtype):
    # Not contiguous on the device: the reduction generator and contiguous copies for softmax.
    for shape, view, d in STRIDED_VIEWS:
        x = rand(*shape, dtype=dtype)
        assert not view(x.to("ocl")).is_contiguous()
        check_all(x, d, dtype, view=view)


def test_out_and_mixed_dtypes():
    x = rand(700, 24)
    for f in [lambda t, o: torch.sum(t, 0, out=o), lambda t, o: torch.amax(t, 0, out=o),
              lambda t, o: torch.logsumexp(t, 0, out=o), lambda t, o: torch.var(t, 0, out=o)]:
        want = f(x, torch.empty(0))
        out = torch.empty(0, device="ocl")
        with torch_ocl.strict():
            f(x.to("ocl"), out)
        same(out, want, TOL[torch.float32])
    # dtype= and half_to_float: other output types than the input's.
    h = rand(500, 40, dtype=torch.float16)
    with torch_ocl.strict():
        got = h.to("ocl").sum(0, dtype=torch.float32)
        got_sm = torch.ops.aten._softmax(h.to("ocl"), 0, True)
    same(got, h.sum(0, dtype=torch.float32), TOL[torch.float16])
    same(got_sm, torch.ops.aten._softmax(h.float(), 0, False), TOL[torch.float16])


def test_zero_size():
    for shape, d in [((0, 5), 0), ((5, 0), 0), ((3, 0, 4), 1), ((2, 3, 0), 1)]:
        x = torch.empty(shape)
        for name in ["sum", "mean", "var", "logsumexp"]:
            want = reductions(d)[name](x)
            with torch_ocl.strict():
                got = reductions(d)[name](x.to("ocl"))
            same(got, want, TOL[torch.float32])
        with torch_ocl.strict():
            got = x.to("ocl").softmax(d)
        same(got, x.softmax(d), TOL[torch.float32])
    with pytest.raises(IndexError):
        torch.empty(0, 5, device="ocl").amax(0)


@pytest.mark.parametrize("shape, dim", [((6, 37, 1029), 1), ((4096, 64), 0), ((20000, 40), 0),
                                        ((3, 4096, 64), 1), ((2048, 1029), 0)])
def test_var_of_offset_data_over_sub_chunks_and_groups(shape, dim):
    """Data far from zero (1e4 + [0, 1)): merging the means of 32-row sub-chunks and of row
    groups as absolute values lost 3e-4 of the variance; relative to the first row it is exact
    to float rounding. Compared with CPU in double on the same float inputs."""
    g = torch.Generator().manual_seed(11)
    x = torch.rand(shape, generator=g) + 1e4
    with torch_ocl.strict():
        var = torch.var(x.to("ocl"), dim, correction=1)
        std, mean = torch.std_mean(x.to("ocl"), dim, correction=0)
    xd = x.double()
    torch.testing.assert_close(var.cpu().double(), torch.var(xd, dim, correction=1),
                               rtol=5e-6, atol=0)
    torch.testing.assert_close(std.cpu().double(), torch.std(xd, dim, correction=0),
                               rtol=5e-6, atol=0)
    torch.testing.assert_close(mean.cpu().double(), xd.mean(dim), rtol=1e-7, atol=0)


# ---- a whole large tensor to one value through the column tiles ----------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(65536,), (64, 64, 33), (3, 5, 8192), (1000, 999), (1 << 20,)])
@pytest.mark.parametrize("op", ["sum", "mean", "nansum", "amax", "amin"])
def test_whole_tensor_reductions(op, shape, dtype):
    """sum/mean/nansum/amax/amin of all of a contiguous tensor of 65536 elements or more (as an
    R x C matrix through the column tiles, then the C results; sizes with no power-of-two C >= 64
    dividing them, like 1000 x 999, keep the generator), with every dim listed, keepdim, out=,
    NaN and +-inf; against CPU."""
    g = torch.Generator().manual_seed(len(shape) * 100 + shape[-1])
    x = torch.randn(shape, generator=g, dtype=dtype) * 3
    xd = x.to("ocl")
    fn = getattr(torch, op)
    tol = dict(rtol=1e-5, atol=1e-3) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-9)
    torch.testing.assert_close(fn(xd).cpu(), fn(x), **tol)
    dims = tuple(range(x.dim()))
    torch.testing.assert_close(fn(xd, dims, keepdim=True).cpu(), fn(x, dims, keepdim=True), **tol)
    out = torch.empty((), dtype=dtype, device="ocl")
    fn(xd, dims, out=out)
    torch.testing.assert_close(out.cpu(), fn(x, dims), **tol)
    # Special values where they land in different columns and rows.
    y = x.clone().view(-1)
    y[7], y[-3] = float("inf"), float("-inf") if op in ("amax", "amin") else float("inf")
    if op != "nansum":
        torch.testing.assert_close(fn(y.view(shape).to("ocl")).cpu(), fn(y.view(shape)), **tol)
    y[x.numel() // 2 + 5] = float("nan")
    torch.testing.assert_close(fn(y.view(shape).to("ocl")).cpu(), fn(y.view(shape)), equal_nan=True,
                               **tol)
