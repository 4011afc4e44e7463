"""out= forms of ops whose functional form is native (upsampling, pooling, losses, im2col/col2im,
cholesky, mvlgamma, narrow_copy, batch norm): each against CPU in strict mode with an out of the
right size, a non-empty out of the wrong size (resized with CPU's warning), a non-contiguous out,
an out of another dtype (CPU's error, or CPU's cast where CPU allows it), an out on the CPU (a
PyTorch-style device error), and zero-size inputs where the op takes them."""

import warnings

import pytest
import torch
import torch_ocl

A = torch.ops.aten


def _g(seed=0):
    return torch.Generator().manual_seed(seed)


def rand(*shape, seed=0, lo=0.0, hi=1.0):
    return torch.rand(shape, generator=_g(seed)) * (hi - lo) + lo


def longs(hi, *shape, seed=1):
    return torch.randint(0, hi, shape, generator=_g(seed))


X2 = (2, 3, 6, 7)
X3 = (2, 2, 4, 5, 6)
X1 = (2, 3, 9)


def _up(name, shape, size, extra=(), bwd=True):
    """forward and backward out= cases of an upsample op."""
    fwd = getattr(A, name)
    cases = {
        f"{name}.out": (
            fwd.out,
            lambda: ([rand(*shape), size, *extra], {}),
            ["out"],
        )
    }
    if bwd:
        grad = getattr(A, name + "_backward")
        out_shape = list(shape[:2]) + list(size)
        cases[f"{name}_backward.grad_input"] = (
            grad.grad_input,
            lambda: ([rand(*out_shape, seed=2), size, list(shape), *extra], {}),
            ["grad_input"],
        )
    return cases


CASES = {}
CASES.update(_up("upsample_nearest2d", X2, [9, 5]))
CASES.update(_up("upsample_nearest3d", X3, [5, 3, 8]))
CASES.update(_up("_upsample_nearest_exact1d", X1, [13]))
CASES.update(_up("_upsample_nearest_exact2d", X2, [9, 5]))
CASES.update(_up("_upsample_nearest_exact3d", X3, [5, 3, 8]))
CASES.update(_up("upsample_linear1d", X1, [13], (False,)))
CASES.update(_up("upsample_bilinear2d", X2, [9, 5], (True,)))
CASES.update(_up("upsample_bicubic2d", X2, [9, 5], (False,)))
CASES.update(_up("upsample_trilinear3d", X3, [5, 3, 8], (False,)))
CASES.update(_up("_upsample_bilinear2d_aa", X2, [4, 3], (False,)))
CASES.update(_up("_upsample_bicubic2d_aa", X2, [4, 9], (False,)))
CASES.update(_up("_upsample_lanczos2d_aa", X2, [4, 9], (False,)))


def _pool_bwd(fwd_fn, args, n_out=1):
    """(grad_output, self, *args) for a pooling backward: grad shaped like the CPU forward."""
    res = fwd_fn(*args)
    out = res[0] if n_out > 1 else res
    return rand(*out.shape, seed=3), res


def _avg2():
    x = rand(*X2)
    go, _ = _pool_bwd(A.avg_pool2d, [x, [3, 2], [2, 1], [1, 0], True, False, None])
    return [go, x, [3, 2], [2, 1], [1, 0], True, False, None], {}


def _avg3():
    x = rand(*X3)
    go, _ = _pool_bwd(A.avg_pool3d, [x, [2, 2, 3], [1, 2, 2], [1, 0, 1], False, True, 3])
    return [go, x, [2, 2, 3], [1, 2, 2], [1, 0, 1], False, True, 3], {}


def _amax(nd):
    x = rand(*(X2 if nd == 2 else X3))
    size = [4, 3] if nd == 2 else [3, 2, 4]
    fn = A.adaptive_max_pool2d if nd == 2 else A.adaptive_max_pool3d
    go, (_, idx) = _pool_bwd(fn, [x, size], 2)
    return [go, x, idx], {}


def _maxpool(nd):
    x = rand(*(X2 if nd == 2 else X3))
    k = [3, 2] if nd == 2 else [2, 3, 2]
    s, p, d = [2] * nd, [1] * nd, [1] * nd
    fn = A.max_pool2d_with_indices if nd == 2 else A.max_pool3d_with_indices
    go, (_, idx) = _pool_bwd(fn, [x, k, s, p, d, True], 2)
    return [go, x, k, s, p, d, True, idx], {}


