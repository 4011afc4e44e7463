"""Native pointwise kernels (the generator behind add, mul, comparisons, unary math, relu...)
against CPU PyTorch on the same inputs, in strict mode: any CPU fallback would fail the test."""

import pytest
import torch

import cpu_only_ops
import torch_ocl

FLOAT_TOL = {
    torch.float32: dict(rtol=1e-5, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
}


def make(shape, dtype, low=-3.0, high=3.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    return torch.randint(int(low) - 5, int(high) + 6, shape, generator=g).to(dtype)


def check(fn, *cpu_args):
    """fn on CPU and on ocl (tensors moved), strict mode, compared with dtype tolerances."""
    expected = fn(*cpu_args)
    dev_args = [a.to("ocl") if isinstance(a, torch.Tensor) else a for a in cpu_args]
    with torch_ocl.strict():
        got = fn(*dev_args)
    assert got.device.type == "ocl"
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.is_floating_point:
        torch.testing.assert_close(got, expected, equal_nan=True, **FLOAT_TOL[expected.dtype])
    else:
        assert torch.equal(got, expected)


LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "strided": lambda t: t[::2, 1:],
}

UNARY_FLOAT = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
               "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc",
               "sigmoid", "reciprocal", "neg", "ceil", "floor", "trunc", "relu"]
POSITIVE = {"log", "log2", "log10", "sqrt", "rsqrt", "log1p", "reciprocal"}
UNIT = {"asin", "acos"}


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_unary_float32(name, layout):
    low, high = (0.1, 4.0) if name in POSITIVE else (-0.99, 0.99) if name in UNIT else (-3.0, 3.0)
    x = LAYOUTS[layout](make((9, 13), torch.float32, low, high))
    check(getattr(torch, name), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int32,
                                   torch.int64, torch.uint8])
@pytest.mark.parametrize("name", ["exp", "sqrt", "sigmoid", "neg", "floor", "relu"])
def test_unary_dtypes(dtype, name):
    x = make((7, 5), dtype, 0.5, 3.0)
    check(getattr(torch, name), x)


def test_unary_inplace_and_out():
    x = make((6, 4), torch.float32)
    check(lambda t: t.clone().exp_(), x)
    check(lambda t: torch.tanh(t, out=torch.empty(0, device=t.device)), x)  # out= is resized
    check(lambda t: t.clone().relu_(), x)


BINARY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=3),
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=2),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "atan2": torch.atan2,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64,
                                   torch.int32, torch.int64])
def test_binary_broadcast(name, dtype):
    if name == "atan2" and not dtype.is_floating_point:
        a, b = make((5, 6), dtype), make((6,), dtype, 1, 3, seed=1)
        check(BINARY[name], a, b)  # promotes to float
        return
    a = make((5, 6), dtype)
    b = make((6,), dtype, 1.0, 3.0, seed=1)  # nonzero divisors, broadcast
    if name in ("eq", "ne", "le", "ge"):
        b = torch.cat([a[0, :3], b[3:]])  # some equal elements
    check(BINARY[name], a, b)


@pytest.mark.parametrize("name", ["add", "mul", "div", "lt", "sub_alpha"])
def test_binary_layouts_scalars_and_promotion(name):
    fn = BINARY[name]
    a = make((8, 10), torch.float32)
    b = make((10, 8), torch.float32, 1, 3, seed=2)
    check(fn, a, b.t())  # non-contiguous operand
    check(fn, a[::3], b.t()[::3])  # strided both
    check(fn, a, torch.tensor(2.5))  # 0-dim CPU tensor, as Python numbers arrive
    check(lambda x: fn(x, 2), a)
    check(fn, make((4, 1), torch.int64), make((1, 5), torch.float16, 1, 3))  # promotion
    check(fn, make((0, 3), torch.float32), make((3,), torch.float32, 1, 3))  # zero-size
    check(fn, make((1031,), torch.float32), make((1031,), torch.float32, 1, 3))  # odd size


def test_bool_and_integer_semantics():
    a, b = make((16,), torch.bool), make((16,), torch.bool, seed=3)
    check(lambda x, y: x + y, a, b)  # logical or
    check(lambda x, y: x * y, a, b)
    i, j = make((16,), torch.int32), make((16,), torch.int32, 1, 3, seed=4)
    check(lambda x, y: x / y, i, j)  # true division promotes to float
    check(lambda x: x * 3 - 7, i)


def test_inplace_and_out_variants():
    a, b = make((4, 6), torch.float32), make((6,), torch.float32, 1, 3)
    check(lambda x, y: x.clone().add_(y, alpha=2), a, b)
    check(lambda x, y: x.clone().mul_(y), a, b)
    check(lambda x, y: torch.mul(x, y, out=torch.empty(0, device=x.device)), a, b)
    check(lambda x, y: torch.lt(x, y, out=torch.empty(0, dtype=torch.bool, device=x.device)), a, b)
    with pytest.raises(RuntimeError):
        torch.ones(3, device="ocl").add_(torch.ones(2, 3, device="ocl"))  # can't broadcast self
    with pytest.raises(RuntimeError):
        torch.ones(3, dtype=torch.int32, device="ocl").mul_(torch.rand(3, device="ocl"))


