"""Which cases one run runs: `--case`/`--tag` selectors, then one `--shard` of them.

A run of fewer cases than the table declares is partial, and its Selection says so in every
report; selectors that choose every case make a full run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from fidelity.matrix import predict, shards
from fidelity.matrix.outcome import Selection
from fidelity.matrix.table import Matrix


def choose(
    matrix: Matrix,
    selectors: Sequence[str],
    shard: str | None = None,
    durations: Mapping[str, float] | None = None,
    meant: bool = False,
) -> tuple[Matrix, Selection | None]:
    """The cases the selectors name (ids or `tag:` selectors), then one shard of them;
    UsageError for a selector that names no case or a malformed shard. Selectors that
    choose every case of the table make a full run, not a partial one (no Selection).
    `meant`: `--partial`, a partial run on purpose."""
    if not selectors and shard is None:
        return matrix, None
    cases = matrix.cases
    if selectors:
        tags = {c.id: c.tags for c in matrix.cases}
        chosen = predict.resolve(selectors, tags, "--case/--tag")
        cases = tuple(c for c in cases if c.id in chosen)
        if len(cases) == len(matrix.cases) and shard is None:
            return matrix, None
    k_of_n = shards.parse(shard) if shard is not None else None
    if k_of_n is not None:
        mine = set(shards.pick([c.id for c in cases], *k_of_n, durations))
        cases = tuple(c for c in cases if c.id in mine)
    shown = (*selectors, *([f"shard:{shard}"] if shard else []))
    every = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    selected = tuple(c.id for c in cases)
    selection = Selection(shown, selected, len(matrix.cases), k_of_n, every, meant)
    return replace(matrix, cases=cases), selection