def _frac(nd):
    x = rand(*(X2 if nd == 2 else X3))
    k = [2] * nd
    size = [3, 4] if nd == 2 else [2, 3, 3]
    samples = rand(x.shape[0], x.shape[1], nd, seed=4)
    return x, k, size, samples


def _frac_bwd(nd):
    x, k, size, samples = _frac(nd)
    fn = A.fractional_max_pool2d if nd == 2 else A.fractional_max_pool3d
    go, (_, idx) = _pool_bwd(fn, [x, k, size, samples], 2)
    return [go, x, k, size, idx], {}


def _loss_pair(*shape):
    return rand(*shape, seed=5, lo=0.05, hi=0.95), rand(*shape, seed=6)


def _grad_scalar():
    return torch.tensor(0.7)


CASES.update(
    {
        "avg_pool2d.out": (
            A.avg_pool2d.out,
            lambda: ([rand(*X2), [3, 2], [2, 1], [1, 0], True], {}),
            ["out"],
        ),
        "avg_pool2d_backward.grad_input": (A.avg_pool2d_backward.grad_input, _avg2, ["grad_input"]),
        "avg_pool3d.out": (
            A.avg_pool3d.out,
            lambda: ([rand(*X3), [2, 2, 3], [1, 2, 2], [1, 0, 1]], {}),
            ["out"],
        ),
        "avg_pool3d_backward.grad_input": (A.avg_pool3d_backward.grad_input, _avg3, ["grad_input"]),
        "adaptive_avg_pool2d.out": (
            A.adaptive_avg_pool2d.out,
            lambda: ([rand(*X2), [4, 3]], {}),
            ["out"],
        ),
        "adaptive_avg_pool3d.out": (
            A.adaptive_avg_pool3d.out,
            lambda: ([rand(*X3), [3, 2, 4]], {}),
            ["out"],
        ),
        "adaptive_avg_pool3d_backward.grad_input": (
            A.adaptive_avg_pool3d_backward.grad_input,
            lambda: ([rand(2, 2, 3, 2, 4, seed=3), rand(*X3)], {}),
            ["grad_input"],
        ),
        "adaptive_max_pool2d.out": (
            A.adaptive_max_pool2d.out,
            lambda: ([rand(*X2), [4, 3]], {}),
            ["out", "indices"],
        ),
        "adaptive_max_pool2d_backward.grad_input": (
            A.adaptive_max_pool2d_backward.grad_input,
            lambda: _amax(2),
            ["grad_input"],
        ),
        "adaptive_max_pool3d.out": (
            A.adaptive_max_pool3d.out,
            lambda: ([rand(*X3), [3, 2, 4]], {}),
            ["out", "indices"],
        ),
        "adaptive_max_pool3d_backward.grad_input": (
            A.adaptive_max_pool3d_backward.grad_input,
            lambda: _amax(3),
            ["grad_input"],
        ),
        "max_pool2d_with_indices.out": (
            A.max_pool2d_with_indices.out,
            lambda: ([rand(*X2), [3, 2], [2, 2], [1, 1], [1, 1], True], {}),
            ["out", "indices"],
        ),
        "max_pool2d_with_indices_backward.grad_input": (
            A.max_pool2d_with_indices_backward.grad_input,
            lambda: _maxpool(2),
            ["grad_input"],
        ),
        "max_pool3d_with_indices.out": (
            A.max_pool3d_with_indices.out,
            lambda: ([rand(*X3), [2, 3, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], True], {}),
            ["out", "indices"],
        ),
        "max_pool3d_with_indices_backward.grad_input": (
            A.max_pool3d_with_indices_backward.grad_input,
            lambda: _maxpool(3),
            ["grad_input"],
        ),
        "fractional_max_pool2d.output": (
            A.fractional_max_pool2d.output,
            lambda: (list(_frac(2)), {}),
            ["output", "indices"],
        ),
        "fractional_max_pool2d_backward.grad_input": (
            A.fractional_max_pool2d_backward.grad_input,
            lambda: _frac_bwd(2),
            ["grad_input"],
        ),
        "fractional_max_pool3d.output": (
            A.fractional_max_pool3d.output,
            lambda: (list(_frac(3)), {}),
            ["output", "indices"],
        ),
        "fractional_max_pool3d_backward.grad_input": (
            A.fractional_max_pool3d_backward.grad_input,
            lambda: _frac_bwd(3),
            ["grad_input"],
        ),
        "mse_loss.out": (A.mse_loss.out, lambda: ([*_loss_pair(4, 5), 1], {}), ["out"]),
        "mse_loss.out(none)": (A.mse_loss.out, lambda: ([*_loss_pair(4, 5), 0], {}), ["out"]),
        "mse_loss_backward.grad_input": (
            A.mse_loss_backward.grad_input,
            lambda: ([_grad_scalar(), *_loss_pair(4, 5), 1], {}),
            ["grad_input"],
        ),
        "huber_loss.out": (A.huber_loss.out, lambda: ([*_loss_pair(4, 5), 2, 0.3], {}), ["out"]),
        "huber_loss_backward.out": (
            A.huber_loss_backward.out,
            lambda: ([_grad_scalar(), *_loss_pair(4, 5), 1, 0.3], {}),
            ["grad_input"],
        ),
        "smooth_l1_loss.out": (
            A.smooth_l1_loss.out,
            lambda: ([*_loss_pair(4, 5), 0, 0.2], {}),
            ["out"],
        ),
        "smooth_l1_loss_backward.grad_input": (
            A.smooth_l1_loss_backward.grad_input,
            lambda: ([rand(4, 5, seed=7), *_loss_pair(4, 5), 0, 0.2], {}),
            ["grad_input"],
        ),
        "binary_cross_entropy.out": (
            A.binary_cross_entropy.out,
            lambda: ([*_loss_pair(4, 5), rand(5, seed=8), 0], {}),
            ["out"],
        ),
        "binary_cross_entropy_backward.grad_input": (
            A.binary_cross_entropy_backward.grad_input,
            lambda: ([_grad_scalar(), *_loss_pair(4, 5), None, 2], {}),
            ["grad_input"],
        ),
        "nll_loss2d_forward.output": (
            A.nll_loss2d_forward.output,
            lambda: ([rand(2, 4, 3, 5).log(), longs(4, 2, 3, 5), rand(4, seed=9), 1, 2], {}),
            ["output", "total_weight"],
        ),
        "nll_loss2d_backward.grad_input": (
            A.nll_loss2d_backward.grad_input,
            lambda: (
                [
                    _grad_scalar(),
                    rand(2, 4, 3, 5).log(),
                    longs(4, 2, 3, 5),
                    None,
                    2,
                    -100,
                    torch.tensor(30.0),
                ],
                {},
            ),
            ["grad_input"],
        ),
        "multi_margin_loss.out": (
            A.multi_margin_loss.out,
            lambda: ([rand(5, 4), longs(4, 5), 2, 0.7, rand(4, seed=9), 1], {}),
            ["out"],
        ),
        "multi_margin_loss_backward.grad_input": (
            A.multi_margin_loss_backward.grad_input,
            lambda: ([_grad_scalar(), rand(5, 4), longs(4, 5), 1, 1.0, None, 1], {}),
            ["grad_input"],
        ),
        "multilabel_margin_loss_backward.grad_input": (
            A.multilabel_margin_loss_backward.grad_input,
            lambda: (
                lambda x, t: (
                    [_grad_scalar(), x, t, 1, A.multilabel_margin_loss_forward(x, t, 1)[1]],
                    {},
                )
            )(rand(3, 4), torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])),
            ["grad_input"],
        ),
        "im2col.out": (
            A.im2col.out,
            lambda: ([rand(2, 3, 6, 5), [2, 3], [1, 1], [1, 0], [2, 1]], {}),
            ["out"],
        ),
        "col2im.out": (
            A.col2im.out,
            lambda: ([rand(2, 12, 12), [5, 4], [2, 2], [1, 1], [0, 0], [1, 1]], {}),
            ["out"],
        ),
        "cholesky.out": (
            A.cholesky.out,
            lambda: (lambda m: ([m @ m.mT + 3 * torch.eye(4), False], {}))(rand(2, 4, 4, lo=-1)),
            ["out"],
        ),
        "mvlgamma.out": (A.mvlgamma.out, lambda: ([rand(3, 4, lo=2.0, hi=5.0), 3], {}), ["out"]),
        "narrow_copy.out": (A.narrow_copy.out, lambda: ([rand(4, 6, 3), 1, 2, 3], {}), ["out"]),
        "native_batch_norm.out": (
            A.native_batch_norm.out,
            lambda: (
                [
                    rand(4, 3, 5),
                    rand(3, seed=2),
                    rand(3, seed=3),
                    rand(3, seed=4),
                    rand(3, seed=5) + 1,
                    True,
                    0.1,
                    1e-5,
                ],
                {},
            ),
            ["out", "save_mean", "save_invstd"],
        ),
        "_native_batch_norm_legit.out": (
            A._native_batch_norm_legit.out,
            lambda: (
                [
                    rand(4, 3, 5),
                    rand(3, seed=2),
                    None,
                    rand(3, seed=4),
                    rand(3, seed=5) + 1,
                    True,
                    0.1,
                    1e-5,
                ],
                {},
            ),
            ["out", "save_mean", "save_invstd"],
        ),
        "_native_batch_norm_legit.no_stats_out": (
            A._native_batch_norm_legit.no_stats_out,
            lambda: ([rand(4, 3, 5), None, rand(3, seed=3), True, 0.1, 1e-5], {}),
            ["out", "save_mean", "save_invstd"],
        ),
        "_batch_norm_with_update.out": (
            A._batch_norm_with_update.out,
            lambda: (
                [
                    rand(4, 3, 5),
                    rand(3, seed=2),
                    rand(3, seed=3),
                    rand(3, seed=4),
                    rand(3, seed=5) + 1,
                    0.1,
                    1e-5,
                ],
                {},
            ),
            ["out", "save_mean", "save_invstd", "reserve"],
        ),
    }
)

