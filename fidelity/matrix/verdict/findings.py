"""Provenance findings: every reason the comparison's answer could not be trusted.

Pure functions over the run's recorded facts. Any finding turns the gate's exit code to 3,
whatever the comparison says, and is printed above the verdict.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from fidelity.matrix.verdict.compare import CaseResult, Comparison, Verdict
from fidelity.matrix.verdict.evidence import SideEvidence
from fidelity.matrix.verdict.widening import Specs, case_widenings
from fidelity.proc import ProcStatus
from fidelity.text import counted


class Code(enum.StrEnum):
    DIRTY_SIDE = "dirty-side"
    DIRTY_HARNESS = "dirty-harness"
    SHADOWED_IMPORT = "shadowed-import"
    UNRESOLVED_IMPORT = "unresolved-import"
    SETUP_FAILED = "setup-failed"
    EXECUTED_DIFFERS = "executed-differs"
    NOTHING_COMPARED = "nothing-compared"
    MISSING_EVIDENCE = "missing-evidence"
    DEFINITION_DIFFERS = "definition-differs"
    CACHE_NOT_EMPTY = "cache-not-empty"
    WORKTREE_NOT_REMOVED = "worktree-not-removed"
    EVIDENCE_ALTERED = "evidence-altered"
    TOLERANCE_WIDENED = "tolerance-widened"
    PREDICTION_UNCOMMITTED = "prediction-uncommitted"
    PREDICTION_DIFFERS = "prediction-differs"
    PREDICTION_NOT_STATED = "prediction-not-stated"
    PREDICTION_LATE = "prediction-late"
    COMPARATOR_LIMIT = "comparator-limit"
    SIDE_CHANGED = "side-changed"
    CHECKOUT_CHANGED = "checkout-changed"
    LEFTOVER_PROCESS = "leftover-process"
    LINKED_EVIDENCE = "linked-evidence"
    RUN_JSON_ALTERED = "run-json-altered"
    REJUDGED_DIFFERS = "rejudged-differs"
    PARTIAL_PREDICTION = "partial-prediction"
    IGNORE_UNMATCHED = "ignore-unmatched"
    UNEXPECTED_OUTPUT = "unexpected-output"
    SHARD_MISSING = "shard-missing"
    SHARD_DUPLICATED = "shard-duplicated"
    HARNESS_CHANGED = "harness-changed"
    ACCEPTED_UNUSED = "accepted-unused"
    ACCEPTED_EXPIRED = "accepted-expired"
    SPREAD_TOO_SMALL = "spread-too-small"
    FOLDER_REPLACED = "folder-replaced"
    PARTIAL_RUN = "partial-run"
    # not a finding: the class of a both-sides failure an `[[accept]]` entry states (`accept`)
    BOTH_FAILED = "both-failed"


@dataclass(frozen=True, slots=True)
class Finding:
    code: Code
    message: str
    side: str | None = None
    case_id: str | None = None


@dataclass(frozen=True, slots=True)
class Harness:
    """Where the comparison's definition was read from."""

    rev: str  # as given, or "WORKTREE" for the current checkout's files
    sha: str  # the commit the harness rev names (HEAD for the checkout)
    dirty: bool  # whether the harness tree had uncommitted changes anywhere
    dirty_paths: tuple[str, ...]
    table_path: str
    table_sha256: str
    table_dirty: bool  # the table read differs from what is committed at `sha`
    tree: str = ""  # the harness's tree id (of the checkout's files, read from the checkout)
    reads: bool = False  # cases read the harness's files as {harness}
    paths: tuple[str, ...] = ()  # what {harness} holds; () the whole tree
    changed: tuple[str, ...] = ()  # what cases added, changed or removed under {harness}


