"""`fidelity gc`: what fidelity keeps in a repository's `.fidelity/`, listed with why each
item stays or goes, and removed only when asked.

The retention rule, one for every run:

- a run directory under `.fidelity/runs/` stays while it is among the newest `keep_runs`
  or younger than `keep_days` days (its folder's mtime: when it last gained a file); an
  interrupted run (plan.json without run.json) can still be finished with `--resume`, so
  it stays unless `interrupted` is set, and one a live run holds (`ledger.idle`) always
  stays; a folder with neither file is not fidelity's run and is left alone;
- a set-up worktree kept by `reuse_setup` under `.fidelity/setups/` stays while it was used
  within `keep_days` days, while a live run holds it (`setups.locked`) and while it is
  locked in git (`git worktree lock`, the user's own say); it goes through git
  (`git worktree remove --force` and prune), its venv with it;
- a controls run's directory under `.fidelity/controls/` (logs and report.json) follows the
  same rule, its newest `keep_runs` counted apart from the matrix's; one a live process
  still writes (`workdir.busy`) always stays;
- a detached worktree left by a killed fidelity run always goes (`worktree.prune_stale`,
  what every `fidelity run` does first).

Nothing is removed from outside `.fidelity/`, and a run directory written elsewhere with
`--out` is not fidelity's to find. Read-only folders inside (a package manager's) are made
writable first, so that a removal does not stop half-way.
"""

from __future__ import annotations

import contextlib
import enum
import os
import re
import shutil
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fidelity import workdir, worktree
from fidelity.git import worktrees
from fidelity.matrix import ledger, setups

DAY = 86400.0


class Kind(enum.StrEnum):
    RUN = "run"
    CONTROLS = "controls run"
    SETUP = "setup"
    STALE = "stale worktree"


@dataclass(frozen=True, slots=True)
class Rule:
    """What stays: the newest `keep_runs` runs, and anything used within `keep_days` days
    (the defaults are the command line's, `fidelity.cli.gc`)."""

    keep_runs: int
    keep_days: float
    interrupted: bool = False  # interrupted runs fall under the rule too (else they stay)

    def words(self) -> str:
        extra = "" if self.interrupted else "; interrupted runs stay"
        return (
            f"keep the newest {self.keep_runs} run directories, and runs and set-ups used "
            f"within {self.keep_days:g} days{extra}"
        )


@dataclass(frozen=True, slots=True)
class Item:
    """One thing fidelity keeps; `remove` is the rule's say, `done` what --apply did."""

    kind: Kind
    path: Path
    size: int
    age_days: float | None
    remove: bool
    why: str
    done: str = ""  # "" (not applied or kept), "removed", or why it could not be removed


def survey(repo: Path, rule: Rule, now: float | None = None) -> tuple[Item, ...]:
    """Every run directory, kept set-up worktree and stale worktree, with the rule's say."""
    now = time.time() if now is None else now
    return (
        *_runs(repo, rule, now),
        *_runs(repo, rule, now, Kind.CONTROLS),
        *_setups(repo, rule, now),
        *_stale(repo),
    )


def apply(repo: Path, items: Sequence[Item]) -> tuple[Item, ...]:
    """Remove what the survey marked, checking again that no live run took it meanwhile."""
    pruned: dict[Path, worktree.Stale] = {}
    if any(i.remove and i.kind is Kind.STALE for i in items):
        pruned = {s.path: s for s in worktree.prune_stale(repo)}
    done = []
    for item in items:
        if not item.remove:
            done.append(item)
        elif item.kind in (Kind.RUN, Kind.CONTROLS):
            done.append(replace(item, done=_remove_run(item.path)))
        elif item.kind is Kind.SETUP:
            done.append(replace(item, done=_remove_setup(repo, item.path)))
        else:
            gone = pruned.get(item.path)
            done.append(replace(item, done=_said(gone is None or gone.removed, item.path)))
    return tuple(done)


def _said(removed: bool, path: Path) -> str:
    if removed:
        return "removed"
    return f"could not remove it; remove it with `git worktree remove --force --force {path}`"


# --- run directories -----------------------------------------------------------------------


_CONTROLS_NAME = re.compile(r"\d{8}-\d{6}-[0-9a-f]{7}(-\d+)?")  # `controls.gate.log_dir`


def _ours(folder: Path, kind: Kind) -> bool:
    if kind is Kind.CONTROLS:
        found = (folder / "report.json").is_file() or (folder / workdir.LIVE).is_file()
        return found or _CONTROLS_NAME.fullmatch(folder.name) is not None
    return (folder / "run.json").is_file() or (folder / ledger.PLAN).is_file()


