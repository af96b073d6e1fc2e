"""Numbers two JSON documents spell differently, read and judged in bulk: the `json` kind's
walks collect them unread and unnamed, and a path is made only for those a report lists.
The same counts, paths in the same order and the same largest differences as `NumberRun`
judging them one by one (tests/test_json_numbers.py)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from itertools import repeat
from operator import add, le, mul, sub
from typing import cast

from fidelity.kinds.diffs import Block, Difference, Tally, Tolerance, rank
from fidelity.kinds.jsonvalues import Met, number, show

PathOf = Callable[[Met, int], str]  # where a number met is, made only when it is listed
BEYOND_FLOAT = 2.0**53  # from here on, two integers can be one float


def tally_spelled(met: Met, tol: Tolerance, tally: Tally, path_of: PathOf = Met.path) -> None:
    """Numbers a walk met, read and judged in bulk and tallied as one block, as `NumberRun`
    would tally them one by one. Equal values, infinities and integers too large for a
    float are settled one by one (`_exactly`), as the walk of `json.loads`' values would."""
    if not met:
        return
    # each step a map in C, the float operations of `Tolerance.holds` in its order
    xs = list(map(float, met.bs))
    gaps: list[float] = list(map(abs, map(sub, map(float, met.cs), xs)))
    bounds = map(add, repeat(tol.atol), map(mul, repeat(tol.rtol), map(abs, xs)))
    holds = list(map(le, gaps, bounds))
    diffs = cast(list[float | None], gaps)  # None where `_exactly` finds a change
    kept = range(len(met))
    special: list[int] = []
    if not sum(gaps) < math.inf or 0.0 in gaps:  # a NaN, an infinity or a zero among them
        special = [i for i, e in enumerate(gaps) if not 0.0 < e < math.inf]
    if max(map(abs, xs)) >= BEYOND_FLOAT:  # integers a float cannot tell apart: read exactly
        special = sorted({*special, *(i for i, x in enumerate(xs) if abs(x) >= BEYOND_FLOAT)})
    if special:
        equal = set()
        for i in special:
            exact = _exactly(met.bs[i], met.cs[i], tol)
            if exact is None:
                equal.add(i)
            else:
                diffs[i], holds[i] = exact
        kept = [i for i in kept if i not in equal]  # type: ignore[assignment]
    out = [] if all(holds) else [i for i in kept if not holds[i]]
    if out:
        best = heapq.nsmallest(tally.top, kept, key=lambda i: (holds[i], -rank(diffs[i])))
    else:  # the same order: sorting is stable, also reversed; every difference is a number
        best = heapq.nlargest(tally.top, kept, key=diffs.__getitem__)  # type: ignore[arg-type]
    top = [
        Difference(
            path_of(met, i),
            show(number(met.bs[i])),
            show(number(met.cs[i])),
            diffs[i],
            holds[i],
        )
        for i in best
    ]
    block = Block(
        within=len(kept) - len(out),
        out=len(out),
        changed=sum(1 for i in out if diffs[i] is None),
        columns=(),
        rows=len(out),
        key=lambda n: path_of(met, out[n]),
        top=top,
    )
    tally.add_block(block)


def _exactly(
    b_spelled: bytes | str, c_spelled: bytes | str, tol: Tolerance
) -> tuple[float | None, bool] | None:
    """Two numbers read as `json.loads` reads them: None when equal and of one type; else
    their difference (None: too large for a float, a change) and whether it holds."""
    b, c = number(b_spelled), number(c_spelled)
    if b == c and type(b) is type(c):
        return None
    return tol.judge(b, c)  # integers as `json.loads` reads them: exactly
