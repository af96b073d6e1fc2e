"""`fidelity landed`: did the commits and symbols a piece of work builds on reach the ref?

A commit holds when it is an ancestor of the ref, or when a commit on the ref carries the
same stable patch-id (a cherry-pick, or a squash of the branch that ended at it). A symbol
holds when the ref's tree contains it now; the commits that added or removed it are listed
so that "it landed and was later reverted" reads as such. Patch-id equivalence is textual:
a squash that was edited while merging is reported unlanded, never guessed.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity import git
from fidelity.errors import UsageError


class CommitStatus(enum.StrEnum):
    LANDED = "landed"  # an ancestor of the ref
    LANDED_AS = "landed-as"  # not an ancestor, but its patch landed under another sha
    UNLANDED = "unlanded"
    UNKNOWN = "unknown"  # names no commit in this repository


@dataclass(frozen=True, slots=True)
class CommitClaim:
    rev: str
    status: CommitStatus
    sha: str | None = None
    subject: str = ""
    via: str | None = None  # the equivalent commit on the ref
    via_subject: str = ""
    squash: bool = False  # via matches the branch's whole diff, not this commit alone

    @property
    def holds(self) -> bool:
        return self.status in (CommitStatus.LANDED, CommitStatus.LANDED_AS)


@dataclass(frozen=True, slots=True)
class SymbolChange:
    sha: str
    subject: str
    net: int  # occurrences added minus removed by this commit

    @property
    def kind(self) -> str:
        return "added" if self.net > 0 else "removed"


@dataclass(frozen=True, slots=True)
class SymbolClaim:
    symbol: str
    changes: tuple[SymbolChange, ...]  # oldest first
    present_in: tuple[str, ...]  # paths in the ref's tree that contain it

    @property
    def holds(self) -> bool:
        return bool(self.present_in)


@dataclass(frozen=True, slots=True)
class LandedReport:
    ref: str
    ref_sha: str
    commits: tuple[CommitClaim, ...]
    symbols: tuple[SymbolClaim, ...]

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.commits) and all(s.holds for s in self.symbols)

    def exit_code(self) -> int:
        """2 when a claimed commit is unknown (a bad argument), 1 when a claim fails, else 0."""
        if not self.commits and not self.symbols:
            return 3  # nothing was checked; the caller refuses this before it happens
        if any(c.status is CommitStatus.UNKNOWN for c in self.commits):
            return 2
        return 0 if self.holds else 1

    def summary(self) -> str:
        total = len(self.commits) + len(self.symbols)
        failing = sum(not c.holds for c in self.commits) + sum(not s.holds for s in self.symbols)
        where = f"{self.ref} ({self.ref_sha[:12]})"
        if failing:
            return f"{failing} of {total} claims do not hold on {where}"
        return f"all {total} claims hold on {where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "ref_sha": self.ref_sha,
            "holds": self.holds,
            "commits": [
                {
                    "rev": c.rev,
                    "sha": c.sha,
                    "status": str(c.status),
                    "subject": c.subject,
                    "via": c.via,
                    "via_subject": c.via_subject,
                    "squash": c.squash,
                    "holds": c.holds,
                }
                for c in self.commits
            ],
            "symbols": [
                {
                    "symbol": s.symbol,
                    "present_in": list(s.present_in),
                    "holds": s.holds,
                    "changes": [
                        {"sha": ch.sha, "subject": ch.subject, "kind": ch.kind, "net": ch.net}
                        for ch in s.changes
                    ],
                }
                for s in self.symbols
            ],
        }

    def table(self) -> tuple[list[str], list[list[str]]]:
        """One row per claim: what was claimed, whether it holds, and why."""
        rows = [
            ["commit " + c.rev, _mark(c.holds), str(c.status), _commit_detail(c)]
            for c in self.commits
        ]
        rows += [
            [
                "symbol " + s.symbol,
                _mark(s.holds),
                "present" if s.holds else "absent",
                _symbol_detail(s),
            ]
            for s in self.symbols
        ]
        return ["claim", "holds", "status", "detail"], rows


def _mark(ok: bool) -> str:
    return "yes" if ok else "NO"


def _commit_detail(c: CommitClaim) -> str:
    if c.status is CommitStatus.UNKNOWN:
        return "names no commit here; fetch it, or check the sha"
    head = f"{c.sha[:12]} {c.subject}" if c.sha else ""
    if c.status is CommitStatus.LANDED_AS and c.via:
        how = "squash of its branch" if c.squash else "same patch"
        return f"{head}; landed as {c.via[:12]} {c.via_subject} ({how})"
    if c.status is CommitStatus.UNLANDED:
        return f"{head}; not an ancestor and no commit with its patch-id landed"
    return head


def _symbol_detail(s: SymbolClaim) -> str:
    history = "; ".join(f"{ch.kind} in {ch.sha[:12]} {ch.subject}" for ch in s.changes)
    where = f"in {', '.join(s.present_in[:3])}" + (" ..." if len(s.present_in) > 3 else "")
    now = where if s.present_in else "not in the tree now"
    return f"{now}; {history}" if history else now


def check_commit(repo: Path, ref_sha: str, rev: str) -> CommitClaim:
    """Whether rev landed on ref_sha, directly or as a patch-equivalent commit."""
    sha = git.resolve(repo, rev)
    if sha is None:
        return CommitClaim(rev, CommitStatus.UNKNOWN)
    subject = git.log_commits(repo, ["-1", sha])[0][1]
    if git.is_ancestor(repo, sha, ref_sha):
        return CommitClaim(rev, CommitStatus.LANDED, sha, subject)
    on_ref = git.patch_ids(repo, [f"^{sha}", ref_sha])
    by_pid = {pid: c for c, pid in reversed(on_ref.items())}  # oldest landing wins
    own = git.patch_ids(repo, ["-1", sha]).get(sha)
    base = git.merge_base(repo, sha, ref_sha)
    branch = git.diff_patch_id(repo, base, sha) if base else None
    for pid, squash in ((own, False), (branch, True)):
        if pid is not None and pid in by_pid:
            via = by_pid[pid]
            via_subject = git.log_commits(repo, ["-1", via])[0][1]
            return CommitClaim(rev, CommitStatus.LANDED_AS, sha, subject, via, via_subject, squash)
    return CommitClaim(rev, CommitStatus.UNLANDED, sha, subject)


def check_symbol(repo: Path, ref_sha: str, symbol: str) -> SymbolClaim:
    """The commits on ref_sha that changed how often symbol occurs, and where it is now."""
    changes = tuple(
        SymbolChange(sha, subject, net)
        for sha, subject, net in reversed(git.pickaxe(repo, ref_sha, symbol))
        if net != 0
    )
    return SymbolClaim(symbol, changes, tuple(git.grep_files(repo, ref_sha, symbol)))


def check(repo: Path, ref: str, commits: Sequence[str], symbols: Sequence[str]) -> LandedReport:
    """Every claim against ref; UsageError when there is none or ref itself is unknown."""
    if not commits and not symbols:
        raise UsageError("nothing to check: name at least one --commit SHA or --symbol NAME")
    ref_sha = git.rev_parse(repo, ref)
    return LandedReport(
        ref,
        ref_sha,
        tuple(check_commit(repo, ref_sha, rev) for rev in commits),
        tuple(check_symbol(repo, ref_sha, sym) for sym in symbols),
    )
