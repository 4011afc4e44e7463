"""torch.compile on ocl against eager ocl: step time and kernel launches per step of the example
models, and cold vs warm compile time (a fresh process each, with empty and then warm caches:
Inductor's, our program cache's and PoCL's). Medians of warm steps; the compile (first call) is
reported apart. Prints JSON, then a short table.

Two compiled forms: "compiled" compiles the model's forward (so its backward; loss outside the
model, clipping and the optimizer stay eager), "step" compiles the whole training step
(``torch.compile(step)``: forward and loss, backward, clipping and the optimizer step, with
Dynamo's graph break at ``backward()``). "infer" rows (``--infer``; always for nanogpt) time the
model's forward under ``torch.no_grad()`` in eval mode, eager against ``torch.compile``.

Models: the example workloads (mlp, cnn, gpt, minilm; ``--small`` for their small sizes) and
``nanogpt``, nanoGPT's shakespeare-char model (6 layers, 6 heads, 384 wide, block 256, vocab
65, no dropout; batch ``--nanogpt-batch``, default 4 on a CPU device), trained with AdamW and
gradient clipping as nanoGPT's train.py does.

    .venv/bin/python benchmarks/compile.py [--models mlp,gpt] [--steps 10] [--small] [--no-cold]
                                           [--cpu]   # also eager and Inductor's C++ backend on
                                                     # CPU tensors, in a fresh process
                                           [--infer] # also inference rows
                                           [--breakdown]  # device kernel time per step, host time in graphs
                                           [--sdpa-fused] # also a step with attention as
                                                          # the eager fused kernels
                                           [--fused-mm MACS]  # also a step with small products
                                                              # lowered as fused reductions
                                           [--rounds N]  # interleaved repeats, best median
                                           [--dropout P]  # cnn and gpt with dropout P
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import torch_ocl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def nanogpt_workload(device: str, batch: int):
    """nanoGPT's shakespeare-char configuration (config/train_shakespeare_char.py: n_layer 6,
    n_head 6, n_embd 384, block_size 256, vocab 65), dropout off so eager and compiled draw
    nothing; AdamW (lr 1e-3, betas 0.9/0.99, weight decay 0.1) with clipping at 1.0."""
    from examples._workload import Workload, cycle
    from examples.gpt import GPT, GPTConfig, token_stream

    cfg = GPTConfig(vocab=65, block=256, layers=6, heads=6, embd=384, dropout=0.0)
    torch.manual_seed(0)
    model = GPT(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    batches = [(x.to(device), y.to(device))
               for x, y in token_stream(cfg.vocab, cfg.block, batch, 2, 0)]
    next_batch = cycle(batches)
    model.train()

    def step() -> torch.Tensor:
        x, y = next_batch()
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    return Workload("nanogpt", "train", batch * cfg.block, model, step)


NANOGPT_BATCH = 4
DROPOUT = 0.0  # dropout probability of the example models that have one (--dropout)


def workload(name: str, small: bool, device: str = "ocl"):
    if name == "nanogpt":
        return nanogpt_workload(device, NANOGPT_BATCH)
    mod = importlib.import_module(f"examples.{name}")
    kw = {"small": small}
    if "dropout" in mod.workload.__code__.co_varnames:
        # Off by default: eager and compiled dropout draw different numbers (Inductor's random
        # kernels have their own seeds). --dropout P times the steps with it, the
        # reduce-overhead and captured rows replaying their random kernels.
        kw["dropout"] = DROPOUT
    return mod.workload(device, **kw)


def sync(device: str) -> None:
    if device == "ocl":
        torch.ocl.synchronize()


def compile_step(step):
    """torch.compile of a workload's whole step. Its batch iterator (a Python counter) stays
    outside the graphs: traced, the counter would be a constant and every step a recompile."""
    names = step.__code__.co_freevars
    if "next_batch" in names:
        cell = step.__closure__[names.index("next_batch")]
        cell.cell_contents = torch._dynamo.disable(cell.cell_contents)
    return torch.compile(step)


def inference_step(w, compiled: bool):
    """The model's forward on one batch of its training step, under no_grad in eval mode (the
    arguments are those of the step's first forward; a GPT gets no targets, so it returns
    logits)."""
    captured = []
    handle = w.model.register_forward_pre_hook(
        lambda mod, args, kwargs: captured.append((args, kwargs)), with_kwargs=True)
    try:
        w.step()
    finally:
        handle.remove()
    args, kwargs = captured[0]
    if type(w.model).__name__ == "GPT":
        args = args[:1]
    w.model.eval()
    fwd = torch.compile(w.model) if compiled else w.model

    def step():
        with torch.no_grad():
            return fwd(*args, **kwargs)

    return step


def measure(name: str, compiled, steps: int, small: bool, device: str = "ocl",
            infer: bool = False) -> dict:
    torch._dynamo.reset()
    w = workload(name, small, device)
    step = w.step
    if infer and w.kind == "train":  # (an inference workload's step is a forward already)
        step = inference_step(w, bool(compiled))
    elif compiled == "step":
        step = compile_step(w.step)
    elif compiled == "reduce-overhead":
        w.model.forward = torch.compile(w.model.forward, mode="reduce-overhead")
    elif compiled:
        # torch.compile of the model's forward (and so its backward); the optimizer stays eager.
        # (nn.Module.compile() traced nothing in this PyTorch build.)
        w.model.forward = torch.compile(w.model.forward)
    t0 = time.perf_counter()
    step()
    sync(device)
    first = time.perf_counter() - t0
    step()  # a second warm-up: compiled steps may recompile once (e.g. optimizer state)
    sync(device)
    times, launches, graph_times = [], [], []
    with graph_timer(BREAKDOWN and bool(compiled)) as in_graphs:
        for _ in range(steps):
            n0, g0 = torch_ocl._C._kernel_launch_count(), in_graphs[0]
            t0 = time.perf_counter()
            step()
            sync(device)
            times.append(time.perf_counter() - t0)
            launches.append(torch_ocl._C._kernel_launch_count() - n0)
            graph_times.append(in_graphs[0] - g0)
    # the graph time of the median step (a mean would mix in the slowest steps)
    median_step = sorted(range(steps), key=times.__getitem__)[steps // 2]
    return {
        "first_step_s": first,
        "step_ms": statistics.median(times) * 1e3,
        "launches_per_step": statistics.median(launches),
        **({"device_ms_per_step": device_time_ms(step, device)} if BREAKDOWN else {}),
        **({"graph_ms_per_step": graph_times[median_step] * 1e3}
           if BREAKDOWN and compiled else {}),
    }


@contextlib.contextmanager
def graph_timer(on: bool):
    """Host time spent inside Inductor's generated graphs (every ``CompiledFxGraph.__call__``:
    their launches, extern calls and allocations), summed while on; the rest of a compiled step
    is PyTorch's own per-step work (Dynamo's guards and frames, AOTAutograd's wrappers, the
    autograd engine, the optimizer's Python) and the final synchronisation."""
    total = [0.0]
    if not on:
        yield total
        return
    from torch._inductor import output_code

    orig = output_code.CompiledFxGraph.__call__

    def timed(self, inputs):
        t0 = time.perf_counter()
        try:
            return orig(self, inputs)
        finally:
            total[0] += time.perf_counter() - t0

    output_code.CompiledFxGraph.__call__ = timed
    try:
        yield total
    finally:
        output_code.CompiledFxGraph.__call__ = orig


