"""`fidelity merge RUN_DIR... --out DIR`: shards of one run, combined and judged as one.

Shards must be of the same run: the same harness revision, files and table, the same baseline
and candidate commits, the same prediction (or none), each run.json intact. Each shard's
evidence files are hashed again against its run.json before they are combined, as
`compare` does: a file changed, missing or added where it would be evidence is a finding
naming the shard. The merged run proves every declared case ran exactly once: a case in no
shard, or in two, is a finding. compare, verify and the reports read it as any run.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from fidelity.errors import UntrustedError, UsageError
from fidelity.matrix.cases.files import copy_file
from fidelity.matrix.run import recheck, rundir
from fidelity.matrix.run.rundir import RunRecord
from fidelity.matrix.verdict import predict
from fidelity.matrix.verdict.accept import Allowance
from fidelity.matrix.verdict.compare import compare
from fidelity.matrix.verdict.evidence import CaseEvidence, SideEvidence, side_to_json
from fidelity.matrix.verdict.explain import explanations
from fidelity.matrix.verdict.findings import Code, Finding, Harness, provenance
from fidelity.matrix.verdict.outcome import (
    Outcome,
    Selection,
    decide,
    partial_run_findings,
    prediction_findings,
)

ROLES = ("baseline", "candidate")


def _same(records: Sequence[RunRecord], dirs: Sequence[Path]) -> None:
    """UsageError naming the first thing the shards do not share."""

    def key(r: RunRecord) -> dict[str, Any]:
        prediction = (r.raw.get("prediction") or {}).get("sha256")
        selection = r.raw.get("selection") or {}
        return {
            "harness revision": (r.harness.rev, r.harness.sha),
            "harness files": r.harness.tree,  # one commit, but another checkout's files
            "case table": r.harness.table_sha256,
            "baseline commit": r.baseline.sha,
            "candidate commit": r.candidate.sha,
            "prediction": prediction,
            "declared cases": [tuple(p) for p in selection.get("all", [])],
            "number of shards": (selection.get("shard") or [0, 0])[1],
            "--replay": r.raw["matrix"].get("replay"),  # the table's own keys: its sha
        }

    first = key(records[0])
    for record, where in zip(records[1:], dirs[1:], strict=True):
        other = key(record)
        for what, value in first.items():
            if other[what] != value:
                raise UsageError(
                    f"{where} is not a shard of the same run as {dirs[0]}: its {what} differs; "
                    "merge only shards of one `fidelity run --shard K/N` invocation"
                )
    if not first["number of shards"]:
        raise UsageError(f"{dirs[0]} is not a shard (run it with --shard K/N)")


def _harness(records: Sequence[RunRecord]) -> Harness:
    """The harness of every shard: what any shard's cases changed in its checkout, and any
    shard's uncommitted harness files, are the merged run's (its `harness-changed` and
    `dirty-harness` findings)."""
    every = [r.harness for r in records]
    return replace(
        every[0],
        dirty=any(h.dirty for h in every),
        dirty_paths=tuple(dict.fromkeys(p for h in every for p in h.dirty_paths)),
        table_dirty=any(h.table_dirty for h in every),
        changed=tuple(sorted({p for h in every for p in h.changed})),
    )


def _side(sides: Sequence[SideEvidence], cases: Mapping[str, CaseEvidence]) -> SideEvidence:
    """One side from its shards: every case, and every shard's facts."""
    first = sides[0]
    imports = {i.module: i for s in sides for i in s.imports if not i.inside}
    imports.update({i.module: i for s in sides for i in s.imports if i.module not in imports})
    return replace(
        first,
        source_dirty=any(s.source_dirty for s in sides),
        dirty_paths=tuple(dict.fromkeys(p for s in sides for p in s.dirty_paths)),
        imports=tuple(imports.values()),
        setup=tuple(step for s in sides for step in s.setup),
        cases=dict(cases),
        worktree="; ".join(dict.fromkeys(s.worktree for s in sides if s.worktree)),
        worktree_removed=all(s.worktree_removed for s in sides),
        kept="; ".join(dict.fromkeys(s.kept for s in sides if s.kept)),
        reused=all(s.reused for s in sides),
        changed=tuple(dict.fromkeys(c for s in sides for c in s.changed)),
    )


