"""MLP on synthetic MNIST-shaped data (784 -> hidden -> 10), cross-entropy, SGD with momentum."""

from __future__ import annotations

import torch
import torch.nn as nn

from examples._workload import Workload, cycle, run_main


def mnist_like(batch: int, batches: int, seed: int, image: bool = False) -> list:
    """Ten classes, each a random prototype plus noise: learnable, deterministic, no download."""
    g = torch.Generator().manual_seed(seed + 1)
    protos = torch.randn(10, 784, generator=g)
    data = []
    for _ in range(batches):
        y = torch.randint(0, 10, (batch,), generator=g)
        x = protos[y] + 2.0 * torch.randn(batch, 784, generator=g)
        data.append((x.view(batch, 1, 28, 28) if image else x, y))
    return data


def workload(device: str = "ocl", *, seed: int = 0, small: bool = False,
             dropout: float = 0.1) -> Workload:
    batch, hidden = (16, 64) if small else (128, 512)
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(784, hidden), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10),
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    batches = [(x.to(device), y.to(device)) for x, y in mnist_like(batch, 4, seed)]
    next_batch = cycle(batches)
    model.train()

    def step() -> torch.Tensor:
        x, y = next_batch()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return Workload("mlp", "train", batch, model, step)


def main(argv=None) -> int:
    return run_main(workload, argv)


if __name__ == "__main__":
    raise SystemExit(main())
