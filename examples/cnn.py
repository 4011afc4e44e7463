"""Small CNN (conv, batch norm, ReLU, max pooling, dropout, linear) on synthetic MNIST-shaped
images, cross-entropy, AdamW."""

from __future__ import annotations

import torch
import torch.nn as nn

from examples._workload import Workload, cycle, run_main
from examples.mlp import mnist_like


class SmallCNN(nn.Module):
    def __init__(self, width: int, dropout: float):
        super().__init__()
        # No conv bias before batch norm (as in ResNet): BN removes it, so its gradient is rounding
        # noise that AdamW would blow up to full-size steps.
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(2 * width * 49, 10))

    def forward(self, x):
        return self.head(self.features(x))


def workload(device: str = "ocl", *, seed: int = 0, small: bool = False,
             dropout: float = 0.25) -> Workload:
    batch, width = (8, 4) if small else (64, 16)
    torch.manual_seed(seed)
    model = SmallCNN(width, dropout).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    batches = [(x.to(device), y.to(device)) for x, y in mnist_like(batch, 4, seed, image=True)]
    next_batch = cycle(batches)
    model.train()

    def step() -> torch.Tensor:
        x, y = next_batch()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return Workload("cnn", "train", batch, model, step)


def main(argv=None) -> int:
    return run_main(workload, argv)


if __name__ == "__main__":
    raise SystemExit(main())
