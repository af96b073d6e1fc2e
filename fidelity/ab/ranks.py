"""The null distribution of the Mann-Whitney count U, exact up to a size, approximated beyond.

Exact: the recursion p(m, n, u) = m/(m+n) p(m-1, n, u-n) + n/(m+n) p(m, n-1, u) over
probability vectors (convex combinations: no cancellation, unlike the Gaussian-binomial
product, whose floating-point division blows up past a few hundred pairs). It costs about
(m n)^2 / 4 steps and min(m, n) * m * n / 2 floats, so it runs while m * n <= EXACT_PAIRS
(100 x 100: 0.2 s, 7 MB); `ab --reps 2000` (1000 x 1000 pairs) asked it for 10^11 steps.

Beyond: the normal distribution with a continuity correction and the Edgeworth term of U's
fourth cumulant, whose error shrinks with the smaller sample k = min(m, n) as 1/k^2. The
stated bound, APPROXIMATION_ERROR / k^2 on |approximate cdf - exact cdf| at every u, held
wherever both were computed in its domain (m * n > EXACT_PAIRS): one sample of 1 to 9
against 1,000 to 30,000 (the error at most 0.042 / k^2, largest for k = 1, settled as the
other sample grows), balanced samples of 10 to 200 (0.0158 to 0.0175 / k^2, exact ones
included); tests/test_ab_ranks.py checks it where both are computable in a test's time. The interval
under the approximation takes the bound against itself: its cutoff c is the largest with
approximate cdf(c) + bound <= alpha / 2, and the level it states, 1 - 2 (cdf(c) + bound),
is a lower bound of the exact level, so it never claims more than the exact rule would.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

EXACT_PAIRS = 10_000  # m * n up to which the exact distribution is computed
APPROXIMATION_ERROR = 0.05  # the cdf error bound is this / min(m, n) ** 2
_NORMAL = NormalDist()


@functools.lru_cache(maxsize=64)
def null_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0..m*n, U the Mann-Whitney count of (x_i > y_j) pairs under no
    shift; exact. U(m, n) and U(n, m) are distributed alike, so the vectors kept are those
    of the smaller sample: min(m, n) + 1 of them."""
    m, n = max(m, n), min(m, n)
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


def error_bound(m: int, n: int) -> float:
    """The stated bound on |approximate_cdf - exact cdf| at these sizes."""
    return APPROXIMATION_ERROR / min(m, n) ** 2


def approximate_cdf(m: int, n: int, u: float) -> float:
    """P(U <= u) by the normal distribution with a continuity correction and the Edgeworth
    term of U's fourth cumulant (U has no skew under no shift)."""
    mean, var = m * n / 2, m * n * (m + n + 1) / 12
    z = (u + 0.5 - mean) / math.sqrt(var)
    kurtosis = -m * n * (m + n + 1) * (m * m + n * n + m * n + m + n) / 120 / var**2
    return _NORMAL.cdf(z) - kurtosis / 24 * (z**3 - 3 * z) * _NORMAL.pdf(z)


@dataclass(frozen=True, slots=True)
class Cutoff:
    """The rank cutoff of the interval: the interval runs from the (c+1)-th smallest to the
    (c+1)-th largest pairwise difference. None when the sizes cannot reach the level."""

    c: int | None
    level: float  # exact, or (approximated) a lower bound of the exact level; 0 without c
    exact: bool
    error: float = 0.0  # the cdf error bound the approximation was held to (0: exact)

    def words(self) -> str:
        """How the level was found, for the verdict."""
        if self.exact:
            return "exact rank distribution"
        return (
            f"normal approximation of the rank distribution (cdf within {self.error:.1e} of "
            "the exact one; the level is a lower bound)"
        )


@functools.lru_cache(maxsize=256)
def cutoff(m: int, n: int, alpha: float) -> Cutoff:
    """The largest c with P(U <= c) <= alpha / 2 (exact while m * n <= EXACT_PAIRS, else
    held to the approximation's error bound), and the interval's level."""
    if m * n <= EXACT_PAIRS:
        cdf = null_cdf(m, n)
        c = int(np.searchsorted(np.asarray(cdf), alpha / 2, side="right")) - 1
        return Cutoff(c, 1.0 - 2.0 * cdf[c], True) if c >= 0 else Cutoff(None, 0.0, True)
    error = error_bound(m, n)
    target = alpha / 2 - error
    if target <= 0:
        return Cutoff(None, 0.0, False, error)
    mean, sd = m * n / 2, math.sqrt(m * n * (m + n + 1) / 12)
    c = max(-1, math.floor(mean + sd * _NORMAL.inv_cdf(target)))
    while c + 1 <= m * n and approximate_cdf(m, n, c + 1) <= target:
        c += 1
    while c >= 0 and approximate_cdf(m, n, c) > target:
        c -= 1
    if c < 0:
        return Cutoff(None, 0.0, False, error)
    return Cutoff(c, 1.0 - 2.0 * (approximate_cdf(m, n, c) + error), False, error)
