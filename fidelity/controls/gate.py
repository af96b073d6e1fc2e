"""`fidelity controls run`: table checks, the unmodified tree, then every control and the no-op.

The table is read from the checkout (the harness); the tree under test is a revision, or a
temporary commit of the uncommitted work tree built without touching the index. First the
table is checked against the tree (anchors, then expected test ids once the tests are
collected): a mistake is a usage error before any control runs. The unmodified tree runs
once per distinct command, tracing which code each test runs; each control then runs the
tests that can tell it apart (`selection`), in a warm pytest where that is sound, in
parallel lanes; the no-op control runs last, so that state leaking from earlier controls
shows up as a no-op that did not survive. A control that times out is run once more, alone,
before it is called a timeout.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from fidelity import config, workdir
from fidelity.controls import anchors, diffsel, noop, render, treenames, unmodified
from fidelity.controls.lane import Lane, Tree
from fidelity.controls.lanes import Lanes
from fidelity.controls.planning import Plan, alone, log_path, plans
from fidelity.controls.runner import check_command
from fidelity.controls.selection import NamedElsewhere, places
from fidelity.controls.table import NOOP_ID, Control, ControlTable, parse
from fidelity.controls.unmodified import Tracing, Unmodified
from fidelity.controls.verdict import (
    ControlResult,
    Report,
    RunStatus,
    TreeRun,
    Verdict,
    combine,
    judge,
)
from fidelity.errors import UsageError
from fidelity.git import objects, stage, worktrees
from fidelity.progress import Progress

UNCOMMITTED = "uncommitted"


def table_path(repo: Path, given: str | None) -> Path:
    return repo / (given or config.setting(repo, "controls", config.DEFAULT_CONTROLS))


def load(repo: Path, given: str | None = None, *, missing_ok: bool = False) -> ControlTable:
    """The control table from the checkout; UsageError when it is missing or invalid.

    With missing_ok (the negative control needs only the command), no table means defaults.
    """
    path = table_path(repo, given)
    if missing_ok and given is None and not path.is_file():
        return ControlTable(source="(defaults)", sha256="", controls=())
    if not path.is_file():
        raise UsageError(
            f"no control table at {path}; write one (see README, Mutation controls) or pass "
            "--controls"
        )
    table = parse(path.read_bytes(), str(path))
    for control in table.controls:
        check_command(control.command, table.import_check, f"{path} control {control.id!r}")
    return table


@contextmanager
def tree_under_test(repo: Path, rev: str, with_uncommitted: bool) -> Iterator[str]:
    """The sha to check out: rev, or a throwaway commit of the work tree on top of it."""
    sha = objects.rev_parse(repo, rev)
    if not with_uncommitted:
        yield sha
        return
    scratch = Path(tempfile.mkdtemp(prefix="fidelity-index-"))
    try:
        yield stage.snapshot_uncommitted(repo, sha, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def pick(table: ControlTable, only: Sequence[str]) -> tuple[Control, ...]:
    """The controls --only leaves; UsageError naming unknown ids."""
    chosen = table.controls
    if only:
        known = {c.id for c in chosen}
        missing = [i for i in only if i not in known]
        if missing:
            raise UsageError(
                f"unknown control id {', '.join(missing)}; known: {', '.join(sorted(known))}"
            )
        chosen = tuple(c for c in chosen if c.id in only)
    return chosen


def select(
    repo: Path, table: ControlTable, sha: str, only: Sequence[str], in_diff: str | None
) -> tuple[Control, ...]:
    """The controls --only and --in-diff leave; UsageError naming unknown ids."""
    chosen = pick(table, only)
    if in_diff is not None:
        chosen = diffsel.select(repo, table, sha, in_diff, chosen).controls
    return chosen


CONTROLS_DIR = "controls"


def log_dir(repo: Path, sha: str) -> Path:
    """A fresh run directory for one run's logs and report, kept after the worktrees go."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = workdir.fresh(repo, CONTROLS_DIR, f"{stamp}-{sha[:7]}")
    workdir.hold(folder)  # `fidelity gc` leaves it alone while this process lives
    return folder


