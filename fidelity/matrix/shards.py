"""Shards: a deterministic share of the cases for one CI job, balanced by past durations.

Every declared case lands in exactly one of N shards. Without durations, cases go round
robin in table order; with the durations of an earlier run, the longest case goes first
to the shard with the least work so far (ties: table order, lowest shard). A shard may be
empty when there are fewer cases than shards.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fidelity.errors import UsageError

_SHARD = re.compile(r"^(\d+)/(\d+)$")


def parse(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N; UsageError otherwise."""
    found = _SHARD.match(text.strip())
    if found:
        k, n = int(found.group(1)), int(found.group(2))
        if 1 <= k <= n:
            return k, n
    raise UsageError(f"--shard {text!r}: give K/N with 1 <= K <= N, e.g. --shard 2/4")


def assign(
    ids: Sequence[str], n: int, durations: Mapping[str, float] | None = None
) -> list[list[str]]:
    """The case ids of each of n shards, in table order within each."""
    shards: list[list[str]] = [[] for _ in range(n)]
    if not durations:
        for i, case_id in enumerate(ids):
            shards[i % n].append(case_id)
        return shards
    known = sorted(durations[c] for c in ids if c in durations)
    typical = known[len(known) // 2] if known else 1.0
    order = sorted(range(len(ids)), key=lambda i: (-durations.get(ids[i], typical), i))
    load = [0.0] * n
    for i in order:
        target = min(range(n), key=lambda s: (load[s], s))
        shards[target].append(ids[i])
        load[target] += durations.get(ids[i], typical)
    position = {case_id: i for i, case_id in enumerate(ids)}
    return [sorted(shard, key=position.__getitem__) for shard in shards]
