"""OpInfo conformance of the `ocl` device against CPU PyTorch.

For every OpInfo in PyTorch's `op_db` and every dtype of DTYPES that the op supports on the CPU, the
op's own sample inputs run on the CPU and on `ocl` (tensors rebuilt with the same strides and storage
offset, so non-contiguous and broadcast (stride 0) samples stay so) and the results are compared with
torch.testing.assert_close at the dtype's tolerance, widened by the OpInfo's own toleranceOverrides.
For differentiable ops in float32 the gradients (with a fixed, non-uniform grad_output) are compared
too. Each (op, dtype) gets one status:

    native    every sample matches and ran in strict mode (no CPU fallback at all)
    fallback  every sample matches, but only with the CPU fallback (the aten ops that fell back are
              named, from torch_ocl.fallback_report())
    wrong     some sample gives a different result than the CPU
    error     some sample raises on ocl but not on the CPU (first line of the message)
    skip      not applicable (random, uninitialised or non-strided outputs, no sample ran)

Usage (from the repository root, after `make install`):
    python tools/conformance.py [--ops REGEX] [--dtypes float32,int64] [--budget 20] [--out docs]
writes docs/compatibility.json and docs/compatibility.md. With --compiled the ocl side of every
sample runs through torch.compile (Inductor's ocl backend, dynamo reset per sample), the compiled
counterpart of this matrix: a "wrong" there is a compiled result that differs from CPU eager. Ops run in a worker subprocess; a crash or
hang costs that op only (the worker restarts after it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
import traceback

DTYPE_NAMES = [
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
    "complex64",
]
STATUSES = ["native", "fallback", "wrong", "error", "skip"]

# --compiled: the ocl call goes through torch.compile (set by the worker).
COMPILED = False

# Ops whose results depend on the random stream or are uninitialised memory: values cannot be
# compared with the CPU's (their own tests check distributions; see tests/test_rng.py).
RANDOM_OPS = re.compile(
    r"^(bernoulli|normal|multinomial|uniform|exponential|geometric|log_normal|cauchy|"
    r"svd_lowrank|pca_lowrank|"
    r"rand|randn|randint|rand_like|randn_like|randint_like|randperm|"
    r"nn\.functional\.(dropout.*|alpha_dropout|feature_alpha_dropout.*|rrelu|"
    r"fractional_max_pool.*|gumbel_softmax|multi_head_attention_forward)|"
    r"nn\.functional\.scaled_dot_product_attention)(\.|$)"
)
UNINITIALISED_OPS = re.compile(
    r"^(empty|empty_like|empty_strided|empty_permuted|new_empty|new_empty_strided)(\.|$)")


# Tensor arguments that PyTorch requires on the CPU (by position in SampleInput.args): the harness
# leaves them there instead of moving them to ocl with the rest.
CPU_TENSOR_ARGS = {"tensor_split": (0,)}  # tensor_indices_or_sections

# Batch norm's saved statistics (outputs 1 and 2). PyTorch gives every non-CPU device CUDA's
# convention (batch_norm_cuda; the decomposition that fake tensors and Inductor trace with, so
# the meta function says the same): (C,) tensors in the accumulation dtype (float for
# half/bfloat16), in evaluation mode a copy of running_mean and 1 / sqrt(running_var + eps). CPU
# returns the parameters' dtype and, in evaluation mode, empty tensors (PyTorch's own
# test_compare_cpu is an expected failure for these ops, pytorch/pytorch#85960). ocl follows the
# device convention: bn_device_convention checks it, then the rest is compared with CPU.
BN_SAVE_OPS = {"native_batch_norm", "_native_batch_norm_legit", "_batch_norm_with_update"}


def op_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


# ------------------------------------------------------------------------------------------------
# One (op, dtype) check; runs inside the worker (or in-process, from tests/test_opinfo.py).


def _torch():
    import torch

    return torch


def load_op_db():
    from torch.testing._internal.common_methods_invocations import op_db

    return op_db


def base_tolerance(dtype):
    """assert_close's defaults (float16 rtol a little wider: OpenCL computes it in float)."""
    torch = _torch()
    return {
        torch.float16: (1e-3, 1e-3),
        torch.bfloat16: (1e-2, 1.6e-2),
        torch.float32: (1e-5, 1.3e-6),
        torch.float64: (1e-7, 1e-7),
        torch.complex64: (1e-5, 1.3e-6),
        torch.complex128: (1e-7, 1e-7),
    }.get(dtype, (0.0, 0.0))


