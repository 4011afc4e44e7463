"""torch.cdist and F.pdist against CPU in strict mode: p in {0, 0.5, 1, 1.5, 2, 3, inf}, the
direct and the matrix-product (p = 2, > 25 rows) paths, broadcast batches, duplicate rows (zero
distances), gradients of both inputs, float64, and CPU's errors."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_ocl

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf]


def grads_match(fn, inputs, dtype=torch.float32):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-10)
    ci = [t.to(dtype).clone().requires_grad_() for t in inputs]
    ref = fn(*ci)
    w = torch.linspace(-1, 1, ref.numel(), dtype=dtype).reshape(ref.shape)
    (ref * w).sum().backward()
    oi = [t.to(dtype).to("ocl").requires_grad_() for t in inputs]
    with torch_ocl.strict():
        out = fn(*oi)
        (out * w.to("ocl")).sum().backward()
    torch.testing.assert_close(out.detach().cpu(), ref.detach(), **tol)
    for a, b in zip(oi, ci):
        torch.testing.assert_close(a.grad.cpu(), b.grad, **tol)


def data(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("p", PS)
def test_cdist(p):
    a, b = data(2, 5, 4), data(2, 7, 4, seed=1)
    b[:, 3] = a[:, 1]  # a zero distance
    grads_match(lambda x, y: torch.cdist(x, y, p=p), [a, b])
    grads_match(lambda x, y: torch.cdist(x, y, p=p), [data(5, 3), data(3, 1, 6, 3, seed=2)])


def test_cdist_matrix_product_path_and_float64():
    a, b = data(30, 8), data(40, 8, seed=1)
    grads_match(lambda x, y: torch.cdist(x, y), [a, b])
    grads_match(lambda x, y: torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"), [a, b])
    grads_match(lambda x, y: torch.cdist(x, y, p=1.5), [a, b], torch.float64)


@pytest.mark.parametrize("p", PS)
def test_pdist(p):
    x = data(6, 4)
    x[4] = x[1]
    grads_match(lambda t: F.pdist(t, p=p), [x])


def test_edge_cases_and_errors(ocl):
    with torch_ocl.strict():
        assert F.pdist(torch.randn(1, 3, device=ocl)).shape == (0,)
        assert torch.cdist(torch.randn(0, 3, device=ocl), torch.randn(4, 3, device=ocl)).shape == (0, 4)
    with pytest.raises(RuntimeError, match="same number of columns"):
        torch.cdist(torch.randn(2, 3, device=ocl), torch.randn(2, 4, device=ocl))
    with pytest.raises(RuntimeError, match="non-negative p"):
        torch.cdist(torch.randn(2, 3, device=ocl), torch.randn(2, 3, device=ocl), p=-1)
