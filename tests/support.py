"""Helpers the tests share: real git repositories, checkout snapshots, case tables, venvs.

Fixtures built on these live in conftest.py; test modules import helpers from here, never
from conftest or from each other. Git runs directly here (the product's calls go through
fidelity.git); the environment drops inherited GIT_* variables, pins identities, gives each
commit its own minute, and points HOME away from the user's global config.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import site
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

PY = sys.executable
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Test",
    "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada Test",
    "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git_env(home: Path, tick: int = 0) -> dict[str, str]:
    date = f"2024-01-01T{tick // 3600:02d}:{tick // 60 % 60:02d}:{tick % 60:02d}+0000"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY, HOME=str(home), GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return env


def run_git(repo: Path, *args: str, stdin: str | None = None, tick: int = 0) -> str:
    out = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        env=git_env(repo.parent, tick),
        input=stdin,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


class Repo:
    """A throwaway repository: write files, commit them (each commit a minute later)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def env(self) -> dict[str, str]:
        return git_env(self.path.parent, self._tick)

    def git(self, *args: str, stdin: str | None = None) -> str:
        return run_git(self.path, *args, stdin=stdin, tick=self._tick)

    def write(self, files: Mapping[str, str | bytes]) -> None:
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)

    def commit(self, files: Mapping[str, str | bytes] | None = None, message: str = "c") -> str:
        """Write files, stage everything and commit; the new sha."""
        self.write(files or {})
        self.git("add", "-A")
        self._tick += 1
        self.git("commit", "-q", "--allow-empty", "-F", "-", stdin=message)
        return self.git("rev-parse", "HEAD")

    def rm(self, name: str, message: str) -> str:
        self.git("rm", "-q", name)
        return self.commit(message=message)


def hostile_textconv(repo: Repo, scratch: Path) -> Path:
    """Give every file of repo a textconv driver (the user's config and .gitattributes) that
    turns any text into one line and leaves a marker file: a diff that runs it sees no change.
    The marker's path, absent until the driver runs."""
    marker = scratch / "textconv-ran"
    driver = scratch / "textconv.sh"
    driver.write_text(f"#!/bin/sh\necho ran >> {marker}\necho SAME\n")
    driver.chmod(0o755)
    repo.write({".git/info/attributes": "* diff=hostile\n"})
    repo.git("config", "diff.hostile.textconv", str(driver))
    return marker


def snapshot(repo: Path) -> dict[str, str]:
    """Hashes of every file in the work tree (outside .git and .fidelity), the index and HEAD."""
    state: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if rel.startswith((".git/", ".fidelity/")) or rel in (".git", ".fidelity") or path.is_dir():
            continue
        state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    index = repo / ".git" / "index"
    state[".git/index"] = hashlib.sha256(index.read_bytes()).hexdigest() if index.exists() else ""
    state[".git/HEAD"] = (repo / ".git" / "HEAD").read_text()
    state["status"] = run_git(repo, "status", "--porcelain=v1", "--untracked-files=all")
    state["worktrees"] = run_git(repo, "worktree", "list", "--porcelain")
    return state


PROG = """
import os, pathlib, sys, time
out = pathlib.Path(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "ok"
value = pathlib.Path("value.txt").read_text()
if mode == "fail" or (mode == "fail-if-bad" and "bad" in value):
    sys.exit(3)
if mode == "sleep":
    time.sleep(60)
(out / "result.txt").write_text(value)
cache = os.environ.get("CACHE")
if cache:
    (pathlib.Path(cache) / "c.txt").write_text(value)
"""


def toml_str(value: str) -> str:
    return json.dumps(value)