def tolerance(op, dtype):
    """(atol, rtol): assert_close's default for the dtype, widened by the OpInfo's overrides."""
    torch = _torch()
    from torch.testing._internal.common_device_type import toleranceOverride
    from torch.testing._internal.opinfo.core import DecorateInfo

    atol, rtol = base_tolerance(dtype)
    for dec in getattr(op, "decorators", ()) or ():
        decs = dec.decorators if isinstance(dec, DecorateInfo) else [dec]
        for d in decs:
            if isinstance(d, toleranceOverride) and dtype in d.d:
                atol = max(atol, d.d[dtype].atol)
                rtol = max(rtol, d.d[dtype].rtol)
    return atol, rtol


def to_device(value, device: str):
    """A copy of `value` (any pytree) with every CPU tensor moved to `device`, keeping sizes, strides
    and storage offset (non-contiguous and expanded tensors stay so) and requires_grad."""
    torch = _torch()
    from torch.utils._pytree import tree_map

    def move(x):
        if isinstance(x, torch.device) and x.type == "cpu":
            return torch.device(device)
        if isinstance(x, str) and x == "cpu":
            return device
        if not isinstance(x, torch.Tensor):
            return x
        if x.layout != torch.strided:
            raise NotImplementedError(f"layout {x.layout}")
        if x.dim() == 0 or x.numel() == 0:
            y = x.detach().to(device)
        else:
            n = x.untyped_storage().nbytes() // x.element_size()
            flat = x.new_empty(0).set_(x.untyped_storage(), 0, (n,), (1,))
            y = flat.detach().to(device).as_strided(x.size(), x.stride(), x.storage_offset())
            # The storage holds the values before a lazy conj() / neg view: keep the bits.
            if x.is_conj():
                y = y.conj()
            if x.is_neg():
                y = y._neg_view()
        if x.requires_grad:
            y = y.detach().requires_grad_(True)
        return y

    return tree_map(move, value)


def ocl_inputs(op, inputs):
    """to_device(inputs, "ocl") for (input, args, kwargs), but CPU_TENSOR_ARGS stay CPU tensors."""
    i, a, k = to_device(inputs, "ocl")
    keep = CPU_TENSOR_ARGS.get(op.name, ())
    a = tuple(inputs[1][n] if n in keep and n < len(a) else x for n, x in enumerate(a))
    return i, a, k


def bn_device_convention(op, sample, actual, expected):
    """For BN_SAVE_OPS: raises AssertionError unless ocl's saved statistics follow the non-CPU
    convention (see BN_SAVE_OPS); returns `actual` with them made comparable with CPU's: cast to
    CPU's dtype, and in evaluation mode (after checking their values) replaced by CPU's empty
    tensors."""
    torch = _torch()
    args, x = sample.args, sample.input
    if op.name == "_batch_norm_with_update":
        training, rm, rv, eps = True, None, None, None
    elif len(args) == 7:  # (weight, bias, running_mean, running_var, training, momentum, eps)
        training, rm, rv, eps = args[4], args[2], args[3], args[6]
    else:  # _native_batch_norm_legit.no_stats: (weight, bias, training, momentum, eps)
        training, rm, rv, eps = args[2], None, None, args[4]
    if not training and rm is None:
        return actual  # no running statistics in evaluation mode: CPU's and ours both raise
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    out = list(actual)
    for n in (1, 2):
        a = out[n]
        if tuple(a.shape) != (x.shape[1],) or a.dtype != acc:
            raise AssertionError(f"saved statistic {n}: {a.dtype}{tuple(a.shape)}, expected "
                                 f"{acc}{(x.shape[1],)} (PyTorch's non-CPU convention)")
        if training:
            out[n] = a.to(expected[n].dtype)
    if not training:
        want = (rm.detach().to(acc), (rv.detach().to(acc) + eps).rsqrt())
        atol, rtol = base_tolerance(acc)
        for n in (1, 2):
            torch.testing.assert_close(out[n].detach().cpu(), want[n - 1], atol=atol, rtol=rtol,
                                       equal_nan=True)
            out[n] = expected[n]
    return type(actual)(out) if isinstance(actual, tuple) else out


def leaves(tree):
    from torch.utils._pytree import tree_leaves

    return tree_leaves(tree)


