"""Explain moved outputs from the files kept in the run directory, by their declared spec."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from fidelity.kinds.diffs import OutputDiff
from fidelity.kinds.registry import explain
from fidelity.kinds.sources import Neutral, Source
from fidelity.matrix.verdict.compare import file_delta
from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus, SideEvidence
from fidelity.matrix.verdict.widening import Spec, Specs


def spec_for(path: str, specs: Specs) -> Spec | None:
    """The spec declared for the output entry (a name or glob) that matches path."""
    if path in specs:
        return specs[path]
    return next((spec for glob, spec in specs.items() if fnmatchcase(path, glob)), None)


def output_file(run_dir: Path, role: str, case_id: str, path: str) -> Path:
    return run_dir / role / "cases" / case_id / "out" / path


def own_paths(origin: Path, role: str, worktree: str, case_id: str) -> dict[str, str]:
    """The absolute paths a side's case was given, as they were when it ran."""
    case_dir = origin / role / "cases" / case_id
    return {"out": str(case_dir / "out"), "cache": str(case_dir / "cache"), "worktree": worktree}


@dataclass(frozen=True, slots=True)
class Arrival:
    """One side's evidence of a case, and the worktree it ran in."""

    role: str
    evidence: CaseEvidence
    worktree: str


Reader = Callable[[Path], Source]  # an output as its comparator gets it: bytes, or its path


def _by_path(path: Path) -> Source:
    return path


def explain_case(
    run_dir: Path,
    base: Arrival,
    cand: Arrival,
    case_specs: Specs,
    origin: Path,
    *,
    read: Reader = _by_path,
) -> list[OutputDiff]:
    """Value-aware explanations of one case's changed outputs that have a comparison spec,
    in the order of their names; none when a side failed (its outputs explain nothing).
    `read` hands each output over (`ReadOnce.source`: as the bytes it hashed)."""
    b, c, case_id = base.evidence, cand.evidence, base.evidence.case_id
    if {b.status, c.status} != {CaseStatus.OK}:
        return []
    neutral = Neutral.of(
        own_paths(origin, base.role, base.worktree, case_id),
        own_paths(origin, cand.role, cand.worktree, case_id),
    )
    found = []
    for name in file_delta(b.outputs, c.outputs).changed:
        spec = spec_for(name, case_specs)
        files = [
            output_file(run_dir, "baseline", case_id, b.path_of(name)),
            output_file(run_dir, "candidate", case_id, c.path_of(name)),
        ]
        if spec is None or not all(f.is_file() for f in files):
            continue
        found.append(explain(name, read(files[0]), read(files[1]), spec, neutral))
    return found


def explanations(
    run_dir: Path,
    base: SideEvidence,
    cand: SideEvidence,
    specs: Mapping[str, Specs],
    origin: Path | Mapping[str, Path] | None = None,
    *,
    known: Mapping[str, list[OutputDiff]] | None = None,
    read: Reader = _by_path,
) -> dict[str, list[OutputDiff]]:
    """Value-aware explanations of every changed output that has a comparison spec; a case
    in `known` (explained while the run ran, `Meeting`) is taken from there.

    `origin` is where the run directory was when the cases ran (compare may read a copy):
    each side's own paths in its outputs are read as placeholders.
    """
    found: dict[str, list[OutputDiff]] = {}
    for case_id, case_specs in specs.items():
        b, c = base.cases.get(case_id), cand.cases.get(case_id)
        if b is None or c is None:
            continue
        if known is not None and case_id in known:
            explained = known[case_id]
        else:
            where = origin.get(case_id, run_dir) if isinstance(origin, Mapping) else origin
            explained = explain_case(
                run_dir,
                Arrival(base.role, b, base.worktree),
                Arrival(cand.role, c, cand.worktree),
                case_specs,
                where or run_dir,
                read=read,
            )
        if explained:
            found[case_id] = explained
    return found


class Meeting:
    """Each case's outputs explained as soon as both sides have run it, by the worker that
    finished it second, while other cases still run: a comparison holds one of the run's
    `--jobs` slots, as a case process does, so at most that many run at once."""

    def __init__(self, run_dir: Path, specs: Mapping[str, Specs]):
        self.run_dir = run_dir
        self.specs = specs
        self.explained: dict[str, list[OutputDiff]] = {}
        self._waiting: dict[str, Arrival] = {}
        self._lock = threading.Lock()

    def arrived(self, arrival: Arrival, budget: threading.Semaphore | None) -> None:
        case_id = arrival.evidence.case_id
        if not self.specs.get(case_id):
            return
        with self._lock:
            other = self._waiting.pop(case_id, None)
            if other is None:
                self._waiting[case_id] = arrival
                return
        base, cand = (other, arrival) if other.role == "baseline" else (arrival, other)
        with budget or contextlib.nullcontext():
            found = explain_case(self.run_dir, base, cand, self.specs[case_id], self.run_dir)
        with self._lock:
            self.explained[case_id] = found