# CPU's out= dtype rule for these ops: a dtype the result casts to (TensorIterator ops); the rest
# demand the result's dtype.
CASTS = {
    "cholesky.out",
    "huber_loss.out",
    "mse_loss.out",
    "mse_loss.out(none)",
    "mse_loss_backward.grad_input",
    "mvlgamma.out",
    "smooth_l1_loss.out",
    "smooth_l1_loss_backward.grad_input",
}


def to_ocl(v):
    if isinstance(v, torch.Tensor):
        return v.to("ocl")
    return v


def call(case, device, outs):
    fn, build, names = case
    args, kwargs = build()
    if device == "ocl":
        args = [to_ocl(a) for a in args]
    res = fn(*args, **kwargs, **dict(zip(names, outs)))
    return res if isinstance(res, tuple) else (res,)


def cpu_reference(name):
    case = CASES[name]
    fn, build, names = case
    # The dtypes CPU gives each output, from a run with empty outs of the input's dtype.
    probe = [torch.empty(PRESIZED.get(name, [(0,)] * len(names))[i]) for i in range(len(names))]
    for i, n in enumerate(names):
        if n == "indices":
            probe[i] = torch.empty(0, dtype=torch.long)
    fn_res = call(case, "cpu", probe)
    return [r.clone() for r in fn_res], [r.dtype for r in fn_res]


