"""Sparse COO basics on the device against CPU in strict mode: construction, .to(), to_sparse /
to_dense, coalesce (duplicates summed), indices/values, sparse @ dense, addmm, torch.sparse.mm
and its gradients, torch.sparse.sum, clone, empty and zero-nnz tensors, errors."""

import pytest
import torch

import torch_ocl


def sparse_case(shape=(6, 7), density=0.3, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    d = torch.randn(shape, generator=g).to(dtype)
    d[torch.rand(shape, generator=g) > density] = 0
    return d


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_roundtrip(dtype):
    d = sparse_case(dtype=dtype)
    with torch_ocl.strict():
        s = d.to_sparse().to("ocl")
        assert s.device.type == "ocl" and s.layout == torch.sparse_coo
        assert s._nnz() == int((d != 0).sum()) and s.sparse_dim() == 2 and s.dense_dim() == 0
        torch.testing.assert_close(s.to_dense().cpu(), d, rtol=0, atol=0)
        s2 = d.to("ocl").to_sparse()
        assert s2.is_coalesced()
        torch.testing.assert_close(s2.indices().cpu(), d.to_sparse().indices(), rtol=0, atol=0)
        torch.testing.assert_close(s2.values().cpu(), d.to_sparse().values(), rtol=0, atol=0)
        back = s2.cpu()
    assert back.layout == torch.sparse_coo
    torch.testing.assert_close(back.to_dense(), d, rtol=0, atol=0)


def test_coalesce_and_hybrid():
    i = torch.tensor([[2, 0, 2, 1, 0], [1, 3, 1, 0, 3]])
    v = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    ref = torch.sparse_coo_tensor(i, v, (3, 4)).coalesce()
    with torch_ocl.strict():
        s = torch.sparse_coo_tensor(i.to("ocl"), v.to("ocl"), (3, 4))
        assert not s.is_coalesced()
        c = s.coalesce()
        assert c.is_coalesced()
        torch.testing.assert_close(c.indices().cpu(), ref.indices(), rtol=0, atol=0)
        torch.testing.assert_close(c.values().cpu(), ref.values(), rtol=0, atol=0)
        torch.testing.assert_close(s.to_dense().cpu(), ref.to_dense(), rtol=0, atol=0)
        # a hybrid tensor: one sparse dim, values of shape (nnz, 2)
        hv = torch.arange(10.0).view(5, 2)
        h = torch.sparse_coo_tensor(i[:1].to("ocl"), hv.to("ocl"), (3, 2))
        href = torch.sparse_coo_tensor(i[:1], hv, (3, 2))
        torch.testing.assert_close(h.coalesce().values().cpu(), href.coalesce().values())
        torch.testing.assert_close(h.to_dense().cpu(), href.to_dense())
        torch.testing.assert_close(torch.sparse.sum(h).cpu(), torch.sparse.sum(href))
        # empty
        e = torch.sparse_coo_tensor(torch.empty(2, 0, dtype=torch.long, device="ocl"),
                                    torch.empty(0, device="ocl"), (3, 4))
        assert e._nnz() == 0 and e.coalesce()._nnz() == 0
        assert e.to_dense().cpu().abs().sum().item() == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_products(dtype):
    d = sparse_case(dtype=dtype)
    m = torch.randn(7, 5, dtype=dtype)
    b = torch.randn(6, 5, dtype=dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    with torch_ocl.strict():
        s = d.to_sparse().to("ocl")
        torch.testing.assert_close((s @ m.to("ocl")).cpu(), d @ m, **tol)
        torch.testing.assert_close(torch.mm(s, m.to("ocl")).cpu(), d @ m, **tol)
        torch.testing.assert_close(torch.sparse.mm(s, m.to("ocl")).cpu(), d @ m, **tol)
        got = torch.addmm(b.to("ocl"), s, m.to("ocl"), beta=0.5, alpha=-2)
        torch.testing.assert_close(got.cpu(), 0.5 * b - 2 * (d @ m), **tol)
        torch.testing.assert_close(torch.sparse.sum(s).cpu(), torch.sparse.sum(d.to_sparse()), **tol)
        torch.testing.assert_close(s.clone().to_dense().cpu(), d, rtol=0, atol=0)
        zero = torch.zeros(6, 7, dtype=dtype).to_sparse().to("ocl")
        assert (zero @ m.to("ocl")).cpu().abs().sum().item() == 0


def test_sparse_mm_backward():
    d = sparse_case()
    m = torch.randn(7, 4)
    g = torch.randn(6, 4)
    xs = d.to_sparse().requires_grad_()
    ym = m.clone().requires_grad_()
    torch.sparse.mm(xs, ym).backward(g)
    with torch_ocl.strict():
        xo = d.to_sparse().to("ocl").requires_grad_()
        yo = m.to("ocl").requires_grad_()
        torch.sparse.mm(xo, yo).backward(g.to("ocl"))
        assert xo.grad.layout == torch.sparse_coo
        got_sparse = xo.grad.to_dense().cpu()
    torch.testing.assert_close(yo.grad.cpu(), ym.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got_sparse, xs.grad.to_dense(), rtol=1e-5, atol=1e-5)


def test_errors():
    s = sparse_case().to_sparse().to("ocl")
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        s @ torch.randn(5, 2, device="ocl")
    with pytest.raises(NotImplementedError, match="aten::.*sparse COO.*not supported on ocl"):
        torch.sin(s)
    assert (s @ torch.ones(7, 1, device="ocl")).shape == (6, 1)  # still usable
