"""fidelity.git.gitdir on real repositories: the shared directory seen from a linked worktree,
refs, the files a waiting merge keeps, where hooks live, the repository's own config and
git's aliases."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Repo

from fidelity.git import gitdir
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "a\n"}, "first")
    return repo


def test_common_dir_and_refs_from_a_linked_worktree(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(linked))
    assert gitdir.common_dir(linked) == repo.path / ".git"
    sha = repo.git("rev-parse", "HEAD")
    assert gitdir.refs(linked) == {"refs/heads/main": sha, "refs/heads/side": sha}
    with pytest.raises(GitError):
        gitdir.common_dir(tmp_path)


def test_merge_state_files_while_a_merge_waits(repo: Repo) -> None:
    assert gitdir.merge_heads(repo.path) == []
    assert gitdir.state_files(repo.path, ["MERGE_HEAD", "SQUASH_MSG"]) == {
        "MERGE_HEAD": "",
        "SQUASH_MSG": "",
    }
    repo.git("checkout", "-q", "-b", "side")
    theirs = repo.commit({"a.txt": "side\n"}, "side")
    repo.git("checkout", "-q", "main")
    repo.commit({"a.txt": "main\n"}, "main")
    repo.git("merge", "-q", "--no-commit", "side", "-s", "ours")
    assert gitdir.merge_heads(repo.path) == [theirs]
    assert "Merge branch 'side'" in gitdir.state_files(repo.path, ["MERGE_MSG"])["MERGE_MSG"]


def test_hooks_dir_follows_the_users_hooks_path(repo: Repo, tmp_path: Path) -> None:
    assert gitdir.hooks_dir(repo.path) == repo.path / ".git" / "hooks"
    gitdir.set_config_local(repo.path, "core.hooksPath", str(tmp_path / "mine"))
    assert gitdir.hooks_dir(repo.path) == tmp_path / "mine"
    with pytest.raises(GitError, match="--git-path hooks failed"):
        gitdir.hooks_dir(tmp_path / "no-such-folder")


def test_local_config_written_read_and_its_section_removed(repo: Repo) -> None:
    assert gitdir.config_local(repo.path, "merge.fidelity-records.driver") is None
    gitdir.set_config_local(repo.path, "merge.fidelity-records.driver", "fidelity %O %A %B")
    gitdir.set_config_local(repo.path, "merge.fidelity-records.name", "records")
    assert gitdir.config_local(repo.path, "merge.fidelity-records.driver") == "fidelity %O %A %B"
    gitdir.unset_config_section(repo.path, "merge.fidelity-records")
    assert gitdir.config_local(repo.path, "merge.fidelity-records.name") is None
    with pytest.raises(GitError, match="remove-section"):
        gitdir.unset_config_section(repo.path, "merge.fidelity-records")


def test_aliases_are_read_lower_case(repo: Repo, tmp_path: Path) -> None:
    gitdir.set_config_local(repo.path, "alias.CI", "commit -a")
    assert gitdir.aliases(repo.path)["ci"] == "commit -a"
    assert gitdir.aliases(tmp_path / "no-such-folder") == {}
