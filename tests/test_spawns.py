"""Only `fidelity/proc.py` starts processes, and only `fidelity/git/` starts git.

Read from the source, not from a run: outside proc.py, a call of `subprocess.*`,
`os.system`, `os.popen`, `os.exec*`, `os.spawn*`, `os.posix_spawn*`, `os.fork*` or `pty.*`
is a finding; outside `fidelity/git/`, so is a list or tuple whose first item is the string
"git" (an argv on its way to proc). Not seen: an argv whose program is computed at run
time, or a process a library starts. The red cases plant each in a copy of one module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROCESS_OWNER = "fidelity/proc.py"
GIT_OWNER = "fidelity/git/"
# the plugins run inside the user's pytest, not in fidelity: the warm and swap servers fork a child
# per control there (fidelity/controls/warm.py talks to it through proc)
ALLOWED = {
    ("fidelity/plugins/fidelity_warm.py", "os.fork"),
    ("fidelity/plugins/fidelity_swap.py", "os.fork"),
}
_OS_SPAWNS = ("system", "popen", "exec", "spawn", "posix_spawn", "fork")


def _callee(node: ast.Call) -> str:
    """`module.function` for a call of an attribute of a plain name, else ''."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _starts_process(callee: str) -> bool:
    module, _, name = callee.partition(".")
    if module in ("subprocess", "pty"):
        return True
    return module == "os" and name.startswith(_OS_SPAWNS)


def _git_argv(node: ast.AST) -> bool:
    if not isinstance(node, ast.List | ast.Tuple) or not node.elts:
        return False
    first = node.elts[0]
    return isinstance(first, ast.Constant) and first.value == "git"


def findings(root: Path) -> list[str]:
    """`path:line: what` for every process or git started outside its one module."""
    found = []
    for path in sorted([*root.glob("fidelity/**/*.py"), *root.glob("checkers/**/*.py")]):
        name = path.relative_to(root).as_posix()
        if name.startswith("fidelity/demo/files/"):
            continue  # the demo's simulator repository, not fidelity's code
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            callee = _callee(node) if isinstance(node, ast.Call) else ""
            starts = callee and _starts_process(callee) and name != PROCESS_OWNER
            if starts and (name, callee) not in ALLOWED:
                found.append(f"{name}:{getattr(node, 'lineno', 0)}: {callee} starts a process")
            if _git_argv(node) and not name.startswith(GIT_OWNER):
                found.append(f"{name}:{getattr(node, 'lineno', 0)}: starts git")
    return found


def test_only_proc_starts_processes_and_only_fidelity_git_starts_git() -> None:
    assert findings(ROOT) == []


@pytest.mark.parametrize(
    ("module", "line", "finding"),
    [
        # a capability asking git itself instead of through fidelity.git
        (
            "fidelity/history/stale.py",
            'proc.run(["git", "log"], cwd=".", timeout_s=1.0)',
            "fidelity/history/stale.py:{n}: starts git",
        ),
        # the worktree lifecycle above fidelity.git builds no git argv of its own
        (
            "fidelity/worktree.py",
            'ARGV = ("git", "worktree", "prune")',
            "fidelity/worktree.py:{n}: starts git",
        ),
        # a process started around proc (no timeout, no group kill)
        (
            "fidelity/git/command.py",
            'subprocess.run(["true"], check=False)',
            "fidelity/git/command.py:{n}: subprocess.run starts a process",
        ),
        # the checkers start nothing
        (
            "checkers/fences.py",
            'os.system("true")',
            "checkers/fences.py:{n}: os.system starts a process",
        ),
        # the one allowed fork is allowed in its plugin only
        (
            "fidelity/plugins/fidelity_pytest_guard.py",
            "os.fork()",
            "fidelity/plugins/fidelity_pytest_guard.py:{n}: os.fork starts a process",
        ),
    ],
)
def test_each_planted_start_is_found(tmp_path: Path, module: str, line: str, finding: str) -> None:
    path = tmp_path / module
    path.parent.mkdir(parents=True)
    lines = (ROOT / module).read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines), encoding="utf-8")
    assert findings(tmp_path) == [], "the copy holds before the plant"
    lines.append(f"\n\ndef _planted() -> None:\n    {line}\n")
    path.write_text("".join(lines), encoding="utf-8")
    planted_at = len("".join(lines).splitlines())
    assert findings(tmp_path) == [finding.format(n=planted_at)]
