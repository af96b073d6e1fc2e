"""fidelity.git.objects on a real repository: revisions resolved or refused with what to do,
file bytes and blob ids at a commit, a tree's paths, and batch reads that keep their order and
say None for what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Repo

from fidelity.errors import UsageError
from fidelity.git import objects
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "one\n", "dir/b c.txt": "spaced\n"}, "first")
    repo.commit({"a.txt": "two\n"}, "second")
    return repo


def test_rev_parse_resolves_and_refuses_with_what_to_do(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD")
    assert objects.rev_parse(repo.path, "main") == head
    assert objects.rev_parse(repo.path, "HEAD~1") == repo.git("rev-parse", "HEAD~1")
    with pytest.raises(UsageError, match=r"unknown revision 'nope' in .*git log --oneline"):
        objects.rev_parse(repo.path, "nope")
    with pytest.raises(UsageError, match="looks like an option"):
        objects.rev_parse(repo.path, "--all")


def test_resolve_names_commits_only_and_never_raises(repo: Repo) -> None:
    assert objects.resolve(repo.path, "HEAD") == repo.git("rev-parse", "HEAD")
    tree = repo.git("rev-parse", "HEAD^{tree}")
    for rev in ("", "-x", "nope", tree, "HEAD:a.txt"):
        assert objects.resolve(repo.path, rev) is None, rev


def test_show_file_and_blob_id(repo: Repo) -> None:
    old, new = repo.git("rev-parse", "HEAD~1"), repo.git("rev-parse", "HEAD")
    assert objects.show_file(repo.path, old, "a.txt") == b"one\n"
    assert objects.show_file(repo.path, new, "a.txt") == b"two\n"
    assert objects.show_file(repo.path, "HEAD", "dir/b c.txt") == b"spaced\n"
    assert objects.show_file(repo.path, new, "missing.txt") is None
    assert objects.show_file(repo.path, new, "dir") is None, "a folder is no file"
    assert objects.blob_id(repo.path, new, "a.txt") == objects.hash_object(b"two\n")
    assert objects.blob_id(repo.path, new, "missing.txt") is None


def test_show_file_keeps_a_file_read_at_a_full_sha_only(repo: Repo) -> None:
    sha = repo.git("rev-parse", "HEAD")
    assert objects.show_file(repo.path, sha, "a.txt") == b"two\n"
    assert (str(repo.path), sha, "a.txt") in objects._FILES
    objects.show_file(repo.path, "HEAD", "a.txt")
    assert (str(repo.path), "HEAD", "a.txt") not in objects._FILES, "HEAD can move"


def test_tree_files_lists_every_path(repo: Repo) -> None:
    assert objects.tree_files(repo.path, "HEAD") == ["a.txt", "dir/b c.txt"]
    with pytest.raises(GitError, match="ls-tree"):
        objects.tree_files(repo.path, "0" * 40)


def test_cat_blobs_reads_in_order_and_refuses_a_non_blob(repo: Repo) -> None:
    one, two = objects.hash_object(b"one\n"), objects.hash_object(b"two\n")
    assert objects.cat_blobs(repo.path, [two, one, two]) == [b"two\n", b"one\n", b"two\n"]
    assert objects.cat_blobs(repo.path, []) == []
    with pytest.raises(GitError, match="answered .* commit for blob"):
        objects.cat_blobs(repo.path, [repo.git("rev-parse", "HEAD")])


def test_object_ids_answers_none_for_what_names_nothing(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD")
    names = ["HEAD^{commit}", "HEAD:a.txt", "HEAD:missing", "", "-p", "a\nb", "HEAD:dir/b c.txt"]
    found = objects.object_ids(repo.path, names)
    assert found[0] == head and found[1] == objects.hash_object(b"two\n")
    assert found[2:6] == [None] * 4
    assert found[6] == objects.hash_object(b"spaced\n")
    assert objects.object_ids(repo.path, ["", "-x"]) == [None, None]


def test_blobs_reads_rev_path_names_none_when_missing(repo: Repo) -> None:
    names = ["HEAD~1:a.txt", "HEAD:missing file", "HEAD:dir/b c.txt"]
    assert objects.blobs(repo.path, names) == [b"one\n", None, b"spaced\n"]
    assert objects.blobs(repo.path, []) == []


def test_outside_a_repository_every_read_fails_or_says_none(tmp_path: Path) -> None:
    assert objects.resolve(tmp_path, "HEAD") is None
    assert objects.show_file(tmp_path, "HEAD", "a.txt") is None
    with pytest.raises(UsageError, match="unknown revision"):
        objects.rev_parse(tmp_path, "HEAD")
    with pytest.raises(GitError, match="not a git repository"):
        objects.blobs(tmp_path, ["HEAD:a.txt"])
