"""The A/B timing verdict: pure over recorded repetitions, so it is tested on simulated ones.

Paired (the default ABBA order): the counted runs, in run order, form adjacent pairs AB,
BA, AB, ... and each pair gives g = ln(first) - ln(second). If B takes r times as long as
A, AB pairs give g = p - ln r and BA pairs g = p + ln r, where p is whatever the run order
adds (the second run of a pair finding warm caches, the machine drifting within the pair),
the same for both kinds. So the shift between the BA and the AB pairs is 2 ln r whatever p
is, and its Hodges-Lehmann interval with the exact Mann-Whitney distribution
(`stats.shift`) is an interval for r of at least 95%. Unpaired (measurements recorded
without their run order, or `abab`, where every pair runs A first): the same interval for
ln b - ln a.

The rank distribution is discrete, so the interval's exact level is the first one at or
above 95% that these sample sizes reach (96.8% for 10 ABBA runs per arm, 95.7% for 10
unpaired), and the verdict states that number, not "95%". Its complement is the
false-claim rate, stated too and holding at every number of runs: when the arms do not
differ, exactly that share of verdicts are `established` (half of it in each direction),
whatever the noise's shape, as long as a pair's noise does not depend on which arm ran
first (ties, which timings do not have, only lower it). Too few runs for a 95% interval
give `inconclusive`, never a weaker claim; power grows with runs.

The control (shared work the change does not touch, run after the arm in every slot and
in the arm's directory) corrects drift: each run's time is divided by its slot's control
time before pairing, which removes a machine slow-down that hits a slot's arm and control
alike, and any difference between the two directories that the change does not cause. It
adds the control's own noise, so it can widen the interval; the verdict says by how much
it moved the ratio and whether it narrowed or widened the interval.

The analysis (with the control or without) is fixed when the runs are measured: runs with a
control are judged with it. Judging them again without it, after seeing how each analysis
came out, is a second look whose false-claim rate is no longer the stated one (picking the
better of two analyses roughly doubles it), so such a look is `exploratory`: it shows its
interval and never establishes; a difference is established only by a fresh run measured
the way it is judged.
"""

from __future__ import annotations

import enum
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from fidelity.ab import stats
from fidelity.ab.stats import Floats

ALPHA = 0.05  # two-sided: an interval of at least 95%


class Arm(enum.StrEnum):
    A = "a"
    B = "b"


class Verdict(enum.StrEnum):
    ESTABLISHED = "established"  # the interval for B/A (at least 95%) excludes 1
    INCONCLUSIVE = "inconclusive"


class Expect(enum.StrEnum):
    DIFFER = "differ"  # any established difference
    FASTER = "faster"  # B takes less time than A
    SLOWER = "slower"


class Method(enum.StrEnum):
    PAIRED = "paired"  # order-balanced pairs (ABBA)
    UNPAIRED = "unpaired"


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


@dataclass(frozen=True, slots=True)
class Interval:
    """B/A as a ratio of times, with its interval (None when the runs cannot reach it)."""

    ratio: float
    low: float | None
    high: float | None
    level: float  # the interval's exact confidence (at least 1 - ALPHA), 0 without one
    exact: bool = True  # the level from the exact rank distribution (else a lower bound)
    error: float = 0.0  # the normal approximation's cdf error bound (0 when exact)

    @property
    def excludes_one(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 1 or self.high < 1)

    def width(self) -> float:
        return math.inf if self.low is None or self.high is None else self.high / self.low

    def words(self) -> str:
        if self.low is None or self.high is None:
            return f"B/A = {self.ratio:.3f}, no 95% interval"
        lo, hi = self.low, self.high
        if lo > 1:
            span = f"{(lo - 1) * 100:.1f}% to {(hi - 1) * 100:.1f}% slower"
        elif hi < 1:
            span = f"{(1 - hi) * 100:.1f}% to {(1 - lo) * 100:.1f}% faster"
        else:
            span = f"between {change(lo)} and {change(hi)}"
        return f"{percent(self.level)} interval {span}; B/A {self.ratio:.3f} ({self.span()})"

    def span(self, digits: int = 3) -> str:
        """The interval as a plain range of B/A, no direction word: `0.798-0.825`."""
        return "none" if self.low is None else f"{self.low:.{digits}f}-{self.high:.{digits}f}"

    def distribution(self) -> str:
        """Which rank distribution gave the level, in words."""
        if self.exact:
            return "exact rank distribution"
        return (
            f"normal approximation of the rank distribution, cdf within {self.error:.1e} of "
            "the exact one: the level is a lower bound"
        )

    def false_claim_rate(self) -> float | None:
        """The share of verdicts that claim a difference between two arms that do not
        differ, under this interval's rule at these sample sizes: 1 - its exact level."""
        return None if self.low is None else 1.0 - self.level


