"""torch-ocl demo: list the OpenCL devices, train a small model on `ocl`, compare with CPU.

Standard PyTorch code: the only torch-ocl specific line is the device string. Ops without a
native ocl kernel yet run through the (measured) CPU fallback; the report at the end lists them.
"""

from __future__ import annotations

import sys
import time

import torch
import torch.nn as nn


def list_devices() -> None:
    import torch_ocl._C as C

    print("OpenCL devices found:")
    for i, d in enumerate(C.all_devices()):
        print(f"  [{i}] {d['type']:<4} {d['name']}  ({d['platform']})")
    if not torch.ocl.is_available():
        print(f"\nNo usable ocl device: {C.discovery_error()}")
        sys.exit(1)
    for i in range(torch.ocl.device_count()):
        p = torch.ocl.get_device_properties(i)
        print(f"ocl:{i} -> {p.name}: {p.compute_units} compute units, "
              f"{p.total_memory / 2**30:.1f} GiB, {p.opencl_c_version}, fp16={p.fp16}, fp64={p.fp64}")


def progress(step: int, total: int, loss: float, rate: float) -> None:
    width = 30
    done = width * step // total
    bar = "#" * done + "-" * (width - done)
    sys.stdout.write(f"\r  [{bar}] {step:>3}/{total} loss {loss:.4f} {rate:7.1f} samples/s")
    sys.stdout.flush()


def train(device: str, steps: int, batch: int, data, show: bool) -> tuple[list[float], float]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xs, ys = data
    losses = []
    t0 = time.perf_counter()
    for step in range(steps):
        x = xs[step % len(xs)].to(device)
        y = ys[step % len(ys)].to(device)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if show:
            progress(step + 1, steps, losses[-1], (step + 1) * batch / (time.perf_counter() - t0))
    if show:
        print()
    return losses, steps * batch / (time.perf_counter() - t0)


def main() -> int:
    import warnings

    import torch_ocl

    warnings.filterwarnings("ignore", message="torch-ocl: .* has no native ocl kernel")
    list_devices()
    steps, batch = 40, 64
    g = torch.Generator().manual_seed(1)
    # Synthetic MNIST-shaped data: 10 classes, each a noisy random prototype.
    protos = torch.randn(10, 784, generator=g)
    ys = [torch.randint(0, 10, (batch,), generator=g) for _ in range(8)]
    xs = [protos[y] + 4.0 * torch.randn(batch, 784, generator=g) for y in ys]

    print(f"\nTraining an MLP (784-128-10, SGD momentum) for {steps} steps of {batch} on ocl:")
    ocl_losses, ocl_rate = train("ocl", steps, batch, (xs, ys), show=True)
    cpu_losses, cpu_rate = train("cpu", steps, batch, (xs, ys), show=False)
    diff = max(abs(a - b) for a, b in zip(ocl_losses, cpu_losses))
    print(f"final loss {ocl_losses[-1]:.4f} (first {ocl_losses[0]:.4f}); "
          f"largest difference from the same run on CPU: {diff:.2e}")
    print(f"throughput: ocl {ocl_rate:.0f} samples/s, CPU PyTorch {cpu_rate:.0f} samples/s\n")
    rows = torch_ocl.fallback_report()
    native_note = ("every op ran natively on the ocl device" if not rows else
                   f"{len(rows)} op(s) ran on the CPU through the fallback (see the table above)")
    print(f"\nSummary: {native_note}.")
    return 0 if diff < 1e-3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
