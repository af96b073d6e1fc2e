"""How each control is to run: its tests (`selection`), its limit (scaled from the
unmodified tree's time unless the table sets one), its log, and whether its edit is swapped
into a collected pytest (`lane`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity.controls.lane import Job
from fidelity.controls.selection import NamedElsewhere, Selection
from fidelity.controls.selection import select as select_tests
from fidelity.controls.table import Control
from fidelity.controls.unmodified import Unmodified
from fidelity.controls.verdict import TreeRun
from fidelity.controls.warm import pytest_args

TIMEOUT_FACTOR = 5.0
TIMEOUT_PAD_S = 30.0
RECHECK_FACTOR = 2.0  # a derived limit, for the second run of a control that timed out


def log_path(logs: Path, name: str) -> Path:
    """The log of one run; a leading `_` keeps built-in names apart from control ids."""
    return logs / f"{name}.log" if name[0].isalnum() else logs / f"_{name.strip('()')}.log"


def timeout_for(control: Control, unmodified: TreeRun) -> tuple[float, str]:
    """The control's limit and how it was set."""
    if control.timeout_s is not None:
        return control.timeout_s, "timeout_s in the table"
    limit = round(TIMEOUT_FACTOR * unmodified.duration_s + TIMEOUT_PAD_S, 1)
    took = unmodified.duration_s
    how = f"{TIMEOUT_FACTOR:g} x the unmodified tree's {took:.1f} s + {TIMEOUT_PAD_S:g} s"
    return limit, how


@dataclass(frozen=True, slots=True)
class Plan:
    control: Control
    job: Job
    how: str  # how the timeout was set


def plans(
    chosen: Sequence[Control],
    runs: Mapping[tuple[str, ...], Unmodified],
    originals: Mapping[str, str | None],
    logs: Path,
    full: bool,
    *,
    swap: bool = True,
    named_elsewhere: NamedElsewhere | None = None,
) -> list[Plan]:
    found = []
    for c in chosen:
        u = runs[c.command]
        limit, how = timeout_for(c, u.run)
        selection = (
            Selection(None, "all tests: --full")
            if full
            else select_tests(c, u.trace, originals, named_elsewhere)
            if c.edits
            else Selection(None, "all tests: the no-op control", swappable=True)
        )
        warm = not full and pytest_args(c.command) is not None
        preload = u.trace.modules if u.trace is not None else ()
        job = Job(
            replace(c, timeout_s=limit),
            log_path(logs, c.id),
            limit,
            selection,
            warm=warm,
            preload=preload,
            brief=True,
            swap=warm and swap and selection.swappable and u.trace is not None,
        )
        found.append(Plan(c, job, how))
    return _swap_where_shared(found)


def _swap_where_shared(found: list[Plan]) -> list[Plan]:
    """Start a collected server only under a command that two or more swappable controls
    share: it imports and collects the whole suite, which one control alone pays for without
    gain (a warm child imports only the test files it selects). A lone control still swaps
    in a server its lane has alive, such as the traced run's of the unmodified tree."""
    shared = Counter(p.control.command for p in found if p.job.swap)
    return [
        replace(p, job=replace(p.job, collect=True))
        if p.job.swap and shared[p.control.command] >= 2
        else p
        for p in found
    ]


def alone(plan: Plan) -> Plan:
    """The plan for a timed-out control's run alone: a limit derived from the unmodified
    tree's time is doubled (a control whose tests fail can take longer than passing ones,
    Hypothesis shrinking, and load on the machine is no verdict); one the table sets stays."""
    if not plan.how.startswith(f"{TIMEOUT_FACTOR:g} x"):
        return plan
    limit = round(RECHECK_FACTOR * plan.job.timeout_s, 1)
    job = replace(plan.job, timeout_s=limit, control=replace(plan.job.control, timeout_s=limit))
    return replace(plan, job=job, how=f"{plan.how}, x {RECHECK_FACTOR:g} for the run alone")
