"""`fidelity gc`: what fidelity keeps in a repository's `.fidelity/`, listed with why each
item stays or goes, and removed only when asked.

What gc may remove is only what fidelity's own record says it made (issue 36):

- a run directory under `.fidelity/runs/` or `.fidelity/controls/` that holds the
  `.fidelity-made` record `workdir.fresh` wrote when it made the folder
  (`workdir.made`); a folder without it, one made before fidelity wrote the record
  included, is listed and left;
- a set-up worktree under `.fidelity/setups/` that git lists as a worktree of this
  repository at exactly that place, locked with fidelity's reason (`worktree.KEPT`,
  `setups.claim_of`), removed through git only (`git worktree remove`), and the files
  fidelity keeps beside one (its lock, which says whose it is, and its setup record);
- a worktree a killed fidelity run left (its lock names the dead owner: `worktree.stale`).

A link found inside `.fidelity/` is never followed: it is listed as not fidelity's and left
(the link itself too). `.fidelity` and the folders in it may themselves be links (to a
bigger disk): only fidelity's entries inside go.

The retention rule, one for every run:

- a run directory stays while it is among the newest `keep_runs` or younger than
  `keep_days` days (its folder's mtime: when it last gained a file); an interrupted run
  (plan.json without run.json) can still be finished with `--resume`, so it stays unless
  `interrupted` is set, and one a live run holds (`ledger.idle`) always stays;
- a set-up worktree stays while it was used within `keep_days` days, and while a live run
  holds it (`setups.locked`: a run holds its set-ups until it ends); its venv goes with it;
- a controls run's directory follows the same rule, its newest `keep_runs` counted apart
  from the matrix's; one a live process still writes (`workdir.busy`) always stays;
- a detached worktree left by a killed fidelity run always goes (`worktree.prune_stale`,
  what every `fidelity run` does first).

A run directory written elsewhere with `--out` is not fidelity's to find. Read-only folders
inside a removed entry (a package manager's) are made writable first, so that a removal
does not stop half-way.
"""

from __future__ import annotations

import enum
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fidelity import workdir, worktree
from fidelity.git import worktrees
from fidelity.matrix import removal
from fidelity.matrix.run import ledger, setups

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
            done.append(replace(item, done=_remove_run(item.path, item.kind)))
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
LINK = "a link, not fidelity's: left (gc never removes through a link)"


def _legacy(folder: Path, kind: Kind) -> bool:
    """A run directory as fidelity made them before it marked them (`workdir.MADE`)."""
    if kind is Kind.CONTROLS:
        found = (folder / "report.json").is_file() or (folder / workdir.LIVE).is_file()
        return found or _CONTROLS_NAME.fullmatch(folder.name) is not None
    return (folder / "run.json").is_file() or (folder / ledger.PLAN).is_file()


def _unmarked(folder: Path, kind: Kind) -> str:
    if _legacy(folder, kind):
        return (
            f"made before fidelity marked its {kind}s (no {workdir.MADE} marker): left; "
            f"remove it with `rm -rf {folder}` once you no longer need it"
        )
    return f"not a fidelity {kind} (no {workdir.MADE} marker): left alone"


def _runs(repo: Path, rule: Rule, now: float, kind: Kind = Kind.RUN) -> list[Item]:
    folder_kind = "runs" if kind is Kind.RUN else "controls"
    entries = [e for e in removal.listing(repo / workdir.ROOT / folder_kind) if _is_dir_or_link(e)]
    entries.sort(key=lambda d: (-removal.mtime(d), d.name))
    items, rank = [], 0
    for entry in entries:
        age = (now - removal.mtime(entry)) / DAY
        if not workdir.made(entry, folder_kind):  # a link never is: it is no record
            why = LINK if entry.is_symlink() else _unmarked(entry, kind)
            items.append(Item(kind, entry, removal.size(entry), age, False, why))
            continue
        rank += 1
        remove, why = _run_rule(entry, rank, age, rule)
        items.append(Item(kind, entry, removal.size(entry), age, remove, why))
    return items