def _capturable(step) -> None:
    """Makes the optimizer in a workload's step closure capturable (its step counts on the device,
    bias corrections computed there), as graph capture needs; before its state exists."""
    names = step.__code__.co_freevars
    if "opt" in names:
        opt = step.__closure__[names.index("opt")].cell_contents
        for g in opt.param_groups:
            if "capturable" in g:
                g["capturable"] = True


def measure_captured(name: str, steps: int, small: bool) -> dict:
    """The workload's whole eager training step captured once in a torch.accelerator.Graph and
    replayed (the batch of the capture every time: a timing of the replay, not of training)."""
    torch._dynamo.reset()
    w = workload(name, small)
    _capturable(w.step)
    w.step()
    w.step()  # optimizer state and .grad exist, kernels built
    sync("ocl")
    g = torch.accelerator.Graph()
    t0 = time.perf_counter()
    with g:
        w.step()
    sync("ocl")
    first = time.perf_counter() - t0
    times, launches = [], []
    for _ in range(steps):
        n0 = torch_ocl._C._kernel_launch_count()
        t0 = time.perf_counter()
        g.replay()
        sync("ocl")
        times.append(time.perf_counter() - t0)
        launches.append(torch_ocl._C._kernel_launch_count() - n0)
    return {"first_step_s": first, "step_ms": statistics.median(times) * 1e3,
            "launches_per_step": statistics.median(launches)}


