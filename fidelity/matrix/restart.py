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

"This command's run" is read from plan.json: the settings as given must be equal, and the
sides' commits and the table's bytes (checked by the resume itself, or here when complete).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError
from fidelity.git import objects
from fidelity.matrix import gate, ledger, rejudge, rundir, untrusted
from fidelity.matrix.harness import read_harness, table_path
from fidelity.matrix.outcome import Outcome

FRESH, RESUME, COMPLETE = "fresh", "resume", "complete"
CUT_SHORT = frozenset({ledger.PLAN + ".tmp"})  # what a run writes before its plan is whole
WORDS = {  # plan.json's settings as given, by what they are called on the command line
    "table_path": "case table (--cases)",
    "harness_rev": "harness revision (--harness)",
    "expect": "prediction (--expect)",
    "selectors": "selection (--case/--tag)",
    "shard": "shard (--shard)",
    "durations": "shard durations (--shard-durations)",
    "replay": "--replay",
}


def given(
    repo: Path,
    cases: str | Path,
    *,
    harness_rev: str | None,
    expect: str | Path | None,
    select: Sequence[str],
    shard: str | None,
    durations: Mapping[str, float] | None,
    replay: str | None,
) -> dict[str, Any]:
    """A command's settings as its plan.json would record them."""
    return {
        "table_path": table_path(repo, cases),
        "harness_rev": harness_rev,
        "expect": str(expect) if expect else None,
        "selectors": list(select),
        "shard": shard,
        "durations": dict(durations) if durations is not None else None,
        "replay": replay,
    }


def held(out: Path, settings: Mapping[str, Any]) -> str:
    """FRESH, RESUME or COMPLETE for what out holds (the module's rules); UsageError when it
    holds anything else. A plan cut short is removed, so the fresh run finds out empty."""
    if not out.is_dir():
        return FRESH  # missing (a file there is refused as any --out is)
    names = {p.name for p in out.iterdir()}
    if names <= CUT_SHORT:
        for name in names:
            (out / name).unlink()
        return FRESH
    began = _began(out)
    differs = [k for k in WORDS if began.get(k) != settings[k]]
    if differs:
        k = differs[0]
        raise UsageError(
            f"{out} holds another run: its {WORDS[k]} is {_shown(began.get(k))}, this one's "
            f"{_shown(settings[k])}; choose another --out (or finish that run with `fidelity "
            f"run --resume {out}`)"
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


def _began(out: Path) -> dict[str, Any]:
    """plan.json of the run in out, complete or not; UsageError when out holds no run."""
    path = out / ledger.PLAN
    try:
        plan = untrusted.load(path) if path.is_file() else None
    except untrusted.DamagedRunError as exc:
        raise UsageError(f"{out} holds a damaged run: {exc}; choose another --out") from exc
    if plan is None or untrusted.plan_problems(plan):
        raise UsageError(
            f"{out} already holds files but no run of fidelity's (no valid {ledger.PLAN}); "
            "choose another --out"
        )
    result: dict[str, Any] = plan
    return result


def same_commits(out: Path, repo: Path, revs: tuple[str, str], settings: Mapping[str, Any]) -> None:
    """UsageError unless the complete run in out was of these commits and this table."""
    began = _began(out)
    harness, _ = read_harness(repo, settings["table_path"], settings["harness_rev"])
    if harness.table_sha256 != began["table_sha256"]:
        raise UsageError(
            f"{out} holds a complete run of another version of {settings['table_path']}: "
            "choose another --out"
        )
    for role, rev in zip(("baseline", "candidate"), revs, strict=True):
        was = began["sides"][role]["sha"]
        if objects.rev_parse(repo, rev) != was:
            raise UsageError(
                f"{out} holds a complete run whose {role} was {was[:12]}, not {rev}: choose "
                f"another --out, or judge that run with `fidelity compare {out}`"
            )


def run(
    repo: Path,
    revs: tuple[str, str],
    cases: str | Path,
    *,
    out: Path,
    note: Callable[[str], None],
    **options: Any,
) -> Outcome:
    """`gate.run` for a command that may have run into out before (the module's rules)."""
    keys = ("harness_rev", "expect", "shard", "durations", "replay")
    chosen = {k: options.get(k) for k in keys}
    settings = given(repo, cases, select=options.get("select") or (), **chosen)
    state = held(out, settings)
    if state == COMPLETE:
        same_commits(out, repo, revs, settings)
        note(f"{out} holds this run, complete: judged again (as `fidelity compare`), nothing run")
        return rejudge.recompare(
            out, ci=options.get("ci", False), partial=options.get("partial", False)
        )
    if state == RESUME:
        note(f"{out} holds this run, unfinished: resuming it; cases with evidence are kept")
        kept = {k: options[k] for k in ("jobs", "progress", "warn", "ci") if k in options}
        return gate.run(repo, *revs, cases, resume=out, **kept)
    return gate.run(repo, *revs, cases, out=out, **options)