def percent(level: float) -> str:
    """An interval's level as a percentage, rounded down (never claims more): `96.8%`."""
    return f"{math.floor(round(level * 1000, 6)) / 10:.1f}%"


def false_claim_rate(level: float) -> str:
    """1 - level as a percentage, rounded up: with `percent(level)` it adds up to 100%."""
    return f"{100 - float(percent(level)[:-1]):.1f}%"


def false_claims(level: float) -> str:
    """The false-claim rate of an interval at `level`, in a benchmark owner's words."""
    rate = false_claim_rate(level)
    each = f"{round(float(rate[:-1]) / 2, 2):g}%"
    return (
        f"false-claim rate {rate}: at most {rate} of runs like this establish a difference "
        f"between two commands that take the same time, {each} each way"
    )


def change(ratio: float) -> str:
    """A ratio of times in words: 1.25 -> '25.0% slower', 0.8 -> '20.0% faster'."""
    pct = abs(ratio - 1) * 100
    shown = f"{pct:.1f}" if pct >= 0.05 or pct == 0 else f"{pct:.1g}"  # never `0.0% slower`
    return f"{shown}% {'slower' if ratio >= 1 else 'faster'}"


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    method: Method
    a: Band
    b: Band
    n: tuple[int, int]  # counted repetitions of A and B
    interval: Interval  # the judged B/A (corrected by the control when there is one)
    minimum: int  # the fewest runs per arm with which this method can establish anything
    raw: Interval | None = None  # B/A before the control's correction
    control: Interval | None = None  # the control's own B-slot / A-slot ratio
    control_a: Band | None = None
    control_b: Band | None = None
    note: str = ""  # why the method is what it is, when not the default
    # why this look cannot establish anything: an analysis other than the one the runs were
    # measured for, chosen after seeing them ("" for the analysis fixed before the runs)
    exploratory: str = ""

    @property
    def ratio(self) -> float:
        return self.interval.ratio

    def holds(self, expect: Expect) -> bool:
        """Whether an established verdict points the expected way."""
        if self.verdict is not Verdict.ESTABLISHED or self.interval.low is None:
            return False
        if expect is Expect.FASTER:
            return (self.interval.high or math.inf) < 1
        if expect is Expect.SLOWER:
            return self.interval.low > 1
        return True

    def headline(self) -> str:
        how = (
            f"{self.method}, {self.n[0]}+{self.n[1]} runs; {false_claims(self.interval.level)}; "
            f"{self.interval.distribution()}"
        )
        if self.exploratory:
            return (
                f"exploratory, not a verdict: {self.interval.words()}; {self.exploratory}. To "
                f"establish a difference this way, run afresh without --control (--reps "
                f"{max(self.n)} or more) and judge that run"
            )
        if self.interval.low is None:
            return (
                f"inconclusive: {min(self.n)} runs per arm cannot give a 95% interval "
                f"({self.method} needs at least {self.minimum} per arm); re-run with "
                f"--reps {max(self.minimum, 10)}"
            )
        if self.verdict is Verdict.ESTABLISHED:
            return f"established: B is {change(self.ratio)} than A ({self.interval.words()}; {how})"
        return (
            f"inconclusive: no difference established ({self.interval.words()}; {how}). A "
            "difference inside that interval can hide in this noise: run more repetitions "
            "(e.g. --reps 20) or on a quieter machine"
        )

    def control_words(self) -> str:
        """What the control changed, or '' without one."""
        if self.raw is None or self.control is None:
            return ""
        raw, now = self.raw, self.interval
        d = _digits((raw.ratio,), (now.ratio,))
        moved = f"the control moved B/A from {raw.ratio:.{d}f} to {now.ratio:.{d}f}"
        if d > 6:
            moved = f"the control left B/A at {now.ratio:.3f}"
        if raw.low is None or raw.high is None or now.low is None or now.high is None:
            return moved
        d = _digits((raw.low, raw.high), (now.low, now.high))
        before, after = raw.span(min(d, 6)), now.span(min(d, 6))
        old_width, new_width = raw.high - raw.low, now.high - now.low
        by = f"by {_share(abs(new_width / old_width - 1))} " if old_width else ""
        if d > 6:
            effect = f"and left its interval as it was ({now.span()})"
        elif new_width < old_width:
            effect = f"and narrowed its interval {by}from {before} to {after}"
        elif new_width > old_width:
            effect = (
                f"and widened its interval {by}from {before} to {after}: its noise is not the "
                "arms' noise, so it costs more than it corrects; the next run may do better "
                "without --control (these runs stand as judged with it)"
            )
        else:
            effect = f"and shifted its interval from {before} to {after}"
        ctl = f"(the control itself ran {change(self.control.ratio)} in B's slots)"
        return f"{moved} {effect} {ctl}"