def test_nan_propagation():
    a = torch.tensor([float("nan"), 1.0, -2.0, float("nan")])
    b = torch.tensor([0.0, float("nan"), 3.0, float("nan")])
    check(torch.maximum, a, b)
    check(torch.minimum, a, b)
    check(torch.relu, a)
    check(lambda x, y: x < y, a, b)


def test_threshold_backward_is_relus_gradient():
    x = make((7, 9), torch.float32)
    x_dev = x.to("ocl").requires_grad_()
    x_cpu = x.clone().requires_grad_()
    with torch_ocl.strict():
        torch.relu(x_dev).backward(torch.ones_like(x_dev))
    torch.relu(x_cpu).backward(torch.ones_like(x_cpu))
    assert torch.equal(x_dev.grad.cpu(), x_cpu.grad)


def test_complex_op_without_a_kernel_goes_through_the_counted_fallback():
    # a test-only op with a CPU kernel only (tests/test_complex.py covers the complex ops that
    # have kernels): complex tensors go to the host and back intact
    torch_ocl.reset_fallback_report()
    c = torch.randn(4, 5, dtype=torch.complex64)
    d = torch.randn(5, dtype=torch.complex64)
    got = cpu_only_ops.add(c.to("ocl"), d.to("ocl"))
    assert got.device.type == "ocl" and got.dtype == torch.complex64
    assert torch.equal(got.cpu(), c + d)
    ops = [r["op"] for r in torch_ocl.fallback_report(print_table=False)]
    assert cpu_only_ops.ADD in ops


def test_device_mismatch_between_ocl_devices_or_cpu():
    with pytest.raises(RuntimeError, match="same device"):
        torch.ones(3, device="ocl") + torch.ones(3)


ACTIVATIONS = {
    "gelu": lambda x: torch.nn.functional.gelu(x),
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "silu": torch.nn.functional.silu,
    "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.1),
    "square": lambda x: x ** 2,
    "pow_scalar": lambda x: x.abs() ** 1.7,
    "sign": torch.sign,
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_activations_forward_and_backward(name, dtype):
    fn = ACTIVATIONS[name]
    x = make((6, 11), dtype, -4.0, 4.0)
    x[0, 0] = 0.0
    xd = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    weights = make((6, 11), dtype, seed=5)
    w_dev = weights.to("ocl")
    with torch_ocl.strict(name != "pow_scalar"):  # abs (for x ** 1.7 of negatives) is not native
        yd = fn(xd)
        (yd * w_dev).sum().backward()
    yc = fn(xc)
    (yc * weights).sum().backward()
    tol = FLOAT_TOL[dtype]
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), **tol)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **tol)


def test_pow_tensor_and_inplace_forms():
    a = make((5, 4), torch.float32, 0.5, 3.0)
    e = make((4,), torch.float32, -2.0, 2.0, seed=7)
    check(torch.pow, a, e)
    check(lambda x: x.clone().pow_(3), a)
    check(lambda x: torch.nn.functional.gelu(x.clone(), approximate="tanh"), a)
    check(lambda x: torch.nn.functional.silu(x.clone(), inplace=True), a)
    check(lambda x: torch.nn.functional.leaky_relu(x.clone(), 0.2, inplace=True), a)
    with pytest.raises(RuntimeError, match="approximate"):
        torch.nn.functional.gelu(torch.ones(2, device="ocl"), approximate="bad")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2.0, 2.5, 1, 0])
def test_pow_float_scalar_exponents(dtype, exponent):
    # 2, 3, +-0.5, -1 and -2 take products, sqrt and division (as CPU's optimized kernel): the
    # same values as CPU, signed zeros, infinities and NaN included; others OpenCL's pow.
    special = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), -2.0, 1e-3,
                            65504.0, -1.5]).to(dtype)
    x = torch.cat([special, make((37,), dtype, -4.0, 4.0)])
    check(lambda t: torch.pow(t, exponent), x)
    check(lambda t: t[::3].pow(exponent), x)  # non-contiguous
    check(lambda t: t.view(2, 23).t().clone().pow_(exponent), x)  # in place
    check(lambda t: torch.pow(t[:0], exponent), x)  # empty
    got = torch.empty(46, dtype=dtype, device="ocl")
    with torch_ocl.strict():
        torch.pow(x.to("ocl"), exponent, out=got)
    torch.testing.assert_close(got.cpu(), torch.pow(x, exponent), equal_nan=True,
                               **FLOAT_TOL[dtype])
    if exponent in (2, 3, 0.5, -0.5, -1):
        # the sign of a zero result, which a tolerance would not see
        zeros = torch.pow(special[:2], exponent)
        got_zeros = torch.pow(special[:2].to("ocl"), exponent).cpu()
        assert torch.equal(torch.signbit(got_zeros), torch.signbit(zeros))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_pow_integers(dtype):
    # CPU's powi: wrap-around on overflow, negative exponents give 1, +-1 or 0.
    base = torch.tensor([3, -3, 2, -1, 1, 0, 7, 2, -2, 5]).to(dtype)
    exp = torch.tensor([0, 1, 2, 3, 5, -1, -2, 63, -3, 30]).to(dtype)
    for b, e in ((base, exp), (base[::2], exp[1::2]), (base.view(2, 5), exp[:5])):
        with torch_ocl.strict():
            got = torch.pow(b.to("ocl"), e.to("ocl"))
            got_scalar = torch.pow(b.to("ocl"), 3)
        assert torch.equal(got.cpu(), torch.pow(b, e))
        assert torch.equal(got_scalar.cpu(), torch.pow(b, 3))
    for d in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="negative integer powers"):
            torch.pow(base.to(d), -1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64,
                                   torch.int8])