def compare(actual, expected, atol, rtol, values=True):
    """Raises AssertionError when `actual` (on ocl) differs from `expected` (CPU)."""
    torch = _torch()
    a_leaves, e_leaves = leaves(actual), leaves(expected)
    if len(a_leaves) != len(e_leaves):
        raise AssertionError(f"{len(a_leaves)} outputs != {len(e_leaves)}")
    for a, e in zip(a_leaves, e_leaves):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                raise AssertionError(f"got {type(a).__name__}, expected a tensor")
            if a.device.type == "cpu" and e.numel() > 0:
                raise AssertionError("output is a CPU tensor, expected an ocl tensor")
            if not values:  # uninitialised memory: the metadata only, strides included
                if a.shape != e.shape or a.dtype != e.dtype:
                    raise AssertionError(f"{a.dtype}{tuple(a.shape)} != {e.dtype}{tuple(e.shape)}")
                if [s for s, n in zip(a.stride(), a.shape) if n > 1] != \
                        [s for s, n in zip(e.stride(), e.shape) if n > 1]:
                    raise AssertionError(f"strides {a.stride()} != {e.stride()}")
                continue
            # An integer input may give a floating result (sin of int64 is float32): the result's
            # dtype sets the floor of the tolerance.
            out_atol, out_rtol = base_tolerance(e.dtype)
            torch.testing.assert_close(
                a.detach().cpu(), e.detach(), atol=max(atol, out_atol), rtol=max(rtol, out_rtol),
                equal_nan=True,
                check_device=False, check_stride=False,
            )
        elif isinstance(e, float) and isinstance(a, float):
            torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True)
        elif a != e:
            raise AssertionError(f"{a!r} != {e!r}")


# Ops that return indices and leave the order of equal elements unspecified (sort and argsort
# unless stable=True, topk, and the order statistics kthvalue/median/nanmedian, which may return
# any of several equal elements; mode's CPU index comes from an unstable std::sort): CPU and ocl
# may pick different indices for ties, and both are
# right. Their indices are checked by what they select from the input, not by their values.
TIE_ORDER_OPS = {"sort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode"}


# Ops whose vectors are defined only up to sign (and a rotation within repeated values): the SVD
# and the symmetric eigendecomposition. LAPACK's signs are no more right than another
# implementation's, so their results are compared, like PyTorch's own OpInfo gradient checks do,
# through the sample's sign-invariant output_process_fn_grad (|U|, S, |Vh|, U Vh, eigenvalues,
# |eigenvectors|), after the raw outputs' shapes and dtypes. linalg.eig too: geev makes each
# vector's largest component real, but for a real matrix's complex pair the sign left is decided
# by rounding in the last QR sweeps (MKL, OpenBLAS and reference LAPACK disagree among
# themselves); its eigenvalues are compared raw, in geev's order.
SIGN_FREE_OPS = {"svd", "linalg.svd", "linalg.eigh", "linalg.eig"}


def _tie_dim(op, sample):
    if "dim" in sample.kwargs:
        return sample.kwargs["dim"]
    # topk/kthvalue(input, k, dim), sort/argsort/median/nanmedian/mode(input, dim)
    pos = 1 if op.name in ("topk", "kthvalue") else 0
    return sample.args[pos] if len(sample.args) > pos else -1


def compare_tie_order(op, sample, actual, expected, atol, rtol):
    """compare() for TIE_ORDER_OPS: values exactly as compare() does; indices must select from
    the input the same elements as the CPU's indices do."""
    torch = _torch()
    x = sample.input.detach()
    dim = _tie_dim(op, sample)

    def pick(idx):
        idx = idx.detach().cpu()
        if x.dim() == 0:
            return x.reshape(1).gather(0, idx.reshape(1)).reshape(idx.shape)
        return x.gather(dim, idx)

    if op.name == "argsort":
        if actual.shape != expected.shape or actual.dtype != expected.dtype:
            raise AssertionError(f"indices {actual.dtype}{tuple(actual.shape)} != "
                                 f"{expected.dtype}{tuple(expected.shape)}")
        compare(pick(actual).to("ocl"), pick(expected), atol, rtol)
        return
    if not isinstance(actual, (tuple, list)):  # median() of the whole tensor: a value only
        compare(actual, expected, atol, rtol)
        return
    compare(actual[0], expected[0], atol, rtol)
    if actual[1].shape != expected[1].shape or actual[1].dtype != expected[1].dtype:
        raise AssertionError("indices have another shape or dtype than the CPU's")
    idx, ref = actual[1], expected[0]
    if x.dim() > 0 and idx.dim() < x.dim():  # keepdim=False dropped the reduced dimension
        idx, ref = idx.unsqueeze(dim), ref.unsqueeze(dim)
    compare(pick(idx).to("ocl"), ref, atol, rtol)


