"""Native random samplers: normal with tensor mean/std, cauchy_, log_normal_, geometric_,
_standard_gamma, _sample_dirichlet, poisson, binomial, RReLU's noise, and the deterministic
reparameterised gradients _standard_gamma_grad / _dirichlet_grad (compared with CPU on the same
inputs).

Random values cannot be compared with CPU's, so each sampler is checked for determinism (same seed,
same numbers; two calls differ), for its distribution (with N = 200k draws and a fixed seed: mean
and variance within a few standard errors, and the Kolmogorov-Smirnov distance of the empirical CDF
to the exact CDF, computed on CPU in float64, below the 0.1 % critical value 1.95 / sqrt(N)), and
for shapes, dtypes, broadcasting, zero-size and strided outputs against CPU. Seeds are fixed, so
none of this can flake: the numbers of a seed never change (Philox counters per element)."""

import math

import pytest
import torch
import torch.nn.functional as F

import torch_ocl
from conftest import fp64_supported, native

N = 200_000
KS_LIMIT = 1.95 / math.sqrt(N)  # Kolmogorov's 0.1 % critical value
REALS = [torch.float32] + ([torch.float64] if fp64_supported() else [])
FLOATS = REALS + [torch.float16, torch.bfloat16]


pytestmark = pytest.mark.usefixtures("restore_ocl_rng")


def ks_continuous(samples, cdf, floor=None):
    """Kolmogorov-Smirnov distance of samples (CPU tensor) to the exact CDF (a float64 function).
    With floor, the samples were clamped below at floor (an atom there holding F(floor))."""
    x = samples.double().flatten().sort().values
    u = x.unique()
    f = cdf(u)
    n = x.numel()
    right = torch.searchsorted(x, u, right=True).double() / n  # F_n(u)
    left = torch.searchsorted(x, u, right=False).double() / n  # F_n(u-)
    d_left = (f - left).abs()
    if floor is not None:
        assert u[0].item() >= floor
        d_left = d_left[u > floor]
    return max((right - f).abs().max().item(), d_left.max().item() if d_left.numel() else 0.0)


def ks_discrete(samples, cdf_at, kmax):
    """max_k |F_n(k) - F(k)| over the integers 0..kmax; cdf_at(k) is the exact CDF (float64)."""
    x = samples.double().flatten()
    k = torch.arange(0, kmax + 1, dtype=torch.float64)
    emp = torch.searchsorted(x.sort().values, k, right=True).double() / x.numel()
    return (emp - cdf_at(k)).abs().max().item()


def check_moments(samples, mean, var, z=5.0):
    """Sample mean and variance within z standard errors of the exact values (4th moment from the
    sample for the variance's standard error)."""
    x = samples.double().flatten()
    n = x.numel()
    m = x.mean().item()
    assert abs(m - mean) <= z * math.sqrt(var / n), (m, mean)
    v = x.var().item()
    m4 = ((x - m) ** 4).mean().item()
    assert abs(v - var) <= z * math.sqrt(max(m4 - v * v, 1e-300) / n), (v, var)


def ndtr(x):
    return torch.special.ndtr(x)


# ---------------------------------------------------------------- normal with tensor parameters


