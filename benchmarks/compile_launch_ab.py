"""A/B of the compiled step with and without the launch-saving rewrites of lowering.py (grouped
independent products, torch_ocl::mm_group; gelu(addmm) with the pre-activation kept,
torch_ocl::addmm_with_activation), interleaved in one process, plus eager: launches per step
(deterministic) and the median step time of each round (the machine may be shared: compare
ratios from the same round).

    .venv/bin/python benchmarks/compile_launch_ab.py [--models gpt,mlp] [--rounds 3] [--steps 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.compile import measure  # noqa: E402


def main() -> int:
    from torch_ocl._inductor import config

    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="gpt,mlp")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    forms = {
        "eager": (False, {}),
        "step_off": ("step", {"group_mm_max_macs": 0, "addmm_activation_pair": False}),
        "step_on": ("step", {}),
    }
    print(f"load average at start {os.getloadavg()[0]:.1f}")
    for name in args.models.split(","):
        rows: dict = {k: [] for k in forms}
        launches: dict = {}
        for _ in range(args.rounds):
            for key, (form, patch) in forms.items():
                with config.patch(**patch):
                    m = measure(name, form, args.steps, True)
                rows[key].append(m["step_ms"])
                launches[key] = m["launches_per_step"]
        for r in range(args.rounds):
            e, off, on = (rows[k][r] for k in forms)
            print(f"{name} round {r}: eager {e:.2f} ms, step without {off:.2f} ms, with "
                  f"{on:.2f} ms (with/without {on / off:.2f}, eager/with {e / on:.2f})")
        med = {k: statistics.median(v) for k, v in rows.items()}
        print(f"{name} medians over rounds: eager {med['eager']:.2f}, without "
              f"{med['step_off']:.2f}, with {med['step_on']:.2f} ms; launches eager/without/with "
              f"{launches['eager']:.0f}/{launches['step_off']:.0f}/{launches['step_on']:.0f}")
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
