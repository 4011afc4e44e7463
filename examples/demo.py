"""torch-ocl demo: list the OpenCL devices, train a small GPT on `ocl`, compare with CPU.

Standard PyTorch code (examples/gpt.py): the only torch-ocl specific line is the device string. Ops
without a native ocl kernel yet run through the (measured) CPU fallback; the report at the end
lists them (it is empty once every op the model needs is native).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from examples import gpt  # noqa: E402

STEPS = 20


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
    sys.stdout.write(f"\r  [{bar}] {step:>3}/{total} loss {loss:.4f} {rate:8.0f} tokens/s")
    sys.stdout.flush()


def train(device: str, show: bool) -> tuple[list[float], float]:
    # Dropout off: ocl and CPU draw different random streams, and the runs are compared.
    w = gpt.workload(device, seed=0, small=True, dropout=0.0)
    losses = []
    t0 = time.perf_counter()
    for step in range(STEPS):
        losses.append(w.step().item())
        if show:
            progress(step + 1, STEPS, losses[-1], (step + 1) * w.items_per_step / (time.perf_counter() - t0))
    if show:
        print()
    return losses, STEPS * w.items_per_step / (time.perf_counter() - t0)


def main() -> int:
    import warnings

    import torch_ocl

    warnings.filterwarnings("ignore", message="torch-ocl: .* has no native ocl kernel")
    list_devices()
    print(f"\nTraining a small GPT (2 layers, causal SDPA attention, AdamW, grad clipping) for "
          f"{STEPS} steps on ocl:")
    ocl_losses, ocl_rate = train("ocl", show=True)
    cpu_losses, cpu_rate = train("cpu", show=False)
    print("step  ocl loss   CPU loss   |diff|")
    for i, (a, b) in enumerate(zip(ocl_losses, cpu_losses)):
        if i % 5 == 0 or i == STEPS - 1:
            print(f"{i + 1:>4}  {a:.6f}  {b:.6f}  {abs(a - b):.1e}")
    diff = max(abs(a - b) for a, b in zip(ocl_losses, cpu_losses))
    agree = diff < 1e-3
    print(f"ocl vs CPU: largest loss difference {diff:.2e} -> {'agree' if agree else 'DISAGREE'}")
    print(f"throughput (first run includes kernel compiles): ocl {ocl_rate:.0f} tokens/s, "
          f"CPU PyTorch {cpu_rate:.0f} tokens/s\n")
    rows = torch_ocl.fallback_report()
    native_note = ("every op ran natively on the ocl device" if not rows else
                   f"{len(rows)} op(s) ran on the CPU through the fallback (see the table above)")
    print(f"\nSummary: {native_note}.")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
