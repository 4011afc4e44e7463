"""Hidden host waits in an eager training step: where the host blocks on the device.

An eager step on ``ocl`` only enqueues: forward, backward, clipping and the optimizer should each
return to Python in milliseconds while the device works, and the step's time should appear at the
final ``synchronize()`` ("drain"). A phase whose host time is close to the device time queued
before it waited for the queue somewhere (a blocking map, a clWaitForEvents, a read) and shows up
in torch.profiler as CPU time of whatever op waited (``aten::empty`` inside AdamW's first foreach
op when pinned staging buffers were mapped on stream 0; ``aten::mm`` of a host-BLAS product whose
output block is in a segment the BLAS has not seen yet). Such waits cost little when the step is
device-bound, but they serialise host and device and mislead profiles.

Model: nanoGPT's shakespeare-char configuration as in ``benchmarks/compile.py --models nanogpt``
(6 layers, 6 heads, 384 wide, block 256, vocab 65, batch 4, AdamW, clipping at 1.0).

    PYTHONPATH=src .venv/bin/python benchmarks/host_waits.py [--steps 5] [--batch 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

import torch_ocl  # noqa: F401  (registers the device)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=4)
    args = ap.parse_args()

    from examples._workload import cycle
    from examples.gpt import GPT, GPTConfig, token_stream

    cfg = GPTConfig(vocab=65, block=256, layers=6, heads=6, embd=384, dropout=0.0)
    torch.manual_seed(0)
    model = GPT(cfg).to("ocl")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    batches = [(x.to("ocl"), y.to("ocl"))
               for x, y in token_stream(cfg.vocab, cfg.block, args.batch, 2, 0)]
    next_batch = cycle(batches)
    model.train()

    rows = []
    for i in range(args.steps + 1):  # step 0 compiles kernels and creates segments: shown apart
        torch.ocl.synchronize()
        x, y = next_batch()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t3 = time.perf_counter()
        torch.ocl.synchronize()
        t4 = time.perf_counter()
        row = {"forward": t1 - t0, "backward": t2 - t1, "clip+adamw": t3 - t2, "drain": t4 - t3,
               "step": t4 - t0}
        rows.append(row)
        print(f"step {i}: " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in row.items()),
              flush=True)
    warm = rows[1:]
    print("median of warm steps (host time per phase; a large phase other than drain = a wait):")
    for k in rows[0]:
        print(f"  {k:>10}: {statistics.median(r[k] for r in warm) * 1e3:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
