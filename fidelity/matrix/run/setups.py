"""A side's set-up worktree, kept and reused while its commit and its setup are the same.

A simulator's setup (`pip install -e .` into the side's venv, a build) can take minutes.
With `reuse_setup = true` each side's worktree is kept under `.fidelity/setups/`, named by
its commit and a hash of everything that decides what setup produces (commands, venv,
environment, interpreter). Before a reuse it is verified: HEAD at the commit, nothing
staged, no tracked file changed, and every file and folder setup left (recorded right after
it) as it was; anything else a previous run's cases left in it, folders too, is removed. If
any check fails, or another run holds it, a fresh worktree is set up instead, and the run
says which it did.

A kept worktree is added locked in git with fidelity's reason (`worktree.KEPT`): that lock
is fidelity's record that it made it. Only such a worktree (no link, and listed by this
repository's git at exactly its place) is reused, set up again or removed; anything else
at the place (a link, another repository's worktree, a plain folder, the user's own
worktree or lock) is left alone, and the side runs in a fresh worktree that says why. One
an older fidelity kept unlocked (its setup record beside it) is adopted when reused.

A run holds a kept worktree by an exclusive `flock` on `<name>.lock` beside it from its
side's start until the run ends (`holding`; the lock's mtime marks its last use);
`fidelity gc` takes the same lock before it removes one, so it never removes a set-up
a live run holds.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import hashlib
import json
import os
import shutil
import stat
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fidelity import workdir, worktree
from fidelity.git import worktrees
from fidelity.matrix.cases.table import Matrix
from fidelity.matrix.run import repo_state


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
            manifest = _manifest(self.path)
            manifest.unlink(missing_ok=True)  # never written through a link put there
            left = {"files": _untracked(self.path), "folders": _folders(self.path)}
            manifest.write_text(json.dumps(left, sort_keys=True))


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


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _lock(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _untracked(wt: Path) -> dict[str, str]:
    return {
        path: repo_state.stat_of(wt, path)
        for code, path in worktrees.status_entries(wt)
        if code == "??"
    }


def _folders(wt: Path) -> list[str]:
    """Every folder of the worktree (not followed through links; .git and __pycache__
    aside): git's status lists files only, so a folder a case made would outlive them."""
    found = []
    for top, dirs, _ in os.walk(wt):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        found += [os.path.relpath(os.path.join(top, d), wt) for d in dirs]
    return sorted(found)


