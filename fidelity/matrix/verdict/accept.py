"""Accepted and expected findings: a known deviation stated in the open, never silent.

A table's `[[accept]]` entries stand for every run until they expire; a prediction's
`findings` belong to one change. Either turns a matching finding from exit 3 into a line
every report shows and the verdict counts. A table entry that matches nothing in a run
that could have produced it is itself a finding (`accepted-unused`), so the list only
shrinks; an expired one gives its findings back and says so (`accepted-expired`). A finding
that means the evidence may not be the commit's, was altered, or that the gate was
loosened can never be accepted (`NEVER`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from fidelity.matrix.verdict.findings import Code, Finding

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # an `until` written as a date (else a commit)

# The one list of findings a table or a prediction can never accept, each with why: a
# finding that means the evidence may not be the commit's, that it was changed after the
# run, that the gate was loosened, or that a prediction came late. Every other finding is in
# MAY, with when accepting it makes sense. docs/reference/findings.md is generated from both
# (scripts/gen_reference.py); a new finding goes into one of them.
NEVER: Mapping[Code, str] = {
    Code.SIDE_CHANGED: "a side's cases changed its worktree after setup (HEAD, the index or a "
    "tracked file): its evidence may be another revision's, such as the baseline checked out "
    "in the candidate's worktree",
    Code.CHECKOUT_CHANGED: "your repository changed during the run: something wrote outside "
    "its worktree, perhaps into what a side reads",
    Code.HARNESS_CHANGED: "a case added, changed or removed a file (bytecode included) in the "
    "harness both sides read: the sides may have run other drivers than the committed ones",
    Code.SHADOWED_IMPORT: "the code under test resolved outside the side's worktree: the "
    "evidence is another checkout's or installation's",
    Code.CACHE_NOT_EMPTY: "the fresh cache folder held files before the case ran: the case may "
    "have loaded what something else put there instead of computing it",
    Code.FOLDER_REPLACED: "a case replaced its {out} or {cache} folder by a link: what it wrote "
    "went where fidelity does not look and the other side may read, and was never kept",
    Code.EVIDENCE_ALTERED: "an output or cache file in the run directory was changed after the run",
    Code.RUN_JSON_ALTERED: "run.json was edited after the run",
    Code.REJUDGED_DIFFERS: "judging the recorded evidence again gives another verdict than "
    "the run gave",
    Code.TOLERANCE_WIDENED: "the candidate's table widened a tolerance of the baseline's: the "
    "gate was loosened to let the change through",
    Code.NOTHING_COMPARED: "no case was compared: a gate cannot hold without evidence",
    Code.PREDICTION_UNCOMMITTED: "the prediction was not committed before the measurement it "
    "predicts",
    Code.PREDICTION_DIFFERS: "the prediction given differs from the one the run recorded",
    Code.PREDICTION_NOT_STATED: "the prediction was stated after the run",
    Code.PREDICTION_LATE: "the prediction was last changed after the change it predicts, or is "
    "not in the candidate's history: it was not stated before the evidence was seen",
    Code.PARTIAL_PREDICTION: "the prediction names cases the run did not run",
    Code.PARTIAL_RUN: "a partial run under CI stands in for the full gate: run every declared "
    "case, or say --partial",
    Code.ACCEPTED_UNUSED: "an acceptance that matches nothing must go, so that the list only "
    "shrinks",
    Code.ACCEPTED_EXPIRED: "an acceptance past its end must be renewed with a new reason, "
    "not accepted",
}
MAY: Mapping[Code, str] = {
    Code.DIRTY_SIDE: "git's own checkout of an old commit differs from it (line-ending or "
    "filter attributes it predates); found before setup, so no case causes it",
    Code.DIRTY_HARNESS: "the harness has uncommitted files; both sides still read the same ones",
    Code.UNRESOLVED_IMPORT: "a module named in `import_check` does not exist at one side's "
    "commit yet",
    Code.SETUP_FAILED: "a setup step fails at an old commit; that side's cases do not run and "
    "are not compared",
    Code.EXECUTED_DIFFERS: "fewer cases ran than were declared: evidence missing, not foreign",
    Code.MISSING_EVIDENCE: "a declared output is not written (a known bug); the case is not "
    "compared",
    Code.DEFINITION_DIFFERS: "a side's own table defines the case otherwise; both sides ran the "
    "harness's definition",
    Code.WORKTREE_NOT_REMOVED: "a worktree was left behind; the evidence is whole",
    Code.COMPARATOR_LIMIT: "an output too large to compare by value; its bytes are compared",
    Code.LEFTOVER_PROCESS: "a tool leaves a server running by design; it is killed and named",
    Code.LINKED_EVIDENCE: "a tool writes a link (a `latest` link) inside {out} or {cache}; "
    "links are never followed or kept, so they certify nothing",
    Code.IGNORE_UNMATCHED: "an ignore that matches nothing on either side yet",
    Code.UNEXPECTED_OUTPUT: "a file declared absent appears; the case is judged on the rest",
    Code.SHARD_MISSING: "a shard did not run: its cases are not compared",
    Code.SHARD_DUPLICATED: "a case ran in two shards of the same commits; the first is kept",
    Code.SPREAD_TOO_SMALL: "too few runs to tell noise from a move; the case stays moved",
    Code.BOTH_FAILED: "a case fails the same way on both sides of an old release pair (a "
    "known failure, needs `case`); a failure that changes kind is still a move",
}


def problem(finding: str, *, table: bool = True) -> str | None:
    """Why a finding class cannot be accepted (`table`) or expected (a prediction), or None.
    `both-failed` is a table's class alone: a prediction says `failing` instead."""
    known = {c.value for c in Code}
    if not table:
        known.discard(Code.BOTH_FAILED.value)
    if finding not in known:
        allowed = sorted(m.value for m in MAY if table or m is not Code.BOTH_FAILED)
        return f"{finding!r} is not a finding; known: {', '.join(allowed)}" + (
            "" if table else "; a case that fails the same way on both sides: `failing`"
        )
    code = Code(finding)
    if code in NEVER:
        return (
            f"{finding} can never be accepted: {NEVER[code]}. Fix the cause and remove this "
            "entry (docs/reference/findings.md lists what can never be accepted)"
        )
    return None


