"""Explain moved outputs from the files kept in the run directory, by their declared spec."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path

from fidelity.matrix.compare import file_delta
from fidelity.matrix.evidence import CaseStatus, SideEvidence
from fidelity.matrix.valuecmp import OutputDiff, explain
from fidelity.matrix.widening import Spec, Specs


def spec_for(path: str, specs: Specs) -> Spec | None:
    """The spec declared for the output entry (a name or glob) that matches path."""
    if path in specs:
        return specs[path]
    return next((spec for glob, spec in specs.items() if fnmatchcase(path, glob)), None)


def output_file(run_dir: Path, role: str, case_id: str, path: str) -> Path:
    return run_dir / role / "cases" / case_id / "out" / path


def explanations(
    run_dir: Path, base: SideEvidence, cand: SideEvidence, specs: Mapping[str, Specs]
) -> dict[str, list[OutputDiff]]:
    """Value-aware explanations of every changed output that has a comparison spec."""
    found: dict[str, list[OutputDiff]] = {}
    for case_id, case_specs in specs.items():
        b, c = base.cases.get(case_id), cand.cases.get(case_id)
        if b is None or c is None or {b.status, c.status} != {CaseStatus.OK}:
            continue  # a failed side's outputs explain nothing
        for path in file_delta(b.outputs, c.outputs).changed:
            spec = spec_for(path, case_specs)
            files = [
                output_file(run_dir, role, case_id, path) for role in ("baseline", "candidate")
            ]
            if spec is None or not all(f.is_file() for f in files):
                continue
            found.setdefault(case_id, []).append(explain(path, files[0], files[1], spec))
    return found
