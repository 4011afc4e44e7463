"""The CPU-fallback report and strict mode."""

import contextlib
import sys

from . import _C


def fallback_report(print_table: bool = True, file=None) -> list:
    """Ops that ran on the CPU instead of the ocl device: calls, bytes moved and time.

    Returns a list of dicts (most time first) and, unless ``print_table`` is False, prints a table.
    """
    rows = sorted(_C.fallback_records(), key=lambda r: (-r["seconds"], r["op"]))
    if print_table:
        out = file or sys.stdout
        if not rows:
            print("torch-ocl fallback report: no op fell back to the CPU.", file=out)
        else:
            print(f"torch-ocl fallback report: {len(rows)} op(s) ran on the CPU", file=out)
            print(f"{'op':<44}{'calls':>8}{'MiB to host':>13}{'MiB back':>10}{'ms':>10}", file=out)
            for r in rows:
                print(
                    f"{r['op'][:43]:<44}{r['calls']:>8}{r['bytes_to_host'] / 2**20:>13.2f}"
                    f"{r['bytes_to_device'] / 2**20:>10.2f}{r['seconds'] * 1e3:>10.2f}",
                    file=out,
                )
    return rows


def reset_fallback_report() -> None:
    _C.reset_fallback_records()


@contextlib.contextmanager
def strict(enabled: bool = True):
    """Within the block, an op without a native ocl kernel raises instead of running on the CPU.

    ``TORCH_OCL_STRICT=1`` turns strict mode on for the whole process.
    """
    # Process-wide (backward runs on autograd's threads); blocks on different threads may end in
    # any order: the newest block still open decides.
    token = _C._push_strict(bool(enabled))
    try:
        yield
    finally:
        _C._pop_strict(token)
