"""A nondeterministic case's spread: how runs of one commit differ, and whether a
difference between the revisions stays within it.

Judged from the cold runs each side made (`repeat`, `replay`). A file whose bytes vary
between runs of the baseline's commit and between runs of the candidate's may differ
between the sides as much as that, and no more: with a kind that names a file's parts (a
CSV column, a JSON path: `Kind.parts`), each part that differs between
the sides must have varied within both sides, by at least half as much; a file no
comparator reads into values is judged whole. That is
`within-spread`, not `moved`. A file that varied on one side only is a move of its spread
when the other side ran it the same way often enough to say so (`MIN_RUNS`); with fewer
runs, or a declared nondeterministic case that never varied, the runs are said to be too
few to judge, never decided either way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fidelity.kinds import registry
from fidelity.kinds.diffs import OutputDiff, rank
from fidelity.matrix.verdict.evidence import CaseEvidence

SHOWN = 3
WHOLE = "*"  # a file judged whole: no comparator names its columns or paths
MARGIN = 2.0  # a difference between the sides may be this many times the runs' own
MIN_RUNS = 3  # runs that all agree, enough to call a file stable on that side

Reach = Mapping[str, float | None]  # column or JSON path -> largest difference (None: any)


@dataclass(frozen=True, slots=True)
class Judged:
    within: bool  # every differing file stays within both sides' spread
    detail: str  # both spreads, in words
    unsure: str = ""  # why the runs were too few to judge, and what to do


def reach(found: OutputDiff) -> dict[str, float]:
    """How far a file's values moved, per part its kind names (a CSV column, a JSON path):
    the largest difference in each (inf for a change no size applies to). A part the
    comparator's few largest differences leave out moved at most as far as the smallest of
    them. {"*": inf} when the kind names no such parts (bytes, text, or more JSON paths than
    it lists)."""
    kind = registry.of(found.kind)
    units = kind.parts(found)
    if units is None:
        return {WHOLE: math.inf}
    out = [d for d in found.largest if not d.within]
    sizes: dict[str, float] = {}
    for d in out:
        unit = kind.part(d.where)
        sizes[unit] = max(sizes.get(unit, 0.0), rank(d.abs_diff))
    floor = min((rank(d.abs_diff) for d in out), default=0.0) if found.values_out > len(out) else 0
    return {u: sizes.get(u, floor) for u in dict.fromkeys([*units, *sizes])}


def stored(sizes: Mapping[str, float]) -> dict[str, float | None]:
    """As run.json keeps it: JSON has no infinity."""
    return {k: None if math.isinf(v) else v for k, v in sizes.items()}


def _size(value: float | None) -> float:
    return math.inf if value is None else value


def widest(a: Reach, b: Reach) -> dict[str, float | None]:
    """Two runs' reaches of one file together: the larger of each part."""
    both = {k: max(_size(a.get(k, 0.0)), _size(b.get(k, 0.0))) for k in {*a, *b}}
    return stored(both)


def _hash(ev: CaseEvidence, cold: int, name: str) -> str | None:
    """A file's hash in the cold run numbered `cold` (0 is the first run)."""
    if cold == 0:
        outputs, cache = ev.outputs, ev.cache
    else:
        colds = [r for r in ev.replay.runs if r.kind == "cold"] if ev.replay else []
        outputs, cache = colds[cold - 1].outputs, colds[cold - 1].cache
    if name.startswith("cache/"):
        return cache.get(name.removeprefix("cache/"))
    return outputs.get(name)


def versions(ev: CaseEvidence, name: str) -> tuple[int, int]:
    """How many versions of a file (an output's name, or `cache/` and a path) the side's
    cold runs gave, and in how many runs."""
    runs = 1 + (sum(1 for r in ev.replay.runs if r.kind == "cold") if ev.replay else 0)
    return len({_hash(ev, i, name) for i in range(runs)}), runs


