"""Run one side of a matrix in its own worktree: setup, import guard, then every case.

The only module that starts case processes (through `proc`). Every case gets a fresh
output directory inside the run directory (and a fresh cache directory next to it when it
has a `cache_env` or names `{cache}`), so its evidence outlives the worktree and
`fidelity compare` can check it again later.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from fidelity import proc
from fidelity.errors import TableError
from fidelity.git import objects, worktrees
from fidelity.matrix.cases import files
from fidelity.matrix.cases import table as casetable
from fidelity.matrix.cases.files import Stamp, copy_tree, sha256_file, walk
from fidelity.matrix.cases.outputs import collect
from fidelity.matrix.cases.table import Case, Command, Matrix
from fidelity.matrix.run import (
    importguard,
    importpath,
    ledger,
    replay,
    setups,
    sidechanges,
    workers,
)
from fidelity.matrix.run.plan import SidePlan
from fidelity.matrix.run.stamps import Stamps, stamped
from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus, SetupStep, SideEvidence
from fidelity.matrix.verdict.explain import Arrival, Meeting
from fidelity.placeholders import fill as substitute
from fidelity.placeholders import fill_shell
from fidelity.progress import Progress

Budget = threading.Semaphore | None  # processes at once across both sides


class Interrupted(Exception):
    """A case was stopped by the run's interruption; its evidence is not kept."""


@dataclass(frozen=True, slots=True)
class RunContext:
    """What every side and case of one run shares. `cancel` is set when the run is
    interrupted: no case starts after it, none finishing after it is kept as evidence (it
    was killed, not judged), and its `kill` kills the run's running cases."""

    repo: Path
    matrix: Matrix  # the cases to run (a selection of the harness table)
    table_path: str
    run_dir: Path
    jobs: int = 2  # processes at once, both sides together
    progress: Progress | None = None
    full: Matrix | None = None  # the whole harness table (when its blob is the side's own)
    cancel: proc.Cancel = field(default_factory=proc.Cancel)
    harness: Path | None = None  # the harness checkout, {harness}, when the table reads it
    harness_tree: str = ""  # its tree: part of what a kept setup that reads it was made from
    meeting: Meeting | None = None  # where a case is compared once both sides have run it
    holds: setups.Holds | None = None  # the kept set-ups the run holds until it ends
    stamps: Stamps | None = None  # each case's evidence files as taken, looked at at the end


def expand(command: Command, places: Mapping[str, str]) -> list[str] | str:
    if isinstance(command, str):
        return fill_shell(command, places)
    return [substitute(a, places) for a in command]


VENV = ".fidelity-venv"  # a side's own virtual environment, inside its worktree


def side_places(matrix: Matrix, wt: Path, harness: Path | None = None) -> dict[str, str]:
    """{worktree} (and {harness}), and with `venv = true` the side's {venv} and {python}."""
    places = {"worktree": str(wt)}
    if harness is not None:
        places["harness"] = str(harness)
    if matrix.venv:
        places["venv"] = str(wt / VENV)
        places["python"] = str(wt / VENV / "bin" / "python")
    return places