BREAKDOWN = False


def device_time_ms(step, device: str, steps: int = 3) -> float:
    """Kernel time per step on the device (torch.profiler's PrivateUse1 events: every kernel,
    copy and fill our runtime enqueues), for the breakdown of a step into device and host."""
    if device != "ocl":
        return float("nan")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.PrivateUse1]) as p:
        for _ in range(steps):
            step()
        sync(device)
    total_us = sum(e.time_range.end - e.time_range.start for e in p.events()
                   if e.device_type != torch.autograd.DeviceType.CPU)
    return total_us / steps / 1e3


def cpu_in_fresh_process(name: str, small: bool, steps: int, rounds: int) -> dict:
    """Eager and compiled (Inductor's C++ backend) steps on CPU tensors, in a process of their
    own with ``OMP_WAIT_POLICY=PASSIVE`` (unless set already).

    Why: in the benchmark's process the CPU rows ran 10-400x slower, at random (138 ms for a
    0.6 ms mlp step; small GPT's eager CPU step 80-1000 ms against 3-6 ms). The cause is
    libgomp's default active wait: PyTorch's OpenMP team of 2 threads spins at every barrier,
    and on a 2-core machine shared with PoCL's worker threads (pinned one per core by
    torch-ocl's POCL_AFFINITY=1 default) and other processes, a spinning thread holds the core
    its partner needs. It shows without torch-ocl too, only less often; with the passive policy
    (threads sleep at barriers) the same steps take their normal time. libgomp reads the
    variable when it loads, with ``import torch``, hence the fresh process."""
    code = (
        "import json, os, sys, torch\n"
        f"sys.argv = ['x']; sys.path.insert(0, {ROOT!r})\n"
        "import benchmarks.compile as bc; from benchmarks.compile import measure\n"
        f"bc.DROPOUT = {DROPOUT!r}\n"
        "out = {'threads': torch.get_num_threads()}\n"
        f"for _ in range({rounds}):\n"
        "    for key, form in (('cpu_eager', False), ('cpu_compiled', True), ('cpu_step', 'step')):\n"
        f"        m = measure({name!r}, form, {steps}, {small!r}, 'cpu')\n"
        "        if key not in out or m['step_ms'] < out[key]['step_ms']: out[key] = m\n"
        "out['loadavg'] = os.getloadavg()[0]\n"
        "out['omp_wait_policy'] = os.environ.get('OMP_WAIT_POLICY')\n"
        "print('CPUJSON', json.dumps(out))\n"
    )
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("CPUJSON"):
            return json.loads(line[len("CPUJSON"):])
    raise RuntimeError(r.stderr[-2000:])


def compile_time_in_fresh_process(name: str, small: bool, cache_dir: str) -> dict:
    code = (
        "import sys, time, torch, torch_ocl\n"
        f"sys.argv = ['x']; sys.path.insert(0, {ROOT!r})\n"
        "import benchmarks.compile as bc; from benchmarks.compile import workload\n"
        f"bc.DROPOUT = {DROPOUT!r}\n"
        f"w = workload({name!r}, {small!r})\n"
        "w.model.forward = torch.compile(w.model.forward)\n"
        "t0 = time.perf_counter(); w.step(); torch.ocl.synchronize()\n"
        "print('FIRST', time.perf_counter() - t0)\n"
        "from torch._dynamo.utils import counters\n"
        "print('HITS', counters['inductor']['fxgraph_cache_hit'])\n"
        "print('AOTHITS', counters['aot_autograd']['autograd_cache_hit'])\n"
        "s = torch_ocl._C.program_cache_stats(0)\n"
        "print('PROGRAMS', s['disk_hits'], s['compiles'], s['compile_seconds'])\n"
    )
    # Every cache in cache_dir: Inductor's, our program binaries, PoCL's (a cold process builds
    # everything; the warm one finds what the cold one left).
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache_dir,
           "TORCH_OCL_CACHE_DIR": os.path.join(cache_dir, "torch_ocl"),
           "POCL_CACHE_DIR": os.path.join(cache_dir, "pocl")}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("FIRST"):
            out["seconds"] = float(line.split()[1])
        if line.startswith("HITS"):
            out["fxgraph_cache_hits"] = int(line.split()[1])
        if line.startswith("AOTHITS"):
            out["aot_autograd_cache_hits"] = int(line.split()[1])
        if line.startswith("PROGRAMS"):  # our program cache: binaries loaded, built from source
            _, hits, builds, seconds = line.split()
            out["program_disk_hits"], out["program_builds"] = int(hits), int(builds)
            out["program_build_s"] = float(seconds)
    if "seconds" not in out:
        raise RuntimeError(r.stderr[-2000:])
    return out


