"""Reduction and normalisation benchmark: sums, softmax, norms, var/std and logsumexp as ratios of
a raw OpenCL device-to-device copy measured in the same process on the same device, and of CPU
PyTorch on the same machine in the same run.

    python benchmarks/reduce.py [--device 0] [--mib 128] [--side 4096] [--reps 7] [--json out.json]
                                [--only rows|dims] [--quick-dims]

A row's "GB/s" is its byte count over the median time. The byte count is the input tensor's size
for forward ops and reductions (softmax and the norms also write as many, like the copy), and 1.5x
that for backward ops (they read two tensors and write one: a copy of 1.5x the bytes moves as
much). The raw copy figure is _C._raw_transfer(dev, "d2d", nbytes) for the same nbytes
(benchmarks/runtime.py uses the same definition); "of copy" = raw_time / our_time (1.0 = as fast
as the raw copy; targets: >= 0.6 for the full sum and for rows of 1024 and 4096, >= 0.5 over a
non-last dimension). "x CPU" = CPU PyTorch's time / ours (above 1: faster than CPU PyTorch).
Rows of 4096 come from a side x side matrix, rows of 1024 from the same number of elements.
Non-last dims (sum, mean, amax, amin, var, std, softmax, log_softmax, logsumexp, max with its
indices, argmax, argmin, prod, nansum, the 2-norm): dim 0 of side x side, of side x (side + 1)
and of (side^2 / 64) x 64, and dim 1 of 64 x (side / 4) x 256 (each the same number of elements,
about). prod reads 1 + randn / 1000, so that its products stay normal numbers (a product of
thousands of randn values underflows, and denormal arithmetic would time the FPU, not the walk).
The same non-last dims of int32, int8, int64 and bool tensors (values in [-100, 100), or random
bits): sum (into int64), amax, max with its indices, argmax and argmin (not for bool: CPU
refuses), any and all (bool only), their byte counts those of the integer tensor.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics

import torch
import torch_ocl
from torch_ocl import _C
from _timing import median_time  # benchmarks/_timing.py, beside this script


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--mib", type=int, default=128, help="size of the full-sum input in MiB")
    ap.add_argument("--side", type=int, default=4096, help="side of the square matrix")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", help="write the results here as JSON")
    ap.add_argument("--only", choices=["rows", "dims"], help="only the last-dim rows or only the"
                    " non-last-dim rows")
    ap.add_argument("--quick-dims", action="store_true",
                    help="of the non-last-dim shapes, only the square matrix")
    args = ap.parse_args()

    dev = torch.device("ocl", args.device)
    props = torch.ocl.get_device_properties(args.device)
    sync = lambda: torch.ocl.synchronize(args.device)  # noqa: E731
    results: dict = {
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "reps": args.reps,
        "rows": [],
    }

    def raw_copy(nbytes: int) -> float:
        return statistics.median(_C._raw_transfer(args.device, "d2d", nbytes, args.reps))

    def row(name: str, nbytes: int, fn, cpu_fn, target: str):
        ours = median_time(fn, args.reps, sync)
        ref = raw_copy(nbytes)
        cpu = median_time(cpu_fn, args.reps, lambda: None)
        gbps = lambda t: nbytes / t / 1e9  # noqa: E731
        results["rows"].append({"name": name, "bytes": nbytes, "ours_s": ours, "raw_copy_s": ref,
                                "cpu_torch_s": cpu, "ratio": ref / ours, "vs_cpu": cpu / ours,
                                "target": target,
                                "ours_gbps": gbps(ours), "raw_gbps": gbps(ref),
                                "cpu_gbps": gbps(cpu)})

    n = (args.mib << 20) // 4
    if args.only != "dims":
        host = torch.randn(n)
        x = host.to(dev)
        row(f"sum, {n >> 20}M fp32", n * 4, lambda: x.sum(), lambda: host.sum(), ">= 0.6")
        del x

    s = args.side
    F = torch.nn.functional
    for cols in (s, 1024) if args.only != "dims" else ():
        rows = s * s // cols
        hm = torch.randn(rows, cols)
        m = hm.to(dev)
        nb = rows * cols * 4
        shape = f"{rows}x{cols}"
        hw, hb = torch.randn(cols), torch.randn(cols)
        w, b = hw.to(dev), hb.to(dev)
        row(f"sum(-1), {shape}", nb, lambda: m.sum(-1), lambda: hm.sum(-1), "(info)")
        row(f"amax(-1), {shape}", nb, lambda: m.amax(-1), lambda: hm.amax(-1), "(info)")
        row(f"softmax(-1), {shape}", nb, lambda: m.softmax(-1), lambda: hm.softmax(-1), ">= 0.6")
        row(f"log_softmax(-1), {shape}", nb, lambda: m.log_softmax(-1),
            lambda: hm.log_softmax(-1), ">= 0.6")
        row(f"layer_norm, {shape}", nb, lambda: F.layer_norm(m, (cols,), w, b),
            lambda: F.layer_norm(hm, (cols,), hw, hb), ">= 0.6")
        row(f"rms_norm, {shape}", nb, lambda: F.rms_norm(m, (cols,), w),
            lambda: F.rms_norm(hm, (cols,), hw), ">= 0.6")
        row(f"var(-1), {shape}", nb, lambda: m.var(-1), lambda: hm.var(-1), ">= 0.6")
        row(f"std(-1), {shape}", nb, lambda: m.std(-1), lambda: hm.std(-1), ">= 0.6")
        row(f"logsumexp(-1), {shape}", nb, lambda: m.logsumexp(-1), lambda: hm.logsumexp(-1),
            "(info)")
        # Backward: the aten kernels themselves, on saved outputs (no autograd overhead).
        y, hy = m.softmax(-1), hm.softmax(-1)
        ly, hly = m.log_softmax(-1), hm.log_softmax(-1)
        hgy = torch.randn_like(hm)
        gy = hgy.to(dev)
        bwd = torch.ops.aten._softmax_backward_data
        lbwd = torch.ops.aten._log_softmax_backward_data
        row(f"softmax backward, {shape}", nb * 3 // 2, lambda: bwd(gy, y, -1, torch.float32),
            lambda: bwd(hgy, hy, -1, torch.float32), ">= 0.6")
        row(f"log_softmax backward, {shape}", nb * 3 // 2,
            lambda: lbwd(gy, ly, -1, torch.float32), lambda: lbwd(hgy, hly, -1, torch.float32),
            ">= 0.6")
        _, mean, rstd = torch.native_layer_norm(m, (cols,), w, b, 1e-5)
        _, hmean, hrstd = torch.native_layer_norm(hm, (cols,), hw, hb, 1e-5)
        lnb = torch.ops.aten.native_layer_norm_backward
        row(f"layer_norm backward, {shape}", nb * 3 // 2,
            lambda: lnb(gy, m, (cols,), mean, rstd, w, b, [True, True, True]),
            lambda: lnb(hgy, hm, (cols,), hmean, hrstd, hw, hb, [True, True, True]), ">= 0.6")
        del y, ly, gy, hy, hly, hgy
        del m, hm

    # Over a non-last dim: dim 0 of the square matrix, of a matrix one column wider (rows not a
    # multiple of the vector width), of a tall narrow one (too few columns to fill the cores), and
    # the middle dim of a 3-D tensor.
    for shp, d in (((s, s), 0), ((s, s + 1), 0), ((s * s // 64, 64), 0), ((64, s // 4, 256), 1)):
        if args.quick_dims and shp != (s, s):
            continue
        hm = torch.randn(*shp)
        m = hm.to(dev)
        nb = hm.numel() * 4
        shape = "x".join(map(str, shp))
        hgy = torch.randn_like(hm)
        gy = hgy.to(dev)
        y, hy = m.softmax(d), hm.softmax(d)
        ly, hly = m.log_softmax(d), hm.log_softmax(d)
        bwd = torch.ops.aten._softmax_backward_data
        lbwd = torch.ops.aten._log_softmax_backward_data
        for name, f in (("sum", lambda t: t.sum(d)), ("mean", lambda t: t.mean(d)),
                        ("amax", lambda t: t.amax(d)), ("amin", lambda t: t.amin(d)),
                        ("var", lambda t: t.var(d)), ("std", lambda t: t.std(d)),
                        ("softmax", lambda t: t.softmax(d)),
                        ("log_softmax", lambda t: t.log_softmax(d)),
                        ("logsumexp", lambda t: t.logsumexp(d)),
                        ("max+indices", lambda t: t.max(d)), ("argmax", lambda t: t.argmax(d)),
                        ("argmin", lambda t: t.argmin(d)), ("nansum", lambda t: t.nansum(d)),
                        ("vector_norm", lambda t: torch.linalg.vector_norm(t, dim=d))):
            row(f"{name}({d}), {shape}", nb, lambda: f(m), lambda: f(hm), ">= 0.5")
        hp = hm / 1000 + 1
        mp = hp.to(dev)
        row(f"prod({d}), {shape}", nb, lambda: mp.prod(d), lambda: hp.prod(d), ">= 0.5")
        del mp, hp
        row(f"softmax backward({d}), {shape}", nb * 3 // 2, lambda: bwd(gy, y, d, torch.float32),
            lambda: bwd(hgy, hy, d, torch.float32), ">= 0.5")
        row(f"log_softmax backward({d}), {shape}", nb * 3 // 2,
            lambda: lbwd(gy, ly, d, torch.float32), lambda: lbwd(hgy, hly, d, torch.float32),
            ">= 0.5")
        del m, hm, y, ly, gy, hy, hly, hgy
        for dt in (torch.int32, torch.int8, torch.int64, torch.bool):
            hi = (torch.rand(*shp) < 0.5 if dt == torch.bool
                  else torch.randint(-100, 100, shp, dtype=dt))
            mi = hi.to(dev)
            nbi = hi.numel() * hi.element_size()
            tname = str(dt).removeprefix("torch.")
            ops = [("sum", lambda t: t.sum(d)), ("amax", lambda t: t.amax(d)),
                   ("max+indices", lambda t: t.max(d))]
            if dt != torch.bool:
                ops += [("argmax", lambda t: t.argmax(d)), ("argmin", lambda t: t.argmin(d))]
            else:
                ops += [("any", lambda t: t.any(d)), ("all", lambda t: t.all(d))]
            for name, f in ops:
                row(f"{name}({d}) {tname}, {shape}", nbi, lambda: f(mi), lambda: f(hi), ">= 0.5")
            del mi, hi

    print(f"torch-ocl reduction benchmark on ocl:{args.device}: {results['device']}")
    print(f"{results['date']}, median of {args.reps}\n")
    print(f"{'':<40}{'ours GB/s':>10}{'raw copy':>10}{'of copy':>9}{'CPU torch':>11}"
          f"{'x CPU':>7}  target")
    for r in results["rows"]:
        print(f"{r['name']:<40}{r['ours_gbps']:>10.2f}{r['raw_gbps']:>10.2f}{r['ratio']:>9.2f}"
              f"{r['cpu_gbps']:>11.2f}{r['cpu_torch_s'] / r['ours_s']:>7.2f}  {r['target']}")
    print()
    print(json.dumps(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
