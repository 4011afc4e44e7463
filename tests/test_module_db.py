"""Every module of PyTorch's own module test database (torch.testing._internal.common_modules,
float32, training mode) on ocl against CPU in strict mode: the same constructor arguments, weights
and inputs; forward outputs and the gradients of inputs and parameters compared. Modules whose
training-mode forward draws random numbers (dropout, RReLU, fractional pooling) run natively and
are checked for shape only, since their streams differ from CPU's."""

import copy

import pytest
import torch

import torch_ocl

try:
    from torch.testing._internal.common_modules import module_db
except Exception:  # pragma: no cover - the internal test package is missing
    module_db = []

RANDOM = ("Dropout", "AlphaDropout", "FeatureAlphaDropout", "RReLU", "FractionalMaxPool")
MODULES = [m for m in module_db if torch.float32 in m.dtypes]


def _name(m):
    v = getattr(m, "variant_name", "")
    return m.module_cls.__name__ + (f".{v}" if v else "")


def _to(x, device):
    if isinstance(x, torch.Tensor):
        return x.detach().to(device).requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, device) for k, v in x.items()}
    return x


def _tensors(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _tensors(o)]
    return []


@pytest.mark.parametrize("info", MODULES, ids=_name)
def test_module(info):
    random = info.module_cls.__name__.startswith(RANDOM)
    inputs = info.module_inputs_func(info, device="cpu", dtype=torch.float32,
                                     requires_grad=True, training=True)
    ran = 0
    for mi in inputs[:3]:
        if mi.forward_input is None:
            continue
        cargs, ckw = mi.constructor_input.args, mi.constructor_input.kwargs
        if "_random_samples" in ckw:  # module_db builds them in float64; the op needs the input's
            ckw = dict(ckw, _random_samples=ckw["_random_samples"].float())
        torch.manual_seed(0)
        try:
            ref_mod = info.module_cls(*cargs, **ckw)
        except Exception:
            continue  # a sample that CPU rejects as well
        fa, fk = mi.forward_input.args, mi.forward_input.kwargs
        if isinstance(ref_mod, torch.nn.modules.lazy.LazyModuleMixin):
            with torch.no_grad():  # materialise the parameters once, then copy them
                ref_mod(*_to(fa, "cpu"), **_to(fk, "cpu"))
        dev_mod = copy.deepcopy(ref_mod).to("ocl")
        ref_mod.train(), dev_mod.train()
        ref_args, ref_kw = _to(fa, "cpu"), _to(fk, "cpu")
        ref_out = ref_mod(*ref_args, **ref_kw)
        dev_args, dev_kw = _to(fa, "ocl"), _to(fk, "ocl")
        with torch_ocl.strict():
            dev_out = dev_mod(*dev_args, **dev_kw)
            outs = [o for o in _tensors(dev_out) if o.requires_grad and o.is_floating_point()]
            if outs:
                sum(o.sum() for o in outs).backward()
        refs = _tensors(ref_out)
        got = _tensors(dev_out)
        assert len(refs) == len(got)
        for r, g in zip(refs, got):
            assert g.device.type == "ocl" and g.shape == r.shape and g.dtype == r.dtype
            if not random:
                torch.testing.assert_close(g.detach().cpu(), r.detach(), rtol=1e-4, atol=1e-4, equal_nan=True)
        if not random and outs:
            ref_outs = [o for o in refs if o.requires_grad and o.is_floating_point()]
            sum(o.sum() for o in ref_outs).backward()
            for p, q in zip(dev_mod.parameters(), ref_mod.parameters()):
                if q.grad is not None:
                    torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-3, atol=1e-3, equal_nan=True)
            leaves = zip(_tensors([dev_args, dev_kw]), _tensors([ref_args, ref_kw]))
            for p, q in leaves:
                if q.grad is not None:
                    torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-3, atol=1e-3, equal_nan=True)
        ran += 1
    if ran == 0:
        pytest.skip("no sample that CPU accepts")