def matrix_toml(cases: Mapping[str, str], extra_matrix: str = "", **case_keys: str) -> str:
    """A case table running prog.py in each mode given (case id -> mode)."""
    lines = ["[matrix]", 'name = "t"', extra_matrix, ""]
    for case_id, mode in cases.items():
        lines += [
            "[[case]]",
            f"id = {toml_str(case_id)}",
            f'argv = [{toml_str(PY)}, "prog.py", "{{out}}", {toml_str(mode)}]',
            'outputs = ["result.txt"]',
            'cache_env = "CACHE"',
            "timeout_s = 20",
            *(f"{k} = {v}" for k, v in case_keys.items()),
            "",
        ]
    return "\n".join(lines)


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Run one command's handler with an injected 100-column console (the plain one of
    `-q` when the arguments ask for it); errors propagate."""
    from rich.console import Console

    from fidelity.cli.main import build_parser
    from fidelity.cli.plain import PlainConsole

    args = build_parser().parse_args(argv)
    out = io.StringIO()
    kind = PlainConsole if args.quiet else Console
    code: int = args.handler(args, kind(file=out, width=100, color_system=None))
    return code, out.getvalue()


PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"
[project]
name = "{name}"
version = "0.1"
"""


def run_shown(argv: list[str]) -> str:
    """Run a setup command; on failure the assertion shows what the tool printed."""
    result = subprocess.run(argv, capture_output=True, text=True)
    assert result.returncode == 0, f"{argv} exited {result.returncode}:\n{result.stderr}"
    return result.stdout


def nested_venv(dest: Path, process_pth: bool = True) -> Path:
    """A venv that sees this interpreter's packages, also when this interpreter is a venv.

    `--system-site-packages` from inside a venv would give the *base* interpreter's packages
    (shared/notes/processes.md), so a .pth adds this interpreter's site dirs instead. Without
    process_pth they are plain path entries: their .pth files (editable installs, fidelity's
    own among them) are not run.
    """
    run_shown([sys.executable, "-m", "venv", "--without-pip", str(dest)])
    python = dest / "bin" / "python"
    purelib = Path(run_shown([str(python), "-c", PURELIB]).strip())
    outer = site.getsitepackages()
    if process_pth:
        adds = "; ".join(f"site.addsitedir({p!r})" for p in outer)
        (purelib / "_outer_site.pth").write_text(f"import site; {adds}\n")
    else:
        (purelib / "_outer_site.pth").write_text("".join(f"{p}\n" for p in outer))
    return python


PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


def editable_venv(tmp: Path, name: str, layout: str) -> Path:
    """A venv holding an editable install of a checkout outside every worktree."""
    other = tmp / f"other-{name}"
    pkg = other / "src" / name if layout == "src" else other / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('VALUE = "other checkout"\n')
    (other / "pyproject.toml").write_text(PYPROJECT.format(name=name))
    python = nested_venv(tmp / f"venv-{name}")
    run_shown(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "-e",
            str(other),
        ]
    )
    return python


def wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def fidelity_cli(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m fidelity ARGS` in a subprocess, as a user runs it (80 columns, no TTY)."""
    base = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "COLUMNS": "80"}
    return subprocess.run(
        [PY, "-m", "fidelity", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def preflight_cli(
    repo: Repo, *args: str, env: Mapping[str, str] | None = None, timeout: float = 180
) -> tuple[int, str]:
    """`python -m fidelity -q preflight ARGS` in the repository, with its git identity, as a
    hook or CI step runs it: the exit code and stdout + stderr."""
    done = subprocess.run(
        [PY, "-m", "fidelity", "-q", "preflight", *args],
        cwd=repo.path,
        env={**repo.env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout + done.stderr


CONTROLS_LIB = Path(__file__).parent / "data" / "controls_lib"


def controls_lib(repo: Repo, table: str | None = None) -> str:
    """Commit the fixture library of tests/data/controls_lib (its table as cases/controls.toml,
    or the table given); the new sha."""
    files: dict[str, str | bytes] = {}
    for path in sorted(CONTROLS_LIB.rglob("*")):
        rel = path.relative_to(CONTROLS_LIB).as_posix()
        if path.is_dir() or "__pycache__" in rel or rel in ("README.md", "controls.toml"):
            continue
        files[".gitignore" if rel == "gitignore" else rel] = path.read_bytes()
    files["cases/controls.toml"] = (
        table if table is not None else (CONTROLS_LIB / "controls.toml").read_text()
    )
    return repo.commit(files, "the fixture library")