def side_env(matrix: Matrix, places: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment (less GIT_*), the side's venv first on PATH as if activated,
    then the table's own variables. With a harness, Python writes no bytecode: a `.pyc`
    that appears in the harness was put there (`harness-changed`), also where its read-only
    mode stops no one (root)."""
    env = proc.child_env()
    if "harness" in places:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    if "venv" in places:
        env["VIRTUAL_ENV"] = places["venv"]
        env["PATH"] = os.pathsep.join([str(Path(places["venv"]) / "bin"), env.get("PATH", "")])
        env.pop("PYTHONHOME", None)
    env.update({k: substitute(v, places) for k, v in matrix.env.items()})
    return env


def run_case(
    ctx: RunContext,
    case: Case,
    side: Mapping[str, str],
    case_dir: Path,
    budget: Budget = None,
    *,
    env: Mapping[str, str] | None = None,
    seed: Path | None = None,
) -> CaseEvidence:
    """Run one case in the side's worktree; its status is evidence, never an exception
    (but Interrupted when the run is being stopped). `env` is the side's environment
    (`side_env`), computed once per side; without it, it is computed here. `seed` is a
    cache folder the case starts with a copy of (a warm replay); otherwise its cache
    starts empty."""
    if ctx.cancel.is_set():
        raise Interrupted(case.id)
    out_dir, cache_dir = case_dir / "out", case_dir / "cache"
    try:
        case_dir.mkdir()
    except FileExistsError:  # a resumed run starts the case afresh
        shutil.rmtree(case_dir)
        case_dir.mkdir()
    except FileNotFoundError:  # the side's first case
        case_dir.mkdir(parents=True)
    out_dir.mkdir()
    preexisting: tuple[str, ...] = ()
    if case.uses_cache:  # else no folder: a case that names none records no cache
        cache_dir.mkdir(exist_ok=True)
        if seed is not None:
            copy_tree(seed, cache_dir)
        before = walk(cache_dir)
        preexisting = tuple(sorted({*before.files, *before.links}))
    places = {**side, "out": str(out_dir), "cache": str(cache_dir)}
    with budget or contextlib.nullcontext():
        if ctx.cancel.is_set():
            raise Interrupted(case.id)
        result = proc.run(
            expand(case.argv, places),
            cwd=Path(substitute(case.cwd, places) if case.cwd else side["worktree"]),
            env=case_env(ctx.matrix, case, places, env),
            timeout_s=case.timeout_s,
            stdout_path=case_dir / "stdout.log",
            stderr_path=case_dir / "stderr.log",
            shell=case.shell,
            marker=str(case_dir),  # unique to this run, side and case: finds what it left
            cancel=ctx.cancel,
            lazy_logs=True,  # a log the case writes nothing to is not made
        )
    if ctx.cancel.is_set():
        raise Interrupted(case.id)
    if result.status is not proc.ProcStatus.OK:  # a failure's message names its logs
        for log in LOGS:
            (case_dir / log).touch()
    seen: dict[Path, Stamp] = {}  # each evidence file as it was opened to be hashed
    ev = case_evidence(case, result, case_dir, preexisting, seen)
    return stamped(ctx.stamps, case_dir, ev, seen)


LOGS = ("stdout.log", "stderr.log")


def case_env(
    matrix: Matrix,
    case: Case,
    places: Mapping[str, str],
    side: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The side's environment (`side`, or computed from places), then the case's own
    variables and its cache variable; a case that names `{harness}` also finds its side's
    code first on PYTHONPATH (`importpath`)."""
    env = dict(side) if side is not None else side_env(matrix, places)
    env.update({k: substitute(v, places) for k, v in case.env.items()})
    if case.cache_env:
        env[case.cache_env] = places["cache"]
    return importpath.with_worktree(env, matrix, case, places["worktree"])


def case_evidence(
    case: Case,
    result: proc.ProcResult,
    case_dir: Path,
    preexisting: tuple[str, ...],
    seen: dict[Path, Stamp] | None = None,
) -> CaseEvidence:
    """What a finished case leaves as evidence: its status, outputs, cache and logs' tail.
    Each folder is walked once; a cache folder that was never made holds nothing."""
    found = collect(case_dir / "out", case.outputs, stamps=seen)
    cache = walk(case_dir / "cache")
    linked = [f"out/{rel} -> {target}" for rel, target in found.links.items()]
    linked += [f"cache/{rel} -> {target}" for rel, target in cache.links.items()]
    linked += [f"cache/{rel} (not a regular file)" for rel in cache.other]
    places = (("out", case_dir / "out"), ("cache", case_dir / "cache"))
    replaced = tuple(said for name, folder in places if (said := files.replaced(folder, name)))
    return CaseEvidence(
        case_id=case.id,
        definition_sha=case.definition_sha(),
        status=CaseStatus(result.status.value),
        exit_code=result.returncode,
        duration_s=round(result.duration_s, 4),
        cpu_s=None if result.cpu_s is None else round(result.cpu_s, 3),
        outputs=found.hashes,
        missing_outputs=tuple(found.missing),
        cache={rel: sha256_file(path, seen) for rel, path in cache.files.items()},
        cache_preexisting=preexisting,
        error=result.error,
        links=tuple(linked),
        leftover=result.leftover,
        paths=found.paths,
        unexpected=tuple(found.unexpected),
        output_problems=tuple(found.problems),
        stderr_tail=tail(case_dir / "stderr.log")
        if result.status is not proc.ProcStatus.OK
        else "",
        replaced=replaced,
    )


TAIL_LINES, TAIL_CHARS = 3, 400


def tail(log: Path) -> str:
    """The last few non-empty lines of a log, joined with ` | ` and clipped."""
    try:
        with log.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - 16384))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()][-TAIL_LINES:]
    joined = " | ".join(lines)
    return joined if len(joined) <= TAIL_CHARS else "..." + joined[-TAIL_CHARS:]


