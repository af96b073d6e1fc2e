"""`fidelity run`, `compare` and `verify`: orchestration only, over the pure comparison.

The case table is read once, from the harness revision, and both sides run that same
table; each side runs in its own detached worktree, never in the user's checkout.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from fidelity import casetable, git, predict, rundir
from fidelity.casetable import Matrix
from fidelity.compare import Comparison, compare
from fidelity.errors import UsageError
from fidelity.evidence import SideEvidence
from fidelity.explain import explanations
from fidelity.findings import Code, Finding, Harness, exit_code, provenance
from fidelity.predict import Prediction, PredictionVerdict
from fidelity.runner import Progress, SidePlan, hash_tree, run_side

WORKTREE = "WORKTREE"


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


def table_path(repo: Path, cases: str | Path) -> str:
    """The table's path relative to the repository top, as git names it."""
    path = Path(cases)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(repo.resolve())
        except ValueError as exc:
            raise UsageError(f"case table {cases} is outside the repository {repo}") from exc
    return path.as_posix()


def harness_file(repo: Path, rel: str, harness_rev: str | None, sha: str) -> tuple[bytes, bool]:
    """A file that defines the comparison, read from the harness; and whether it is committed."""
    if harness_rev is None:
        path = repo / rel
        if not path.is_file():
            raise UsageError(f"no file at {path}; check the path, or pass --cases/--expect")
        data = path.read_bytes()
        return data, git.show_file(repo, sha, rel) == data
    committed = git.show_file(repo, sha, rel)
    if committed is None:
        raise UsageError(f"the harness revision {harness_rev} has no file {rel}")
    return committed, True


def read_harness(repo: Path, rel: str, harness_rev: str | None) -> tuple[Harness, Matrix]:
    """Read the case table once: from the checkout (default) or from a committed revision."""
    sha = git.rev_parse(repo, harness_rev or "HEAD")
    data, committed = harness_file(repo, rel, harness_rev, sha)
    dirty_paths = tuple(git.dirty_paths(repo)) if harness_rev is None else ()
    rev = harness_rev or WORKTREE
    matrix = casetable.parse(data, f"{rel}@{harness_rev or 'checkout'}")
    harness = Harness(rev, sha, bool(dirty_paths), dirty_paths, rel, matrix.sha256, not committed)
    return harness, matrix


def read_prediction(
    repo: Path, expect: str | Path, harness: Harness, harness_rev: str | None, matrix: Matrix
) -> Prediction:
    """The prediction, from the same harness as the table, resolved before anything runs."""
    rel = table_path(repo, expect)
    data, committed = harness_file(repo, rel, harness_rev, harness.sha)
    tags = {c.id: c.tags for c in matrix.cases}
    return predict.load(data, rel, tags, git.hash_object(data), committed)


def prediction_findings(prediction: Prediction | None) -> tuple[Finding, ...]:
    if prediction is None or prediction.committed:
        return ()
    return (
        Finding(
            Code.PREDICTION_UNCOMMITTED,
            f"the prediction {prediction.path} is not committed at the harness revision; "
            "a prediction must be fixed before the measurement it predicts",
        ),
    )


