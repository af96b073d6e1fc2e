"""Kind `bytes`: an output whose bytes alone decide; a difference is a move, said by size.

The kind of an output no spec names, and a case's way to say "compare this one by bytes"
where a table-wide spec would read it by value.
"""

from __future__ import annotations

from dataclasses import dataclass

from fidelity.kinds.base import Plain, Spec
from fidelity.kinds.diffs import OutputDiff
from fidelity.kinds.sources import Neutral, Source, size


@dataclass(frozen=True, slots=True)
class Bytes(Plain):
    name: str = "bytes"
    reads: frozenset[str] = frozenset()
    tolerant: bool = False
    where_is_key: bool = False
    plots: bool = False

    def explain(
        self, path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral
    ) -> OutputDiff:
        sizes = f"{size(base)} -> {size(cand)} bytes"
        return OutputDiff(path, self.name, False, f"bytes differ ({sizes})")


KIND = Bytes()
