"""Large-matrix linear algebra benchmark: the LU family (lu_factor, solve, det, inv), Cholesky,
the triangular solve and QR (geqrf, linalg.qr) on ocl (blocked over the GEMM), the symmetric
eigensolver (eigh, eigvalsh: tridiagonalisation + QL on the device) and the SVD against CPU
PyTorch (LAPACK) on the same machine, in one process run.

    python benchmarks/linalg.py [--device 0] [--sizes 256,512,1024] [--reps 5] [--only REGEX]
                                [--json out.json]

    e.g. the eigensolvers: --sizes 128,256,512 --only 'eig|svd'

Each row times one call (median of --reps after a warm-up call), float32 (complex64 in the rows
named so: a complex matrix and a Hermitian positive definite one), one matrix per call.
ratio = cpu_time / ocl_time (> 1: the device is faster). On PoCL both run on the same CPU cores
(our trailing updates in the host BLAS or the cpu_tile GEMM, CPU PyTorch's in its LAPACK), so the
ratio compares the implementations; on a shared machine the figures are noisy (CPU PyTorch's
OpenMP threads suffer most when another process takes a core: --cpu-threads 1 steadies them).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re

import torch
import torch_ocl  # noqa: F401
from _timing import median_time  # benchmarks/_timing.py, beside this script


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--sizes", default="256,512,1024")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cpu-threads", type=int, default=0, help="torch.set_num_threads (0: keep)")
    ap.add_argument("--only", default="", help="run the cases whose name matches this regex")
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()
    if args.cpu_threads:
        torch.set_num_threads(args.cpu_threads)

    dev = torch.device("ocl", args.device)
    props = torch.ocl.get_device_properties(args.device)
    sync = lambda: torch.ocl.synchronize(args.device)  # noqa: E731
    g = torch.Generator().manual_seed(0)
    cases = [
        ("lu_factor", lambda a, b, s: torch.linalg.lu_factor(a)),
        ("solve (1 rhs)", lambda a, b, s: torch.linalg.solve(a, b)),
        ("det", lambda a, b, s: torch.linalg.det(a)),
        ("inv", lambda a, b, s: torch.linalg.inv(a)),
        ("cholesky", lambda a, b, s: torch.linalg.cholesky(s)),
        ("solve_triangular (n rhs)",
         lambda a, b, s: torch.linalg.solve_triangular(s, a, upper=False)),
        ("geqrf", lambda a, b, s: torch.geqrf(a)),
        ("qr (reduced)", lambda a, b, s: torch.linalg.qr(a)),
        ("eigh", lambda a, b, s: torch.linalg.eigh(s)),
        ("eigvalsh", lambda a, b, s: torch.linalg.eigvalsh(s)),
        ("svd (reduced)", lambda a, b, s: torch.linalg.svd(a, full_matrices=False)),
        ("svdvals", lambda a, b, s: torch.linalg.svdvals(a)),
        ("eigh complex64", lambda a, b, s: torch.linalg.eigh(s)),
        ("eigvalsh complex64", lambda a, b, s: torch.linalg.eigvalsh(s)),
        ("svd (reduced) complex64", lambda a, b, s: torch.linalg.svd(a, full_matrices=False)),
        ("svdvals complex64", lambda a, b, s: torch.linalg.svdvals(a)),
    ]
    cases = [c for c in cases if re.search(args.only, c[0])]
    results: dict = {
        "device": f"{props.name} ({props.platform_name}, driver {props.driver_version})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_threads": torch.get_num_threads(),
        "reps": args.reps,
        "rows": [],
    }
    print(f"{'case':28s} {'n':>5s} {'ocl ms':>9s} {'cpu ms':>9s} {'ratio':>6s}")
    for n in (int(s) for s in args.sizes.split(",")):
        a = torch.randn(n, n, generator=g)
        b = torch.randn(n, 1, generator=g)
        s = a @ a.mT + n * torch.eye(n)  # SPD, and its lower triangle well conditioned
        ac = torch.complex(a, torch.randn(n, n, generator=g))
        bc = b.to(torch.complex64)
        sc = ac @ ac.mH + n * torch.eye(n)
        real_ops, cplx_ops = (a, b, s), (ac, bc, sc)
        real_dev, cplx_dev = tuple(t.to(dev) for t in real_ops), tuple(t.to(dev) for t in cplx_ops)
        for name, fn in cases:
            tri = name.startswith("solve_triangular")
            cplx = name.endswith("complex64")
            a_, b_, s_ = cplx_ops if cplx else real_ops
            ad, bd, sd = cplx_dev if cplx else real_dev
            ours = median_time(lambda: fn(ad, bd, sd.tril() if tri else sd), args.reps, sync)
            cpu = median_time(lambda: fn(a_, b_, s_.tril() if tri else s_), args.reps, lambda: None)
            ratio = cpu / ours
            results["rows"].append(dict(case=name, n=n, ocl_s=ours, cpu_s=cpu, ratio=ratio))
            print(f"{name:28s} {n:5d} {ours * 1e3:9.2f} {cpu * 1e3:9.2f} {ratio:6.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
