"""Shift operators (x << y, x >> y, <<=, >>=), isin with a scalar on either side, and the small ops
outside the OpInfo matrix (range.out, unique_dim_consecutive, dependency tokens, slow_conv*,
_compute_linear_combination, is_set_to, sspaddmm.out), each against CPU in strict mode."""

import pytest
import torch
import torch_ocl

A = torch.ops.aten
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def ocl(t):
    return t.to("ocl")


def same(got, want):
    assert got.device.type == "ocl"
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, equal_nan=True)


def _ints(dtype, shape, lo=-200, hi=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    info = torch.iinfo(dtype)
    return torch.randint(max(lo, info.min), min(hi, info.max) + 1, shape, generator=g, dtype=dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", ["__lshift__", "__rshift__"])
def test_shift_tensor_and_scalar(dtype, op):
    x = _ints(dtype, (5, 7))
    # Shift counts past the width and negative ones: CPU gives 0 (left) or the sign fill (right).
    counts = _ints(dtype, (7,), -3, 70, seed=1)
    with torch_ocl.strict():
        same(getattr(ocl(x), op)(ocl(counts)), getattr(x, op)(counts))  # broadcast
        same(getattr(ocl(x).t(), op)(ocl(counts[:5])), getattr(x.t(), op)(counts[:5]))
        for s in (0, 1, 3, 7, 8, 15, 16, 31, 63, 64, 100, -1):
            same(getattr(ocl(x), op)(s), getattr(x, op)(s))
        same(getattr(ocl(x[:0]), op)(2), getattr(x[:0], op)(2))


def test_shift_promotion_and_operators():
    x = _ints(torch.uint8, (9,), 0, 255)
    y = _ints(torch.int64, (9,), 0, 70)
    b = torch.tensor([True, False, True])
    with torch_ocl.strict():
        same(ocl(x) << ocl(y), x << y)
        same(ocl(x) >> ocl(y), x >> y)
        same(ocl(b) << 1, b << 1)  # bool with an int scalar promotes to int64
        same(ocl(x) << True, x << True)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_inplace_shifts(dtype):
    x = _ints(dtype, (4, 6))
    c = _ints(dtype, (6,), 0, 10, seed=2)
    for op in ("__ilshift__", "__irshift__"):
        want = getattr(x.clone(), op)(c)
        with torch_ocl.strict():
            d = ocl(x)
            r = getattr(d, op)(ocl(c))
            assert r is d
            same(d, want)
            d2 = ocl(x).t()  # non-contiguous self
            getattr(d2, op)(3)
            same(d2, getattr(x.clone().t(), op)(3))


def test_shift_errors_match_cpu():
    f = torch.tensor([1.5, 2.0])
    i = torch.tensor([1, 2], dtype=torch.int32)
    b = torch.tensor([True, False])
    with torch_ocl.strict():
        for op in ("__lshift__", "__rshift__"):
            with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
                getattr(ocl(f), op)(1)
            with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
                getattr(ocl(i), op)(ocl(f))
            with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
                getattr(ocl(b), op)(ocl(b))
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Int"):
            ocl(i).__ilshift__(2.5)
        with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
            ocl(f).__irshift__(1)
        d = ocl(i)
        d <<= 1  # the process stays usable
        same(d, i << 1)


@pytest.mark.parametrize(
    "dtype", [torch.int64, torch.int32, torch.uint8, torch.float32, torch.float64, torch.float16]
)
@pytest.mark.parametrize("invert", [False, True])
def test_isin_scalar(dtype, invert):
    t = torch.tensor([1, 3, 5, 7, 3], dtype=dtype)
    with torch_ocl.strict():
        for s in (3, 4, 0):
            same(
                torch.isin(ocl(t), s, invert=invert), torch.isin(t, s, invert=invert)
            )  # Tensor_Scalar
            same(
                torch.isin(s, ocl(t), invert=invert), torch.isin(s, t, invert=invert)
            )  # Scalar_Tensor
        same(torch.isin(ocl(t).view(5, 1).t(), 7), torch.isin(t.view(5, 1).t(), 7))
        same(torch.isin(ocl(t[:0]), 3), torch.isin(t[:0], 3))
        same(torch.isin(3, ocl(t[:0])), torch.isin(3, t[:0]))
    if dtype.is_floating_point:
        with torch_ocl.strict():
            same(torch.isin(ocl(t), 3.5), torch.isin(t, 3.5))
            same(torch.isin(2.5, ocl(t)), torch.isin(2.5, t))
            n = torch.tensor([float("nan"), 1.0], dtype=dtype)
            same(torch.isin(ocl(n), float("nan")), torch.isin(n, float("nan")))


def test_isin_scalar_out_forms():
    t = torch.tensor([1, 3, 5, 3])
    with torch_ocl.strict():
        out = torch.empty(0, dtype=torch.bool, device="ocl")
        A.isin.Tensor_Scalar_out(ocl(t), 3, out=out)
        same(out, torch.isin(t, 3))
        out = torch.empty(0, dtype=torch.bool, device="ocl")
        A.isin.Scalar_Tensor_out(5, ocl(t), out=out)
        same(out, torch.isin(5, t))
        with pytest.raises(RuntimeError, match="Bool"):
            torch.isin(ocl(torch.tensor([True])), 1)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.int8]
)
def test_range_out(dtype):
    cases = [(0, 10, 1), (1, 4, 0.5), (5, -3, -2), (0, 0, 1), (-2.5, 3.25, 0.75)]
    for start, end, step in cases:
        if not dtype.is_floating_point and any(isinstance(v, float) for v in (start, end, step)):
            continue
        want = A.range.out(start, end, step, out=torch.empty(0, dtype=dtype))
        with torch_ocl.strict():
            got = A.range.out(start, end, step, out=torch.empty(3, dtype=dtype, device="ocl"))
            same(got, want)
            same(torch.range(start, end, step, dtype=dtype, device="ocl"), want)
    with torch_ocl.strict():
        nc = torch.empty(12, dtype=dtype, device="ocl")[::2]  # non-contiguous, right size
        A.range.out(0, 5, 1, out=nc)
        same(nc, A.range.out(0, 5, 1, out=torch.empty(0, dtype=dtype)))
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            A.range.out(0, 5, 0, out=torch.empty(0, dtype=dtype, device="ocl"))
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            A.range.out(5, 0, 1, out=torch.empty(0, dtype=dtype, device="ocl"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim_consecutive(dtype, dim):
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 2, (6, 5, 4), generator=g).to(dtype)
    x = x.repeat_interleave(2, dim=dim)  # runs of equal slices
    for args in [(False, False), (True, False), (False, True), (True, True)]:
        want = torch.unique_consecutive(x, return_inverse=args[0], return_counts=args[1], dim=dim)
        with torch_ocl.strict():
            got = torch.unique_consecutive(
                ocl(x), return_inverse=args[0], return_counts=args[1], dim=dim
            )
        if not isinstance(want, tuple):
            want, got = (want,), (got,)
        for g_, w_ in zip(got, want):
            same(g_, w_)
    y = torch.tensor([[float("nan"), 1.0], [float("nan"), 1.0], [0.0, 2.0], [-0.0, 2.0]])
    w = A.unique_dim_consecutive(y, 0, True, True)
    with torch_ocl.strict():
        r = A.unique_dim_consecutive(ocl(y), 0, True, True)
        for g_, w_ in zip(r, w):
            same(g_, w_)
        z = torch.empty(0, 3)
        for g_, w_ in zip(A.unique_dim_consecutive(ocl(z), 0), A.unique_dim_consecutive(z, 0)):
            same(g_, w_)
        with pytest.raises(RuntimeError, match="0 sized dimensions"):
            A.unique_dim_consecutive(ocl(z), 1)


def test_dep_token_and_functional_assert():
    with torch_ocl.strict():
        tok = A._make_dep_token(device="ocl")
        assert tok.device.type == "ocl" and tok.shape == () and tok.dtype == torch.float32
        r = A._functional_assert_async.msg(torch.tensor(True, device="ocl"), "fine", tok)
        assert r.device.type == "ocl" and r.shape == ()
        with pytest.raises(RuntimeError, match="went wrong"):
            A._functional_assert_async.msg(torch.tensor(False, device="ocl"), "went wrong", tok)
            torch.ocl.synchronize()


def test_is_set_to():
    a = torch.randn(4, 3, device="ocl")
    with torch_ocl.strict():
        assert a.is_set_to(a)
        assert not a.is_set_to(a.t())
        assert not a.is_set_to(a.clone())
        b = torch.empty(0, device="ocl").set_(a)
        assert b.is_set_to(a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compute_linear_combination(dtype):
    g = torch.Generator().manual_seed(4)
    inp = torch.randn(3, 4, 5, generator=g, dtype=dtype)
    coef = torch.randn(2, 3, generator=g, dtype=dtype)
    want = A._compute_linear_combination(inp, coef)
    base = torch.randn(2, 4, 5, generator=g, dtype=dtype)
    want_out = A._compute_linear_combination.out(inp, coef, out=base.clone())  # accumulates
    with torch_ocl.strict():
        same(A._compute_linear_combination(ocl(inp), ocl(coef)), want)
        same(A._compute_linear_combination.out(ocl(inp), ocl(coef), out=ocl(base)), want_out)
        same(
            A._compute_linear_combination(ocl(inp).transpose(1, 2), ocl(coef)),
            A._compute_linear_combination(inp.transpose(1, 2), coef),
        )
        with pytest.raises(RuntimeError, match="Empty tensor not supported"):
            A._compute_linear_combination(ocl(inp[:, :0]), ocl(coef))


def _conv_inputs(nd, transposed=False, seed=5):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn((2, 3) + (7,) * nd, generator=g)
    w = torch.randn(((3, 4) if transposed else (4, 3)) + (3,) * nd, generator=g)
    b = torch.randn(4, generator=g)
    return x, w, b


@pytest.mark.parametrize("nd", [2, 3])
def test_slow_conv_routes(nd):
    x, w, b = _conv_inputs(nd)
    k, s, p, d = [3] * nd, [2] * nd, [1] * nd, [2] * nd
    tol = dict(rtol=1e-4, atol=1e-4)
    with torch_ocl.strict():
        fwd = A._slow_conv2d_forward if nd == 2 else A.slow_conv3d_forward
        torch.testing.assert_close(
            fwd(ocl(x), ocl(w), k, ocl(b), s, p).cpu(), fwd(x, w, k, b, s, p), **tol
        )
        dil = A.slow_conv_dilated2d if nd == 2 else A.slow_conv_dilated3d
        torch.testing.assert_close(
            dil(ocl(x), ocl(w), k, ocl(b), s, p, d).cpu(), dil(x, w, k, b, s, p, d), **tol
        )
        torch.testing.assert_close(dil(ocl(x), ocl(w), k).cpu(), dil(x, w, k), **tol)
        xt, wt, bt = _conv_inputs(nd, transposed=True)
        tr = A.slow_conv_transpose2d if nd == 2 else A.slow_conv_transpose3d
        op = [1] * nd
        torch.testing.assert_close(
            tr(ocl(xt), ocl(wt), k, ocl(bt), s, p, op, [1] * nd).cpu(),
            tr(xt, wt, k, bt, s, p, op, [1] * nd),
            **tol,
        )
        out = torch.empty(0, device="ocl")
        tr.out(ocl(xt), ocl(wt), k, ocl(bt), s, p, op, [1] * nd, out=out)
        torch.testing.assert_close(out.cpu(), tr(xt, wt, k, bt, s, p, op, [1] * nd), **tol)


def test_slow_conv2d_backward():
    x, w, b = _conv_inputs(2)
    k, s, p = [3, 3], [1, 2], [1, 0]
    go = torch.randn_like(A._slow_conv2d_forward(x, w, k, b, s, p))
    want = A._slow_conv2d_backward.output_mask(go, x, w, k, s, p, [True, True, True])
    tol = dict(rtol=1e-4, atol=1e-4)
    with torch_ocl.strict():
        got = A._slow_conv2d_backward.output_mask(
            ocl(go), ocl(x), ocl(w), k, s, p, [True, True, True]
        )
        for g_, w_ in zip(got, want):
            torch.testing.assert_close(g_.cpu(), w_, **tol)
        outs = [torch.empty(0, device="ocl") for _ in range(3)]
        A._slow_conv2d_backward.grad_input(
            ocl(go),
            ocl(x),
            ocl(w),
            k,
            s,
            p,
            grad_input=outs[0],
            grad_weight=outs[1],
            grad_bias=outs[2],
        )
        for g_, w_ in zip(outs, want):
            torch.testing.assert_close(g_.cpu(), w_, **tol)
        o = torch.empty(0, device="ocl")
        A._slow_conv2d_forward.output(ocl(x), ocl(w), k, ocl(b), s, p, output=o)
        torch.testing.assert_close(o.cpu(), A._slow_conv2d_forward(x, w, k, b, s, p), **tol)


def test_sspaddmm_out_dense_error():
    a = torch.randn(2, 2)
    with torch_ocl.strict():
        with pytest.raises(RuntimeError, match="can only be called on sparse tensors"):
            A.sspaddmm.out(ocl(a), ocl(a), ocl(a), out=torch.empty(0, device="ocl"))
    with pytest.raises(RuntimeError, match="can only be called on sparse tensors"):
        A.sspaddmm.out(a, a, a, out=torch.empty(0))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 4), (6, 4)])
