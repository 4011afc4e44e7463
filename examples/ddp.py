"""Data-parallel training of the example GPT on ocl devices, launched by torchrun:

    torchrun --nproc-per-node 2 examples/ddp.py            # DistributedDataParallel
    torchrun --nproc-per-node 2 examples/ddp.py --fsdp     # FSDP2 (fully_shard)

Each rank trains on its own shard of a synthetic token stream; gradients are averaged by the
ocl_gloo backend (torch-ocl's c10d backend over PyTorch's gloo), which init_process_group()
picks by itself on an ocl machine. Rank 0 prints the loss averaged over the ranks.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from examples.gpt import GPT, GPTConfig, token_stream  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8, help="sequences per rank")
    ap.add_argument("--fsdp", action="store_true", help="shard with FSDP2 instead of DDP")
    ap.add_argument("--small", action="store_true", help="a 2-layer, 32-wide model")
    args = ap.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    # Each rank may open its own device (PoCL: every process gets the CPU device 0).
    index = local_rank % max(torch.accelerator.device_count(), 1)
    device = torch.device("ocl", index)
    torch.accelerator.set_device_index(index)
    dist.init_process_group(device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()

    cfg = (GPTConfig(vocab=64, block=16, layers=2, heads=2, embd=32, dropout=0.0) if args.small
           else GPTConfig(vocab=128, block=32, layers=2, heads=4, embd=64, dropout=0.0))
    torch.manual_seed(0)
    model = GPT(cfg).to(device)
    if args.fsdp:
        from torch.distributed.fsdp import fully_shard

        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        wrapped = model
    else:
        from torch.nn.parallel import DistributedDataParallel as DDP

        wrapped = DDP(model)
    opt = torch.optim.AdamW(wrapped.parameters(), lr=3e-3)
    data = token_stream(cfg.vocab, cfg.block, args.batch * world, args.steps, seed=0)

    t0 = time.perf_counter()
    for step, (x, y) in enumerate(data):
        x = x.chunk(world)[rank].to(device)
        y = y.chunk(world)[rank].to(device)
        opt.zero_grad(set_to_none=True)
        loss = wrapped(x, y)
        loss.backward()
        opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"step {step:3d}  loss {avg.item():.4f}", flush=True)
    if rank == 0:
        mode = "FSDP2" if args.fsdp else "DDP"
        print(f"{mode} on {world} ranks ({dist.get_backend()}): "
              f"{(time.perf_counter() - t0) / len(data) * 1000:.1f} ms/step", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
