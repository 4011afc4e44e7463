"""The matrix engine: every GEMM provider, forced in turn, against CPU PyTorch.

Each test forces one provider (torch_ocl._C._set_gemm_provider) and checks with
_C._last_gemm_provider() that it really ran, so a provider that silently hands its work to another
one fails here. Providers: host_blas (OpenBLAS through clEnqueueNativeKernel: float32/float64 on
devices with native kernels and host-unified memory), cpu_tile (our 6x64 vector kernel: float32,
float16, bfloat16), clblast (float32/float64), tiled (every dtype).
"""

from __future__ import annotations

import pytest
import torch

import torch_ocl
from torch_ocl import _C

DEV = "ocl"
DTYPES = {
    "host_blas": [torch.float32, torch.float64],
    "cpu_tile": [torch.float32, torch.float16, torch.bfloat16],
    "clblast": [torch.float32, torch.float64],
    "tiled": [torch.float32, torch.float64, torch.float16, torch.bfloat16],
}
CASES = [(p, dt) for p, dts in DTYPES.items() for dt in dts]


def _is_pocl() -> bool:
    return "Portable Computing Language" in torch.ocl.get_device_properties(0).platform_name


def _usable(provider: str, dtype: torch.dtype) -> bool:
    if dtype == torch.float64 and not torch.ocl.get_device_properties(0).fp64:
        return False
    if provider == "host_blas":
        caps = _C._gemm_device_caps(0)
        # On PoCL it must be usable: a missing OpenBLAS fails the tests below, not skips them.
        return _is_pocl() or (caps["native_kernel"] and caps["host_unified_memory"]
                              and _C._host_blas_info()["available"])
    return True


@pytest.fixture(params=CASES, ids=[f"{p}-{str(dt)[6:]}" for p, dt in CASES])
def provider(request):
    p, dt = request.param
    if not _usable(p, dt):
        pytest.skip(f"{p} does not run {dt} on this device")
    _C._set_gemm_provider(p)
    yield p, dt
    _C._set_gemm_provider("auto")


def _tol(dt):
    return {torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10),
            torch.float16: (1e-2, 1e-2), torch.bfloat16: (3e-2, 3e-2)}[dt]


def _rand(*shape, dtype, gen):
    return torch.randn(shape, generator=gen).to(dtype)


def _check(actual, expected, dt, provider):
    assert _C._last_gemm_provider() == provider, (
        f"forced {provider}, but {_C._last_gemm_provider()} ran")
    rtol, atol = _tol(dt)
    # Reference in float64 from the same (rounded) inputs; compare in float32 at the dtype's
    # tolerance scaled by the size of the result.
    scale = max(1.0, expected.abs().max().item())
    torch.testing.assert_close(actual.cpu().double(), expected.double(), rtol=rtol,
                               atol=atol * scale)