def _median_us(fn, reps: int = 15) -> float:
    for _ in range(3):
        fn()
    sync("ocl")
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync("ocl")
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6


def reductions(rounds: int) -> list[dict]:
    """Reductions over the batch (dim 0 of a (rows, cols) tensor), as a transformer's backward
    has them: eager, compiled, and compiled with one work item per column
    (config.column_lanes=0, the shape before the column tiles). Wall-clock medians with a sync,
    the best of ``rounds`` interleaved rounds."""
    from torch_ocl._inductor import config as ocl_config

    def ln_weight_grads(g, x):  # layer-norm weight and bias gradients
        xhat = torch.nn.functional.layer_norm(x, x.shape[-1:])
        return (g * xhat).sum(0), g.sum(0)

    def col_sum(g, x):
        return g.sum(0)

    def col_amax_var(g, x):
        return (g * x).amax(0), torch.var_mean(g, 0)

    out = []
    for rows, cols in ((4096, 768), (8192, 128), (512, 3072)):
        g = torch.randn(rows, cols, device="ocl")
        x = torch.randn(rows, cols, device="ocl")
        for fn in (ln_weight_grads, col_sum, col_amax_var):
            best: dict = {}
            for _ in range(rounds):
                for key, lanes in (("compiled", ocl_config.column_lanes), ("per_column", 0)):
                    torch._dynamo.reset()
                    with ocl_config.patch(column_lanes=lanes):
                        c = torch.compile(fn)
                        c(g, x)
                        us = _median_us(lambda: c(g, x))
                    best[key] = min(best.get(key, us), us)
                us = _median_us(lambda: fn(g, x))
                best["eager"] = min(best.get("eager", us), us)
            out.append({"op": fn.__name__, "shape": [rows, cols],
                        **{f"{k}_us": round(v, 1) for k, v in best.items()}})
    torch._dynamo.reset()
    return out


