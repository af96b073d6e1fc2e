"""fidelity.git.message on a real repository: the trailer settings a commit there would read,
those that would run a program, and a message with `--trailer` values added as
`git commit --trailer` adds them (an alias expanded), no trailer command run."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Repo

from fidelity.git import message
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    repo.commit({"a.txt": "a\n"}, "first")
    repo.git("config", "trailer.dnm.key", "Do-Not-Merge")
    return repo


def test_trailer_config_reads_the_repository_and_the_command_line(repo: Repo) -> None:
    config = message.trailer_config(repo.path, ["trailer.ifexists=replace"], {})
    assert ("trailer.dnm.key", "Do-Not-Merge") in config
    assert config[-1] == ("trailer.ifexists", "replace"), "the command line comes last"
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "trailer.sign.key"}
    env["GIT_CONFIG_VALUE_0"] = "Signed-off-by"
    assert ("trailer.sign.key", "Signed-off-by") in message.trailer_config(repo.path, [], env)


def test_no_trailer_settings_is_an_empty_list(make_repo, tmp_path: Path) -> None:
    bare = make_repo("bare")
    home = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}  # no user's config
    assert message.trailer_config(bare.path, [], home) == []
    with pytest.raises(GitError, match="could not read the trailer settings"):
        message.trailer_config(tmp_path / "no-such-folder", [], home)


def test_trailers_added_as_git_commit_adds_them_without_running_commands(
    repo: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    config = [
        *message.trailer_config(repo.path, [], {}),
        ("trailer.stamp.cmd", f"touch {marker}; echo stamped"),
    ]
    assert message.runs_commands(config) == ["trailer.stamp.cmd"]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    text = message.with_trailers("subject\n\nbody\n", ["dnm: yes"], config, scratch)
    assert text == "subject\n\nbody\n\nDo-Not-Merge: yes\n"
    assert not marker.exists()


def test_git_that_cannot_run_is_a_git_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"could not add \['a: b'\]"):
        message.with_trailers("s\n", ["a: b"], [], tmp_path / "no-such-folder")
