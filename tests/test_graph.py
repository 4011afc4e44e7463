"""Graph capture and replay on ocl (torch.accelerator.Graph) and torch.compile(mode=
"reduce-overhead"), against CPU, in strict mode (a hidden CPU fallback fails a test).

Capture executes the work as it records it, so what a captured step computed is already there
after capture_end; each replay runs the recorded kernels, copies and native kernels again on
the current stream, reading and writing the same addresses.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch_ocl
from torch_ocl._inductor import graphs as ocl_graphs

pytestmark = pytest.mark.skipif(
    not hasattr(torch._C, "_acceleratorGraph"), reason="torch without torch.accelerator.Graph"
)

ATOL = RTOL = 1e-5


def chain(x, y):
    z = torch.sin(x) * y + 1.5
    z = torch.relu(z - y.mean())
    return (z.exp() / (1 + z)).t().contiguous()[::2] * 0.5


def test_pointwise_chain_replays_with_new_inputs():
    xs = [torch.randn(33, 17) for _ in range(3)]
    ys = [torch.randn(17) for _ in range(3)]  # broadcast
    with torch_ocl.strict():
        x = xs[0].to("ocl")
        y = ys[0].to("ocl")
        chain(x, y)  # warm-up: kernel builds outside the capture
        torch.accelerator.synchronize()
        g = torch.accelerator.Graph()
        with g:
            out = chain(x, y)
        # Capture executed the work once.
        torch.testing.assert_close(out.cpu(), chain(xs[0], ys[0]), atol=ATOL, rtol=RTOL)
        for xc, yc in zip(xs[1:], ys[1:]):
            x.copy_(xc.to("ocl"))  # inputs updated in place between replays
            y.copy_(yc.to("ocl"))
            g.replay()
            torch.testing.assert_close(out.cpu(), chain(xc, yc), atol=ATOL, rtol=RTOL)


def test_side_stream_capture_and_replay_on_it():
    a = torch.randn(64, 48)
    b = torch.randn(48, 40)
    with torch_ocl.strict():
        da, db = a.to("ocl"), b.to("ocl")
        (da @ db).sum()
        torch.accelerator.synchronize()
        s = torch.Stream(device="ocl")
        g = torch.accelerator.Graph()
        with s, g:
            out = torch.relu(da @ db) + 1  # matmul: host BLAS native kernel on PoCL
        for k in range(3):
            with s:  # the input update on the replay's stream (streams are not ordered)
                da.mul_(1.5)
                g.replay()
            s.synchronize()
            want = torch.relu((a * 1.5 ** (k + 1)) @ b) + 1
            torch.testing.assert_close(out.cpu(), want, atol=1e-4, rtol=1e-5)


def mlp(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(12, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 5)
    )


@pytest.mark.parametrize("impl", ["foreach", "fused"])
def test_whole_training_step_captured_and_replayed(impl):
    """Forward, backward, grad clipping and AdamW (capturable, foreach or fused) in one graph;
    replayed 3 times with new batches copied into the static input, matching eager ocl and CPU
    step by step."""
    cpu_model = mlp()
    models = {"cpu": cpu_model, "eager": copy.deepcopy(cpu_model).to("ocl"),
              "graph": copy.deepcopy(cpu_model).to("ocl")}
    kw = {"foreach": True} if impl == "foreach" else {"fused": True}
    opts = {k: torch.optim.AdamW(m.parameters(), lr=0.02, weight_decay=0.1,
                                 capturable=k != "cpu", **kw) for k, m in models.items()}
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(9, 12, generator=gen), torch.randint(0, 5, (9,), generator=gen))
               for _ in range(5)]

    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        return loss.detach()

    with torch_ocl.strict():
        # Step 0 eagerly everywhere: it creates the optimizer state and the .grad tensors.
        for k, m in models.items():
            x, y = batches[0]
            if k != "cpu":
                x, y = x.to("ocl"), y.to("ocl")
            step(m, opts[k], x, y)
        sx, sy = batches[1][0].to("ocl"), batches[1][1].to("ocl")
        torch.accelerator.synchronize()
        g = torch.accelerator.Graph()
        with g:
            static_loss = step(models["graph"], opts["graph"], sx, sy)
        want = step(cpu_model, opts["cpu"], *batches[1])
        eager = step(models["eager"], opts["eager"], batches[1][0].to("ocl"),
                     batches[1][1].to("ocl"))
        torch.testing.assert_close(static_loss.cpu(), want, atol=ATOL, rtol=RTOL)
        torch.testing.assert_close(eager.cpu(), want, atol=ATOL, rtol=RTOL)
        for i, (x, y) in enumerate(batches[2:5]):
            sx.copy_(x.to("ocl"))
            sy.copy_(y.to("ocl"))
            g.replay()
            want = step(cpu_model, opts["cpu"], x, y)
            eager = step(models["eager"], opts["eager"], x.to("ocl"), y.to("ocl"))
            torch.testing.assert_close(static_loss.cpu(), want, atol=ATOL, rtol=RTOL,
                                       msg=f"replay {i}")
            torch.testing.assert_close(eager.cpu(), want, atol=ATOL, rtol=RTOL)
    for (name, p), q in zip(cpu_model.named_parameters(), models["graph"].parameters()):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), atol=5e-5, rtol=5e-5, msg=name)


def test_shared_pool_two_graphs_and_reset_recapture():
    x = torch.randn(1000)
    with torch_ocl.strict():
        dx = x.to("ocl")
        (dx * 2).sum()
        torch.accelerator.synchronize()
        g1 = torch.accelerator.Graph()
        with g1:
            a = dx * 2 + 1
        g2 = torch.accelerator.Graph(pool=g1.pool())
        with g2:
            b = torch.tanh(a) * 3
        assert g2.pool() == g1.pool()
        dx.add_(1)
        g1.replay()
        g2.replay()
        torch.testing.assert_close(b.cpu(), torch.tanh((x + 1) * 2 + 1) * 3, atol=ATOL, rtol=RTOL)
        # Memory of the pool is kept while a graph uses it: empty_cache leaves it alone.
        ptr = a.data_ptr()
        del a
        torch.ocl.empty_cache()
        g1.replay()
        g2.replay()
        torch.testing.assert_close(b.cpu(), torch.tanh((x + 1) * 2 + 1) * 3, atol=ATOL, rtol=RTOL)
        # Reset and capture something else with the same Graph object.
        g1.reset()
        g2.reset()
        with g1:
            c = dx.square()
        dx.fill_(3.0)
        g1.replay()
        torch.testing.assert_close(c.cpu(), torch.full((1000,), 9.0))
        assert ptr != 0
        with pytest.raises(RuntimeError, match="already owns a captured graph"):
            g1.capture_begin()


@pytest.mark.parametrize("what", ["item", "pageable_h2d", "manual_seed", "other_stream", "replay"])
def test_uncapturable_op_raises_and_process_stays_usable(what):
    x = torch.randn(100)
    dx = x.to("ocl")
    (dx + 1).sum()
    torch.accelerator.synchronize()
    inner = torch.accelerator.Graph()
    with inner:
        dx.mul_(1.0)
    g = torch.accelerator.Graph()
    with pytest.raises(RuntimeError, match="cannot be captured"):
        with g:
            y = dx + 1
            if what == "item":
                y.sum().item()
            elif what == "pageable_h2d":
                y.add_(torch.ones(100).to("ocl"))
            elif what == "manual_seed":  # random numbers are captured (test_graph_rng.py);
                torch.manual_seed(1)  # setting the generator's state inside a capture is not
            elif what == "replay":
                inner.replay()
            else:
                with torch.Stream(device="ocl"):
                    y.mul_(2)
    # Not capturing any more; eager work and a fresh capture work.
    with torch_ocl.strict():
        torch.testing.assert_close((dx * 2).cpu(), x * 2)
        with g:
            z = dx - 1
        dx.fill_(5.0)
        g.replay()
        torch.testing.assert_close(z.cpu(), torch.full((100,), 4.0))


def test_debug_dump_lists_nodes(tmp_path):
    dx = torch.randn(64, device="ocl")
    (dx * 2).sum()
    torch.accelerator.synchronize()
    g = torch.accelerator.Graph(keep_graph=True)
    g.enable_debug_mode()
    with g:
        y = torch.zeros(64, device="ocl")  # fill node
        y.copy_(dx)  # copy node
        y.mul_(2)  # kernel node
    path = tmp_path / "graph.txt"
    g.debug_dump(str(path))
    text = path.read_text()
    assert "fill" in text and "copy" in text and "kernel" in text, text
    g.replay()
    torch.testing.assert_close(y.cpu(), dx.cpu() * 2)


def test_launches_counted_on_replay():
    dx = torch.randn(64, device="ocl")
    torch.sin(dx)
    torch.accelerator.synchronize()
    g = torch.accelerator.Graph()
    with g:
        torch.sin(dx)
        torch.cos(dx)
    before = torch_ocl._C._kernel_launch_count()
    g.replay()
    assert torch_ocl._C._kernel_launch_count() - before == 2


# ---- torch.compile(mode="reduce-overhead") ------------------------------------------------------


@pytest.mark.usefixtures("fresh_dynamo")
def test_reduce_overhead_mlp_inference_and_training_match_eager_and_cpu():
    cpu_model = mlp(2)
    dev_model = copy.deepcopy(cpu_model).to("ocl")
    f = torch.compile(dev_model, mode="reduce-overhead")
    gen = torch.Generator().manual_seed(4)
    replays0 = ocl_graphs.stats["replays"]
    xs = [torch.randn(8, 12, generator=gen) for _ in range(5)]
    with torch_ocl.strict():
        with torch.no_grad():
            for x in xs:
                torch.testing.assert_close(f(x.to("ocl")).cpu(), cpu_model(x), atol=ATOL,
                                           rtol=RTOL)
        # Outputs kept from earlier calls are not overwritten by later replays.
        with torch.no_grad():
            kept = [f(x.to("ocl")) for x in xs]
        for x, out in zip(xs, kept):
            torch.testing.assert_close(out.cpu(), cpu_model(x), atol=ATOL, rtol=RTOL)
        # Training: forward and backward graphs replayed, gradients as on CPU.
        for x in xs:
            dev_model.zero_grad(set_to_none=True)
            cpu_model.zero_grad(set_to_none=True)
            f(x.to("ocl")).square().sum().backward()
            cpu_model(x).square().sum().backward()
            for p, q in zip(cpu_model.parameters(), dev_model.parameters()):
                torch.testing.assert_close(q.grad.cpu(), p.grad, atol=5e-5, rtol=5e-5)
    # 3 inference calls, 3 forward and 3 backward calls replayed (the others warm up/record).
    assert ocl_graphs.stats["replays"] - replays0 >= 9


@pytest.mark.usefixtures("fresh_dynamo")
def test_reduce_overhead_changing_input_shapes():
    cpu_model = mlp(3)
    dev_model = copy.deepcopy(cpu_model).to("ocl")
    f = torch.compile(dev_model, mode="reduce-overhead", dynamic=True)
    gen = torch.Generator().manual_seed(5)
    recordings0, replays0 = ocl_graphs.stats["recordings"], ocl_graphs.stats["replays"]
    with torch_ocl.strict(), torch.no_grad():
        for rows in (4, 7, 4, 9, 7, 4, 9, 7, 9):
            x = torch.randn(rows, 12, generator=gen)
            torch.testing.assert_close(f(x.to("ocl")).clone().cpu(), cpu_model(x), atol=ATOL,
                                       rtol=RTOL, msg=f"rows={rows}")
    # One recording per size (made at its second call), replayed at the third.
    assert ocl_graphs.stats["recordings"] - recordings0 == 3
    assert ocl_graphs.stats["replays"] - replays0 == 3


@pytest.mark.usefixtures("fresh_dynamo")
def test_reduce_overhead_mutated_buffers():
    """BatchNorm's running statistics (inputs the graph mutates) follow CPU across replays.
    (Graphs with dropout replay too: test_graph_rng.py.)"""
    torch.manual_seed(6)
    cpu_model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.BatchNorm1d(16),
                                    torch.nn.ReLU(), torch.nn.Linear(16, 3))
    dev_model = copy.deepcopy(cpu_model).to("ocl")
    f = torch.compile(dev_model, mode="reduce-overhead")
    gen = torch.Generator().manual_seed(7)
    replays0 = ocl_graphs.stats["replays"]
    with torch_ocl.strict():
        for _ in range(5):
            x = torch.randn(10, 12, generator=gen)
            dev_model.zero_grad(set_to_none=True)
            cpu_model.zero_grad(set_to_none=True)
            f(x.to("ocl")).sum().backward()
            cpu_model(x).sum().backward()
        bn_cpu, bn_dev = cpu_model[1], dev_model[1]
        torch.testing.assert_close(bn_dev.running_mean.cpu(), bn_cpu.running_mean, atol=1e-5,
                                   rtol=1e-5)
        torch.testing.assert_close(bn_dev.running_var.cpu(), bn_cpu.running_var, atol=1e-5,
                                   rtol=1e-5)
        for p, q in zip(cpu_model.parameters(), dev_model.parameters()):
            torch.testing.assert_close(q.grad.cpu(), p.grad, atol=5e-5, rtol=5e-5)
    assert ocl_graphs.stats["replays"] - replays0 >= 6


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_products_capture_where_clblast_is_the_provider(dtype):
    """CLBlast enqueues by itself and cannot be recorded; while a stream captures, products that
    would run on it (GPU drivers, or TORCH_OCL_GEMM=clblast as here) take our tiled kernels. mm,
    addmm, bmm and a linear layer's backward, replayed with new inputs, against CPU."""
    from torch_ocl import _C

    tol = dict(atol=1e-4, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-10)
    gen = torch.Generator().manual_seed(3)
    xs = [torch.randn(5, 37, 29, generator=gen, dtype=dtype) for _ in range(3)]
    w_cpu = torch.randn(29, 23, generator=gen, dtype=dtype)
    bias_cpu = torch.randn(23, generator=gen, dtype=dtype)

    def step(x, w, bias):
        y = torch.addmm(bias, x[0], w)  # 37 x 23
        z = torch.bmm(x, w.expand(5, 29, 23))  # batched, broadcast operand
        return y, z, torch.mm(x[1].t(), x[2])  # a transposed operand

    _C._set_gemm_provider("clblast")
    try:
        with torch_ocl.strict():
            x = xs[0].to("ocl")
            w, bias = w_cpu.to("ocl"), bias_cpu.to("ocl")
            step(x, w, bias)
            torch.accelerator.synchronize()
            assert _C._last_gemm_provider() == "clblast"
            g = torch.accelerator.Graph()
            with g:
                outs = step(x, w, bias)
            assert _C._last_gemm_provider() == "tiled"
            for xc in xs[1:]:
                x.copy_(xc.to("ocl"))
                g.replay()
                for got, want in zip(outs, step(xc, w_cpu, bias_cpu)):
                    torch.testing.assert_close(got.cpu(), want, **tol)
            # Outside the capture CLBlast runs again.
            torch.mm(x[0], w)
            assert _C._last_gemm_provider() == "clblast"
    finally:
        _C._set_gemm_provider("auto")


def test_complex_products_still_refused_under_clblast():
    from torch_ocl import _C

    _C._set_gemm_provider("clblast")
    try:
        a = torch.randn(8, 8, dtype=torch.complex64, device="ocl")
        (a @ a).sum()
        torch.accelerator.synchronize()
        g = torch.accelerator.Graph()
        with pytest.raises(RuntimeError, match="CLBlast"):
            with g:
                a @ a
        torch.accelerator.synchronize()
        assert torch.allclose((a @ a).cpu(), a.cpu() @ a.cpu(), atol=1e-4)  # still usable
    finally:
        _C._set_gemm_provider("auto")