def test_normal_tensor_mean_std_broadcast_distribution():
    torch.ocl.manual_seed(11)
    mean = torch.tensor([[-3.0], [0.5], [10.0]])
    std = torch.tensor([[0.5, 1.0, 4.0, 2.0]])
    out = native(lambda: torch.normal(mean.to("ocl"), std.to("ocl")))
    assert out.shape == torch.normal(mean, std).shape == (3, 4)
    # the distribution over many draws: each column of a (N, 3, 4) draw is normal(mean, std)
    big = native(lambda: torch.normal(mean.to("ocl").expand(N // 8, 3, 1), std.to("ocl"))).cpu()
    assert big.shape == (N // 8, 3, 4)
    for r in range(3):
        for c in range(4):
            m, s = mean[r, 0].item(), std[0, c].item()
            col = big[:, r, c]
            assert ks_continuous(col, lambda x: ndtr((x - m) / s)) < 1.95 / math.sqrt(col.numel())
            check_moments(col, m, s * s)


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_tensor_float_and_float_tensor(dtype):
    torch.ocl.manual_seed(12)
    mean = torch.full((N,), 2.0, dtype=dtype)
    a = native(lambda: torch.normal(mean.to("ocl"), 3.0)).cpu()
    assert a.dtype == dtype and a.shape == (N,)
    b = native(lambda: torch.normal(-1.0, torch.full((N,), 0.5, dtype=dtype, device="ocl"))).cpu()
    assert b.dtype == dtype
    if dtype in REALS:  # half / bfloat16 round the draws: moments only
        assert ks_continuous(a, lambda x: ndtr((x - 2.0) / 3.0)) < KS_LIMIT
        assert ks_continuous(b, lambda x: ndtr((x + 1.0) / 0.5)) < KS_LIMIT
    check_moments(a, 2.0, 9.0, z=8.0)
    check_moments(b, -1.0, 0.25, z=8.0)


def test_normal_out_forms_shapes_and_errors_like_cpu():
    mean, std = torch.rand(4, 1) + 1, torch.rand(1, 5) + 0.1
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            torch.normal(torch.zeros(3, device=dev), -torch.ones(3, device=dev))
        with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
            torch.normal(torch.zeros(3, device=dev), -1.0)
    # out= into a strided (transposed) tensor, zero-size, and the std=0 case (the mean exactly)
    o = torch.empty(5, 4, device="ocl").t()
    native(lambda: torch.normal(mean.to("ocl"), std.to("ocl"), out=o))
    assert o.shape == (4, 5) and torch.isfinite(o.cpu()).all()
    for args in ((mean, 1.0), (2.0, std)):  # CPU's shapes, quirks included ((4, 0) for the first)
        o_cpu, o_ocl = torch.empty(0), torch.empty(0, device="ocl")
        torch.normal(*args, out=o_cpu)
        native(lambda: torch.normal(*[a.to("ocl") if torch.is_tensor(a) else a for a in args], out=o_ocl))
        assert o_ocl.shape == o_cpu.shape
    z = native(lambda: torch.normal(torch.zeros(0, 3, device="ocl"), torch.ones(0, 3, device="ocl")))
    assert z.shape == (0, 3)
    exact = native(lambda: torch.normal(mean.to("ocl"), torch.zeros(4, 1, device="ocl"))).cpu()
    assert torch.equal(exact, mean)
    # torch.distributions.Normal / LogNormal sample through these ops
    d = torch.distributions.LogNormal(torch.zeros(3, device="ocl"), torch.ones(3, device="ocl"))
    s = native(lambda: d.rsample((1000,)))
    assert s.shape == (1000, 3) and s.device.type == "ocl" and (s.cpu() > 0).all()


# ---------------------------------------------------------------- cauchy_, log_normal_, geometric_


@pytest.mark.parametrize("dtype", REALS)
def test_cauchy_distribution(dtype):
    torch.ocl.manual_seed(21)
    x = native(lambda: torch.empty(N, dtype=dtype, device="ocl").cauchy_(1.5, 2.0)).cpu()
    assert torch.isfinite(x).all()
    assert ks_continuous(x, lambda v: 0.5 + torch.atan((v - 1.5) / 2.0) / math.pi) < KS_LIMIT
    # the median and quartiles are finite even though the moments are not
    q = x.double().quantile(torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    torch.testing.assert_close(q, torch.tensor([-0.5, 1.5, 3.5], dtype=torch.float64), atol=0.05, rtol=0)


@pytest.mark.parametrize("dtype", REALS)
def test_log_normal_distribution(dtype):
    torch.ocl.manual_seed(22)
    mu, sigma = 0.3, 0.6
    x = native(lambda: torch.empty(N, dtype=dtype, device="ocl").log_normal_(mu, sigma)).cpu()
    assert (x > 0).all()
    assert ks_continuous(x, lambda v: ndtr((v.log() - mu) / sigma)) < KS_LIMIT
    m = math.exp(mu + sigma**2 / 2)
    check_moments(x, m, (math.exp(sigma**2) - 1) * m * m)


@pytest.mark.parametrize("p", [0.02, 0.3, 0.9])
def test_geometric_distribution(p):
    torch.ocl.manual_seed(23)
    x = native(lambda: torch.empty(N, device="ocl").geometric_(p)).cpu()
    assert (x >= 1).all() and torch.equal(x, x.round())
    kmax = int(x.max().item())
    assert ks_discrete(x, lambda k: 1 - (1 - p) ** k, kmax) < KS_LIMIT
    check_moments(x, 1 / p, (1 - p) / p**2)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32, torch.int16, torch.uint8])
def test_transforms_dtypes_strided_and_zero_size(dtype):
    torch.ocl.manual_seed(24)
    ops = [lambda t: t.geometric_(0.25)]
    if dtype.is_floating_point:
        ops += [lambda t: t.cauchy_(), lambda t: t.log_normal_(0.0, 0.5)]
    for op in ops:
        base = torch.zeros(64, 33, dtype=dtype, device="ocl")
        view = base.t()  # strided
        native(lambda: op(view))
        ref = op(torch.zeros(64, 33, dtype=dtype).t())
        assert view.dtype == ref.dtype and view.shape == ref.shape
        v = view.cpu().double()
        assert torch.isfinite(v).all() and (v != 0).float().mean() > 0.9
        assert native(lambda: op(torch.empty(0, 3, dtype=dtype, device="ocl"))).shape == (0, 3)
    assert (native(lambda: torch.empty(1000, dtype=dtype, device="ocl").geometric_(0.5)).cpu() >= 1).all()


def test_transform_errors_like_cpu():
    for dev in ("cpu", "ocl"):
        t = torch.empty(3, device=dev)
        with pytest.raises(RuntimeError, match="cauchy_ expects sigma > 0.0"):
            t.cauchy_(0.0, 0.0)
        with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
            t.log_normal_(0.0, -1.0)
        with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\)"):
            t.geometric_(1.0)
        with pytest.raises(RuntimeError, match="Cauchy distribution is a continuous"):
            torch.empty(3, dtype=torch.int64, device=dev).cauchy_()
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            torch.empty(3, dtype=torch.bool, device=dev).geometric_(0.5)


# ---------------------------------------------------------------- determinism


def _all_samplers():
    dev = "ocl"
    return [
        lambda: torch.normal(torch.zeros(500, device=dev), torch.ones(500, device=dev)),
        lambda: torch.empty(500, device=dev).cauchy_(),
        lambda: torch.empty(500, device=dev).log_normal_(),
        lambda: torch.empty(500, device=dev).geometric_(0.3),
        lambda: torch._standard_gamma(torch.full((500,), 0.7, device=dev)),
        lambda: torch._sample_dirichlet(torch.full((100, 5), 0.7, device=dev)),
        lambda: torch.poisson(torch.full((500,), 30.0, device=dev)),
        lambda: torch.poisson(torch.full((500,), 3.0, device=dev)),
        lambda: torch.binomial(torch.full((500,), 100.0, device=dev), torch.full((500,), 0.4, device=dev)),
        lambda: torch.binomial(torch.full((500,), 10.0, device=dev), torch.full((500,), 0.4, device=dev)),
        lambda: F.rrelu(torch.randn(500, device=dev) - 2, training=True),
    ]


def test_same_seed_same_numbers_two_calls_differ_generator_independent():
    for fn in _all_samplers():
        torch.ocl.manual_seed(5)
        a = native(fn).cpu()
        b = native(fn).cpu()
        torch.ocl.manual_seed(5)
        c = native(fn).cpu()
        assert torch.equal(a, c)
        assert not torch.equal(a, b)
    # get_rng_state / set_rng_state replay them too
    for fn in _all_samplers():
        state = torch.ocl.get_rng_state()
        a = native(fn).cpu()
        torch.ocl.set_rng_state(state)
        assert torch.equal(a, native(fn).cpu())
    g = torch.Generator(device="ocl")
    g.manual_seed(3)
    x = native(lambda: torch._standard_gamma(torch.full((300,), 2.0, device="ocl"), generator=g)).cpu()
    g.manual_seed(3)
    torch.ocl.manual_seed(0)
    y = native(lambda: torch._standard_gamma(torch.full((300,), 2.0, device="ocl"), generator=g)).cpu()
    assert torch.equal(x, y)
    g.manual_seed(3)
    p = native(lambda: torch.poisson(torch.full((300,), 4.0, device="ocl"), generator=g)).cpu()
    g.manual_seed(3)
    assert torch.equal(p, native(lambda: torch.poisson(torch.full((300,), 4.0, device="ocl"), generator=g)).cpu())


def test_element_values_do_not_depend_on_the_batch():
    """Element i draws from its own stream: a prefix of a larger draw has the same numbers."""
    torch.ocl.manual_seed(6)
    a = native(lambda: torch._standard_gamma(torch.full((1000,), 0.5, device="ocl"))).cpu()
    torch.ocl.manual_seed(6)
    b = native(lambda: torch._standard_gamma(torch.full((10,), 0.5, device="ocl"))).cpu()
    assert torch.equal(a[:10], b)


def test_rng_captured_and_replayed_draws_fresh_numbers():
    """Graph replays redraw (tests/test_graph_rng.py has the rest): each replay's numbers are
    those eager code draws next from the same state."""
    if not hasattr(torch._C, "_acceleratorGraph"):
        pytest.skip("torch without torch.accelerator.Graph")
    alpha = torch.full((10,), 2.0, device="ocl")
    torch.accelerator.synchronize()
    for fn in (lambda: torch._standard_gamma(alpha), lambda: torch.empty(4, device="ocl").cauchy_()):
        state = torch.ocl.get_rng_state()
        want = [native(fn).cpu() for _ in range(3)]
        torch.ocl.set_rng_state(state)
        g = torch.accelerator.Graph()
        with g:
            out = fn()
        assert torch.equal(out.cpu(), want[0])
        for w in want[1:]:
            g.replay()
            assert torch.equal(out.cpu(), w)
        assert not torch.equal(want[1], want[2])


# ---------------------------------------------------------------- gamma and dirichlet


@pytest.mark.parametrize("dtype", REALS)
@pytest.mark.parametrize("alpha", [0.05, 0.5, 1.0, 3.7, 250.0])
def test_standard_gamma_distribution(dtype, alpha):
    torch.ocl.manual_seed(31)
    x = native(lambda: torch._standard_gamma(torch.full((N,), alpha, dtype=dtype, device="ocl"))).cpu()
    assert x.dtype == dtype and (x > 0).all()
    a = torch.tensor(alpha, dtype=torch.float64)
    # float32 draws below its smallest normal are clamped to it (as CPU's)
    tiny = torch.finfo(dtype).tiny
    assert ks_continuous(x, lambda v: torch.special.gammainc(a, v), floor=tiny) < KS_LIMIT
    check_moments(x, alpha, alpha)


def test_standard_gamma_edge_values_shapes_and_dtypes():
    # alpha 0 gives the dtype's smallest normal, as CPU
    z = native(lambda: torch._standard_gamma(torch.zeros(5, device="ocl"))).cpu()
    assert torch.equal(z, torch._standard_gamma(torch.zeros(5)))
    # per-element alphas (strided input) and zero-size
    alpha = torch.tensor([0.3, 2.0, 40.0]).repeat(20000, 1).t()  # (3, 20000), strided
    x = native(lambda: torch._standard_gamma(alpha.to("ocl"))).cpu()
    assert x.shape == torch._standard_gamma(alpha).shape
    torch.testing.assert_close(x.mean(1), torch.tensor([0.3, 2.0, 40.0]), rtol=0.03, atol=0)
    assert native(lambda: torch._standard_gamma(torch.empty(0, 2, device="ocl"))).shape == (0, 2)
    for dtype in (torch.float16, torch.bfloat16):
        h = native(lambda: torch._standard_gamma(torch.full((20000,), 4.0, dtype=dtype, device="ocl"))).cpu()
        assert h.dtype == dtype and abs(h.float().mean().item() - 4.0) < 0.1
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch._standard_gamma(torch.ones(3, dtype=torch.int64, device="ocl"))


@pytest.mark.parametrize("dtype", REALS)
def test_dirichlet_distribution(dtype):
    torch.ocl.manual_seed(32)
    # alpha = (a0, a1, a2) with a1 + a2 = 1: the first component is Beta(a0, 1), CDF x^a0
    alpha = torch.tensor([0.3, 0.4, 0.6], dtype=dtype)
    x = native(lambda: torch._sample_dirichlet(alpha.to("ocl").expand(N, 3))).cpu()
    assert x.shape == (N, 3) and x.dtype == dtype
    torch.testing.assert_close(x.double().sum(1), torch.ones(N, dtype=torch.float64), atol=1e-5, rtol=0)
    assert ks_continuous(x[:, 0], lambda v: v ** 0.3) < KS_LIMIT
    a0 = alpha.double().sum().item()
    for j in range(3):
        aj = alpha[j].item()
        check_moments(x[:, j], aj / a0, aj * (a0 - aj) / (a0 * a0 * (a0 + 1)))
    # large concentrations
    big = torch.tensor([20.0, 50.0, 130.0], dtype=dtype)
    y = native(lambda: torch._sample_dirichlet(big.to("ocl").expand(N // 4, 3))).cpu()
    b0 = 200.0
    for j in range(3):
        bj = big[j].item()
        check_moments(y[:, j], bj / b0, bj * (b0 - bj) / (b0 * b0 * (b0 + 1)))


def test_dirichlet_small_concentrations_edge_cases_and_beta():
    torch.ocl.manual_seed(33)
    # concentrations so small that float gammas underflow: still a distribution on the simplex
    alpha = torch.tensor([0.01, 0.02, 0.03])
    x = native(lambda: torch._sample_dirichlet(alpha.to("ocl").expand(N // 4, 3))).cpu()
    assert torch.isfinite(x).all() and (x > 0).all() and (x < 1).all()
    torch.testing.assert_close(x.double().sum(1), torch.ones(N // 4, dtype=torch.float64), atol=1e-5, rtol=0)
    a0 = 0.06
    for j in range(3):
        aj = alpha[j].item()
        check_moments(x[:, j], aj / a0, aj * (a0 - aj) / (a0 * a0 * (a0 + 1)))
    # all-zero rows give the uniform vector and zero entries the smallest normal, as CPU
    zero = torch.tensor([[0.0, 0.0], [0.0, 1.0]])
    torch.testing.assert_close(native(lambda: torch._sample_dirichlet(zero.to("ocl"))).cpu(),
                               torch._sample_dirichlet(zero), rtol=0, atol=0)
    assert native(lambda: torch._sample_dirichlet(torch.empty(0, 4, device="ocl"))).shape == (0, 4)
    assert native(lambda: torch._sample_dirichlet(torch.tensor(2.0, device="ocl"))).shape == ()
    # torch.distributions.Beta samples through Dirichlet: Beta(a, 1) has CDF x^a
    b = native(lambda: torch.distributions.Beta(torch.tensor(2.5, device="ocl"),
                                                torch.tensor(1.0, device="ocl")).rsample((N,))).cpu()
    assert ks_continuous(b, lambda v: v ** 2.5) < KS_LIMIT


# ---------------------------------------------------------------- poisson and binomial


@pytest.mark.parametrize("dtype", REALS)
@pytest.mark.parametrize("rate", [0.7, 6.5, 10.0, 37.0, 5000.0])
def test_poisson_distribution(dtype, rate):
    torch.ocl.manual_seed(41)
    x = native(lambda: torch.poisson(torch.full((N,), rate, dtype=dtype, device="ocl"))).cpu()
    assert x.dtype == dtype and (x >= 0).all() and torch.equal(x, x.round())
    kmax = int(x.max().item())
    lam = torch.tensor(rate, dtype=torch.float64)
    assert ks_discrete(x, lambda k: torch.special.gammaincc(k + 1, lam), kmax) < KS_LIMIT
    check_moments(x, rate, rate)


def test_poisson_zero_rate_dtypes_shapes_and_errors():
    r = torch.tensor([[0.0, 2.0, 0.0], [50.0, 0.0, 1e-3]]).t()  # strided
    x = native(lambda: torch.poisson(r.to("ocl"))).cpu()
    assert x.shape == torch.poisson(r).shape and x.dtype == torch.float32
    assert (x[r == 0] == 0).all()
    for dtype in (torch.float16, torch.bfloat16):
        h = native(lambda: torch.poisson(torch.full((20000,), 8.0, dtype=dtype, device="ocl"))).cpu()
        assert h.dtype == dtype and abs(h.float().mean().item() - 8.0) < 0.15
    assert native(lambda: torch.poisson(torch.empty(2, 0, device="ocl"))).shape == (2, 0)
    # the out= form into a strided tensor
    out = torch.empty(5, 4, device="ocl").t()
    native(lambda: torch.ops.aten.poisson.out(torch.zeros(4, 5, device="ocl"), out=out))
    assert out.stride() == (1, 4) and torch.equal(out.cpu(), torch.zeros(4, 5))
    for dev in ("cpu", "ocl"):
        for bad in (-1.0, float("nan")):
            with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
                torch.poisson(torch.tensor([1.0, bad], device=dev))
    d = torch.distributions.Poisson(torch.tensor([3.0, 30.0], device="ocl"))
    s = native(lambda: d.sample((20000,))).cpu()
    torch.testing.assert_close(s.mean(0), torch.tensor([3.0, 30.0]), rtol=0.02, atol=0)


def _binomial_cdf(n, p):
    def cdf(k):
        k = k.clamp(max=n)
        kk = torch.arange(0, n + 1, dtype=torch.float64)
        logpmf = (torch.lgamma(torch.tensor(n + 1.0, dtype=torch.float64)) - torch.lgamma(kk + 1)
                  - torch.lgamma(n - kk + 1) + kk * math.log(p) + (n - kk) * math.log1p(-p))
        c = logpmf.exp().cumsum(0)
        return c[k.long()]
    return cdf


@pytest.mark.parametrize("dtype", REALS)
@pytest.mark.parametrize("n,p", [(5, 0.3), (40, 0.1), (40, 0.85), (1000, 0.5), (20000, 0.03), (5000, 0.997)])
def test_binomial_distribution(dtype, n, p):
    torch.ocl.manual_seed(42)
    count = torch.full((N,), float(n), dtype=dtype, device="ocl")
    prob = torch.full((N,), p, dtype=dtype, device="ocl")
    x = native(lambda: torch.binomial(count, prob)).cpu()
    assert x.dtype == dtype and (x >= 0).all() and (x <= n).all() and torch.equal(x, x.round())
    assert ks_discrete(x, _binomial_cdf(n, p), n) < KS_LIMIT
    check_moments(x, n * p, n * p * (1 - p))


def test_binomial_edges_broadcast_and_errors_like_cpu():
    count = torch.tensor([0.0, 7.0, 7.0, 0.0, 12.0])
    prob = torch.tensor([0.5, 0.0, 1.0, 1.0, 0.5])
    x = native(lambda: torch.binomial(count.to("ocl"), prob.to("ocl"))).cpu()
    assert x[:4].tolist() == [0.0, 0.0, 7.0, 0.0] and 0 <= x[4] <= 12
    # CPU broadcasts prob against count (resizing the output, with a warning)
    c2, p2 = torch.full((3, 1), 10.0), torch.tensor([[0.0, 1.0]])
    with pytest.warns(UserWarning):
        ref = torch.binomial(c2, p2)
    with pytest.warns(UserWarning):
        got = native(lambda: torch.binomial(c2.to("ocl"), p2.to("ocl"))).cpu()
    assert torch.equal(got, ref)
    strided = native(lambda: torch.binomial(torch.full((4, 6), 5.0, device="ocl").t(),
                                            torch.full((6, 4), 0.5, device="ocl"))).cpu()
    assert strided.shape == (6, 4)
    assert native(lambda: torch.binomial(torch.empty(0, device="ocl"), torch.empty(0, device="ocl"))).shape == (0,)
    for dev in ("cpu", "ocl"):
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            torch.binomial(torch.ones(3, device=dev), torch.ones(3, dtype=torch.float64, device=dev))
    d = torch.distributions.Binomial(torch.tensor([10.0, 300.0], device="ocl"), torch.tensor([0.2, 0.7], device="ocl"))
    s = native(lambda: d.sample((20000,))).cpu()
    torch.testing.assert_close(s.mean(0), torch.tensor([2.0, 210.0]), rtol=0.02, atol=0)


# ---------------------------------------------------------------- deterministic gradients vs CPU


def _gamma_grad_grid(dtype):
    alpha = torch.tensor([0.01, 0.3, 0.9, 1.0, 2.5, 7.9, 8.5, 20.0, 150.0, 3000.0], dtype=dtype)
    x = torch.tensor([1e-4, 0.05, 0.5, 0.79, 0.81, 1.5, 7.0, 9.0, 19.0, 21.0, 140.0, 160.0, 3100.0], dtype=dtype)
    return alpha[:, None].expand(10, 13), x[None, :].expand(10, 13)


@pytest.mark.parametrize("dtype", REALS)
def test_standard_gamma_grad_matches_cpu(dtype):
    alpha, x = _gamma_grad_grid(dtype)
    ref = torch._standard_gamma_grad(alpha.contiguous(), x.contiguous())
    got = native(lambda: torch._standard_gamma_grad(alpha.to("ocl"), x.to("ocl"))).cpu()
    tol = dict(rtol=2e-5, atol=1e-30) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-300)
    if not fp64_supported():  # CPU accumulates in double; without fp64 the device uses float
        tol = dict(rtol=1e-3, atol=1e-30)
    torch.testing.assert_close(got, ref, **tol)
    # broadcast (as CPU), zero-size
    got_b = native(lambda: torch._standard_gamma_grad(alpha.to("ocl").contiguous(), x[0].to("ocl"))).cpu()
    torch.testing.assert_close(got_b, torch._standard_gamma_grad(alpha.contiguous(), x[0]), **tol)
    assert native(lambda: torch._standard_gamma_grad(torch.empty(0, device="ocl", dtype=dtype),
                                                     torch.empty(0, device="ocl", dtype=dtype))).shape == (0,)


@pytest.mark.parametrize("dtype", REALS)
def test_dirichlet_grad_matches_cpu(dtype):
    xs = torch.tensor([1e-3, 0.02, 0.2, 0.45, 0.5, 0.55, 0.8, 0.97, 0.999], dtype=dtype)
    alphas = torch.tensor([0.05, 0.7, 2.0, 7.0, 30.0], dtype=dtype)
    betas = torch.tensor([0.05, 0.7, 2.0, 7.0, 30.0], dtype=dtype)
    x = xs[:, None, None].expand(9, 5, 5).contiguous()
    alpha = alphas[None, :, None].expand(9, 5, 5).contiguous()
    total = (alphas[None, :, None] + betas[None, None, :]).expand(9, 5, 5).contiguous()
    ref = torch._dirichlet_grad(x, alpha, total)
    got = native(lambda: torch._dirichlet_grad(x.to("ocl"), alpha.to("ocl"), total.to("ocl"))).cpu()
    tol = dict(rtol=1e-4, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-12)
    if not fp64_supported():
        # CPU accumulates in double; in float (as CUDA for float) the rational and saddle-point
        # branches lose up to ~10 % where digamma(total) - digamma(alpha) cancels.
        tol = dict(rtol=0.15, atol=1e-4)
    torch.testing.assert_close(got, ref, **tol)
    # non-contiguous inputs
    got_t = native(lambda: torch._dirichlet_grad(x.to("ocl").transpose(0, 2), alpha.to("ocl").transpose(0, 2),
                                                 total.to("ocl").transpose(0, 2))).cpu()
    torch.testing.assert_close(got_t, ref.transpose(0, 2), **tol)


def test_reparameterized_gradients_through_gamma_and_dirichlet():
    torch.ocl.manual_seed(51)
    conc = torch.tensor([0.4, 1.7, 9.0], device="ocl", requires_grad=True)
    rate = torch.tensor([2.0, 0.5, 1.0], device="ocl", requires_grad=True)
    with torch_ocl.strict():
        z = torch.distributions.Gamma(conc, rate).rsample((4000,))
        z.sum().backward()
    assert z.shape == (4000, 3) and (z.detach().cpu() > 0).all()
    # d z / d conc = _standard_gamma_grad(conc, z * rate) / rate, summed over the samples (CPU, float64)
    std = (z.detach().cpu() * rate.detach().cpu()).double()
    c = conc.detach().cpu().double().expand(4000, 3)
    want = (torch._standard_gamma_grad(c.contiguous(), std) / rate.detach().cpu().double()).sum(0)
    torch.testing.assert_close(conc.grad.cpu().double(), want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rate.grad.cpu().double(), (-std / rate.detach().cpu().double() ** 2).sum(0),
                               rtol=1e-4, atol=1e-4)

    alpha = torch.tensor([0.5, 2.0, 4.0], device="ocl", requires_grad=True)
    w = torch.tensor([1.0, -2.0, 0.5])
    with torch_ocl.strict():
        x = torch.distributions.Dirichlet(alpha).rsample((3000,))
        (x * w.to("ocl")).sum().backward()
    xc = x.detach().cpu().double()
    a = alpha.detach().cpu().double().expand(3000, 3).contiguous()
    total = a.sum(-1, True).expand_as(a).contiguous()
    g = w.double().expand(3000, 3)
    want = (torch._dirichlet_grad(xc, a, total) * (g - (xc * g).sum(-1, True))).sum(0)
    torch.testing.assert_close(alpha.grad.cpu().double(), want, rtol=1e-4, atol=1e-3)


def test_distributions_sample_natively():
    torch.ocl.manual_seed(52)
    dev = "ocl"
    one = torch.tensor([1.0, 2.0], device=dev)
    dists = [
        torch.distributions.Cauchy(one, one),
        torch.distributions.LogNormal(one, one),
        torch.distributions.Geometric(torch.tensor([0.2, 0.7], device=dev)),
        torch.distributions.Gamma(one, one),
        torch.distributions.Beta(one, one * 3),
        torch.distributions.Dirichlet(torch.tensor([[0.5, 1.0, 2.0]], device=dev)),
        torch.distributions.Poisson(one),
        torch.distributions.Binomial(10, torch.tensor([0.2, 0.7], device=dev)),
        torch.distributions.Chi2(one),
        torch.distributions.StudentT(one * 3),
        torch.distributions.Normal(one, one),
    ]
    for d in dists:
        s = native(lambda: d.sample((50,)))
        assert s.device.type == "ocl" and s.shape == (50,) + d.batch_shape + d.event_shape
        assert torch.isfinite(s.cpu()).all()


# ---------------------------------------------------------------- RReLU


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16] + REALS[1:])
def test_rrelu_training_noise_and_backward(dtype):
    torch.ocl.manual_seed(61)
    lower, upper = 0.1, 0.4
    x = torch.randn(N // 4, dtype=dtype)
    xo = x.to("ocl").requires_grad_()
    m = torch.nn.RReLU(lower, upper).train()
    with torch_ocl.strict():
        y = m(xo)
        y.backward(torch.ones_like(y))
    yc, g = y.detach().cpu(), xo.grad.cpu()
    pos, neg = x > 0, x <= 0
    assert torch.equal(yc[pos], x[pos]) and torch.equal(g[pos], torch.ones_like(g[pos]))
    # the slope of each negative element is its gradient: in [lower, upper], uniform
    slope = g[neg].double()
    assert (slope >= lower - 1e-3).all() and (slope <= upper + 1e-3).all()
    torch.testing.assert_close(yc[neg].double(), (x[neg].double() * slope).to(dtype).double(), rtol=1e-2, atol=1e-6)
    if dtype != torch.bfloat16:
        assert ks_continuous(slope, lambda v: ((v - lower) / (upper - lower)).clamp(0, 1)) < 1.95 / math.sqrt(slope.numel())
    check_moments(slope, (lower + upper) / 2, (upper - lower) ** 2 / 12, z=8.0)


def test_rrelu_eval_matches_cpu_and_inplace_strided_forms():
    x = torch.randn(64, 33)
    for dtype in REALS:
        xd = x.to(dtype)
        got = native(lambda: F.rrelu(xd.to("ocl"), 0.2, 0.5, training=False)).cpu()
        torch.testing.assert_close(got, F.rrelu(xd, 0.2, 0.5, training=False), rtol=0, atol=0)
    # evaluation backward (rrelu_with_noise_backward's leaky_relu branch) vs CPU
    xc = x.clone().requires_grad_()
    xo = x.to("ocl").requires_grad_()
    m = torch.nn.RReLU(0.2, 0.5).eval()
    gy = torch.randn(64, 33)
    m(xc).backward(gy)
    with torch_ocl.strict():
        m(xo).backward(gy.to("ocl"))
    torch.testing.assert_close(xo.grad.cpu(), xc.grad, rtol=0, atol=0)
    # in place on a strided view, training: positives unchanged, negatives scaled into [l, u]
    base = x.clone().to("ocl")
    view = base.t()
    native(lambda: F.rrelu_(view, 0.2, 0.5, training=True))
    v, xt = view.cpu(), x.t()
    assert torch.equal(v[xt > 0], xt[xt > 0])
    ratio = v[xt < 0] / xt[xt < 0]
    assert (ratio >= 0.2 - 1e-6).all() and (ratio <= 0.5 + 1e-6).all()
    # the aten op with an explicit (strided) noise tensor and out=
    noise = torch.empty(33, 64, device="ocl").t()
    out = torch.empty(64, 33, device="ocl")
    native(lambda: torch.ops.aten.rrelu_with_noise.out(x.to("ocl"), noise, 0.2, 0.5, True, None, out=out))
    nz, o = noise.cpu(), out.cpu()
    assert torch.equal(nz[x > 0], torch.ones_like(nz[x > 0]))
    torch.testing.assert_close(o, x * nz, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="noise tensor shape must match self tensor shape"):
        torch.ops.aten.rrelu_with_noise(x.to("ocl"), torch.empty(3, device="ocl"), 0.2, 0.5, True)
    assert native(lambda: F.rrelu(torch.empty(0, 4, device="ocl"), training=True)).shape == (0, 4)
