"""Detached worktrees that are always removed, also on error and Ctrl-C, and found again when
a run was killed before it could remove them.

Each worktree is added locked, with a reason naming its owner (`fidelity pid=... started=...
host=...`): `git worktree prune` then leaves a live run's worktree alone, and a later run
tells a live owner from a dead one by the pid and that process's start time (a reused pid
has another start time). `prune_stale` removes the worktrees whose owner is gone and says
which; it never touches one whose owner is alive or runs on another host.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fidelity.git import command, gitdir, worktrees

# git's worktree administration is not safe against itself: a `git worktree add`, `remove`
# or `list` reads every worktree's record, and dies on one another process is writing at
# that moment ("failed to read .git/worktrees/X/commondir", "Invalid path
# '.git/worktrees/X'"); `prune` deletes an empty .git/worktrees while an add is creating
# its entry there. Measured: 8 processes adding, listing and removing at once in one
# repository failed 162 of 1,440 commands. So every add, remove, prune and list fidelity
# makes holds `_admin` (threads of this process) and then an exclusive flock on the
# repository's common git directory (every fidelity process in the repository: the shards
# of an array, two arrays, a run beside `gc`). The Ctrl-C cleanup holds `_admin` too while
# it kills processes, so that it never kills the `git worktree add/remove` of a worker.
_admin = threading.Lock()
_open: set[Path] = set()
_PREFIX = "fidelity pid="


@dataclass(slots=True)
class Checkout:
    """A worktree's path; `removed` is set when the context exits."""

    path: Path
    removed: bool = False


@dataclass(frozen=True, slots=True)
class Owner:
    """The process that made a worktree, as written into its lock reason."""

    pid: int
    started: str
    host: str

    def reason(self) -> str:
        return f"{_PREFIX}{self.pid} started={self.started} host={self.host}"

    @staticmethod
    def parse(reason: str | None) -> Owner | None:
        """The owner named by a lock reason, or None when fidelity did not write it."""
        if not reason or not reason.startswith(_PREFIX):
            return None
        fields = dict(p.partition("=")[::2] for p in reason[len("fidelity ") :].split())
        if not fields.get("pid", "").isdigit():
            return None
        return Owner(int(fields["pid"]), fields.get("started", ""), fields.get("host", ""))


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), '' where unknown, None if
    there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]  # field 22; the name before may hold spaces


def me() -> Owner:
    pid = os.getpid()
    return Owner(pid, _start_time(pid) or "", os.uname().nodename)


def owner_alive(owner: Owner) -> bool | None:
    """True or False for an owner on this host; None (unknown) for another host's."""
    if owner.host != os.uname().nodename:
        return None
    started = _start_time(owner.pid)
    if started is None:
        return False
    if started == "" or owner.started == "":  # no /proc: the pid alone has to do
        try:
            os.kill(owner.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return started == owner.started


@functools.lru_cache(maxsize=32)
def _common_dir(repo: Path) -> Path:
    """The git directory every worktree of repo shares: its `.git` folder when repo is a
    main work tree's top (no git process), else as git says."""
    dotgit = repo / ".git"
    return dotgit.resolve() if dotgit.is_dir() else gitdir.common_dir(repo)


@contextlib.contextmanager
def _administering(repo: Path) -> Iterator[None]:
    """Hold while adding, removing, pruning or listing repo's worktrees (see `_admin`)."""
    with _admin:
        fd = os.open(_common_dir(repo), os.O_RDONLY | os.O_DIRECTORY)
        try:  # blocking: each holder's git commands end by their own timeouts
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _listed(repo: Path, dest: Path) -> bool:
    resolved = dest.resolve()
    return any(e.path.resolve() == resolved for e in worktrees.worktree_entries(repo))


def _remove_locked(repo: Path, dest: Path) -> bool:
    """Remove one worktree (locked or not) and its record; call inside `_administering`."""
    worktrees.worktree_remove(repo, dest)
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)
    try:
        if not _listed(repo, dest):
            return not dest.exists()
        worktrees.worktree_unlock(repo, dest)  # prune keeps a locked record
        command.git(repo, "worktree", "prune", check=False)
        return not dest.exists() and not _listed(repo, dest)
    except command.GitError:
        return False


KEPT = "fidelity kept set-up (reuse_setup); `fidelity gc` removes it once unused"


def add_kept(repo: Path, dest: Path, sha: str) -> None:
    """`git worktree add --detach --lock` for a worktree kept on purpose across runs (the
    matrix's set-up worktrees), serialised with every other add and remove. Its lock
    reason `KEPT` is fidelity's record that it made it (what `fidelity gc` checks before it
    removes one); `prune_stale` never touches it (no owner pid)."""
    with _administering(repo):
        worktrees.worktree_add_locked(repo, dest, sha, KEPT)