def _recorded(wt: Path) -> tuple[dict[str, str], set[str]] | None:
    """What setup left (files with their stat, folders), or None without a readable record
    (one an older fidelity wrote holds files only: set up afresh, then recorded whole)."""
    try:
        left = json.loads(_manifest(wt).read_text())
        return dict(left["files"]), set(left["folders"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _clean(wt: Path, sha: str) -> str:
    """Why a kept worktree is not as its setup left it (after removing what cases added)."""
    if worktrees.head_state(wt).split(" ", 1)[0] != sha:
        return "its HEAD moved"
    worktrees.refresh_index(wt)
    if worktrees.status_entries(wt, untracked=False):
        return "tracked files were changed or staged"
    if (left := _recorded(wt)) is None:
        return "no record of what its setup left"
    recorded, folders = left
    present = _untracked(wt)
    for path in sorted(set(present) - set(recorded)):  # a previous run's cases wrote it
        target = wt / path
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
    now = _folders(wt)
    for path in now:  # parents first: a folder made by cases goes with what it holds
        if path not in folders and (wt / path).is_dir():
            shutil.rmtree(wt / path, ignore_errors=True)
    changed = [p for p, st in recorded.items() if present.get(p) != st]
    changed += sorted(folders - set(now))
    return f"what setup left has changed ({', '.join(changed[:3])})" if changed else ""


@contextlib.contextmanager
def prepared(
    repo: Path,
    sha: str,
    role: str,
    matrix: Matrix,
    harness_tree: str = "",
    *,
    hold: Holds | None = None,
) -> Iterator[Place]:
    """The side's worktree: a fresh one (removed afterwards), or a kept set-up one, whose
    lock stays taken until `hold` closes (the run's end) when one is given."""
    if not matrix.reuse_setup:
        with worktree.detached(repo, sha, role) as checkout:
            place = Place(checkout.path)
            yield place
        place.removed = checkout.removed
        return
    root = workdir.folder(repo, KIND)
    path = root / f"{sha[:12]}-{setup_key(sha, matrix, harness_tree)[:12]}"
    with contextlib.ExitStack() as own:
        taken = locked(_lock(path), mark=True)
        mine = hold.enter(taken) if hold else own.enter_context(taken)
        ours, why = _take(repo, path, sha) if mine else (False, "another side or run holds it")
        if ours:
            yield Place(path, keep=True, reused=not why, why_not=why, removed=False)
            return
        with worktree.detached(repo, sha, role) as checkout:
            place = Place(checkout.path, why_not=f"the kept set-up {path}: {why}")
            yield place
        place.removed = checkout.removed


def _take(repo: Path, path: Path, sha: str) -> tuple[bool, str]:
    """Make path the side's kept set-up: (True, "") when it can be reused as it is, (True,
    why) when it was set up again, (False, why) when what is there is not fidelity's."""
    os.utime(_lock(path), follow_symlinks=False)  # its last use, which gc keeps it by
    entry = kept_entries(repo, path.parent).get(real(path))
    claim = claim_of(path, entry)
    older = claim is Claim.UNLOCKED and _regular(_manifest(path)) and entry is not None
    if older and entry is not None and worktree.adopt_kept(repo, entry.path):
        claim = Claim.OURS  # made unlocked by an older fidelity: adopted
    if claim not in (Claim.OURS, Claim.ABSENT):
        return False, claim_words(claim, path, entry)
    why_not = _clean(path, sha) if claim is Claim.OURS and path.is_dir() else "not set up before"
    if why_not and entry is not None:
        worktree.remove_kept(repo, entry.path)
        _manifest(path).unlink(missing_ok=True)
    if why_not:
        worktree.add_kept(repo, path, sha)
    return True, why_not


class Claim(enum.Enum):
    """What is at a kept set-up's place, as fidelity's own record (git's lock) says."""

    OURS = "locked in git by fidelity"
    ABSENT = "nothing there"
    LINK = "a link"
    FOREIGN = "not a worktree of this repository"
    UNLOCKED = "a worktree of this repository not locked by fidelity"
    LOCKED = "locked in git by someone else"


def claim_of(path: Path, entry: worktrees.WorktreeEntry | None) -> Claim:
    """Whose the thing at path is: fidelity's only when it is no link, and git lists it as
    a worktree of this repository at exactly that place, locked with fidelity's `KEPT`."""
    if path.is_symlink():
        return Claim.LINK
    if entry is None:
        return Claim.FOREIGN if os.path.lexists(path) else Claim.ABSENT
    if entry.locked is None:
        return Claim.UNLOCKED
    return Claim.OURS if entry.locked == worktree.KEPT else Claim.LOCKED


def claim_words(claim: Claim, path: Path, entry: worktrees.WorktreeEntry | None) -> str:
    """What fidelity leaves and why, and what the user can do about it."""
    if claim is Claim.LINK:
        return "a link, not fidelity's: left (gc never removes through a link)"
    if claim is Claim.FOREIGN:
        return "not a worktree of this repository: left (fidelity removes only what it made)"
    if claim is Claim.UNLOCKED:
        return (
            "a worktree of this repository not locked by fidelity (made by hand, or by a "
            "fidelity older than its lock record): left; a run that reuses it adopts it, "
            f"`git worktree remove --force {path}` removes it"
        )
    if claim is Claim.LOCKED:
        reason = entry.locked if entry is not None else ""
        return (
            f"locked in git ({reason}), not by fidelity: left; it is yours to remove "
            f"(`git worktree unlock {path}`, then `git worktree remove --force {path}`)"
        )
    return str(claim.value)


def real(path: Path) -> Path:
    """path with its folder's links resolved, not its own: where git records a worktree
    added there (loop-safe, unlike `Path.resolve`)."""
    return Path(os.path.realpath(path.parent)) / path.name


def kept_entries(repo: Path, root: Path) -> dict[Path, worktrees.WorktreeEntry]:
    """The worktrees of repo that git records directly under root (by git's path)."""
    where = Path(os.path.realpath(root))
    return {e.path: e for e in worktrees.worktree_entries(repo) if e.path.parent == where}


class Holds:
    """The kept set-ups a run holds until it ends (issue 34: `fidelity gc` removed one as
    soon as its side was done, and the run then reported a worktree that was gone)."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._guard = threading.Lock()  # both sides enter theirs from their own threads

    def enter(self, held: contextlib.AbstractContextManager[bool]) -> bool:
        with self._guard:
            return self._stack.enter_context(held)

    def close(self) -> None:
        with self._guard:
            self._stack.close()


@contextlib.contextmanager
def holding() -> Iterator[Holds]:
    """Hold, until the block ends, every kept set-up lock taken under it."""
    holds = Holds()
    try:
        yield holds
    finally:
        holds.close()


LOCK_TEXT = b"fidelity: a run using this kept set-up holds a flock on this file\n"


@contextlib.contextmanager
def locked(lock: Path, mark: bool = False) -> Iterator[bool]:
    """Hold lock exclusively if no one else does (yield True), else yield False at once;
    False too when lock is a link (never followed) or cannot be opened. With mark (a run),
    a lock file it makes says whose it is (`LOCK_TEXT`), which lets gc remove it once its
    worktree is gone."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(lock, flags, 0o644)  # append: opening it must not mark a use
    except OSError:
        yield False
        return
    with os.fdopen(fd, "ab") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            if mark and os.fstat(fd).st_size == 0:
                handle.write(LOCK_TEXT)
                handle.flush()
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def marked(lock: Path) -> bool:
    """Whether lock is a run's lock file (a regular file holding `LOCK_TEXT`)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        return handle.read(len(LOCK_TEXT) + 1) == LOCK_TEXT