# CPU's binary_cross_entropy out= forms neither resize nor accept an empty out: sized outs only.
PRESIZED = {
    "binary_cross_entropy.out": [(4, 5)],
    "binary_cross_entropy_backward.grad_input": [(4, 5)],
}

# Outs CPU writes (the first n); CPU returns the others as given.
WRITTEN = {"_batch_norm_with_update.out": 3}


def check(got, want, n=None):
    for g, w in list(zip(got, want))[:n]:
        assert g.device.type == "ocl"
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g.cpu(), w, rtol=1e-4, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_variant(name, capfd):
    case = CASES[name]
    want, dtypes = cpu_reference(name)
    n = WRITTEN.get(name)
    with torch_ocl.strict():
        # An empty out of the right dtype: resized silently.
        outs = [
            torch.empty(w.shape if name in PRESIZED else 0, dtype=w.dtype, device="ocl")
            for w in want
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no resize warning for an empty out
            res = call(case, "ocl", outs)
        for r, o in zip(res, outs):
            assert r is o
        check(outs, want, n)
        # The right size already: written in place, storage kept.
        ptrs = [o.data_ptr() for o in outs]
        call(case, "ocl", outs)
        assert [o.data_ptr() for o in outs] == ptrs
        check(outs, want, n)
        # Non-contiguous outs of the right size.
        nc = [torch.empty(list(w.shape) + [2], dtype=w.dtype, device="ocl")[..., 0] for w in want]
        call(case, "ocl", nc)
        check(nc, want, n)
        # A non-empty out of the wrong size: resized, with CPU's warning.
        if name not in PRESIZED:
            wrong = [torch.empty(7, dtype=w.dtype, device="ocl") for w in want]
            capfd.readouterr()
            call(case, "ocl", wrong)
            assert "was resized" in capfd.readouterr().err  # ATen's warning (C++, on stderr here)
            check(wrong, want, n)
        # An out on the CPU: a device error, and the process stays usable.
        with pytest.raises(RuntimeError, match="[Dd]evice|device"):
            call(case, "ocl", [torch.empty(w.shape, dtype=w.dtype) for w in want])
    # Another dtype for the first output: CPU's error or CPU's cast.
    other = torch.float64 if dtypes[0] != torch.float64 else torch.float32
    bad = [
        torch.empty(w.shape if name in PRESIZED else 0, dtype=other if i == 0 else w.dtype)
        for i, w in enumerate(want)
    ]
    try:
        cpu_res = call(case, "cpu", bad)
        cpu_err = None
    except RuntimeError as e:
        cpu_err = e
    with torch_ocl.strict():
        bad_ocl = [b.to("ocl") for b in bad]
        if cpu_err is not None:
            assert name not in CASTS
            with pytest.raises(RuntimeError):
                call(case, "ocl", bad_ocl)
        else:
            assert name in CASTS
            call(case, "ocl", bad_ocl)
            check(bad_ocl, [r.clone() for r in cpu_res], n)


ZERO_SIZE = {
    "upsample_bilinear2d.out": lambda: [rand(0, 3, 4, 4), [6, 5], False],
    "upsample_nearest2d.out": lambda: [rand(0, 3, 4, 4), [6, 5]],
    "avg_pool2d.out": lambda: [rand(0, 3, 6, 6), [2, 2]],
    "adaptive_avg_pool3d.out": lambda: [rand(0, 2, 4, 4, 4), [2, 2, 2]],
    "mse_loss.out": lambda: [rand(0, 4), rand(0, 4), 0],
    "narrow_copy.out": lambda: [rand(3, 4), 1, 2, 0],
}


@pytest.mark.parametrize("name", sorted(ZERO_SIZE))
def test_out_variant_zero_size(name):
    fn = CASES[name][0]
    want = fn(*ZERO_SIZE[name](), out=torch.empty(0))
    with torch_ocl.strict():
        out = torch.empty(0, device="ocl")
        fn(*[to_ocl(a) for a in ZERO_SIZE[name]()], out=out)
    assert out.shape == want.shape and out.device.type == "ocl"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [[4, 9], [13, 3], [6, 7], [2, 20]])
