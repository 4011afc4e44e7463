"""mm, addmm, bmm (and what builds on them: matmul, linear) on ocl against CPU, strict mode.
float32 runs through CLBlast; other dtypes through the counted CPU fallback."""

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


def test_other_dtypes_fall_back_and_are_counted():
    torch_ocl.reset_fallback_report()
    a = rand(4, 3).double()
    got = torch.mm(on(a), on(a.t().contiguous())).cpu()
    torch.testing.assert_close(got, a @ a.t())
    assert any(r["op"] == "aten::mm" for r in torch_ocl.fallback_report(print_table=False))
