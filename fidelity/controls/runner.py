"""How a control's test command is run: its argv, its environment, and why a run said nothing.

For pytest the runner appends `-o junit_family=xunit1` (its `file` attributes give node
ids), `-p no:cacheprovider` (no `.pytest_cache` in the tree, no last-failed reordering),
`-p fidelity_pytest_guard` and `-p fidelity_pytest_controls` (the import guard, and the
plugin that traces, selects and lists tests), `--junitxml=PATH` unless the command names
`{junit}` itself, and `--basetemp=DIR` unless it names one: a folder of the run's own beside
its worktree, so that `tmp_path` neither makes a numbered folder in the user's
`pytest-of-USER` nor removes their older ones, which pytest does at every session (the
unmodified run on a 2-core machine once took 15 s for 10 tests, removing a test suite's
folders under the tracer). The plugins are lone modules in a folder put last on the test
process's PYTHONPATH, so they load in any interpreter with pytest, whether or not fidelity
is installed there. That folder is a copy this process owns, never fidelity's installed
package: pytest writes its assertion-rewritten bytecode next to a `-p` plugin, and files
left in site-packages outlive `pip uninstall` and turn `fidelity` into a namespace package
that shadows a later editable install. Lanes (`lane`) run these commands in worktrees.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from fidelity import proc, worktree
from fidelity.controls.table import ControlTable
from fidelity.errors import UsageError
from fidelity.placeholders import fill, names

GUARD_PACKAGES_ENV = "FIDELITY_GUARD_PACKAGES"
GUARD_TREE_ENV = "FIDELITY_GUARD_TREE"
GUARD_ROOT_ENV = "FIDELITY_GUARD_ROOT"
# one run's files for the plugins; inherited from an outer run (fidelity's own tests of
# `from-fix` under `controls run`) they would make the inner pytest check and overwrite them
RUN_ENV = (
    "FIDELITY_TRACE",
    "FIDELITY_EXPECT",
    "FIDELITY_COLLECTED",
    "FIDELITY_SELECT",
    "FIDELITY_RAISES",
    "FIDELITY_PROBE",
    "FIDELITY_WARM_PRELOAD",
)
GUARD_MARK = "fidelity import guard"
GUARD_EXIT = 4
GUARD_PLUGIN = "fidelity_pytest_guard"
CONTROLS_PLUGIN = "fidelity_pytest_controls"
PLUGIN_SOURCE = Path(__file__).resolve().parent.parent / "plugins"
APPENDED = ("-o", "junit_family=xunit1", "-p", "no:cacheprovider")
BASETEMP = "pytest-tmp"  # beside the worktree, in the folder only its lane uses
_TAIL_BYTES = 64 * 1024


PLUGIN_PREFIX = "fidelity-plugins-"
OWNER_FILE = "owner"  # which process made the folder, as a worktree's lock reason says it


@functools.cache
def plugin_dir() -> Path:
    """A folder of this process's own holding the plugin modules, removed when it exits;
    the folders of killed runs (atexit never ran) are swept first."""
    sweep_plugin_dirs()
    folder = Path(tempfile.mkdtemp(prefix=PLUGIN_PREFIX))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / OWNER_FILE).write_text(worktree.me().reason())
    for module in PLUGIN_SOURCE.glob("fidelity_*.py"):
        shutil.copyfile(module, folder / module.name)
    return folder


def sweep_plugin_dirs(temp: Path | None = None) -> list[Path]:
    """Remove the plugin folders whose owner process is gone (a run killed with SIGKILL);
    a folder without an owner file, or whose owner is alive or on another host, stays."""
    removed = []
    for folder in sorted(Path(temp or tempfile.gettempdir()).glob(PLUGIN_PREFIX + "*")):
        try:
            owner = worktree.Owner.parse((folder / OWNER_FILE).read_text())
        except OSError:
            continue
        if owner is not None and worktree.owner_alive(owner) is False:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


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
    if not names_junit(command):
        raise UsageError(
            f"{where}: command {' '.join(command)!r} is not pytest; put {{junit}} where it "
            "writes its JUnit XML report"
        )
    if import_check:
        raise UsageError(f"{where}: import_check needs a pytest command (the guard is a plugin)")


def names_junit(command: Sequence[str]) -> bool:
    """Whether the command names `{junit}` itself (`{{junit}}` and `${junit}` do not)."""
    return any("junit" in names(a) for a in command)


def argv_for(command: Sequence[str], junit: Path, root: Path) -> list[str]:
    places = {"junit": str(junit), "worktree": str(root)}
    argv = [fill(a, places) for a in command]
    if not is_pytest(command):
        return argv
    argv += [*APPENDED, "-p", GUARD_PLUGIN, "-p", CONTROLS_PLUGIN]
    if not names_junit(command):
        argv.append(f"--junitxml={junit}")
    if not any(a == "--basetemp" or a.startswith("--basetemp=") for a in command):
        argv.append(f"--basetemp={root.parent / BASETEMP}")
    return argv


def env_for(
    table: ControlTable, root: Path, tree: Sequence[str], pytest: bool = True
) -> dict[str, str]:
    """The test process's environment: the caller's (less GIT_* and an outer run's plugin
    settings), the table's `env`, and for pytest the guard's settings and the plugins'
    folder last on PYTHONPATH."""
    env = proc.child_env()
    env.update({k: fill(v, {"worktree": str(root)}) for k, v in table.env.items()})
    for key in (GUARD_PACKAGES_ENV, GUARD_ROOT_ENV, GUARD_TREE_ENV, *RUN_ENV):
        env.pop(key, None)
    if not pytest:
        return env
    # our own throwaway worktrees: unchanged modules compile once per lane, not per control
    # (edited and restored files lose their bytecode in `lane`)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env[GUARD_ROOT_ENV] = str(root)
    env[GUARD_TREE_ENV] = ",".join(tree)
    if table.import_check:
        env[GUARD_PACKAGES_ENV] = ",".join(table.import_check)
    # last, so that the table's own PYTHONPATH entries keep their precedence
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(plugin_dir())) if p)
    return env


def with_extra(env: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    return {**env, **extra}


def read_tail(log: Path) -> str:
    """The last 64 KiB of a log, as text."""
    try:
        with log.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL_BYTES))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _error_tail(lines: Sequence[str]) -> str:
    """The line that says what went wrong (pytest's `E ...` or an `...Error: ...` line), with
    the last line when that differs."""
    last = lines[-1]
    error = next(
        (x for x in reversed(lines) if x.startswith("E ") or "Error" in x or "Exception" in x),
        "",
    )
    text = error if error and error != last else ""
    return f"{text[:300]} ... {last[:200]}" if text else last[:300]


def explain(
    status: proc.ProcStatus, error: str, argv: Sequence[str], output: str, log: Path | None
) -> str:
    """One line saying why a run produced no usable report, and which log to read."""
    see = f"; log: {log}" if log is not None else ""
    program = argv[0] if argv else "?"
    if status is proc.ProcStatus.NOT_FOUND:
        return (
            f"{program} could not be started ({error}); name an interpreter that "
            f'exists in [controls] command, e.g. "{{python}}" for fidelity\'s own{see}'
        )
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    # pytest prints an exit message twice (`! _pytest.outcomes.Exit: ...`, `Exit: ...`)
    guard = [line[line.index(GUARD_MARK) :].rstrip(" !") for line in lines if GUARD_MARK in line]
    if guard:
        return " ".join(dict.fromkeys(guard)) + see
    if "No module named pytest" in output:
        return (
            f"pytest is not installed for {program}; install it there, or name another "
            f'interpreter in [controls] command, e.g. "{{python}}" for fidelity\'s own{see}'
        )
    if GUARD_PLUGIN in output and "Error" in output:
        last = next((line for line in reversed(lines) if "Error" in line), lines[-1])
        return f"pytest could not load fidelity's plugins ({last}){see}"
    tail = _error_tail(lines) if lines else (error or "no output")
    return f"{tail}{see}"
