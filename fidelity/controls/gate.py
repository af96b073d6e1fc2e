"""`fidelity controls run`: the unmodified tree first, then every control and the no-op.

The table is read from the checkout (the harness); the tree under test is a revision, or a
temporary commit of the uncommitted work tree built without touching the index. Controls
run in parallel, each in its own worktree; the no-op control runs last, so that state
leaking from earlier controls shows up as a no-op that did not survive.
"""

from __future__ import annotations

import datetime as dt
import functools
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from fidelity import config, git, workdir
from fidelity.controls.runner import check_command, parallel, run_tree
from fidelity.controls.table import Control, ControlTable, parse
from fidelity.controls.verdict import (
    ControlResult,
    Report,
    RunStatus,
    TreeRun,
    combine,
    judge,
    select_in_diff,
    unknown_tests,
    unviable,
)
from fidelity.errors import UsageError

Progress = Callable[[str, str, str], None]
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
            f"no control table at {path}; write one (see DESIGN.md) or pass --controls"
        )
    table = parse(path.read_bytes(), str(path))
    for control in table.controls:
        check_command(control.command, table.import_check, f"{path} control {control.id!r}")
    return table


@contextmanager
def tree_under_test(repo: Path, rev: str, with_uncommitted: bool) -> Iterator[str]:
    """The sha to check out: rev, or a throwaway commit of the work tree on top of it."""
    sha = git.rev_parse(repo, rev)
    if not with_uncommitted:
        yield sha
        return
    scratch = Path(tempfile.mkdtemp(prefix="fidelity-index-"))
    try:
        yield git.snapshot_uncommitted(repo, sha, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def select(
    repo: Path, table: ControlTable, sha: str, only: Sequence[str], in_diff: str | None
) -> tuple[Control, ...]:
    """The controls --only and --in-diff leave; UsageError naming unknown ids."""
    chosen = table.controls
    if only:
        known = {c.id for c in chosen}
        missing = [i for i in only if i not in known]
        if missing:
            raise UsageError(
                f"unknown control id {', '.join(missing)}; known: {', '.join(sorted(known))}"
            )
        chosen = tuple(c for c in chosen if c.id in only)
    if in_diff is not None:
        base = git.rev_parse(repo, in_diff)
        chosen = select_in_diff(chosen, git.changed_files(repo, base, sha))
    return chosen


def log_dir(repo: Path, sha: str) -> Path:
    """A fresh folder for one run's test logs, kept after the worktrees are gone."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return workdir.fresh(repo, "controls", f"{stamp}-{sha[:7]}")


def _log(logs: Path, name: str) -> Path:
    """The log of one run; a leading `_` keeps built-in names apart from control ids."""
    return logs / f"{name}.log" if name[0].isalnum() else logs / f"_{name.strip('()')}.log"


def _judged(
    repo: Path, sha: str, control: Control, table: ControlTable, logs: Path
) -> ControlResult:
    return judge(control, run_tree(repo, sha, control, table, _log(logs, control.id)))


def _unmodified(
    repo: Path, sha: str, table: ControlTable, chosen: Sequence[Control], jobs: int, logs: Path
) -> TreeRun:
    """The unmodified tree under the table's command and every other command a control uses."""
    noop = table.noop()
    commands = list(dict.fromkeys(c.command for c in (noop, *chosen)))
    tasks: list[Callable[[], TreeRun]] = [
        functools.partial(
            run_tree, repo, sha, replace(noop, command=c), table, _log(logs, f"(unmodified-{i})")
        )
        for i, c in enumerate(commands, 1)
    ]
    runs = parallel(tasks, jobs)
    return combine([(" ".join(c), r) for c, r in zip(commands, runs, strict=True)])


def run(
    repo: Path,
    table: ControlTable,
    rev: str = "HEAD",
    *,
    with_uncommitted: bool = False,
    jobs: int = 1,
    only: Sequence[str] = (),
    in_diff: str | None = None,
    progress: Progress | None = None,
) -> Report:
    """Judge the selected controls; the report's exit code is the gate's."""
    with tree_under_test(repo, rev, with_uncommitted) as sha:
        shown = f"{rev}+{UNCOMMITTED}" if with_uncommitted else rev
        chosen = select(repo, table, sha, only, in_diff)
        if not chosen:  # nothing to judge: the gate says so rather than running the suite
            skipped = TreeRun(RunStatus.UNVIABLE, detail="not run: no control selected")
            return Report(shown, sha, table.source, skipped, None, (), 0)
        noop = table.noop()
        logs = log_dir(repo, sha)
        baseline = _unmodified(repo, sha, table, chosen, jobs, logs)
        if progress:
            progress("unmodified", "tree", str(baseline.status))
        if baseline.status is not RunStatus.PASSED:
            return Report(shown, sha, table.source, baseline, None, (), len(chosen))
        early = {}
        for c in chosen:
            unknown = unknown_tests(c, baseline.tests)
            if unknown:
                early[c.id] = unviable(
                    c, f"expects tests the unmodified tree did not run: {', '.join(unknown)}"
                )
        runnable = [c for c in chosen if c.id not in early] + [noop]
        tasks: list[Callable[[], ControlResult]] = [
            functools.partial(_judged, repo, sha, c, table, logs) for c in runnable
        ]
        shown_done = (lambda r: progress("control", r.id, str(r.verdict))) if progress else None
        done = {r.id: r for r in parallel(tasks, jobs, shown_done)}
        results = tuple(early.get(c.id) or done[c.id] for c in chosen)
        return Report(shown, sha, table.source, baseline, done[noop.id], results, len(chosen))