def _runs(repo: Path, rule: Rule, now: float, kind: Kind = Kind.RUN) -> list[Item]:
    root = repo / workdir.ROOT / ("runs" if kind is Kind.RUN else "controls")
    if not root.is_dir():
        return []
    folders = [d for d in root.iterdir() if d.is_dir() and not d.is_symlink()]
    folders.sort(key=lambda d: (-_mtime(d), d.name))
    items, rank = [], 0
    for folder in folders:
        age = (now - _mtime(folder)) / DAY
        if not _ours(folder, kind):
            files = "report.json" if kind is Kind.CONTROLS else "run.json or plan.json"
            why = f"not a fidelity {kind} (no {files}): left alone"
            items.append(Item(kind, folder, _size(folder), age, False, why))
            continue
        rank += 1
        remove, why = _run_rule(folder, rank, age, rule)
        items.append(Item(kind, folder, _size(folder), age, remove, why))
    return items


def _run_rule(folder: Path, rank: int, age: float, rule: Rule) -> tuple[bool, str]:
    if workdir.busy(folder):
        return False, "a fidelity command is writing to it now"
    if ledger.incomplete(folder):
        with ledger.idle(folder) as idle:
            if not idle:
                return False, "a fidelity run is running in it now"
        if not rule.interrupted:
            return False, (
                f"interrupted: finish it with `fidelity run --resume {folder}` "
                "(--include-interrupted lets gc remove it under the rule)"
            )
    if rank <= rule.keep_runs:
        return False, f"among the newest {rule.keep_runs} runs"
    if age < rule.keep_days:
        return False, f"younger than {rule.keep_days:g} days"
    return True, f"older than {rule.keep_days:g} days and not among the newest {rule.keep_runs}"


def _remove_run(folder: Path) -> str:
    with ledger.idle(folder) as idle:
        if not idle or workdir.busy(folder):
            return "kept: a fidelity run started in it since it was listed"
        _writable(folder)
        _delete(folder)
    if folder.exists():
        return f"could not remove it; remove it with `rm -rf {folder}`"
    return "removed"


def _delete(folder: Path) -> None:
    """Remove a run directory, its run.json and plan.json last: a removal that fails half-way
    leaves a folder the next gc still knows for a run."""
    markers = {"run.json", ledger.PLAN}
    for child in _listing(folder):
        if child.name in markers:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    if any(c.name not in markers for c in _listing(folder)):
        return
    with contextlib.suppress(OSError):
        for name in markers:
            (folder / name).unlink(missing_ok=True)
        folder.rmdir()


# --- kept set-up worktrees -----------------------------------------------------------------


def _setups(repo: Path, rule: Rule, now: float) -> list[Item]:
    root = repo / workdir.ROOT / setups.KIND
    registered = {
        e.path: e for e in worktrees.worktree_entries(repo) if e.path.parent == root.resolve()
    }
    names = {p.name.removesuffix(".lock").removesuffix(".setup.json") for p in _listing(root)}
    paths = sorted({root.resolve() / n for n in names} | set(registered))
    items = []
    for path in paths:
        entry = registered.get(path)
        times = [_mtime(p) for p in (path, *setups.companions(path)) if p.exists()]
        age = (now - max(times)) / DAY if times else None
        size = sum(_size(p) for p in (path, *setups.companions(path)))
        remove, why = _setup_rule(path, entry, age, rule)
        items.append(Item(Kind.SETUP, path, size, age, remove, why))
    return items


def _listing(root: Path) -> list[Path]:
    try:
        return list(root.iterdir())
    except OSError:
        return []


def _setup_rule(
    path: Path, entry: worktrees.WorktreeEntry | None, age: float | None, rule: Rule
) -> tuple[bool, str]:
    if entry is not None and entry.locked is not None:
        reason = f" ({entry.locked})" if entry.locked else ""
        return False, f"locked in git{reason}; `git worktree unlock {path}` lets gc remove it"
    if not path.exists():
        what = "registered in git, but its folder is gone" if entry else "leftover files"
        return True, f"{what}: nothing to reuse"
    if _in_use(path):
        return False, "a fidelity run is using it now"
    last = f"kept set-up, last used {_age(age)} ago"
    if age is not None and age < rule.keep_days:
        return False, f"{last} (kept while used within {rule.keep_days:g} days)"
    return True, f"{last} (not within {rule.keep_days:g} days)"


def _in_use(path: Path) -> bool:
    lock = setups.companions(path)[1]
    if not lock.exists():  # a run makes the lock before it takes it
        return False
    with setups.locked(lock) as mine:
        return not mine


