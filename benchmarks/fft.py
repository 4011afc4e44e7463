"""FFT benchmark: torch.fft on ocl (VkFFT plans) against CPU PyTorch (MKL in the pinned x86 wheel,
pocketfft elsewhere) on the same machine, in one process run.

    python benchmarks/fft.py [--device 0] [--reps 7] [--json out.json]

Each row times one call (median of --reps, after a warm-up call that builds the plan: "cold" is
that first call, plan build and kernel compile included). ratio = cpu_time / ocl_time (> 1: the
device is faster). On PoCL both run on the same CPU cores, so the ratio compares the two FFT
implementations (VkFFT's kernels are written for GPUs; PoCL runs them on the CPU); on a shared
machine the figures are noisy. CPU PyTorch keeps no MKL plan between calls, ours are cached.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import time

import torch
import torch_ocl  # noqa: F401
from _timing import rep_times  # benchmarks/_timing.py, beside this script


def timed(fn, reps: int, sync) -> tuple[float, float]:
    t0 = time.perf_counter()
    fn()
    sync()
    cold = time.perf_counter() - t0
    return cold, statistics.median(rep_times(fn, reps, sync))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()

    dev = torch.device("ocl", args.device)
    props = torch.ocl.get_device_properties(args.device)
    sync = lambda: torch.ocl.synchronize(args.device)  # noqa: E731
    g = torch.Generator().manual_seed(0)
    c64 = lambda *s: torch.randn(*s, 2, generator=g).view(torch.complex64).squeeze(-1)  # noqa: E731
    f32 = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    def stft(t):
        window = torch.hann_window(512, device=t.device)
        return torch.stft(t, 512, hop_length=128, window=window, return_complex=True)

    cases = [
        ("fft c2c 2^20", c64(1 << 20), lambda t: torch.fft.fft(t)),
        ("fft c2c 256 x 1000", c64(256, 1000), lambda t: torch.fft.fft(t)),
        ("fft c2c 256 x 1009 (prime)", c64(256, 1009), lambda t: torch.fft.fft(t)),
        ("rfft 2^20", f32(1 << 20), lambda t: torch.fft.rfft(t)),
        ("irfft 2^20", c64((1 << 19) + 1), lambda t: torch.fft.irfft(t)),
        ("fft2 1024 x 1024", c64(1024, 1024), lambda t: torch.fft.fft2(t)),
        ("rfftn 64^3", f32(64, 64, 64), lambda t: torch.fft.rfftn(t)),
        ("stft 16 x 16000, n_fft 512", f32(16, 16000), stft),
    ]
    results: dict = {
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_threads": torch.get_num_threads(),
        "reps": args.reps,
        "rows": [],
    }
    print(f"{'case':32s} {'ocl cold s':>10s} {'ocl ms':>9s} {'cpu ms':>9s} {'ratio':>6s}")
    for name, x, fn in cases:
        xd = x.to(dev)
        cold, ours = timed(lambda: fn(xd), args.reps, sync)
        _, cpu = timed(lambda: fn(x), args.reps, lambda: None)
        ratio = cpu / ours
        results["rows"].append(dict(case=name, ocl_cold_s=cold, ocl_s=ours, cpu_s=cpu, ratio=ratio))
        print(f"{name:32s} {cold:10.3f} {ours * 1e3:9.2f} {cpu * 1e3:9.2f} {ratio:6.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
