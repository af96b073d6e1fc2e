"""`fidelity run --out DIR --resume-if-exists`: a job its scheduler starts again finds its own
run directory and carries on, where a plain `--out DIR` is refused as not empty.

A Slurm task requeued (a node failure, `scontrol requeue`), a Kubernetes pod replaced after a
disruption, a CI job run again in the workspace it had: each starts the same command again,
with the same --out. What DIR holds then decides:

- nothing, or nothing judged (a plan cut short before it was whole): a fresh run;
- this command's run, unfinished (plan.json, no run.json): resumed as `--resume DIR` does,
  only the cases without complete evidence running again;
- this command's run, complete: judged again from its directory as `fidelity compare DIR`
  does (evidence hashed again); nothing runs;
- a run of another command (another table, prediction, selection, shard, or commit), files
  that are no run, or a run a live process is writing: refused (exit 2), naming why.

"This command's run" is read from plan.json: every recorded option of the request must be
equal (`RunRequest.differences`), and the sides' commits and the table's bytes (checked by
the resume itself, or here when complete).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError
from fidelity.git import objects
from fidelity.matrix import gate, rejudge
from fidelity.matrix.run import ledger, rundir, untrusted
from fidelity.matrix.run.harness import cases_table, read_harness
from fidelity.matrix.run.plan import InvalidPlan, PlanRecord
from fidelity.matrix.run.request import NO_HOOKS, RunHooks, RunRequest
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.schema import json_path

FRESH, RESUME, COMPLETE = "fresh", "resume", "complete"
CUT_SHORT = frozenset({ledger.PLAN + ".tmp"})  # what a run writes before its plan is whole


def held(out: Path, given: RunRequest) -> str:
    """FRESH, RESUME or COMPLETE for what out holds (the module's rules), `given` with its
    table as plan.json records it; UsageError when out holds anything else. A plan cut short
    is removed, so the fresh run finds out empty."""
    if not out.is_dir():
        return FRESH  # missing (a file there is refused as any --out is)
    names = {p.name for p in out.iterdir()}
    if names <= CUT_SHORT:
        for name in names:
            (out / name).unlink()
        return FRESH
    differs = _began(out).request.differences(given)
    if differs:
        what, was, now = differs[0]
        raise UsageError(
            f"{out} holds another run: its {what} is {_shown(was)}, this one's {_shown(now)}; "
            f"choose another --out (or finish that run with `fidelity run --resume {out}`)"
        )
    if (out / rundir.MANIFEST).is_file():
        return COMPLETE
    with ledger.idle(out) as idle:
        if not idle:
            raise UsageError(
                f"a fidelity run is writing {out} now (a live process holds it): wait for it to "
                "end, or choose another --out"
            )
    return RESUME


def _shown(value: Any) -> str:
    return "none" if value in (None, [], {}) else repr(value)


def _began(out: Path) -> PlanRecord:
    """plan.json of the run in out, complete or not; UsageError when out holds no run."""
    if not (out / ledger.PLAN).is_file():
        raise UsageError(
            f"{out} already holds files but no run of fidelity's (no {ledger.PLAN}); choose "
            "another --out"
        )
    try:
        return ledger.load_plan(out)
    except untrusted.DamagedRunError as exc:
        raise UsageError(f"{out} holds a damaged run: {exc}; choose another --out") from exc
    except InvalidPlan as exc:
        raise UsageError(
            f"{out} already holds files but no run of fidelity's ({out / ledger.PLAN} at "
            f"{json_path(exc.where)}: {exc.why}); choose another --out"
        ) from exc


def same_commits(out: Path, repo: Path, given: RunRequest) -> None:
    """UsageError unless the complete run in out was of given's commits and table."""
    began = _began(out)
    table = began.request.cases or ""
    harness, _ = read_harness(repo, table, began.request.harness_rev)
    if harness.table_sha256 != began.table_sha256:
        raise UsageError(
            f"{out} holds a complete run of another version of {table}: choose another --out"
        )
    revs = (str(given.baseline), given.candidate or "HEAD")
    for side, rev in zip(began.sides, revs, strict=True):
        if objects.rev_parse(repo, rev) != side.sha:
            raise UsageError(
                f"{out} holds a complete run whose {side.role} was {side.sha[:12]}, not {rev}: "
                f"choose another --out, or judge that run with `fidelity compare {out}`"
            )


def run(repo: Path, request: RunRequest, hooks: RunHooks = NO_HOOKS) -> Outcome:
    """`gate.run` for a command that may have run into its `out` before (the module's
    rules)."""
    out = request.out
    if out is None or request.baseline is None:
        raise UsageError(
            "--resume-if-exists starts the run afresh when its folder holds none: give --out "
            "DIR and --baseline REV"
        )
    state = held(out, replace(request, cases=cases_table(repo, request.cases)))
    note = hooks.note or (lambda _: None)
    if state == COMPLETE:
        same_commits(out, repo, request)
        note(f"{out} holds this run, complete: judged again (as `fidelity compare`), nothing run")
        return rejudge.recompare(out, ci=request.ci, partial=request.partial)
    if state == RESUME:
        note(f"{out} holds this run, unfinished: resuming it; cases with evidence are kept")
        return gate.run_resumed(repo, out, request.for_resume(), hooks)
    return gate.run(repo, request, hooks)
