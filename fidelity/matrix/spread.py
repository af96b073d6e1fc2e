"""A nondeterministic case's spread: how runs of one commit differ, and whether a
difference between the revisions stays within it.

Judged file by file, from the cold runs each side made (`repeat`, `replay`): a file whose
bytes vary between runs of the baseline's commit and between runs of the candidate's is
noise at the level of bytes, so its difference between the sides is `within-spread`, not
`moved`. A file that varied on one side only, or a declared nondeterministic case that
showed no spread at all, cannot be told apart from a move: that is said, never decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fidelity.matrix.evidence import CaseEvidence

SHOWN = 3


@dataclass(frozen=True, slots=True)
class Judged:
    within: bool  # every differing file varies between runs on both sides
    detail: str  # both spreads, in words
    unsure: str = ""  # why the runs were too few to judge, and what to do


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


def judge(files: Sequence[str], base: CaseEvidence, cand: CaseEvidence) -> Judged | None:
    """None for a case neither declared nor found nondeterministic; else whether the files
    that differ between the sides (outputs by name, cache files as `cache/path`) are all
    within both sides' spread."""
    rb, rc = base.replay, cand.replay
    varies_b = set(rb.varying) if rb else set()
    varies_c = set(rc.varying) if rc else set()
    declared = any(r is not None and r.declared for r in (rb, rc))
    if not (varies_b or varies_c or declared) or not files:
        return None
    if all(f in varies_b and f in varies_c for f in files):
        shown = "; ".join(_said(f, base, cand) for f in files[:SHOWN])
        return Judged(True, f"differs as runs of one commit do ({shown})")
    one_side = [f for f in files if (f in varies_b) != (f in varies_c)]
    neither = [f for f in files if f not in varies_b and f not in varies_c]
    if one_side:
        shown = "; ".join(_said(f, base, cand) for f in one_side[:SHOWN])
        why = (
            f"{_listed(one_side)} varied between runs on one side only ({shown}): either the "
            "change moved its spread or too few runs showed it"
        )
    else:
        runs = max(versions(base, neither[0])[1], versions(cand, neither[0])[1])
        why = (
            f"declared nondeterministic, but {_listed(neither)} did not vary in {runs} runs "
            "on either side, so its spread is unknown"
        )
    unsure = f"{why}; raise the case's `repeat` to judge whether the difference is noise"
    return Judged(False, why, unsure)