def make_venv(places: Mapping[str, str], side_dir: Path, cancel: proc.Cancel) -> SetupStep:
    """The side's own virtual environment, made with the interpreter fidelity runs in."""
    result = proc.run(
        [sys.executable, "-m", "venv", places["venv"]],
        env=proc.child_env(),
        timeout_s=600,
        stdout_path=side_dir / "venv.log",
        stderr_path=side_dir / "venv.log",
        cancel=cancel,
    )
    shown = f"{Path(sys.executable).name} -m venv {VENV}"
    return SetupStep(shown, result.status, result.returncode, round(result.duration_s, 4))


def run_setup(
    matrix: Matrix, places: Mapping[str, str], side_dir: Path, cancel: proc.Cancel
) -> tuple[SetupStep, ...]:
    """Make the side's venv (if asked), then run the setup commands in order, stopping at
    the first that fails; each killed at once when the run is cancelled (Ctrl-C waited for
    a long `pip install` before)."""
    steps: list[SetupStep] = []
    wt = Path(places["worktree"])
    if "venv" in places:
        steps.append(make_venv(places, side_dir, cancel))
        if steps[-1].status is not proc.ProcStatus.OK:
            return tuple(steps)
    for i, command in enumerate(matrix.setup):
        result = proc.run(
            expand(command, places),
            cwd=wt,
            env=side_env(matrix, places),
            timeout_s=matrix.setup_timeout_s,
            stdout_path=side_dir / f"setup-{i}.stdout.log",
            stderr_path=side_dir / f"setup-{i}.stderr.log",
            shell=isinstance(command, str),
            cancel=cancel,
        )
        shown = command if isinstance(command, str) else " ".join(command)
        steps.append(
            SetupStep(shown, result.status, result.returncode, round(result.duration_s, 4))
        )
        if result.status is not proc.ProcStatus.OK:
            break
    return tuple(steps)


def own_table(
    repo: Path, sha: str, table_path: str, harness: Matrix | None = None
) -> tuple[Matrix | None, str]:
    """The side's own case table, or None with a note saying why it cannot be used; the
    harness's, already parsed, when the side's blob is the same."""
    data = objects.show_file(repo, sha, table_path)
    if data is None:
        return None, f"no {table_path} at this revision"
    if harness is not None and hashlib.sha256(data).hexdigest() == harness.sha256:
        return harness, ""
    try:
        return casetable.parse(data, f"{sha[:12]}:{table_path}", authored=False), ""
    except TableError as exc:
        return None, f"its own {table_path} is invalid ({len(exc.problems)} problems)"


def run_cases(
    ctx: RunContext, side: Mapping[str, str], side_dir: Path, role: str, how: SideRun
) -> dict[str, CaseEvidence]:
    """Every case not already done; each one's evidence is kept the moment it completes."""

    env = side_env(ctx.matrix, side)  # once per side; each case starts from a copy

    def runs_again(case: Case) -> replay.RunOnce:
        return lambda folder, seed: run_case(
            ctx, case, side, folder, how.budget, env=env, seed=seed
        )

    def one(case: Case) -> CaseEvidence:
        case_dir = side_dir / "cases" / case.id
        evidence = run_case(ctx, case, side, case_dir, how.budget, env=env)
        if case.replayed:
            again = replay.replay(case, evidence, case_dir, runs_again(case), side["worktree"])
            evidence = dataclasses.replace(evidence, replay=again)
        ledger.save_case(case_dir, evidence)
        if ctx.progress:
            ctx.progress.step(role, case.id, str(evidence.status), evidence.status.failed)
        if ctx.meeting is not None and not ctx.cancel.is_set():
            ctx.meeting.arrived(Arrival(role, evidence, side["worktree"]), how.budget)
        return evidence

    todo = [c for c in ctx.matrix.cases if c.id not in how.done]
    # on a failure or an interruption no other case starts, and running ones are killed
    found = workers.each(todo, one, how.jobs, ctx.cancel.stop)
    results = {evidence.case_id: evidence for evidence in found}
    return {c.id: how.done.get(c.id) or results[c.id] for c in ctx.matrix.cases}


def not_run(matrix: Matrix, why: str) -> dict[str, CaseEvidence]:
    return {
        c.id: CaseEvidence(c.id, c.definition_sha(), CaseStatus.NOT_RUN, error=why)
        for c in matrix.cases
    }


