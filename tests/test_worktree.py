"""Detached worktrees: always removed, and safe to add and remove from several threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import Repo

from fidelity import worktree


def test_removed_after_an_error(sim_repo: Repo) -> None:
    sha = sim_repo.git("rev-parse", "HEAD")
    with pytest.raises(RuntimeError), worktree.detached(sim_repo.path, sha, "t") as checkout:
        assert (checkout.path / "prog.py").is_file()
        raise RuntimeError("boom")
    assert checkout.removed and not checkout.path.exists()
    assert sim_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_concurrent_add_and_remove_do_not_race(sim_repo: Repo) -> None:
    sha = sim_repo.git("rev-parse", "HEAD")

    def cycle(i: int) -> Path:
        with worktree.detached(sim_repo.path, sha, f"t{i}") as checkout:
            assert (checkout.path / "value.txt").read_text() == "one\n"
        assert checkout.removed
        return checkout.path

    with ThreadPoolExecutor(max_workers=2) as pool:
        paths = list(pool.map(cycle, range(40)))
    assert len(set(paths)) == 40 and not any(p.exists() for p in paths)
    assert sim_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
