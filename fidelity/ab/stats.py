"""Exact rank intervals for a shift between two samples (Hodges-Lehmann with the exact
Mann-Whitney distribution), the numerics under the A/B verdict.

The interval for the shift between samples x and y is the range of shifts d for which a
two-sided Mann-Whitney test of x against y - d would not reject at level alpha: between two
order statistics of the m * n differences y_j - x_i. Its coverage is at least 1 - alpha
whatever the noise distribution, at every sample size, when the observations are
exchangeable under no shift (no tie correction: timings do not tie). Too few observations
to reach that level give no interval rather than a weaker one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


@functools.lru_cache(maxsize=256)
def null_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0..m*n, U the Mann-Whitney count of (x_i > y_j) pairs under no
    shift; exact, by the recursion p(m, n, u) = m/(m+n) p(m-1, n, u-n) + n/(m+n) p(m, n-1, u)."""
    # previous[j] holds the distribution for (i - 1, j) as a probability vector
    previous = [np.ones(1)] * (n + 1)  # i = 0: U = 0 surely, whatever j
    for i in range(1, m + 1):
        current = [np.ones(1)]  # j = 0: U = 0 surely
        for j in range(1, n + 1):
            p = np.zeros(i * j + 1)
            take_x = previous[j]  # x_i is the largest: it beats all j of y
            p[j : j + take_x.size] += i / (i + j) * take_x
            take_y = current[j - 1]
            p[: take_y.size] += j / (i + j) * take_y
            current.append(p)
        previous = current
    return tuple(np.cumsum(previous[n]).tolist())


def critical(m: int, n: int, alpha: float) -> int | None:
    """The largest c with P(U <= c) <= alpha / 2, or None when even U = 0 is likelier."""
    cdf = null_cdf(m, n)
    c = int(np.searchsorted(np.asarray(cdf), alpha / 2, side="right")) - 1
    return c if c >= 0 else None


def level(m: int, n: int, alpha: float) -> float:
    """The exact confidence of the interval at these sizes (0 when there is none)."""
    c = critical(m, n, alpha)
    return 0.0 if c is None else 1.0 - 2.0 * null_cdf(m, n)[c]


@dataclass(frozen=True, slots=True)
class Shift:
    """The Hodges-Lehmann shift of y over x and its exact interval (None when the sample
    sizes cannot reach the level)."""

    estimate: float
    low: float | None
    high: float | None
    level: float


def shift(x: Floats, y: Floats, alpha: float = 0.05) -> Shift:
    """The shift d such that y - d is distributed like x, with a 1 - alpha interval."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    diffs = np.subtract.outer(y, x).ravel()
    estimate = float(np.median(diffs))
    c = critical(x.size, y.size, alpha)
    if c is None:
        return Shift(estimate, None, None, 0.0)
    k_low, k_high = c, diffs.size - 1 - c  # 0-based order statistics
    part = np.partition(diffs, (k_low, k_high))
    return Shift(estimate, float(part[k_low]), float(part[k_high]), level(x.size, y.size, alpha))


def minimum_size(alpha: float, paired: bool) -> int:
    """The fewest runs per arm whose interval can exclude no shift: a crossover of n pairs
    compares ceil(n/2) with floor(n/2) pair differences; unpaired compares n with n."""
    for n in range(2, 200):
        m = (n + 1) // 2 if paired else n
        k = n // 2 if paired else n
        if k and critical(m, k, alpha) is not None:
            return n
    raise ValueError(f"alpha {alpha} needs more than 200 runs per arm")
