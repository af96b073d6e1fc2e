"""`.fidelity/` in the user's repository: run directories and logs, ignored by git."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import stat
from pathlib import Path
from typing import BinaryIO

from fidelity.errors import UsageError

ROOT = ".fidelity"
LIVE = ".live"  # in a run directory: locked while the process that writes it lives
_HELD: list[BinaryIO] = []


def fresh(repo: Path, kind: str, label: str) -> Path:
    """A new, empty `.fidelity/<kind>/<label>[-n]` directory (a `.gitignore` keeps it out),
    marked as fidelity's (`MADE`): what `fidelity gc` may remove."""
    root = folder(repo, kind)
    try:
        out, n = root / label, 1
        while not _made(out):  # another run of the same second and commits took it
            n += 1
            out = root / f"{label}-{n}"
        _mark(out, kind)
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


MADE = ".fidelity-made"  # in a folder fidelity made under .fidelity/: its record of that
_MADE_SCHEMA = "fidelity.made/1"


def _mark(out: Path, kind: str) -> None:
    record = {"schema": _MADE_SCHEMA, "kind": kind, "made": dt.datetime.now(dt.UTC).isoformat()}
    (out / MADE).write_text(json.dumps(record) + "\n")


def made(path: Path, kind: str) -> bool:
    """Whether fidelity's own record says it made path as a `kind` folder: path is a folder,
    not a link, holding a `MADE` file (not a link either) that `fresh` wrote."""
    try:
        if not stat.S_ISDIR(path.lstat().st_mode):
            return False
        marker = path / MADE
        if not stat.S_ISREG(marker.lstat().st_mode) or marker.lstat().st_size > 4096:
            return False
        record = json.loads(marker.read_bytes())
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("schema") == _MADE_SCHEMA
        and record.get("kind") == kind
    )


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
