"""The A/B verdict's error rates, simulated with known effects (derandomized, seconds).

Runs are simulated as `fidelity ab` makes them: pairs in ABBA order, log times with a
skewed noise (normal plus occasional slow outliers), a random-walk drift of the machine
and a run-order effect (the second run of a pair 3% faster). With no effect, the verdict
may claim a difference in at most 5% of calls at every number of runs from 2 to 50 per
arm; with an effect, the share of calls that establish it does not fall as runs grow.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from fidelity.ab import stats
from fidelity.ab.verdict import (
    ALPHA,
    Arm,
    Repetition,
    false_claim_rate,
    judge,
    paired_ratio,
    percent,
    unpaired_ratio,
)

SIMS = 300  # per number of runs
RUNS = range(2, 51)


def simulate(rng: np.random.Generator, pairs: int, effect: float) -> tuple[np.ndarray, np.ndarray]:
    """Log times (first, second) of each pair, pair k running A first when k is even."""
    b_first = np.arange(pairs) % 2 == 1
    drift = np.cumsum(rng.normal(0.0, 0.02, pairs))
    noise = rng.normal(0.0, 0.05, (pairs, 2))
    noise += (rng.random((pairs, 2)) < 0.1) * rng.exponential(0.2, (pairs, 2))
    first = drift + noise[:, 0] + np.where(b_first, effect, 0.0)
    second = drift + noise[:, 1] - 0.03 + np.where(b_first, 0.0, effect)
    return first, second


def verdicts(rng: np.random.Generator, pairs: int, effect: float, sims: int) -> tuple[int, int]:
    """(claims that B is slower, claims that B is faster) over sims simulated calls."""
    slower = faster = 0
    for _ in range(sims):
        first, second = simulate(rng, pairs, effect)
        g = first - second
        b_first = np.arange(pairs) % 2 == 1
        interval = paired_ratio(g[~b_first], g[b_first])
        if interval.excludes_one:
            slower += (interval.low or 0) > 1
            faster += (interval.high or 2) < 1
    return slower, faster


def binomial_upper(n: int, p: float, tail: float = 1e-4) -> int:
    """The smallest k with P(Binomial(n, p) > k) < tail."""
    cdf = 0.0
    for k in range(n + 1):
        cdf += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if 1 - cdf < tail:
            return k
    return n


def test_false_claims_stay_at_or_below_five_percent_at_every_number_of_runs() -> None:
    rng = np.random.default_rng(20261130)
    limit = binomial_upper(SIMS, ALPHA)
    total = 0
    for runs in RUNS:
        slower, faster = verdicts(rng, runs, 0.0, SIMS)
        total += slower + faster
        confidence = stats.level((runs + 1) // 2, runs // 2, ALPHA)
        assert confidence == 0 or 1 - confidence <= ALPHA, runs  # 0: no interval, no claim
        assert slower + faster <= limit, f"{runs} runs per arm: {slower + faster} of {SIMS}"
        assert max(slower, faster) <= binomial_upper(SIMS, ALPHA / 2), runs
    assert total / (SIMS * len(RUNS)) <= ALPHA


@pytest.mark.parametrize("effect", [1.10, 1.25])
def test_power_does_not_fall_as_runs_grow(effect: float) -> None:
    """The same simulated calls, cut at growing numbers of runs (common random numbers)."""
    rng = np.random.default_rng(7)
    grid = [2, 4, 6, 8, 10, 12, 16, 20, 30, 40, 50]
    calls = [simulate(rng, max(grid), math.log(effect)) for _ in range(SIMS)]
    power = []
    for runs in grid:
        hits = 0
        for first, second in calls:
            g = (first - second)[:runs]
            b_first = np.arange(runs) % 2 == 1
            hits += (paired_ratio(g[~b_first], g[b_first]).low or 0) > 1
        power.append(hits / SIMS)
    assert all(later >= earlier for earlier, later in zip(power, power[1:], strict=False)), power
    assert power[0] == 0 and power[-1] > 0.9, power  # no claim without an interval; then one


def test_judge_reads_runs_as_the_simulation_does() -> None:
    """The simulation calls paired_ratio directly; judge() on the same runs as recorded
    repetitions gives the same interval."""
    rng = np.random.default_rng(3)
    first, second = simulate(rng, 12, math.log(1.2))
    reps = []
    for k in range(12):
        arms = (Arm.B, Arm.A) if k % 2 else (Arm.A, Arm.B)
        reps += [
            Repetition(2 * k, arms[0], math.exp(first[k])),
            Repetition(2 * k + 1, arms[1], math.exp(second[k])),
        ]
    g = first - second
    b_first = np.arange(12) % 2 == 1
    assert judge(reps).interval == pytest.approx(paired_ratio(g[~b_first], g[b_first]))


def test_exact_null_distribution() -> None:
    """P(U = 0) = 1 / C(m + n, m); the distribution is symmetric and sums to one."""
    for m, n in [(1, 1), (4, 4), (5, 3), (25, 25)]:
        cdf = np.array(stats.null_cdf(m, n))
        pmf = np.diff(cdf, prepend=0.0)
        assert cdf[0] == pytest.approx(1 / math.comb(m + n, m))
        assert cdf[-1] == pytest.approx(1.0)
        assert pmf == pytest.approx(pmf[::-1])
    assert stats.minimum_size(ALPHA, paired=True) == 8
    assert stats.minimum_size(ALPHA, paired=False) == 4


@pytest.mark.parametrize("n", [4, 5, 6])
def test_the_stated_false_claim_rate_is_the_rules_own(n: int) -> None:
    """Every equally likely ordering of two identical arms' n + n runs, judged: the share
    that establishes a difference is exactly 1 - the stated level, and the rate the verdict
    words say (rounded up) is never below it."""
    values = np.arange(2 * n, dtype=np.float64) * 0.01  # log times; only their order matters
    claims, total, level = 0, 0, 0.0
    for chosen in itertools.combinations(range(2 * n), n):
        rest = [i for i in range(2 * n) if i not in chosen]
        interval = unpaired_ratio(values[list(chosen)], values[rest])
        claims += interval.excludes_one
        total += 1
        level = interval.level
    assert claims / total == pytest.approx(1 - level) and interval.false_claim_rate() == (
        pytest.approx(claims / total)
    )
    assert float(false_claim_rate(level)[:-1]) / 100 >= claims / total
    assert float(percent(level)[:-1]) / 100 <= level
