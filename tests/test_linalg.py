"""Matrix products on ocl against CPU, strict mode: mm, addmm, bmm, baddbmm, addbmm, addmv/mv,
dot/vdot and what builds on them (matmul, linear, outer). float32/float64 run through CLBlast,
float16/bfloat16/integers through our tiled GEMM kernel; complex through the host BLAS or CLBlast
(tests/test_complex.py covers it in depth)."""

import pytest
import torch

import torch_ocl

TOL = dict(rtol=1e-4, atol=1e-4)


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def on(t):
    return t.to("ocl")


@pytest.mark.parametrize("n,k,m", [(1, 1, 1), (33, 17, 9), (64, 128, 32), (7, 1, 5)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_shapes_and_transposes(n, k, m, ta, tb):
    a = rand(k, n).t() if ta else rand(n, k)  # a transposed view: passed to CLBlast as such
    b = rand(m, k, seed=1).t() if tb else rand(k, m, seed=1)
    with torch_ocl.strict():
        got = torch.mm(on(a), on(b)).cpu()
    torch.testing.assert_close(got, a @ b, **TOL)


def test_mm_non_contiguous_operand_and_out():
    a = rand(10, 12)[:, ::2]  # neither row- nor column-major: copied first
    b = rand(6, 4, seed=1)
    out = torch.empty(0, device="ocl")
    with torch_ocl.strict():
        torch.mm(on(a), on(b), out=out)
        strided_out = torch.empty(4, 10, device="ocl").t()
        torch.mm(on(a), on(b), out=strided_out)
    torch.testing.assert_close(out.cpu(), a @ b, **TOL)
    torch.testing.assert_close(strided_out.cpu(), a @ b, **TOL)


@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.5, 2.0), (0.0, 1.5)])
def test_addmm(beta, alpha):
    bias, a, b = rand(9), rand(5, 7, seed=1), rand(7, 9, seed=2)
    with torch_ocl.strict():
        got = torch.addmm(on(bias), on(a), on(b), beta=beta, alpha=alpha).cpu()
        inplace = on(rand(5, 9, seed=3)).addmm_(on(a), on(b), beta=beta, alpha=alpha).cpu()
    torch.testing.assert_close(got, torch.addmm(bias, a, b, beta=beta, alpha=alpha), **TOL)
    torch.testing.assert_close(
        inplace, rand(5, 9, seed=3).addmm_(a, b, beta=beta, alpha=alpha), **TOL)


def test_addmm_beta_zero_ignores_nan_in_self():
    bias = torch.full((3, 4), float("nan"))
    a, b = rand(3, 2), rand(2, 4, seed=1)
    with torch_ocl.strict():
        got = torch.addmm(on(bias), on(a), on(b), beta=0).cpu()
    torch.testing.assert_close(got, a @ b, **TOL)


def test_bmm_and_matmul_broadcast():
    x, y = rand(4, 5, 6), rand(4, 6, 3, seed=1)
    with torch_ocl.strict():
        got = torch.bmm(on(x), on(y)).cpu()
        got_t = torch.bmm(on(x.transpose(1, 2).contiguous()).transpose(1, 2), on(y)).cpu()
        got_mm = torch.matmul(on(x), on(rand(6, 2, seed=2))).cpu()  # folds into one mm
    torch.testing.assert_close(got, torch.bmm(x, y), **TOL)
    torch.testing.assert_close(got_t, torch.bmm(x, y), **TOL)
    torch.testing.assert_close(got_mm, x @ rand(6, 2, seed=2), **TOL)


def test_linear_forward_and_backward_match_cpu():
    torch.manual_seed(0)
    lin = torch.nn.Linear(12, 7)
    lin_dev = torch.nn.Linear(12, 7).to("ocl")
    lin_dev.load_state_dict(lin.state_dict())
    x = rand(5, 12)
    y = lin(x)
    y.pow(2).sum().backward()
    with torch_ocl.strict(False):  # pow/sum backward are not native yet
        y_dev = lin_dev(on(x))
        y_dev.pow(2).sum().backward()
    torch.testing.assert_close(y_dev.detach().cpu(), y.detach(), **TOL)
    torch.testing.assert_close(lin_dev.weight.grad.cpu(), lin.weight.grad, **TOL)