@pytest.mark.parametrize("align", [False, True])
def test_lanczos_aa(dtype, size, align):
    # The functional forms behind the out= ones above (Lanczos-3, antialiased), forward and
    # backward, up- and downscaling, with a channels_last input.
    x = rand(*X2).to(dtype)
    want = A._upsample_lanczos2d_aa(x, size, align)
    go = rand(*want.shape, seed=9).to(dtype)
    want_g = A._upsample_lanczos2d_aa_backward(go, size, list(X2), align)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)
    x_cl = to_ocl(x).contiguous(memory_format=torch.channels_last)
    with torch_ocl.strict():
        got = A._upsample_lanczos2d_aa(x_cl, size, align)
        torch.testing.assert_close(got.cpu(), want, **tol)
        got_g = A._upsample_lanczos2d_aa_backward(to_ocl(go), size, list(X2), align)
        torch.testing.assert_close(got_g.cpu(), want_g, **tol)
        # A scale factor that keeps every window inside the input. With 0.7, [13, 3] maps the
        # last output rows past a 6-row input: CPU PyTorch's kernel then reads memory past its
        # input (NaN in some runs, so it was no reference); ours gives those rows 0.
        sh = size[0] / X2[2] * 1.1
        s = A._upsample_lanczos2d_aa(to_ocl(x), size, align, sh, None)
        torch.testing.assert_close(
            s.cpu(), A._upsample_lanczos2d_aa(x, size, align, sh, None), **tol
        )
        if not align and size[0] > X2[2] / 0.7:  # (align_corners ignores scale factors)
            past = A._upsample_lanczos2d_aa(to_ocl(x), size, align, 0.7, None).cpu()
            assert torch.isfinite(past).all() and (past[:, :, -1] == 0).all()
