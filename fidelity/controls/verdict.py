"""The pure core of mutation controls: what a test run of a tree says, and each verdict.

Nothing here touches git, files or processes. A run that crashed, timed out or could not
collect its tests is never read as a catch: only tests that failed or errored in a run that
completed count, and a control whose expected tests failed only by crashing (an import,
name, attribute, type or syntax error: `failkinds`) is `caught-by-error`, not `caught`.
A gate refuses to return 0 before the unmodified tree passed, the no-op control survived
and at least one control was judged.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from fidelity.controls import failkinds
from fidelity.controls.failkinds import Failure
from fidelity.controls.junit import Outcome, Suite, canonical
from fidelity.controls.table import Control, Match
from fidelity.plugins import fidelity_testids as testids
from fidelity.proc import ProcStatus


class RunStatus(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # completed, with at least one failing test
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # killed by a signal
    UNVIABLE = "unviable"  # edit did not apply, collection error, no report


@dataclass(frozen=True, slots=True)
class TreeRun:
    """One test-command run of one tree, as evidence."""

    status: RunStatus
    failing: frozenset[str] = frozenset()
    tests: frozenset[str] = frozenset()
    detail: str = ""
    duration_s: float = 0.0  # the test command itself
    exit_code: int | None = None
    overhead_s: float = 0.0  # worktree, edits and cleanup around it
    # "swap" (a fork of a collected pytest, the edit swapped in), "warm" (a forked pytest
    # that imports the tree afresh), "cold" (a fresh process), "collected" (the unmodified
    # tree's traced run, a collected pytest's first fork) or "" (not run)
    mode: str = ""
    kinds: Mapping[str, Failure] = field(default_factory=dict)  # how each failing test failed
    skipped: frozenset[str] = frozenset()  # tests the run reported skipped


def classify(
    status: ProcStatus, returncode: int | None, suite: Suite | None, output_tail: str = ""
) -> TreeRun:
    """Read a finished command and its JUnit report (None when it wrote none)."""
    if status is ProcStatus.TIMEOUT:
        return TreeRun(RunStatus.TIMEOUT, detail=output_tail or "the test command timed out")
    if status is ProcStatus.CRASHED:
        return TreeRun(RunStatus.CRASHED, detail=f"killed by signal {-(returncode or 0)}")
    if status is ProcStatus.NOT_FOUND:
        return TreeRun(RunStatus.UNVIABLE, detail=f"the test command did not start: {output_tail}")
    if suite is None:
        return TreeRun(
            RunStatus.UNVIABLE,
            detail=f"no JUnit report (exit {returncode}): {output_tail}",
            exit_code=returncode,
        )
    tests = frozenset(suite.results)
    if suite.collection_errors:
        names = ", ".join(sorted(suite.collection_errors))
        first = suite.results[sorted(suite.collection_errors)[0]].message
        return TreeRun(
            RunStatus.UNVIABLE,
            tests=tests,
            detail=f"collection error in {names}: {first}"
            if first
            else f"collection error in {names}",
            exit_code=returncode,
        )
    if suite.failing:
        kinds = {t: suite.results[t].failure or failkinds.UNKNOWN for t in sorted(suite.failing)}
        return TreeRun(
            RunStatus.FAILED, suite.failing, tests, exit_code=returncode, kinds=kinds,
            skipped=suite.ids(Outcome.SKIPPED),
        )  # fmt: skip
    if returncode != 0:
        return TreeRun(
            RunStatus.UNVIABLE,
            tests=tests,
            exit_code=returncode,
            detail=f"exit {returncode} without a failing test: {output_tail}",
        )
    if not tests:
        return TreeRun(RunStatus.UNVIABLE, detail="no test ran", exit_code=returncode)
    skipped = suite.ids(Outcome.SKIPPED)
    return TreeRun(RunStatus.PASSED, tests=tests, exit_code=returncode, skipped=skipped)


def combine(runs: Sequence[tuple[str, TreeRun]]) -> TreeRun:
    """The unmodified tree under every distinct command: it passes only if each run passed."""
    failing = frozenset().union(*(r.failing for _, r in runs))
    tests = frozenset().union(*(r.tests for _, r in runs))
    duration = round(sum(r.duration_s for _, r in runs), 4)
    bad = [(command, r) for command, r in runs if r.status is not RunStatus.PASSED]
    if not bad:
        return TreeRun(RunStatus.PASSED, tests=tests, duration_s=duration)
    command, first = bad[0]
    where = f" (command: {command})" if len(runs) > 1 else ""
    return replace(
        first, failing=failing, tests=tests, detail=first.detail + where, duration_s=duration
    )


class Verdict(enum.StrEnum):
    CAUGHT = "caught"
    CAUGHT_DIFFERENTLY = "caught-differently"
    CAUGHT_BY_ERROR = "caught-by-error"  # the expected tests failed only by crashing
    SURVIVED = "survived"
    RESIDUE_HELD = "residue-held"
    RESIDUE_CLOSED = "residue-closed"  # an expected survivor is now caught: red, record it
    UNVIABLE = "unviable"
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # an extension of the contract's list: a crash is never a catch


MET = frozenset({Verdict.CAUGHT, Verdict.RESIDUE_HELD})


@dataclass(frozen=True, slots=True)
class ControlResult:
    id: str
    verdict: Verdict
    expected: tuple[str, ...]
    failing: tuple[str, ...]
    detail: str = ""
    duration_s: float = 0.0
    match: str = ""
    overhead_s: float = 0.0
    tests_run: int = 0  # how many tests this control's run ran
    selection: str = ""  # which tests ran, and why
    mode: str = ""  # swap, warm, cold, or "" when nothing had to run
    timeout_s: float = 0.0
    log: str = ""
    how: str = ""  # how the tests failed (the expected ones, if caught): `assertion 2, error: X 1`
    kinds: Mapping[str, str] = field(default_factory=dict)  # each failing test: how it failed

    @property
    def met(self) -> bool:
        return self.verdict in MET


def matches(
    expected: Iterable[str], failing: Iterable[str], match: Match, known: Iterable[str] = ()
) -> bool:
    """Whether the failing set meets the expectation; a function id in expected stands for
    all its parametrized cases among known (the unmodified tree's tests) and failing."""
    wanted, failed = _spelled(expected, failing, known)
    want, got = set(wanted), set(failed)
    return want == got if match is Match.EXACT else want <= got


def _spelled(
    expected: Iterable[str], failing: Iterable[str], known: Iterable[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(the expected tests, each function id expanded to its cases; the failing tests), each
    keyed by its canonical id and spelled as the report spells it."""
    failed = {canonical(t): t for t in failing}
    wanted: dict[str, str] = {}
    for e, hits in testids.expand(expected, (*known, *failed.values())).items():
        for hit in hits or [e]:
            wanted.setdefault(canonical(hit), hit)
    return wanted, failed


def difference(
    r: ControlResult, known: Iterable[str] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(expected tests that did not fail, failing tests not expected) of a control result:
    the two halves of `matches`. Under `includes` extra failures are allowed, not listed."""
    wanted, failed = _spelled(r.expected, r.failing, known)
    missing = sorted(t for c, t in wanted.items() if c not in failed)
    extra = (
        []
        if r.match == Match.INCLUDES.value
        else [t for c, t in sorted(failed.items(), key=lambda x: x[1]) if c not in wanted]
    )
    return tuple(missing), tuple(extra)


_RUN_VERDICT = {
    RunStatus.TIMEOUT: Verdict.TIMEOUT,
    RunStatus.CRASHED: Verdict.CRASHED,
    RunStatus.UNVIABLE: Verdict.UNVIABLE,
}


def judge(control: Control, run: TreeRun, known: Iterable[str] = ()) -> ControlResult:
    """The verdict of one control's run against its expectation (known: the unmodified
    tree's tests, which a parametrized function id in caught_by expands to)."""
    failing, known = tuple(sorted(run.failing)), tuple(known)
    kinds = {t: failkinds.declared(f, control.raises) for t, f in run.kinds.items()}
    counted = _expected_failures(control, failing, kinds, known)

    def result(verdict: Verdict, detail: str = "") -> ControlResult:
        match = str(control.match) if control.caught_by else ""
        judged = counted if verdict in (Verdict.CAUGHT, Verdict.CAUGHT_BY_ERROR) else kinds
        return ControlResult(
            control.id,
            verdict,
            control.caught_by,
            failing,
            detail,
            run.duration_s,
            match,
            run.overhead_s,
            len(run.tests),
            mode=run.mode,
            timeout_s=control.timeout_s or 0.0,
            how=failkinds.summary(judged),
            kinds={t: f.label() for t, f in kinds.items()},
        )

    if run.status in _RUN_VERDICT:
        return result(_RUN_VERDICT[run.status], run.detail)
    if not failing:
        if control.survives:
            return result(Verdict.RESIDUE_HELD, control.residue)
        return result(Verdict.SURVIVED, "no test failed" + _skipped(control, run))
    if control.survives:
        return result(Verdict.RESIDUE_CLOSED, f"residue now caught; was: {control.residue}")
    if not matches(control.caught_by, failing, control.match, known):
        said = f"expected ({control.match}) differs from failing" + _skipped(control, run)
        return result(Verdict.CAUGHT_DIFFERENTLY, said)
    if failkinds.only_errors(counted.values()):
        return result(Verdict.CAUGHT_BY_ERROR, _by_error(counted))
    return result(Verdict.CAUGHT)


def _skipped(control: Control, run: TreeRun) -> str:
    """The expected tests the run skipped: a skipped test can never catch the edit."""
    skipped = {canonical(t) for t in run.skipped}
    named = [t for t in control.caught_by if canonical(t) in skipped]
    if not named:
        return ""
    return f"; {', '.join(named)} skipped, so never run: a skipped test catches nothing"


def _expected_failures(
    control: Control, failing: Sequence[str], kinds: Mapping[str, Failure], known: Iterable[str]
) -> dict[str, Failure]:
    """How each expected test that failed failed (every failing test, when none is expected)."""
    wanted, failed = _spelled(control.caught_by, failing, known)
    hits = [t for c, t in failed.items() if c in wanted] if control.caught_by else list(failing)
    return {t: kinds.get(t, failkinds.UNKNOWN) for t in hits}


def _by_error(counted: Mapping[str, Failure]) -> str:
    first = sorted(counted.items())[0]
    return (
        f"every expected test failed by crashing ({failkinds.summary(counted)}; first: "
        f"{first[0]}), not by an assertion: the edit broke the code, so this shows only that "
        "the tests ran it. Make the edit a change of behaviour, or, if raising that exception "
        "is the behaviour under test, name it in the control's `raises`"
    )


def identical_subsets(results: Sequence[ControlResult]) -> list[tuple[str, ...]]:
    """Groups of controls whose failing sets are the same: they do not discriminate."""
    groups: dict[frozenset[str], list[str]] = {}
    for r in results:
        if r.failing and r.verdict not in _RUN_VERDICT.values():
            groups.setdefault(frozenset(canonical(t) for t in r.failing), []).append(r.id)
    return [tuple(ids) for ids in groups.values() if len(ids) > 1]


@dataclass(frozen=True, slots=True)
class Report:
    """Every verdict of one `controls run`, with what makes it trustworthy."""

    rev: str
    sha: str
    table: str
    baseline: TreeRun
    noop: ControlResult | None
    results: tuple[ControlResult, ...]
    selected: int = 0
    skipped: str = ""  # non-empty: nothing to judge, on purpose (--in-diff), and why
    notes: tuple[str, ...] = ()  # said above the verdicts (an uncommitted table, the guard)
    guard: tuple[str, ...] = ()  # top-level modules the import guard covered
    logs: str = ""  # the run directory

    @property
    def sound(self) -> bool:
        return self.baseline.status is RunStatus.PASSED

    @property
    def leaks(self) -> bool:
        return self.noop is not None and self.noop.verdict is not Verdict.RESIDUE_HELD

    def exit_code(self) -> int:
        """0 skipped on purpose; 3 unsound, leaking or nothing judged; 1 a control missed."""
        if self.skipped:
            return 0
        if not self.sound or self.leaks or self.noop is None or not self.results:
            return 3
        return 0 if all(r.met for r in self.results) else 1

    def never_failed(self) -> tuple[str, ...]:
        """Tests of the unmodified tree that no control of this run has seen fail."""
        seen: set[str] = set()
        for r in self.results:
            if r.verdict not in _RUN_VERDICT.values():
                seen |= {canonical(t) for t in r.failing}
        return tuple(sorted(t for t in self.baseline.tests if canonical(t) not in seen))