def main() -> int:
    global BREAKDOWN, NANOGPT_BATCH, DROPOUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,gpt")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--no-cold", action="store_true")
    ap.add_argument("--cpu", action="store_true",
                    help="also eager and torch.compile on CPU tensors (a fresh process)")
    ap.add_argument("--infer", action="store_true",
                    help="also inference (no_grad forward, eval mode), eager and compiled")
    ap.add_argument("--breakdown", action="store_true",
                    help="also the device kernel time per step (torch.profiler)")
    ap.add_argument("--nanogpt-batch", type=int, default=NANOGPT_BATCH)
    ap.add_argument("--fused-mm", type=int, default=None, metavar="MACS",
                    help="also the whole step with products up to MACS multiply-adds lowered "
                         "as fused reductions (config.small_mm_max_macs)")
    ap.add_argument("--sdpa-fused", action="store_true",
                    help="also the whole step with attention kept as calls of the eager fused "
                         "kernels (config.sdpa_math_min_scores=0)")
    ap.add_argument("--reduce-overhead", action="store_true",
                    help='also torch.compile(forward, mode="reduce-overhead") (compiled graphs '
                    "replayed as captured graphs) and the eager whole step captured in a "
                    "torch.accelerator.Graph and replayed")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="dropout probability of the example models that have dropout (cnn, "
                         "gpt; default 0: eager and compiled draw different numbers)")
    ap.add_argument("--reductions", action="store_true",
                    help="also reductions over the batch (layer-norm weight gradients, column "
                         "sums): eager, compiled, and compiled with one work item per column")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure every form this many times, interleaved; report the best")
    args = ap.parse_args()
    BREAKDOWN, NANOGPT_BATCH, DROPOUT = args.breakdown, args.nanogpt_batch, args.dropout
    results = {"device": torch.ocl.get_device_name(0), "small": args.small, "dropout": DROPOUT,
               "pocl_affinity": os.environ.get("POCL_AFFINITY", "1 (torch-ocl's default)"),
               "loadavg_start": os.getloadavg()[0], "models": {}}
    for name in filter(None, args.models.split(",")):
        r: dict = {}

        def best(key, *a, **kw):  # the lowest median over the rounds (others' load only adds time)
            m = measure(name, *a, **kw)
            if key not in r or m["step_ms"] < r[key]["step_ms"]:
                r[key] = {**m, "first_step_s": r.get(key, m)["first_step_s"]}

        infer = args.infer or name == "nanogpt"
        for _ in range(args.rounds):  # interleaved: eager and compiled see the same load
            best("eager", False, args.steps, args.small)
            best("compiled", True, args.steps, args.small)
            best("step", "step", args.steps, args.small)
            if args.reduce_overhead:
                best("compiled_ro", "reduce-overhead", args.steps, args.small)
                m = measure_captured(name, args.steps, args.small)
                if "captured" not in r or m["step_ms"] < r["captured"]["step_ms"]:
                    r["captured"] = m
            if infer:
                best("infer_eager", False, args.steps, args.small, infer=True)
                best("infer_compiled", True, args.steps, args.small, infer=True)
            if args.fused_mm is not None:
                from torch_ocl._inductor import config as ocl_config

                with ocl_config.patch(small_mm_max_macs=args.fused_mm):
                    best("step_fused_mm", "step", args.steps, args.small)
            if args.sdpa_fused:
                from torch_ocl._inductor import config as ocl_config

                with ocl_config.patch(sdpa_math_min_scores=0):
                    best("step_sdpa_fused", "step", args.steps, args.small)
        if args.cpu:  # eager and Inductor's C++ backend on CPU tensors, same cores
            r["cpu"] = cpu_in_fresh_process(name, args.small, args.steps, max(args.rounds, 2))
        if not args.no_cold:
            with tempfile.TemporaryDirectory() as d:
                cold = compile_time_in_fresh_process(name, args.small, d)
                warm = compile_time_in_fresh_process(name, args.small, d)
                r["cold_compile_s"], r["warm_compile_s"] = cold["seconds"], warm["seconds"]
                r["warm_fxgraph_cache_hits"] = warm.get("fxgraph_cache_hits", 0)
                r["warm_aot_autograd_cache_hits"] = warm.get("aot_autograd_cache_hits", 0)
                r["cold_program_builds"] = cold.get("program_builds", 0)
                r["warm_program_disk_hits"] = warm.get("program_disk_hits", 0)
                r["warm_program_builds"] = warm.get("program_builds", 0)
        results["models"][name] = r
    if args.reductions:
        results["reductions"] = reductions(max(args.rounds, 2))
    results["loadavg_end"] = os.getloadavg()[0]
    print(json.dumps(results, indent=2))
    print(f"\n{results['device']} ({'small' if args.small else 'default'} models; "
          f"POCL_AFFINITY={results['pocl_affinity']}; load average "
          f"{results['loadavg_start']:.1f} -> {results['loadavg_end']:.1f})")
    print(f"{'model':<8}{'eager ms':>10}{'compiled ms':>13}{'speedup':>9}"
          f"{'step ms':>9}{'speedup':>9}"
          f"{'launches e/c/s':>17}{'cold s':>8}{'warm s':>8}")
    for name, r in results["models"].items():
        e, c, st = r["eager"], r["compiled"], r["step"]
        print(f"{name:<8}{e['step_ms']:>10.2f}{c['step_ms']:>13.2f}"
              f"{e['step_ms'] / c['step_ms']:>8.2f}x{st['step_ms']:>9.2f}"
              f"{e['step_ms'] / st['step_ms']:>8.2f}x"
              f"{e['launches_per_step']:>7.0f}/{c['launches_per_step']:.0f}"
              f"/{st['launches_per_step']:<5.0f}"
              f"{r.get('cold_compile_s', float('nan')):>8.1f}"
              f"{r.get('warm_compile_s', float('nan')):>8.1f}")
        if "device_ms_per_step" in st:
            print(f"{'':<8}device kernel time per step: eager {e['device_ms_per_step']:.2f} ms "
                  f"({e['device_ms_per_step'] / e['step_ms']:.0%} of the step), compiled step "
                  f"{st['device_ms_per_step']:.2f} ms "
                  f"({st['device_ms_per_step'] / st['step_ms']:.0%}); host time inside the "
                  f"generated graphs {st['graph_ms_per_step']:.2f} ms "
                  f"({st['graph_ms_per_step'] / st['step_ms']:.0%} of the compiled step)")
        if "compiled_ro" in r:
            ro, cap = r["compiled_ro"], r["captured"]
            print(f"{'':<8}reduce-overhead (compiled forward+backward replayed): "
                  f"{ro['step_ms']:.2f} ms ({e['step_ms'] / ro['step_ms']:.2f}x eager, "
                  f"{c['step_ms'] / ro['step_ms']:.2f}x compiled), "
                  f"{ro['launches_per_step']:.0f} launches; eager whole step captured and "
                  f"replayed: {cap['step_ms']:.2f} ms ({e['step_ms'] / cap['step_ms']:.2f}x "
                  f"eager), {cap['launches_per_step']:.0f} launches")
        if "infer_eager" in r:
            ie, ic = r["infer_eager"], r["infer_compiled"]
            print(f"{'':<8}inference: eager {ie['step_ms']:.2f} ms, compiled {ic['step_ms']:.2f} "
                  f"ms ({ie['step_ms'] / ic['step_ms']:.2f}x), launches "
                  f"{ie['launches_per_step']:.0f}/{ic['launches_per_step']:.0f}")
        if "cpu" in r:
            cp = r["cpu"]
            print(f"{'':<8}CPU tensors ({cp['threads']} threads, fresh process, "
                  f"OMP_WAIT_POLICY={cp['omp_wait_policy']}, load "
                  f"{cp['loadavg']:.1f}): eager {cp['cpu_eager']['step_ms']:.2f} ms, compiled "
                  f"{cp['cpu_compiled']['step_ms']:.2f} ms, step {cp['cpu_step']['step_ms']:.2f} "
                  f"ms; ocl compiled step / CPU compiled step "
                  f"{st['step_ms'] / cp['cpu_step']['step_ms']:.2f}")
        if "cold_compile_s" in r:
            print(f"{'':<8}warm/cold {r['warm_compile_s'] / r['cold_compile_s']:.0%}; warm process: "
                  f"{r['warm_fxgraph_cache_hits']} FX-graph and {r['warm_aot_autograd_cache_hits']} "
                  f"AOT-autograd cache hits, {r['warm_program_disk_hits']} programs from our "
                  f"disk cache, {r['warm_program_builds']} built from source "
                  f"(cold: {r['cold_program_builds']})")
        if "step_sdpa_fused" in r:
            f = r["step_sdpa_fused"]
            print(f"{'':<8}step with attention as the eager fused kernels: {f['step_ms']:.2f} ms "
                  f"({e['step_ms'] / f['step_ms']:.2f}x), {f['launches_per_step']:.0f} launches")
        if "step_fused_mm" in r:
            f = r["step_fused_mm"]
            print(f"{'':<8}step with products <= {args.fused_mm} MACs fused: {f['step_ms']:.2f} ms "
                  f"({e['step_ms'] / f['step_ms']:.2f}x), {f['launches_per_step']:.0f} launches")
    if "reductions" in results:
        print(f"\nreductions over the batch (us, wall median with sync; per-column: "
              f"config.column_lanes=0)\n{'op':<16}{'shape':>12}{'eager':>9}{'compiled':>10}"
              f"{'per-column':>12}{'tiles/per-column':>18}{'eager/compiled':>16}")
        for q in results["reductions"]:
            print(f"{q['op']:<16}{'x'.join(map(str, q['shape'])):>12}{q['eager_us']:>9.0f}"
                  f"{q['compiled_us']:>10.0f}{q['per_column_us']:>12.0f}"
                  f"{q['per_column_us'] / q['compiled_us']:>17.2f}x"
                  f"{q['eager_us'] / q['compiled_us']:>15.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