def _digits(first: Sequence[float], second: Sequence[float]) -> int:
    """The fewest decimals (3 to 6) that tell two sets of numbers apart; 7 when 6 cannot,
    so that a change too small to show is said as none, never as `0.798 to 0.798`."""
    for digits in range(3, 7):
        if [f"{x:.{digits}f}" for x in first] != [f"{x:.{digits}f}" for x in second]:
            return digits
    return 7


def _share(fraction: float) -> str:
    """A relative change, with a digit more while it would round to 0: `0.6%`, `12%`."""
    pct = fraction * 100
    return f"{pct:.0f}%" if pct >= 9.5 else f"{pct:.1f}%" if pct >= 0.05 else f"{pct:.2g}%"


def _counted(reps: Sequence[Repetition], arm: Arm) -> list[Repetition]:
    return [r for r in reps if r.arm is arm and not r.warmup]


def _check(reps: Sequence[Repetition]) -> None:
    for r in reps:
        if not (math.isfinite(r.seconds) and r.seconds > 0):
            raise ValueError(f"repetition {r.index}: seconds must be positive, got {r.seconds}")
        c = r.control_seconds
        if c is not None and not (math.isfinite(c) and c > 0):
            raise ValueError(f"repetition {r.index}: control seconds must be positive, got {c}")


def pairs(reps: Sequence[Repetition]) -> tuple[list[tuple[Repetition, Repetition]], str]:
    """Adjacent counted runs in run order as (first, second) pairs, and '' when they make
    an order-balanced design; else no pairs and the reason."""
    counted = sorted((r for r in reps if not r.warmup), key=lambda r: r.index)
    if len({r.index for r in counted}) != len(counted):
        return [], "run order unknown (repeated or missing indexes)"
    if len(counted) % 2:
        return [], "an odd number of counted runs"
    found = list(zip(counted[::2], counted[1::2], strict=True))
    if any(first.arm is second.arm for first, second in found):
        return [], "the runs do not alternate in pairs"
    kinds = {first.arm for first, _ in found}
    if kinds != {Arm.A, Arm.B}:
        return [], "every pair runs the same arm first, so order and change cannot be told apart"
    return found, ""


Z_ONE_SIDED = 1.645  # a standard normal's 95% point: a runs test at 5%, one-sided


def blocked(reps: Sequence[Repetition]) -> str:
    """Why the recorded run order confounds arm and time, or "": a runs test (Wald and
    Wolfowitz) on the arms of the counted runs in run order. Far fewer switches between
    the arms than a random order makes (one-sided, 5%) means they ran in blocks, so a
    machine that drifts over time reads as a difference between them, at any number of
    runs: the unpaired interval's false-claim rate then does not hold."""
    counted = sorted((r for r in reps if not r.warmup), key=lambda r: r.index)
    n1 = sum(r.arm is Arm.A for r in counted)
    n2, n = len(counted) - n1, len(counted)
    if n < 3 or not n1 or not n2:
        return ""
    runs = 1 + sum(x.arm is not y.arm for x, y in itertools.pairwise(counted))
    mean = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    if var <= 0 or (runs - mean) / math.sqrt(var) >= -Z_ONE_SIDED:
        return ""
    return (
        f"the arms ran in blocks ({runs} stretches of one arm where a random order makes "
        f"about {mean:.0f}), so a machine drifting over time would read as a difference: "
        "never established; run them alternated (`fidelity ab` runs ABBA) or with a control"
    )