@dataclass(slots=True)
class _Gathered:
    owner: dict[str, int] = field(default_factory=dict)  # case id -> the shard that ran it
    duplicated: list[str] = field(default_factory=list)
    cases: dict[str, dict[str, CaseEvidence]] = field(
        default_factory=lambda: {role: {} for role in ROLES}
    )
    origins: dict[str, str] = field(default_factory=dict)
    entries: dict[str, Any] = field(default_factory=dict)  # case id -> its run.json entry


def _gather(records: Sequence[RunRecord], dirs: Sequence[Path], run_dir: Path) -> _Gathered:
    """Every shard's cases and their files, into run_dir; the first shard of a case wins."""
    found = _Gathered()
    for n, (record, where) in enumerate(zip(records, dirs, strict=True), 1):
        for case_id in record.raw["selection"]["selected"]:
            if case_id in found.owner:
                found.duplicated.append(f"{case_id} (shards {found.owner[case_id]} and {n})")
                continue
            found.owner[case_id] = n
            found.origins[case_id] = record.raw.get("run_dir", str(where))
            for role, side in (("baseline", record.baseline), ("candidate", record.candidate)):
                if case_id in side.cases:
                    found.cases[role][case_id] = side.cases[case_id]
                    source = where / role / "cases" / case_id
                    if source.is_dir():  # links stay links: never followed out of the shard
                        target = run_dir / role / "cases" / case_id
                        shutil.copytree(source, target, symlinks=True, copy_function=copy_file)
        found.entries.update({c["id"]: c for c in record.raw["matrix"]["cases"]})
    return found


def _shard_findings(order: Sequence[str], found: _Gathered) -> tuple[Finding, ...]:
    extra = []
    missing = [c for c in order if c not in found.owner]
    if missing:
        why = f"{len(missing)} declared cases ran in no shard: {', '.join(missing[:5])}"
        extra.append(Finding(Code.SHARD_MISSING, why))
    if found.duplicated:
        why = f"cases ran in two shards: {', '.join(found.duplicated[:5])}"
        extra.append(Finding(Code.SHARD_DUPLICATED, why))
    return tuple(extra)


def _altered(records: Sequence[RunRecord], dirs: Sequence[Path]) -> tuple[Finding, ...]:
    """Every shard's evidence files against its own run.json, before anything is copied."""
    found: list[Finding] = []
    for n, (record, where) in enumerate(zip(records, dirs, strict=True), 1):
        outputs = recheck.declared_outputs(record.raw)
        for side in (record.baseline, record.candidate):
            found += recheck.altered(where, side, outputs, f"shard {n} ({where}): ")
    return tuple(found)


def _shards(dirs: Sequence[Path]) -> list[RunRecord]:
    """Every shard's run record; UsageError unless each is intact and all are of one run."""
    if not dirs:
        raise UsageError("name the shard run directories to merge")
    seen: dict[Path, Path] = {}
    for d in dirs:
        if (same := seen.setdefault(d.resolve(), d)) is not d:
            raise UsageError(f"{same} is given twice (also as {d}); name each shard once")
    records = [rundir.read(d) for d in dirs]
    broken = [(d, r.integrity) for d, r in zip(dirs, records, strict=True) if r.integrity]
    if broken:
        raise UntrustedError(  # a damaged run directory: the evidence, not the command line
            f"{broken[0][0]}: {broken[0][1]}; a shard must be intact to be merged"
        )
    _same(records, dirs)
    return records


def accepted(records: Sequence[RunRecord]) -> tuple[Allowance, ...]:
    """The table's accepted findings as the first shard recorded them (every shard ran the
    same table)."""
    return tuple(Allowance.from_json(a) for a in records[0].raw["matrix"].get("accept", ()))


