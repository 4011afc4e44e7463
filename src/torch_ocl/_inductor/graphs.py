"""``torch.compile(mode="reduce-overhead")`` on ocl: compiled graphs replayed as captured graphs.

Inductor's CUDA graph trees are CUDA-only and it skips them for other devices, so each compiled
graph whose tensors are all on ocl (forward, backward, inference) is wrapped here, after
Inductor's own post-compile, in a replayer modelled on ``compile_fx.cudagraphify_impl`` (the
simple, non-tree version):

- one recording per distinct set of input shapes/strides/dtypes and integer inputs (dynamic
  shapes: a graph per size), made at the second call with that signature (the first one is the
  warm-up: kernel builds, caches), on the current stream, into a private memory pool;
- inputs that Inductor lists as static (parameters, buffers) are used in place unless the graph
  mutates them (a capture that fails half-way has then changed only our copies), and must keep
  their address (else the call runs without replay); inputs that are outputs of another
  replayed graph (a backward's saved activations) are used in place while their address stays
  the same; every other tensor input is copied into a static buffer before each replay, and
  copied back after it when the graph mutates it;
- a replay returns the recorded (static) output tensors, which the next replay overwrites, as
  CUDA graphs do. Outputs a caller still holds from an earlier call are never overwritten: the
  call then uses a second recording (another pool), and past that runs the compiled graph
  without replay (fresh outputs), so results are never silently changed under the caller;
- a graph that cannot be recorded (a CPU tensor input read by value, a host read, a library
  that enqueues by itself) runs without replay, with a warning once. Random numbers are
  recorded: Inductor's random kernels read their seeds from an eager random_ kernel of the
  graph, whose (seed, offset) each replay redraws from the ocl generator (runtime/graph_rng.h).
"""

from __future__ import annotations

import functools
import sys
import warnings
import weakref
from typing import Any, Callable

import torch

# Recordings made and replays run since the process started (benchmarks and tests read them).
stats = {"recordings": 0, "replays": 0}

_MAX_RECORDINGS = 2  # per input signature; beyond, calls with live old outputs run unreplayed

# data_ptr -> weak reference to a static output tensor of some recording (a later graph that
# takes it as an input, e.g. the backward taking the forward's activations, uses it in place).
_graph_outputs: "weakref.WeakValueDictionary[int, torch.Tensor]" = weakref.WeakValueDictionary()


def _refs(t: torch.Tensor) -> tuple[int, int]:
    return sys.getrefcount(t), torch._C._storage_Use_Count(t.untyped_storage()._cdata)


class _Recording:
    def __init__(self, model, inputs, static_idxs, mutated_idxs):
        self.model = model
        self.static = []
        self.copy_idxs = []
        self.inplace_ptrs = {}
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor):
                self.static.append(x)
            elif i not in mutated_idxs and (i in static_idxs or isinstance(x, torch.nn.Parameter)
                                            or x.data_ptr() in _graph_outputs):
                self.static.append(x)
                self.inplace_ptrs[i] = x.data_ptr()
            else:
                buf = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=x.device)
                buf.copy_(x)
                self.static.append(buf)
                self.copy_idxs.append(i)
        self.copy_back = [i for i in mutated_idxs if i in self.copy_idxs]
        self.graph = torch.accelerator.Graph()
        self.graph.capture_begin()
        try:
            outs = model(list(self.static))
        finally:
            self.graph.capture_end()  # raises when something could not be recorded
        stats["recordings"] += 1
        self.tuple_out = isinstance(outs, tuple)
        self.outputs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        own = {id(t) for t in self.static if isinstance(t, torch.Tensor)}
        self.echoed = [id(o) in own for o in self.outputs]
        for i in self.inplace_ptrs:  # replays read them by address; holding them would keep
            self.static[i] = None  # another recording's outputs looking alive
        for o in self.outputs:
            if isinstance(o, torch.Tensor):
                _graph_outputs[o.data_ptr()] = o
        self.baseline = None

    def _counts(self) -> list:
        # Measured the same way each time (the loop's own references are then the same). An
        # output that is one of the inputs (saved for the backward: a parameter, or our static
        # buffer, which the next call refills whatever happens) is left out.
        return [_refs(o) if isinstance(o, torch.Tensor) and not self.echoed[i] else None
                for i, o in enumerate(self.outputs)]

    def mark_returned(self):
        # Reference counts with only our own references, before the caller gets the outputs.
        self.baseline = self._counts()

    def outputs_free(self) -> bool:
        return self._counts() == self.baseline

    def inputs_fit(self, new_inputs) -> bool:
        return all(new_inputs[i].data_ptr() == p for i, p in self.inplace_ptrs.items())

    def run(self, new_inputs):
        for i in self.copy_idxs:
            self.static[i].copy_(new_inputs[i])
        self.graph.replay()
        stats["replays"] += 1
        for i in self.copy_back:
            new_inputs[i].copy_(self.static[i])
        return self.result()

    def result(self):
        self.mark_returned()
        return tuple(self.outputs) if self.tuple_out else list(self.outputs)


