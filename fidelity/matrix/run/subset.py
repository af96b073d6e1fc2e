"""Which cases one run runs: `--case`/`--tag` selectors, then one `--shard` of them.

A run of fewer cases than the table declares is partial, and its Selection says so in every
report; selectors that choose every case make a full run.
"""

from __future__ import annotations

from dataclasses import replace

from fidelity.matrix.cases.table import Matrix
from fidelity.matrix.run import shards
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict import predict
from fidelity.matrix.verdict.outcome import Selection


def choose(matrix: Matrix, request: RunRequest) -> tuple[Matrix, Selection | None]:
    """The cases the request's selectors name (ids or `tag:` selectors), then its shard of
    them (balanced by its durations); UsageError for a selector that names no case.
    Selectors that choose every case of the table make a full run, not a partial one (no
    Selection). The request's `partial`: a partial run on purpose."""
    selectors, shard = request.selectors, request.shard
    if not selectors and shard is None:
        return matrix, None
    cases = matrix.cases
    if selectors:
        tags = {c.id: c.tags for c in matrix.cases}
        chosen = predict.resolve(selectors, tags, "--case/--tag")
        cases = tuple(c for c in cases if c.id in chosen)
        if len(cases) == len(matrix.cases) and shard is None:
            return matrix, None
    if shard is not None:
        mine = set(shards.pick([c.id for c in cases], shard.k, shard.n, request.durations))
        cases = tuple(c for c in cases if c.id in mine)
    shown = (*selectors, *([f"shard:{shard}"] if shard else []))
    every = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    selected = tuple(c.id for c in cases)
    k_of_n = (shard.k, shard.n) if shard else None
    selection = Selection(shown, selected, len(matrix.cases), k_of_n, every, request.partial)
    return replace(matrix, cases=cases), selection
