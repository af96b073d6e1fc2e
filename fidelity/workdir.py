"""`.fidelity/` in the user's repository: run directories and logs, ignored by git."""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import BinaryIO

from fidelity.errors import UsageError

ROOT = ".fidelity"
LIVE = ".live"  # in a run directory: locked while the process that writes it lives
_HELD: list[BinaryIO] = []


def fresh(repo: Path, kind: str, label: str) -> Path:
    """A new, empty `.fidelity/<kind>/<label>[-n]` directory (a `.gitignore` keeps it out)."""
    root = repo / ROOT
    try:
        root.mkdir(exist_ok=True)
        ignore = root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# fidelity's run directories; never committed\n*\n")
        (root / kind).mkdir(exist_ok=True)
        out, n = root / kind / label, 1
        while not _made(out):  # another run of the same second and commits took it
            n += 1
            out = root / kind / f"{label}-{n}"
    except OSError as exc:
        raise UsageError(
            f"cannot make a folder under {root}: {exc.strerror or exc}; fidelity keeps its runs "
            f"there (it must be a writable directory), or pass --out DIR"
        ) from exc
    return out


def _made(path: Path) -> bool:
    """mkdir path; False when it exists (no check-then-make: two runs at once)."""
    try:
        path.mkdir()
    except FileExistsError:
        return False
    return True


def folder(repo: Path, kind: str) -> Path:
    """`.fidelity/<kind>/`, made if need be (for what outlives one run)."""
    fresh_root = repo / ROOT
    try:
        fresh_root.mkdir(exist_ok=True)
        ignore = fresh_root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# fidelity's run directories; never committed\n*\n")
        (fresh_root / kind).mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot make a folder under {fresh_root}: {exc.strerror or exc}; it must be a "
            "writable directory"
        ) from exc
    return fresh_root / kind


def cache(repo: Path, name: str) -> Path:
    """`.fidelity/cache/<name>`, made if need be (kept between runs; safe to delete)."""
    out = folder(repo, "cache") / name
    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make {out}: {exc.strerror or exc}") from exc
    return out


def hold(folder: Path) -> None:
    """Mark a run directory as in use for as long as this process lives, so that `fidelity
    gc` leaves it alone: a shared lock on its `.live` file, which the kernel releases when
    the process ends, killed or not (no stale marker to clean up)."""
    handle = (folder / LIVE).open("wb")
    fcntl.flock(handle, fcntl.LOCK_SH)
    _HELD.append(handle)


def busy(folder: Path) -> bool:
    """Whether a live process holds the run directory (`hold`)."""
    try:
        handle = (folder / LIVE).open("rb")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False
