"""fidelity.git.patches on a real repository: the paths and diff between commits, patches
applied or checked (git's reason when they do not apply), git's three-way file merge; and a
user's textconv driver, which would rewrite the text the diff shows, is never run."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Repo, hostile_textconv

from fidelity.git import patches
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "1\n2\n3\n", "b.txt": "b\n"}, "base")
    repo.git("checkout", "-q", "-b", "side")
    repo.commit({"a.txt": "1\n2\nthree\n", "new.txt": "new\n"}, "side")
    repo.git("checkout", "-q", "main")
    repo.commit({"b.txt": "B\n"}, "main moves on")
    return repo


def test_changed_files_are_the_tips_own_since_the_merge_base(repo: Repo) -> None:
    assert patches.changed_files(repo.path, "main", "side") == ["a.txt", "new.txt"]
    assert patches.changed_files(repo.path, "side", "main") == ["b.txt"]
    with pytest.raises(GitError, match="failed in"):
        patches.changed_files(repo.path, "main", "nope")


def test_diff_text_and_the_patch_applied(repo: Repo, tmp_path: Path) -> None:
    diff = patches.diff_text(repo.path, "main", "side", ["a.txt"])
    assert "-3\n+three\n" in diff and "new.txt" not in diff
    patch = diff.encode()
    assert patches.patch_applies(repo.path, repo.git("rev-parse", "main"), patch, tmp_path) == ""
    assert patches.apply_check(repo.path, patch) == ""
    assert patches.apply_patch(repo.path, patch) == ""
    assert (repo.path / "a.txt").read_text() == "1\n2\nthree\n"
    assert "patch does not apply" in patches.apply_check(repo.path, patch)
    assert "patch does not apply" in patches.apply_patch(repo.path, patch)
    side = repo.git("rev-parse", "side")
    assert "patch does not apply" in patches.patch_applies(repo.path, side, patch, tmp_path)
    assert repo.git("status", "--porcelain") == "M a.txt", "only apply_patch wrote"


def test_a_users_textconv_driver_is_not_run(repo: Repo, tmp_path: Path) -> None:
    marker = hostile_textconv(repo, tmp_path)
    diff = patches.diff_text(repo.path, "main", "side", ["a.txt"])
    assert "-3\n+three\n" in diff and not marker.exists()


def test_merge_file_counts_conflicts_and_writes_nothing(tmp_path: Path) -> None:
    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text("a\nb\nc\n")
    ours.write_text("A\nb\nc\n")
    theirs.write_text("a\nb\nC\n")
    labels = ("ours", "base", "theirs")
    assert patches.merge_file(tmp_path, ours, base, theirs, labels) == (b"A\nb\nC\n", 0)
    theirs.write_text("a2\nb\nc\n")
    merged, conflicts = patches.merge_file(tmp_path, ours, base, theirs, labels, marker_size=9)
    assert conflicts == 1 and b"<<<<<<<<< ours\n" in merged and b">>>>>>>>> theirs\n" in merged
    assert ours.read_text() == "A\nb\nc\n"
    with pytest.raises(GitError, match="git merge-file failed in"):
        patches.merge_file(tmp_path, tmp_path / "missing", base, theirs, labels)