def _remove_setup(repo: Path, path: Path) -> str:
    manifest, lock = setups.companions(path)
    with setups.locked(lock) as mine:
        if not mine:
            return "kept: a fidelity run took it since it was listed"
        if path.exists():
            _writable(path)
        removed = worktree.remove(repo, path)
        manifest.unlink(missing_ok=True)
        if removed:
            lock.unlink(missing_ok=True)
    return _said(removed, path)


def _stale(repo: Path) -> list[Item]:
    return [
        Item(
            Kind.STALE,
            e.path,
            _size(e.path),
            None,
            True,
            f"left by a fidelity run that is no longer running ({e.locked})",
        )
        for e in worktree.stale(repo)
    ]


# --- files ---------------------------------------------------------------------------------


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def _size(path: Path) -> int:
    """Bytes on disk under path, links not followed (what removing it frees)."""
    total = 0
    for entry in _walk(path):
        with contextlib.suppress(OSError):
            total += entry.stat(follow_symlinks=False).st_blocks * 512
    return total


def _walk(path: Path) -> Iterator[os.DirEntry[str]]:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        yield entry
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path))


def _writable(root: Path) -> None:
    """Give the owner write access to every folder under root (links not followed), so that
    read-only folders a package manager left do not stop a removal half-way."""

    def allow(path: str) -> None:
        with contextlib.suppress(OSError):
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                os.chmod(path, stat.S_IMODE(mode) | stat.S_IRWXU)

    allow(str(root))
    for top, folders, _ in os.walk(root):
        for name in folders:
            allow(os.path.join(top, name))


# --- the report ----------------------------------------------------------------------------


def human_size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    value, unit = n / 1000, "kB"
    for bigger in ("MB", "GB"):
        if value < 999.95:  # else it would print as 1000.0
            break
        value, unit = value / 1000, bigger
    return f"{value:.1f} {unit}"


def _age(days: float | None) -> str:
    if days is None:
        return ""
    if days >= 1:
        return f"{days:.1f} d"
    if days * 24 >= 1:
        return f"{days * 24:.1f} h"
    return f"{days * 24 * 60:.0f} min"


@dataclass(frozen=True, slots=True)
class Report:
    """What `fidelity gc` found (and, applied, did), as a table, a summary and JSON."""

    repo: Path
    rule: Rule
    items: tuple[Item, ...]
    applied: bool

    def failed(self) -> list[Item]:
        return [i for i in self.items if i.remove and i.done != "removed"]

    def exit_code(self) -> int:
        """1 when --apply could not remove something it meant to; else 0."""
        return 1 if self.applied and self.failed() else 0

    def _action(self, item: Item) -> str:
        if not item.remove:
            return "keep"
        if not self.applied:
            return "remove"
        return "removed" if item.done == "removed" else "NOT removed"

    def table(self) -> tuple[list[str], list[list[str]]]:
        rows = [
            [
                str(i.kind),
                _shown(self.repo, i.path),
                human_size(i.size),
                _age(i.age_days),
                self._action(i),
                i.done if i.done not in ("", "removed") else i.why,
            ]
            for i in self.items
        ]
        return ["what", "path", "size", "age", "action", "why"], rows

    def summary(self) -> str:
        going = [i for i in self.items if i.remove]
        freed = human_size(sum(i.size for i in going if not self.applied or i.done == "removed"))
        kept = len(self.items) - len(going)
        if not self.applied:
            head = f"dry run: would remove {len(going)} ({freed}), keep {kept}"
            tail = "; pass --apply to remove them" if going else ""
            return f"{head} ({self.rule.words()}){tail}"
        failed = self.failed()
        head = f"removed {len(going) - len(failed)} ({freed}), kept {kept}"
        more = f"; {len(failed)} could NOT be removed (see above)" if failed else ""
        return f"{head} ({self.rule.words()}){more}"

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": str(self.repo),
            "applied": self.applied,
            "rule": {
                "keep_runs": self.rule.keep_runs,
                "keep_days": self.rule.keep_days,
                "include_interrupted": self.rule.interrupted,
            },
            "items": [
                {
                    "kind": str(i.kind),
                    "path": str(i.path),
                    "bytes": i.size,
                    "age_days": i.age_days,
                    "action": self._action(i),
                    "why": i.why,
                    "done": i.done,
                }
                for i in self.items
            ],
        }


def _shown(repo: Path, path: Path) -> str:
    return str(path.relative_to(repo)) if path.is_relative_to(repo) else str(path)