def _grad_outputs(outs, seed):
    torch = _torch()
    g = torch.Generator().manual_seed(seed)
    result = []
    # Complex outputs get complex cotangents: without them the CPU's autograd.grad refuses a
    # non-scalar output and the sample counted as not applicable (float32 skip cells of
    # complex-valued ops: linalg.eig, fft.*, polar, complex, view_as_complex).
    for o in outs:
        result.append(torch.randn(o.shape, generator=g, dtype=o.dtype)
                      if o.is_floating_point() or o.is_complex() else None)
    return result


def _diff_outputs(out):
    torch = _torch()
    return [o for o in leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]


def _diff_inputs(sample):
    torch = _torch()
    return [t for t in leaves((sample.input, sample.args, sample.kwargs))
            if isinstance(t, torch.Tensor) and t.requires_grad]


def run_sample(op, cpu_sample, dtype, grads: bool, atol, rtol, values=True):
    """Runs one sample on CPU and ocl. Returns None when the CPU itself rejects the sample; raises
    AssertionError on a mismatch and any other exception when ocl fails."""
    torch = _torch()
    try:
        expected = op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
        if grads:
            e_outs = _diff_outputs(cpu_sample.output_process_fn_grad(expected))
            e_ins = _diff_inputs(cpu_sample)
            if not e_outs or not e_ins:
                grads = False
            else:
                e_grads = torch.autograd.grad(
                    e_outs, e_ins, _grad_outputs(e_outs, 7), allow_unused=True)
    except Exception:
        return None
    ocl_input, ocl_args, ocl_kwargs = ocl_inputs(
        op, (cpu_sample.input, cpu_sample.args, cpu_sample.kwargs))
    actual = _ocl_callable(op)(ocl_input, *ocl_args, **ocl_kwargs)
    ocl_result = actual  # the gradients come from the raw result
    if op.name in BN_SAVE_OPS:
        actual = bn_device_convention(op, cpu_sample, actual, expected)
    ocl_operand = any(isinstance(t, torch.Tensor) and t.device.type == "ocl" and t.dim() > 0
                      for t in leaves((ocl_input, ocl_args, ocl_kwargs)))
    if not ocl_operand and any(isinstance(t, torch.Tensor) and t.device.type == "cpu"
                               for t in leaves(actual)):
        return None  # a factory op (arange, linspace, ...) without device=: nothing ran on ocl
    if values and op.name in TIE_ORDER_OPS and not cpu_sample.kwargs.get("stable", False):
        compare_tie_order(op, cpu_sample, actual, expected, atol, rtol)
    elif values and op.name in SIGN_FREE_OPS:
        compare(actual, expected, atol, rtol, values=False)
        compare(cpu_sample.output_process_fn_grad(actual),
                cpu_sample.output_process_fn_grad(expected), atol, rtol)
    else:
        compare(actual, expected, atol, rtol, values)
    if grads:
        a_outs = _diff_outputs(cpu_sample.output_process_fn_grad(ocl_result))
        a_ins = [t for t in leaves((ocl_input, ocl_args, ocl_kwargs))
                 if isinstance(t, torch.Tensor) and t.requires_grad]
        go = [g.to("ocl") if g is not None else None for g in _grad_outputs(e_outs, 7)]
        a_grads = torch.autograd.grad(a_outs, a_ins, go, allow_unused=True)
        # Gradients accumulate over many terms: float32 GEMM-like tolerances.
        compare(list(a_grads), list(e_grads), max(atol, 1e-4), max(rtol, 1e-4))
    return True


def _ocl_callable(op):
    """op itself, or with --compiled a fresh torch.compile of a call of its function."""
    if not COMPILED:
        return op
    torch = _torch()
    torch._dynamo.reset()
    fn = op.op

    def call(*args, **kwargs):
        return fn(*args, **kwargs)

    return torch.compile(call)


# A sample (any dtype but float64, complex128 and bool) that differs from CPU by more than the
# tolerance in a floating or complex result still counts as a match when, against the float64
# (complex128) result of the same inputs, ocl is no more than this many
# times further off than CPU's own result (summation order and rounding of intermediates differ
# between two correct implementations; ill-conditioned ops amplify that).
ACCURACY_FACTOR = 4