def _side_findings(side: SideEvidence, declared: int, kind: str) -> Iterator[Finding]:
    role = side.role
    if side.source_dirty:
        shown = ", ".join(side.dirty_paths[:5]) + (" ..." if len(side.dirty_paths) > 5 else "")
        yield Finding(
            Code.DIRTY_SIDE,
            f"the {role} worktree was not clean before running "
            f"({counted(len(side.dirty_paths), 'path')}: "
            f"{shown}); its evidence may not be what {side.sha[:12]} produces",
            role,
        )
    failed = [s for s in side.setup if s.status is not ProcStatus.OK]
    if failed:
        yield Finding(Code.SETUP_FAILED, f"setup `{failed[0].argv}` {failed[0].status}", role)
    for imp in side.imports:
        if imp.error:
            yield Finding(
                Code.UNRESOLVED_IMPORT, f"module {imp.module!r} did not resolve: {imp.error}", role
            )
        elif not imp.inside:
            yield Finding(
                Code.SHADOWED_IMPORT,
                f"module {imp.module!r} resolves to {imp.origin}, outside the {role} worktree"
                + (f" ({imp.note})" if imp.note else "")
                + "; an editable install or PYTHONPATH entry shadows the code under test",
                role,
            )
    executed = sum(1 for e in side.cases.values() if e.status.executed)
    if executed != declared:
        yield Finding(
            Code.EXECUTED_DIFFERS, f"{role} executed {executed} of {declared} {kind} cases", role
        )
    if side.changed:
        yield Finding(
            Code.SIDE_CHANGED,
            f"the {role} cases changed their own worktree ({'; '.join(side.changed)}); "
            f"its evidence may not be what {side.sha[:12]} produces. A case must not run git "
            "or edit tracked files in its worktree",
            role,
        )
    yield from _case_findings(side)
    if not side.worktree_removed and not side.kept:  # a kept set-up worktree is meant to stay
        yield Finding(
            Code.WORKTREE_NOT_REMOVED,
            f"the {role} worktree {side.worktree} could not be removed; remove it and run "
            "`git worktree prune`",
            role,
        )


def _case_findings(side: SideEvidence) -> Iterator[Finding]:
    role = side.role
    for e in side.cases.values():
        if e.leftover:
            yield Finding(
                Code.LEFTOVER_PROCESS,
                f"the case left {len(e.leftover)} process{'' if len(e.leftover) == 1 else 'es'} "
                "running after it exited, killed: "
                f"{'; '.join(e.leftover[:3])}; they could have written evidence after it was read",
                role,
                e.case_id,
            )
        for folder in e.replaced:
            yield Finding(
                Code.FOLDER_REPLACED,
                f"{folder}: nothing the case wrote there was kept or compared, and through a "
                "link it may have shared it with the other side; a case must write into the "
                "folders it is given, not replace them",
                role,
                e.case_id,
            )
        if e.links:
            yield Finding(
                Code.LINKED_EVIDENCE,
                f"{'; '.join(e.links[:3])}: links are never followed (their targets are not kept "
                "or compared); write real files into {out} and {cache}",
                role,
                e.case_id,
            )
        if e.unexpected:
            yield Finding(
                Code.UNEXPECTED_OUTPUT,
                f"the case wrote {', '.join(e.unexpected[:3])}, declared absent",
                role,
                e.case_id,
            )
        if e.output_problems:
            yield Finding(Code.MISSING_EVIDENCE, "; ".join(e.output_problems), role, e.case_id)
        if e.cache_preexisting:
            yield Finding(
                Code.CACHE_NOT_EMPTY,
                f"cache dir held {counted(len(e.cache_preexisting), 'file')} before the case ran",
                role,
                e.case_id,
            )


def _explained_findings(result: CaseResult) -> Iterator[Finding]:
    for explained in result.explained:
        if explained.limit:
            why = f"{explained.path} could not be compared by value: {explained.limit}"
            yield Finding(Code.COMPARATOR_LIMIT, why, case_id=result.case_id)
        if explained.unmatched:
            why = (
                f"{explained.path}: ignore {', '.join(map(repr, explained.unmatched))} matched "
                "nothing on either side; a typo here would hide nothing it meant to, so fix "
                "or remove it"
            )
            yield Finding(Code.IGNORE_UNMATCHED, why, case_id=result.case_id)


def _widenings(specs: Mapping[str, Specs], baseline: SideEvidence) -> Iterator[Finding]:
    own = baseline.own_compare
    if own is None:
        return
    for case_id, case_specs in specs.items():
        if case_id in own:
            for reason in case_widenings(case_specs, own[case_id]):
                yield Finding(
                    Code.TOLERANCE_WIDENED,
                    f"{reason} since the baseline's own table; a gate must not be widened "
                    "to let a change through (land the wider tolerance first, on its own)",
                    case_id=case_id,
                )


