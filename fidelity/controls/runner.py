"""Run the test command in one control's tree: a fresh detached worktree, the edits, the run.

Every test command starts through `proc` (timeout, process-group kill). For pytest the
runner adds `--junitxml`, the `xunit1` family (its `file` attributes give node ids),
and, when the table names modules to check, the import guard plugin with the env vars it
reads. The plugin is a lone module in a folder of its own put on the test process's
PYTHONPATH, so it loads in any interpreter with pytest, whether or not fidelity is installed
there. The JUnit file lives beside the worktree and goes with it; the command's output goes
to a log in the controls' run directory, which outlives the worktree.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from fidelity import proc, worktree
from fidelity.controls import edit as controls_edit
from fidelity.controls import junit as junit_read
from fidelity.controls.table import Control, ControlTable
from fidelity.controls.verdict import RunStatus, TreeRun, classify
from fidelity.errors import UsageError
from fidelity.placeholders import fill

GUARD_PACKAGES_ENV = "FIDELITY_GUARD_PACKAGES"
GUARD_ROOT_ENV = "FIDELITY_GUARD_ROOT"
GUARD_MARK = "fidelity import guard"
GUARD_PLUGIN = "fidelity_pytest_guard"
GUARD_DIR = Path(__file__).resolve().parent.parent / "plugins"
_TAIL_BYTES = 64 * 1024

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
    places = {"junit": str(junit), "worktree": str(root)}
    argv = [fill(a, places) for a in command]
    if not is_pytest(command):
        return argv
    argv += ["-o", "junit_family=xunit1", "-p", "no:cacheprovider"]
    if guard:
        argv += ["-p", GUARD_PLUGIN]
    if not any("{junit}" in a for a in command):
        argv.append(f"--junitxml={junit}")
    return argv


def env_for(table: ControlTable, root: Path) -> dict[str, str]:
    env = proc.child_env()
    env.update({k: fill(v, {"worktree": str(root)}) for k, v in table.env.items()})
    for key in (GUARD_PACKAGES_ENV, GUARD_ROOT_ENV):
        env.pop(key, None)
    if table.import_check:
        env[GUARD_PACKAGES_ENV] = ",".join(table.import_check)
        env[GUARD_ROOT_ENV] = str(root)
        # last, so that the table's own PYTHONPATH entries keep their precedence
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(GUARD_DIR)) if p)
    return env


def _read_tail(log: Path) -> str:
    try:
        with log.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL_BYTES))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def explain(result: proc.ProcResult, argv: Sequence[str], output: str, log: Path | None) -> str:
    """One line saying why a run produced no usable report, and which log to read."""
    see = f"; log: {log}" if log is not None else ""
    program = argv[0] if argv else "?"
    if result.status is proc.ProcStatus.NOT_FOUND:
        return (
            f"{program} could not be started ({result.error}); name an interpreter that "
            f'exists in [controls] command, e.g. "{{python}}" for fidelity\'s own{see}'
        )
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    guard = [line for line in lines if GUARD_MARK in line]
    if guard:
        return " ".join(dict.fromkeys(guard)) + see
    if "No module named pytest" in output:
        return (
            f"pytest is not installed for {program}; install it there, or name another "
            f'interpreter in [controls] command, e.g. "{{python}}" for fidelity\'s own{see}'
        )
    if GUARD_PLUGIN in output and "Error" in output:
        last = next((line for line in reversed(lines) if "Error" in line), lines[-1])
        return f"pytest could not load fidelity's import guard plugin ({last}){see}"
    last = lines[-1] if lines else (result.error or "no output")
    return f"{last[:300]}{see}"


def _read(junit: Path) -> junit_read.Suite | None:
    if not junit.is_file():
        return None
    try:
        return junit_read.read([junit])
    except junit_read.JUnitError:
        return None


def run_in(root: Path, control: Control, table: ControlTable, log: Path | None = None) -> TreeRun:
    """Apply the control's edits in root (our own worktree) and run its command once.

    With a log path, stdout and stderr go there (and stay); else they are kept in memory.
    """
    why = controls_edit.apply(root, control.edits)
    if why:
        return TreeRun(RunStatus.UNVIABLE, detail=why)
    if stop.is_set():
        raise KeyboardInterrupt
    junit = root.parent / "junit.xml"
    argv = argv_for(control.command, junit, root, bool(table.import_check))
    result = proc.run(
        argv,
        cwd=root,
        env=env_for(table, root),
        timeout_s=control.timeout_s,
        stdout_path=log,
        stderr_path=log,
    )
    output = (result.stdout + b"\n" + result.stderr).decode(errors="replace")
    if log is not None:
        output = _read_tail(log)
    why = explain(result, argv, output, log)
    run = classify(result.status, result.returncode, _read(junit), why)
    return replace(run, duration_s=round(result.duration_s, 4))


def run_tree(
    repo: Path, sha: str, control: Control, table: ControlTable, log: Path | None = None
) -> TreeRun:
    """One control end to end in its own clean worktree; overhead is wall time minus the run."""
    start = time.monotonic()
    with worktree.detached(repo, sha, "control") as checkout:
        run = run_in(checkout.path, control, table, log)
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
            drain(futures)
            raise
    return [f.result() for f in futures]


def drain(futures: Sequence[Future[T]]) -> None:
    """Kill running test commands until every worker has finished its cleanup.

    The kills wait for `worktree.admin_idle`, so a worker's `git worktree add` or `remove`
    is never killed half-way; a second Ctrl-C while this runs is absorbed, not obeyed, since
    leaving now would leave worktrees behind.
    """
    while not all(f.done() for f in futures):
        try:
            with worktree.admin_idle():
                proc.kill_all()
            wait(futures, timeout=0.2)
        except KeyboardInterrupt:
            continue
