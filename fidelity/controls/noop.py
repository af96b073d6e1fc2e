"""The no-op control: the unmodified tree run again the way the controls run, after them, so
that what a lane leaves behind, or a fork that fails where a fresh process passes, shows as
a no-op that did not survive. Its command, its tests, and its parts: with two or more lanes
its tests are split into one part per lane (balanced by the traced run's times), run side by
side after every control, so that the last stretch of a run leaves no lane idle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from fidelity.controls.selection import Selection
from fidelity.controls.table import Control, ControlTable
from fidelity.controls.unmodified import Unmodified
from fidelity.controls.verdict import TreeRun, combine

PART_MIN_TESTS = 8  # fewer tests per part than this: one part, as a split saves nothing


def control(table: ControlTable, runs: Mapping[tuple[str, ...], Unmodified]) -> Control:
    """The no-op control, under the table's command when the chosen controls use it, else
    under the first command they use (as `unmodified` orders them): `--only ID` of a
    control with its own narrow command runs only that command, not the table's suite too."""
    noop = table.noop()
    return noop if noop.command in runs else replace(noop, command=next(iter(runs)))


def selection(u: Unmodified, selections: Sequence[Selection | None]) -> Selection | None:
    """The tests the no-op control runs, when not all: those the controls under its command
    run, where the unmodified tree was traced now (every test passed just now, and a test no
    control runs decides no verdict). With a kept trace, or a control that runs every test,
    None: all of them (the tree has not been seen to pass now)."""
    if u.reused or u.trace is None or not selections:
        return None
    wanted: set[str] = set()
    for s in selections:
        if s is None or s.ids is None:
            return None
        wanted.update(s.ids)
    ids = tuple(t for t in u.trace.tests if t in wanted)
    every = len(u.trace.tests)
    if not ids or len(ids) == every:  # none: a no-op that runs nothing would say nothing
        return None
    why = f"{len(ids)} of {every} tests: those the controls under its command run"
    return Selection(ids, why, swappable=True)


def parts(u: Unmodified, chosen: Selection | None, lanes: int) -> list[Selection | None]:
    """The no-op's tests in one part per lane, balanced by the traced run's durations; the
    selection as it is where there is no trace, one lane, or too few tests."""
    trace = u.trace
    ids = chosen.ids if chosen is not None else None
    every = tuple(trace.tests) if trace is not None else ()
    wanted = ids if ids is not None else every
    if lanes < 2 or trace is None or len(wanted) < PART_MIN_TESTS * lanes:
        return [chosen]
    bins: list[list[str]] = [[] for _ in range(lanes)]
    load = [0.0] * lanes
    took = {t: trace.tests[t].duration_s if t in trace.tests else 0.0 for t in wanted}
    for test in sorted(wanted, key=lambda t: -took[t]):
        emptiest = load.index(min(load))
        bins[emptiest].append(test)
        load[emptiest] += took[test]
    order = {t: n for n, t in enumerate(wanted)}
    why = chosen.why if ids is not None and chosen is not None else f"all {len(every)} tests"
    return [
        Selection(
            tuple(sorted(part, key=order.__getitem__)),
            f"{why}, in {lanes} parts side by side",
            swappable=True,
        )
        for part in bins
    ]


def merged(runs: Sequence[TreeRun]) -> TreeRun:
    """The parts' runs as one: passed only if each passed, every failing test and how."""
    one = combine([("", r) for r in runs])
    kinds = {t: k for r in runs for t, k in r.kinds.items()}
    return replace(one, kinds=kinds, mode=runs[0].mode if runs else "")