@pytest.mark.parametrize("n,k,m", [(1, 1, 1), (7, 65, 129), (129, 7, 65), (65, 129, 1),
                                   (1, 129, 7), (130, 64, 128)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_sizes_and_transposes(provider, n, k, m, ta, tb):
    p, dt = provider
    g = torch.Generator().manual_seed(n * 1000 + k * 10 + m)
    a = _rand(k, n, dtype=dt, gen=g).t() if ta else _rand(n, k, dtype=dt, gen=g)
    b = _rand(m, k, dtype=dt, gen=g).t() if tb else _rand(k, m, dtype=dt, gen=g)
    r = torch.mm(a.to(DEV), b.to(DEV))
    _check(r, a.double() @ b.double(), dt, p)


def test_addmm_alpha_beta_and_out_forms(provider):
    p, dt = provider
    g = torch.Generator().manual_seed(1)
    a, b, c = _rand(33, 70, dtype=dt, gen=g), _rand(70, 65, dtype=dt, gen=g), _rand(33, 65,
                                                                                   dtype=dt, gen=g)
    expected = 0.5 * c.double() + 1.5 * (a.double() @ b.double())
    r = torch.addmm(c.to(DEV), a.to(DEV), b.to(DEV), beta=0.5, alpha=1.5)
    _check(r, expected, dt, p)
    out = torch.empty(33, 65, dtype=dt, device=DEV)
    torch.addmm(c.to(DEV), a.to(DEV), b.to(DEV), beta=0.5, alpha=1.5, out=out)
    _check(out, expected, dt, p)
    # A bias row broadcast over the rows, as linear does.
    bias = _rand(65, dtype=dt, gen=g)
    r = torch.addmm(bias.to(DEV), a.to(DEV), b.to(DEV))
    _check(r, bias.double() + a.double() @ b.double(), dt, p)
    # In place, into a transposed (column-major) result.
    ct = _rand(65, 33, dtype=dt, gen=g)
    ct_dev = ct.to(DEV)
    ct_dev.t().addmm_(a.to(DEV), b.to(DEV), beta=2.0, alpha=-1.0)
    _check(ct_dev, (2.0 * ct.double().t() - a.double() @ b.double()).t(), dt, p)


def test_beta_zero_ignores_nan(provider):
    p, dt = provider
    g = torch.Generator().manual_seed(2)
    a, b = _rand(9, 17, dtype=dt, gen=g), _rand(17, 70, dtype=dt, gen=g)
    c = torch.full((9, 70), float("nan"), dtype=dt, device=DEV)
    r = torch.addmm(c, a.to(DEV), b.to(DEV), beta=0.0)
    _check(r, a.double() @ b.double(), dt, p)


def test_bmm_baddbmm_batched_strided_and_broadcast(provider):
    p, dt = provider
    g = torch.Generator().manual_seed(3)
    # Non-contiguous batches (every other one, sliced on the device), transposed matrices inside.
    a_full = _rand(6, 23, 13, dtype=dt, gen=g)
    a, a_dev = a_full[::2], a_full.to(DEV)[::2]
    b = _rand(3, 67, 13, dtype=dt, gen=g).transpose(1, 2)
    b_dev = b.transpose(1, 2).to(DEV).transpose(1, 2)
    assert not a_dev.is_contiguous() and not b_dev.is_contiguous()
    r = torch.bmm(a_dev, b_dev)
    _check(r, a.double() @ b.double(), dt, p)
    # A broadcast (stride-0) batch operand.
    w = _rand(13, 65, dtype=dt, gen=g)
    r = torch.bmm(a_dev, w.to(DEV).expand(3, 13, 65))
    _check(r, a.double() @ w.double(), dt, p)
    c = _rand(3, 23, 67, dtype=dt, gen=g)
    r = torch.baddbmm(c.to(DEV), a_dev, b_dev, beta=-0.5, alpha=2.0)
    _check(r, -0.5 * c.double() + 2.0 * (a.double() @ b.double()), dt, p)
    out = torch.empty(3, 23, 67, dtype=dt, device=DEV)
    torch.bmm(a_dev, b_dev, out=out)
    _check(out, a.double() @ b.double(), dt, p)
    # Into a non-contiguous result (batch-last layout).
    out_t = torch.empty(23, 67, 3, dtype=dt, device=DEV).permute(2, 0, 1)
    torch.bmm(a_dev, b_dev, out=out_t)
    _check(out_t, a.double() @ b.double(), dt, p)


def test_non_contiguous_views(provider):
    p, dt = provider
    g = torch.Generator().manual_seed(4)
    big_a = _rand(40, 90, dtype=dt, gen=g)
    big_b = _rand(90, 150, dtype=dt, gen=g)
    a = big_a[3:36:2, 5:70:3]  # neither stride is 1: copied for BLAS providers
    b = big_b[5:70:3, 7:140]   # row stride 150, a column slice
    r = torch.mm(big_a.to(DEV)[3:36:2, 5:70:3], big_b.to(DEV)[5:70:3, 7:140])
    _check(r, a.double() @ b.double(), dt, p)
    # Output into a strided slice of a bigger tensor.
    host = torch.zeros(40, 300, dtype=dt)
    dev = host.to(DEV)
    torch.mm(big_a.to(DEV)[3:36:2, 5:70:3], big_b.to(DEV)[5:70:3, 7:140], out=dev[:17, 1:267:2])
    _check(dev[:17, 1:267:2], a.double() @ b.double(), dt, p)


def test_addmv_addbmm_matmul_linear(provider):
    p, dt = provider
    g = torch.Generator().manual_seed(5)
    mat, vec, y = _rand(65, 129, dtype=dt, gen=g), _rand(129, dtype=dt, gen=g), _rand(65,
                                                                                   dtype=dt, gen=g)
    r = torch.addmv(y.to(DEV), mat.to(DEV), vec.to(DEV), beta=0.25, alpha=3.0)
    _check(r, 0.25 * y.double() + 3.0 * (mat.double() @ vec.double()), dt, p)
    b1, b2, c = _rand(4, 7, 9, dtype=dt, gen=g), _rand(4, 9, 65, dtype=dt, gen=g), _rand(
        7, 65, dtype=dt, gen=g)
    r = torch.addbmm(c.to(DEV), b1.to(DEV), b2.to(DEV), beta=0.5, alpha=0.75)
    _check(r, 0.5 * c.double() + 0.75 * (b1.double() @ b2.double()).sum(0), dt, p)
    x, w, bias = _rand(2, 5, 129, dtype=dt, gen=g), _rand(65, 129, dtype=dt, gen=g), _rand(
        65, dtype=dt, gen=g)
    r = torch.nn.functional.linear(x.to(DEV), w.to(DEV), bias.to(DEV))
    _check(r, x.double() @ w.double().t() + bias.double(), dt, p)


def test_zero_sizes(provider):
    p, dt = provider
    c = torch.randn(5, 6).to(dt)
    # k == 0: the product is empty, so addmm gives beta * C exactly.
    r = torch.addmm(c.to(DEV), torch.empty(5, 0, dtype=dt, device=DEV),
                    torch.empty(0, 6, dtype=dt, device=DEV), beta=0.5)
    torch.testing.assert_close(r.cpu(), (0.5 * c.double()).to(dt))
    r = torch.mm(torch.empty(5, 0, dtype=dt, device=DEV), torch.empty(0, 6, dtype=dt, device=DEV))
    assert r.shape == (5, 6) and (r.cpu() == 0).all()
    assert torch.mm(torch.empty(0, 3, dtype=dt, device=DEV),
                    torch.empty(3, 4, dtype=dt, device=DEV)).shape == (0, 4)
    assert torch.bmm(torch.empty(0, 3, 2, dtype=dt, device=DEV),
                     torch.empty(0, 2, 4, dtype=dt, device=DEV)).shape == (0, 3, 4)


def test_conv_backward_through_engine(provider):
    p, dt = provider
    if dt not in (torch.float32, torch.float64):
        pytest.skip("conv is checked in float32/float64 here (test_conv covers the dtypes)")
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 4, 9, 9, generator=g).to(dt)
    w = torch.randn(6, 4, 3, 3, generator=g).to(dt)
    bias = torch.randn(6, generator=g).to(dt)
    xd, wd = x.to(DEV).requires_grad_(True), w.to(DEV).requires_grad_(True)
    xc, wc = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    # With a bias: the forward GEMM adds it in its epilogue.
    yd = torch.nn.functional.conv2d(xd, wd, bias.to(DEV), padding=1, stride=2)
    yc = torch.nn.functional.conv2d(xc, wc, bias, padding=1, stride=2)
    assert _C._last_gemm_provider() == p
    go = torch.randn(yc.shape, generator=g).to(dt)
    gd = torch.autograd.grad(yd, (xd, wd), go.to(DEV))
    gc = torch.autograd.grad(yc, (xc, wc), go)
    rtol, atol = _tol(dt)
    torch.testing.assert_close(yd.detach().cpu(), yc.detach(), rtol=rtol, atol=atol * 10)
    for a, e in zip(gd, gc):
        torch.testing.assert_close(a.cpu(), e, rtol=rtol, atol=atol * 10)


@pytest.fixture
def untuned():
    """The built-in shape rule, whatever tuning table this machine has on disk."""
    was = _C._gemm_tuning_enabled()
    _C._set_gemm_tuning_enabled(False)
    yield
    _C._set_gemm_tuning_enabled(was)


@pytest.fixture
def narrow_blas():
    """A setter for the narrow-BLAS rule (-1: measured, 0 / 1: as if wide / narrower), reset
    to the measured one afterwards."""
    yield _C._set_host_blas_narrow_override
    _C._set_host_blas_narrow_override(-1)


def _shape_rule_products():
    """The products the shape rule sorts, each with the provider that ran it."""
    _C._set_gemm_provider("auto")
    shapes = [((512, 512), (512, 512), False), ((200, 300), (200, 300), True),
              ((64, 4096), (4096, 100), False), ((64, 784), (512, 784), True)]
    ran = []
    for sa, sb, tb in shapes:
        b = torch.randn(*sb, device=DEV)
        torch.mm(torch.randn(*sa, device=DEV), b.t() if tb else b)
        ran.append(_C._last_gemm_provider())
    return ran


def test_narrow_host_blas_gives_float32_to_cpu_tile(untuned, narrow_blas):
    """A host BLAS whose kernels are narrower than the device's vectors (OpenBLAS's AVX2 cores
    where PoCL compiles for AVX-512) loses to cpu_tile on every shape measured: float32 products
    from 128^3 multiply-adds up (or whose B cpu_tile reads in place) then run cpu_tile; float64
    stays on the BLAS."""
    info = _C._host_blas_info()
    if not (_is_pocl() and info["available"]):
        pytest.skip("the narrow-BLAS rule is about host_blas on CPU drivers")
    # The width of the BLAS's kernels from its core name (AVX-512 cores: SkylakeX and later).
    if info["corename"]:
        wide = info["corename"] in ("SkylakeX", "Cooperlake", "SapphireRapids")
        assert info["vector_bits"] == (512 if wide else 256), info
    narrow_blas(1)
    assert _C._host_blas_narrower_than_device(0)
    assert _shape_rule_products() == ["cpu_tile"] * 4
    assert "narrower" in _C._gemm_shape_rule(0)
    # Below 128^3 multiply-adds a B that cpu_tile would pack stays on the BLAS (a launch fewer);
    # one cpu_tile reads in place goes to cpu_tile.
    torch.mm(torch.randn(64, 96, device=DEV), torch.randn(100, 96, device=DEV).t())
    assert _C._last_gemm_provider() == "host_blas"
    torch.mm(torch.randn(64, 96, device=DEV), torch.randn(96, 128, device=DEV))
    assert _C._last_gemm_provider() == "cpu_tile"
    torch.mm(torch.randn(64, 784, device=DEV, dtype=torch.float64),
             torch.randn(784, 512, device=DEV, dtype=torch.float64))
    assert _C._last_gemm_provider() == "host_blas"
    narrow_blas(0)
    assert not _C._host_blas_narrower_than_device(0)
    assert _shape_rule_products() == ["cpu_tile", "host_blas", "host_blas", "host_blas"]


def test_auto_choice_and_doctor_names_provider(untuned, narrow_blas):
    narrow_blas(0)  # the rule of a host BLAS as wide as the device (the other: the test above)
    provs = _C._gemm_providers(0)
    assert set(provs) >= {"Float", "Half", "BFloat16", "Int"}
    if _is_pocl():
        # PoCL runs native kernels on host memory: the host BLAS is its own GEMM there.
        assert _C._host_blas_info()["available"], _C._host_blas_info()["error"]
        assert provs["Float"] == "host_blas"
        assert provs["Half"] == "cpu_tile"
        # The measured shape rule (for a BLAS as wide as the device): large products and in-place
        # B go to cpu_tile, the MLP's packed shapes, mid-sized ones and long K stay on the BLAS.
        _C._set_gemm_provider("auto")
        torch.mm(torch.randn(512, 512, device=DEV), torch.randn(512, 512, device=DEV))
        assert _C._last_gemm_provider() == "cpu_tile"
        torch.mm(torch.randn(200, 300, device=DEV), torch.randn(200, 300, device=DEV).t())
        assert _C._last_gemm_provider() == "host_blas"
        torch.mm(torch.randn(64, 4096, device=DEV), torch.randn(4096, 100, device=DEV))
        assert _C._last_gemm_provider() == "host_blas"  # a long K: the BLAS blocks it
        torch.mm(torch.randn(64, 784, device=DEV), torch.randn(512, 784, device=DEV).t())
        assert _C._last_gemm_provider() == "host_blas"  # the MLP's packed shapes
        # A batch of small products (a grouped convolution's per-sample GEMMs) takes cpu_tile.
        torch.bmm(torch.randn(8, 16, 144, device=DEV), torch.randn(8, 144, 784, device=DEV))
        assert _C._last_gemm_provider() == "cpu_tile"
        assert _C._gemm_shape_rule(0)
    from torch_ocl.cli import doctor
    report = doctor.doctor(run_self_test=False)
    dev0 = [d for d in report["devices"] if d["ocl_index"] == 0][0]
    assert dev0["gemm"]["providers"] == provs
    assert "GEMM" in doctor.format_text(report)


def test_host_blas_is_not_a_fallback():
    if not _is_pocl():
        pytest.skip("host_blas runs on PoCL-like devices")
    torch_ocl.reset_fallback_report()
    _C._set_gemm_provider("host_blas")
    try:
        a = torch.randn(64, 64, device=DEV)
        (a @ a).sum().item()
        assert _C._last_gemm_provider() == "host_blas"
    finally:
        _C._set_gemm_provider("auto")
    assert not any("mm" in str(op) for op in torch_ocl.fallback_report())


def test_host_blas_uses_openblas_not_torch_symbols():
    info = _C._host_blas_info()
    if not info["available"]:
        pytest.skip(info["error"])
    # Resolved inside the library we opened (RTLD_DEEPBIND), not libtorch_cpu's sgemm_.
    assert "torch" not in info["library"], info
    assert info["threads"] >= 1


def test_forcing_unknown_provider_is_an_error():
    with pytest.raises(ValueError, match="unknown GEMM provider"):
        _C._set_gemm_provider("cuBLAS")
    assert _C._forced_gemm_provider() == "auto"


# ---- the epilogue: bias and activation in the GEMM's own launch ---------------------------------

def _cpu_ref(dt, fn, s, a, b, beta, alpha, use_gelu):
    """CPU PyTorch's own result on the same (rounded) inputs."""
    return fn(s, a, b, beta=beta, alpha=alpha, use_gelu=use_gelu)


@pytest.mark.parametrize("use_gelu", [False, True], ids=["relu", "gelu"])
@pytest.mark.parametrize("n,k,m,ta,tb", [(33, 70, 65, False, False), (7, 129, 130, True, False),
                                         (64, 13, 1, False, True), (1, 5, 129, True, True),
                                         (130, 64, 128, False, False)])
def test_addmm_activation_matches_cpu(provider, use_gelu, n, k, m, ta, tb):
    p, dt = provider
    g = torch.Generator().manual_seed(n * 7 + k * 3 + m)
    a = _rand(k, n, dtype=dt, gen=g).t() if ta else _rand(n, k, dtype=dt, gen=g)
    b = _rand(m, k, dtype=dt, gen=g).t() if tb else _rand(k, m, dtype=dt, gen=g)
    ad = a.t().contiguous().to(DEV).t() if ta else a.to(DEV)
    bd = b.t().contiguous().to(DEV).t() if tb else b.to(DEV)
    # A bias row (linear's), a column, a full matrix and a 0-d scalar, with beta and alpha.
    for self_shape in [(m,), (n, 1), (n, m), ()]:
        s = _rand(*self_shape, dtype=dt, gen=g)
        with torch_ocl.strict():
            r = torch._addmm_activation(s.to(DEV), ad, bd, beta=0.5, alpha=1.5, use_gelu=use_gelu)
        e = _cpu_ref(dt, torch._addmm_activation, s, a, b, 0.5, 1.5, use_gelu)
        _check(r, e, dt, p)
    # Defaults (beta = alpha = 1) into an out= tensor.
    s = _rand(m, dtype=dt, gen=g)
    out = torch.empty(n, m, dtype=dt, device=DEV)
    with torch_ocl.strict():
        torch._addmm_activation(s.to(DEV), ad, bd, use_gelu=use_gelu, out=out)
    _check(out, _cpu_ref(dt, torch._addmm_activation, s, a, b, 1, 1, use_gelu), dt, p)


@pytest.mark.parametrize("use_gelu", [False, True], ids=["relu", "gelu"])
def test_addmm_activation_special_values_and_layouts(provider, use_gelu):
    p, dt = provider
    g = torch.Generator().manual_seed(11)
    a, b = _rand(9, 17, dtype=dt, gen=g), _rand(17, 70, dtype=dt, gen=g)
    # beta == 0 ignores self (NaN included); a NaN in the product stays NaN through relu and gelu.
    s = torch.full((9, 70), float("nan"), dtype=dt)
    with torch_ocl.strict():
        r = torch._addmm_activation(s.to(DEV), a.to(DEV), b.to(DEV), beta=0.0, use_gelu=use_gelu)
    _check(r, _cpu_ref(dt, torch._addmm_activation, s, a, b, 0.0, 1, use_gelu), dt, p)
    a_nan = a.clone()
    a_nan[3, 5] = float("nan")
    with torch_ocl.strict():
        r = torch._addmm_activation(s[0].zero_().to(DEV), a_nan.to(DEV), b.to(DEV),
                                    use_gelu=use_gelu).cpu()
    assert r[3].isnan().all() and not r[:3].isnan().any()
    # Into a transposed (column-major) out= tensor.
    bias = _rand(70, dtype=dt, gen=g)
    out = torch.empty(70, 9, dtype=dt, device=DEV).t()
    with torch_ocl.strict():
        torch._addmm_activation(bias.to(DEV), a.to(DEV), b.to(DEV), alpha=-1.0, use_gelu=use_gelu,
                                out=out)
    _check(out, _cpu_ref(dt, torch._addmm_activation, bias, a, b, 1, -1.0, use_gelu), dt, p)


def test_addmm_activation_zero_sizes_and_errors(provider):
    p, dt = provider
    s = torch.randn(5, 6).to(dt) - 0.5
    with torch_ocl.strict():
        # k == 0: relu(beta * self) exactly.
        r = torch._addmm_activation(s.to(DEV), torch.empty(5, 0, dtype=dt, device=DEV),
                                    torch.empty(0, 6, dtype=dt, device=DEV), beta=2.0)
        torch.testing.assert_close(r.cpu(), torch.relu(s * 2.0))
        r = torch._addmm_activation(s.to(DEV), torch.empty(5, 0, dtype=dt, device=DEV),
                                    torch.empty(0, 6, dtype=dt, device=DEV), use_gelu=True)
        e = torch._addmm_activation(s, torch.empty(5, 0, dtype=dt), torch.empty(0, 6, dtype=dt),
                                    use_gelu=True)
        torch.testing.assert_close(r.cpu(), e)
        assert torch._addmm_activation(torch.empty(0, 4, dtype=dt, device=DEV),
                                       torch.empty(0, 3, dtype=dt, device=DEV),
                                       torch.empty(3, 4, dtype=dt, device=DEV)).shape == (0, 4)
    with pytest.raises(RuntimeError, match="same dtype"):
        other = torch.float64 if dt != torch.float64 else torch.float32
        torch._addmm_activation(s.to(DEV), torch.ones(5, 2, dtype=other, device=DEV),
                                torch.ones(2, 6, dtype=other, device=DEV))


@pytest.mark.parametrize("use_gelu", [False, True], ids=["relu", "gelu"])
@pytest.mark.parametrize("n,k,m,ta,tb,bias_shape", [
    (33, 70, 65, False, False, (65,)), (7, 129, 128, True, False, (7, 1)),
    (64, 13, 130, False, True, (64, 130)), (130, 300, 64, False, True, (64,)),
    (64, 300, 130, False, True, (130,)), (64, 300, 128, True, False, (64, 1)),
    (5, 0, 9, False, False, (9,))])
def test_addmm_with_activation_second_output(provider, use_gelu, n, k, m, ta, tb, bias_shape):
    """torch_ocl::addmm_with_activation: the product with its bias (the pre-activation a
    training step keeps) and its activation, both against CPU; no launch beyond the product's own
    where host_blas or cpu_tile runs it (they store both results in the same command), also
    through cpu_tile's transposed (out^T) form."""
    import torch.nn.functional as F
    p, dt = provider
    g = torch.Generator().manual_seed(n + k * 5 + m * 11)
    a = _rand(k, n, dtype=dt, gen=g).t() if ta else _rand(n, k, dtype=dt, gen=g)
    b = _rand(m, k, dtype=dt, gen=g).t() if tb else _rand(k, m, dtype=dt, gen=g)
    bias = _rand(*bias_shape, dtype=dt, gen=g)
    ad = a.t().contiguous().to(DEV).t() if ta else a.to(DEV)
    bd = b.t().contiguous().to(DEV).t() if tb else b.to(DEV)
    before = _C._kernel_launch_count()
    pre, act = torch.ops.torch_ocl.addmm_with_activation(bias.to(DEV), ad, bd, beta=1, alpha=1,
                                                        use_gelu=use_gelu)
    launches = _C._kernel_launch_count() - before
    want = torch.addmm(bias.double(), a.double(), b.double())
    _check(pre, want, dt, p)
    # The activation of the stored pre-activation (rounded to the dtype first, as the kernel does).
    ref_act = F.gelu(pre.cpu().double()) if use_gelu else F.relu(pre.cpu().double())
    torch.testing.assert_close(act.cpu().double(), ref_act, rtol=_tol(dt)[0],
                               atol=_tol(dt)[1] * max(1.0, ref_act.abs().max().item()))
    if p in ("host_blas", "cpu_tile") and k > 0:
        # No launch beyond addmm's own (cpu_tile's includes packing B when it is not a panel).
        before = _C._kernel_launch_count()
        torch.addmm(bias.to(DEV), ad, bd)
        assert launches == _C._kernel_launch_count() - before, launches


def test_addmm_activation_integers():
    g = torch.Generator().manual_seed(12)
    a = torch.randint(-5, 5, (9, 13), generator=g, dtype=torch.int32)
    b = torch.randint(-5, 5, (13, 70), generator=g, dtype=torch.int32)
    s = torch.randint(-5, 5, (70,), generator=g, dtype=torch.int32)
    with torch_ocl.strict():
        r = torch._addmm_activation(s.to(DEV), a.to(DEV), b.to(DEV), beta=2, alpha=3)
    assert _C._last_gemm_provider() == "tiled"
    assert torch.equal(r.cpu(), torch._addmm_activation(s, a, b, beta=2, alpha=3))
    with pytest.raises(NotImplementedError, match="GeluKernelImpl"):
        torch._addmm_activation(s.to(DEV), a.to(DEV), b.to(DEV), use_gelu=True)
    c = torch.ones(2, 2, dtype=torch.complex64, device=DEV)
    with pytest.raises(NotImplementedError, match="complex"):
        torch._addmm_activation(c, c, c)


def test_addmm_bias_epilogue_forms(provider):
    # addmm's self is the epilogue's bias now (no copy into the result first): every broadcast
    # form, beta scaling, and in place.
    p, dt = provider
    g = torch.Generator().manual_seed(13)
    a, b = _rand(20, 33, dtype=dt, gen=g), _rand(33, 66, dtype=dt, gen=g)
    for shape in [(66,), (1, 66), (20, 1), (20, 66), ()]:
        s = _rand(*shape, dtype=dt, gen=g)
        with torch_ocl.strict():
            r = torch.addmm(s.to(DEV), a.to(DEV), b.to(DEV), beta=-0.75, alpha=0.5)
        _check(r, -0.75 * s.double() + 0.5 * (a.double() @ b.double()), dt, p)
    # A bias that is itself a strided view (every other element of a longer vector).
    long = _rand(132, dtype=dt, gen=g)
    with torch_ocl.strict():
        r = torch.addmm(long.to(DEV)[::2], a.to(DEV), b.to(DEV))
    _check(r, long[::2].double() + a.double() @ b.double(), dt, p)
    # baddbmm with a bias broadcast over the batch.
    a3, b3 = _rand(3, 7, 9, dtype=dt, gen=g), _rand(3, 9, 65, dtype=dt, gen=g)
    s = _rand(65, dtype=dt, gen=g)
    with torch_ocl.strict():
        r = torch.baddbmm(s.to(DEV), a3.to(DEV), b3.to(DEV), beta=2.0)
    _check(r, 2.0 * s.double() + a3.double() @ b3.double(), dt, p)


@pytest.mark.parametrize("n,k,m,row_stride", [(64, 784, 512, None), (67, 700, 256, None),
                                              (1, 513, 256, None), (131, 300, 192, 1024),
                                              (7, 129, 64, 2048), (9, 2100, 64, None)])
@pytest.mark.parametrize("epi", ["none", "bias_beta", "relu", "gelu"])
def test_cpu_tile_k_blocks(n, k, m, row_stride, epi):
    # cpu_tile's k-blocked kernel (gemm_6x64_kblocks): float32 B read in place with a row stride
    # that is a multiple of 1 KB and K beyond 512, of 4 KB and K beyond 128, or K beyond 2048;
    # several row chunks (131 > 66 rows), a partial last block of K, one row, every epilogue.
    g = torch.Generator().manual_seed(n + k + m)
    a = torch.randn(n, k, generator=g)
    if row_stride:
        big = torch.randn(k, row_stride, generator=g)
        b, bd = big[:, :m], big.to(DEV)[:, :m]
    else:
        b = torch.randn(k, m, generator=g)
        bd = b.to(DEV)
    s = torch.randn(m, generator=g)
    c = torch.randn(n, m, generator=g)
    _C._set_gemm_provider("cpu_tile")
    try:
        with torch_ocl.strict():
            if epi == "none":
                r, e = torch.mm(a.to(DEV), bd), a @ b
            elif epi == "bias_beta":
                cd = c.to(DEV)
                cd.addmm_(a.to(DEV), bd, beta=0.5, alpha=2.0)
                r, e = cd, torch.addmm(c, a, b, beta=0.5, alpha=2.0)
                cd2 = torch.addmm(s.to(DEV), a.to(DEV), bd, beta=-1.0)
                torch.testing.assert_close(cd2.cpu(), torch.addmm(s, a, b, beta=-1.0), rtol=1e-4,
                                           atol=1e-4 * max(1.0, k ** 0.5))
            else:
                gelu = epi == "gelu"
                r = torch._addmm_activation(s.to(DEV), a.to(DEV), bd, use_gelu=gelu)
                e = torch._addmm_activation(s, a, b, use_gelu=gelu)
        assert _C._last_gemm_provider() == "cpu_tile"
    finally:
        _C._set_gemm_provider("auto")
    torch.testing.assert_close(r.cpu(), e, rtol=1e-4, atol=1e-4 * max(1.0, k ** 0.5))


# ---- the tuning table --------------------------------------------------------------------------

def test_tuning_table_measured_stored_and_followed(tmp_path, monkeypatch):
    from torch_ocl.cli import warmup
    monkeypatch.setenv("TORCH_OCL_CACHE_DIR", str(tmp_path))
    try:
        assert _C._gemm_tuning_path() == str(tmp_path / "gemm_tuning.tsv")
        assert _C._gemm_tuning_reload() == 0 and not warmup.device_is_tuned(0)
        rep = warmup.tune_matrix_engine(0, quick=True, reps=1)
        assert rep["classes"] > 0 and sum(rep["chosen"].values()) == rep["classes"]
        table = _C._gemm_tuning_table(0)
        assert len(table) == rep["classes"] and warmup.device_is_tuned(0)
        provs = set(_C._gemm_providers(0).values()) | {"cpu_tile", "clblast", "tiled",
                                                       "host_blas"}
        assert all(dt == "Float" and p in provs for dt, _, p in table)
        # gemm follows the table: each measured class runs its provider, and correctly.
        g = torch.Generator().manual_seed(20)
        a, b = torch.randn(64, 64, generator=g), torch.randn(64, 64, generator=g)
        cls = _C._gemm_shape_class_of(a.to(DEV), b.to(DEV))
        want = {c: p for _, c, p in table}[cls]
        r = torch.mm(a.to(DEV), b.to(DEV))
        assert _C._last_gemm_provider() == want
        torch.testing.assert_close(r.cpu(), a @ b, rtol=1e-4, atol=1e-4)
        # A table saying clblast for that class is obeyed (lines of other devices are kept
        # and ignored); a forced provider still wins over the table.
        path = _C._gemm_tuning_path()
        lines = open(path).read().splitlines()
        key = _C._gemm_device_key(0)
        with open(path, "w") as f:
            f.write("other device | 1 | x\tFloat\t%d\ttiled\n" % cls)
            for line in lines:
                cells = line.split("\t")
                if len(cells) > 2 and cells[0] == key and cells[2] == str(cls):
                    cells[3] = "clblast"
                f.write("\t".join(cells) + "\n")
            f.write("a broken line\n")
        assert _C._gemm_tuning_reload() == len(lines)  # minus the comment, plus the other device
        torch.mm(a.to(DEV), b.to(DEV))
        assert _C._last_gemm_provider() == "clblast"
        _C._set_gemm_provider("tiled")
        torch.mm(a.to(DEV), b.to(DEV))
        assert _C._last_gemm_provider() == "tiled"
        _C._set_gemm_provider("auto")
        _C._set_gemm_tuning_enabled(False)
        torch.mm(a.to(DEV), b.to(DEV))
        assert _C._last_gemm_provider() != "clblast" or not _is_pocl()
        _C._set_gemm_tuning_enabled(True)
        from torch_ocl.cli import doctor
        gm = doctor.gemm_info(0)
        assert gm["tuning"]["classes"] == len(_C._gemm_tuning_table(0))
        assert "tuned by shape class" in doctor.format_text(doctor.doctor(run_self_test=False))
    finally:
        _C._set_gemm_provider("auto")
        _C._set_gemm_tuning_enabled(True)
        monkeypatch.undo()
        _C._gemm_tuning_reload()


@pytest.mark.parametrize("k", [1, 64, 255, 256, 300, 400])
@pytest.mark.parametrize("rows,cols", [(8, 256), (70, 200), (70, 256), (127, 200), (128, 200),
                                       (190, 256)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_cpu_tile_packed_b_short_and_long_k(k, rows, cols, dtype):
    # cpu_tile with a packed B and fewer rows than columns: it packs B and stores C in place, or
    # from K = 256 computes C^T (packing A^T) and stores transposed where K >= 48 rows (8 rows, K
    # 400) or, below 128 rows, B's columns end in a partial panel (200); both against CPU, with
    # an epilogue bias, strict mode.
    g = torch.Generator().manual_seed(k + rows + cols)
    a = torch.randn(k, rows, generator=g).to(dtype).t()  # (rows x k), transposed
    b = torch.randn(k, cols, generator=g).to(dtype)
    bias = torch.randn(cols, generator=g).to(dtype)
    ref = torch.addmm(bias.float(), a.float(), b.float())
    _C._set_gemm_provider("cpu_tile")
    try:
        with torch_ocl.strict():
            out = torch.addmm(bias.to(DEV), a.t().contiguous().to(DEV).t(), b.to(DEV))
        assert _C._last_gemm_provider() == "cpu_tile"
    finally:
        _C._set_gemm_provider("auto")
    rtol, atol = _tol(dtype)
    torch.testing.assert_close(out.cpu().float(), ref, rtol=rtol, atol=atol * max(1, k ** 0.5))


@pytest.mark.parametrize("k,n,kstep", [(16, 64, 1), (48, 130, 1), (37, 65, 1), (576, 64, 1),
                                        (33, 70, 2), (1, 5, 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_cpu_tile_packs_transposed_b(k, n, kstep, dtype):
    """cpu_tile packs a B read transposed (rows along K: x @ W^T, a weight gradient's dy^T)
    with pack_b_t: whole and partial blocks of 16 rows of K, partial panels (zero-padded past N),
    a K stride of 2, a batch of B and a B shared by the batch (stride 0); against CPU."""
    g = torch.Generator().manual_seed(k * 31 + n * 7 + kstep)
    _C._set_gemm_provider("cpu_tile")
    try:
        a = _rand(3, 13, k, dtype=dtype, gen=g)
        w = _rand(3, n, k * kstep, dtype=dtype, gen=g)
        b = w[..., ::kstep].transpose(-1, -2)  # 3 x k x n, unit stride along K when kstep is 1
        bd = w.to(DEV)[..., ::kstep].transpose(-1, -2)
        for shared in (False, True):
            bc, bo = (b[:1].expand(3, k, n), bd[:1].expand(3, k, n)) if shared else (b, bd)
            r = torch.bmm(a.to(DEV), bo)
            _check(r, a.double() @ bc.double(), dtype, "cpu_tile")
    finally:
        _C._set_gemm_provider("auto")


@pytest.mark.parametrize("cols", [1, 63, 100, 784])
def test_cpu_tile_reads_padded_rows_in_place(cols):
    # B's rows padded to whole 64-column panels inside its storage (as a convolution's columns
    # are): cpu_tile reads the partial last panel in place; the lanes past N never reach C. The
    # padding holds NaN, so a lane that leaked would show. A view whose padding would run past
    # the storage's end is packed instead; both against CPU.
    padded = (cols + 63) // 64 * 64
    g = torch.Generator().manual_seed(cols)
    store = torch.full((3, 40, padded), float("nan"))
    store[:, :, :cols] = torch.randn(3, 40, cols, generator=g)
    a = torch.randn(3, 17, 40, generator=g)
    tight = torch.randn(40, cols, generator=g)
    _C._set_gemm_provider("cpu_tile")
    try:
        with torch_ocl.strict():
            b_dev = store.to(DEV)[:, :, :cols]
            out = torch.bmm(a.to(DEV), b_dev)
            out2 = torch.mm(a[0].to(DEV), tight.to(DEV)[:, :cols])
        assert _C._last_gemm_provider() == "cpu_tile"
    finally:
        _C._set_gemm_provider("auto")
    torch.testing.assert_close(out.cpu(), torch.bmm(a, store[:, :, :cols]), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out2.cpu(), a[0] @ tight, rtol=1e-4, atol=1e-4)


def test_host_blas_fresh_segments_unsynchronised():
    """Operands in segments no native kernel has seen yet, written by device kernels still in the
    queue: the host addresses are learned by probes queued ahead of the GEMM (no host wait), and
    every result must still be right. Each 24 MiB tensor takes a segment of its own."""
    if not _usable("host_blas", torch.float32):
        pytest.skip("no host_blas on this device")
    _C._set_gemm_provider("host_blas")
    try:
        gen = torch.Generator().manual_seed(5)
        outs, refs = [], []
        with torch_ocl.strict():
            for i in range(3):
                a_c = _rand(64, 96, dtype=torch.float32, gen=gen)
                b_c = _rand(96, 48, dtype=torch.float32, gen=gen)
                # A big tensor first, so that a, b and the result land in fresh segments, then
                # device writes into them (pending) right before the GEMM reads them.
                big = torch.empty(6 << 20, device=DEV)
                a = torch.zeros(64, 96, device=DEV).add_(a_c.to(DEV))
                b = torch.empty(96 * 48 + (6 << 20), device=DEV)[: 96 * 48].view(96, 48)
                b.copy_(b_c.to(DEV)).mul_(2.0)
                c = torch.mm(a, b)
                assert _C._last_gemm_provider() == "host_blas"
                outs.append(c)
                refs.append(torch.mm(a_c, b_c * 2.0))
                del big
        for c, r in zip(outs, refs):
            torch.testing.assert_close(c.cpu(), r, rtol=1e-4, atol=1e-4)
    finally:
        _C._set_gemm_provider("auto")


def test_tuning_classes_by_transposition(tmp_path, monkeypatch):
    """The tuning table's classes tell the operands' layouts apart (A^T: a weight gradient x^T @ dy,
    B^T: x @ W^T), and gemm follows an entry of a transposed class only for that layout."""
    monkeypatch.setenv("TORCH_OCL_CACHE_DIR", str(tmp_path))
    g = torch.Generator().manual_seed(21)
    a_c, b_c = torch.randn(40, 72, generator=g), torch.randn(72, 56, generator=g)
    a, b = a_c.to(DEV), b_c.to(DEV)
    at = a_c.t().contiguous().to(DEV).t()  # same values, read transposed
    bt = b_c.t().contiguous().to(DEV).t()
    c_nn, c_tn = _C._gemm_shape_class_of(a, b), _C._gemm_shape_class_of(at, b)
    c_nt, c_tt = _C._gemm_shape_class_of(a, bt), _C._gemm_shape_class_of(at, bt)
    assert len({c_nn, c_tn, c_nt, c_tt}) == 4 and c_nn < 72
    assert (c_tn - c_nn, c_nt % 72, c_tt // 72) == (72, c_nn % 72 - (c_nn % 2), 3)
    assert "A^T" in _C._gemm_shape_class_name(c_tn) and "B^T" in _C._gemm_shape_class_name(c_nt)
    # A row or a column vector is not "transposed".
    assert _C._gemm_shape_class_of(a[:1], b) < 72
    key = _C._gemm_device_key(0)
    try:
        with open(_C._gemm_tuning_path(), "w") as f:
            f.write(f"{key}\tFloat\t{c_tn}\ttiled\n")
        assert _C._gemm_tuning_reload() == 1
        with torch_ocl.strict():
            r_tn = torch.mm(at, b)
            assert _C._last_gemm_provider() == "tiled"
            r_nn = torch.mm(a, b)
            assert _C._last_gemm_provider() != "tiled"
        torch.testing.assert_close(r_tn.cpu(), a_c @ b_c, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(r_nn.cpu(), a_c @ b_c, rtol=1e-4, atol=1e-4)
    finally:
        monkeypatch.undo()
        _C._gemm_tuning_reload()


@pytest.mark.parametrize("narrow", [0, 1])
@pytest.mark.parametrize("n,ci,co,h,w,pad,tile", [
    (3, 5, 7, 70, 66, 1, False), (2, 3, 64, 50, 47, 0, True), (5, 16, 8, 9, 9, 1, False),
    (2, 32, 64, 26, 26, 0, True), (4, 24, 40, 70, 40, 1, True)])
def test_conv_weight_gradient_batch_sum(narrow_blas, narrow, n, ci, co, h, w, pad, tile):
    """The ungrouped convolution weight gradient, summed over the samples by gemmBatchSum: in
    cpu_tile's accumulators where float32 runs cpu_tile (narrow BLAS, a sum of 128^3
    multiply-adds or more (tile); pieces of K <= 2048 when the output has more pixels: 70 x 66,
    70 x 40), else the BLAS's in-place sum or batched products and their sum; against CPU."""
    if not (_is_pocl() and _C._host_blas_info()["available"]):
        pytest.skip("the providers of the weight-gradient sum on CPU drivers")
    narrow_blas(narrow)
    g = torch.Generator().manual_seed(n * 100 + ci * 10 + co)
    x = torch.randn(n, ci, h, w, generator=g)
    wt = torch.randn(co, ci, 3, 3, generator=g)
    gy = torch.randn(n, co, h + 2 * pad - 2, w + 2 * pad - 2, generator=g)
    args = ([1, 1], [pad, pad], [1, 1], False, [0, 0], 1, [False, True, False])
    want = torch.ops.aten.convolution_backward(gy.double(), x.double(), wt.double(), None,
                                               *args)[1]
    got = torch.ops.aten.convolution_backward(gy.to(DEV), x.to(DEV), wt.to(DEV), None, *args)[1]
    if narrow:
        assert _C._last_gemm_provider() == ("cpu_tile" if tile else "host_blas")
    torch.testing.assert_close(got.cpu().double(), want, rtol=1e-4,
                               atol=1e-4 * want.abs().max().item())
