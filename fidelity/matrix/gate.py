"""`fidelity run`: both sides under one harness table, compared, written to a run directory.

Orchestration only: each side runs in its own detached worktree (`runner`), never in the
user's checkout; the verdict comes from the pure core (`compare`, `findings`, `outcome`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from fidelity import git, proc, repo_state
from fidelity.matrix import predict, rundir
from fidelity.matrix.compare import compare
from fidelity.matrix.explain import explanations
from fidelity.matrix.findings import provenance
from fidelity.matrix.harness import read_harness, read_prediction, table_path
from fidelity.matrix.outcome import Outcome, Selection, decide, prediction_findings
from fidelity.matrix.runner import Progress, SidePlan, run_side
from fidelity.matrix.table import Matrix


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run(
    repo: Path,
    baseline: str,
    candidate: str,
    cases: str | Path,
    *,
    harness_rev: str | None = None,
    out: Path | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
    expect: str | Path | None = None,
    select: Sequence[str] = (),
) -> Outcome:
    """Run both sides under one harness table, compare, and write the run directory.

    `select` (case ids and `tag:` selectors) runs a subset: a partial run, said so in its
    verdict and in run.json, so it can never pass for the full gate.
    """
    repo = git.toplevel(repo)
    before = repo_state.snapshot(repo)
    rel = table_path(repo, cases)
    harness, matrix = read_harness(repo, rel, harness_rev)
    prediction = read_prediction(repo, expect, harness, harness_rev, matrix) if expect else None
    matrix, selection = choose(matrix, select)
    plans = [
        SidePlan("baseline", baseline, git.rev_parse(repo, baseline)),
        SidePlan("candidate", candidate, git.rev_parse(repo, candidate)),
    ]
    started = _now()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = rundir.prepare(out, repo, f"{stamp}-{plans[0].sha[:7]}-{plans[1].sha[:7]}")
    with proc.adopting():  # a case's descendant that escapes its group comes back to us
        base, cand = (run_side(repo, p, matrix, rel, run_dir, jobs, progress) for p in plans)
    declared = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    specs = {c.id: c.compare for c in matrix.cases}
    comparison = compare(declared, base, cand, explanations(run_dir, base, cand, specs, run_dir))
    own = run_dir.relative_to(repo) if run_dir.is_relative_to(repo) else None
    changes = tuple(repo_state.changes(before, repo_state.snapshot(repo), own))
    findings = provenance(harness, base, cand, comparison, specs, changes)
    findings += prediction_findings(prediction, selection)
    judged, code = decide(comparison, findings, prediction)
    times = {"started": started, "finished": _now()}
    data = rundir.manifest(harness, matrix, base, cand, comparison, findings, code, times)
    data["run_dir"] = str(run_dir)
    data["checkout_changes"] = list(changes)
    data["selection"] = selection.to_json() if selection else None
    data["prediction"] = predict.to_json(prediction)
    data["prediction_verdict"] = asdict(judged) if judged else None
    data = rundir.write(run_dir, data)
    return Outcome(
        run_dir,
        harness,
        base,
        cand,
        comparison,
        findings,
        code,
        prediction,
        judged,
        data,
        selection,
    )


def choose(matrix: Matrix, selectors: Sequence[str]) -> tuple[Matrix, Selection | None]:
    """The cases the selectors name (ids or `tag:` selectors); UsageError for one that
    names no case."""
    if not selectors:
        return matrix, None
    tags = {c.id: c.tags for c in matrix.cases}
    chosen = predict.resolve(selectors, tags, "--case/--tag")
    cases = tuple(c for c in matrix.cases if c.id in chosen)
    selection = Selection(tuple(selectors), tuple(c.id for c in cases), len(matrix.cases))
    return replace(matrix, cases=cases), selection