def test_abs_and_clamp(dtype):
    x = make((7, 6), dtype, -5.0, 5.0)
    check(torch.abs, x)
    check(lambda t: t.clone().abs_(), x)
    check(lambda t: torch.clamp(t, -2, 3), x)
    check(lambda t: torch.clamp(t, min=1), x)
    check(lambda t: torch.clamp(t, max=-1), x)
    check(lambda t: t.clone().clamp_(-1, 1), x)
    check(lambda t: torch.clamp_max(t, 2), x)
    check(lambda t: torch.clamp(t, 3, -3), x)  # min > max gives max, as on CPU


def test_clamp_nan_and_errors():
    x = torch.tensor([float("nan"), -3.0, 0.5, 7.0])
    check(lambda t: torch.clamp(t, -1, 1), x)
    check(lambda t: t.abs(), x)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(torch.ones(2, device="ocl"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16, torch.bool])
def test_where(dtype):
    cond = make((6, 5), torch.bool, seed=8)
    a, b = make((6, 5), dtype), make((5,), dtype, seed=9)
    check(torch.where, cond, a, b)
    check(lambda c, x: torch.where(c, x, 0), cond, a)  # a Python scalar
    check(lambda c, x, y: torch.where(c, x.t().contiguous().t(), y), cond, a, b)


def test_where_promotion_and_errors():
    cond = make((4,), torch.bool)
    check(torch.where, cond, make((4,), torch.int32), make((4,), torch.float32, seed=1))
    with pytest.raises(RuntimeError, match="boolean"):
        torch.where(torch.ones(4, device="ocl"), torch.ones(4, device="ocl"),
                    torch.ones(4, device="ocl"))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim):
    xs = [make((3, 4, 2), torch.float32, seed=i) for i in range(3)]
    check(lambda *t: torch.cat(t, dim), *xs)
    check(lambda a, b: torch.cat([a.transpose(0, 1), b.transpose(0, 1)], dim), xs[0], xs[1])
    check(lambda a, b: torch.cat([a, b.to(torch.float16)], dim), xs[0], xs[1])  # promotion
    check(lambda a, b: torch.cat([a, torch.empty(0, device=a.device), b], dim), xs[0], xs[1])
    check(lambda a: torch.cat([a[:, :0], a[:, :0]], 1), xs[0])  # zero-size


def test_cat_out_and_device_error():
    a, b = make((2, 3), torch.float32), make((4, 3), torch.float32, seed=1)
    out = torch.empty(0, device="ocl")
    with torch_ocl.strict():
        torch.cat([a.to("ocl"), b.to("ocl")], out=out)
    assert torch.equal(out.cpu(), torch.cat([a, b]))
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([a.to("ocl"), b])


# ---- the rest of the pointwise family --------------------------------------------------------

SPECIALS = [float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 1.0, -1.0, 0.5]


def with_specials(t):
    """t with inf, -inf, nan, -0.0, 0.0 and a few exact values in its first elements."""
    t = t.clone()
    flat = t.view(-1)
    vals = torch.tensor(SPECIALS, dtype=torch.float64).to(t.dtype)
    flat[: len(SPECIALS)] = vals[: flat.numel()]
    return t


def check_close(fn, *cpu_args, rtol=None, atol=None, strict=True):
    """Like check, with an explicit tolerance for special functions."""
    expected = fn(*cpu_args)
    dev_args = [a.to("ocl") if isinstance(a, torch.Tensor) else a for a in cpu_args]
    with torch_ocl.strict(strict):
        got = fn(*dev_args)
    assert got.device.type == "ocl"
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.is_floating_point:
        tol = dict(FLOAT_TOL[expected.dtype])
        if rtol is not None:
            tol = dict(rtol=rtol, atol=atol if atol is not None else rtol)
        torch.testing.assert_close(got, expected, equal_nan=True, **tol)
    else:
        assert torch.equal(got, expected)