def _signature(inputs) -> tuple:
    key = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            key.append((tuple(x.shape), tuple(x.stride()), x.dtype, x.device))
        elif isinstance(x, (int, float, bool)):
            key.append(x)
        else:
            key.append(type(x).__name__)
    return tuple(key)


@functools.cache
def _warn_once(reason: str) -> None:
    warnings.warn(
        f'torch.compile(mode="reduce-overhead") on ocl: a compiled graph runs without graph '
        f"replay: {reason}",
        stacklevel=3,
    )


def replaying(model: Callable, static_input_idxs, mutated_input_idxs) -> Callable:
    """Wraps a compiled graph's boxed callable (takes a list of inputs and clears it)."""
    static_idxs = frozenset(static_input_idxs or ())
    mutated_idxs = tuple(mutated_input_idxs or ())
    seen: set = set()
    recordings: dict[tuple, list[_Recording]] = {}
    unrecordable: set = set()

    def run(new_inputs: list[Any]):
        key = _signature(new_inputs)
        if key in unrecordable:
            return model(new_inputs)
        if key not in seen:  # warm-up: builds kernels, fills caches
            seen.add(key)
            return model(new_inputs)
        recs = recordings.setdefault(key, [])
        for rec in recs:
            if rec.outputs_free() and rec.inputs_fit(new_inputs):
                out = rec.run(new_inputs)
                new_inputs.clear()
                return out
        if len(recs) >= _MAX_RECORDINGS:
            return model(new_inputs)
        try:
            rec = _Recording(model, new_inputs, static_idxs, mutated_idxs)
        except RuntimeError as e:
            if "cannot be captured" not in str(e) and "capture failed" not in str(e):
                raise
            unrecordable.add(key)
            _warn_once(str(e).split("\n")[0])
            return model(new_inputs)
        # The recording executed the graph on the static inputs: copy back mutations.
        for i in rec.copy_back:
            new_inputs[i].copy_(rec.static[i])
        recs.append(rec)
        new_inputs.clear()
        return rec.result()

    run._boxed_call = True  # type: ignore[attr-defined]
    return run


def _wants_replay(compiled_graph) -> bool:
    import torch._inductor.config as inductor_config

    if not inductor_config.triton.cudagraphs:
        return False
    types = set(getattr(compiled_graph, "device_types", ()) or ())
    return types == {"ocl"}


def _cpu_tensor_inputs(inputs) -> bool:
    return any(isinstance(x, torch.Tensor) and x.device.type != "ocl" for x in inputs)


def install() -> None:
    """Wraps CompiledFxGraph.post_compile once torch._inductor.output_code is imported."""
    from torch._inductor.output_code import CompiledFxGraph

    if getattr(CompiledFxGraph.post_compile, "_ocl_replay", False):
        return
    original = CompiledFxGraph.post_compile

    def post_compile(self, example_inputs, constants, graph_kwargs):
        original(self, example_inputs, constants, graph_kwargs)
        if not _wants_replay(self) or self.current_callable is None:
            return
        if not hasattr(torch.accelerator, "Graph"):  # torch before 2.12
            _warn_once("this torch has no torch.accelerator.Graph")
            return
        if _cpu_tensor_inputs(example_inputs):
            # CPU 0-d tensors (an optimizer's step) are read by value when the graph is called.
            _warn_once("it takes CPU tensors, which the generated code reads at each call")
            return
        # Static inputs of a forward or inference graph: its parameters and buffers. A
        # backward's "static" inputs are the forward's saved tensors, which keep their address
        # only while the forward replays; those are found at recording time (_graph_outputs).
        static = set()
        if not graph_kwargs.get("is_backward"):
            static = set(graph_kwargs.get("static_input_idxs", ()) or ())
            static |= set((self.fx_kwargs or {}).get("static_input_idxs", ()) or ())
        self.current_callable = replaying(
            self.current_callable, static, getattr(self, "mutated_input_idxs", ())
        )

    post_compile._ocl_replay = True  # type: ignore[attr-defined]
    CompiledFxGraph.post_compile = post_compile


def install_when_inductor_loads() -> None:
    from .._import_hook import call_after_import

    call_after_import("torch._inductor.output_code", install)