def as_accurate_as_cpu(op, cpu_sample, dtype, grads: bool) -> bool:
    torch = _torch()
    from torch.utils._pytree import tree_map

    # Integer samples too (their floating results, e.g. a loss over uint8 targets, are compared
    # with the same op on float64 inputs); integer results must always equal CPU's.
    if dtype in (torch.float64, torch.complex128, torch.bool):
        return False

    def fresh(x, to=None):
        if not isinstance(x, torch.Tensor):
            return x
        y = x.detach().clone() if to is None or x.dtype != dtype else x.detach().to(to)
        return y.requires_grad_(x.requires_grad)

    args = (cpu_sample.input, cpu_sample.args, cpu_sample.kwargs)
    try:
        runs = {}
        wide = torch.complex128 if dtype.is_complex else torch.float64
        for name, inputs in (("f64", tree_map(lambda x: fresh(x, wide), args)),
                             ("cpu", tree_map(fresh, args)),
                             ("ocl", ocl_inputs(op, tree_map(fresh, args)))):
            i, a, k = inputs
            with torch_ocl_strict(name == "ocl"):
                out = op(i, *a, **k)
                result = [out]
                if name == "cpu":
                    cpu_out = out
                elif name == "ocl" and op.name in BN_SAVE_OPS:
                    result = [bn_device_convention(op, cpu_sample, out, cpu_out)]
                if grads:
                    outs = _diff_outputs(cpu_sample.output_process_fn_grad(out))
                    ins = [t for t in leaves(inputs)
                           if isinstance(t, torch.Tensor) and t.requires_grad]
                    go = [g if g is None else g.to(o.device, o.dtype) for g, o in
                          zip(_grad_outputs([o.detach().float() for o in outs], 7), outs)]
                    result.append(list(torch.autograd.grad(outs, ins, go, allow_unused=True)))
            runs[name] = [x.detach().cpu() if isinstance(x, torch.Tensor) else x
                          for x in leaves(result)]
    except Exception:
        return False
    f64, cpu, ocl = runs["f64"], runs["cpu"], runs["ocl"]
    if not (len(f64) == len(cpu) == len(ocl)):
        return False
    for t, c, o in zip(f64, cpu, ocl):
        if not isinstance(c, torch.Tensor):
            if c != o:
                return False
            continue
        if c.shape != o.shape or c.dtype != o.dtype:
            return False
        if not (c.is_floating_point() or c.is_complex()):
            if not torch.equal(c, o):
                return False
            continue
        to = torch.complex128 if c.is_complex() else torch.float64
        t, c, o = t.to(to), c.to(to), o.to(to)
        # Where the float64 truth is NaN, ocl must be NaN exactly where CPU is. Where the truth is
        # a number, ocl may not be NaN unless CPU is (a CPU NaN there, such as an overflowed
        # 16-bit intermediate, is an infinite error of CPU's that ocl need not copy).
        nan_t, nan_c, nan_o = t.isnan(), c.isnan(), o.isnan()
        if not torch.equal(nan_c[nan_t], nan_o[nan_t]) or (nan_o & ~nan_t & ~nan_c).any():
            return False
        finite = ~nan_t
        if t.numel() == 0 or not finite.any():
            continue
        err_cpu = (c - t)[finite].abs().nan_to_num(float("inf")).max().item()
        err_ocl = (o - t)[finite].abs().nan_to_num(float("inf")).max().item()
        if not err_ocl <= ACCURACY_FACTOR * err_cpu + base_tolerance(dtype)[0] * 1e-3:
            return False
    return True


def torch_ocl_strict(on: bool):
    import contextlib

    import torch_ocl

    return torch_ocl.strict() if on else contextlib.nullcontext()


def first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    text = f"{type(e).__name__}: {msg[0] if msg else ''}"
    if isinstance(e, AssertionError):  # assert_close: add the mismatch figures
        text += " " + " ".join(m.strip() for m in msg[1:] if m.strip().startswith(("Mismatched", "Greatest")))
    return text[:300]


