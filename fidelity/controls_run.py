"""Run the test command in one control's tree: a fresh detached worktree, the edits, the run.

Every test command starts through `proc` (timeout, process-group kill). For pytest the
runner adds `--junitxml`, the `xunit1` family (its `file` attributes give node ids),
and, when the table names modules to check, the import guard plugin with the env vars it
reads. The JUnit file lives beside the worktree and goes with it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from fidelity import controls_edit, junit_read, proc, worktree
from fidelity.controls_table import Control, ControlTable
from fidelity.controls_verdict import RunStatus, TreeRun, classify
from fidelity.errors import UsageError

GUARD_PACKAGES_ENV = "FIDELITY_GUARD_PACKAGES"
GUARD_ROOT_ENV = "FIDELITY_GUARD_ROOT"
GUARD_MARK = "fidelity import guard"
_TAIL_LINES = 12

# set on Ctrl-C: a worker that has not started its test command yet does not start it
stop = threading.Event()
T = TypeVar("T")


def is_pytest(argv: Sequence[str]) -> bool:
    return any(Path(a).name in ("pytest", "py.test") for a in argv)


_VALUED = frozenset("kmpcoWrn")  # pytest short options whose value may follow in the same arg


def _stops_early(arg: str) -> bool:
    """`-x`, also combined (`-xq`), `--exitfirst`, `--maxfail=N`, `--sw`/`--stepwise`."""
    if arg in ("--exitfirst", "--sw", "--stepwise") or arg.startswith("--maxfail"):
        return True
    if arg.startswith("-") and not arg.startswith("--"):
        for letter in arg[1:]:
            if letter == "x":
                return True
            if letter in _VALUED or not letter.isalpha():
                return False
    return False


def check_command(command: Sequence[str], import_check: Sequence[str], where: str) -> None:
    """UsageError when the runner could not read the command's results or guard its imports."""
    stops = [a for a in command if _stops_early(a)]
    if stops:
        raise UsageError(
            f"{where}: {stops[0]} stops at the first failure; a control needs the full failing "
            "subset, so drop it from the command"
        )
    if is_pytest(command):
        return
    if not any("{junit}" in a for a in command):
        raise UsageError(
            f"{where}: command {' '.join(command)!r} is not pytest; put {{junit}} where it "
            "writes its JUnit XML report"
        )
    if import_check:
        raise UsageError(f"{where}: import_check needs a pytest command (the guard is a plugin)")


def argv_for(command: Sequence[str], junit: Path, root: Path, guard: bool) -> list[str]:
    places = {"{junit}": str(junit), "{worktree}": str(root)}
    argv = [_substitute(a, places) for a in command]
    if not is_pytest(command):
        return argv
    argv += ["-o", "junit_family=xunit1", "-p", "no:cacheprovider"]
    if guard:
        argv += ["-p", "fidelity.pytest_guard"]
    if not any("{junit}" in a for a in command):
        argv.append(f"--junitxml={junit}")
    return argv


def _substitute(value: str, places: dict[str, str]) -> str:
    for key, path in places.items():
        value = value.replace(key, path)
    return value


def env_for(table: ControlTable, root: Path) -> dict[str, str]:
    env = proc.child_env()
    env.update({k: v.replace("{worktree}", str(root)) for k, v in table.env.items()})
    for key in (GUARD_PACKAGES_ENV, GUARD_ROOT_ENV):
        env.pop(key, None)
    if table.import_check:
        env[GUARD_PACKAGES_ENV] = ",".join(table.import_check)
        env[GUARD_ROOT_ENV] = str(root)
    return env


def tail(result: proc.ProcResult) -> str:
    """What to show for a run that says nothing useful in its JUnit report."""
    text = (result.stdout + b"\n" + result.stderr).decode(errors="replace")
    guard = [line.strip() for line in text.splitlines() if GUARD_MARK in line]
    if guard:
        return " ".join(dict.fromkeys(guard))
    if "No module named pytest" in text:
        return "pytest is not installed for this interpreter; install it, or set [controls] command"
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-_TAIL_LINES:]) or result.error


def _read(junit: Path) -> junit_read.Suite | None:
    if not junit.is_file():
        return None
    try:
        return junit_read.read([junit])
    except junit_read.JUnitError:
        return None


def run_in(root: Path, control: Control, table: ControlTable) -> TreeRun:
    """Apply the control's edits in root (our own worktree) and run its command once."""
    why = controls_edit.apply(root, control.edits)
    if why:
        return TreeRun(RunStatus.UNVIABLE, detail=why)
    if stop.is_set():
        raise KeyboardInterrupt
    junit = root.parent / "junit.xml"
    argv = argv_for(control.command, junit, root, bool(table.import_check))
    result = proc.run(argv, cwd=root, env=env_for(table, root), timeout_s=control.timeout_s)
    run = classify(result.status, result.returncode, _read(junit), tail(result))
    return replace(run, duration_s=round(result.duration_s, 4))


def run_tree(repo: Path, sha: str, control: Control, table: ControlTable) -> TreeRun:
    """One control end to end in its own clean worktree; overhead is wall time minus the run."""
    start = time.monotonic()
    with worktree.detached(repo, sha, "control") as checkout:
        run = run_in(checkout.path, control, table)
    wall = time.monotonic() - start
    return replace(run, overhead_s=round(max(wall - run.duration_s, 0.0), 4))


def parallel(
    tasks: Sequence[Callable[[], T]], jobs: int, done: Callable[[T], None] | None = None
) -> list[T]:
    """Run tasks in a pool, results in task order. On Ctrl-C (or any error) nothing new
    starts, running test commands are killed, and every worker's worktree is removed before
    the exception goes on."""
    stop.clear()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures: list[Future[T]] = [pool.submit(task) for task in tasks]
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    value = future.result()
                    if done is not None:
                        done(value)
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            while not all(f.done() for f in futures):
                proc.kill_all()
                wait(futures, timeout=0.2)
            raise
    return [f.result() for f in futures]
