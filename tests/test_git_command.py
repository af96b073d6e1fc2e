"""fidelity.git.command, the runner every git call goes through, against a hostile setup:
inherited GIT_* variables, the repository's own hooks, pager, external diff and replace refs,
a stat cache that a plain `git status` would rewrite, and git missing. Each hardening is shown
twice: plain git (run here directly) does what the user's setup asks, the runner does not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import Repo

from fidelity.errors import Exit
from fidelity.git import command
from fidelity.git.command import GitError


def plain_git(repo: Repo, *args: str, env: dict[str, str] | None = None) -> str:
    """git as the user's shell runs it: their variables, config and hooks."""
    done = subprocess.run(
        ["git", *args], cwd=repo.path, env=env or repo.env(), capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "one\n"}, "first")
    repo.commit({"a.txt": "two\n"}, "second")
    return repo


def test_inherited_git_variables_are_dropped(
    repo: Repo, make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo("other")
    other.commit({"b.txt": "other\n"}, "elsewhere")
    for name, value in {
        "GIT_DIR": str(other.path / ".git"),
        "GIT_WORK_TREE": str(other.path),
        "GIT_INDEX_FILE": str(other.path / ".git" / "index"),
    }.items():
        monkeypatch.setenv(name, value)
    as_user = plain_git(repo, "rev-parse", "HEAD", env=dict(os.environ))
    assert as_user.strip() == other.git("rev-parse", "HEAD"), "plain git follows GIT_DIR"
    assert command.git(repo.path, "rev-parse", "HEAD").decode().strip() == repo.git(
        "rev-parse", "HEAD"
    )
    env = command.clean_env()
    assert not {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} & set(env)
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["LC_ALL"] == "C", "git's messages in English, as fidelity reads them"


def test_the_repositorys_hooks_do_not_run(repo: Repo, tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    (hooks / "pre-commit").chmod(0o755)
    repo.git("config", "core.hooksPath", str(hooks))
    plain_git(repo, "commit", "-q", "--allow-empty", "-m", "as the user")
    assert marker.read_text() == "ran\n", "plain git runs the hook"
    marker.unlink()
    who = ("-c", "user.name=T", "-c", "user.email=t@example.invalid")
    command.git(repo.path, *who, "commit", "-q", "--allow-empty", "-m", "through fidelity")
    assert not marker.exists()


def test_the_users_external_diff_driver_never_runs(repo: Repo, tmp_path: Path) -> None:
    """(No pager either, but git pages only on a terminal and the runner's output is a pipe,
    so `--no-pager` and core.pager=cat are a second lock this test cannot see turn.)"""
    marker = tmp_path / "ran"
    tool = tmp_path / "tool.sh"
    tool.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    tool.chmod(0o755)
    repo.git("config", "diff.external", str(tool))
    plain_git(repo, "diff", "HEAD~1", "HEAD")
    assert marker.exists(), "plain git runs the external diff driver"
    marker.unlink()
    out = command.git(repo.path, "diff", "--no-ext-diff", "HEAD~1", "HEAD").decode()
    assert "-one\n+two\n" in out and not marker.exists()
    # diff.external= is no off switch: git then runs "" and fails. A diff that forgets
    # --no-ext-diff (every one in fidelity.git passes it) fails closed instead of running
    # the user's program
    with pytest.raises(GitError, match="external diff died"):
        command.git(repo.path, "diff", "HEAD~1", "HEAD")
    assert not marker.exists()


def test_replace_refs_do_not_swap_a_commit(repo: Repo) -> None:
    first, second = repo.git("rev-parse", "HEAD~1"), repo.git("rev-parse", "HEAD")
    repo.git("replace", second, first)
    assert plain_git(repo, "show", "HEAD:a.txt") == "one\n", "plain git reads the replacement"
    assert command.git(repo.path, "show", "HEAD:a.txt") == b"two\n"


def test_a_read_only_command_leaves_the_index_file_alone(repo: Repo) -> None:
    index = repo.path / ".git" / "index"
    os.utime(repo.path / "a.txt", ns=(1, 1))  # stale stat data: status would refresh it
    before = index.read_bytes()
    command.git(repo.path, "status", "--porcelain")
    assert index.read_bytes() == before
    plain_git(repo, "status", "--porcelain")
    assert index.read_bytes() != before, "plain git status rewrites the index"


def test_a_failure_names_the_command_the_folder_and_gits_words(repo: Repo) -> None:
    with pytest.raises(GitError) as caught:
        command.git(repo.path, "rev-parse", "--verify", "no-such-rev")
    text = str(caught.value)
    assert text.startswith(f"git rev-parse --verify no-such-rev failed in {repo.path}: ")
    assert "Needed a single revision" in text
    assert caught.value.exit_code is Exit.UNTRUSTED
    assert command.git(repo.path, "rev-parse", "--verify", "nope", check=False) == b""
    assert command.succeeds(repo.path, "rev-parse", "HEAD")
    assert not command.succeeds(repo.path, "rev-parse", "--verify", "nope")


def test_answer_and_reason_read_a_result(repo: Repo) -> None:
    ok = command.attempt(repo.path, "rev-parse", "HEAD")
    bad = command.attempt(repo.path, "rev-parse", "--verify", "nope")
    assert command.answer(ok) == repo.git("rev-parse", "HEAD") and command.answer(bad) is None
    assert command.reason(ok, "git rev-parse") == ""
    assert "Needed a single revision" in command.reason(bad, "git rev-parse")


def test_git_missing_from_path_says_what_to_do(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(GitError, match=r"git was not found\. Is it installed and on PATH\?"):
        command.git(repo.path, "status")
    assert not command.succeeds(repo.path, "status")


def test_a_scratch_index_is_read_and_written_instead_of_the_users(
    repo: Repo, tmp_path: Path
) -> None:
    users = (repo.path / ".git" / "index").read_bytes()
    scratch = tmp_path / "scratch-index"
    command.git(repo.path, "read-tree", "HEAD~1", index=scratch)
    assert scratch.is_file() and (repo.path / ".git" / "index").read_bytes() == users
    listed = command.git(repo.path, "ls-files", "--stage", index=scratch).decode()
    assert repo.git("rev-parse", "HEAD~1:a.txt") in listed