F = torch.nn.functional
UNARY_MORE = {
    "frac": (torch.frac, -5, 5),
    "round": (torch.round, -5, 5),
    "round_half": (lambda t: torch.round(t * 2) / 2, -5, 5),  # exact .5 values: half to even
    "round_decimals": (lambda t: torch.round(t, decimals=2), -5, 5),
    "round_neg_decimals": (lambda t: torch.round(t * 1000, decimals=-2), -5, 5),
    "asinh": (torch.asinh, -5, 5),
    "acosh": (torch.acosh, 1, 6),
    "atanh": (torch.atanh, -0.99, 0.99),
    "erfinv": (torch.erfinv, -0.999, 0.999),
    "lgamma": (torch.lgamma, -4.5, 6),
    "digamma": (torch.digamma, -4.5, 6),
    "logit": (torch.logit, 0.01, 0.99),
    "logit_eps": (lambda t: torch.logit(t, eps=0.1), -0.2, 1.2),
    "mish": (F.mish, -6, 6),
    "softplus": (F.softplus, -6, 6),
    "softplus_beta": (lambda t: F.softplus(t, beta=2, threshold=3), -6, 6),
    "hardsigmoid": (F.hardsigmoid, -5, 5),
    "hardswish": (F.hardswish, -5, 5),
    "elu": (F.elu, -4, 4),
    "selu": (F.selu, -4, 4),
    "celu": (lambda t: F.celu(t, alpha=0.7), -4, 4),
    "relu6": (F.relu6, -8, 8),
    "hardtanh": (lambda t: F.hardtanh(t, -0.5, 2), -4, 4),
    "logsigmoid": (F.logsigmoid, -8, 8),
    "threshold": (lambda t: F.threshold(t, 0.3, -7.0), -3, 3),
    "nan_to_num": (torch.nan_to_num, -3, 3),
    "nan_to_num_args": (lambda t: torch.nan_to_num(t, nan=1.5, posinf=9.0, neginf=-9.0), -3, 3),
    "isnan": (torch.isnan, -3, 3),
    "isinf": (torch.isinf, -3, 3),
    "isposinf": (torch.isposinf, -3, 3),
    "isneginf": (torch.isneginf, -3, 3),
    "isfinite": (torch.isfinite, -3, 3),
    "signbit": (torch.signbit, -3, 3),
    "logical_not": (torch.logical_not, -3, 3),
    "bool_not": (lambda t: ~(t > 0), -3, 3),
    "sigmoid": (torch.sigmoid, -8, 8),
    "exp2": (torch.exp2, -8, 8),
    "expm1": (torch.expm1, -3, 3),
}
SPECIAL_FN = {"erfinv", "lgamma", "digamma", "mish", "logsigmoid", "softplus", "softplus_beta",
              "acosh", "asinh", "atanh", "logit", "logit_eps", "expm1"}
NO_SPECIALS = {"round_half", "round_neg_decimals", "round_decimals"}


@pytest.mark.parametrize("name", list(UNARY_MORE))
def test_unary_more_float32_specials_noncontiguous(name):
    fn, low, high = UNARY_MORE[name]
    x = make((13, 9), torch.float32, low, high)
    if name not in NO_SPECIALS:
        x = with_specials(x)
    x = x.t()  # non-contiguous
    rtol = 2e-5 if name in SPECIAL_FN else None
    check_close(fn, x, rtol=rtol, atol=1e-5 if rtol else None)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("name", ["round", "erfinv", "digamma", "softplus", "nan_to_num",
                                  "signbit"])
def test_unary_more_dtypes(name, dtype):
    fn, low, high = UNARY_MORE[name]
    x = with_specials(make((7, 5), dtype, low, high))
    check(fn, x)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int64, torch.bool])
def test_unary_integer_and_bool(dtype):
    x = make((5, 7), dtype, -3, 3)
    for fn in [torch.isnan, torch.signbit, torch.logical_not, torch.nan_to_num, torch.bitwise_not]:
        check(fn, x)
    if dtype == torch.bool:
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            torch.round(x.to("ocl"))  # as on CPU
    else:
        check(torch.round, x)
    if dtype != torch.bool:
        check(lambda t: F.hardtanh(t, 0 if dtype == torch.uint8 else -2, 2), x)
        check(lambda t: F.hardtanh(t, 0.0 if dtype == torch.uint8 else -2.5, 2.5), x)  # keeps dtype
        check(lambda t: F.threshold(t, 1, 9), x)


def rand_divisors(shape, dtype, seed):
    b = make(shape, dtype, -4, 4, seed=seed)
    if dtype == torch.uint8:
        return torch.where(b == 0, torch.ones_like(b), b)
    return torch.where(b == 0, torch.full_like(b, 3), b)


DIVISION = {
    "remainder": torch.remainder,
    "fmod": torch.fmod,
    "floor_divide": torch.floor_divide,
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_none": lambda a, b: torch.div(a, b, rounding_mode=None),
}


@pytest.mark.parametrize("name", list(DIVISION))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int8,
                                   torch.uint8, torch.int64])
def test_division_family(name, dtype):
    fn = DIVISION[name]
    a = make((6, 7), dtype, -9, 9)
    b = rand_divisors((7,), dtype, seed=1)
    check(fn, a, b)  # broadcast, negative operands of both signs
    if dtype.is_floating_point:
        sa = with_specials(make((4, 8), dtype, -9, 9))
        sb = make((4, 8), dtype, -3, 3, seed=2)
        sb.view(-1)[::3] = 0.0  # division by zero: inf / nan as on CPU
        sb.view(-1)[1] = -0.0
        check(fn, sa, sb)


