"""`fidelity landed`: did the commits and symbols a piece of work builds on reach the ref?

A commit holds when it landed on the ref in the sense of `landing` (an ancestor, or its
patch carried by a commit on the ref as a cherry-pick or a squash of its branch) and was
not reverted since. A symbol holds when the ref's tree contains it as a whole identifier
now: `abs_timedelta` is not found inside `_abs_timedelta` or `abs_timedelta2`. The commits
that changed how often it occurs are listed, so "it landed and was later removed" reads as
such. A shallow clone is refused: its history is partial.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError
from fidelity.git import log, objects
from fidelity.history import landing


class CommitStatus(enum.StrEnum):
    LANDED = "landed"  # an ancestor of the ref
    LANDED_AS = "landed-as"  # not an ancestor, but its patch landed under another sha
    REVERTED = "reverted"  # it landed, and a later commit on the ref undid it
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
    reverted_by: str | None = None
    reverted_subject: str = ""

    @property
    def holds(self) -> bool:
        return self.status in (CommitStatus.LANDED, CommitStatus.LANDED_AS)


@dataclass(frozen=True, slots=True)
class SymbolChange:
    sha: str
    subject: str
    net: int  # whole-identifier occurrences added minus removed by this commit

    @property
    def kind(self) -> str:
        return "added" if self.net > 0 else "removed"


@dataclass(frozen=True, slots=True)
class SymbolClaim:
    symbol: str
    changes: tuple[SymbolChange, ...]  # oldest first
    present_in: tuple[tuple[str, int], ...]  # (path, occurrences) in the ref's tree

    @property
    def holds(self) -> bool:
        return bool(self.present_in)

    @property
    def matched(self) -> str:
        """What was looked for, in words (the output says it, so a near name is not read
        as the claimed one)."""
        return _matched(self.symbol)


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
                    "reverted_by": c.reverted_by,
                    "reverted_subject": c.reverted_subject,
                    "holds": c.holds,
                }
                for c in self.commits
            ],
            "symbols": [
                {
                    "symbol": s.symbol,
                    "matched": s.matched,
                    "present_in": [path for path, _ in s.present_in],
                    "occurrences": dict(s.present_in),
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
    how = "squash of its branch" if c.squash else "same patch"
    if c.status is CommitStatus.LANDED_AS and c.via:
        return f"{head}; landed as {c.via[:12]} {c.via_subject} ({how})"
    if c.status is CommitStatus.REVERTED and c.reverted_by:
        where = f" as {c.via[:12]} ({how})" if c.via else ""
        return (
            f"{head}; landed{where}, then reverted by {c.reverted_by[:12]} "
            f"{c.reverted_subject}; re-land it, or drop the claim"
        )
    if c.status is CommitStatus.UNLANDED:
        return f"{head}; not an ancestor and no commit with its patch-id landed"
    if c.via:
        return f"{head}; reverted, then landed again by {c.via[:12]} {c.via_subject}"
    return head


HISTORY_SHOWN = 5  # a symbol's changes in its row; past that, the first and the newest


def _history(changes: Sequence[SymbolChange]) -> str:
    """The commits that changed a symbol, oldest first: all of them up to HISTORY_SHOWN,
    else the first (where it came from), a count, and the newest (where it stands)."""
    said = [f"{ch.kind} {abs(ch.net)} in {ch.sha[:12]} {ch.subject}" for ch in changes]
    if len(said) > HISTORY_SHOWN:
        newest = HISTORY_SHOWN - 1
        hidden = len(said) - HISTORY_SHOWN
        said = [said[0], f"... and {hidden} more; --json has all", *said[-newest:]]
    return "; ".join(said)


def _symbol_detail(s: SymbolClaim) -> str:
    history = _history(s.changes)
    shown = ", ".join(f"{path} ({n})" for path, n in s.present_in[:3])
    where = f"in {shown}" + (" ..." if len(s.present_in) > 3 else "")
    now = where if s.present_in else "not in the tree now"
    return f"{s.matched}: {now}" + (f"; {history}" if history else "")


_WORD = "A-Za-z0-9_"


def _matched(symbol: str) -> str:
    if re.fullmatch(f"[{_WORD}]+", symbol):
        return f"identifier {symbol} (whole word: not inside a longer name)"
    return f"{symbol} (whole name at its word ends)"


def identifier(symbol: str) -> re.Pattern[str]:
    """symbol as a whole name: no identifier character (letters, digits, `_`, or any
    non-ASCII letter, as Python allows) directly before or after its word-character ends."""
    before = r"(?<![\w])" if re.match(r"\w", symbol) else ""
    after = r"(?![\w])" if re.search(r"\w$", symbol) else ""
    return re.compile(before + re.escape(symbol) + after)


def _net(patch: bytes, pattern: re.Pattern[str]) -> int:
    net = 0
    for raw in patch.split(b"\n"):
        if raw[:1] == b"+" and not raw.startswith(b"+++ "):
            net += len(pattern.findall(raw[1:].decode(errors="replace")))
        elif raw[:1] == b"-" and not raw.startswith(b"--- "):
            net -= len(pattern.findall(raw[1:].decode(errors="replace")))
    return net


def check_symbols(repo: Path, ref_sha: str, symbols: Sequence[str]) -> tuple[SymbolClaim, ...]:
    """For each symbol, the commits on ref_sha that changed how often it occurs as a whole
    name, and where it occurs now: one history walk and one tree search for all of them."""
    if not symbols:
        return ()
    patterns = {sym: identifier(sym) for sym in symbols}
    commits = log.symbol_changes(repo, ref_sha, list(symbols))
    candidates = sorted({p for sym in symbols for p in log.grep_files(repo, ref_sha, sym)})
    contents = objects.blobs(repo, [f"{ref_sha}:{p}" for p in candidates])
    claims = []
    for sym, pattern in patterns.items():
        changes = []
        for sha, subject, patch in reversed(commits):  # oldest first
            net = _net(patch, pattern) if sym.encode() in patch else 0
            if net:
                changes.append(SymbolChange(sha, subject, net))
        present = []
        for path, data in zip(candidates, contents, strict=True):
            if data is not None and sym.encode() in data:
                count = len(pattern.findall(data.decode(errors="replace")))
                if count:
                    present.append((path, count))
        claims.append(SymbolClaim(sym, tuple(changes), tuple(present)))
    return tuple(claims)


def check_commits(repo: Path, ref_sha: str, revs: Sequence[str]) -> tuple[CommitClaim, ...]:
    """Every commit claim against ref_sha, answered together (see `landing`)."""
    shas = {rev: objects.resolve(repo, rev) for rev in revs}
    known = [sha for sha in shas.values() if sha]
    landings = landing.find(repo, ref_sha, known)
    mentioned = {x for lnd in landings.values() for x in (lnd.sha, lnd.via, lnd.reverted_by) if x}
    subjects = (
        dict(log.log_commits(repo, ["--no-walk=unsorted", *sorted(mentioned)])) if mentioned else {}
    )
    claims = []
    for rev, sha in shas.items():
        if sha is None:
            claims.append(CommitClaim(rev, CommitStatus.UNKNOWN))
            continue
        found = landings[sha]
        claims.append(
            CommitClaim(
                rev,
                CommitStatus(str(found.status)),
                sha,
                subjects.get(sha, ""),
                found.via,
                subjects.get(found.via or "", ""),
                found.squash,
                found.reverted_by,
                subjects.get(found.reverted_by or "", ""),
            )
        )
    return tuple(claims)


def check(repo: Path, ref: str, commits: Sequence[str], symbols: Sequence[str]) -> LandedReport:
    """Every claim against ref; UsageError when there is none or ref itself is unknown,
    UntrustedError in a shallow clone."""
    if not commits and not symbols:
        raise UsageError("nothing to check: name at least one --commit SHA or --symbol NAME")
    for sym in symbols:
        if not sym.strip() or "\n" in sym:
            raise UsageError(f"--symbol {sym!r}: name an identifier, e.g. --symbol parse_args")
    ref_sha = objects.rev_parse(repo, ref)
    landing.refuse_shallow(repo)
    return LandedReport(
        ref,
        ref_sha,
        check_commits(repo, ref_sha, commits),
        check_symbols(repo, ref_sha, symbols),
    )