@dataclass(frozen=True, slots=True)
class SideRun:
    """How one side runs: its share of the run's budget, and what an earlier attempt did."""

    jobs: int = 1  # cases of this side at once (they share its worktree)
    budget: Budget = None  # processes at once across both sides
    done: Mapping[str, CaseEvidence] = field(default_factory=dict)  # cases already judged


def run_side(ctx: RunContext, plan: SidePlan, how: SideRun = SideRun()) -> SideEvidence:
    """Check the side out, verify it is clean, run setup, the import guard and the cases
    not already done; with all of them done before, only the saved side is read back."""
    matrix = ctx.matrix
    side_dir = ctx.run_dir / plan.role
    side_dir.mkdir(parents=True, exist_ok=True)
    saved = ledger.load_side(side_dir)
    if saved is not None and all(c.id in how.done for c in matrix.cases):
        return replace(saved, cases={c.id: how.done[c.id] for c in matrix.cases})
    own, note = own_table(ctx.repo, plan.sha, ctx.table_path, ctx.full)
    with setups.prepared(
        ctx.repo, plan.sha, plan.role, matrix, ctx.harness_tree, hold=ctx.holds
    ) as place:
        wt = place.path
        places = side_places(matrix, wt, ctx.harness)
        found, setup = _set_up(matrix, place, places, side_dir, how.budget, cancel=ctx.cancel)
        dirty = sorted(path for _, path in found.entries) if found else []
        evidence = SideEvidence(
            role=plan.role,
            rev=plan.rev,
            sha=plan.sha,
            source_dirty=bool(dirty),
            dirty_paths=tuple(dirty),
            own_definitions={c.id: c.definition_sha() for c in own.cases} if own else None,
            own_table_note=note,
            own_compare={c.id: c.compare for c in own.cases} if own else None,
            setup=setup,
            worktree=str(wt),
            kept=str(wt) if place.keep else "",
            reused=place.reused,
        )
        if any(s.status is not proc.ProcStatus.OK for s in setup):
            cases = not_run(matrix, f"setup command failed: {setup[-1].argv}")
        else:
            if not place.reused:
                place.record()
            python = substitute(matrix.python, places)
            env = side_env(matrix, places)
            imports = importguard.resolve(python, matrix.import_check, wt, env)
            evidence = replace(evidence, imports=imports)
            ledger.save_side(side_dir, evidence)
            # with nothing set up, the status read before setup is the one before the cases
            read = found if not (matrix.setup or matrix.venv) else None
            before = sidechanges.tree_state(wt, read)
            cases = run_cases(ctx, places, side_dir, plan.role, how)
            after = sidechanges.tree_state(wt)
            evidence = replace(evidence, changed=tuple(sidechanges.side_changes(before, after)))
    return replace(evidence, cases=cases, worktree_removed=place.removed)


def _set_up(
    matrix: Matrix,
    place: setups.Place,
    places: Mapping[str, str],
    side_dir: Path,
    budget: Budget,
    *,
    cancel: proc.Cancel,
) -> tuple[worktrees.Status | None, tuple[SetupStep, ...]]:
    """The side's status before setup (its dirty paths; None for a reused worktree), and
    its setup steps (or the note of a reuse)."""
    wt = place.path
    if place.reused:
        reused = SetupStep(f"(reused {wt}: same commit and setup)", proc.ProcStatus.OK, 0, 0.0)
        return None, (reused,)
    worktrees.refresh_index(wt)
    found = worktrees.status(wt)
    with budget or contextlib.nullcontext():
        setup = run_setup(matrix, places, side_dir, cancel)
    if place.why_not:
        again = "set up again" if place.keep else "set up in a fresh worktree, not kept"
        setup = (SetupStep(f"({again}: {place.why_not})", proc.ProcStatus.OK, 0, 0.0), *setup)
    return found, setup


def run_sides(
    ctx: RunContext,
    plans: Sequence[SidePlan],
    done: Mapping[str, Mapping[str, CaseEvidence]] | None = None,
) -> list[SideEvidence]:
    """Both sides at once under one budget: `ctx.jobs` processes in all, each side running
    at most half of them (rounded up), since a side's cases share its worktree."""
    budget = threading.BoundedSemaphore(ctx.jobs)
    per_side = max(1, -(-ctx.jobs // 2))
    done = done or {}

    def side(plan: SidePlan) -> SideEvidence:
        return run_side(ctx, plan, SideRun(per_side, budget, done.get(plan.role, {})))

    # on a failure or Ctrl-C: cases stop, and each side then removes its own worktree
    return workers.each(plans, side, len(plans), ctx.cancel.stop)
