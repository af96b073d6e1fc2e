"""Rank intervals for a shift between two samples (Hodges-Lehmann with the Mann-Whitney
distribution), the numerics under the A/B verdict.

The interval for the shift between samples x and y is the range of shifts d for which a
two-sided Mann-Whitney test of x against y - d would not reject at level alpha: between two
order statistics of the m * n differences y_j - x_i. Its coverage is at least 1 - alpha
whatever the noise distribution, at every sample size, when the observations are
exchangeable under no shift (no tie correction: timings do not tie). Too few observations
to reach that level give no interval rather than a weaker one.

Bounded at any size: the rank distribution is exact while m * n <= ranks.EXACT_PAIRS and a
normal approximation held to a stated error beyond (`fidelity.ab.ranks`; the Shift says
which), and the order statistics are selected without the m * n array past a million
differences (`fidelity.ab.pairdiffs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fidelity.ab import pairdiffs, ranks
from fidelity.ab.ranks import null_cdf

Floats = npt.NDArray[np.float64]
__all__ = ["Floats", "Shift", "critical", "level", "minimum_size", "null_cdf", "shift"]


def critical(m: int, n: int, alpha: float) -> int | None:
    """The largest c with P(U <= c) <= alpha / 2, or None when even U = 0 is likelier."""
    return ranks.cutoff(m, n, alpha).c


def level(m: int, n: int, alpha: float) -> float:
    """The confidence of the interval at these sizes (0 when there is none): exact, or a
    lower bound of it where the distribution is approximated."""
    return ranks.cutoff(m, n, alpha).level


@dataclass(frozen=True, slots=True)
class Shift:
    """The Hodges-Lehmann shift of y over x and its interval (None when the sample sizes
    cannot reach the level), and how the level was found."""

    estimate: float
    low: float | None
    high: float | None
    level: float
    exact: bool = True  # the exact rank distribution; else the normal approximation
    error: float = 0.0  # the approximation's cdf error bound (0 when exact)


def shift(x: Floats, y: Floats, alpha: float = 0.05) -> Shift:
    """The shift d such that y - d is distributed like x, with a 1 - alpha interval."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    estimate = pairdiffs.median(x, y)
    cut = ranks.cutoff(x.size, y.size, alpha)
    if cut.c is None:
        return Shift(estimate, None, None, 0.0, cut.exact, cut.error)
    k_low, k_high = cut.c, x.size * y.size - 1 - cut.c  # 0-based order statistics
    low, high = pairdiffs.select(x, y, [k_low, k_high])
    return Shift(estimate, low, high, cut.level, cut.exact, cut.error)


def minimum_size(alpha: float, paired: bool) -> int:
    """The fewest runs per arm whose interval can exclude no shift: a crossover of n pairs
    compares ceil(n/2) with floor(n/2) pair differences; unpaired compares n with n."""
    for n in range(2, 200):
        m = (n + 1) // 2 if paired else n
        k = n // 2 if paired else n
        if k and critical(m, k, alpha) is not None:
            return n
    raise ValueError(f"alpha {alpha} needs more than 200 runs per arm")
