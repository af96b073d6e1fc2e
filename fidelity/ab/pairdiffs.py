"""Order statistics of the m * n pairwise differences y_j - x_i, without the m * n array.

The Hodges-Lehmann estimate and its interval are order statistics of all differences; a
sorted array of them is 8 m n bytes (2,000 runs per arm: 32 MB; 100,000: 80 GB). Up to
MATERIALIZE differences they are made and partitioned, as numpy does it; beyond, each is
selected from the sorted samples (y_j - x_i grows with j and falls with i, rounding
included): a pivot drawn from the differences still in play splits them by counting, row
by row, how many fall below it (a binary search per row, then a correction so the count is
of the rounded differences themselves), until few enough are left to partition. Memory
follows m + n; time is (m + n) log(m n) per round, and the rounds about log(m n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
MATERIALIZE = 1 << 20  # differences made outright (8 MB)
_FEW = 4096  # differences left in play that are then made and partitioned


def median(x: Floats, y: Floats, materialize: int = MATERIALIZE) -> float:
    """The median of the differences, as np.median of them gives it."""
    total = x.size * y.size
    if total <= materialize:
        return float(np.median(np.subtract.outer(y, x).ravel()))
    if total % 2:
        return select(x, y, [total // 2], materialize)[0]
    middle = select(x, y, [total // 2 - 1, total // 2], materialize)
    return float(np.mean(np.array(middle)))


def select(x: Floats, y: Floats, ks: Sequence[int], materialize: int = MATERIALIZE) -> list[float]:
    """The ks-th smallest differences (0-based), as np.partition of them gives them."""
    if x.size * y.size <= materialize:
        part = np.partition(np.subtract.outer(y, x).ravel(), list(ks))
        return [float(part[k]) for k in ks]
    xs, ys = np.sort(x), np.sort(y)
    return [_select(xs, ys, k) for k in ks]


def count_below(xs: Floats, ys: Floats, pivot: float, inclusive: bool) -> Ints:
    """Per x_i, how many y_j have y_j - x_i < pivot (<= when inclusive), computed on the
    rounded differences: searchsorted on x_i + pivot, then moved while it disagrees."""
    side: Literal["left", "right"] = "right" if inclusive else "left"
    at: Ints = np.searchsorted(ys, xs + pivot, side=side).astype(np.int64)

    def below(rows: Ints, cols: Ints) -> npt.NDArray[np.bool_]:
        d = ys[cols] - xs[rows]
        return d <= pivot if inclusive else d < pivot

    while True:  # rounding moves the boundary by a step or two at most
        up = np.flatnonzero(at < ys.size)
        up = up[below(up, at[up])]
        down = np.flatnonzero(at > 0)
        down = down[~below(down, at[down] - 1)]
        if not up.size and not down.size:
            return at
        at[up] += 1
        at[down] -= 1


def _select(xs: Floats, ys: Floats, k: int) -> float:
    """The k-th smallest of ys[j] - xs[i] (both sorted), in play between lo and hi."""
    rng = np.random.default_rng(k)  # the answer is the same whatever the pivots
    lo = np.zeros(xs.size, dtype=np.int64)
    hi = np.full(xs.size, ys.size, dtype=np.int64)
    while True:
        sizes = hi - lo
        total = int(sizes.sum())
        if total <= _FEW:
            rows = np.repeat(np.arange(xs.size), sizes)
            starts = np.repeat(lo - (np.cumsum(sizes) - sizes), sizes)
            left = ys[starts + np.arange(total)] - xs[rows]
            return float(np.partition(left, k - int(lo.sum()))[k - int(lo.sum())])
        pick = int(rng.integers(total))
        row = int(np.searchsorted(np.cumsum(sizes), pick, side="right"))
        col = int(lo[row] + pick - (sizes[:row].sum()))
        pivot = float(ys[col] - xs[row])
        under = count_below(xs, ys, pivot, inclusive=False)
        if k < under.sum():
            hi = np.minimum(hi, under)
            continue
        upto = count_below(xs, ys, pivot, inclusive=True)
        if k < upto.sum():
            return pivot
        lo = np.maximum(lo, upto)