def entry_problem(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """(key, why) of an `[[accept]]` entry the schema passes but cannot stand, or None."""
    why = problem(entry["finding"])
    if why:
        return "finding", why
    if entry["finding"] == Code.BOTH_FAILED and "case" not in entry:
        return "finding", "both-failed names one case: add `case = ID`"
    if entry["finding"] == Code.BOTH_FAILED and "side" in entry:
        return "side", "both-failed is a failure of both sides: drop `side`"
    until = entry.get("until")
    if isinstance(until, str) and DATE.match(until):
        try:
            dt.date.fromisoformat(until)
        except ValueError as exc:  # 2026-02-30: a run would refuse it, so validation does
            return "until", f"{until!r} is no day of the calendar ({exc}); write a real date"
    return None


@dataclass(frozen=True, slots=True)
class Allowance:
    """One accepted (table) or expected (prediction) finding."""

    finding: str
    why: str
    case: str | None = None
    side: str | None = None
    until: str | None = None
    expired: str = ""  # why it no longer holds, decided when the run ran; "" while it holds

    def matches(self, f: Finding) -> bool:
        return (
            f.code == self.finding
            and (self.case is None or f.case_id == self.case)
            and (self.side is None or f.side == self.side)
        )

    def label(self) -> str:
        where = [
            w for w in (self.side and f"[{self.side}]", self.case and f"case {self.case}") if w
        ]
        return " ".join([self.finding, *where])

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Allowance:
        return Allowance(**data)

    @staticmethod
    def parse(entry: Mapping[str, Any]) -> Allowance:
        """From a table's or a prediction's TOML entry (already schema-checked)."""
        return Allowance(
            entry["finding"], entry["why"], entry.get("case"), entry.get("side"), entry.get("until")
        )


@dataclass(frozen=True, slots=True)
class Settled:
    """A run's findings after the accepted and expected ones are taken out."""

    findings: tuple[Finding, ...]  # what still counts (exit 3), accepted-* findings included
    accepted: tuple[tuple[Finding, Allowance], ...] = ()  # both-failed ones among them
    expected: tuple[tuple[Finding, Allowance], ...] = ()
    unmet: tuple[Allowance, ...] = ()  # expected findings that did not occur

    @property
    def known(self) -> frozenset[str]:
        """The cases the table accepts as failing the same way on both sides."""
        return frozenset(
            f.case_id for f, _ in self.accepted if f.code is Code.BOTH_FAILED and f.case_id
        )


def _take(
    findings: list[Finding], allowances: Sequence[Allowance]
) -> tuple[list[tuple[Finding, Allowance]], list[Allowance]]:
    """Remove from findings each one an allowance matches; the pairs, and the allowances
    that matched nothing."""
    taken: list[tuple[Finding, Allowance]] = []
    unused = []
    for allowance in allowances:
        hit = [f for f in findings if allowance.matches(f)]
        if not hit:
            unused.append(allowance)
        for f in hit:
            findings.remove(f)
            taken.append((f, allowance))
    return taken, unused


def known_failures(failing: Mapping[str, str]) -> list[Finding]:
    """One `both-failed` line per case that failed the same way on both sides (case id ->
    the failure; "" when it changed kind, which no entry can accept): what an `[[accept]]`
    entry of that class takes. Not findings: what no entry takes stays a failed case."""
    return [
        Finding(Code.BOTH_FAILED, f"fails the same way on both sides: {kind}", case_id=case_id)
        for case_id, kind in failing.items()
        if kind
    ]


def _unused_failures(
    allowances: Sequence[Allowance], failing: Mapping[str, str]
) -> list[Allowance]:
    """both-failed entries whose case did not fail on both sides (it was fixed, or broke on
    one side only): the entry has nothing left to accept. A case that failed on both sides
    in another way keeps its entry, and its failure."""
    return [a for a in allowances if a.finding == Code.BOTH_FAILED and a.case not in failing]


MERGED_ONLY = frozenset({Code.SHARD_MISSING, Code.SHARD_DUPLICATED})  # found by `merge`


def settle(
    findings: Sequence[Finding],
    accepts: Sequence[Allowance] = (),
    expected: Sequence[Allowance] = (),
    ran: Collection[str] | None = None,
    failing: Mapping[str, str] | None = None,
    *,
    shard: bool = False,
) -> Settled:
    """Take out what the table accepts (while it holds) and what the prediction expects.
    `ran` is the case ids the run ran (None: all): an accepted entry for a case the run did
    not run is not unused. `failing` is the cases that failed on both sides (case id -> the
    failure when both failed the same way, else ""). A `shard` cannot find what only a merge
    finds (`MERGED_ONLY`): an entry for that is not unused there."""
    failing = failing or {}
    left = list(findings)
    live = [a for a in accepts if not a.expired]
    accepted, unused = _take(left, [a for a in live if a.finding != Code.BOTH_FAILED])
    both, _ = _take(known_failures(failing), [a for a in live if a.finding == Code.BOTH_FAILED])
    accepted += both
    unused += _unused_failures(live, failing)
    found = [
        Finding(
            Code.ACCEPTED_EXPIRED,
            f"the table accepted {a.label()} ({a.why}) until {a.until}: {a.expired}; fix it, "
            "or accept it again with a new reason and date",
            a.side,
            a.case,
        )
        for a in accepts
        if a.expired
    ]
    found += [
        Finding(
            Code.ACCEPTED_UNUSED,
            f"the table accepts {a.label()} ({a.why}), but the run found none: remove the "
            "entry, so that the list of accepted findings only shrinks",
            a.side,
            a.case,
        )
        for a in unused
        if (a.case is None or ran is None or a.case in ran)
        and not (shard and a.finding in MERGED_ONLY)
    ]
    taken, unmet = _take(left, expected)
    return Settled((*left, *found), tuple(accepted), tuple(taken), tuple(unmet))
