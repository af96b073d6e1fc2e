"""`fidelity run`: both sides under one harness table, compared, written to a run directory.

Orchestration only: each side runs in its own detached worktree (`runner`), never in the
user's checkout; the verdict comes from the pure core (`compare`, `findings`, `outcome`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from fidelity import proc
from fidelity.errors import UsageError
from fidelity.git import objects, worktrees
from fidelity.matrix import ledger, predict, repo_state, rundir, shards
from fidelity.matrix.compare import compare
from fidelity.matrix.evidence import SideEvidence
from fidelity.matrix.explain import explanations
from fidelity.matrix.findings import Harness, provenance
from fidelity.matrix.harness import read_harness, read_prediction, table_path
from fidelity.matrix.outcome import Outcome, Selection, decide, prediction_findings
from fidelity.matrix.runner import Progress, SidePlan, run_sides
from fidelity.matrix.table import Matrix


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run(
    repo: Path,
    baseline: str | None,
    candidate: str | None,
    cases: str | Path,
    *,
    harness_rev: str | None = None,
    out: Path | None = None,
    jobs: int = 2,
    progress: Progress | None = None,
    expect: str | Path | None = None,
    select: Sequence[str] = (),
    resume: Path | None = None,
    shard: str | None = None,
    durations: Mapping[str, float] | None = None,
) -> Outcome:
    """Run both sides under one harness table, compare, and write the run directory.

    `select` (case ids and `tag:` selectors) runs a subset: a partial run, said so in its
    verdict and in run.json, so it can never pass for the full gate. `resume` continues an
    interrupted run from its directory: only cases without complete evidence run again,
    and it is refused when the harness's table or a side's commit is not the one it began
    with.
    """
    repo = worktrees.toplevel(repo)
    before = repo_state.snapshot(repo)
    began = ledger.read_plan(resume) if resume is not None else None
    if began is not None:
        harness_rev, cases = began["harness_rev"], began["table_path"]
        expect, select = began["expect"], began["selectors"]
        shard, durations = began.get("shard"), began.get("durations")
        baseline = baseline or began["sides"]["baseline"]["rev"]
        candidate = candidate or began["sides"]["candidate"]["rev"]
    if baseline is None or candidate is None:
        raise UsageError("name the sides: --baseline REV (and --candidate REV, default HEAD)")
    rel = table_path(repo, cases)
    harness, full = read_harness(repo, rel, harness_rev)
    prediction = read_prediction(repo, expect, harness, harness_rev, full) if expect else None
    matrix, selection = choose(full, select, shard, durations)
    plans = [
        SidePlan("baseline", baseline, objects.rev_parse(repo, baseline)),
        SidePlan("candidate", candidate, objects.rev_parse(repo, candidate)),
    ]
    if began is not None and resume is not None:
        run_dir, started = resume.absolute(), began["started"]
        _same_as_began(began, harness.table_sha256, plans)
        proc.kill_marked(str(run_dir) + "/")  # cases the killed run left running
        done = {
            p.role: ledger.completed(
                run_dir / p.role, {c.id: c.definition_sha() for c in matrix.cases}
            )
            for p in plans
        }
    else:
        started, done = _now(), {}
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_dir = rundir.prepare(out, repo, f"{stamp}-{plans[0].sha[:7]}-{plans[1].sha[:7]}")
        plan = _plan(harness_rev, rel, harness, plans, expect, select, started)
        ledger.write_plan(run_dir, {**plan, "shard": shard, "durations": durations})
    if matrix.cases:
        try:
            with proc.adopting():  # a case's descendant that escapes its group comes back
                base, cand = run_sides(
                    repo, plans, matrix, rel, run_dir, jobs, progress, done, full
                )
        except KeyboardInterrupt as exc:
            exc.run_dir = run_dir  # type: ignore[attr-defined]  # the CLI says how to resume
            raise
    else:  # an empty shard: nothing to check out or run
        base, cand = (SideEvidence(p.role, p.rev, p.sha) for p in plans)
    declared = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    specs = {c.id: c.compare for c in matrix.cases}
    comparison = compare(declared, base, cand, explanations(run_dir, base, cand, specs, run_dir))
    own = run_dir.relative_to(repo) if run_dir.is_relative_to(repo) else None
    changes = tuple(repo_state.changes(before, repo_state.snapshot(repo), own))
    findings = provenance(harness, base, cand, comparison, specs, changes)
    findings += prediction_findings(prediction, selection)
    judged, code = decide(comparison, findings, prediction, selection)
    times = {"started": started, "finished": _now()}
    if began is not None:
        times["resumed"] = _now()
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


def _plan(
    harness_rev: str | None,
    rel: str,
    harness: Harness,
    plans: Sequence[SidePlan],
    expect: str | Path | None,
    select: Sequence[str],
    started: str,
) -> dict[str, object]:
    return {
        "harness_rev": harness_rev,
        "table_path": rel,
        "table_sha256": harness.table_sha256,
        "sides": {p.role: {"rev": p.rev, "sha": p.sha} for p in plans},
        "expect": str(expect) if expect else None,
        "selectors": list(select),
        "started": started,
    }


def _same_as_began(began: Mapping[str, Any], table_sha: str, plans: Sequence[SidePlan]) -> None:
    """UsageError unless the resumed run is the one that began: same table, same commits."""
    if began["table_sha256"] != table_sha:
        raise UsageError(
            f"the case table {began['table_path']} is not the one this run began with; "
            "a resumed run must judge every case by the same table: start a new run"
        )
    for plan in plans:
        was = began["sides"][plan.role]["sha"]
        if plan.sha != was:
            raise UsageError(
                f"the {plan.role} {plan.rev} is now {plan.sha[:12]}, but this run began at "
                f"{was[:12]}; resume with --{plan.role} {was[:12]}, or start a new run"
            )


def choose(
    matrix: Matrix,
    selectors: Sequence[str],
    shard: str | None = None,
    durations: Mapping[str, float] | None = None,
) -> tuple[Matrix, Selection | None]:
    """The cases the selectors name (ids or `tag:` selectors), then one shard of them;
    UsageError for a selector that names no case or a malformed shard."""
    if not selectors and shard is None:
        return matrix, None
    cases = matrix.cases
    if selectors:
        tags = {c.id: c.tags for c in matrix.cases}
        chosen = predict.resolve(selectors, tags, "--case/--tag")
        cases = tuple(c for c in cases if c.id in chosen)
    k_of_n = shards.parse(shard) if shard is not None else None
    if k_of_n is not None:
        mine = set(shards.assign([c.id for c in cases], k_of_n[1], durations)[k_of_n[0] - 1])
        cases = tuple(c for c in cases if c.id in mine)
    shown = (*selectors, *([f"shard:{shard}"] if shard else []))
    every = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    selection = Selection(
        shown, tuple(c.id for c in cases), len(matrix.cases), k_of_n, every if k_of_n else ()
    )
    return replace(matrix, cases=cases), selection