def test_division_scalars_inplace_out_and_zero_division():
    a = make((5, 6), torch.float32, -9, 9)
    check(lambda t: t % 2.5, a)
    check(lambda t: t // -2, a)
    check(lambda t: torch.remainder(3, t.abs() + 1), a)  # remainder.Scalar_Tensor
    check(lambda t: torch.fmod(t, -1.5), a)
    check(lambda t: t.clone().remainder_(1.7), a)
    check(lambda t: t.clone().floor_divide_(t.new_full((6,), 2.0)), a)
    check(lambda t: t.clone().div_(3, rounding_mode="floor"), a)
    check(lambda t: torch.floor_divide(t, 2, out=torch.empty(0, device=t.device)), a)
    check(lambda t: torch.div(t, 7, rounding_mode="trunc", out=torch.empty(0, device=t.device)), a)
    i = make((9,), torch.int64, -9, 9)
    check(lambda t: t // 2, i)
    check(lambda t: t % -3, i)
    check(lambda t: torch.div(t, 2, rounding_mode="floor"), i)
    check(lambda t, u: torch.div(t, u), i, rand_divisors((9,), torch.int64, 3))  # true division
    z = torch.tensor([1, 0, 2], dtype=torch.int32, device="ocl")
    for fn in [torch.remainder, torch.fmod, torch.floor_divide,
               lambda x, y: torch.div(x, y, rounding_mode="trunc")]:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn(torch.ones(3, dtype=torch.int32, device="ocl"), z)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.ones(3, dtype=torch.int64, device="ocl") // 0
    with pytest.raises(RuntimeError, match="rounding_mode"):
        torch.div(torch.ones(2, device="ocl"), 2, rounding_mode="bad")
    # The process stays usable.
    assert (torch.ones(3, dtype=torch.int32, device="ocl") // 2).cpu().tolist() == [0, 0, 0]


BINARY_MORE = {
    "hypot": torch.hypot,
    "copysign": torch.copysign,
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "xlogy": torch.xlogy,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "heaviside": torch.heaviside,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "atan2": torch.atan2,
    "maximum": torch.maximum,
}


@pytest.mark.parametrize("name", list(BINARY_MORE))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_binary_more_float(name, dtype):
    fn = BINARY_MORE[name]
    if dtype != torch.float32 and name not in ("hypot", "logaddexp", "xlogy", "copysign", "fmax"):
        pytest.skip("dtype coverage is sampled to keep kernel compiles down")
    a = with_specials(make((4, 9), dtype, -3, 3))
    b = make((9,), dtype, -3, 3, seed=1)
    b[:4] = torch.tensor([float("nan"), 0.0, -0.0, float("inf")]).to(dtype)
    if name == "xlogy":
        b = b.abs()
    check(fn, a, b)
    if dtype == torch.float32:
        check(fn, a.t().contiguous().t(), b)  # non-contiguous


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.bool])
def test_bitwise_logical_integer(dtype):
    a, b = make((5, 6), dtype, -9, 9), make((6,), dtype, -9, 9, seed=1)
    ops = [torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor, torch.logical_and,
           torch.logical_or, torch.logical_xor, torch.fmax, torch.fmin]
    if dtype != torch.bool:
        ops += [torch.heaviside, torch.copysign, torch.xlogy]  # (CPU hypot rejects integers)
    for fn in ops:
        check(fn, a, b)
    check(lambda x, y: x & y, a.t(), b[:5])  # non-contiguous
    check(lambda x: x ^ True if dtype == torch.bool else x ^ 5, a)  # Scalar overloads
    check(lambda x, y: torch.logical_and(x, y, out=torch.empty(0, dtype=torch.float32,
                                                                 device=x.device)), a, b)
    check(lambda x: x.clone().bitwise_not_(), a)


@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int64])
def test_shifts(dtype):
    bits = torch.iinfo(dtype).bits
    a = make((4, 10), dtype, -9, 9)
    shifts = torch.tensor([0, 1, 3, bits - 1, bits, bits + 2, 2, 5, 1, 0]).to(dtype)
    if dtype != torch.uint8:
        shifts[-1] = -1  # out of range: 0 (left) or sign fill (right), as on CPU
    check(torch.bitwise_left_shift, a, shifts)
    check(torch.bitwise_right_shift, a, shifts)
    check(lambda x: torch.bitwise_left_shift(x, 2), a)
    check(lambda x, s: x.clone().bitwise_right_shift_(s), a, shifts)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_clamp_tensor_bounds(dtype):
    x = make((6, 5), dtype, -9, 9)
    lo = make((5,), dtype, -5, 0, seed=1)
    hi = make((6, 1), dtype, 1, 5, seed=2)
    if dtype.is_floating_point:
        x = with_specials(x)
        lo[2] = float("nan")
    check(lambda t, a, b: torch.clamp(t, a, b), x, lo, hi)
    check(lambda t, a: torch.clamp(t, min=a), x, lo)
    check(lambda t, b: torch.clamp(t, max=b), x, hi)
    check(torch.clamp_min, x, lo)
    check(torch.clamp_max, x, hi)
    check(lambda t, a, b: t.clone().clamp_(a, b), x, lo, hi)
    check(lambda t, a, b: torch.clamp(t, a, b, out=torch.empty(0, dtype=t.dtype, device=t.device)),
          x, lo, hi)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_lerp_addcmul_addcdiv(dtype):
    a, b = make((5, 6), dtype), make((6,), dtype, seed=1)
    w = make((5, 1), dtype, -0.5, 1.5, seed=2)
    c = make((5, 6), dtype, 1, 3, seed=3)
    check(lambda x, y: torch.lerp(x, y, 0.3), a, b)
    check(lambda x, y: torch.lerp(x, y, 0.8), a, b)
    check(torch.lerp, a, b, w)
    check(lambda x, y, z: x.clone().lerp_(y, z), a, b, w)
    check(lambda x, y, z: torch.addcmul(x, y, z, value=-0.5), a, b, c)
    check(lambda x, y, z: torch.addcdiv(x, y, z, value=2), a, b, c)
    check(lambda x, y, z: x.clone().addcmul_(y, z), a.t().contiguous().t(), b, c)
    check(lambda x, y, z: x.clone().addcdiv_(y, z, value=0.1), a, b, c)


