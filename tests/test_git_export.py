"""fidelity.git.export on a real repository: a tree's files written into a plain folder through
a scratch index (under prefixes, symbolic links as committed), and what was changed there
since."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import Repo

from fidelity.git import export
from fidelity.git.command import GitError


@pytest.fixture
def repo(make_repo) -> Repo:
    repo = make_repo("r")
    os.symlink("../top.txt", repo.path / "link")
    repo.commit({"top.txt": "t\n", "pkg/m.py": "m\n", "pkg/sub/n.py": "n\n", "doc/x.md": "x\n"})
    os.symlink("m.py", repo.path / "pkg" / "alias.py")
    repo.commit(message="a link")
    return repo


def test_export_writes_a_plain_folder(repo: Repo, tmp_path: Path) -> None:
    tree = export.tree_of(repo.path, "HEAD")
    assert tree == repo.git("rev-parse", "HEAD^{tree}")
    dest, index = tmp_path / "dest", tmp_path / "index"
    dest.mkdir()
    assert export.export(repo.path, tree, dest, index, ["pkg"]) == 3
    written = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_dir())
    assert written == ["pkg/alias.py", "pkg/m.py", "pkg/sub/n.py"]
    assert os.readlink(dest / "pkg" / "alias.py") == "m.py" and not (dest / ".git").exists()
    assert export.export(repo.path, tree, dest, index) == 6, "without prefixes, everything"
    assert repo.git("status", "--porcelain") == "", "the repository's own index untouched"


def test_links_as_committed(repo: Repo) -> None:
    tree = export.tree_of(repo.path, "HEAD")
    assert export.links(repo.path, tree) == {"link": "../top.txt", "pkg/alias.py": "m.py"}
    assert export.links(repo.path, tree, ["pkg"]) == {"pkg/alias.py": "m.py"}
    assert export.links(repo.path, tree, ["doc"]) == {}


def test_changed_in_names_what_was_touched_since(repo: Repo, tmp_path: Path) -> None:
    tree = export.tree_of(repo.path, "HEAD")
    dest, index = tmp_path / "dest", tmp_path / "index"
    dest.mkdir()
    export.export(repo.path, tree, dest, index)
    assert export.changed_in(repo.path, dest, index) == []
    (dest / "top.txt").write_text("changed\n")
    (dest / "doc" / "x.md").unlink()
    (dest / "pkg" / "new.py").write_text("")
    (dest / "pkg" / "m.py").chmod(0o755)
    export.refresh(repo.path, dest, index)
    assert export.changed_in(repo.path, dest, index) == [
        "doc/x.md",
        "pkg/m.py",
        "pkg/new.py",
        "top.txt",
    ]


def test_an_unknown_commit_is_a_git_error(repo: Repo) -> None:
    with pytest.raises(GitError, match="rev-parse --verify nope"):
        export.tree_of(repo.path, "nope")