def _said(name: str, base: CaseEvidence, cand: CaseEvidence) -> str:
    (nb, kb), (nc, kc) = versions(base, name), versions(cand, name)
    return f"{name}: baseline {nb} versions in {kb} runs, candidate {nc} in {kc}"


def _listed(names: Sequence[str]) -> str:
    more = f" (+{len(names) - SHOWN} more)" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


def _beyond(name: str, between: OutputDiff | None, rb: Reach, rc: Reach) -> str:
    """Why a file that varied on both sides still moved beyond its spread, or ""."""
    if between is None or WHOLE in rb or WHOLE in rc:
        return ""  # judged whole: its bytes vary on both sides
    for unit, size in reach(between).items():
        if unit == WHOLE:
            return ""
        if unit not in rb or unit not in rc:
            side = "the baseline" if unit not in rb else "the candidate"
            return f"{name} {unit}: differs between the sides, never between runs on {side}"
        seen = max(_size(rb[unit]), _size(rc[unit]))
        if size > MARGIN * seen:
            return (
                f"{name} {unit}: {size:g} between the sides, at most {seen:g} between runs "
                "of one commit"
            )
    return ""


def judge(
    files: Sequence[str],
    base: CaseEvidence,
    cand: CaseEvidence,
    explained: Mapping[str, OutputDiff] | None = None,
) -> Judged | None:
    """None for a case neither declared nor found nondeterministic; else whether the files
    that differ between the sides (outputs by name, cache files as `cache/path`, each with
    its comparator's explanation between the sides when it has one) stay within both
    sides' spread."""
    rb, rc = base.replay, cand.replay
    varies_b = set(rb.varying) if rb else set()
    varies_c = set(rc.varying) if rc else set()
    declared = any(r is not None and r.declared for r in (rb, rc))
    if not (varies_b or varies_c or declared) or not files:
        return None
    explained = explained or {}
    spread_b, spread_c = (rb.spread if rb else {}), (rc.spread if rc else {})
    if all(f in varies_b and f in varies_c for f in files):
        beyond = [
            why
            for f in files
            if (why := _beyond(f, explained.get(f), spread_b.get(f, {}), spread_c.get(f, {})))
        ]
        if not beyond:
            shown = "; ".join(_said(f, base, cand) for f in files[:SHOWN])
            return Judged(True, f"differs as runs of one commit do ({shown})")
        return Judged(False, "; ".join(beyond[:SHOWN]) + ": moved beyond its own runs' spread")
    return _one_sided(files, varies_b, varies_c, base, cand)


def _one_sided(
    files: Sequence[str],
    varies_b: set[str],
    varies_c: set[str],
    base: CaseEvidence,
    cand: CaseEvidence,
) -> Judged:
    """Files that varied on one side only, or on neither: a move of the spread when the
    stable side ran them alike often enough, else too few runs to judge."""
    one_side = [f for f in files if (f in varies_b) != (f in varies_c)]
    neither = [f for f in files if f not in varies_b and f not in varies_c]
    stable_runs = min(
        versions(base if f not in varies_b else cand, f)[1] for f in one_side or neither
    )
    if one_side:
        shown = "; ".join(_said(f, base, cand) for f in one_side[:SHOWN])
        why = f"{_listed(one_side)} varied between runs on one side only ({shown})"
        if stable_runs >= MIN_RUNS:
            return Judged(False, f"{why}: the change moved how it varies")
        why += ": either the change moved its spread or too few runs showed it"
    else:
        if stable_runs >= MIN_RUNS:
            return Judged(False, f"{_listed(neither)} did not vary in {stable_runs} runs per side")
        why = (
            f"declared nondeterministic, but {_listed(neither)} did not vary in {stable_runs} "
            "runs on either side, so its spread is unknown"
        )
    unsure = f"{why}; raise the case's `repeat` to {MIN_RUNS} or more to judge it"
    return Judged(False, why, unsure)