def _sides(
    records: Sequence[RunRecord], found: _Gathered, order: Sequence[str]
) -> tuple[SideEvidence, SideEvidence]:
    """Both merged sides, their cases in the table's order."""
    base, cand = (
        _side(
            [getattr(r, role) for r in records],
            {c: found.cases[role][c] for c in order if c in found.cases[role]},
        )
        for role in ROLES
    )
    return base, cand


def _selection(
    records: Sequence[RunRecord],
    found: _Gathered,
    declared: Sequence[tuple[str, str]],
    meant: bool,
) -> Selection | None:
    """None when every declared case ran in a shard: the merged run is the full gate. Else a
    partial run of the cases that ran, said so in every report like any partial run; it
    keeps every declared case, so that `compare` judges the ones no shard ran as this did."""
    order = [case_id for case_id, _ in declared]
    if all(c in found.owner for c in order):
        return None
    first = records[0].raw["selection"]
    chosen = [s for s in first["selectors"] if not s.startswith("shard:")]
    shown = (*chosen, f"{len(records)} of {first['shard'][1]} shards")
    ran = tuple(c for c in order if c in found.owner)
    return Selection(shown, ran, len(order), all=tuple(declared), meant=meant)


def merge(dirs: Sequence[Path], out: Path, *, ci: bool = False, partial: bool = False) -> Outcome:
    """Combine shard run directories into one run directory at out, and judge it. A merge
    that left a declared case out is a partial run (`ci`, `partial`: as `fidelity run`)."""
    records = _shards(dirs)
    altered = _altered(records, dirs)
    run_dir = rundir.prepare(out, Path.cwd(), "merged")
    declared = tuple((i, d) for i, d in records[0].raw["selection"]["all"])
    order = [case_id for case_id, _ in declared]
    found = _gather(records, dirs, run_dir)
    base, cand = _sides(records, found, order)
    specs = {c: found.entries[c].get("compare", {}) for c in order if c in found.entries}
    origin = {c: Path(p) for c, p in found.origins.items()}
    comparison = compare(declared, base, cand, explanations(run_dir, base, cand, specs, origin))
    changes = tuple(dict.fromkeys(c for r in records for c in r.checkout_changes))
    harness = _harness(records)
    findings = provenance(harness, base, cand, comparison, specs=specs, checkout_changes=changes)
    prediction = predict.from_json(records[0].raw.get("prediction"))
    selection = _selection(records, found, declared, partial)
    findings += altered + _shard_findings(order, found)
    findings += prediction_findings(prediction, selection) + partial_run_findings(selection, ci)
    judged, code, settled = decide(comparison, findings, prediction, selection, accepted(records))
    findings = settled.findings
    data = {k: v for k, v in records[0].raw.items() if k != "digest"}
    data.update(
        {
            "harness": asdict(harness),
            "matrix": {
                **records[0].raw["matrix"],
                "cases": [found.entries[c] for c in order if c in found.entries],
            },
            "sides": {"baseline": side_to_json(base), "candidate": side_to_json(cand)},
            "comparison": asdict(comparison),
            "findings": [asdict(f) for f in findings],
            "exit_code": code,
            "prediction_verdict": asdict(judged) if judged else None,
            "selection": selection.to_json() if selection else None,
            "checkout_changes": list(changes),
            "run_dir": str(run_dir),
            **rundir.settled_json(settled),
            "merged_from": [str(d) for d in dirs],
            "origins": found.origins,
        }
    )
    return Outcome(
        run_dir=run_dir,
        harness=harness,
        baseline=base,
        candidate=cand,
        comparison=comparison,
        findings=findings,
        exit_code=code,
        prediction=prediction,
        judged=judged,
        manifest=rundir.write(run_dir, data),
        selection=selection,
        accepted=settled.accepted,
        expected=settled.expected,
    )