def table_notes(
    repo: Path, table: ControlTable, with_uncommitted: bool, sha: str = ""
) -> tuple[str, ...]:
    """Said above the verdicts: uncommitted changes the run did not test (a table used as it
    is against the committed tree; source or tests when the commit judged is HEAD)."""
    if with_uncommitted:
        return ()
    try:
        rel = Path(table.source).resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        rel = ""
    dirty = worktrees.dirty_paths(repo)
    notes = []
    if rel in dirty:
        notes.append(
            f"{rel} has uncommitted changes: the table as it is in your work tree was judged "
            "against the committed tree (pass --with-uncommitted to test the work tree too)"
        )
    others = [p for p in dirty if p != rel]
    if others and sha and sha == objects.resolve(repo, "HEAD"):
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        notes.append(
            f"{len(others)} uncommitted file(s) were not tested ({shown}): the controls ran "
            "on HEAD as committed (pass --with-uncommitted to test the work tree)"
        )
    return tuple(notes)


def _check_ids(
    table: ControlTable, chosen: Sequence[Control], runs: Mapping[tuple[str, ...], Unmodified]
) -> None:
    problems = []
    for command, u in runs.items():
        known = u.collected if u.collected is not None else tuple(u.run.tests)
        if u.collected is None and u.run.status is not RunStatus.PASSED:
            continue  # nothing trustworthy to check against; the unsound run says why
        mine = [c for c in chosen if c.command == command]
        problems += anchors.id_problems(table, mine, known)
    anchors.refuse(
        problems, f"the control table {table.source} expects tests the tree under test lacks"
    )


def originals(repo: Path, sha: str, controls: Sequence[Control]) -> dict[str, str | None]:
    from fidelity.controls.lane import edited_files

    found: dict[str, str | None] = {}
    for c in controls:
        for name in edited_files(c):
            if name not in found:
                data = objects.show_file(repo, sha, name)
                found[name] = data.decode("utf-8", errors="replace") if data is not None else None
    return found


def _statements(chosen: Sequence[Control], texts: Mapping[str, str | None]) -> dict[str, list[str]]:
    """The statements each file's edits change (`linediff`), for the traced run to probe."""
    found: dict[str, set[str]] = {}
    for c in chosen:
        for p in places(c.edits, texts):
            found.setdefault(p.file, set()).update(p.statements)
    return {f: sorted(keys) for f, keys in found.items() if keys}


def named_elsewhere(repo: Path, sha: str) -> NamedElsewhere:
    """Whether a Python file of the tree other than `file` names `name` (a module-level
    name given a new value is then read from there, `constants`)."""

    @functools.cache
    def asked(file: str, name: str) -> bool:
        return any(f != file for f in objects.files_naming(repo, sha, name, "*.py"))

    return asked


def _judged(plan: Plan, known: Sequence[str], lane: Lane) -> ControlResult:
    return _result(plan, lane.run(plan.job), known)


def _ran(plan: Plan, lane: Lane) -> TreeRun:
    return lane.run(plan.job)


def _result(plan: Plan, run: TreeRun, known: Sequence[str]) -> ControlResult:
    result = judge(plan.control, run, known)
    selection = plan.job.selection
    chosen = "" if selection is None else selection.why
    detail = result.detail
    if result.verdict is Verdict.TIMEOUT:
        detail = f"{detail} (limit: {plan.how})"
    return replace(
        result,
        detail=detail,
        selection=chosen,
        timeout_s=plan.job.timeout_s,
        log=str(plan.job.log),
    )


def _recheck(lanes: Lanes, plan: Plan, first: ControlResult, known: Sequence[str]) -> ControlResult:
    """A timeout is run once more, alone, before it is called one."""
    limit = plan.job.timeout_s
    plan = alone(plan)
    again = lanes.map([functools.partial(_judged, plan, known)])[0]
    if again.verdict is Verdict.TIMEOUT:
        return replace(again, detail=f"timed out twice, the second time alone: {again.detail}")
    return replace(
        again,
        detail=(
            f"{again.detail + '; ' if again.detail else ''}the first run timed out at "
            f"{limit:g} s while other controls ran; run again alone it finished "
            f"in {again.duration_s:.1f} s"
        ),
    )


