"""What each gate found, and the verdict over all of them (pure values)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fidelity.text import counted


class Status(enum.StrEnum):
    OK = "ok"
    FAILED = "FAIL"
    INVALID = "invalid"  # the gate's own [tool.fidelity] configuration is not valid (exit 2)
    UNTRUSTED = "untrusted"  # could not be judged: a shallow clone, an empty record
    NOT_APPLICABLE = "n/a"  # configured, but nothing it judges is in this change
    NOT_CONFIGURED = "off"  # the gate's own configuration does not exist


@dataclass(frozen=True, slots=True)
class GateResult:
    """One gate's line: its status, a one-line summary and (on failure) located details."""

    gate: str
    status: Status
    summary: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    """Every gate's result over one judged content (`the index` or `the work tree`)."""

    judged: str
    results: tuple[GateResult, ...]
    everything: bool = False

    def count(self, status: Status) -> int:
        return sum(r.status is status for r in self.results)

    def exit_code(self) -> int:
        """2 when a gate's configuration is invalid (it judged nothing: fix that first); 1 on
        a failure; 3 when a gate could not judge, or when no gate ran although one should
        have (none configured, or --all); else 0."""
        if self.count(Status.INVALID):
            return 2
        if self.count(Status.FAILED):
            return 1
        if self.count(Status.UNTRUSTED):
            return 3
        if self.count(Status.OK):
            return 0
        return 0 if self.count(Status.NOT_APPLICABLE) and not self.everything else 3

    def closing(self) -> str:
        ok, failed = self.count(Status.OK), self.count(Status.FAILED)
        line = f"{counted(ok, 'gate')} ok, {failed} failed"
        if invalid := self.count(Status.INVALID):
            line += f", {invalid} not configured validly (exit 2: fix the configuration)"
        untrusted, idle = self.count(Status.UNTRUSTED), self.count(Status.NOT_APPLICABLE)
        if untrusted:
            line += f", {untrusted} could not judge"
        if idle:
            line += f"; {idle} not applicable to this change"
        if not ok and not failed and not untrusted and not invalid:
            if idle and not self.everything:
                line += " (nothing any gate judges changed: exit 0)"
            elif idle:
                line += (
                    " (nothing was judged: no configured gate applies here, as said above "
                    "(trailers judge a message: --commit-msg FILE or a range); exit 3)"
                )
            else:
                line += (
                    " (nothing was judged: configure a gate, see `fidelity preflight --list`; "
                    "exit 3)"
                )
        return line

    def to_json(self) -> dict[str, object]:
        return {
            "judged": self.judged,
            "exit_code": self.exit_code(),
            "closing": self.closing(),
            "gates": [
                {
                    "gate": r.gate,
                    "status": r.status.name.lower(),
                    "summary": r.summary,
                    "details": list(r.details),
                }
                for r in self.results
            ],
        }