def decide(
    comparison: Comparison, findings: tuple[Finding, ...], prediction: Prediction | None
) -> tuple[PredictionVerdict | None, int]:
    """The exit code: the prediction's verdict when one was stated, else the plain gate's."""
    if prediction is None:
        return None, exit_code(comparison, findings)
    judged = predict.judge(comparison, prediction.moved, findings)
    return judged, judged.exit_code


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run(
    repo: Path,
    baseline: str,
    candidate: str,
    cases: str | Path,
    harness_rev: str | None = None,
    out: Path | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
    expect: str | Path | None = None,
) -> Outcome:
    """Run both sides under one harness table, compare, and write the run directory."""
    repo = git.toplevel(repo)
    rel = table_path(repo, cases)
    harness, matrix = read_harness(repo, rel, harness_rev)
    prediction = read_prediction(repo, expect, harness, harness_rev, matrix) if expect else None
    plans = [SidePlan("baseline", baseline, git.rev_parse(repo, baseline)),
             SidePlan("candidate", candidate, git.rev_parse(repo, candidate))]  # fmt: skip
    started = _now()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = rundir.prepare(out, repo, f"{stamp}-{plans[0].sha[:7]}-{plans[1].sha[:7]}")
    base, cand = (run_side(repo, p, matrix, rel, run_dir, jobs, progress) for p in plans)
    declared = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    specs = {c.id: c.compare for c in matrix.cases}
    comparison = compare(declared, base, cand, explanations(run_dir, base, cand, specs))
    findings = provenance(harness, base, cand, comparison, specs) + prediction_findings(prediction)
    judged, code = decide(comparison, findings, prediction)
    data = rundir.manifest(
        harness, matrix, base, cand, comparison, findings, code,
        {"started": started, "finished": _now()},
    )  # fmt: skip
    data["prediction"] = predict.to_json(prediction)
    data["prediction_verdict"] = asdict(judged) if judged else None
    data = rundir.write(run_dir, data)
    return Outcome(
        run_dir, harness, base, cand, comparison, findings, code, prediction, judged, data
    )


def altered_evidence(run_dir: Path, side: SideEvidence) -> list[Finding]:
    """Files in the run directory that no longer match the hashes recorded for them."""
    found = []
    for case_id, ev in side.cases.items():
        case_dir = run_dir / side.role / "cases" / case_id
        for kind, recorded in (("out", ev.outputs), ("cache", ev.cache)):
            present = hash_tree(case_dir / kind)
            bad = sorted(p for p, h in recorded.items() if present.get(p) != h)
            if bad:
                found.append(
                    Finding(
                        Code.EVIDENCE_ALTERED,
                        f"{len(bad)} recorded {kind} files are missing or changed: "
                        f"{', '.join(bad[:3])}",
                        side.role,
                        case_id,
                    )
                )
    return found


def recompare(run_dir: Path) -> Outcome:
    """Re-render the verdict from a run directory alone, re-checking its evidence files."""
    record = rundir.read(run_dir)
    explained = explanations(run_dir, record.baseline, record.candidate, record.specs)
    comparison = compare(record.declared, record.baseline, record.candidate, explained)
    findings = provenance(
        record.harness, record.baseline, record.candidate, comparison, record.specs
    )
    findings += tuple(
        altered_evidence(run_dir, record.baseline) + altered_evidence(run_dir, record.candidate)
    )
    prediction = predict.from_json(record.raw.get("prediction"))
    findings += prediction_findings(prediction)
    judged, code = decide(comparison, findings, prediction)
    return Outcome(
        run_dir, record.harness, record.baseline, record.candidate, comparison, findings, code,
        prediction, judged, record.raw,
    )  # fmt: skip


def verify(run_dir: Path, expect: Path | None) -> Outcome:
    """Judge a stored run against its recorded prediction, or against one given now.

    A prediction given now that differs from the recorded one, or that was never recorded
    (stated after measuring), is a finding: the run is judged, but cannot pass.
    """
    outcome = recompare(run_dir)
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
    given = predict.load(data, str(expect), tags, git.hash_object(data), committed=False)
    extra: list[Finding] = []
    if recorded is None:
        why = f"the run recorded no prediction; {expect} was stated after measuring"
        extra.append(Finding(Code.PREDICTION_NOT_STATED, why))
    elif recorded.sha256 != given.sha256:
        extra.append(Finding(
            Code.PREDICTION_DIFFERS,
            f"{expect} (sha256 {given.sha256[:12]}) differs from the prediction recorded before "
            f"the run ({recorded.path}, sha256 {recorded.sha256[:12]}); judged by the recorded one",
        ))  # fmt: skip
    prediction = recorded or given
    findings = outcome.findings + tuple(extra)
    judged, code = decide(outcome.comparison, findings, prediction)
    return replace(outcome, findings=findings, prediction=prediction, judged=judged, exit_code=code)