@pytest.mark.parametrize("layout", [None, torch.sparse_coo, torch.sparse_csr])
def test_spdiags(shape, layout):
    d = torch.arange(1.0, 13).view(3, 4)
    o = torch.tensor([0, -1, 2])
    want = torch.sparse.spdiags(d, o, shape, layout)
    with torch_ocl.strict():
        got = torch.sparse.spdiags(ocl(d), ocl(o), shape, layout)
    assert got.device.type == "ocl" and got.layout == want.layout
    torch.testing.assert_close(got.to_dense().cpu(), want.to_dense())
    if layout in (None, torch.sparse_coo):  # CPU's entry order
        assert torch.equal(got._indices().cpu(), want._indices())
        assert torch.equal(got._values().cpu(), want._values())


def test_spdiags_errors():
    d = torch.ones(2, 3, device="ocl")
    with torch_ocl.strict():
        with pytest.raises(RuntimeError, match="duplicate values"):
            torch.sparse.spdiags(d, torch.tensor([1, 1], device="ocl"), (3, 3))
        with pytest.raises(RuntimeError, match="does not match the number of offsets"):
            torch.sparse.spdiags(d, torch.tensor([1], device="ocl"), (3, 3))
        with pytest.raises(RuntimeError, match="must have dtype Long"):
            torch.sparse.spdiags(d, torch.tensor([0, 1], dtype=torch.int32, device="ocl"), (3, 3))
        # COO -> CSC is not on ocl yet: the sparse layer's clear error.
        with pytest.raises(NotImplementedError, match="not supported on ocl yet"):
            torch.sparse.spdiags(d, torch.tensor([0, 1], device="ocl"), (3, 3), torch.sparse_csc)
