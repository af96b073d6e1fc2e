"""A tree's files written into a plain folder (no `.git`, not a worktree) through a scratch
index, and what was changed in such a folder since.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fidelity.git.command import git
from fidelity.git.objects import cat_blobs
from fidelity.git.stage import under


def _names(out: bytes) -> list[str]:
    return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]


def tree_of(repo: Path, commit: str) -> str:
    """The id of commit's tree."""
    return git(repo, "rev-parse", "--verify", f"{commit}^{{tree}}").decode().strip()


def export(repo: Path, tree: str, dest: Path, index: Path, prefixes: Sequence[str] = ()) -> int:
    """Write the files of tree (those under prefixes, all without) into dest, which must
    exist; index is a scratch index file that records them. The number of files written."""
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", tree)
    entries = [
        e + b"\0"
        for e in listing.split(b"\0")
        if e and (not prefixes or under(e.partition(b"\t")[2], prefixes))
    ]
    entries = [e for e in entries if not e.startswith(b"160000")]  # submodules: not files
    index.unlink(missing_ok=True)
    git(repo, "update-index", "-z", "--index-info", stdin=b"".join(entries), index=index)
    git(repo, "checkout-index", "--all", "--force", "-u", f"--prefix={dest}/", index=index)
    return len(entries)


def links(repo: Path, tree: str, prefixes: Sequence[str] = ()) -> dict[str, str]:
    """Every symbolic link `export` would write (under prefixes, all without): its path ->
    its target, as committed."""
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", tree)
    found: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if meta.startswith(b"120000 ") and (not prefixes or under(path, prefixes)):
            found[path.decode(errors="surrogateescape")] = meta.split()[2].decode()
    targets = cat_blobs(repo, list(found.values()))
    return {p: t.decode(errors="surrogateescape") for p, t in zip(found, targets, strict=True)}


def changed_in(repo: Path, dest: Path, index: Path) -> list[str]:
    """Every path under dest that is not what `export` wrote there: modified, deleted, or
    added (ignored or not)."""
    out = git(repo, f"--work-tree={dest}", "ls-files", "-z", "-m", "-d", "-o", index=index)
    return sorted(set(_names(out)))


def refresh(repo: Path, dest: Path, index: Path) -> None:
    """Record dest's files' current stat data in index (after a chmod, say), so that
    `changed_in` hashes only the files that were touched since."""
    git(repo, f"--work-tree={dest}", "update-index", "-q", "--refresh", check=False, index=index)
