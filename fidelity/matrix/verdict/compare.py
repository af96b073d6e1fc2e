"""The comparison: pure functions from two sides' evidence to one verdict per case.

Every declared case lands in exactly one class, so a report always carries its
denominator (declared, executed, compared) and nothing can silently drop out.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from fidelity.kinds.diffs import OutputDiff
from fidelity.matrix.verdict import spread
from fidelity.matrix.verdict.evidence import CaseEvidence, ReplayVerdict, SideEvidence

Explanations = Mapping[str, Sequence[OutputDiff]]  # case id -> explained changed outputs


class Verdict(enum.StrEnum):
    IDENTICAL = "identical"
    MOVED = "moved"
    WITHIN_TOLERANCE = "within-tolerance"
    WITHIN_SPREAD = "within-spread"  # differs only as runs of one commit differ
    BASELINE_FAILED = "baseline-failed"
    CANDIDATE_ONLY_FAILED = "candidate-only-failed"
    BOTH_FAILED = "both-failed"
    MISSING_EVIDENCE = "missing-evidence"
    DEFINITION_DIFFERS = "definition-differs"
    NOT_COMPARED = "not-compared"


FAILURES = frozenset({Verdict.BASELINE_FAILED, Verdict.CANDIDATE_ONLY_FAILED, Verdict.BOTH_FAILED})
COMPARED = frozenset(
    {Verdict.IDENTICAL, Verdict.WITHIN_TOLERANCE, Verdict.WITHIN_SPREAD, Verdict.MOVED}
)
SWAPPED = {
    Verdict.BASELINE_FAILED: Verdict.CANDIDATE_ONLY_FAILED,
    Verdict.CANDIDATE_ONLY_FAILED: Verdict.BASELINE_FAILED,
}


@dataclass(frozen=True, slots=True)
class FileDelta:
    """Files that differ between sides: in both but different, candidate-only, baseline-only."""

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.missing)

    @property
    def count(self) -> int:
        return len(self.changed) + len(self.added) + len(self.missing)


@dataclass(frozen=True, slots=True)
class CaseResult:
    case_id: str
    verdict: Verdict
    outputs: FileDelta = FileDelta()
    cache: FileDelta = FileDelta()
    detail: str = ""
    explained: tuple[OutputDiff, ...] = ()
    missing: tuple[str, ...] = ()  # required outputs no file matched, per side
    unsure: str = ""  # a nondeterministic case's move its runs were too few to judge
    replay: tuple[tuple[str, str], ...] = ()  # (side, replay verdict) of a replayed case
    same_failure: str = ""  # both-failed the same way: the failure, as `failure_kind` says it


@dataclass(frozen=True, slots=True)
class Summary:
    declared: int
    executed_baseline: int
    executed_candidate: int
    compared: int
    identical: int
    within_tolerance: int
    moved: int
    failures: int
    missing_evidence: int
    definition_differs: int
    not_compared: int
    cache_files_baseline: int
    cache_files_candidate: int
    cache_files_differ: int
    within_spread: int = 0  # differ only as runs of one commit differ (`spread`)
    replay_failures: int = 0  # cases a side's replay showed diverging, not cached or failing


@dataclass(frozen=True, slots=True)
class Comparison:
    cases: tuple[CaseResult, ...]
    summary: Summary


def file_delta(base: Mapping[str, str], cand: Mapping[str, str]) -> FileDelta:
    return FileDelta(
        changed=tuple(sorted(p for p in base.keys() & cand.keys() if base[p] != cand[p])),
        added=tuple(sorted(cand.keys() - base.keys())),
        missing=tuple(sorted(base.keys() - cand.keys())),
    )


def _failure(base: CaseEvidence, cand: CaseEvidence) -> Verdict | None:
    if base.status.failed and cand.status.failed:
        return Verdict.BOTH_FAILED
    if base.status.failed:
        return Verdict.BASELINE_FAILED
    if cand.status.failed:
        return Verdict.CANDIDATE_ONLY_FAILED
    return None


_ERROR_CLASS = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault)\b")


def error_class(ev: CaseEvidence) -> str:
    """The exception class named at the start of the last line of the case's stderr, as a
    Python traceback ends (`ValueError: ...`); "" when the last line names none."""
    found = _ERROR_CLASS.match(ev.stderr_tail.rpartition(" | ")[2])
    return found.group(0) if found else ""


def failure_kind(ev: CaseEvidence) -> str:
    """How one side failed, in words: its status, exit code and error class. Two sides
    fail the same way when these words are equal."""
    said = [f"exit {ev.exit_code}"] if ev.exit_code is not None else []
    said += [error_class(ev)] if error_class(ev) else []
    return f"{ev.status} ({', '.join(said)})" if said else str(ev.status)


def _both_failed(case_id: str, base: CaseEvidence, cand: CaseEvidence) -> CaseResult:
    """Both sides failed: the same way (`same_failure`, a known failure can be stated) or
    not (the failure changed kind: a move, as any failure is)."""
    kinds = failure_kind(base), failure_kind(cand)
    detail = _status_detail(base, cand)
    if kinds[0] == kinds[1]:
        return CaseResult(case_id, Verdict.BOTH_FAILED, detail=detail, same_failure=kinds[0])
    detail += f" (the failure changed kind: baseline {kinds[0]}, candidate {kinds[1]})"
    return CaseResult(case_id, Verdict.BOTH_FAILED, detail=detail)


def _status_detail(base: CaseEvidence, cand: CaseEvidence) -> str:
    """Which side failed, how, and the last words of its stderr."""
    parts = []
    for role, ev in (("baseline", base), ("candidate", cand)):
        if ev.status.failed:
            code = f" (exit {ev.exit_code})" if ev.exit_code is not None else ""
            said = (
                f": {ev.stderr_tail}" if ev.stderr_tail else (f": {ev.error}" if ev.error else "")
            )
            parts.append(f"{role} {ev.status}{code}{said}")
    return "; ".join(parts)


def _definition_detail(
    case_id: str,
    harness_sha: str,
    base: CaseEvidence,
    cand: CaseEvidence,
    own: Sequence[tuple[str, Mapping[str, str] | None]],
) -> str:
    if base.definition_sha != cand.definition_sha:
        return "the two sides ran different definitions of this case"
    if base.definition_sha != harness_sha:
        return "the evidence was produced from a definition other than the harness table's"
    changed = [
        role
        for role, defs in own
        if defs is not None and case_id in defs and defs[case_id] != harness_sha
    ]
    if changed:
        sides = " and ".join(changed)
        return f"the harness table defines this case differently from the {sides}'s own table"
    return ""


def compare_case(
    case_id: str,
    harness_sha: str,
    base: CaseEvidence | None,
    cand: CaseEvidence | None,
    *,
    own: Sequence[tuple[str, Mapping[str, str] | None]] = (),
    explained: Sequence[OutputDiff] = (),
) -> CaseResult:
    """Classify one declared case, with each side's replay verdict beside its class."""
    result = _classify(case_id, harness_sha, base, cand, own=own, explained=explained)
    replays = tuple(
        (role, ev.replay.verdict.value)
        for role, ev in (("baseline", base), ("candidate", cand))
        if ev is not None and ev.replay is not None
    )
    return replace(result, replay=replays) if replays else result


