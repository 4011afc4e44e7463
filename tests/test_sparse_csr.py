"""Sparse CSR basics on the device against CPU in strict mode: dense/COO <-> CSR conversions,
crow_indices/col_indices/values, .to(), constructors, CSR @ dense (mm, addmm, matmul) with the
gradients of both operands and of the values, sampled_addmm, sparse_mask, the value-wise ops, zero-size and zero-nnz matrices, and the errors for everything else."""

import warnings

import pytest
import torch

import torch_ocl

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


def sparse_case(shape=(6, 7), density=0.3, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    d = torch.randn(shape, generator=g).to(dtype)
    d[torch.rand(shape, generator=g) > density] = 0
    return d


def same_csr(a, b):
    assert a.layout == b.layout == torch.sparse_csr and a.shape == b.shape
    for x, y in ((a.crow_indices(), b.crow_indices()), (a.col_indices(), b.col_indices()),
                 (a.values(), b.values())):
        assert x.dtype == y.dtype
        torch.testing.assert_close(x.cpu(), y.cpu(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("shape,density", [((6, 7), 0.3), ((1, 13), 0.5), ((9, 1), 0.5),
                                           ((4, 5), 0.0), ((0, 5), 0.3), ((5, 0), 0.3)])
def test_dense_roundtrip(dtype, shape, density):
    d = sparse_case(shape, density, dtype=dtype)
    ref = d.to_sparse_csr()
    with torch_ocl.strict():
        s = d.to("ocl").to_sparse_csr()
        assert s.device.type == "ocl" and s._nnz() == ref._nnz()
        same_csr(s, ref)
        torch.testing.assert_close(s.to_dense().cpu(), d, rtol=0, atol=0)
        moved = ref.to("ocl")  # a CPU CSR tensor moved to the device
        same_csr(moved, ref)
        torch.testing.assert_close(moved.to_dense().cpu(), d, rtol=0, atol=0)
        back = s.cpu()
        c = s.clone()
        assert s._nnz() == 0 or c.values().data_ptr() != s.values().data_ptr()
        same_csr(c, ref)
    same_csr(back, ref)


def test_non_contiguous_dense_and_constructors():
    base = sparse_case((7, 10), 0.4, seed=1)
    d = base[:, ::2]  # non-contiguous
    ref = d.to_sparse_csr()
    with torch_ocl.strict():
        s = base.to("ocl")[:, ::2].to_sparse_csr()
        same_csr(s, ref)
        crow, col = ref.crow_indices().int(), ref.col_indices().int()
        t = torch.sparse_csr_tensor(crow.to("ocl"), col.to("ocl"), ref.values().to("ocl"), d.shape)
        assert t.crow_indices().dtype == torch.int32
        torch.testing.assert_close(t.to_dense().cpu(), d, rtol=0, atol=0)
        # COO <-> CSR
        coo = d.to("ocl").to_sparse()
        same_csr(coo.to_sparse_csr(), ref)
        back = s.to_sparse()
        assert back.layout == torch.sparse_coo
        torch.testing.assert_close(back.indices().cpu(), d.to_sparse().indices(), rtol=0, atol=0)
        torch.testing.assert_close(back.values().cpu(), d.to_sparse().values(), rtol=0, atol=0)
        # csr.t() is a CSC view: to_dense still works
        torch.testing.assert_close(s.t().to_dense().cpu(), d.t(), rtol=0, atol=0)
        # batched CSR (the same nnz per matrix, as PyTorch requires)
        b = torch.stack((d, d.flip(0)))
        bs = b.to("ocl").to_sparse_csr()
        assert bs.crow_indices().shape == (2, 8)
        torch.testing.assert_close(bs.to_dense().cpu(), b, rtol=0, atol=0)


@pytest.mark.parametrize("out_int32", [False, True])
def test_index_conversions(out_int32):
    rows = torch.tensor([0, 0, 2, 2, 2, 5])
    cols = torch.tensor([1, 3, 0, 2, 4, 1])
    crow = torch._convert_indices_from_coo_to_csr(rows, 7, out_int32=out_int32)
    coo = torch._convert_indices_from_csr_to_coo(crow, cols, out_int32=out_int32)
    coo_t = torch._convert_indices_from_csr_to_coo(crow, cols, out_int32=out_int32, transpose=True)
    with torch_ocl.strict():
        crow2 = torch._convert_indices_from_coo_to_csr(rows.to("ocl"), 7, out_int32=out_int32)
        coo2 = torch._convert_indices_from_csr_to_coo(crow2, cols.to("ocl"), out_int32=out_int32)
        coo_t2 = torch._convert_indices_from_csr_to_coo(crow2, cols.to("ocl"), out_int32=out_int32,
                                                        transpose=True)
        empty = torch._convert_indices_from_coo_to_csr(torch.zeros(0, dtype=torch.long,
                                                                   device="ocl"), 3)
    for a, b in ((crow2, crow), (coo2, coo), (coo_t2, coo_t)):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a.cpu(), b, rtol=0, atol=0)
    assert empty.cpu().tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("m,k,n,density", [(6, 7, 5, 0.3), (1, 9, 1, 0.6), (5, 4, 3, 0.0),
                                           (0, 3, 2, 0.5), (4, 3, 0, 0.5)])
def test_csr_matmul(dtype, m, k, n, density):
    d = sparse_case((m, k), density, seed=m + k, dtype=dtype)
    g = torch.Generator().manual_seed(2)
    dense = torch.randn(n, k, generator=g, dtype=dtype).t()  # non-contiguous (k, n)
    bias = torch.randn(n, generator=g, dtype=dtype)  # broadcast over the rows
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else {}
    with torch_ocl.strict():
        s = d.to("ocl").to_sparse_csr()
        b = dense.to("ocl")
        torch.testing.assert_close(torch.mm(s, b).cpu(), d @ dense, **tol)
        torch.testing.assert_close((s @ b).cpu(), d @ dense, **tol)
        torch.testing.assert_close(torch.addmm(bias.to("ocl"), s, b, beta=0.5, alpha=2.0).cpu(),
                                   torch.addmm(bias, d, dense, beta=0.5, alpha=2.0), **tol)
        torch.testing.assert_close(torch.sparse.mm(s, b).cpu(), d @ dense, **tol)


def test_valuewise_ops():
    d = sparse_case((5, 8), 0.5, seed=4)
    with torch_ocl.strict():
        s = d.to("ocl").to_sparse_csr()
        for f in (torch.sin, torch.abs, torch.neg, torch.sqrt, torch.tanh, torch.isinf,
                  lambda t: t * 2.5, lambda t: t * torch.tensor(-3.0, device=t.device)):
            r = f(s)
            assert r.layout == torch.sparse_csr
            torch.testing.assert_close(r.to_dense().cpu(), f(d), equal_nan=True)
        c = s.clone()
        c.mul_(2)
        c.neg_()
        torch.testing.assert_close(c.to_dense().cpu(), -2 * d)
        torch.testing.assert_close(s.to_dense().cpu(), d)  # the clone's values are its own
        torch.testing.assert_close(s.sum().cpu(), d.sum())


def test_everything_else_raises_naming_the_op():
    s = sparse_case((4, 4), 0.5).to("ocl").to_sparse_csr()
    dense = torch.ones(4, 4, device="ocl")
    for make, name in ((lambda: s.exp(), "aten::exp"), (lambda: s + s, "aten::add"),
                       (lambda: s @ s, "mm"), (lambda: s * dense, "aten::mul"),
                       (lambda: s.sum(0), "aten::sum"), (lambda: s.pow(2), "aten::pow"),
                       (lambda: dense @ s.t(), "mm")):
        with pytest.raises(NotImplementedError, match=name) as info:
            make()
        assert "ocl" in str(info.value) and "Sparseocl" not in str(info.value)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        s @ torch.ones(3, 2, device="ocl")
    assert (dense * 2).sum().item() == 32.0  # the device is still usable


def test_dense_operand_gradient_and_csc_products():
    d = sparse_case((6, 9), 0.4, seed=8)
    g = torch.Generator().manual_seed(9)
    b = torch.randn(9, 4, generator=g)
    go = torch.randn(6, 4, generator=g)
    xb = b.clone().requires_grad_()
    (d @ xb).backward(go)
    with torch_ocl.strict():
        s = d.to("ocl").to_sparse_csr()
        for f in (torch.sparse.mm, torch.mm, torch.matmul):
            x = b.to("ocl").requires_grad_()
            y = f(s, x)
            y.backward(go.to("ocl"))  # grad x = s^T @ go, a CSC @ dense product
            torch.testing.assert_close(y.detach().cpu(), d @ b, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(x.grad.cpu(), xb.grad, rtol=1e-5, atol=1e-5)
        st = s.t()
        assert st.layout == torch.sparse_csc
        ones = torch.ones(6, 3, device="ocl")
        torch.testing.assert_close((st @ ones).cpu(), d.t() @ torch.ones(6, 3))
        torch.testing.assert_close(torch.addmm(torch.ones(9, 3, device="ocl"), st, ones).cpu(),
                                   torch.addmm(torch.ones(9, 3), d.t(), torch.ones(6, 3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("shape,k,density", [((6, 7), 5, 0.3), ((1, 13), 1, 0.5), ((9, 4), 0, 0.5),
                                             ((4, 5), 3, 0.0), ((0, 5), 3, 0.3)])
def test_sampled_addmm(dtype, shape, k, density):
    s = sparse_case(shape, density, seed=3, dtype=torch.float64).to(dtype).to_sparse_csr()
    g = torch.Generator().manual_seed(4)
    a = torch.randn(shape[0], k, generator=g, dtype=torch.float64).to(dtype)
    b = torch.randn(shape[1], k, generator=g, dtype=torch.float64).to(dtype).t()  # non-contiguous
    tol = dict(rtol=1e-5, atol=1e-5) if dtype != torch.float64 else {}
    for beta, alpha in ((1.0, 1.0), (0.5, -2.0), (0.0, 3.0)):
        ref = torch.sparse.sampled_addmm(s, a, b, beta=beta, alpha=alpha)
        with torch_ocl.strict():
            out = torch.sparse.sampled_addmm(s.to("ocl"), a.to("ocl"), b.to("ocl"), beta=beta,
                                             alpha=alpha)
            assert out.layout == torch.sparse_csr and out.device.type == "ocl"
            torch.testing.assert_close(out.to_dense().cpu(), ref.to_dense(), **tol)
            into = s.to("ocl").clone()
            torch.sparse.sampled_addmm(s.to("ocl"), a.to("ocl"), b.to("ocl"), beta=beta,
                                       alpha=alpha, out=into)
            torch.testing.assert_close(into.to_dense().cpu(), ref.to_dense(), **tol)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.sparse.sampled_addmm(s.to("ocl"), a.to("ocl"),
                                   torch.ones(k + 1, shape[1], dtype=dtype, device="ocl"))


def test_sparse_operand_and_values_gradients():
    d = sparse_case((7, 6), 0.4, seed=11, dtype=torch.float64)
    g = torch.Generator().manual_seed(12)
    b = torch.randn(6, 3, generator=g, dtype=torch.float64)
    w = torch.randn(7, 3, generator=g, dtype=torch.float64)
    s = d.to_sparse_csr()
    ref_s = s.clone().requires_grad_()
    ref_b = b.clone().requires_grad_()
    (torch.sparse.mm(ref_s, ref_b) * w).sum().backward()
    ref_v = s.values().clone().requires_grad_()
    torch.sparse.mm(torch.sparse_csr_tensor(s.crow_indices(), s.col_indices(), ref_v, s.shape),
                    b).pow(2).sum().backward()
    with torch_ocl.strict():
        so = s.to("ocl").requires_grad_()
        bo = b.to("ocl").requires_grad_()
        (torch.sparse.mm(so, bo) * w.to("ocl")).sum().backward()
        assert so.grad.layout == torch.sparse_csr
        torch.testing.assert_close(so.grad.to_dense().cpu(), ref_s.grad.to_dense())
        torch.testing.assert_close(bo.grad.cpu(), ref_b.grad)
        vo = s.values().to("ocl").requires_grad_()
        csr = torch.sparse_csr_tensor(s.crow_indices().to("ocl"), s.col_indices().to("ocl"), vo,
                                      s.shape)
        torch.sparse.mm(csr, b.to("ocl")).pow(2).sum().backward()
        torch.testing.assert_close(vo.grad.cpu(), ref_v.grad)
        dense = torch.randn(7, 6, generator=g, dtype=torch.float64)
        torch.testing.assert_close(dense.to("ocl").sparse_mask(s.to("ocl")).to_dense().cpu(),
                                   dense.sparse_mask(s).to_dense())