def test_zero_sizes():
    with torch_ocl.strict():
        assert torch.mm(torch.empty(0, 3, device="ocl"), torch.empty(3, 4, device="ocl")).shape == (0, 4)
        z = torch.mm(torch.empty(2, 0, device="ocl"), torch.empty(0, 4, device="ocl")).cpu()
    assert torch.equal(z, torch.zeros(2, 4))


def test_shape_and_dtype_errors_match_cpu():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(torch.ones(2, 3, device="ocl"), torch.ones(4, 5, device="ocl"))
    with pytest.raises(RuntimeError):
        torch.mm(torch.ones(2, 3, device="ocl"), torch.ones(3, 5, device="ocl", dtype=torch.float16))


def test_complex_is_native():
    a = torch.randn(4, 3, dtype=torch.complex64)
    with torch_ocl.strict():
        got = torch.mm(on(a), on(a.t().contiguous())).cpu()
    torch.testing.assert_close(got, a @ a.t())


DTYPE_TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float16: dict(rtol=2e-3, atol=2e-3),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
}
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
          torch.int8, torch.uint8]


def data(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=g).to(dtype)
    return torch.randint(0, 5 if dtype == torch.uint8 else 7, shape, generator=g).to(dtype) - (
        0 if dtype == torch.uint8 else 3)


def same(got, expected):
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(got, expected, **DTYPE_TOL[expected.dtype])
    else:
        assert torch.equal(got, expected)


