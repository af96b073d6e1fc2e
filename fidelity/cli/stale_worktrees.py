"""Before a command makes worktrees: remove the ones killed runs left, and say so."""

from __future__ import annotations

from pathlib import Path


def prune(repo: Path, quiet: bool) -> None:
    """Remove worktrees whose fidelity run is gone; one line each on standard error (rich
    is imported only then: a run that finds none must not pay for it)."""
    from fidelity import worktree

    found = worktree.prune_stale(repo)
    if not found:
        return
    from rich.console import Console

    err = Console(stderr=True, highlight=False, no_color=quiet, soft_wrap=True)
    for stale in found:
        err.print(f"fidelity: {stale.line()}", markup=False)