def check(op, dtype_name: str, budget: float = 20.0, max_samples: int | None = None) -> dict:
    """Classifies one (op, dtype). Returns {"status", "detail", "samples", "seconds"}."""
    torch = _torch()
    import torch_ocl

    key = op_key(op)
    dtype = getattr(torch, dtype_name)
    t0 = time.perf_counter()
    if RANDOM_OPS.match(key):
        return {"status": "skip", "detail": "random: values differ by design", "samples": 0,
                "seconds": 0.0}
    values = not UNINITIALISED_OPS.match(key)
    grads = dtype == torch.float32 and op.supports_autograd
    atol, rtol = tolerance(op, dtype)
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=grads))
    except Exception as e:
        return {"status": "skip", "detail": f"no samples: {first_line(e)}", "samples": 0,
                "seconds": time.perf_counter() - t0}
    if max_samples is not None:
        samples = samples[:max_samples]
    ran, near, fallback_ops, truncated = 0, 0, set(), False
    for sample in samples:
        if time.perf_counter() - t0 > budget:
            truncated = True
            break
        try:
            with torch_ocl.strict():
                ok = run_sample(op, sample, dtype, grads, atol, rtol, values)
        except AssertionError as e:
            if not (values and as_accurate_as_cpu(op, sample, dtype, grads)):
                return _result("wrong", first_line(e), ran + 1, t0)
            near += 1
            ok = True
        except NotImplementedError as e:
            if str(e).startswith("layout torch.sparse"):
                continue  # sparse samples: not applicable (see below)
            if "torch-ocl strict mode" not in str(e):
                return _result("error", first_line(e), ran + 1, t0)
            torch_ocl.reset_fallback_report()
            try:
                ok = run_sample(op, sample, dtype, grads, atol, rtol, values)
            except AssertionError as e2:
                return _result("wrong", first_line(e2), ran + 1, t0)
            except Exception as e2:
                return _result("error", first_line(e2), ran + 1, t0)
            fallback_ops.update(r["op"] for r in torch_ocl.fallback_report(print_table=False))
            if not fallback_ops:  # strict refused, yet nothing was counted: still not native
                fallback_ops.add(str(e).split(" has no native")[0].split(": ")[-1])
        except Exception as e:
            msg = str(e)
            if msg.startswith("layout torch.sparse") or "to be on cpu, but it's on ocl" in msg:
                # Sparse samples, or an argument that PyTorch requires on the CPU: this harness
                # moves every tensor to ocl, so such a sample does not apply.
                continue
            return _result("error", first_line(e), ran + 1, t0)
        if ok:
            ran += 1
    if ran == 0:
        return _result("skip", "no applicable sample (CPU rejects it, sparse, or a factory op "
                       "without device=)", 0, t0)
    note = f" (budget: {ran} of {len(samples)} samples)" if truncated else ""
    if near:
        note += (f" ({near} sample(s) beyond the CPU tolerance, but as close to the float64 result "
                 f"as CPU's own, within {ACCURACY_FACTOR}x)")
    if fallback_ops:
        return _result("fallback", ", ".join(sorted(fallback_ops)) + note, ran, t0)
    return _result("native", note.strip(), ran, t0)


def _result(status, detail, samples, t0):
    return {"status": status, "detail": detail, "samples": samples,
            "seconds": round(time.perf_counter() - t0, 3)}


def op_dtypes(op, wanted):
    torch = _torch()
    supported = op.supported_dtypes("cpu")
    return [d for d in wanted if getattr(torch, d) in supported]


# ------------------------------------------------------------------------------------------------
# Worker: runs a list of ops, one JSON line per (op, dtype) plus a "begin" line per op.


def worker(args) -> int:
    import warnings

    warnings.filterwarnings("ignore")
    torch = _torch()
    import torch_ocl  # noqa: F401

    torch.manual_seed(0)
    global COMPILED
    COMPILED = args.compiled
    wanted = args.dtypes.split(",")
    todo = json.load(open(args.worker))
    by_key = {op_key(op): op for op in load_op_db()}
    with open(args.results, "a", buffering=1) as out:
        for key in todo:
            op = by_key[key]
            out.write(json.dumps({"begin": key}) + "\n")
            for d in op_dtypes(op, wanted):
                try:
                    r = check(op, d, args.budget, args.max_samples)
                except Exception as e:  # a bug in the harness must not hide the rest
                    r = _result("error", "harness: " + first_line(e), 0, time.perf_counter())
                    traceback.print_exc()
                r.update(op=key, dtype=d)
                out.write(json.dumps(r) + "\n")
            out.write(json.dumps({"end": key}) + "\n")
    return 0


# ------------------------------------------------------------------------------------------------
# Driver: starts workers, survives crashes and hangs, writes the report.


def read_results(path):
    done, rows, begun = set(), {}, None
    if not os.path.exists(path):
        return done, rows, begun
    for line in open(path):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "begin" in r:
            begun = r["begin"]
        elif "end" in r:
            done.add(r["end"])
            begun = None
        else:
            rows.setdefault(r["op"], {})[r["dtype"]] = r
    return done, rows, begun


