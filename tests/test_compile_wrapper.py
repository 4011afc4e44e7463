"""The host code of Inductor's generated wrappers on ocl: allocations through
torch_ocl._C._empty_strided_ocl and one batched input size/stride assert per graph
(torch_ocl._inductor.runtime.assert_inputs over torch_ocl._C._assert_size_stride_all).

Numeric tests compare the compiled ocl result with CPU PyTorch on the same inputs; the assert
tests compare the errors with what torch._C._dynamo.guards.assert_size_stride raises itself.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch_ocl
import torch_ocl._attention
from torch._C._dynamo.guards import assert_size_stride
from torch._dynamo.testing import CompileCounterWithBackend
from torch._inductor import config as inductor_config
from torch._inductor.utils import run_and_get_code
from torch_ocl._inductor.runtime import assert_inputs

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

TOL = dict(atol=1e-5, rtol=1e-5)


def compiled_code(fn, *args, **compile_kw):
    """fn compiled on ocl (strict: no CPU fallback), run once: (result, generated modules)."""
    with inductor_config.patch(force_disable_caches=True), torch_ocl.strict():
        return run_and_get_code(torch.compile(fn, **compile_kw), *args)


def input_assert_lines(code: str) -> list[str]:
    """The per-input assert_size_stride lines Inductor writes for graph inputs."""
    return [ln for ln in code.splitlines()
            if "assert_size_stride(" in ln and "'input'" in ln]


def check_wrapper(code: str) -> None:
    assert code.count("ocl_assert_inputs((") == 1, code
    assert input_assert_lines(code) == []
    assert "empty_strided_ocl(" in code
    # No generic allocation is left for ocl buffers.
    assert " = empty_strided(" not in code


def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


def test_pointwise_and_reduction_wrapper_matches_cpu():
    def f(a, b, c):
        return (a * 2 + b).sum(1), torch.tanh(a[:, ::2]) * c, (a.t() + 1).contiguous()

    cpu = (torch.randn(7, 10), torch.randn(10), torch.randn(1, 5))
    out, (code,) = compiled_code(f, *[t.to("ocl") for t in cpu])
    check_wrapper(code)
    # The assert covers all three inputs, with their compiled sizes and strides.
    line = next(ln for ln in code.splitlines() if "ocl_assert_inputs((" in ln)
    assert "(7, 10), (10, 1)" in line and "(10, ), (1, )" in line and "(1, 5), (5, 1)" in line
    for got, want in zip(out, f(*cpu)):
        torch.testing.assert_close(got.cpu(), want, **TOL)


def test_zero_size_and_0d_inputs():
    def f(a, s, z):
        return a * s + 1, torch.cat([z, a]) * 2, (z + 1).sum(0)

    cpu = (torch.randn(3, 4), torch.tensor(1.5), torch.empty(0, 4))
    out, (code,) = compiled_code(f, *[t.to("ocl") for t in cpu])
    line = next(ln for ln in code.splitlines() if "ocl_assert_inputs((" in ln)
    # The 0-d input is checked; the empty one is not (as Inductor: strides of empty tensors).
    assert "(arg0_1, arg1_1,)" in line and "((), ())" in line, line
    check_wrapper(code)
    for got, want in zip(out, f(*cpu)):
        torch.testing.assert_close(got.cpu(), want, **TOL)


def test_training_step_graphs_each_have_one_assert():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                torch.nn.Linear(16, 3))
    ocl_model = torch.nn.Sequential(*[m for m in model]).to("ocl")
    ref = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                              torch.nn.Linear(16, 3))
    ref.load_state_dict(model.state_dict())
    x = torch.randn(9, 12)

    def step(m, inp):
        loss = m(inp).square().mean()
        loss.backward()
        return loss

    ocl_model.load_state_dict(ref.state_dict())
    cm = torch.compile(ocl_model)
    with inductor_config.patch(force_disable_caches=True), torch_ocl.strict():
        loss, codes = run_and_get_code(lambda: step(cm, x.to("ocl")))
    assert len(codes) == 2  # forward and backward
    for code in codes:
        check_wrapper(code)
    want = step(ref, x)
    torch.testing.assert_close(loss.cpu(), want, **TOL)
    for p, q in zip(ocl_model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, atol=1e-5, rtol=1e-4)


def test_dynamic_shapes_assert_the_symbolic_sizes():
    def f(a, b):
        return torch.relu(a @ b.t()) + a.sum(1, keepdim=True)

    counter = CompileCounterWithBackend("inductor")
    with inductor_config.patch(force_disable_caches=True), torch_ocl.strict():
        cf = torch.compile(f, dynamic=True, backend=counter)
        for i, n in enumerate((3, 9, 14)):
            cpu = (torch.randn(n, 7), torch.randn(n + 2, 7))
            args = [t.to("ocl") for t in cpu]
            if i == 0:
                out, (code,) = run_and_get_code(cf, *args)
            else:
                out = cf(*args)
            torch.testing.assert_close(out.cpu(), f(*cpu), **TOL)
    assert counter.frame_count == 1  # one graph for the three sizes
    line = next(ln for ln in code.splitlines() if "ocl_assert_inputs((" in ln)
    assert re.search(r"\(\(s\d+, s\d+\), \(s\d+, 1\)\)", line), line
    check_wrapper(code)


def test_cond_subgraphs_use_the_ocl_wrapper():
    # torch.cond's branches are subgraph wrappers in the same module: ocl kernel calls, the
    # fast allocation and one assert per function.
    def f(p, a, b):
        return torch.cond(p, lambda x, y: (x * y).sin(), lambda x, y: (x - y).cos(), (a, b)) + 1

    cpu = (torch.randn(4, 5), torch.randn(5, 4).t())
    with inductor_config.patch(force_disable_caches=True), torch_ocl.strict():
        cf = torch.compile(f)
        for i, pred in enumerate((True, False)):
            args = [torch.tensor(pred)] + list(cpu)
            ocl_args = [t.to("ocl") for t in args]  # b stays transposed (strides (1, 4))
            if i == 0:
                out, (code,) = run_and_get_code(cf, *ocl_args)
            else:
                out = cf(*ocl_args)
            torch.testing.assert_close(out.cpu(), f(*args), **TOL)
    for fn in ("def call(", "def true_graph_0(", "def false_graph_0("):
        body = code.split(fn, 1)[1].split("\n\n", 1)[0]
        assert body.count("ocl_assert_inputs((") == 1, body
    assert input_assert_lines(code) == []
    assert " = empty_strided(" not in code
    assert "true_graph_0_buf0 = empty_strided_ocl(" in code


def test_size_asserts_off_writes_no_assert():
    def f(a):
        return a.sin() + 1

    with inductor_config.patch(size_asserts=False):
        out, (code,) = compiled_code(f, torch.randn(6).to("ocl"))
    assert "ocl_assert_inputs" not in code.split("def call", 1)[1]
    assert input_assert_lines(code) == []


def test_compiled_call_with_wrong_strides_raises_pytorch_error():
    from torch._inductor.codecache import PyCodeCache

    def f(a, b):
        return a * b + 1

    a, b = torch.randn(6, 4).to("ocl"), torch.randn(6, 4).to("ocl")
    _, (code,) = compiled_code(f, a, b)
    module = PyCodeCache.load(code)
    good = module.call([a, b])
    torch.testing.assert_close(good[0].cpu(), (a * b + 1).cpu())
    bad = torch.randn(4, 6).to("ocl").t()  # (6, 4) with strides (1, 6)
    kind, msg = error_of(lambda: module.call([a, bad]))
    assert kind is AssertionError
    assert msg == error_of(lambda: assert_size_stride(bad, (6, 4), (4, 1), "input"))[1]
    assert "stride 1==4 at dim=0" in msg


def test_assert_inputs_matches_assert_size_stride():
    x = torch.randn(3, 4).to("ocl")
    xt = torch.randn(4, 3).to("ocl").t()
    row = torch.randn(1, 4).to("ocl")
    row_view = torch.randn(4, 4).to("ocl")[:1]  # size-1 dim with stride 4 (assert ignores it)
    empty = torch.empty(0, 5).to("ocl")
    scalar = torch.tensor(2.0).to("ocl")
    ok = ((3, 4), (4, 1))
    # Accepted: exact, size-1 dims with other strides, empty tensors with other strides, 0-d.
    assert_inputs((x, row, row_view, empty, scalar),
                  (ok, ((1, 4), (4, 1)), ((1, 4), (1, 1)), ((0, 5), (1, 7)), ((), ())))
    assert torch_ocl._C._assert_size_stride_all((x, row_view), (ok, ((1, 4), (99, 1)))) == -1
    # Rejected: the first mismatching tensor, with assert_size_stride's own error.
    cases = [
        (xt, ok),                   # strides
        (x, ((3, 5), (5, 1))),      # sizes
        (x, ((12,), (1,))),         # ndim
        (scalar, ((1,), (1,))),     # 0-d against 1-d
        (row, ((1, 4), (4, 2))),    # stride of a dim with more than one element
    ]
    for t, (size, stride) in cases:
        want = error_of(lambda: assert_size_stride(t, size, stride, "input"))
        got = error_of(lambda: assert_inputs((x, t, xt), (ok, (size, stride), ((3, 4), (1, 3)))))
        assert got == want
        assert torch_ocl._C._assert_size_stride_all((x, t, x), (ok, (size, stride), ok)) == 1
        assert torch_ocl._C._assert_size_stride_all((x, t, x), (ok, (size, stride), ok), 2) == -1
    # The second of two bad inputs fails once the first passes.
    want = error_of(lambda: assert_size_stride(xt, (3, 4), (4, 1), "input"))
    assert error_of(lambda: assert_inputs((x, x, xt), (ok, ok, ok))) == want
    # Not a tensor: PyTorch's TypeError.
    kind, _ = error_of(lambda: assert_inputs((x, 3), (ok, ok)))
    assert kind is TypeError


def test_output_assert_matches_assert_size_stride():
    # torch_ocl._C._assert_size_stride: the extern outputs' per-tensor assert of the wrappers
    ours = torch_ocl._C._assert_size_stride
    x = torch.randn(3, 4).to("ocl")
    xt = torch.randn(4, 3).to("ocl").t()
    row = torch.randn(1, 4).to("ocl")
    row_view = torch.randn(4, 4).to("ocl")[:1]
    empty = torch.empty(0, 5).to("ocl")
    scalar = torch.tensor(2.0).to("ocl")
    op = "torch.ops.aten.some_op.default"
    for t, size, stride in [(x, (3, 4), (4, 1)), (row_view, (1, 4), (1, 1)),
                            (empty, (0, 5), (1, 7)), (scalar, (), ())]:
        assert ours(t, size, stride, op) is True  # what assert_size_stride returns
    cases = [
        (xt, (3, 4), (4, 1)),       # strides
        (x, (3, 5), (5, 1)),        # sizes
        (x, (12,), (1,)),           # ndim
        (scalar, (1,), (1,)),       # 0-d against 1-d
        (row, (1, 4), (4, 2)),      # stride of a dim with more than one element
        (x, [3, 4], (4, 1)),        # a list where the assert wants a tuple
        (3, (1,), (1,)),            # not a tensor
    ]
    for t, size, stride in cases:
        want = error_of(lambda: assert_size_stride(t, size, stride, op))
        assert error_of(lambda: ours(t, size, stride, op)) == want
    # without the op name: accepted, and a mismatch raises PyTorch's error
    assert ours(x, (3, 4), (4, 1)) is True
    assert error_of(lambda: ours(xt, (3, 4), (4, 1))) == \
        error_of(lambda: assert_size_stride(xt, (3, 4), (4, 1)))


def test_extern_outputs_checked_by_ocl_assert():
    # An extern kernel with several outputs (the attention op): each output's assert is the
    # C++ one, and the compiled result matches CPU.
    q, k, v = (torch.randn(2, 2, 9, 16, generator=torch.Generator().manual_seed(i))
               for i in range(3))

    def f(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) * 2

    old = torch_ocl._attention.set_sdpa_gemm_min_work(0)  # the fused kernels, an extern call
    try:
        out, (code,) = compiled_code(f, *[t.to("ocl") for t in (q, k, v)])
    finally:
        torch_ocl._attention.set_sdpa_gemm_min_work(old)
    call = code.split("def call", 1)[1]
    assert "ocl_assert_size_stride(" in call and "\n        assert_size_stride(" not in call, call
    torch.testing.assert_close(out.cpu(), f(q, k, v), **TOL)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int8, torch.bool, torch.complex64])
def test_empty_strided_ocl_matches_empty_strided(dtype):
    for size, stride in [((4, 5), (5, 1)), ((4, 5), (1, 4)), ((3, 2, 2), (8, 1, 3)), ((), ()),
                         ((0,), (1,)), ((0, 3), (3, 1)), ((2, 0, 3), (0, 3, 1)), ((7,), (2,))]:
        got = torch_ocl._C._empty_strided_ocl(size, stride, dtype)
        want = torch.empty_strided(size, stride, dtype=dtype, device="ocl")
        assert (got.shape, got.stride(), got.dtype, got.device) == \
            (want.shape, want.stride(), want.dtype, want.device)
        assert got.untyped_storage().nbytes() == want.untyped_storage().nbytes()
        assert got.storage_offset() == 0 and not got.requires_grad
        # Usable: write and read back against CPU.
        src = torch.arange(got.numel()).reshape(got.shape).to(dtype)
        got.copy_(src.to("ocl"))
        torch.testing.assert_close(got.cpu(), src)


def test_empty_strided_ocl_errors_match_empty_strided():
    def both(size, stride, dtype):
        return (error_of(lambda: torch_ocl._C._empty_strided_ocl(size, stride, dtype)),
                error_of(lambda: torch.empty_strided(size, stride, dtype=dtype, device="ocl")))

    got, want = both((2, 3), (3, 1), torch.float8_e4m3fn)  # not a storage dtype on ocl
    assert got == want and got[0] is TypeError
    got, want = both((2, -1), (1, 1), torch.float32)
    assert got[0] is want[0] is RuntimeError and got[1] == want[1]
    got, want = both((2, 3), (3,), torch.float32)
    assert got[0] is want[0] is RuntimeError and "mismatch in length of strides and shape" in got[1]
    with pytest.raises(TypeError):
        torch_ocl._C._empty_strided_ocl((2, 3), (3, 1), "float32")
    with pytest.raises(TypeError):
        torch_ocl._C._empty_strided_ocl((2, 3.5), (3, 1), torch.float32)


def test_empty_strided_ocl_too_large_fails_as_empty_strided():
    # Beyond the device's largest buffer: the allocator's error, the same through both calls.
    n = torch.ocl.get_device_properties(0).max_alloc_size // 8 + 1
    got = error_of(lambda: torch_ocl._C._empty_strided_ocl((n,), (1,), torch.float64))
    want = error_of(lambda: torch.empty_strided((n,), (1,), dtype=torch.float64, device="ocl"))
    assert got == want