def _classify(
    case_id: str,
    harness_sha: str,
    base: CaseEvidence | None,
    cand: CaseEvidence | None,
    *,
    own: Sequence[tuple[str, Mapping[str, str] | None]] = (),
    explained: Sequence[OutputDiff] = (),
) -> CaseResult:
    """Classify one declared case; `own` holds each side's own-table definitions, if read."""
    if base is None or cand is None or not base.status.executed or not cand.status.executed:
        ran = [
            r for r, ev in (("baseline", base), ("candidate", cand)) if ev and ev.status.executed
        ]
        detail = f"ran only on {ran[0]}" if ran else "ran on neither side"
        return CaseResult(case_id, Verdict.NOT_COMPARED, detail=detail)
    definition = _definition_detail(case_id, harness_sha, base, cand, own)
    if definition:
        return CaseResult(case_id, Verdict.DEFINITION_DIFFERS, detail=definition)
    failure = _failure(base, cand)
    if failure is Verdict.BOTH_FAILED:
        return _both_failed(case_id, base, cand)
    if failure is not None:
        return CaseResult(case_id, failure, detail=_status_detail(base, cand))
    missing = [
        f"{role}: no file matches {glob!r}"
        for role, ev in (("baseline", base), ("candidate", cand))
        for glob in ev.missing_outputs
    ]
    outputs = file_delta(base.outputs, cand.outputs)
    cache = file_delta(base.cache, cand.cache)
    if outputs or cache:  # every output that exists is compared, whatever else is missing
        moved = _spread(_moved(case_id, outputs, cache, explained), base, cand)
        if not missing:
            return moved
        verdict = Verdict.MOVED if moved.verdict is Verdict.MOVED else Verdict.MISSING_EVIDENCE
        detail = f"{moved.detail}; {'; '.join(missing)}"
        return replace(moved, verdict=verdict, detail=detail, missing=tuple(missing))
    if not missing and not (base.outputs or cand.outputs or base.cache or cand.cache):
        missing = ["no output or cache file on either side: nothing to compare"]
    if missing:
        return CaseResult(
            case_id, Verdict.MISSING_EVIDENCE, detail="; ".join(missing), missing=tuple(missing)
        )
    return CaseResult(case_id, Verdict.IDENTICAL, outputs, cache)


