"""The ``python -m torch_ocl`` command line: one sub-command per module.

    doctor   does my device work?              (torch_ocl.cli.doctor.doctor)
    analyze  will my CUDA program run natively? (torch_ocl.cli.analyze.analyze)
    bench    how fast is it, against CPU PyTorch and the device's own limits?
    warmup   compile a model's kernels ahead of time

Every command has ``--help``, machine-readable output (``--json``) and exit status 0 on
success, 1 when what it checked failed, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from . import analyze, bench, doctor, warmup

_COMMANDS = {"doctor": doctor, "analyze": analyze, "bench": bench, "warmup": warmup}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m torch_ocl",
        description="torch-ocl: check an OpenCL device, analyze a CUDA script, benchmark, warm up.",
    )
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in _COMMANDS.items():
        module.add_parser(sub)
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help(sys.stderr)
        return 2
    try:
        return int(_COMMANDS[args.command].run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
