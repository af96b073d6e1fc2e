"""A matrix verdict as a value, and the one rule that turns it into an exit code.

Kept apart from the orchestration that produces it (`gate`) and re-reads it (`rejudge`), so
that the words and reports of a verdict import nothing that runs git or processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fidelity.matrix.verdict import accept, predict
from fidelity.matrix.verdict.accept import Allowance, Settled
from fidelity.matrix.verdict.compare import Comparison, Verdict
from fidelity.matrix.verdict.evidence import SideEvidence
from fidelity.matrix.verdict.findings import Code, Finding, Harness, exit_code
from fidelity.matrix.verdict.predict import Prediction, PredictionVerdict

WORKTREE = "WORKTREE"  # the harness revision's name when the table is read from the checkout


@dataclass(frozen=True, slots=True)
class Selection:
    """A partial run: the cases --case/--tag (or one --shard) chose, of the table's; or a
    merge of shards that left some declared case out."""

    selectors: tuple[str, ...]
    selected: tuple[str, ...]
    declared: int
    shard: tuple[int, int] | None = None  # K of N
    all: tuple[tuple[str, str], ...] = ()  # every declared (id, definition sha)
    meant: bool = False  # --partial: a partial run on purpose, which CI lets pass

    def to_json(self) -> dict[str, Any]:
        return {
            "selectors": list(self.selectors),
            "selected": list(self.selected),
            "declared": self.declared,
            "shard": list(self.shard) if self.shard else None,
            "all": [list(pair) for pair in self.all],
            "meant": self.meant,
        }

    @property
    def scope(self) -> str:
        """ "N of M declared cases", as every report of a partial run says it."""
        return f"{len(self.selected)} of {self.declared} declared cases"

    @staticmethod
    def from_json(data: Mapping[str, Any] | None) -> Selection | None:
        if not data:
            return None
        shard = data.get("shard")
        return Selection(
            tuple(data["selectors"]),
            tuple(data["selected"]),
            data["declared"],
            (shard[0], shard[1]) if shard else None,
            tuple((i, d) for i, d in data.get("all", ())),
            bool(data.get("meant", False)),
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    run_dir: Path
    harness: Harness
    baseline: SideEvidence
    candidate: SideEvidence
    comparison: Comparison
    findings: tuple[Finding, ...]
    exit_code: int
    prediction: Prediction | None = None
    judged: PredictionVerdict | None = None
    manifest: Mapping[str, Any] = field(default_factory=dict)
    selection: Selection | None = None
    accepted: tuple[tuple[Finding, Allowance], ...] = ()  # taken out by the table's [[accept]]
    expected: tuple[tuple[Finding, Allowance], ...] = ()  # taken out by the prediction


def prediction_findings(
    prediction: Prediction | None, selection: Selection | None = None
) -> tuple[Finding, ...]:
    if prediction is None:
        return ()
    found = []
    if not prediction.committed:
        found.append(
            Finding(
                Code.PREDICTION_UNCOMMITTED,
                f"the prediction {prediction.path} is not committed at the harness revision; "
                "a prediction must be fixed before the measurement it predicts",
            )
        )
    if prediction.late:
        found.append(Finding(Code.PREDICTION_LATE, prediction.late))
    return (*found, *partial_findings(prediction, selection))


def partial_run_findings(selection: Selection | None, ci: bool) -> tuple[Finding, ...]:
    """Under CI, a partial run cannot pass for the gate unless `--partial` says it is meant.
    A shard is partial by design and exempt: the merge of every shard is the gate."""
    if not ci or selection is None or selection.shard is not None or selection.meant:
        return ()
    why = (
        f"a partial run under CI: {selection.scope} ({', '.join(selection.selectors)}), so it "
        "cannot stand for the gate; run every case, or pass --partial if this step means to "
        "run only these"
    )
    return (Finding(Code.PARTIAL_RUN, why),)


def partial_findings(prediction: Prediction, selection: Selection | None) -> tuple[Finding, ...]:
    """A partial run cannot confirm a prediction about cases it did not run (a shard's
    prediction is judged on the merged run instead)."""
    if selection is not None and selection.shard is not None:
        return ()
    named = prediction.moved | prediction.fixed | prediction.broken | set(prediction.replay)
    unrun = sorted(named - set(selection.selected)) if selection else []
    if not unrun:
        return ()
    why = (
        f"predicted to move, be fixed, broken or replayed so, but not selected by this "
        f"partial run: "
        f"{', '.join(unrun)}; "
        "a prediction holds only over the cases it names, so run them too"
    )
    return (Finding(Code.PARTIAL_PREDICTION, why),)


def decide(
    comparison: Comparison,
    findings: tuple[Finding, ...],
    prediction: Prediction | None,
    selection: Selection | None = None,
    accepts: Sequence[Allowance] = (),
) -> tuple[PredictionVerdict | None, int, Settled]:
    """The exit code: the prediction's verdict when one was stated, else the plain gate's;
    with the findings the table accepts and the prediction expects taken out (and said).
    A shard of a predicted run only collects evidence (3 on a finding, else 0); the merged
    run is judged. An empty shard holds nothing and fails nothing."""
    ran = selection.selected if selection is not None else None
    expected = prediction.findings if prediction is not None else ()
    failing = {
        r.case_id: r.same_failure for r in comparison.cases if r.verdict is Verdict.BOTH_FAILED
    }
    shard = selection is not None and selection.shard is not None
    settled = accept.settle(findings, accepts, expected, ran, failing, shard=shard)
    if shard and (not comparison.cases or prediction is not None):
        return None, 3 if settled.findings else 0, settled
    if prediction is None:
        return None, exit_code(comparison, settled.findings, len(settled.known)), settled
    judged = predict.judge(comparison, prediction, settled)
    return judged, judged.exit_code, settled