def _moved(
    case_id: str, outputs: FileDelta, cache: FileDelta, explained: Sequence[OutputDiff]
) -> CaseResult:
    """Moved, unless every changed output is explained as within its declared tolerance."""
    by_path = {e.path: e for e in explained if e.path in outputs.changed}
    tolerated = (
        not cache
        and not outputs.added
        and not outputs.missing
        and all(p in by_path and by_path[p].within_tolerance for p in outputs.changed)
    )
    if tolerated:
        detail = "; ".join(f"{p}: {by_path[p].summary}" for p in outputs.changed)
        return CaseResult(
            case_id, Verdict.WITHIN_TOLERANCE, outputs, cache, detail, tuple(by_path.values())
        )
    what = [f"{n} {label}" for n, label in ((outputs.count, "output"), (cache.count, "cache")) if n]
    return CaseResult(
        case_id,
        Verdict.MOVED,
        outputs,
        cache,
        ", ".join(what) + " files differ",
        tuple(by_path.values()),
    )


def _spread(moved: CaseResult, base: CaseEvidence, cand: CaseEvidence) -> CaseResult:
    """A move of a nondeterministic case within both sides' spread is `within-spread`; one
    its runs cannot judge keeps `moved`, with why (a finding)."""
    if moved.verdict is not Verdict.MOVED:
        return moved
    tolerated = {e.path for e in moved.explained if e.within_tolerance}
    o, c = moved.outputs, moved.cache
    files = [p for p in (*o.changed, *o.added, *o.missing) if p not in tolerated]
    files += [f"cache/{p}" for p in (*c.changed, *c.added, *c.missing)]
    judged = spread.judge(files, base, cand, {e.path: e for e in moved.explained})
    if judged is None:
        return moved
    if judged.within:
        return replace(moved, verdict=Verdict.WITHIN_SPREAD, detail=judged.detail)
    # why its spread does not hold it first: a case's line is cut to fit, from the end
    return replace(moved, detail=f"{judged.detail}; {moved.detail}", unsure=judged.unsure)


def compare(
    declared: Sequence[tuple[str, str]],
    baseline: SideEvidence,
    candidate: SideEvidence,
    explanations: Explanations | None = None,
) -> Comparison:
    """Compare two sides over the declared (case id, harness definition sha) pairs."""
    own = (("baseline", baseline.own_definitions), ("candidate", candidate.own_definitions))
    explanations = explanations or {}
    results = tuple(
        compare_case(
            cid,
            sha,
            baseline.cases.get(cid),
            candidate.cases.get(cid),
            own=own,
            explained=explanations.get(cid, ()),
        )
        for cid, sha in declared
    )
    return Comparison(results, summarize(results, declared, baseline, candidate))


def summarize(
    results: Sequence[CaseResult],
    declared: Sequence[tuple[str, str]],
    baseline: SideEvidence,
    candidate: SideEvidence,
) -> Summary:
    ids = [cid for cid, _ in declared]

    def executed(side: SideEvidence) -> int:
        return sum(1 for cid in ids if cid in side.cases and side.cases[cid].status.executed)

    def count(*verdicts: Verdict) -> int:
        return sum(1 for r in results if r.verdict in verdicts)

    compared = [r for r in results if r.verdict in COMPARED]
    return Summary(
        declared=len(ids),
        executed_baseline=executed(baseline),
        executed_candidate=executed(candidate),
        compared=len(compared),
        identical=count(Verdict.IDENTICAL),
        within_tolerance=count(Verdict.WITHIN_TOLERANCE),
        within_spread=count(Verdict.WITHIN_SPREAD),
        moved=count(Verdict.MOVED),
        failures=count(*FAILURES),
        missing_evidence=count(Verdict.MISSING_EVIDENCE),
        definition_differs=count(Verdict.DEFINITION_DIFFERS),
        not_compared=count(Verdict.NOT_COMPARED),
        cache_files_baseline=sum(len(e.cache) for cid in ids if (e := baseline.cases.get(cid))),
        cache_files_candidate=sum(len(e.cache) for cid in ids if (e := candidate.cases.get(cid))),
        cache_files_differ=sum(r.cache.count for r in compared),
        replay_failures=sum(1 for r in results if any(ReplayVerdict(v).bad for _, v in r.replay)),
    )