def _log(r: Repetition, corrected: bool) -> float:
    value = math.log(r.seconds)
    if corrected and r.control_seconds is not None:
        value -= math.log(r.control_seconds)
    return value


def paired_ratio(ab: Floats, ba: Floats) -> Interval:
    """B/A from pair differences ln(first) - ln(second) of AB pairs and of BA pairs."""
    return _ratio(stats.shift(ab, ba, ALPHA), half=True)


def unpaired_ratio(log_a: Floats, log_b: Floats) -> Interval:
    """B/A from the arms' log times, order ignored."""
    return _ratio(stats.shift(log_a, log_b, ALPHA), half=False)


def _interval_paired(found: Sequence[tuple[Repetition, Repetition]], corrected: bool) -> Interval:
    ab = [_log(f, corrected) - _log(s, corrected) for f, s in found if f.arm is Arm.A]
    ba = [_log(f, corrected) - _log(s, corrected) for f, s in found if f.arm is Arm.B]
    return paired_ratio(np.array(ab), np.array(ba))


def _interval_unpaired(
    a: Sequence[Repetition], b: Sequence[Repetition], corrected: bool
) -> Interval:
    xs = np.array([_log(r, corrected) for r in a])
    ys = np.array([_log(r, corrected) for r in b])
    return unpaired_ratio(xs, ys)


def _ratio(s: stats.Shift, half: bool) -> Interval:
    scale = 0.5 if half else 1.0
    low = None if s.low is None else math.exp(s.low * scale)
    high = None if s.high is None else math.exp(s.high * scale)
    return Interval(math.exp(s.estimate * scale), low, high, s.level, s.exact, s.error)


def _control_reps(reps: Sequence[Repetition]) -> list[Repetition]:
    """The control's times as if they were the arms' (for the control's own ratio)."""
    return [
        replace(r, seconds=r.control_seconds, control_seconds=None)
        for r in reps
        if r.control_seconds is not None
    ]


def _has_control(a: Sequence[Repetition], b: Sequence[Repetition]) -> bool:
    with_control = [r.control_seconds is not None for r in (*a, *b)]
    if any(with_control) and not all(with_control):
        raise ValueError("the control was measured in only some counted repetitions")
    return any(with_control)


def judge(reps: Sequence[Repetition], *, without_control: str = "") -> Judgement:
    """The verdict over every counted repetition; ValueError when an arm has none. With
    `without_control` (why the runs are looked at without the control they were measured
    with), the control's times are set aside and the look is exploratory: never established."""
    if without_control:
        looked = judge([replace(r, control_seconds=None) for r in reps])
        return replace(looked, verdict=Verdict.INCONCLUSIVE, exploratory=without_control)
    _check(reps)
    a_reps, b_reps = _counted(reps, Arm.A), _counted(reps, Arm.B)
    if not a_reps or not b_reps:
        raise ValueError("each arm needs at least one counted (non-warm-up) repetition")
    control = _has_control(a_reps, b_reps)
    found, why = pairs(reps)
    method = Method.PAIRED if found else Method.UNPAIRED
    known = not (found or control or why.startswith("run order unknown"))
    confounded = blocked(reps) if known else ""  # a control's ratio corrects the drift

    def interval(source: Sequence[Repetition], corrected: bool) -> Interval:
        if method is Method.PAIRED:
            return _interval_paired(pairs(source)[0], corrected)
        return _interval_unpaired(_counted(source, Arm.A), _counted(source, Arm.B), corrected)

    judged = interval(reps, control)
    held = judged.excludes_one and not confounded
    verdict = Verdict.ESTABLISHED if held else Verdict.INCONCLUSIVE
    bands = None
    if control:
        bands = (
            Band.of([r.control_seconds or 0.0 for r in a_reps]),
            Band.of([r.control_seconds or 0.0 for r in b_reps]),
        )
    return Judgement(
        verdict,
        method,
        Band.of([r.seconds for r in a_reps]),
        Band.of([r.seconds for r in b_reps]),
        (len(a_reps), len(b_reps)),
        judged,
        stats.minimum_size(ALPHA, paired=method is Method.PAIRED),
        interval(reps, False) if control else None,
        interval(_control_reps(reps), False) if control else None,
        bands[0] if bands else None,
        bands[1] if bands else None,
        "" if found else f"judged unpaired: {why}" + (f"; {confounded}" if confounded else ""),
    )
