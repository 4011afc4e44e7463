"""Regression tests for the compiled OpInfo sweep's findings (issue 9).

Output strides of extern (eager) kernels must equal what PyTorch's meta functions say, since
compiled graphs assert them (assert_size_stride); batch norm's saved statistics follow PyTorch's
non-CPU convention, so eager ocl, compiled ocl and fake tensors agree; RNG-state save/restore
inside a compiled function traces; and the conformance harness keeps CPU-only index tensors on the
CPU.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch
import torch_ocl
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))


def big_strides(t):
    """The strides that matter (dims of size > 1), as assert_size_stride checks them."""
    return [s for s, n in zip(t.stride(), t.shape) if n > 1]


def fake_strides(fn, *ocl_args):
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in ocl_args]
        out = fn(*fake)
    return [big_strides(o) for o in (out if isinstance(out, (tuple, list)) else [out])]


def reflectors(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(shape, generator=g)
    tau = torch.rand(shape[:-2] + (shape[-1],), generator=g) + 0.5
    return a, tau


HH_CASES = [((5, 5), False), ((6, 5), False), ((2, 1, 5, 5), False), ((2, 1, 6, 5), False),
            ((3, 6, 4), True), ((0, 4, 3), False)]


@pytest.mark.parametrize("shape,transposed", HH_CASES)
def test_householder_product_strides_match_cpu_and_meta(shape, transposed):
    a, tau = reflectors(shape)
    if transposed:  # a non-contiguous input
        a = a.mT.contiguous().mT
    want = torch.linalg.householder_product(a, tau)
    with torch_ocl.strict():
        got = torch.linalg.householder_product(a.to("ocl"), tau.to("ocl"))
    assert got.stride() == want.stride()
    assert [big_strides(got)] == fake_strides(torch.linalg.householder_product, a.to("ocl"),
                                              tau.to("ocl"))
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)


def test_householder_product_compiles():
    a, tau = reflectors((2, 6, 5))
    fn = torch.compile(lambda a, t: torch.linalg.householder_product(a, t) * 2)
    with torch_ocl.strict():
        got = fn(a.to("ocl"), tau.to("ocl"))
    torch.testing.assert_close(got.cpu(), torch.linalg.householder_product(a, tau) * 2,
                               atol=1e-5, rtol=1e-5)


def spd(n, batch=(), seed=0):
    g = torch.Generator().manual_seed(seed)
    m = torch.randn(batch + (n, n), generator=g)
    return m @ m.mT + n * torch.eye(n)


def linalg_cases():
    L = torch.linalg.cholesky(spd(5))
    Lb = torch.linalg.cholesky(spd(3, (2,)))
    b = torch.randn(5, 3)
    a, tau = reflectors((5, 5))
    c = torch.randn(5, 2)
    return {
        "cholesky_inverse": (torch.cholesky_inverse, (L,)),
        "cholesky_inverse_batched": (torch.cholesky_inverse, (Lb,)),
        "cholesky_inverse_upper": (lambda x: torch.cholesky_inverse(x, upper=True), (L.mT,)),
        "cholesky_solve": (torch.cholesky_solve, (b, L)),
        "cholesky_solve_batched": (torch.cholesky_solve, (torch.randn(2, 3, 4), Lb)),
        "cholesky_empty_batch": (torch.cholesky, (torch.empty(0, 5, 5),)),
        "ormqr_left": (torch.ormqr, (a, tau, c)),
        "ormqr_left_transpose": (lambda x, t, o: torch.ormqr(x, t, o, True, True), (a, tau, c)),
        "ormqr_right": (lambda x, t, o: torch.ormqr(x, t, o, left=False), (a, tau, c.mT)),
        "eig": (torch.linalg.eig, (torch.randn(5, 5),)),
        "eig_batched": (torch.linalg.eig, (torch.randn(2, 4, 4),)),
    }


@pytest.mark.parametrize("name", list(linalg_cases()))
def test_linalg_output_strides_match_cpu_and_meta(name):
    fn, args = linalg_cases()[name]
    want = fn(*args)
    ocl_args = [a.to("ocl") for a in args]
    with torch_ocl.strict():
        got = fn(*ocl_args)
    want_l = want if isinstance(want, tuple) else (want,)
    got_l = got if isinstance(got, tuple) else (got,)
    assert [big_strides(g) for g in got_l] == [big_strides(w) for w in want_l]
    assert [big_strides(g) for g in got_l] == fake_strides(fn, *ocl_args)
    if not name.startswith("eig"):  # eigenvectors: compared in test_linalg_eig.py
        for g, w in zip(got_l, want_l):
            torch.testing.assert_close(g.cpu(), w, atol=1e-4, rtol=1e-4)


# ---- batch norm's saved statistics --------------------------------------------------------------

def bn_inputs(dtype=torch.float32, pdtype=None, c=4):
    pdtype = pdtype or dtype
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(3, c, 5, generator=g) * 2 + 1).to(dtype)
    w = torch.randn(c, generator=g).to(pdtype)
    b = torch.randn(c, generator=g).to(pdtype)
    rm = torch.randn(c, generator=g).to(pdtype)
    rv = (torch.rand(c, generator=g) + 0.5).to(pdtype)
    return x, w, b, rm, rv


BN_OPS = {
    "native_batch_norm": torch.ops.aten.native_batch_norm.default,
    "_native_batch_norm_legit": torch.ops.aten._native_batch_norm_legit.default,
}


@pytest.mark.parametrize("op", list(BN_OPS))
@pytest.mark.parametrize("dtype,pdtype", [(torch.float32, None), (torch.float64, None),
                                          (torch.float16, None), (torch.float16, torch.float32),
                                          (torch.bfloat16, None)])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_saved_stats_follow_device_convention(op, dtype, pdtype, training):
    fn = BN_OPS[op]
    x, w, b, rm, rv = bn_inputs(dtype, pdtype)
    eps = 1e-5
    ocl = [t.to("ocl") for t in (x, w, b, rm, rv)]
    with torch_ocl.strict():
        out, mean, invstd = fn(*ocl, training, 0.1, eps)
    ref = fn(x, w, b, rm.clone(), rv.clone(), training, 0.1, eps)
    tol = dict(atol=2e-2, rtol=2e-2) if dtype in (torch.float16, torch.bfloat16) else {}
    torch.testing.assert_close(out.cpu(), ref[0], **tol)
    acc = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    # What the meta function (fake tensors, torch.compile's tracing) says for a non-CPU device.
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake = fn(*[mode.from_tensor(t.to("ocl")) for t in (x, w, b, rm, rv)], training, 0.1,
                  eps)
    for got, meta in zip((out, mean, invstd), fake):
        assert (got.shape, got.dtype, got.stride()) == (meta.shape, meta.dtype, meta.stride())
    assert mean.shape == (4,) and mean.dtype == acc and invstd.dtype == acc
    if training:
        # CPU's values, in the parameters' dtype: ours are the float statistics unrounded.
        torch.testing.assert_close(mean.cpu().to(ref[1].dtype), ref[1], **tol)
        torch.testing.assert_close(invstd.cpu().to(ref[2].dtype), ref[2], **tol)
    else:
        # CUDA's batch_norm_cuda: running_mean (a copy) and 1 / sqrt(running_var + eps).
        torch.testing.assert_close(mean.cpu(), rm.to(acc))
        torch.testing.assert_close(invstd.cpu(), (rv.to(acc) + eps).rsqrt())
        assert mean.data_ptr() != ocl[3].data_ptr()
        assert ref[1].numel() == 0  # CPU's own convention differs (pytorch/pytorch#85960)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_saved_stats_compiled_equal_eager(training):
    x, w, b, rm, rv = bn_inputs()

    def fn(x, w, b, rm, rv):
        return torch.ops.aten.native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5)

    eager = fn(*[t.to("ocl") for t in (x, w, b, rm, rv)])
    with torch_ocl.strict():
        compiled = torch.compile(fn)(*[t.to("ocl") for t in (x, w, b, rm, rv)])
    for c, e in zip(compiled, eager):
        assert c.shape == e.shape and c.dtype == e.dtype
        torch.testing.assert_close(c.cpu(), e.cpu(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("module", ["BatchNorm1d", "BatchNorm2d"])
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("compiled", [False, True])
def test_batch_norm_module_forward_backward_equal_cpu(module, train, compiled):
    torch.manual_seed(0)
    shape = (4, 3, 6) if module == "BatchNorm1d" else (4, 3, 5, 2)
    cpu = getattr(torch.nn, module)(3)
    with torch.no_grad():
        cpu.weight.uniform_(0.5, 1.5)
        cpu.bias.uniform_(-0.5, 0.5)
        cpu.running_mean.uniform_(-1, 1)
        cpu.running_var.uniform_(0.5, 2)
    dev = getattr(torch.nn, module)(3).to("ocl")
    dev.load_state_dict(cpu.state_dict())
    cpu.train(train)
    dev.train(train)
    x = torch.randn(shape) * 2 + 0.5
    xc, xo = x.clone().requires_grad_(), x.to("ocl").requires_grad_()
    go = torch.randn(shape)
    run = torch.compile(dev) if compiled else dev
    want = cpu(xc)
    with torch_ocl.strict():
        got = run(xo)
        got.backward(go.to("ocl"))
    want.backward(go)
    torch.testing.assert_close(got.cpu(), want.detach(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(xo.grad.cpu(), xc.grad, atol=1e-5, rtol=1e-5)
    for p, q in zip(dev.parameters(), cpu.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dev.running_mean.cpu(), cpu.running_mean)
    torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var)


@pytest.mark.parametrize("fmt", [torch.channels_last, torch.channels_last_3d])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_channels_last_layout_matches_cpu_and_meta(fmt, training):
    shape = (2, 3, 4, 5) if fmt == torch.channels_last else (2, 3, 2, 4, 5)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(shape, generator=g).contiguous(memory_format=fmt)
    go = torch.randn(shape, generator=g).contiguous(memory_format=fmt)
    w, rm, rv = torch.randn(3, generator=g), torch.zeros(3), torch.ones(3)
    fwd, bwd = torch.ops.aten.native_batch_norm, torch.ops.aten.native_batch_norm_backward
    ref = fwd(x, w, w, rm.clone(), rv.clone(), training, 0.1, 1e-5)
    ref_gi = bwd(go, x, w, rm, rv, ref[1], ref[2], training, 1e-5, [True, True, True])[0]
    o = [t.to("ocl") for t in (x, w, rm, rv, go)]
    with torch_ocl.strict():
        out = fwd(o[0], o[1], o[1], o[2], o[3], training, 0.1, 1e-5)
        gi = bwd(o[4], o[0], o[1], o[2], o[3], out[1], out[2], training, 1e-5,
                 [True, True, True])[0]
    assert out[0].stride() == ref[0].stride() and gi.stride() == ref_gi.stride()
    assert [big_strides(out[0])] == fake_strides(
        lambda *t: fwd(*t, training, 0.1, 1e-5)[0], o[0], o[1], o[1], o[2], o[3])
    torch.testing.assert_close(out[0].cpu(), ref[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(gi.cpu(), ref_gi, atol=1e-5, rtol=1e-5)


# ---- RNG state inside a compiled function -------------------------------------------------------

def test_compiled_freeze_rng_state_around_factory():
    from torch.testing._utils import wrapper_set_seed

    fn = torch.compile(lambda: wrapper_set_seed(torch.empty_strided, (4, 3), (1, 4),
                                                dtype=torch.float32, device="ocl"))
    out = fn()
    assert out.device.type == "ocl" and out.shape == (4, 3) and out.stride() == (1, 4)


def test_rng_state_round_trip_under_compile():
    state = torch.ocl.get_rng_state()

    @torch.compile
    def fn(x):
        s = torch.ocl.get_rng_state()
        torch.ocl.set_rng_state(s)
        return x + 1

    torch.testing.assert_close(fn(torch.ones(3, device="ocl")).cpu(), torch.full((3,), 2.0))
    assert torch.equal(torch.ocl.get_rng_state(), state)


# ---- the conformance harness --------------------------------------------------------------------

def op_info(name, variant=""):
    from torch.testing._internal.common_methods_invocations import op_db

    return next(o for o in op_db if o.name == name and o.variant_test_name == variant)


@pytest.mark.parametrize("compiled", [False, True])
def test_harness_keeps_tensor_split_indices_on_cpu(compiled, monkeypatch):
    import conformance

    monkeypatch.setattr(conformance, "COMPILED", compiled)
    r = conformance.check(op_info("tensor_split"), "float32", budget=60,
                          max_samples=4 if compiled else None)
    assert r["status"] == "native", r
    assert r["samples"] == 4 if compiled else r["samples"] == 10


@pytest.mark.parametrize("name", ["native_batch_norm", "_native_batch_norm_legit"])
@pytest.mark.parametrize("compiled", [False, True])
def test_harness_batch_norm_cells(name, compiled, monkeypatch):
    import conformance

    monkeypatch.setattr(conformance, "COMPILED", compiled)
    r = conformance.check(op_info(name), "float32", budget=60, max_samples=3)
    assert r["status"] == "native", r


def test_harness_uninitialised_compares_strides():
    import conformance

    a = torch.empty_strided((3, 4), (1, 3), device="ocl")
    e = torch.empty_strided((3, 4), (4, 1))
    with pytest.raises(AssertionError, match="strides"):
        conformance.compare(a, e, 0, 0, values=False)
    conformance.compare(a, torch.empty_strided((3, 4), (1, 3)), 0, 0, values=False)


# ---- spectral ops: the meta functions' (_exec_fft's) output layouts ------------------------------

FFT_CASES = [
    # (op, input shape, permutation of the input, dims, extra args)
    ("c2c", (5, 6, 7), (0, 1, 2), [1, 0], (0, True)),
    ("c2c", (5, 6, 7), (2, 0, 1), [2, 1], (2, False)),
    ("c2c", (2, 3, 4, 5), (0, 1, 2, 3), [0, 2, 3], (1, True)),
    ("r2c", (5, 6, 7), (0, 1, 2), [2, 0], (0, True)),
    ("r2c", (5, 6, 7), (1, 2, 0), [0, 1], (1, False)),
    ("r2c", (2, 3, 4, 5), (0, 1, 2, 3), [3, 1, 2], (0, True)),
    ("c2r", (5, 6, 7), (1, 2, 0), [2], (0, 0)),  # fft.hfft2's last pass (dim=(0, -1))
    ("c2r", (5, 6, 7), (0, 1, 2), [1, 0, 2], (2, 1)),
    ("c2r", (2, 3, 4, 5), (3, 2, 1, 0), [1, 0], (0, 0)),
    ("c2r", (5, 6, 7), (0, 1, 2), [0, 2], (0, 0)),
    ("c2c", (0, 3, 4), (0, 1, 2), [1, 2], (0, True)),
]


@pytest.mark.parametrize("case", FFT_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_fft_output_strides_match_cpu_and_meta(case):
    kind, shape, perm, dims, extra = case
    g = torch.Generator().manual_seed(1)
    dtype = torch.float32 if kind == "r2c" else torch.complex64
    x = torch.randn(shape, dtype=dtype, generator=g).permute(perm)
    if kind == "c2r":  # (normalization, odd): an output length CPU accepts for this input
        extra = (extra[0], 2 * (x.shape[dims[-1]] - 1) + extra[1])
    fn = {"c2c": torch.ops.aten._fft_c2c, "r2c": torch.ops.aten._fft_r2c,
          "c2r": torch.ops.aten._fft_c2r}[kind]
    with torch_ocl.strict():
        got = fn(x.to("ocl"), dims, *extra)
    assert [big_strides(got)] == fake_strides(lambda t: fn(t, dims, *extra), x.to("ocl"))
    if x.numel() == 0:
        return  # CPU's MKL refuses empty transforms
    want = fn(x, dims, *extra)
    assert big_strides(got) == big_strides(want)
    torch.testing.assert_close(got.cpu(), want, atol=1e-4, rtol=1e-4)


def test_fft_irfft2_compiled_matches_cpu():
    # _fft_c2r over (0, 2): the meta function's layout is not row-major; the compiled graph
    # asserts it on our eager kernel's result.
    x = torch.randn(5, 6, 7, dtype=torch.complex64)
    fn = torch.compile(lambda t: torch.fft.irfft2(t, dim=(0, -1)) + 1)
    with torch_ocl.strict():
        got = fn(x.to("ocl"))
    want = torch.fft.irfft2(x, dim=(0, -1)) + 1
    torch.testing.assert_close(got.cpu(), want, atol=1e-4, rtol=1e-4)


def test_fft_plan_keeps_the_process_locale():
    # VkFFT's kernel generator left LC_ALL at "C": Python's open() then read ASCII, and
    # torch.compile's first Inductor import after an ocl FFT failed on a UTF-8 template.
    import locale

    saved = locale.setlocale(locale.LC_ALL)
    try:
        before = locale.setlocale(locale.LC_ALL, "C.UTF-8")
    except locale.Error:
        pytest.skip("no C.UTF-8 locale")
    try:
        torch.fft.fft(torch.randn(2, 37, dtype=torch.complex64).to("ocl"))  # new plan sizes
        torch.fft.irfft(torch.randn(3, 41, dtype=torch.complex64).to("ocl"), n=79)
        assert locale.setlocale(locale.LC_ALL) == before
    finally:
        locale.setlocale(locale.LC_ALL, saved)


# ---- conjugate and negative views under a dispatch mode -----------------------------------------

def test_math_bit_views_copied_under_a_dispatch_mode():
    """copy_/clone of a conj() or _neg_view() of an ocl tensor under a TorchDispatchMode (as
    AOTAutograd runs compiled graphs) resolve the bit, as without the mode and as on CPU."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Passthrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    xc = torch.randn(4, 3, dtype=torch.complex64)
    x = xc.to("ocl")
    with Passthrough():
        got = [x.conj().clone(), x._neg_view().clone(), x.conj()._neg_view().clone(),
               x.t().conj().contiguous()]
        dst = torch.empty(4, 3, dtype=torch.complex64, device="ocl")
        dst.copy_(x.conj())
        host = x.conj().cpu()
    want = [xc.conj(), -xc, -xc.conj(), xc.t().conj()]
    for g, w in zip(got + [dst, host], want + [xc.conj(), xc.conj()]):
        assert not g.is_conj()
        torch.testing.assert_close(g.cpu(), w.resolve_conj())


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_conj_matches_cpu(backend):
    """Compiled conj(): its values, not the unconjugated input (the graph's fallback _conj +
    clone ran under AOTAutograd's dispatch mode, where the bit was dropped), and hfft2, which
    conjugates its input."""
    torch._dynamo.reset()
    xc = torch.randn(4, 6, dtype=torch.complex64)
    fn = torch.compile(lambda t: (t.conj().clone(), t.conj() * 2, torch.fft.hfft2(t)),
                       backend=backend)
    for g, w in zip(fn(xc.to("ocl")), (xc.conj(), xc.conj() * 2, torch.fft.hfft2(xc))):
        torch.testing.assert_close(g.cpu(), w.resolve_conj(), rtol=1e-5, atol=1e-5)
