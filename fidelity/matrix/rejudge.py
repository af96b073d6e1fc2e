"""`fidelity compare` and `fidelity verify`: a stored run judged again from its directory alone.

The evidence files are hashed again, so a run directory edited after the fact is a finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError
from fidelity.git import objects
from fidelity.matrix.run import recheck, rundir
from fidelity.matrix.run.readonce import ReadOnce
from fidelity.matrix.verdict import predict
from fidelity.matrix.verdict.accept import MERGED_ONLY, Allowance
from fidelity.matrix.verdict.compare import Comparison, compare
from fidelity.matrix.verdict.explain import explanations
from fidelity.matrix.verdict.findings import Code, Finding, provenance
from fidelity.matrix.verdict.outcome import (
    Outcome,
    Selection,
    decide,
    partial_findings,
    partial_run_findings,
    prediction_findings,
)


def _integrity(
    integrity: str, recorded: Mapping[str, str], comparison: Comparison
) -> list[Finding]:
    """Findings when run.json was edited, or when judging again disagrees with the run."""
    found = [Finding(Code.RUN_JSON_ALTERED, integrity)] if integrity else []
    for result in comparison.cases:
        was = recorded.get(result.case_id)
        if was != str(result.verdict):
            why = (
                f"the run itself judged this case {was or 'not at all'}, judged again now "
                f"{result.verdict}; trust neither until the run is repeated"
            )
            found.append(Finding(Code.REJUDGED_DIFFERS, why, case_id=result.case_id))
    return found


def _merge_findings(raw: Mapping[str, Any]) -> tuple[Finding, ...]:
    """The findings a merge recorded that judging the merged run again cannot recompute (a
    case in no shard, or in two), those its table accepted too: kept, so `verify` cannot
    pass what `merge` did not, and an entry that took one is not unused now."""
    taken = [e.get("finding") for key in ("accepted", "expected") for e in raw.get(key) or []]
    found = []
    for item in [*(raw.get("findings") or []), *taken]:
        if isinstance(item, dict) and item.get("code") in MERGED_ONLY:
            found.append(
                Finding(
                    Code(item["code"]),
                    str(item.get("message", "")),
                    item.get("side"),
                    item.get("case_id"),
                )
            )
    return tuple(found)


def recompare(run_dir: Path, *, ci: bool = False, partial: bool = False) -> Outcome:
    """Re-render the verdict from a run directory alone, re-checking its evidence files. A
    partial run is judged as `fidelity run` judges one: under CI (`ci`) a finding, unless
    the run or this command (`partial`) says it is meant."""
    record = rundir.read(run_dir)
    origin: Path | dict[str, Path] = Path(record.raw.get("run_dir", run_dir))  # its own paths
    if "origins" in record.raw:  # a merged run: each case ran in its shard's directory
        origin = {cid: Path(path) for cid, path in record.raw["origins"].items()}
    once = ReadOnce()  # each output judged is hashed from the bytes judged, not read again
    base, cand = record.baseline, record.candidate
    explained = explanations(run_dir, base, cand, record.specs, origin, read=once.source)
    selection = Selection.from_json(record.raw.get("selection"))
    # a merge that a shard is missing from judged every declared case, the unrun too
    short = selection is not None and "merged_from" in record.raw and bool(selection.all)
    declared = selection.all if short and selection else record.declared
    comparison = compare(declared, record.baseline, record.candidate, explained)
    findings = provenance(
        record.harness,
        record.baseline,
        record.candidate,
        comparison,
        specs=record.specs,
        checkout_changes=record.checkout_changes,
        kind="declared" if selection is None or short else "selected",
    )
    outputs = recheck.declared_outputs(record.raw)
    for side in (record.baseline, record.candidate):
        findings += tuple(recheck.altered(run_dir, side, outputs, digest=once.sha256))
    findings += tuple(_integrity(record.integrity, record.recorded, comparison))
    findings += _merge_findings(record.raw)
    prediction = predict.from_json(record.raw.get("prediction"))
    if selection is not None and partial:
        selection = replace(selection, meant=True)
    findings += prediction_findings(prediction, selection)
    findings += partial_run_findings(selection, ci)
    accepts = stored_accepts(record.raw)
    judged, code, settled = decide(comparison, findings, prediction, selection, accepts)
    findings = settled.findings
    return Outcome(
        run_dir=run_dir,
        harness=record.harness,
        baseline=record.baseline,
        candidate=record.candidate,
        comparison=comparison,
        findings=findings,
        exit_code=code,
        prediction=prediction,
        judged=judged,
        manifest=record.raw,
        selection=selection,
        accepted=settled.accepted,
        expected=settled.expected,
    )


def verify(
    run_dir: Path, expect: Path | None, *, ci: bool = False, partial: bool = False
) -> Outcome:
    """Judge a stored run against its recorded prediction, or against one given now.

    A prediction given now that differs from the recorded one, or that was never recorded
    (stated after measuring), is a finding: the run is judged, but cannot pass.
    """
    outcome = recompare(run_dir, ci=ci, partial=partial)
    recorded = outcome.prediction
    if expect is None:
        if recorded is None:
            raise UsageError(
                f"{run_dir} was run without --expect; pass the prediction: --expect FILE"
            )
        return outcome
    if not expect.is_file():
        raise UsageError(f"no prediction file at {expect}")
    data = expect.read_bytes()
    tags = {c["id"]: tuple(c.get("tags", ())) for c in outcome.manifest["matrix"]["cases"]}
    given = predict.load(data, str(expect), tags, objects.hash_object(data), committed=False)
    extra: list[Finding] = []
    if recorded is None:
        why = f"the run recorded no prediction; {expect} was stated after measuring"
        extra.append(Finding(Code.PREDICTION_NOT_STATED, why))
    elif recorded.sha256 != given.sha256:
        why = (
            f"{expect} (sha256 {given.sha256[:12]}) differs from the prediction recorded before "
            f"the run ({recorded.path}, sha256 {recorded.sha256[:12]}); judged by the recorded one"
        )
        extra.append(Finding(Code.PREDICTION_DIFFERS, why))
    prediction = recorded or given
    findings = unsettled(outcome) + tuple(extra)
    if recorded is None:
        findings += partial_findings(given, outcome.selection)
    accepts = stored_accepts(outcome.manifest)
    judged, code, settled = decide(
        outcome.comparison, findings, prediction, outcome.selection, accepts
    )
    return replace(
        outcome,
        findings=settled.findings,
        prediction=prediction,
        judged=judged,
        exit_code=code,
        accepted=settled.accepted,
        expected=settled.expected,
    )


def stored_accepts(raw: Mapping[str, Any]) -> tuple[Allowance, ...]:
    """The table's accepted findings as the run recorded them, expiry decided then."""
    return tuple(Allowance.from_json(a) for a in raw["matrix"].get("accept", ()))


def unsettled(outcome: Outcome) -> tuple[Finding, ...]:
    """An outcome's findings before any was accepted or expected, to be settled again (the
    known failures an entry took are not findings: settling finds them again)."""
    own = (Code.ACCEPTED_UNUSED, Code.ACCEPTED_EXPIRED)
    kept = tuple(f for f in outcome.findings if f.code not in own)
    taken = (f for f, _ in (*outcome.accepted, *outcome.expected))
    return kept + tuple(f for f in taken if f.code is not Code.BOTH_FAILED)