def both(fn, *args):
    """fn on CPU and (strict) on ocl with the same inputs; compared."""
    expected = fn(*args)
    with torch_ocl.strict():
        got = fn(*[on(a) if isinstance(a, torch.Tensor) else a for a in args])
    same(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_products_all_dtypes(dtype):
    a, b = data(9, 17, dtype=dtype), data(17, 5, dtype=dtype, seed=1)
    both(torch.mm, a, b)
    both(torch.mm, data(17, 9, dtype=dtype).t(), data(5, 17, dtype=dtype, seed=1).t())
    both(torch.mm, a[::2, 1:], b[1:, ::2])  # sliced: strides only, no copies for our kernel
    x, y = data(3, 9, 17, dtype=dtype), data(3, 17, 5, dtype=dtype, seed=1)
    both(torch.bmm, x, y)
    both(torch.bmm, x.transpose(1, 2).contiguous().transpose(1, 2), y)
    both(torch.matmul, x, data(17, 5, dtype=dtype, seed=2))  # broadcast matrix
    both(torch.matmul, a, data(17, dtype=dtype, seed=3))  # mv
    both(torch.matmul, data(17, dtype=dtype, seed=3), data(17, dtype=dtype, seed=4))  # dot
    both(torch.outer, data(6, dtype=dtype), data(4, dtype=dtype, seed=1))
    bias = data(5, dtype=dtype, seed=5)
    both(lambda s, m1, m2: torch.addmm(s, m1, m2, beta=2, alpha=3), bias, a, b)
    both(lambda s, m, v: torch.addmv(s, m, v, beta=2, alpha=-1), data(9, dtype=dtype), a,
         data(17, dtype=dtype, seed=6))
    both(lambda s, p, q: torch.baddbmm(s, p, q, beta=1, alpha=2), data(3, 9, 5, dtype=dtype), x, y)
    both(lambda s, p, q: torch.addbmm(s, p, q, beta=3, alpha=1), data(9, 5, dtype=dtype), x, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_linear_and_backward_per_dtype(dtype):
    x = data(4, 3, 8, dtype=dtype)
    w, bias = data(6, 8, dtype=dtype, seed=1), data(6, dtype=dtype, seed=2)
    xc, wc, bc = (t.clone().requires_grad_() for t in (x, w, bias))
    xd, wd, bd = (on(t).requires_grad_() for t in (x, w, bias))
    yc = torch.nn.functional.linear(xc, wc, bc)
    (yc * 0.5).sum().backward()
    with torch_ocl.strict():
        yd = torch.nn.functional.linear(xd, wd, bd)
        (yd * 0.5).sum().backward()
    same(yd.detach(), yc.detach())
    for gd, gc in [(xd.grad, xc.grad), (wd.grad, wc.grad), (bd.grad, bc.grad)]:
        same(gd, gc)


def test_gradcheck_float64_products():
    a = data(3, 4, dtype=torch.float64).requires_grad_()
    b = data(4, 2, dtype=torch.float64, seed=1).requires_grad_()
    x = data(2, 3, 4, dtype=torch.float64, seed=2).requires_grad_()
    with torch_ocl.strict(False):  # gradcheck itself uses reductions (max) that may fall back
        assert torch.autograd.gradcheck(lambda p, q: p @ q, (on(a.detach()).requires_grad_(),
                                                             on(b.detach()).requires_grad_()))
        assert torch.autograd.gradcheck(lambda p, q: torch.matmul(p, q),
                                        (on(x.detach()).requires_grad_(),
                                         on(b.detach()).requires_grad_()))


def test_inplace_out_and_noncontiguous_outputs():
    a, b = data(6, 7), data(7, 5, seed=1)
    for dtype in (torch.float64, torch.bfloat16, torch.int32):
        ad, bd = on(a.to(dtype)), on(b.to(dtype))
        out = torch.empty(5, 6, dtype=dtype, device="ocl").t()  # transposed out
        with torch_ocl.strict():
            torch.mm(ad, bd, out=out)
        same(out, a.to(dtype) @ b.to(dtype))
    s = data(6, 5, seed=2)
    with torch_ocl.strict():
        got = on(s).addmm_(on(a), on(b), beta=0.5).cpu()
        got_mv = on(data(6, seed=3)).addmv_(on(a), on(data(7, seed=4))).cpu()
        batched = on(data(2, 6, 5, seed=5)).baddbmm_(on(data(2, 6, 7)), on(data(2, 7, 5))).cpu()
        addb = on(s).addbmm_(on(data(2, 6, 7)), on(data(2, 7, 5)), alpha=2).cpu()
    same(got, s.clone().addmm_(a, b, beta=0.5))
    same(got_mv, data(6, seed=3).addmv_(a, data(7, seed=4)))
    same(batched, data(2, 6, 5, seed=5).baddbmm_(data(2, 6, 7), data(2, 7, 5)))
    same(addb, s.clone().addbmm_(data(2, 6, 7), data(2, 7, 5), alpha=2))


def test_dot_vdot_and_errors():
    a, b = data(11), data(11, seed=1)
    both(torch.dot, a, b)
    both(torch.vdot, a[::2], b[::2])
    both(torch.dot, a.double(), b.double())
    both(torch.dot, a[:0], b[:0])  # empty: zero
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        torch.dot(on(data(2, 2)), on(data(2, 2)))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.dot(on(a), on(b.double()))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        torch.dot(on(a), on(b[:3]))
    with pytest.raises(RuntimeError):
        torch.mm(on(data(2, 3).bool()), on(data(3, 2).bool()))  # CPU rejects bool too
    with pytest.raises(RuntimeError):
        torch.bmm(on(data(2, 3, 4)), on(data(3, 4, 2)))  # batch mismatch


def test_zero_sized_and_empty_inner_dimension_all_engines():
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.int64):
        z = data(3, 0, dtype=dtype)
        both(torch.mm, z, data(0, 4, dtype=dtype))
        both(lambda s, p, q: torch.addmm(s, p, q, beta=2), data(3, 4, dtype=dtype), z,
             data(0, 4, dtype=dtype))
        both(torch.bmm, data(0, 2, 3, dtype=dtype), data(0, 3, 4, dtype=dtype))
