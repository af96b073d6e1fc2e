"""Detached worktrees that are always removed, also on error and Ctrl-C."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fidelity import git

# `git worktree prune` deletes an empty .git/worktrees while a concurrent `worktree add`
# is creating its entry there; serialising add and remove within the process avoids it.
_admin = threading.Lock()


@dataclass(slots=True)
class Checkout:
    """A worktree's path; `removed` is set when the context exits."""

    path: Path
    removed: bool = False


def add(repo: Path, dest: Path, sha: str) -> None:
    """`git worktree add --detach`, serialised with every other add and remove."""
    with _admin:
        git.worktree_add(repo, dest, sha)


def remove(repo: Path, dest: Path) -> bool:
    """Remove a worktree and its record; True when neither is left."""
    with _admin:  # the listing too: another thread's half-made add would make it fail
        git.worktree_remove(repo, dest)
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)
            git.git(repo, "worktree", "prune", check=False)
        resolved = dest.resolve()
        listed = any(p.resolve() == resolved for p in git.worktree_list(repo))
    return not dest.exists() and not listed


@contextmanager
def detached(repo: Path, sha: str, role: str) -> Iterator[Checkout]:
    """Check sha out with `git worktree add --detach` in a fresh temporary directory."""
    base = Path(tempfile.mkdtemp(prefix=f"fidelity-{role}-"))
    checkout = Checkout(base / base.name)  # a unique name for git's admin entry too
    try:
        with _admin:
            git.worktree_add(repo, checkout.path, sha)
        yield checkout
    finally:
        checkout.removed = remove(repo, checkout.path)
        shutil.rmtree(base, ignore_errors=True)
