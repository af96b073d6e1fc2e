"""Numbers that differ, met in a row by a walk: judged in bulk, counted as `Tally.add` would
count them one by one, with only the `top` largest made into `Difference`s.

A document whose every float moved inside its tolerance has as many differences as
numbers; building, ranking and tallying each one cost more than the walk that found them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fidelity.kinds.diffs import Block, Difference, Tally, Tolerance, rank

RUN = 4_096  # numbers held before they are tallied: bounded memory whatever the document
Met = tuple[str, Any, Any, float | None, bool]  # where, both values, |difference|, within


@dataclass(slots=True)
class NumberRun:
    tol: Tolerance
    top: int
    show: Callable[[Any], str]  # a value as a report shows it
    met: list[Met] = field(default_factory=list)

    def add(self, where: str, b: Any, c: Any, tally: Tally) -> None:
        """Two numbers: judged as floats (integers past 2**53 exactly), or as changed when
        they are too large for one."""
        self.met.append((where, b, c, *self.tol.judge(b, c)))
        if len(self.met) >= RUN:
            self.flush(tally)

    def flush(self, tally: Tally) -> None:
        """Tally the numbers met so far, as one block."""
        if not self.met:
            return
        out = [m for m in self.met if not m[4]]
        best = heapq.nsmallest(self.top, self.met, key=lambda m: (m[4], -rank(m[3])))
        top = [Difference(w, self.show(b), self.show(c), d, ok) for w, b, c, d, ok in best]
        block = Block(
            within=len(self.met) - len(out),
            out=len(out),
            changed=sum(1 for m in out if m[3] is None),
            columns=(),
            rows=len(out),
            key=lambda n: out[n][0],
            top=top,
        )
        tally.add_block(block)
        self.met = []