def test_addcmul_integer_and_errors():
    a, b, c = (make((4, 5), torch.int64, seed=s) for s in range(3))
    check(lambda x, y, z: torch.addcmul(x, y, z, value=3), a, b, c)
    with pytest.raises(RuntimeError, match="Integer division"):
        torch.addcdiv(a.to("ocl"), b.to("ocl"), c.to("ocl"))
    with pytest.raises(RuntimeError):
        torch.lerp(a.to("ocl"), b.to("ocl"), 0.5)  # CPU rejects integer lerp too


def test_shapes_zero_size_scalars_and_odd_sizes():
    check(torch.remainder, make((0, 3), torch.float32), make((3,), torch.float32, 1, 2))
    check(torch.hypot, make((4099,), torch.float32), make((4099,), torch.float32, seed=1))
    check(F.hardswish, make((1,), torch.float32))
    check(torch.logaddexp, torch.tensor(1.5), torch.tensor(-2.0))  # 0-dim on the device
    check(lambda t: torch.fmax(t, torch.tensor(0.5)), make((7,), torch.float32))  # CPU 0-dim
    check(lambda t: torch.copysign(t, -1.0), make((1000,), torch.float32))  # Scalar overload
    check(lambda t: torch.xlogy(2.0, t), make((7,), torch.float32, 0.1, 3))
    check(lambda t: t.clone().logit_(eps=0.2), make((7,), torch.float32, 0, 1))
    check(lambda t: torch.nan_to_num(t, out=torch.empty_like(t)),
          with_specials(make((9,), torch.float32)))
    with pytest.raises(RuntimeError):
        torch.bitwise_and(torch.ones(2, device="ocl"), torch.ones(2, device="ocl"))  # floats
    with pytest.raises(RuntimeError):
        torch.frac(torch.ones(2, dtype=torch.int32, device="ocl"))


GRAD_ACTIVATIONS = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "logit": lambda t: torch.logit(t.sigmoid()),
    "logit_eps": lambda t: torch.logit(t * 0.3, eps=0.1),
    "elu": F.elu,
    "selu": F.selu,
    "celu": lambda t: F.celu(t, 0.5),
    "mish": F.mish,
    "softplus": lambda t: F.softplus(t, beta=1.5, threshold=4),
    "hardtanh": F.hardtanh,
    "relu6": F.relu6,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "logsigmoid": F.logsigmoid,
    "threshold": lambda t: F.threshold(t, 0.2, -1.0),
    "elu_inplace": lambda t: F.elu(t * 1, inplace=True),
}


@pytest.mark.parametrize("name", list(GRAD_ACTIVATIONS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_activation_gradients(name, dtype):
    fn = GRAD_ACTIVATIONS[name]
    if dtype != torch.float32 and name not in ("sigmoid", "mish", "elu", "softplus", "hardswish"):
        pytest.skip("dtype coverage is sampled to keep kernel compiles down")
    x = make((6, 11), dtype, -5.0, 5.0)
    xd = x.to("ocl").requires_grad_()
    xc = x.clone().requires_grad_()
    w = make((6, 11), dtype, seed=5)
    wd = w.to("ocl")
    with torch_ocl.strict():
        yd = fn(xd)
        (yd * wd).sum().backward()
    yc = fn(xc)
    (yc * w).sum().backward()
    tol = FLOAT_TOL[dtype]
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), **tol)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **tol)


@pytest.mark.parametrize("name", ["mish", "softplus", "elu", "logsigmoid", "hardswish", "logit"])
def test_gradcheck_float64(name):
    fn = GRAD_ACTIVATIONS[name]
    x = (make((7,), torch.float64, -3, 3) + 0.013).to("ocl").requires_grad_()
    with torch_ocl.strict(False):  # gradcheck's own bookkeeping uses reductions (max)
        assert torch.autograd.gradcheck(fn, (x,), eps=1e-6, atol=1e-5)