def _shown(paths: Sequence[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def harness_findings(harness: Harness) -> Iterator[Finding]:
    """An uncommitted table, uncommitted files the cases read as {harness}, and what the
    cases changed there. Known before any case runs, but the last."""
    if harness.table_dirty:
        yield Finding(
            Code.DIRTY_HARNESS,
            f"the case table {harness.table_path} has uncommitted changes at the harness; "
            "commit it so that the comparison can be reproduced",
        )
    if harness.reads:
        held = [
            d
            for d in harness.dirty_paths
            if d != harness.table_path
            and (not harness.paths or any(d == p or d.startswith(p + "/") for p in harness.paths))
        ]
        if held:
            yield Finding(
                Code.DIRTY_HARNESS,
                f"the cases read the checkout's files as {{harness}}, and "
                f"{counted(len(held), 'uncommitted path')} are among them ({_shown(held)}); "
                "commit them (or run with --harness REV) so that the comparison can be "
                "reproduced",
            )
    if harness.changed:
        yield Finding(
            Code.HARNESS_CHANGED,
            f"cases added, changed or removed {counted(len(harness.changed), 'file')} in the "
            f"harness checkout ({_shown(harness.changed)}); the sides may have read different "
            "harnesses. A case must write only into {out} and {cache}",
        )


def provenance(
    harness: Harness,
    baseline: SideEvidence,
    candidate: SideEvidence,
    comparison: Comparison,
    *,
    specs: Mapping[str, Specs] | None = None,
    checkout_changes: tuple[str, ...] = (),
    kind: str = "declared",
) -> tuple[Finding, ...]:
    """Every finding for a run, harness first, then sides, then per-case evidence. `kind`:
    what the comparison's cases are, "declared" or (a partial run) "selected"."""
    found: list[Finding] = list(_widenings(specs or {}, baseline))
    if checkout_changes:
        found.append(
            Finding(
                Code.CHECKOUT_CHANGED,
                f"your repository changed while the run ran: {'; '.join(checkout_changes)}. A "
                "case (or something else) wrote outside its worktree; check these and undo "
                "what you did not mean",
            )
        )
    found.extend(harness_findings(harness))
    declared = comparison.summary.declared
    for side in (baseline, candidate):
        found.extend(_side_findings(side, declared, kind))
    for result in comparison.cases:
        found.extend(_explained_findings(result))
        if result.missing:
            found.append(
                Finding(Code.MISSING_EVIDENCE, "; ".join(result.missing), case_id=result.case_id)
            )
        elif result.verdict is Verdict.MISSING_EVIDENCE:
            found.append(Finding(Code.MISSING_EVIDENCE, result.detail, case_id=result.case_id))
        elif result.verdict is Verdict.DEFINITION_DIFFERS:
            found.append(Finding(Code.DEFINITION_DIFFERS, result.detail, case_id=result.case_id))
        if result.unsure:
            found.append(Finding(Code.SPREAD_TOO_SMALL, result.unsure, case_id=result.case_id))
    if comparison.summary.compared == 0 and comparison.summary.declared > 0:
        found.append(
            Finding(
                Code.NOTHING_COMPARED,
                f"no case was compared ({comparison.summary.declared} {kind}); "
                "the gate cannot hold without evidence",
            )
        )
    return tuple(found)


def exit_code(comparison: Comparison, findings: tuple[Finding, ...], known: int = 0) -> int:
    """0 identical and clean; 1 moved, failed, or a replay that diverged, cached nothing or
    failed; 3 findings or nothing compared. `known` of the failures are cases the table
    accepts as failing the same way on both sides."""
    summary = comparison.summary
    if findings or summary.compared == 0:
        return 3
    if summary.moved or summary.failures > known or summary.replay_failures:
        return 1
    held = summary.identical + summary.within_tolerance + summary.within_spread
    # the rest carried findings, every one of them accepted (shown with the verdict)
    assert 0 < held <= summary.declared, "a gate cannot hold without comparing"
    return 0
