"""fidelity.git.stage on real repositories: what the index stages and changes, scratch index
files filled from a work tree or a commit, and unreferenced commits built from them; the
user's index file is only ever read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import Repo

from fidelity.git import objects, stage
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "a\n", "b.txt": "b\n", "lib/c.txt": "c\n"}, "first")
    return repo


def users_index(repo: Repo) -> bytes:
    return (repo.path / ".git" / "index").read_bytes()


def test_the_index_as_listed_and_as_files(repo: Repo) -> None:
    os.symlink("a.txt", repo.path / "link")
    repo.git("add", "link")
    listing = stage.index_listing(repo.path)
    assert b"\ta.txt\0" in listing and b"120000 " in listing
    files = stage.staged_files(repo.path)
    assert files["link"] == ("120000", objects.hash_object(b"a.txt"))
    assert files["a.txt"] == ("100644", objects.hash_object(b"a\n"))
    assert stage.index_entries(repo.path) == {p: blob for p, (_, blob) in files.items()}
    assert stage.index_file(repo.path) == repo.path / ".git" / "index"


def test_changes_staged_unstaged_and_in_the_work_tree(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD")
    repo.write({"a.txt": "staged\n"})
    repo.git("add", "a.txt")
    repo.write({"b.txt": "unstaged\n", "new.txt": "n\n"})
    (repo.path / "lib" / "c.txt").unlink()
    assert stage.staged_changes(repo.path, head) == [("M", "a.txt")]
    assert stage.staged_changes(repo.path, stage.EMPTY_TREE)[0] == ("A", "a.txt")
    assert sorted(stage.worktree_changes(repo.path, head)) == [
        ("A", "new.txt"),
        ("D", "lib/c.txt"),
        ("M", "a.txt"),
        ("M", "b.txt"),
    ]
    assert stage.unstaged_paths(repo.path) == {"b.txt", "lib/c.txt", "new.txt"}
    with pytest.raises(GitError):
        stage.staged_changes(repo.path, "nope")


def test_a_scratch_index_from_a_work_tree_and_a_commit(repo: Repo, tmp_path: Path) -> None:
    before = users_index(repo)
    index = tmp_path / "index"
    stage.copy_index(repo.path, None, index)
    assert index.read_bytes() == before
    stage.copy_index(repo.path, tmp_path / "missing", tmp_path / "none")
    assert not (tmp_path / "none").exists(), "a missing source is an empty index"
    repo.write({"a.txt": "edited\n", "new.txt": "n\n"})
    stage.stage_from(repo.path, repo.path, index)
    assert "new.txt" not in stage.index_entries(repo.path, index), "-u: tracked files only"
    stage.stage_from(repo.path, repo.path, index, untracked=True)
    entries = stage.index_entries(repo.path, index)
    assert entries["a.txt"] == objects.hash_object(b"edited\n") and "new.txt" in entries
    assert stage.unstaged_paths(repo.path, index) == frozenset(), "new.txt is in this index"
    stage.read_tree(repo.path, "HEAD", index)
    assert stage.index_entries(repo.path, index)["a.txt"] == objects.hash_object(b"a\n")
    out = tmp_path / "out"
    out.mkdir()
    stage.checkout_index(repo.path, out, index)
    assert (out / "lib" / "c.txt").read_text() == "c\n" and not (out / "new.txt").exists()
    assert users_index(repo) == before
    with pytest.raises(GitError):
        stage.read_tree(repo.path, "nope", index)


def test_a_snapshot_of_uncommitted_work_is_an_unreferenced_commit(
    repo: Repo, tmp_path: Path
) -> None:
    head = repo.git("rev-parse", "HEAD")
    repo.write({"a.txt": "wip\n", "untracked.txt": "u\n"})
    before, refs = users_index(repo), repo.git("for-each-ref")
    snap = stage.snapshot_uncommitted(repo.path, head, tmp_path)
    assert repo.git("rev-parse", f"{snap}^") == head
    assert objects.show_file(repo.path, snap, "a.txt") == b"wip\n"
    assert objects.show_file(repo.path, snap, "untracked.txt") == b"u\n"
    assert users_index(repo) == before and repo.git("for-each-ref") == refs
    assert stage.worktree_tree(repo.path, tmp_path) == repo.git("rev-parse", f"{snap}^{{tree}}")


def test_an_overlay_takes_paths_from_another_commit(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    other = repo.commit({"a.txt": "other a\n", "lib/c.txt": "other c\n", "lib/d.txt": "d\n"})
    mixed = stage.overlay_commit(repo.path, base, other, ["lib/"], tmp_path)
    assert objects.tree_files(repo.path, mixed) == ["a.txt", "b.txt", "lib/c.txt", "lib/d.txt"]
    assert objects.show_file(repo.path, mixed, "a.txt") == b"a\n", "outside lib: base's"
    assert objects.show_file(repo.path, mixed, "lib/c.txt") == b"other c\n"
    assert (
        repo.git("log", "-1", "--format=%P %s", mixed) == f"{base} fidelity: lib from {other[:12]}"
    )
    assert stage.under(b"lib", ["lib"]) and stage.under(b"lib/x", ["lib"])
    assert not stage.under(b"library", ["lib"])
