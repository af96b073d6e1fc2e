"""The no-op control: the unmodified tree run again the way the controls run, after them, so
that what a lane leaves behind, or a fork that fails where a fresh process passes, shows as
a no-op that did not survive. Its command, its tests (those that failed under the controls
of its command, known once they have ended: `Finished`), and its parts: with two or more
lanes its tests are split into one part per lane (whole test files, in order, of about
equal traced time), queued after every control and run side by side, so that the last
stretch of a run leaves no lane idle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from fidelity.controls.selection import Selection, Trace
from fidelity.controls.table import Control, ControlTable
from fidelity.controls.unmodified import Unmodified
from fidelity.controls.verdict import ControlResult, RunStatus, TreeRun, Verdict, combine

# a run that ended without a verdict on its tests: its failures are not all known
_UNFINISHED = frozenset({Verdict.TIMEOUT, Verdict.CRASHED, Verdict.UNVIABLE})
PART_MIN_TESTS = 8  # fewer tests per part than this: one part, as a split saves nothing


def control(table: ControlTable, runs: Mapping[tuple[str, ...], Unmodified]) -> Control:
    """The no-op control, under the table's command when the chosen controls use it, else
    under the first command they use (as `unmodified` orders them): `--only ID` of a
    control with its own narrow command runs only that command, not the table's suite too."""
    noop = table.noop()
    return noop if noop.command in runs else replace(noop, command=next(iter(runs)))


def selection(
    u: Unmodified, ran: Sequence[tuple[Selection | None, ControlResult | None]]
) -> Selection | None:
    """The tests the no-op control runs, when not all, given each control under its command
    and how it ended (None: not known). Where the unmodified tree was traced now (every test
    passed just now): those that failed under those controls, since each catch rests on its
    failures, and one that came from the fork or a used lane, not the edit, fails in the
    no-op too; with every test of a control whose run did not end
    in a verdict on its tests (a timeout, a crash), whose failures are not all known. Where
    no test failed, those the controls run. With a kept trace, or a control that runs every
    test: None, all of them (the tree has not been seen to pass now)."""
    if u.reused or u.trace is None or not ran:
        return None
    failed: set[str] = set()
    run: set[str] | None = set()
    for chosen, result in ran:
        ids = None if chosen is None else chosen.ids
        run = None if run is None or ids is None else run | set(ids)
        if result is not None and result.verdict not in _UNFINISHED:
            failed.update(result.failing)
        elif ids is None:
            return None
        else:
            failed.update(ids)
    wanted, why = (
        (failed, "those that failed under the controls of its command")
        if failed
        else (run, "those the controls under its command run")
    )
    if wanted is None:
        return None
    ids = tuple(t for t in u.trace.tests if t in wanted)
    every = len(u.trace.tests)
    if not ids or len(ids) == every:  # none: a no-op that runs nothing would say nothing
        return None
    return Selection(ids, f"{len(ids)} of {every} tests: {why}", swappable=True)


class Finished:
    """Each control's result as its lane ends it, for the no-op, queued after every control,
    to wait for those under its command (each has started by then: lanes take tasks in
    order). A control that ends in an error counts as None, its failures unknown."""

    def __init__(self) -> None:
        self._done: dict[int, ControlResult | None] = {}
        self._changed = threading.Condition()

    def record(self, index: int, result: ControlResult | None) -> None:
        with self._changed:
            self._done[index] = result
            self._changed.notify_all()

    def wait(self, indices: Sequence[int], stop: Callable[[], bool]) -> list[ControlResult | None]:
        """Their results, in order; those not ended when `stop` says so (Ctrl-C) as None."""
        with self._changed:
            while not all(i in self._done for i in indices) and not stop():
                self._changed.wait(timeout=0.2)
            return [self._done.get(i) for i in indices]


def parts(u: Unmodified, chosen: Selection | None, lanes: int) -> list[Selection | None]:
    """The no-op's tests in one part per lane: in their order, cut only between two test
    files (a test that relies on an earlier one of its file keeps it before it), into parts
    of about equal traced time; the selection as it is where there is no trace, one lane, or
    too few tests or files."""
    trace = u.trace
    ids = chosen.ids if chosen is not None else None
    every = tuple(trace.tests) if trace is not None else ()
    wanted = ids if ids is not None else every
    if lanes < 2 or trace is None or len(wanted) < PART_MIN_TESTS * lanes:
        return [chosen]
    files: dict[str, list[str]] = {}
    for test in wanted:
        files.setdefault(test.split("::")[0], []).append(test)
    took = {f: sum(_took(trace, t) for t in tests) for f, tests in files.items()}
    cut = _cut(list(files), took, lanes)
    if len(cut) < 2:
        return [chosen]
    why = chosen.why if ids is not None and chosen is not None else f"all {len(every)} tests"
    return [
        Selection(
            tuple(t for f in part for t in files[f]),
            f"{why}, in {len(cut)} parts side by side",
            swappable=True,
        )
        for part in cut
    ]


def _took(trace: Trace, test: str) -> float:
    """A test's traced time, and a little more, so that tests that took no time still count."""
    found = trace.tests.get(test)
    return (found.duration_s if found is not None else 0.0) + 0.001


def _cut(files: list[str], took: Mapping[str, float], lanes: int) -> list[list[str]]:
    """The files in order, cut into at most `lanes` runs of about equal time."""
    share = sum(took.values()) / lanes
    out: list[list[str]] = [[]]
    spent = 0.0
    for f in files:
        if out[-1] and spent + took[f] / 2 > share * len(out) and len(out) < lanes:
            out.append([])
        out[-1].append(f)
        spent += took[f]
    return out


def merged(runs: Sequence[TreeRun]) -> TreeRun:
    """The parts' runs as one: passed only if each passed, every failing test and how."""
    one = combine([("", r) for r in runs])
    kinds = {t: k for r in runs for t, k in r.kinds.items()}
    # the detail of the first part that did not pass, without `combine`'s note of a command
    # (every part has the same one)
    bad = [r for r in runs if r.status is not RunStatus.PASSED]
    detail = bad[0].detail if bad else one.detail
    return replace(one, kinds=kinds, detail=detail, mode=runs[0].mode if runs else "")
