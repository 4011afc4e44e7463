"""Native pointwise kernels (the generator behind add, mul, comparisons, unary math, relu...)
against CPU PyTorch on the same inputs, in strict mode: any CPU fallback would fail the test."""

import pytest
import torch

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


def test_complex_still_works_through_the_counted_fallback():
    torch_ocl.reset_fallback_report()
    c = torch.randn(5, dtype=torch.complex64)
    assert torch.allclose((c.to("ocl") * 2).cpu(), c * 2)
    ops = [r["op"] for r in torch_ocl.fallback_report(print_table=False)]
    assert "aten::mul.Tensor" in ops


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