def run(
    repo: Path,
    table: ControlTable,
    rev: str = "HEAD",
    *,
    with_uncommitted: bool = False,
    jobs: int = 1,
    only: Sequence[str] = (),
    in_diff: str | None = None,
    full: bool = False,
    fresh: bool = False,
    swap: bool = True,
    progress: Progress | None = None,
) -> Report:
    """Judge the selected controls; the report's exit code is the gate's."""
    with tree_under_test(repo, rev, with_uncommitted) as sha:
        shown = f"{rev}+{UNCOMMITTED}" if with_uncommitted else rev
        notes = table_notes(repo, table, with_uncommitted, sha)
        chosen = pick(table, only)
        if in_diff is not None:
            picked = diffsel.select(repo, table, sha, in_diff, chosen)
            chosen = picked.controls
            if not chosen:
                skipped = TreeRun(RunStatus.UNVIABLE, detail="not run: nothing to judge")
                return Report(shown, sha, table.source, skipped, None, (), 0, picked.skip, notes)
            notes += picked.notes
        check_edits(repo, sha, table, chosen, shown)
        tree = tree_names(repo, sha)
        logs = log_dir(repo, sha)
        with Lanes(Tree(repo, sha, table, tree), jobs) as lanes:
            report = _judge_all(
                lanes, chosen, logs, full=full, fresh=fresh, swap=swap, progress=progress
            )
        report = replace(
            report, rev=shown, notes=(*notes, *report.notes), guard=tree, logs=str(logs)
        )
        (logs / "report.json").write_text(json.dumps(render.to_json(report), indent=2) + "\n")
        return report


