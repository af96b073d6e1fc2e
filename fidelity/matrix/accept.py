"""Accepted and expected findings: a known deviation stated in the open, never silent.

A table's `[[accept]]` entries stand for every run until they expire; a prediction's
`findings` belong to one change. Either turns a matching finding from exit 3 into a line
every report shows and the verdict counts. A table entry that matches nothing in a run
that could have produced it is itself a finding (`accepted-unused`), so the list only
shrinks; an expired one gives its findings back and says so (`accepted-expired`). A finding
that means the evidence was altered, or that the gate was loosened, can never be accepted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from fidelity.matrix.findings import Code, Finding

NEVER = frozenset(
    {
        Code.EVIDENCE_ALTERED,
        Code.RUN_JSON_ALTERED,
        Code.REJUDGED_DIFFERS,
        Code.CHECKOUT_CHANGED,
        Code.HARNESS_CHANGED,
        Code.TOLERANCE_WIDENED,
        Code.NOTHING_COMPARED,
        Code.PREDICTION_UNCOMMITTED,
        Code.PREDICTION_DIFFERS,
        Code.PREDICTION_NOT_STATED,
        Code.PREDICTION_LATE,
        Code.PARTIAL_PREDICTION,
        Code.ACCEPTED_UNUSED,
        Code.ACCEPTED_EXPIRED,
        Code.PARTIAL_RUN,
    }
)


def problem(finding: str, *, table: bool = True) -> str | None:
    """Why a finding class cannot be accepted (`table`) or expected (a prediction), or None.
    `both-failed` is a table's class alone: a prediction says `failing` instead."""
    known = {c.value for c in Code}
    if not table:
        known.discard(Code.BOTH_FAILED.value)
    if finding not in known:
        return f"{finding!r} is not a finding; known: {', '.join(sorted(known - NEVER))}" + (
            "" if table else "; a case that fails the same way on both sides: `failing`"
        )
    if finding in NEVER:
        return (
            f"{finding} can never be accepted: it means the evidence, the prediction or the "
            "gate itself was changed; fix the cause instead"
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

    def said(self) -> str:
        until = f"; until {self.until}" if self.until else ""
        return f"{self.label()}: {self.why}{until}"

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


def settle(
    findings: Sequence[Finding],
    accepts: Sequence[Allowance] = (),
    expected: Sequence[Allowance] = (),
    ran: Collection[str] | None = None,
    failing: Mapping[str, str] | None = None,
) -> Settled:
    """Take out what the table accepts (while it holds) and what the prediction expects.
    `ran` is the case ids the run ran (None: all): an accepted entry for a case the run did
    not run is not unused. `failing` is the cases that failed on both sides (case id -> the
    failure when both failed the same way, else "")."""
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
        if a.case is None or ran is None or a.case in ran
    ]
    taken, unmet = _take(left, expected)
    return Settled((*left, *found), tuple(accepted), tuple(taken), tuple(unmet))
