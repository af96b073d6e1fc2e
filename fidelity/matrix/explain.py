"""Explain moved outputs from the files kept in the run directory, by their declared spec."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path

from fidelity.matrix.compare import file_delta
from fidelity.matrix.evidence import CaseStatus, SideEvidence
from fidelity.matrix.sources import Neutral
from fidelity.matrix.valuecmp import OutputDiff, explain
from fidelity.matrix.widening import Spec, Specs


def spec_for(path: str, specs: Specs) -> Spec | None:
    """The spec declared for the output entry (a name or glob) that matches path."""
    if path in specs:
        return specs[path]
    return next((spec for glob, spec in specs.items() if fnmatchcase(path, glob)), None)


def output_file(run_dir: Path, role: str, case_id: str, path: str) -> Path:
    return run_dir / role / "cases" / case_id / "out" / path


def own_paths(origin: Path, side: SideEvidence, case_id: str) -> dict[str, str]:
    """The absolute paths a side's case was given, as they were when it ran."""
    case_dir = origin / side.role / "cases" / case_id
    return {
        "out": str(case_dir / "out"),
        "cache": str(case_dir / "cache"),
        "worktree": side.worktree,
    }


def explanations(
    run_dir: Path,
    base: SideEvidence,
    cand: SideEvidence,
    specs: Mapping[str, Specs],
    origin: Path | Mapping[str, Path] | None = None,
) -> dict[str, list[OutputDiff]]:
    """Value-aware explanations of every changed output that has a comparison spec.

    `origin` is where the run directory was when the cases ran (compare may read a copy):
    each side's own paths in its outputs are read as placeholders.
    """
    found: dict[str, list[OutputDiff]] = {}
    for case_id, case_specs in specs.items():
        b, c = base.cases.get(case_id), cand.cases.get(case_id)
        if b is None or c is None or {b.status, c.status} != {CaseStatus.OK}:
            continue  # a failed side's outputs explain nothing
        where = origin.get(case_id, run_dir) if isinstance(origin, Mapping) else origin or run_dir
        neutral = Neutral.of(own_paths(where, base, case_id), own_paths(where, cand, case_id))
        for name in file_delta(b.outputs, c.outputs).changed:
            spec = spec_for(name, case_specs)
            files = [
                output_file(run_dir, "baseline", case_id, b.path_of(name)),
                output_file(run_dir, "candidate", case_id, c.path_of(name)),
            ]
            if spec is None or not all(f.is_file() for f in files):
                continue
            found.setdefault(case_id, []).append(explain(name, files[0], files[1], spec, neutral))
    return found
