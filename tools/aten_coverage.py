"""The aten ops that have a CPU kernel but no ocl one, grouped, with the reason each one is left.

The compatibility matrix is built from OpInfo samples, so an aten op that no OpInfo calls is never
checked there. This audit looks at the dispatcher instead: after `import torch_ocl`, every `aten::`
operator with a CPU kernel, no PrivateUse1 kernel and no CompositeImplicitAutograd /
CompositeExplicitAutograd(NonFunctional) kernel (a composite runs through other ops, so it is
covered when they are) would run on the CPU through the fallback. Each such op must be named below
with its reason; tests/test_aten_coverage.py fails on an op that is neither native nor listed (a new
gap) and on a listed op that is no longer missing (remove it from the list).

    PYTHONPATH=src python tools/aten_coverage.py          # the grouped list
    PYTHONPATH=src python tools/aten_coverage.py --check  # exit 1 on an unlisted op or a stale entry
"""

from __future__ import annotations

import argparse
import re
import sys

# Families left by name: patterns over the op name without "aten::". Kept tight, so that an
# unrelated op does not hide behind them.
PATTERN_GROUPS: dict[str, str] = {
    "quantized tensors and fake quantization (ocl has no quantized dtypes)": (
        r"quantiz|^_dyn_quant_|^dequantize\.|^_fused_moving_avg_obs_fq_helper$"
    ),
    "mkldnn (a CPU library)": r"mkldnn",
    "nested / jagged tensors (ocl has nested kernels only for the Transformer fast path)": (
        r"^_nested_|^_jagged_to_padded_dense_forward$|^_padded_dense_to_jagged_forward$"
    ),
    "sparse BSR/BSC/CSC layouts (ocl's sparse support is COO and CSR)": (
        r"^_to_sparse_(bsc|bsr|csc)$|^_validate_compressed_sparse_indices$"
    ),
    "ATen's own test operators": r"^_test_|^_foobar$",
}

# Ops left one by one: reason -> names ("name.overload", without "aten::").
ALLOWLIST: dict[str, list[str]] = {
    "CPU-only packed weight formats (int4/int8 weight-only matmul kernels for the CPU)": [
        "_convert_weight_to_int4pack_for_cpu",
        "_weight_int4pack_mm_for_cpu",
        "_weight_int8pack_mm",
    ],
    "float8 scaled matmul (the device has no fp8)": [
        "_scaled_mm",
        "_scaled_mm.out",
        "_scaled_mm_v2",
        "_scaled_mm_v2.out",
    ],
    "the CPU backend of scaled_dot_product_attention (ocl routes SDPA to its own kernels)": [
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_flash_attention_for_cpu_backward",
    ],
    "CPU-only by design (from_file maps a host file into a CPU tensor)": [
        "from_file",
    ],
}

_COMPOSITE_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)


def missing_ops() -> list[str]:
    """aten ops ("name.overload") with a CPU kernel and neither an ocl nor a composite kernel."""
    import torch
    import torch_ocl  # noqa: F401  (registers the PrivateUse1 kernels)

    has = torch._C._dispatch_has_kernel_for_dispatch_key
    out = []
    for full in torch._C._dispatch_get_all_op_names():
        if not full.startswith("aten::"):
            continue
        if not has(full, "CPU") or has(full, "PrivateUse1"):
            continue
        if any(has(full, k) for k in _COMPOSITE_KEYS):
            continue
        out.append(full[len("aten::") :])
    return sorted(out)


def classify(ops: list[str]) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """(reason -> ops, ops with no reason, allowlisted ops that are not missing any more)."""
    listed = {name: reason for reason, names in ALLOWLIST.items() for name in names}
    groups: dict[str, list[str]] = {}
    unexplained = []
    for op in ops:
        reason = listed.get(op)
        if reason is None:
            reason = next((r for r, p in PATTERN_GROUPS.items() if re.search(p, op)), None)
        if reason is None:
            unexplained.append(op)
        else:
            groups.setdefault(reason, []).append(op)
    order = list(ALLOWLIST) + list(PATTERN_GROUPS)
    groups = {r: groups[r] for r in order if r in groups}
    present = set(ops)
    stale = sorted(name for name in listed if name not in present)
    return groups, unexplained, stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on an unlisted or stale op")
    args = parser.parse_args()
    ops = missing_ops()
    groups, unexplained, stale = classify(ops)
    print(f"{len(ops)} aten ops with a CPU kernel and no ocl kernel")
    for reason, names in groups.items():
        print(f"\n{reason} ({len(names)}):")
        for n in names:
            print(f"  {n}")
    if unexplained:
        print(f"\nNO REASON GIVEN ({len(unexplained)}): make them native or list them")
        for n in unexplained:
            print(f"  {n}")
    if stale:
        print(f"\nLISTED BUT NOT MISSING ({len(stale)}): remove them from ALLOWLIST")
        for n in stale:
            print(f"  {n}")
    return 1 if args.check and (unexplained or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
