"""Removing a folder fidelity made under `.fidelity/`, and measuring it, never through a
link: sizes and walks do not follow links, read-only folders (a package manager's) are
made writable first so that a removal does not stop half-way, and a run directory's
records go last so that a removal that fails half-way leaves a folder gc still knows."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from fidelity import workdir
from fidelity.matrix.run import ledger


def listing(root: Path) -> list[Path]:
    """What is in root; nothing when it cannot be listed (gone, a link loop)."""
    try:
        return list(root.iterdir())
    except OSError:
        return []


def delete_run(folder: Path) -> None:
    """Remove a run directory, its records last (run.json, plan.json, the marker): a removal
    that fails half-way leaves a folder the next gc still knows for a run."""
    markers = {"run.json", ledger.PLAN, workdir.MADE}
    if folder.is_symlink():  # gc never removes through a link
        return
    for child in listing(folder):
        if child.name in markers:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    if any(c.name not in markers for c in listing(folder)):
        return
    with contextlib.suppress(OSError):
        for name in markers:
            (folder / name).unlink(missing_ok=True)
        folder.rmdir()


def mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def size(path: Path) -> int:
    """Bytes on disk of path and under it, links not followed (what removing it frees)."""
    try:
        total = path.lstat().st_blocks * 512
    except OSError:
        return 0
    if path.is_symlink():
        return total
    for entry in walk(path):
        with contextlib.suppress(OSError):
            total += entry.stat(follow_symlinks=False).st_blocks * 512
    return total


def walk(path: Path) -> Iterator[os.DirEntry[str]]:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        yield entry
        if entry.is_dir(follow_symlinks=False):
            yield from walk(Path(entry.path))


def writable(root: Path) -> None:
    """Give the owner write access to every folder under root (links not followed), so that
    read-only folders a package manager left do not stop a removal half-way."""

    def allow(path: str) -> None:
        with contextlib.suppress(OSError):
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                os.chmod(path, stat.S_IMODE(mode) | stat.S_IRWXU)

    if os.path.islink(root):
        return
    allow(str(root))
    for top, folders, _ in os.walk(root):
        for name in folders:
            allow(os.path.join(top, name))
