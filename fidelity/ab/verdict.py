"""The A/B timing verdict: pure over recorded repetitions, so it is tested on synthetic ones.

Timings on shared machines are noisy, so the verdict is deliberately blunt. `established`
needs the arms' bands (min-max over counted repetitions) to be disjoint; touching bands
overlap. A control (work both arms share and the change does not touch) measures drift
between the arms' slots: when its between-arm difference exceeds the effect, the effect
cannot be told from drift and the verdict is `not-separable`, whatever the bands say.
Differences are compared as absolute log-ratios of medians, which makes the verdict
scale-free and exactly symmetric under swapping the arms.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace


class Arm(enum.StrEnum):
    A = "a"
    B = "b"


class Verdict(enum.StrEnum):
    ESTABLISHED = "established"
    NOT_SEPARABLE = "not-separable"
    INCONCLUSIVE = "inconclusive"


class Expect(enum.StrEnum):
    DIFFER = "differ"  # any established difference
    FASTER = "faster"  # B takes less time than A
    SLOWER = "slower"


@dataclass(frozen=True, slots=True)
class Repetition:
    """One timed run of an arm (and of the control in the same slot), as recorded."""

    index: int  # position in the run order, warm-ups included
    arm: Arm
    seconds: float
    control_seconds: float | None = None
    warmup: bool = False  # run to warm caches; never counted


@dataclass(frozen=True, slots=True)
class Band:
    low: float
    median: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Band:
        return cls(min(values), statistics.median(values), max(values))

    def overlaps(self, other: Band) -> bool:
        """Whether the two closed intervals share a point (touching counts)."""
        return self.low <= other.high and other.low <= self.high


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    a: Band
    b: Band
    n: tuple[int, int]  # counted repetitions of A and B
    ratio: float  # median(B) / median(A)
    ratio_band: tuple[float, float]  # (min B / max A, max B / min A)
    control_a: Band | None = None
    control_b: Band | None = None
    effect: float = 0.0  # |ln median(B) - ln median(A)|
    drift: float | None = None  # the same for the control

    @property
    def control_ratio(self) -> float | None:
        if self.control_a is None or self.control_b is None:
            return None
        return self.control_b.median / self.control_a.median

    def reason(self) -> str:
        if self.verdict is Verdict.NOT_SEPARABLE:
            return (
                f"the control moved {_pct(self.drift or 0.0)} between arms, more than "
                f"the effect ({_pct(self.effect)}); the effect cannot be told from drift"
            )
        if self.verdict is Verdict.ESTABLISHED:
            return "the arms' min-max bands do not overlap"
        return "the arms' min-max bands overlap; more repetitions or a quieter machine may help"

    def holds(self, expect: Expect) -> bool:
        """Whether an established verdict points the expected way."""
        if self.verdict is not Verdict.ESTABLISHED:
            return False
        if expect is Expect.FASTER:
            return self.b.high < self.a.low
        if expect is Expect.SLOWER:
            return self.b.low > self.a.high
        return True


def _pct(log_ratio: float) -> str:
    return f"{(math.exp(log_ratio) - 1) * 100:.1f}%"


def _counted(reps: Sequence[Repetition], arm: Arm) -> list[Repetition]:
    return [r for r in reps if r.arm is arm and not r.warmup]


def _check(reps: Sequence[Repetition]) -> None:
    for r in reps:
        if not (math.isfinite(r.seconds) and r.seconds > 0):
            raise ValueError(f"repetition {r.index}: seconds must be positive, got {r.seconds}")
        c = r.control_seconds
        if c is not None and not (math.isfinite(c) and c > 0):
            raise ValueError(f"repetition {r.index}: control seconds must be positive, got {c}")


def _control_bands(a: list[Repetition], b: list[Repetition]) -> tuple[Band, Band] | None:
    with_control = [r.control_seconds is not None for r in (*a, *b)]
    if not any(with_control):
        return None
    if not all(with_control):
        raise ValueError("the control was measured in only some counted repetitions")
    return (
        Band.of([r.control_seconds for r in a if r.control_seconds is not None]),
        Band.of([r.control_seconds for r in b if r.control_seconds is not None]),
    )


def judge(reps: Sequence[Repetition]) -> Judgement:
    """The verdict over every counted repetition; ValueError when an arm has none."""
    _check(reps)
    a_reps, b_reps = _counted(reps, Arm.A), _counted(reps, Arm.B)
    if not a_reps or not b_reps:
        raise ValueError("each arm needs at least one counted (non-warm-up) repetition")
    a = Band.of([r.seconds for r in a_reps])
    b = Band.of([r.seconds for r in b_reps])
    effect = abs(math.log(b.median) - math.log(a.median))
    controls = _control_bands(a_reps, b_reps)
    drift = None
    if controls is not None:
        drift = abs(math.log(controls[1].median) - math.log(controls[0].median))
    if drift is not None and drift > effect:
        verdict = Verdict.NOT_SEPARABLE
    elif not a.overlaps(b):
        verdict = Verdict.ESTABLISHED
    else:
        verdict = Verdict.INCONCLUSIVE
    return Judgement(
        verdict,
        a,
        b,
        (len(a_reps), len(b_reps)),
        b.median / a.median,
        (b.low / a.high, b.high / a.low),
        controls[0] if controls else None,
        controls[1] if controls else None,
        effect,
        drift,
    )


def swap(reps: Sequence[Repetition]) -> list[Repetition]:
    """The same measurements with the arms' names exchanged."""
    other = {Arm.A: Arm.B, Arm.B: Arm.A}
    return [replace(r, arm=other[r.arm]) for r in reps]