def _is_dir_or_link(path: Path) -> bool:
    try:
        return path.is_symlink() or path.is_dir()
    except OSError:
        return False


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


def _remove_run(folder: Path, kind: Kind) -> str:
    with ledger.idle(folder) as idle:
        if not idle or workdir.busy(folder):
            return "kept: a fidelity run started in it since it was listed"
        if not workdir.made(folder, "runs" if kind is Kind.RUN else "controls"):
            return "kept: it is no longer fidelity's as listed (a link, or no marker)"
        removal.writable(folder)
        removal.delete_run(folder)
    if folder.exists():
        return f"could not remove it; remove it with `rm -rf {folder}`"
    return "removed"


# --- kept set-up worktrees -----------------------------------------------------------------


def _setups(repo: Path, rule: Rule, now: float) -> list[Item]:
    root = repo / workdir.ROOT / setups.KIND
    registered = setups.kept_entries(repo, root)
    where = Path(os.path.realpath(root))
    names = {
        p.name.removesuffix(".lock").removesuffix(".setup.json") for p in removal.listing(root)
    }
    items = []
    for name in sorted(names | {p.name for p in registered}):
        path = root / name
        entry = registered.get(where / name)
        parts = [p for p in (path, *setups.companions(path)) if os.path.lexists(p)]
        age = (now - max(map(removal.mtime, parts))) / DAY if parts else None
        size = sum(removal.size(p) for p in parts)
        remove, why = _setup_rule(path, entry, age, rule)
        items.append(Item(Kind.SETUP, path, size, age, remove, why))
    return items


def _setup_rule(
    path: Path, entry: worktrees.WorktreeEntry | None, age: float | None, rule: Rule
) -> tuple[bool, str]:
    claim = setups.claim_of(path, entry)
    if claim is setups.Claim.ABSENT:
        if not setups.marked(setups.companions(path)[1]):
            return False, "files fidelity did not make (no worktree, no lock of a run's): left"
        return True, "leftover files of a removed set-up: nothing to reuse"
    if claim is not setups.Claim.OURS:
        return False, setups.claim_words(claim, path, entry)
    if not os.path.lexists(path):
        return True, "registered in git, but its folder is gone: nothing to reuse"
    if _in_use(path):
        return False, "a fidelity run holds it until the run ends"
    last = f"kept set-up, last used {_age(age)} ago"
    if age is not None and age < rule.keep_days:
        return False, f"{last} (kept while used within {rule.keep_days:g} days)"
    return True, f"{last} (not within {rule.keep_days:g} days)"


def _in_use(path: Path) -> bool:
    lock = setups.companions(path)[1]
    if not os.path.lexists(lock):  # a run makes the lock before it takes it
        return False
    with setups.locked(lock) as mine:
        return not mine


def _remove_setup(repo: Path, path: Path) -> str:
    """Remove a kept set-up fidelity made, through git, checking again under its lock that
    it still is fidelity's and that no run took it since it was listed."""
    manifest, lock = setups.companions(path)
    with setups.locked(lock) as mine:
        if not mine:
            return "kept: a fidelity run took it since it was listed"
        entry = setups.kept_entries(repo, path.parent).get(setups.real(path))
        claim = setups.claim_of(path, entry)
        if claim is setups.Claim.OURS and entry is not None:
            if os.path.lexists(path):
                removal.writable(path)
            removed = worktree.remove_kept(repo, entry.path)
        elif claim is setups.Claim.ABSENT:
            removed = True
        else:
            return f"kept: it is no longer fidelity's as listed ({claim.value})"
        if removed:
            manifest.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)
    return _said(removed, path)


def _stale(repo: Path) -> list[Item]:
    return [
        Item(
            Kind.STALE,
            e.path,
            removal.size(e.path),
            None,
            True,
            f"left by a fidelity run that is no longer running ({e.locked})",
        )
        for e in worktree.stale(repo)
    ]


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
