"""Whether a prediction was stated before the change it predicts.

A prediction counts only when the candidate's history holds it, and every commit of
baseline..candidate that changes anything else comes after its last change: descends from
that commit, or is that commit (the fix and its prediction committed together). git's
ancestry is the only order fidelity can witness: a prediction committed after the fix,
after a measurement, beside the change on another branch, or outside the candidate's
history could have been written from the evidence it claims to predict.
Decided once, when the run starts, and recorded with the prediction in run.json, so that
`compare` and `verify` judge it as the run did.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from fidelity.git import log, objects


@dataclass(frozen=True, slots=True)
class Timing:
    stated: str | None  # the commit that last changed the prediction in the candidate's history
    late: str = ""  # why it does not count, naming both commits; "" when it was on time


def first_other_change(
    changes: Mapping[str, frozenset[str]], after: Collection[str], stated: str, rel: str
) -> str | None:
    """The oldest commit of the range that changes a path besides `rel` and is neither the
    prediction's commit `stated` nor one of its descendants (`after`); None when there is
    none. `changes` maps each commit of the range to its paths, children before parents."""
    before = [
        sha
        for sha, paths in changes.items()
        if sha != stated and sha not in after and paths - {rel}
    ]
    return before[-1] if before else None


def _subject(repo: Path, sha: str) -> str:
    message = log.messages(repo, [sha]).get(sha, "")
    return message.strip().partition("\n")[0]


def timing(repo: Path, rel: str, blob: str, sides: tuple[str, str], harness: str) -> Timing:
    """When the prediction `rel` (its bytes' blob id `blob`, read at the harness commit) was
    stated, against the baseline..candidate range of `sides` (full shas)."""
    baseline, candidate = sides
    held = objects.blob_id(repo, candidate, rel)
    if held != blob:
        where = log.last_change(repo, harness, rel)
        there = f"holds other bytes at {rel}" if held else f"has no {rel}"
        return Timing(
            None,
            f"the prediction {rel} (last changed in {(where or 'no commit')[:10]}, at the "
            f"harness {harness[:10]}) is not in the candidate's history: the candidate "
            f"{candidate[:10]} {there}. A prediction counts only when it was committed before "
            "the change it predicts: commit it on the candidate's branch before the change, "
            "then run with that candidate",
        )
    stated = log.last_change(repo, candidate, rel)
    if stated is None:  # a file no commit added: only a shallow or grafted history
        return Timing(None)
    changes = log.changed_paths(repo, candidate, [baseline], merges=True)
    other = first_other_change(changes, log.descendants(repo, stated, candidate), stated, rel)
    if other is None:
        return Timing(stated)
    return Timing(
        stated,
        f"the prediction {rel} was last changed in {stated[:10]}, after {other[:10]} "
        f"({_subject(repo, other)}) changed other files in baseline..candidate; a prediction "
        "counts only when it was committed before the change it predicts (in the same commit "
        "at the latest). To state one now, commit it on a branch from the baseline, then the "
        "change again after it (a new candidate), and run with that candidate",
    )
