"""`fidelity run`: both sides under one harness table, compared, written to a run directory.

Orchestration only: each side runs in its own detached worktree (`runner`), never in the
user's checkout; the verdict comes from the pure core (`compare`, `findings`, `outcome`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity import proc
from fidelity.errors import UsageError
from fidelity.git import objects, worktrees
from fidelity.matrix.cases.table import Matrix, with_replay
from fidelity.matrix.run import harness_tree, ledger, recheck, repo_state, rundir, setups, subset
from fidelity.matrix.run.harness import accept_state, cases_table, read_harness, read_prediction
from fidelity.matrix.run.plan import PlanRecord, RunPlan, SidePlan
from fidelity.matrix.run.repo_state import RepoState
from fidelity.matrix.run.request import NO_HOOKS, RunHooks, RunRequest
from fidelity.matrix.run.runner import RunContext, run_sides
from fidelity.matrix.run.stamps import Stamps
from fidelity.matrix.verdict import ontime
from fidelity.matrix.verdict.accept import Allowance
from fidelity.matrix.verdict.compare import compare
from fidelity.matrix.verdict.evidence import SideEvidence
from fidelity.matrix.verdict.explain import Meeting, explanations
from fidelity.matrix.verdict.findings import Finding, Harness, harness_findings, provenance
from fidelity.matrix.verdict.outcome import (
    Outcome,
    Selection,
    decide,
    partial_run_findings,
    prediction_findings,
)
from fidelity.matrix.verdict.predict import Prediction
from fidelity.progress import Progress


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run(repo: Path, request: RunRequest, hooks: RunHooks = NO_HOOKS) -> Outcome:
    """Run both sides under one harness table, compare, and write the run directory.

    The request's selectors (case ids and `tag:` selectors) or shard run a subset: a partial
    run, said so in its verdict and in run.json, so it can never pass for the full gate; under
    CI (`ci`) it is a finding unless `partial` says it is meant.
    """
    return _carried_out(start(repo, request, hooks.progress), hooks)


def run_resumed(
    repo: Path, run_dir: Path, given: RunRequest, hooks: RunHooks = NO_HOOKS
) -> Outcome:
    """Continue the interrupted run in run_dir (`resume`): only cases without complete
    evidence run again, by the table, selection and shard it began with."""
    return _carried_out(resume(repo, run_dir, given, hooks.progress), hooks)


def _carried_out(plan: RunPlan, hooks: RunHooks) -> Outcome:
    if hooks.warn is not None:
        hooks.warn(known_before(plan))
    return execute(plan)


def known_before(plan: RunPlan) -> tuple[Finding, ...]:
    """The findings a run is sure to end with, known before any case runs: an uncommitted
    table, prediction or harness file, a late prediction, a partial run under CI. Said first,
    so nobody waits for an untrusted run."""
    return (
        *harness_findings(plan.harness),
        *prediction_findings(plan.prediction, plan.selection),
        *partial_run_findings(plan.selection, plan.request.ci),
    )


@dataclass(frozen=True, slots=True)
class _Table:
    """The harness table read, its cases chosen and the sides resolved: what a fresh and a
    resumed run both read before anything runs."""

    rel: str
    harness: Harness
    full: Matrix
    matrix: Matrix
    selection: Selection | None
    prediction: Prediction | None
    sides: tuple[SidePlan, SidePlan]
    accepts: tuple[Allowance, ...]


def _read_table(repo: Path, request: RunRequest, checkout: RepoState) -> _Table:
    baseline, candidate = request.baseline, request.candidate or "HEAD"
    if baseline is None:
        raise UsageError("name the reference revision: --baseline REV")
    rel = cases_table(repo, request.cases)
    harness_rev, expect = request.harness_rev, request.expect
    harness, full = read_harness(repo, rel, harness_rev, dirty=list(checkout.files))
    prediction = read_prediction(repo, expect, harness, harness_rev, full) if expect else None
    matrix, selection = subset.choose(with_replay(full, request.replay), request)
    known = {harness_rev or "HEAD": harness.sha}  # a revision named twice is resolved once
    for rev in (baseline, candidate):
        known[rev] = known.get(rev) or objects.rev_parse(repo, rev)
    sides = (
        SidePlan("baseline", baseline, known[baseline]),
        SidePlan("candidate", candidate, known[candidate]),
    )
    if prediction is not None and prediction.committed and prediction.blob:
        shas = (sides[0].sha, sides[1].sha)
        said = ontime.timing(repo, prediction.path, prediction.blob, shas, harness.sha)
        prediction = replace(prediction, stated=said.stated, late=said.late)
    today = dt.datetime.now(dt.UTC).date()
    accepts = accept_state(repo, full.accepts, sides[1].sha, today)
    return _Table(rel, harness, full, matrix, selection, prediction, sides, accepts)


def _plan(
    repo: Path, request: RunRequest, table: _Table, run_dir: Path, checkout: RepoState
) -> RunPlan:
    """The plan of a run of request in run_dir, its table read, started now."""
    return RunPlan(
        repo=repo,
        run_dir=run_dir,
        checkout=checkout,
        request=request,
        table_path=table.rel,
        harness=table.harness,
        full=table.full,
        matrix=table.matrix,
        sides=table.sides,
        started=_now(),
        prediction=table.prediction,
        selection=table.selection,
        accepts=table.accepts,
    )


def start(repo: Path, request: RunRequest, progress: Progress | None = None) -> RunPlan:
    """A fresh run's plan, its run directory made (the request's `out`, else one under
    .fidelity/runs) and its plan.json written before anything runs."""
    repo = worktrees.toplevel(repo)
    checkout = repo_state.snapshot(repo)
    table = _read_table(repo, request, checkout)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    label = f"{stamp}-{table.sides[0].sha[:7]}-{table.sides[1].sha[:7]}"
    run_dir = rundir.prepare(request.out, repo, label)
    plan = replace(_plan(repo, request, table, run_dir, checkout), progress=progress)
    ledger.write_plan(plan.run_dir, PlanRecord.of(plan))
    return plan


def resume(
    repo: Path, run_dir: Path, given: RunRequest, progress: Progress | None = None
) -> RunPlan:
    """The plan of the interrupted run in run_dir, read back from its plan.json, with the
    cases it already completed. `given` may name the sides again (each must be the commit
    the run began at) and sets jobs and ci; UsageError when it sets anything else (a resumed
    run is the run it began as), or when the table or a side's commit is no longer the one
    it began with. (`execute` kills the processes the killed run left running, once it
    holds the run directory alone.)"""
    given.check_resumable()
    repo = worktrees.toplevel(repo)
    checkout = repo_state.snapshot(repo)
    began = ledger.read_plan(run_dir)
    request = began.request.resumed_by(given)
    table = _read_table(repo, request, checkout)
    run_dir = run_dir.absolute()
    _same_as_began(began, table.harness, table.sides)
    definitions = {c.id: c.definition_sha() for c in table.matrix.cases}
    done = {p.role: ledger.completed(run_dir / p.role, definitions) for p in table.sides}
    plan = _plan(repo, request, table, run_dir, checkout)
    return replace(plan, started=began.started, progress=progress, resumed=True, done=done)


def execute(plan: RunPlan) -> Outcome:
    """Run the plan's cases on both sides, compare, judge, and write run.json; the run
    directory is held alone (`ledger.sole`: a second resume of it is refused) and marked as
    running (`ledger.running`), and so are the kept set-ups it uses (`setups.holding`), so
    `fidelity gc` leaves them until the run ends."""
    with ledger.sole(plan.run_dir), ledger.running(plan.run_dir), setups.holding() as holds:
        if plan.resumed:
            proc.kill_marked(str(plan.run_dir) + "/")  # cases the killed run left running
        return _execute(plan, holds)


def _execute(plan: RunPlan, holds: setups.Holds) -> Outcome:
    specs = {c.id: c.compare for c in plan.matrix.cases}
    meeting = Meeting(plan.run_dir, specs)  # cases compared while others run
    stamps = Stamps()  # each case's evidence files as taken: another case may rewrite them
    base, cand, harness = _sides(plan, meeting, holds, stamps)
    declared = tuple((c.id, c.definition_sha()) for c in plan.matrix.cases)
    explained = explanations(plan.run_dir, base, cand, specs, plan.run_dir, known=meeting.explained)
    comparison = compare(declared, base, cand, explained)
    repo, run_dir = plan.repo, plan.run_dir
    own = run_dir.relative_to(repo) if run_dir.is_relative_to(repo) else None
    after = repo_state.snapshot(repo, plan.checkout)
    changes = tuple(repo_state.changes(plan.checkout, after, own))
    kind = "declared" if plan.selection is None else "selected"
    findings = provenance(
        harness, base, cand, comparison, specs=specs, checkout_changes=changes, kind=kind
    )
    outputs = {c.id: c.outputs for c in plan.matrix.cases}
    findings += tuple(recheck.rewritten(stamps.touched(), (base, cand), outputs))
    findings += prediction_findings(plan.prediction, plan.selection)
    findings += partial_run_findings(plan.selection, plan.request.ci)
    judged, code, settled = decide(
        comparison, findings, plan.prediction, plan.selection, plan.accepts
    )
    findings = settled.findings
    times = {"started": plan.started, "finished": _now()}
    if plan.resumed:
        times["resumed"] = _now()
    data = rundir.manifest(
        replace(plan, harness=harness),
        sides=(base, cand),
        comparison=comparison,
        findings=findings,
        exit_code=code,
        judged=judged,
        checkout_changes=changes,
        times=times,
        settled=settled,
    )
    return Outcome(
        run_dir=run_dir,
        harness=harness,
        baseline=base,
        candidate=cand,
        comparison=comparison,
        findings=findings,
        exit_code=code,
        prediction=plan.prediction,
        judged=judged,
        manifest=rundir.write(run_dir, data),
        selection=plan.selection,
        accepted=settled.accepted,
        expected=settled.expected,
    )


def _sides(
    plan: RunPlan, meeting: Meeting, holds: setups.Holds, stamps: Stamps
) -> tuple[SideEvidence, SideEvidence, Harness]:
    """Both sides' evidence, their cases run (or, an empty shard, nothing to check out), and
    the harness with what the cases changed in its checkout."""
    if not plan.matrix.cases:
        base, cand = (SideEvidence(p.role, p.rev, p.sha) for p in plan.sides)
        return base, cand, plan.harness
    if plan.progress:
        done = [plan.done.get(p.role, {}) for p in plan.sides]
        plan.progress.expect(sum(c.id not in d for d in done for c in plan.matrix.cases))
    reads = plan.matrix.reads_harness()
    setup_reads = plan.matrix.reads_harness(cases=False)
    with contextlib.ExitStack() as stack:
        checkout = (
            stack.enter_context(
                harness_tree.checked_out(plan.repo, plan.harness.tree, plan.harness.paths)
            )
            if reads
            else None
        )
        ctx = RunContext(
            repo=plan.repo,
            matrix=plan.matrix,
            table_path=plan.table_path,
            run_dir=plan.run_dir,
            jobs=plan.request.jobs,
            progress=plan.progress,
            full=plan.full,
            harness=checkout.path if checkout else None,
            harness_tree=plan.harness.tree if setup_reads else "",
            meeting=meeting,
            holds=holds,
            stamps=stamps,
        )
        try:
            with proc.adopting():  # a case's descendant that escapes its group comes back
                base, cand = run_sides(ctx, plan.sides, plan.done)
        except KeyboardInterrupt as exc:
            exc.run_dir = plan.run_dir  # type: ignore[attr-defined]  # the CLI says how to resume
            raise
    changed = tuple(checkout.changed) if checkout else ()
    return base, cand, replace(plan.harness, changed=changed)


def _same_as_began(began: PlanRecord, harness: Harness, plans: Sequence[SidePlan]) -> None:
    """UsageError unless the resumed run is the one that began: same table, same commits,
    and the same harness files when the cases read them."""
    if began.table_sha256 != harness.table_sha256:
        raise UsageError(
            f"the case table {began.request.cases} is not the one this run began with; "
            "a resumed run must judge every case by the same table: start a new run"
        )
    was = began.harness_tree
    if harness.reads and was and was != harness.tree:
        raise UsageError(
            f"the harness's files (tree {harness.tree[:12]}) are not the ones this run began "
            f"with (tree {was[:12]}), and its cases read them as {{harness}}: restore them, or "
            "start a new run"
        )
    for plan, old in zip(plans, began.sides, strict=True):
        if plan.sha != old.sha:
            raise UsageError(
                f"the {plan.role} {plan.rev} is now {plan.sha[:12]}, but this run began at "
                f"{old.sha[:12]}; resume with --{plan.role} {old.sha[:12]}, or start a new run"
            )
