"""The real pre-commit framework runs this repository's .pre-commit-hooks.yaml.

A temp repository uses a copy of this source tree (committed into a hook-source repository
of its own, so uncommitted edits here are what is tested) as its hook source; pre-commit
builds its own environment from it with pip once per module (the build dominates the
time), installs the git hooks, and real `git commit`s go through them; `pre-commit run`
is driven in its CI modes too (`--all-files`, `--files`, `--from-ref/--to-ref`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import Repo

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "fidelity", "checkers")
PYPROJECT = """\
[tool.fidelity.docs]
paths = ["README.md"]

[tool.fidelity.trailers]
required = { "Assisted-by" = ".+" }
"""
GOOD, BAD = "# Demo\n\nSee [a](a.txt).\n", "# Demo\n\nSee [a](gone.txt).\n"


def hook_source(tmp: Path) -> tuple[Path, str]:
    src = Repo(tmp / "hook-source")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src.path / name, ignore=ignore)
        else:
            shutil.copy(path, src.path / name)
    return src.path, src.commit(message="hook source")


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """(hook source, its commit, a PRE_COMMIT_HOME shared by the module's tests)."""
    tmp = tmp_path_factory.mktemp("hooks")
    source, rev = hook_source(tmp)
    return source, rev, tmp / "pre-commit-home"


def run(
    repo: Repo, argv: list[str], stdin: str | None = None, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**repo.env(), "PRE_COMMIT_HOME": str(home or repo.path.parent / "pre-commit-home")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        argv, cwd=repo.path, env=env, input=stdin, capture_output=True, text=True, timeout=900
    )


def test_pre_commit_runs_the_hooks_from_this_repository(
    tmp_path: Path, hooks: tuple[Path, str, Path]
) -> None:
    source, rev, home = hooks
    user = Repo(tmp_path / "user")
    config = (
        f"repos:\n- repo: {source}\n  rev: {rev}\n  hooks:\n"
        "  - id: fidelity-preflight\n  - id: fidelity-check-docs\n  - id: fidelity-trailers\n"
    )
    user.commit(
        {
            ".pre-commit-config.yaml": config,
            "pyproject.toml": PYPROJECT,
            "README.md": GOOD,
            "a.txt": "a\n",
        },
        "root\n\nAssisted-by: a test\n",
    )
    installed = run(
        user,
        [
            sys.executable,
            "-m",
            "pre_commit",
            "install",
            "--install-hooks",
            "--hook-type",
            "pre-commit",
            "--hook-type",
            "commit-msg",
        ],
        home=home,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    head = user.git("rev-parse", "HEAD")

    user.write({"README.md": BAD})
    user.git("add", "-A")
    user.write({"README.md": GOOD})  # an unstaged fix: pre-commit stashes it, preflight ignores it
    commit = ["git", "commit", "-q", "-F", "-"]
    done = run(user, commit, "Break a link\n\nAssisted-by: a test\n", home)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "fidelity preflight" in out and "FD401 link target 'gone.txt' does not exist" in out
    assert user.git("rev-parse", "HEAD") == head
    assert (user.path / "README.md").read_text() == GOOD, "pre-commit restored the unstaged fix"

    user.git("add", "-A")
    user.write({"a.txt": "b\n"})
    user.git("add", "-A")
    done = run(user, commit, "Change a\n\nNo trailer.\n", home)
    assert done.returncode != 0 and "FD801" in done.stdout + done.stderr
    done = run(user, commit, "Change a\n\nAssisted-by: a test\n", home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert user.git("rev-parse", "HEAD") != head


def test_every_pre_commit_mode_judges_what_it_names(
    tmp_path: Path, hooks: tuple[Path, str, Path]
) -> None:
    """A broken link committed past the hooks: `pre-commit run` with nothing staged has
    nothing to judge, but `--all-files`, `--files` and a range that brings it all fail, as
    `fidelity preflight --all` does. A range end the clone lacks fails too, never passes."""
    source, rev, home = hooks
    user = Repo(tmp_path / "user")
    config = f"repos:\n- repo: {source}\n  rev: {rev}\n  hooks:\n  - id: fidelity-preflight\n"
    good = user.commit(
        {".pre-commit-config.yaml": config, "pyproject.toml": PYPROJECT, "README.md": GOOD},
        "root\n\nAssisted-by: a test\n",
    )
    user.commit({"README.md": BAD, "a.txt": "a\n"}, "break a link\n\nAssisted-by: a test\n")
    hook = [sys.executable, "-m", "pre_commit", "run", "fidelity-preflight"]

    staged = run(user, hook, home=home)
    assert staged.returncode == 0, staged.stdout + staged.stderr
    assert "Passed" in staged.stdout
    for mode in (
        ["--all-files"],
        ["--files", "README.md"],
        ["--from-ref", good, "--to-ref", "HEAD"],
    ):
        done = run(user, [*hook, *mode], home=home)
        out = done.stdout + done.stderr
        assert done.returncode == 1, (mode, out)
        assert "FD401 link target 'gone.txt' does not exist" in out, mode
    done = run(user, [*hook, "--files", "a.txt"], home=home)
    assert done.returncode == 0, "a.txt is no input of any gate"
    done = run(user, [*hook, "--from-ref", "0" * 40, "--to-ref", "HEAD"], home=home)
    assert done.returncode != 0, "pre-commit itself refuses a range it cannot diff"


ROWS_PYPROJECT = """\
[[tool.fidelity.records]]
path = "records/r.md"
key = "row"

[tool.fidelity.preflight]
gates = ["rows"]
"""


def rows(*keys: str) -> str:
    return "| row | v |\n|---|---|\n" + "".join(f"| {k} | 1 |\n" for k in keys)


def test_the_framework_stops_a_merge_and_a_push_that_drop_a_row(
    tmp_path: Path, hooks: tuple[Path, str, Path]
) -> None:
    """At pre-merge-commit, `git merge -s ours` (git merges on its own: GITHEAD_*); at
    pre-push, a rebase whose conflict was resolved with `checkout --theirs`."""
    source, rev, home = hooks
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "origin.git")], check=True)
    user = Repo(tmp_path / "user")
    config = f"repos:\n- repo: {source}\n  rev: {rev}\n  hooks:\n  - id: fidelity-preflight\n"
    files = {".pre-commit-config.yaml": config, "pyproject.toml": ROWS_PYPROJECT}
    user.commit({**files, "records/r.md": rows("a", "b", "c")}, "base")
    user.git("checkout", "-q", "-b", "side")
    user.commit({"records/r.md": rows("a", "b", "s", "c")}, "side adds s")
    user.git("checkout", "-q", "main")
    user.commit({"records/r.md": rows("a", "b", "m", "c")}, "main adds m")
    user.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    user.git("push", "-q", "origin", "main", "side")
    install = [sys.executable, "-m", "pre_commit", "install", "--install-hooks"]
    types = ["--hook-type", "pre-merge-commit", "--hook-type", "pre-push"]
    installed = run(user, [*install, *types], home=home)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    done = run(user, ["git", "merge", "-s", "ours", "--no-edit", "side"], home=home)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "row 's'" in out and "the merge lost it" in out, out
    user.git("merge", "--abort")

    user.git("checkout", "-q", "side")
    assert run(user, ["git", "rebase", "main"], home=home).returncode == 1
    user.git("checkout", "--theirs", "records/r.md")
    user.git("add", "records/r.md")
    user.git("-c", "core.editor=true", "rebase", "--continue")
    done = run(user, ["git", "push", "--force", "origin", "side"], home=home)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "row 'm'" in out and "Removes-Row: m" in out, out


def test_the_check_docs_hook_runs_when_a_linked_file_is_deleted(
    tmp_path: Path, hooks: tuple[Path, str, Path]
) -> None:
    """Its `files` pattern (Markdown, pyproject.toml, ratchets.json) made pre-commit skip it
    for a change that only deletes a file a page links to: "Skipped", and the commit landed
    with a broken link (fidelity-preflight caught it)."""
    source, rev, home = hooks
    user = Repo(tmp_path / "user")
    config = f"repos:\n- repo: {source}\n  rev: {rev}\n  hooks:\n  - id: fidelity-check-docs\n"
    user.commit(
        {".pre-commit-config.yaml": config, "pyproject.toml": PYPROJECT, "README.md": GOOD},
        "root",
    )
    user.commit({"a.txt": "a\n"}, "the linked file")
    user.git("rm", "-q", "a.txt")
    done = run(user, [sys.executable, "-m", "pre_commit", "run", "fidelity-check-docs"], home=home)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Skipped" not in out, out
    assert "FD401 link target 'a.txt' does not exist" in out, out
