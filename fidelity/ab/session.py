"""`fidelity ab` from the command line's plain values: commands parsed, arms run, judged."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fidelity.ab import runner, stats
from fidelity.ab.runner import AbReport, Command
from fidelity.ab.verdict import ALPHA, Arm, Expect
from fidelity.errors import UsageError

MAX_RUNS = 1_000_000  # per arm: the slots are listed before the first run
DEFAULT_REPS = 10


@dataclass(frozen=True, slots=True)
class Plan:
    a: str
    b: str
    control: str | None = None
    reps: int = DEFAULT_REPS
    warmup: int = 1
    order: str = "abba"
    timeout_s: float = 600.0
    expect: str = "differ"
    shell: bool = False
    cwd_a: Path | None = None
    cwd_b: Path | None = None


def command(text: str, cwd: Path | None, shell: bool) -> Command:
    """A command line as typed; split like a shell would unless it runs under one."""
    try:
        argv: tuple[str, ...] | str = text if shell else tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(
            f"cannot split command {text!r}: {exc}; quote it, or pass --shell"
        ) from None
    if not argv:
        raise UsageError("an empty command cannot be timed")
    return Command(argv, cwd)


def from_file(path: Path, expect: str, without_control: bool = False) -> AbReport:
    """Judge measurements recorded elsewhere (CSV or JSON) by the analysis they were measured
    for; a look without their control (asked, or the file's control times gone) is
    exploratory."""
    recorded = runner.load(path)
    timed = any(r.control_seconds is not None for r in recorded.reps)
    why = ""
    if recorded.control and not timed:
        why = (
            "the file says these runs were measured with a control, and its times are not in "
            "it: judged without them, the analysis is not the one fixed before the runs"
        )
    elif without_control and timed:
        why = (
            "these runs were measured with a control; judging them without it is an analysis "
            "chosen after seeing them, and the stated false-claim rate holds only for one "
            "fixed before"
        )
    return runner.judged(
        recorded.reps, "", without_control=why, expect=Expect(expect), order="recorded"
    )


def run(plan: Plan, announce: Callable[[str], None]) -> AbReport:
    """Run both arms (and the control) order-alternated, then judge."""
    order = runner.Order(plan.order)
    least = stats.minimum_size(ALPHA, paired=order is runner.Order.ABBA)
    if plan.reps < least:
        raise UsageError(
            f"--reps {plan.reps} cannot establish a difference: a 95% interval in {order} "
            f"order needs at least {least} runs per arm (--reps {least}; default "
            f"{DEFAULT_REPS}, more for smaller differences)"
        )
    if plan.warmup < 0:
        raise UsageError(f"--warmup {plan.warmup}: give 0 or more uncounted runs per arm")
    for flag, value in (("--reps", plan.reps), ("--warmup", plan.warmup)):
        if value > MAX_RUNS:
            raise UsageError(
                f"{flag} {value}: at most {MAX_RUNS:,} runs per arm (the schedule is made up "
                "front); judge longer campaigns in parts, or record them and use --from"
            )
    arms = {
        Arm.A: command(plan.a, plan.cwd_a, plan.shell),
        Arm.B: command(plan.b, plan.cwd_b, plan.shell),
    }
    control = None
    if plan.control:
        control = {
            Arm.A: command(plan.control, plan.cwd_a, plan.shell),
            Arm.B: command(plan.control, plan.cwd_b, plan.shell),
        }
    slots = runner.schedule(plan.reps, plan.warmup, order)
    per_slot = " (each followed by the control)" if control else ""
    announce(
        f"{len(slots)} runs{per_slot}, {plan.warmup} warm-up(s) per arm, {order.upper()} order"
    )
    reps, failure = runner.measure(arms, control, slots, plan.timeout_s)
    shown = {"a": arms[Arm.A].show(), "b": arms[Arm.B].show()}
    if control:
        shown["control"] = control[Arm.A].show()
    return runner.judged(
        reps, failure, expect=Expect(plan.expect), order=str(order), commands=shown
    )