def drive(args) -> int:
    import torch

    global COMPILED
    COMPILED = args.compiled

    # The report covers every dtype; a run restricted with --dtypes leaves the others "n/r".
    wanted = DTYPE_NAMES
    all_ops = load_op_db()
    all_keys = [op_key(op) for op in all_ops]
    keys = [k for k in all_keys if re.search(args.ops, k)]
    dtypes_of = {op_key(op): op_dtypes(op, wanted) for op in all_ops}
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, ".conformance-results.jsonl")
    if not (args.resume or args.report_only) and os.path.exists(results):
        os.remove(results)
    elif args.resume and args.ops != "." and os.path.exists(results):
        # --resume --ops REGEX: run the matching ops again, keep every other result.
        again = set(keys)
        kept = [line for line in open(results)
                if not ({json.loads(line).get(f) for f in ("op", "begin", "end")} & again)]
        with open(results, "w") as f:
            f.writelines(kept)
    todo_file = os.path.join(args.out, ".conformance-todo.json")
    t_start = time.time()
    while not args.report_only:
        done, rows, begun = read_results(results)
        todo = [k for k in keys if k not in done]
        if begun is not None and begun in todo:  # the last worker died inside this op
            for d in dtypes_of[begun]:
                rows.setdefault(begun, {}).setdefault(
                    d, {"op": begun, "dtype": d, "status": "error", "samples": 0, "seconds": 0,
                        "detail": "worker crashed or hung (see the conformance log)"})
            with open(results, "a") as f:
                for r in rows[begun].values():
                    f.write(json.dumps(r) + "\n")
                f.write(json.dumps({"end": begun}) + "\n")
            continue
        if not todo:
            break
        json.dump(todo, open(todo_file, "w"))
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", todo_file,
               "--results", results, "--dtypes", args.dtypes, "--budget", str(args.budget)]
        if args.max_samples:
            cmd += ["--max-samples", str(args.max_samples)]
        if args.compiled:
            cmd += ["--compiled"]
        proc = subprocess.Popen(cmd)
        last_size, last_change = -1, time.time()
        while proc.poll() is None:
            time.sleep(2)
            size = os.path.getsize(results) if os.path.exists(results) else 0
            if size != last_size:
                last_size, last_change = size, time.time()
                d, _, cur = read_results(results)
                print(f"[{time.time() - t_start:7.0f}s] {len(d)}/{len(keys)} ops done"
                      + (f", running {cur}" if cur else ""), flush=True)
            elif args.time_limit and time.time() - t_start > args.time_limit * 60:
                print(f"time limit of {args.time_limit} min reached: stopping", flush=True)
                proc.kill()
                proc.wait()
                break
            if time.time() - last_change > args.hang:
                print(f"no progress for {args.hang}s: killing the worker", flush=True)
                proc.kill()
                proc.wait()
                break
        if args.time_limit and time.time() - t_start > args.time_limit * 60:
            break
    _, rows, _ = read_results(results)
    report = build_report(rows, all_keys, dtypes_of, wanted, time.time() - t_start)
    write_report(report, args.out)
    if os.path.exists(todo_file):
        os.remove(todo_file)
    print(f"wrote {args.out}/compatibility.md and compatibility.json")
    print(json.dumps(report["overall"]))
    del torch
    return 0


def build_report(rows, keys, dtypes_of, wanted, seconds):
    import platform

    import torch
    import torch_ocl  # noqa: F401

    p = torch.ocl.get_device_properties(0)
    totals = {d: {s: 0 for s in STATUSES} for d in wanted}
    overall = {s: 0 for s in STATUSES}
    ops, not_run, untested = {}, [], []
    for k in keys:
        if not dtypes_of[k]:  # complex, float8 or uint64 only: no dtype of DTYPE_NAMES
            untested.append(k)
            continue
        if k not in rows:
            not_run.append(k)
            continue
        ops[k] = {}
        for d in dtypes_of[k]:
            r = rows[k].get(d)
            if r is None:  # a run restricted with --dtypes: not counted
                ops[k][d] = {"status": "notrun", "detail": "", "samples": 0}
                continue
            ops[k][d] = {x: r[x] for x in ("status", "detail", "samples") if x in r}
            totals[d][r["status"]] += 1
            overall[r["status"]] += 1
    return {
        "device": p.name,
        "platform": f"{p.platform_name} {p.platform_version}",
        "driver": p.driver_version,
        "opencl_c": p.opencl_c_version,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": round(seconds),
        "dtypes": wanted,
        "totals": totals,
        "overall": overall,
        "ops": ops,
        "not_run": not_run,
        "untested_dtypes": untested,
    }


CELL = {"native": "native", "fallback": "fb", "wrong": "**WRONG**", "error": "err", "skip": "skip",
        "notrun": "n/r"}


