"""fidelity.git.worktrees on real repositories: the top of a work tree or a located refusal
outside one, what is changed there (renames as one path), HEAD's state, and the locked,
detached worktrees fidelity adds, lists, resets and removes."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Repo

from fidelity.errors import UsageError
from fidelity.git import worktrees
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "a\n", "sub/b.txt": "b\n", ".gitignore": "*.log\n"}, "first")
    return repo


def test_toplevel_from_a_subfolder_and_outside(repo: Repo, tmp_path: Path) -> None:
    assert worktrees.toplevel(repo.path / "sub") == repo.path
    (tmp_path / "plain").mkdir()
    with pytest.raises(UsageError, match="is not inside a git repository.*pass --repo"):
        worktrees.toplevel(tmp_path / "plain")


def test_dirty_paths_and_status_entries(repo: Repo) -> None:
    assert worktrees.dirty_paths(repo.path) == [] and worktrees.status_entries(repo.path) == []
    repo.write({"a.txt": "changed\n", "new.txt": "n\n", "x.log": "ignored\n"})
    repo.git("mv", "sub/b.txt", "sub/renamed.txt")
    assert worktrees.dirty_paths(repo.path) == ["a.txt", "new.txt", "sub/renamed.txt"]
    assert worktrees.dirty_paths(repo.path, ["sub"]) == ["sub/renamed.txt"]
    assert sorted(worktrees.status_entries(repo.path)) == [
        (" M", "a.txt"),
        ("??", "new.txt"),
        ("R ", "sub/renamed.txt"),
    ]
    assert ("??", "new.txt") not in worktrees.status_entries(repo.path, untracked=False)


def test_head_state_and_sha(repo: Repo, make_repo) -> None:
    sha = repo.git("rev-parse", "HEAD")
    assert worktrees.head_state(repo.path) == f"{sha} refs/heads/main"
    assert worktrees.head_sha(repo.path) == sha
    repo.git("checkout", "-q", "--detach")
    assert worktrees.head_state(repo.path) == f"{sha} (detached)"
    empty = make_repo("empty")
    assert worktrees.head_state(empty.path) == "(no commit) refs/heads/main"
    assert worktrees.head_sha(empty.path) == ""


def test_one_status_says_what_head_state_status_entries_and_the_index_said(
    repo: Repo, make_repo
) -> None:
    """`status` (porcelain v2) stands in for three processes: the same entries, HEAD's
    state, and a staged part that moves exactly when the index's entries move."""

    def same(path: Path) -> worktrees.Status:
        now = worktrees.status(path)
        assert now.head_state() == worktrees.head_state(path)
        assert sorted(now.entries) == sorted(worktrees.status_entries(path))
        return now

    clean = same(repo.path)
    assert clean.staged == b"" and clean.entries == ()
    repo.write({"a.txt": "changed\n", "new.txt": "n\n", "name with space.txt": "s\n"})
    edited = same(repo.path)
    assert edited.staged == b""  # nothing staged: the index is HEAD's
    repo.git("mv", "sub/b.txt", "sub/renamed.txt")
    moved = same(repo.path)
    repo.git("add", "a.txt")
    added = same(repo.path)
    repo.git("add", "-N", "new.txt")  # an intent to add is an index entry too
    intent = same(repo.path)
    assert len({edited.staged, moved.staged, added.staged, intent.staged}) == 4
    repo.write({"a.txt": "changed again\n"})  # the work tree alone: the index is as it was
    assert same(repo.path).staged == intent.staged
    assert ("??", "name with space.txt") in intent.entries
    assert all(code != "??" for code, _ in worktrees.status(repo.path, untracked=False).entries)
    repo.git("checkout", "-q", "--detach")
    same(repo.path)
    same(make_repo("empty").path)


def test_a_locked_worktree_added_listed_and_removed(repo: Repo, tmp_path: Path) -> None:
    sha = repo.git("rev-parse", "HEAD")
    dest = tmp_path / "wt"
    worktrees.worktree_add_locked(repo.path, dest, sha, "fidelity pid 1")
    entries = worktrees.worktree_entries(repo.path)
    assert entries[0].path == repo.path and entries[0].locked is None
    assert (entries[1].path, entries[1].head, entries[1].locked) == (dest, sha, "fidelity pid 1")
    assert not worktrees.worktree_lock(repo.path, dest, "again"), "already locked"
    assert worktrees.worktree_unlock(repo.path, dest)
    assert worktrees.worktree_lock(repo.path, dest, "mine")
    with pytest.raises(GitError, match="already exists"):
        worktrees.worktree_add_locked(repo.path, dest, sha, "twice")
    assert worktrees.worktree_remove(repo.path, dest)
    assert not dest.exists() and len(worktrees.worktree_entries(repo.path)) == 1
    assert not worktrees.worktree_remove(repo.path, dest), "nothing there to remove"


def test_a_worktree_whose_folder_went_is_listed_prunable(repo: Repo, tmp_path: Path) -> None:
    dest = tmp_path / "gone"
    repo.git("worktree", "add", "-q", "--detach", str(dest))
    repo.git("worktree", "remove", "--force", str(dest))
    repo.git("worktree", "add", "-q", "--detach", str(dest))
    for path in sorted(dest.rglob("*"), reverse=True):
        path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
    dest.rmdir()
    assert worktrees.worktree_entries(repo.path)[1].prunable


def test_leftovers_and_reset_of_one_of_our_worktrees(repo: Repo, tmp_path: Path) -> None:
    dest = tmp_path / "wt"
    worktrees.worktree_add_locked(repo.path, dest, "HEAD", "test")
    worktrees.refresh_index(dest)
    assert worktrees.leftovers(dest) == [] and not worktrees.reset_worktree(dest, [])
    (dest / "a.txt").write_text("run wrote\n")
    (dest / "out.log").write_text("ignored\n")
    (dest / "__pycache__").mkdir()
    (dest / "__pycache__" / "m.pyc").write_bytes(b"")
    assert worktrees.leftovers(dest) == [" M a.txt", "!! out.log"]
    assert worktrees.ignored_paths(dest) == ["out.log"], "__pycache__ is untracked, not ignored"
    assert worktrees.reset_worktree(dest, worktrees.leftovers(dest)), "a tracked file changed"
    assert worktrees.leftovers(dest) == [] and (dest / "__pycache__" / "m.pyc").exists()
    assert (dest / "a.txt").read_text() == "a\n"
    (dest / "new.txt").write_text("untracked\n")
    assert not worktrees.reset_worktree(dest, worktrees.leftovers(dest)), "only untracked"
    assert worktrees.leftovers(dest) == [], "and it is gone"


def test_ignored_paths_outside_a_repository_is_none(tmp_path: Path) -> None:
    assert worktrees.ignored_paths(tmp_path) is None
    with pytest.raises(GitError):
        worktrees.dirty_paths(tmp_path)
