"""The example-workload contract shared by examples/*.py, tests/test_models.py and the CLI."""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Callable

import torch


@dataclasses.dataclass
class Workload:
    name: str  # "mlp", "cnn", "gpt", "minilm"
    kind: str  # "train" or "infer"
    items_per_step: int  # samples (tokens for gpt) per step
    model: torch.nn.Module
    step: Callable[[], torch.Tensor]  # one training step / inference batch; result stays on device


def cycle(batches: list) -> Callable[[], tuple]:
    """Returns a function that hands out the batches in turn, forever."""
    state = {"i": 0}

    def next_batch():
        b = batches[state["i"] % len(batches)]
        state["i"] += 1
        return b

    return next_batch


def run_main(workload_fn: Callable[..., Workload], argv=None) -> int:
    """`python -m examples.<name> [--device ocl] [--steps N] [--small]`: runs the steps, prints each
    loss (or output norm) and the fallback report."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="ocl")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    w = workload_fn(args.device, seed=args.seed, small=args.small)
    t0 = time.perf_counter()
    for i in range(args.steps):
        out = w.step()
        value = out.item() if out.numel() == 1 else out.float().norm().item()
        label = "loss" if w.kind == "train" else "output norm"
        print(f"{w.name} step {i + 1}/{args.steps}: {label} {value:.5f}", flush=True)
    dt = time.perf_counter() - t0
    print(f"{w.name} on {args.device}: {args.steps * w.items_per_step / dt:.1f} items/s")
    if args.device.startswith("ocl"):
        import torch_ocl

        torch_ocl.fallback_report()
    return 0
