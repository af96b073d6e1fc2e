"""Real git repositories built in temp dirs, and a snapshot of a checkout to prove it unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=150)
settings.load_profile("ci")

PY = sys.executable
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def run_git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    out = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=repo, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout.strip()


class Repo:
    """A throwaway repository with helpers to write files and commit them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        run_git(path, "init", "-q", "-b", "main")

    def write(self, files: Mapping[str, str | bytes]) -> None:
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)

    def commit(self, files: Mapping[str, str | bytes] | None = None, message: str = "c") -> str:
        self.write(files or {})
        run_git(self.path, "add", "-A")
        run_git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return run_git(self.path, "rev-parse", "HEAD")

    def git(self, *args: str) -> str:
        return run_git(self.path, *args)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[str], Repo]:
    def make(name: str = "repo") -> Repo:
        return Repo(tmp_path / name)

    return make


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


@pytest.fixture
def sim_repo(make_repo: Callable[[str], Repo]) -> Repo:
    """A repository whose cases echo value.txt; commit a new value.txt to move them."""
    repo = make_repo("sim")
    repo.commit(
        {
            "prog.py": PROG,
            "value.txt": "one\n",
            "cases/matrix.toml": matrix_toml({"a": "ok", "b": "ok", "c": "fail-if-bad"}),
            ".gitignore": "__pycache__/\n",
        },
        "baseline",
    )
    return repo


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Run one evidence command's handler with an injected 100-column console."""
    import argparse
    import io

    from rich.console import Console

    from fidelity import cli_evidence

    parser = argparse.ArgumentParser()
    cli_evidence.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    out = io.StringIO()
    code: int = args.handler(args, Console(file=out, width=100, color_system=None))
    return code, out.getvalue()