def write_report(report, out_dir):
    with open(os.path.join(out_dir, "compatibility.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=False)
        f.write("\n")
    wanted = report["dtypes"]
    lines = [
        "# torch-ocl operator compatibility (PyTorch OpInfo conformance"
        + (", compiled)" if COMPILED else ")"),
        "",
        f"Device: {report['device']} ({report['platform']}, driver {report['driver']}, "
        f"{report['opencl_c']}). PyTorch {report['torch']}, Python {report['python']}. "
        f"Generated {report['date']} by "
        + ("`make conformance-compiled` (tools/conformance.py --compiled: the ocl side of every "
           "sample through torch.compile)" if COMPILED else "`make conformance` (tools/conformance.py)")
        + f" in {report['seconds']} s.",
        "",
        "Each cell is one (OpInfo, dtype): every sample input of the OpInfo ran on the CPU and on "
        "`ocl` (same strides, so non-contiguous and broadcast samples stay so) and the results, and "
        "in float32 the gradients, were compared. `native`: all match in strict mode (a sample with "
        "floating results may instead be no more than 4x further from the float64 result than "
        "CPU's own result; the JSON detail counts such samples); `fb`: all "
        "match, but only through the CPU fallback (the aten ops are listed in the last column and "
        "in compatibility.json); `WRONG`: a mismatch; `err`: an exception on ocl only; `skip`: not "
        "comparable (random or uninitialised output, no sample runs on the CPU); `n/r`: not run "
        "(a run restricted to fewer dtypes, not counted in the totals); empty: the CPU does not "
        "support the dtype either. Samples of one (op, dtype) stop after a time budget (noted in "
        "the JSON detail).",
        "",
        f"{len(report['ops'])} OpInfos checked"
        + (f"; {len(report['not_run'])} not run in this run (time limit or --ops), listed at the end"
           if report["not_run"] else "")
        + (f"; {len(report['untested_dtypes'])} support none of these dtypes (complex or float8 "
           "only), listed at the end." if report.get("untested_dtypes") else "."),
        "",
        "## Totals",
        "",
        "| dtype | " + " | ".join(STATUSES) + " |",
        "|---|" + "---:|" * len(STATUSES),
    ]
    for d in wanted:
        lines.append(f"| {d} | " + " | ".join(str(report["totals"][d][s]) for s in STATUSES) + " |")
    lines.append("| **all** | " + " | ".join(f"**{report['overall'][s]}**" for s in STATUSES) + " |")
    lines += ["", "## Per op", "",
              "| op | " + " | ".join(wanted) + " | notes |",
              "|---|" + "---|" * (len(wanted) + 1)]
    details = []
    for k, cells in report["ops"].items():
        row, notes = [], set()
        for d in wanted:
            c = cells.get(d)
            if c is None:
                row.append("")
                continue
            row.append(CELL[c["status"]])
            if c["status"] == "fallback":
                notes.update(x.strip() for x in c["detail"].split(" (budget")[0].split(","))
            elif c["status"] in ("wrong", "error") or (c["status"] == "skip" and c["detail"]):
                details.append(f"- `{k}` {d} ({c['status']}): {c['detail']}")
        note = ", ".join(sorted(n.replace("aten::", "") for n in notes if n))
        lines.append(f"| `{k}` | " + " | ".join(row) + f" | {note} |")
    lines += ["", "## Errors, mismatches and skips", ""] + (details or ["None."]) + [""]
    if report["not_run"]:
        lines += ["## Not run (time limit or --ops)", "", ", ".join(f"`{k}`" for k in report["not_run"]), ""]
    if report.get("untested_dtypes"):
        lines += ["## OpInfos with none of the tested dtypes (complex or float8 only)", "",
                  ", ".join(f"`{k}`" for k in report["untested_dtypes"]), ""]
    with open(os.path.join(out_dir, "compatibility.md"), "w") as f:
        f.write("\n".join(lines))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", default=".", help="regex on OpInfo names (name.variant)")
    ap.add_argument("--dtypes", default=",".join(DTYPE_NAMES))
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds per (op, dtype); later samples are skipped and noted")
    ap.add_argument("--max-samples", type=int, default=None)
    ap.add_argument("--hang", type=float, default=300.0,
                    help="kill the worker after this many seconds without progress")
    ap.add_argument("--out", default="docs")
    ap.add_argument("--resume", action="store_true",
                    help="keep results of an earlier run (with --ops: rerun the matching ops)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="minutes; then stop and report what ran (the rest is listed as not run)")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from the results of an earlier run (implies --resume)")
    ap.add_argument("--compiled", action="store_true",
                    help="run the ocl side through torch.compile (use another --out)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--results", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    return worker(args) if args.worker else drive(args)


if __name__ == "__main__":
    sys.exit(main())