def test_binary_gradients():
    a = make((4, 5), torch.float32, 0.5, 3)
    b = make((5,), torch.float32, 0.5, 3, seed=1)
    fns = [torch.hypot, torch.logaddexp, lambda x, y: torch.lerp(x, y, 0.3),
           lambda x, y: torch.addcmul(x, x, y, value=0.5), lambda x, y: torch.addcdiv(x, x, y),
           torch.xlogy, torch.fmax, lambda x, y: torch.clamp(x, min=y)]
    for i, fn in enumerate(fns):
        ad, bd = a.to("ocl").requires_grad_(), b.to("ocl").requires_grad_()
        ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
        # The last three backwards use masked_fill (not a pointwise op of this file).
        with torch_ocl.strict(i < 5):
            fn(ad, bd).sum().backward()
        fn(ac, bc).sum().backward()
        torch.testing.assert_close(ad.grad.cpu(), ac.grad, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(bd.grad.cpu(), bc.grad, rtol=1e-5, atol=1e-5)


def test_float_exp_special_values_and_accuracy():
    # float exp runs the prelude's vectorisable polynomial: CPU's special values, and within
    # 1 ulp of the double-precision result over the whole finite range and the under/overflow edges.
    v = torch.tensor([float("-inf"), float("inf"), float("nan"), -1e30, -104.0, -103.9, -87.5, 0.0,
                      -0.0, 1e-30, 88.72, 88.73, 89.0, 1e30])
    torch.testing.assert_close(torch.exp(v.to("ocl")).cpu(), torch.exp(v), rtol=1.3e-7, atol=0,
                               equal_nan=True)
    x = torch.linspace(-110, 90, 400_003)  # not a multiple of the work-group size
    with torch_ocl.strict():
        got = torch.exp(x.to("ocl")).cpu()
        half = torch.exp(x.to(torch.float16).to("ocl")).cpu()
    ref = torch.exp(x.double()).float()
    ulps = (got.view(torch.int32).long() - ref.view(torch.int32).long()).abs()
    assert ulps.max().item() <= 1
    torch.testing.assert_close(half, torch.exp(x.to(torch.float16)))


def _ulps(got, ref):
    """Distance in float32 units in the last place (signed magnitudes, so -0 and 0 are 0 apart)."""
    g, r = got.view(torch.int32).long(), ref.view(torch.int32).long()
    g = torch.where(g < 0, -(g & 0x7FFFFFFF), g)
    r = torch.where(r < 0, -(r & 0x7FFFFFFF), r)
    return (g - r).abs()


# Over the whole interesting range, with tiny magnitudes; 600_005 elements is not a multiple of the
# work-group size, so both launches of a pointwise kernel run (full groups, then the checked tail).
_WIDE = torch.cat([torch.linspace(-12, 12, 400_003), torch.logspace(-40, 1.2, 100_001),
                   -torch.logspace(-40, 1.2, 100_001)])
_SPECIAL = torch.tensor([float("-inf"), float("inf"), float("nan"), -0.0, 0.0, 1e-45, -1e-45,
                         1e-38, -1e-38, 1e-20, -1e-20, 0.2999, 0.3, -0.3, 0.9277, 0.92774, -0.92774,
                         3.9, -3.9, 8.0, -8.0, 9.5, -9.5, 20.0, -20.0, 100.0, -100.0, 1e30, -1e30,
                         3e38, -3e38])


# Where the result is exact (infinities, NaN, signed zeros, the smallest denormal, saturation).
_EXACT = _SPECIAL.isinf() | _SPECIAL.isnan() | (_SPECIAL.abs() < 1e-40) | (_SPECIAL.abs() >= 100)


def _same_special(got, expected, max_ulps=0):
    """CPU's NaNs, signs and exact values at _EXACT; within max_ulps of CPU elsewhere."""
    both_nan = got.isnan() & expected.isnan()
    ok = (got.signbit() == expected.signbit()) & (_ulps(got, expected) <= max_ulps)
    ok |= both_nan
    ok &= ~_EXACT | both_nan | (got == expected)
    assert ok.all(), (_SPECIAL[~ok], got[~ok], expected[~ok])


@pytest.mark.parametrize("name,max_ulps", [("erf", 1), ("tanh", 2), ("sigmoid", 2)])
def test_float_erf_tanh_sigmoid_special_values_and_accuracy(name, max_ulps):
    # The prelude's vectorisable float erf/tanh/sigmoid: CPU's special values (signed zeros,
    # infinities, NaN, saturation) and a bound in ulps against the double-precision result.
    fn = getattr(torch, name)
    with torch_ocl.strict():
        _same_special(fn(_SPECIAL.to("ocl")).cpu(), fn(_SPECIAL), max_ulps)
        got = fn(_WIDE.to("ocl")).cpu()
        # a strided view and sizes on either side of the work-group size: other kernel layouts and
        # the single checked launch of small tensors
        strided = fn(_WIDE.to("ocl")[::3]).cpu()
        small = [fn(_WIDE[:k].to("ocl")).cpu() for k in (1, 255, 256, 257, 4097)]
    ref = fn(_WIDE.double()).float()
    assert _ulps(got, ref).max().item() <= max_ulps
    assert _ulps(fn(_WIDE), ref).max().item() <= max_ulps  # CPU's own float kernel does as well
    torch.testing.assert_close(strided, got[::3], rtol=0, atol=0)
    for s in small:
        torch.testing.assert_close(s, got[: s.numel()], rtol=0, atol=0)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_special_values_and_accuracy(approximate):
    import torch.nn.functional as F

    def fn(v):
        return F.gelu(v, approximate=approximate)

    # +inf and 3e38 aside: CPU's float gelu (oneDNN) gives nan at +inf and overflows 3e38 to inf,
    # where the formula gives +inf and 3e38, as our kernel and CPU's double kernel do.
    onednn = _SPECIAL.isposinf() | (_SPECIAL == 3e38)
    with torch_ocl.strict():
        special = fn(_SPECIAL.to("ocl")).cpu()
        got = fn(_WIDE.to("ocl")).cpu()
        half = fn(_WIDE[:5003].to(torch.float16).to("ocl")).cpu()
    expected = torch.where(onednn, fn(_SPECIAL.double()).float(), fn(_SPECIAL))
    _same_special(special, expected, max_ulps=1 << 20)  # exact at _EXACT; the rest just below
    ref = fn(_WIDE.double())
    # 0.5 x (1 + erf(x / sqrt 2)) cancels for x << 0 (on CPU as here): 4 ulps of the result plus
    # c * 2^-24 |x|, the error of erf or tanh near 1 times |x|. tanh: c = 1 (measured 0.74; CPU's
    # float kernel 0.5). Exact gelu: c = 4; its own rational erf (ocl_gelu in prelude.cl), 2x
    # faster than through ocl_erf, measured 2.6 here and 3.4 over all floats in [-20, 20] (through
    # ocl_erf: 0.44); CPU's float kernel 5.1 here, 6.2 over all floats.
    err = (got.double() - ref).abs()
    c = 4.0 if approximate == "none" else 1.0
    tol = 2.0**-22 * ref.abs() + c * 2.0**-24 * _WIDE.double().abs() + 2.0**-149
    assert (err <= tol).all(), _WIDE[err > tol][:5]
    torch.testing.assert_close(got, fn(_WIDE), rtol=1e-5, atol=2e-6)  # CPU: see above
    torch.testing.assert_close(half, fn(_WIDE[:5003].to(torch.float16)), rtol=1e-3, atol=1e-3)


def test_gelu_layouts_dtypes_and_sign():
    # ocl_gelu (prelude.cl) in each kernel form against CPU: the vector kernel (dense float32 and
    # float16) at sizes around the vector and work-group boundaries and zero, the scalar kernels
    # (strided and transposed views, bfloat16) bit for bit against the vector one where the dtype
    # is the same, float64 through the builtin erf. And the sign near the clamp (|x| = 4 sqrt 2),
    # where the rounded erf fell below -1 before its max: gelu(x) came out positive for x < 0.
    import torch.nn.functional as F

    x = torch.cat([_WIDE, _SPECIAL])
    near = torch.cat([torch.linspace(-6.5, -2.5, 1_000_003), -torch.linspace(-6.5, -2.5, 1_000_003)])
    with torch_ocl.strict():
        xo = x.to("ocl")
        dense = F.gelu(xo).cpu()
        sizes = {n: F.gelu(xo[:n]).cpu() for n in (0, 1, 15, 16, 17, 1023, 1024, 1025, 70001)}
        strided = F.gelu(xo[1::3]).cpu()
        transposed = F.gelu(xo[:600_000].view(600, 1000).t()).cpu()
        half = F.gelu(_WIDE[:70001].half().to("ocl")).cpu()
        bf16 = F.gelu(_WIDE[:70001].bfloat16().to("ocl")).cpu()
        double = F.gelu(x.double().to("ocl")).cpu()
        got_near = F.gelu(near.to("ocl")).cpu()
    for n, got in sizes.items():
        torch.testing.assert_close(got, dense[:n], rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(strided, dense[1::3], rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(transposed, dense[:600_000].view(600, 1000).t(), rtol=0, atol=0)
    torch.testing.assert_close(dense[: _WIDE.numel()], F.gelu(_WIDE), rtol=1e-5, atol=2e-6)
    torch.testing.assert_close(half, F.gelu(_WIDE[:70001].half()), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(bf16, F.gelu(_WIDE[:70001].bfloat16()), rtol=8e-3, atol=8e-3)
    torch.testing.assert_close(double, F.gelu(x.double()), rtol=1e-12, atol=1e-12, equal_nan=True)
    expected = F.gelu(near)
    assert (got_near.signbit() == near.signbit()).all(), near[got_near.signbit() != near.signbit()]
    assert (got_near.signbit() == expected.signbit()).all()
    torch.testing.assert_close(got_near, expected, rtol=1e-5, atol=2e-6)


def test_silu_special_values_and_accuracy():
    import torch.nn.functional as F

    with torch_ocl.strict():
        _same_special(F.silu(_SPECIAL.to("ocl")).cpu(), F.silu(_SPECIAL), 3)
        got = F.silu(_WIDE.to("ocl")).cpu()
        x = _WIDE[::7].clone().requires_grad_()
        xo = x.detach().to("ocl").requires_grad_()
        F.silu(xo).sum().backward()
    ref = F.silu(_WIDE.double()).float()
    assert _ulps(got, ref).max().item() <= 3
    F.silu(x).sum().backward()
    torch.testing.assert_close(xo.grad.cpu(), x.grad, rtol=1e-6, atol=1e-7)