def check_edits(
    repo: Path,
    sha: str,
    table: ControlTable,
    chosen: Sequence[Control],
    shown: str,
    *,
    given: str = "",
) -> None:
    """UsageError, before anything runs, for every edit that does not apply at sha; `given`
    names an edit from the command line (`suggest --file --find`), which the table is not
    to blame for."""
    scratch = Path(tempfile.mkdtemp(prefix="fidelity-anchors-"))
    try:
        problems = anchors.edit_problems(repo, sha, table, chosen, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if given:
        anchors.refuse(
            problems, f"{given} does not apply at {shown}", f"Fix {given}, then run again."
        )
    anchors.refuse(problems, f"the control table {table.source} does not match {shown}")


def tree_names(repo: Path, sha: str) -> tuple[str, ...]:
    """The import guard's default names: the tree's own top-level packages and modules."""
    return treenames.top_level(
        objects.tree_files(repo, sha), objects.show_file(repo, sha, "pyproject.toml")
    )


def _judge_all(
    lanes: Lanes,
    chosen: Sequence[Control],
    logs: Path,
    *,
    full: bool,
    fresh: bool = False,
    swap: bool = True,
    progress: Progress | None = None,
) -> Report:
    repo, sha, table = lanes.tree.repo, lanes.tree.sha, lanes.tree.table
    if progress:
        progress.expect(2 + len(chosen))  # the unmodified tree, each control, the no-op one
    tracing = Tracing.NONE if full else Tracing.FRESH if fresh else Tracing.REUSE
    texts = originals(repo, sha, chosen)
    runs = unmodified.runs(
        lanes,
        table,
        chosen,
        logs,
        tracing=tracing,
        serve=swap and not full,
        statements=_statements(chosen, texts),
    )
    _check_ids(table, chosen, runs)
    reused = tuple(unmodified.reused_note(u) for u in runs.values() if u.reused)
    baseline = combine([(" ".join(u.command), u.run) for u in runs.values()])
    if progress:
        failed = baseline.status is not RunStatus.PASSED
        progress.step("unmodified", "tree", str(baseline.status), failed)
    if baseline.status is not RunStatus.PASSED:
        return Report("", sha, table.source, baseline, None, (), len(chosen), notes=reused)
    known = tuple(baseline.tests)
    nothing = noop.control(table, runs)
    planned = plans(
        [*chosen, nothing],
        runs,
        texts,
        logs,
        full,
        swap=swap,
        named_elsewhere=named_elsewhere(repo, sha),
    )
    results = _controls_then_noop(lanes, planned, runs[nothing.command], known, progress)
    for i, (plan, result) in enumerate(zip(planned, results, strict=True)):
        if result.verdict is Verdict.TIMEOUT:
            results[i] = _recheck(lanes, plan, result, known)
    return Report(
        "",
        sha,
        table.source,
        baseline,
        results[-1],
        tuple(results[:-1]),
        len(chosen),
        notes=reused,
    )


def _controls_then_noop(
    lanes: Lanes,
    planned: Sequence[Plan],
    u: Unmodified,
    known: Sequence[str],
    progress: Progress | None,
) -> list[ControlResult]:
    """Every control, then the no-op control (the last plan): its tests chosen once the
    controls under its command have ended (`noop.selection`), in parts side by side where
    there are lanes to share it (`noop.parts`); results in plan order."""
    *controls, last = planned
    finished = noop.Finished()
    mine = [i for i, p in enumerate(controls) if p.control.command == last.control.command]

    def judged(i: int, plan: Plan, lane: Lane) -> ControlResult:
        result = None
        try:
            result = _judged(plan, known, lane)
            return result
        finally:
            finished.record(i, result)

    def noop_part(i: int, lane: Lane) -> tuple[Plan, TreeRun | ControlResult] | None:
        ended = finished.wait(mine, lanes.tree.cancel.is_set)
        ran = [(controls[j].job.selection, r) for j, r in zip(mine, ended, strict=True)]
        chosen = noop.selection(u, ran)
        whole = last if chosen is None else replace(last, job=replace(last.job, selection=chosen))
        parts = _noop_parts(whole, u, lanes.jobs)
        if not parts:
            return (whole, _judged(whole, known, lane)) if i == 0 else None
        return (parts[i], _ran(parts[i], lane)) if i < len(parts) else None

    def shown(r: object) -> None:
        if progress and isinstance(r, ControlResult):  # the no-op's words, as its summary's
            held = r.id == NOOP_ID and r.verdict is Verdict.RESIDUE_HELD
            progress.step("control", r.id, "survived" if held else str(r.verdict), not r.met)

    tasks: list[Callable[[Lane], object]]
    tasks = [functools.partial(judged, i, p) for i, p in enumerate(controls)]
    tasks += [functools.partial(noop_part, i) for i in range(lanes.jobs if last.job.warm else 1)]
    done = lanes.map(tasks, shown)
    results = [r for r in done[: len(controls)] if isinstance(r, ControlResult)]
    ran = [r for r in done[len(controls) :] if isinstance(r, tuple)]
    if len(ran) == 1 and isinstance(ran[0][1], ControlResult):
        results.append(ran[0][1])
    else:
        runs = [r for _, r in ran if isinstance(r, TreeRun)]
        # the report names the log of the first part that did not pass, else the first's
        bad = [p for p, r in ran if isinstance(r, TreeRun) and r.status is not RunStatus.PASSED]
        named = (bad or [p for p, _ in ran])[0]
        whole = replace(named, job=replace(named.job, timeout_s=last.job.timeout_s))
        results.append(_result(whole, noop.merged(runs), known))
    shown(results[-1])
    return results


def _noop_parts(last: Plan, u: Unmodified, lanes: int) -> list[Plan]:
    """The no-op control's plan in parts (`noop.parts`), or none where it runs whole."""
    split = noop.parts(u, last.job.selection, lanes) if last.job.warm else []
    if len(split) < 2:
        return []
    logs = last.job.log.parent
    return [
        replace(last, job=replace(last.job, selection=s, log=log_path(logs, f"(no-op-{i})")))
        for i, s in enumerate(split, 1)
    ]
