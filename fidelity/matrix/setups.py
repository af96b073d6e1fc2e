"""A side's set-up worktree, kept and reused while its commit and its setup are the same.

A simulator's setup (`pip install -e .` into the side's venv, a build) can take minutes.
With `reuse_setup = true` each side's worktree is kept under `.fidelity/setups/`, named by
its commit and a hash of everything that decides what setup produces (commands, venv,
environment, interpreter). Before a reuse it is verified: HEAD at the commit, nothing
staged, no tracked file changed, and every file setup left (recorded right after it) as it
was; anything else a previous run's cases left in it is removed. If any check fails, or
another run holds it, a fresh worktree is set up instead, and the run says which it did.

A run holds a kept worktree by an exclusive `flock` on `<name>.lock` beside it (its mtime
marks its last use); `fidelity gc` takes the same lock before it removes one, so it
never removes a set-up worktree a live run is using.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fidelity import workdir, worktree
from fidelity.git import worktrees
from fidelity.matrix import repo_state
from fidelity.matrix.table import Matrix


@dataclass(slots=True)
class Place:
    """Where a side runs; `keep` when it is a reusable setup, `reused` when set up before."""

    path: Path
    keep: bool = False
    reused: bool = False
    why_not: str = ""  # why a kept setup could not be reused (said in the run)
    removed: bool = True

    def record(self) -> None:
        """After a setup that succeeded: what it left, to check the next reuse against."""
        if self.keep:
            _manifest(self.path).write_text(json.dumps(_untracked(self.path), sort_keys=True))


def setup_key(sha: str, matrix: Matrix, harness_tree: str = "") -> str:
    """What decides what setup produces; the harness's tree only when setup reads it."""
    decided = {
        "sha": sha,
        "setup": [c if isinstance(c, str) else list(c) for c in matrix.setup],
        "venv": matrix.venv,
        "env": dict(sorted(matrix.env.items())),
        "python": matrix.python,
        "interpreter": sys.executable,
    }
    if harness_tree:
        decided["harness"] = harness_tree
    return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()


KIND = "setups"  # the folder under .fidelity/ that holds the kept worktrees


def _manifest(path: Path) -> Path:
    return path.with_name(path.name + ".setup.json")


def companions(path: Path) -> tuple[Path, Path]:
    """The files kept beside a set-up worktree: its setup record and its lock."""
    return _manifest(path), _lock(path)


def _lock(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _untracked(wt: Path) -> dict[str, str]:
    return {
        path: repo_state.stat_of(wt, path)
        for code, path in worktrees.status_entries(wt)
        if code == "??"
    }


def _clean(wt: Path, sha: str) -> str:
    """Why a kept worktree is not as its setup left it (after removing what cases added)."""
    if worktrees.head_state(wt).split(" ", 1)[0] != sha:
        return "its HEAD moved"
    worktrees.refresh_index(wt)
    if worktrees.status_entries(wt, untracked=False):
        return "tracked files were changed or staged"
    try:
        recorded = json.loads(_manifest(wt).read_text())
    except (OSError, ValueError):
        return "no record of what its setup left"
    present = _untracked(wt)
    for path in sorted(set(present) - set(recorded)):  # a previous run's cases wrote it
        target = wt / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
    changed = [p for p, st in recorded.items() if present.get(p) != st]
    return f"what setup left has changed ({', '.join(changed[:3])})" if changed else ""


@contextlib.contextmanager
def prepared(
    repo: Path, sha: str, role: str, matrix: Matrix, harness_tree: str = ""
) -> Iterator[Place]:
    """The side's worktree: a fresh one (removed afterwards), or a kept set-up one."""
    if not matrix.reuse_setup:
        with worktree.detached(repo, sha, role) as checkout:
            place = Place(checkout.path)
            yield place
        place.removed = checkout.removed
        return
    root = workdir.folder(repo, KIND)
    path = root / f"{sha[:12]}-{setup_key(sha, matrix, harness_tree)[:12]}"
    with locked(_lock(path)) as mine:
        if not mine:
            with worktree.detached(repo, sha, role) as checkout:
                place = Place(checkout.path, why_not="another run is using the kept setup")
                yield place
            place.removed = checkout.removed
            return
        os.utime(_lock(path))  # its last use, which `fidelity gc` keeps it by
        why_not = _clean(path, sha) if path.is_dir() else "not set up before"
        if why_not and path.exists():
            worktree.remove(repo, path)
            _manifest(path).unlink(missing_ok=True)
        if why_not:
            worktree.add(repo, path, sha)
        yield Place(path, keep=True, reused=not why_not, why_not=why_not, removed=False)


@contextlib.contextmanager
def locked(lock: Path) -> Iterator[bool]:
    """Hold lock exclusively if no one else does (yield True), else yield False at once."""
    with lock.open("a") as handle:  # "a": opening it must not mark a use
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
