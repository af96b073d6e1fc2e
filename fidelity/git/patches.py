"""Diffs and patches: the paths and the unified diff between two commits, a patch applied to
one of our own worktrees or checked against files or a tree, git's three-way file merge.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fidelity.git.command import GitError, attempt, git, reason


def changed_files(repo: Path, base: str, tip: str) -> list[str]:
    """Paths the change from the merge base of base and tip to tip touches."""
    out = git(
        repo, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", f"{base}...{tip}", "--"
    )
    return sorted(p.decode(errors="surrogateescape") for p in out.split(b"\0") if p)


def diff_text(repo: Path, old: str, new: str, paths: Sequence[str] = ()) -> str:
    """The unified diff (3 lines of context) that turns old into new, text files only; as
    committed (a user's textconv driver would run a program and rewrite both sides)."""
    flags = ("--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", "-U3")
    out = git(repo, "diff", *flags, old, new, "--", *paths)
    return out.decode("utf-8", errors="surrogateescape")


def apply_patch(worktree: Path, patch: bytes) -> str:
    """Apply a unified diff to one of our own worktrees; '' on success, else git's reason."""
    return reason(attempt(worktree, "apply", "--whitespace=nowarn", "-", stdin=patch), "git apply")


def apply_check(cwd: Path, patch: bytes) -> str:
    """'' when the unified diff would apply to the files under cwd, else git's reason; nothing
    is written."""
    result = attempt(cwd, "apply", "--check", "--whitespace=nowarn", "-", stdin=patch)
    return reason(result, "git apply")


def patch_applies(repo: Path, sha: str, patch: bytes, scratch: Path) -> str:
    """'' when patch applies to the tree of sha (checked in a scratch index), else why not."""
    index = scratch / "check-index"
    git(repo, "read-tree", sha, index=index)
    args = ("apply", "--cached", "--check", "--whitespace=nowarn", "-")
    return reason(attempt(repo, *args, stdin=patch, index=index), "git apply")


def merge_file(
    cwd: Path, ours: Path, base: Path, theirs: Path, labels: Sequence[str], *, marker_size: int = 7
) -> tuple[bytes, int]:
    """git's own three-way merge of three files: (result, number of conflicts); nothing is
    written."""
    result = attempt(
        cwd,
        "merge-file",
        "-p",
        f"--marker-size={marker_size}",
        *(arg for label in labels for arg in ("-L", label)),
        str(ours),
        str(base),
        str(theirs),
    )
    code = result.returncode
    if code is None or not 0 <= code < 128:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git merge-file failed in {cwd}: {msg}")
    return result.stdout, code
