"""The aten-level coverage audit (tools/aten_coverage.py): every aten op with a CPU kernel and no
ocl or composite kernel is either listed there with its reason or a test failure, so a new gap (or
a listed op that became native and should leave the list) cannot go unnoticed."""

import importlib.util
import pathlib

_TOOL = pathlib.Path(__file__).resolve().parents[1] / "tools" / "aten_coverage.py"
_spec = importlib.util.spec_from_file_location("aten_coverage", _TOOL)
aten_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(aten_coverage)


def test_every_cpu_only_op_has_a_reason():
    _, unexplained, _ = aten_coverage.classify(aten_coverage.missing_ops())
    assert unexplained == [], (
        "aten ops with a CPU kernel and no ocl kernel, not in tools/aten_coverage.py: make them "
        f"native or list them with a reason: {unexplained}"
    )


def test_no_stale_allowlist_entry():
    _, _, stale = aten_coverage.classify(aten_coverage.missing_ops())
    assert stale == [], (
        "listed in tools/aten_coverage.py ALLOWLIST but native (or gone) now: remove them: "
        f"{stale}"
    )


def test_allowlist_has_no_duplicates():
    names = [n for names in aten_coverage.ALLOWLIST.values() for n in names]
    assert len(names) == len(set(names))


def test_audit_sees_the_dispatcher():
    # The ops made native for this audit are not missing; a CPU-only op stays listed.
    ops = set(aten_coverage.missing_ops())
    assert "__lshift__.Scalar" not in ops and "isin.Tensor_Scalar_out" not in ops
    assert "from_file" in ops