def adopt_kept(repo: Path, dest: Path) -> bool:
    """Lock a kept worktree an older fidelity made unlocked with `KEPT`; True when git did."""
    with _administering(repo):
        return worktrees.worktree_lock(repo, dest, KEPT)


def remove_kept(repo: Path, dest: Path) -> bool:
    """Remove a kept worktree through git only (never by deleting its folder ourselves), and
    its record; True when neither is left. dest is the path as git lists it."""
    with _administering(repo):
        worktrees.worktree_remove(repo, dest)
        try:
            if _registered(repo, dest) and not os.path.lexists(dest):
                worktrees.worktree_unlock(repo, dest)  # prune keeps a locked record
                command.git(repo, "worktree", "prune", check=False)
            return not os.path.lexists(dest) and not _registered(repo, dest)
        except command.GitError:
            return False


def _registered(repo: Path, dest: Path) -> bool:
    """dest is a worktree record of repo, as git lists it (no link resolved: loop-safe)."""
    return any(e.path == dest for e in worktrees.worktree_entries(repo))


def open_checkouts() -> list[Path]:
    """This process's worktrees not yet removed (after a Ctrl-C: the ones left behind)."""
    with _admin:
        return sorted(_open)


def _temp_base(path: Path) -> Path | None:
    """The temporary folder `detached` made around path, or None when path is not ours."""
    base = path.parent
    if base.name == path.name and base.name.startswith("fidelity-"):
        return base
    return None


@contextlib.contextmanager
def detached(repo: Path, sha: str, role: str) -> Iterator[Checkout]:
    """Check sha out with `git worktree add --detach --lock` in a fresh temporary directory."""
    base = Path(tempfile.mkdtemp(prefix=f"fidelity-{role}-"))
    checkout = Checkout(base / base.name)  # a unique name for git's admin entry too
    try:
        with _administering(repo):
            _open.add(checkout.path)
            worktrees.worktree_add_locked(repo, checkout.path, sha, me().reason())
        yield checkout
    finally:
        with _administering(repo):
            checkout.removed = _remove_locked(repo, checkout.path)
            if checkout.removed:
                _open.discard(checkout.path)
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Stale:
    """A worktree left by a fidelity run that is no longer running."""

    path: Path
    head: str
    reason: str
    removed: bool
    killed: tuple[int, ...] = ()

    def line(self) -> str:
        done = "removed" if self.removed else "could NOT remove"
        how = (
            ""
            if self.removed
            else f"; remove it with `git worktree remove --force --force {self.path}`"
        )
        orphans = (
            f"; killed {len(self.killed)} orphaned process(es) still running in it "
            f"(pid {', '.join(map(str, self.killed))})"
            if self.killed
            else ""
        )
        return (
            f"{done} worktree {self.path} (at {self.head[:10] or '?'}) left by a fidelity run "
            f"that is no longer running ({self.reason}){orphans}{how}"
        )


def _orphans(path: Path) -> list[int]:
    """Processes whose working directory is inside path (Linux /proc; [] elsewhere)."""
    root = os.path.realpath(path)
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        cwd = cwd.removesuffix(" (deleted)")
        if cwd == root or cwd.startswith(root + os.sep):
            found.append(int(entry.name))
    return sorted(p for p in found if p != os.getpid())


def _kill(pids: list[int]) -> tuple[int, ...]:
    killed = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return tuple(killed)


def stale(repo: Path) -> list[worktrees.WorktreeEntry]:
    """The worktrees of fidelity runs whose process is gone: what `prune_stale` removes."""
    found = []
    with _administering(repo):
        entries = worktrees.worktree_entries(repo)
    for entry in entries:
        owner = Owner.parse(entry.locked)
        if owner is not None and owner_alive(owner) is False:
            found.append(entry)
    return found


def prune_stale(repo: Path) -> tuple[Stale, ...]:
    """Remove the worktrees of fidelity runs whose process is gone; say which.

    Processes still running inside such a worktree (a test command the killed run left
    orphaned) are killed first. A worktree whose owner is alive, on another host, or that
    fidelity did not lock is left exactly as it is.
    """
    found = []
    for entry in stale(repo):
        killed = _kill(_orphans(entry.path))
        with _administering(repo):
            removed = _remove_locked(repo, entry.path)
        base = _temp_base(entry.path)
        if removed and base is not None:
            shutil.rmtree(base, ignore_errors=True)
        found.append(Stale(entry.path, entry.head, entry.locked or "", removed, killed))
    return tuple(found)
