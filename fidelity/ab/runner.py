"""`fidelity ab`: run two arms order-alternated, or read recorded measurements, and judge.

Each slot runs one arm's command (and then the control, in the same slot and directory)
through fidelity.proc, so timeouts and process-group kills apply. The recorded duration
includes process start-up, equally for both arms. Nothing here judges speed: the verdict
is `verdict`'s, and a failed run stops the measurement rather than being judged.
"""

from __future__ import annotations

import csv
import enum
import io
import json
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fidelity import proc
from fidelity.ab.verdict import (
    Arm,
    Expect,
    Interval,
    Judgement,
    Repetition,
    Verdict,
    change,
    false_claim_rate,
    judge,
    percent,
)
from fidelity.errors import UsageError


class Order(enum.StrEnum):
    ABBA = "abba"  # A B B A A B ...: linear drift hits both arms equally
    ABAB = "abab"


def schedule(reps: int, warmup: int, order: Order) -> list[tuple[Arm, bool]]:
    """(arm, is_warmup) for every slot: warm-ups first (A then B), then counted runs."""
    slots = [(arm, True) for _ in range(warmup) for arm in (Arm.A, Arm.B)]
    for i in range(reps):
        pair = (Arm.B, Arm.A) if order is Order.ABBA and i % 2 else (Arm.A, Arm.B)
        slots += [(arm, False) for arm in pair]
    return slots


@dataclass(frozen=True, slots=True)
class Command:
    argv: tuple[str, ...] | str  # a string runs under a shell
    cwd: Path | None = None

    def show(self) -> str:
        """The command as it can be pasted into a shell to re-run it."""
        return self.argv if isinstance(self.argv, str) else shlex.join(self.argv)


@dataclass(frozen=True, slots=True)
class AbReport:
    reps: tuple[Repetition, ...]
    judgement: Judgement | None
    expect: Expect = Expect.DIFFER
    order: str = ""
    failure: str = ""  # why the run stopped before it could be judged
    commands: Mapping[str, str] = field(default_factory=dict)

    def exit_code(self) -> int:
        """0 when established the expected way, 1 when not, 3 when nothing could be judged."""
        if self.judgement is None or self.failure:
            return 3
        return 0 if self.judgement.holds(self.expect) else 1

    def summary(self) -> str:
        j = self.judgement
        if j is None:
            return f"no verdict: {self.failure}"
        parts = [j.headline()]
        if j.verdict is Verdict.ESTABLISHED and not j.holds(self.expect):
            parts.append(f"but B was expected to be {self.expect} than A (exit 1)")
        parts += [x for x in (j.control_words(), j.note) if x]
        return "; ".join(parts)

    def table(self) -> tuple[list[str], list[list[str]]]:
        j = self.judgement
        level = f" {percent(j.interval.level)}" if j and j.interval.level else ""
        cols = ["", "runs", "min s", "median s", "max s", f"B/A{level} interval"]
        if j is None:
            return cols, []
        rows = [
            [name, str(n), f"{band.low:.4f}", f"{band.median:.4f}", f"{band.high:.4f}", ""]
            for name, n, band in zip(("A", "B"), j.n, (j.a, j.b), strict=True)
        ]
        if j.control_a and j.control_b:
            rows += [
                [name, str(n), f"{band.low:.4f}", f"{band.median:.4f}", f"{band.high:.4f}", ""]
                for name, n, band in zip(
                    ("control in A's slots", "control in B's slots"),
                    j.n,
                    (j.control_a, j.control_b),
                    strict=True,
                )
            ]
        rows += [_ratio_row(name, interval) for name, interval in self._ratios(j)]
        return cols, rows

    def records(self) -> list[str]:
        """One tab-separated line per arm, per ratio and for the verdict, each cell saying
        what it is, for `-q`: no title, header or prose (the summary and --json have it)."""
        j = self.judgement
        if j is None:
            return [f"verdict\tnone\t{self.failure}\texit {self.exit_code()}"]
        bands = [("A", j.a), ("B", j.b)]
        if j.control_a and j.control_b:
            bands += [("control in A's slots", j.control_a), ("control in B's slots", j.control_b)]
        lines = [
            f"{name}\t{n} runs\tmin {b.low:.4f} s\tmedian {b.median:.4f} s\tmax {b.high:.4f} s"
            for (name, b), n in zip(bands, (*j.n, *j.n), strict=False)
        ]
        for name, interval in self._ratios(j):
            shown = f"{percent(interval.level)} interval {interval.span()}"
            lines.append(
                f"{name}\t{interval.ratio:.3f}\t{shown if interval.level else 'no interval'}"
            )
        if j.interval.low is None:
            said = f"too few runs: {min(j.n)} per arm, {j.method} needs {j.minimum}"
        elif j.verdict is Verdict.ESTABLISHED:
            said = f"B {change(j.ratio)} than A"
        else:
            said = "no difference established"
        cells = ["verdict", str(j.verdict), said]
        cells.append(
            f"expect {self.expect}: {'holds' if j.holds(self.expect) else 'does not hold'}"
        )
        if j.interval.level:
            cells.append(f"false-claim rate {false_claim_rate(j.interval.level)}")
            cells.append(
                "exact ranks"
                if j.interval.exact
                else f"ranks approximated ({j.interval.error:.1e})"
            )
        return [*lines, "\t".join([*cells, f"exit {self.exit_code()}"])]

    @staticmethod
    def _ratios(j: Judgement) -> list[tuple[str, Interval]]:
        judged = f"B/A ({j.method}{', control-corrected' if j.raw else ''})"
        found = [(judged, j.interval)]
        if j.raw is not None and j.control is not None:
            found += [("B/A uncorrected", j.raw), ("control B/A", j.control)]
        return found

    def to_json(self) -> dict[str, Any]:
        j = self.judgement
        verdict = None
        if j is not None:
            verdict = {
                "verdict": str(j.verdict),
                "holds": j.holds(self.expect),
                "expect": str(self.expect),
                "method": str(j.method),
                "runs": list(j.n),
                "minimum_runs_per_arm": j.minimum,
                "ratio": j.ratio,
                "interval": _interval_json(j.interval),
                "false_claim_rate": j.interval.false_claim_rate(),
                "uncorrected": _interval_json(j.raw) if j.raw else None,
                "control": _interval_json(j.control) if j.control else None,
                "words": j.headline(),
                "control_words": j.control_words(),
                "note": j.note,
            }
        return {
            "order": self.order,
            # the analysis the runs were measured for, fixed before them: a later look at
            # them without the control can then be told apart (`--from` reads it back)
            "analysis": {"control": any(r.control_seconds is not None for r in self.reps)},
            "commands": dict(self.commands),
            "failure": self.failure,
            "judgement": verdict,
            "repetitions": [
                {
                    "index": r.index,
                    "arm": str(r.arm),
                    "seconds": r.seconds,
                    "control_seconds": r.control_seconds,
                    "warmup": r.warmup,
                }
                for r in self.reps
            ],
        }


def _ratio_row(name: str, interval: Interval) -> list[str]:
    """B/A and its interval as a number range: the direction is the verdict's to say."""
    span = "none: too few runs" if interval.low is None else interval.span()
    return [name, "", "", f"{interval.ratio:.3f}", "", span]


def _interval_json(interval: Interval) -> dict[str, Any]:
    return {
        "ratio": interval.ratio,
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
        "distribution": "exact" if interval.exact else "normal approximation",
        "cdf_error": interval.error,
    }


Runner = Callable[[Command, float], proc.ProcResult]


def _run_command(command: Command, timeout_s: float) -> proc.ProcResult:
    shell = isinstance(command.argv, str)
    return proc.run(command.argv, cwd=command.cwd, timeout_s=timeout_s, shell=shell)


def _failure(what: str, slot: int, result: proc.ProcResult) -> str:
    tail = result.stderr.decode(errors="replace").strip().splitlines()[-3:]
    detail = f": {' / '.join(tail)}" if tail else ""
    if result.status is proc.ProcStatus.TIMEOUT:
        how = f"timed out in slot {slot} ({result.error})"
    elif result.status is proc.ProcStatus.NOT_FOUND:
        how = f"could not start in slot {slot}: {result.error or 'command not found'}"
        detail = ""
    elif result.status is proc.ProcStatus.CRASHED:
        how = f"was killed by signal {-(result.returncode or 0)} in slot {slot}"
    else:
        how = f"failed in slot {slot} (exit {result.returncode})"
    return f"{what} {how}{detail}; fix the command, then re-run"


def measure(
    arms: Mapping[Arm, Command],
    control: Mapping[Arm, Command] | None,
    plan: Sequence[tuple[Arm, bool]],
    timeout_s: float,
    runner: Runner = _run_command,
) -> tuple[list[Repetition], str]:
    """Run the plan in order, recording every slot; stop at the first failed command."""
    reps: list[Repetition] = []
    for slot, (arm, warm) in enumerate(plan):
        result = runner(arms[arm], timeout_s)
        if result.status is not proc.ProcStatus.OK:
            return reps, _failure(f"arm {arm.upper()}", slot, result)
        control_s = None
        if control is not None:
            ctl = runner(control[arm], timeout_s)
            if ctl.status is not proc.ProcStatus.OK:
                return reps, _failure(f"the control in arm {arm.upper()}", slot, ctl)
            control_s = ctl.duration_s
        reps.append(Repetition(slot, arm, result.duration_s, control_s, warm))
    return reps, ""


MIN_REPS = 2  # one repetition per arm makes a band of a single point


def judged(
    reps: Sequence[Repetition], failure: str, *, without_control: str = "", **kw: Any
) -> AbReport:
    """A report over recorded repetitions; a judgement only when the run completed and each
    arm has at least MIN_REPS counted repetitions (`verdict.judge` for `without_control`)."""
    counts = [sum(r.arm is arm and not r.warmup for r in reps) for arm in (Arm.A, Arm.B)]
    if not failure and min(counts) < MIN_REPS:
        failure = f"each arm needs {MIN_REPS} counted repetitions; got A {counts[0]}, B {counts[1]}"
    if failure:
        return AbReport(tuple(reps), None, failure=failure, **kw)
    try:
        return AbReport(tuple(reps), judge(reps, without_control=without_control), **kw)
    except ValueError as exc:
        return AbReport(tuple(reps), None, failure=str(exc), **kw)


# --- recorded measurements (CSV or JSON) ---

_TRUE = {"1", "true", "yes", "y"}
_FALSE = {"", "0", "false", "no", "n"}


def _float(value: Any, where: str, what: str = "seconds") -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise UsageError(f"{where}: no {what} value; every record needs one")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {what} {value!r} is not a number of seconds") from None
    if not 0 < seconds < float("inf"):  # nan too: a time is finite and above 0
        raise UsageError(f"{where}: {what} {value!r} is not a time above 0 seconds")
    return seconds


def _rep(i: int, record: Mapping[str, Any], where: str) -> Repetition:
    arm = str(record.get("arm", "")).strip().lower()
    if arm not in ("a", "b"):
        raise UsageError(f"{where}: arm must be 'a' or 'b', got {record.get('arm')!r}")
    ctl = record.get("control_seconds")
    warm = record.get("warmup", False)
    if isinstance(warm, str):
        if warm.strip().lower() not in _TRUE | _FALSE:
            raise UsageError(f"{where}: warmup must be true or false, got {warm!r}")
        warm = warm.strip().lower() in _TRUE
    try:
        index = int(i if record.get("index") in (None, "") else record["index"])
    except (TypeError, ValueError):
        raise UsageError(f"{where}: index must be an integer") from None
    return Repetition(
        index,
        Arm(arm),
        _float(record.get("seconds"), where),
        None if ctl in (None, "") else _float(ctl, where, "control_seconds"),
        bool(warm),
    )


def _columns(data: Mapping[str, Any], source: str) -> Iterable[dict[str, Any]]:
    """{"a": [...], "b": [...], "control_a": [...], "control_b": [...]} as records."""
    for arm in ("a", "b"):
        values = data.get(arm) or []
        controls = data.get(f"control_{arm}") or [None] * len(values)
        if len(controls) != len(values):
            raise UsageError(f"{source}: control_{arm} must have as many values as {arm}")
        for s, c in zip(values, controls, strict=True):
            yield {"arm": arm, "seconds": s, "control_seconds": c, "index": -1}  # order unknown


@dataclass(frozen=True, slots=True)
class Recorded:
    reps: list[Repetition]
    control: bool | None = None  # what the file says the runs were measured with, if it does


def load(path: Path) -> Recorded:
    """Repetitions from a CSV (columns arm, seconds[, control_seconds, warmup, index]) or a
    JSON file (a list of such records, `fidelity ab --json` output, or per-arm lists), and
    the analysis the file records (`fidelity ab --json` output records it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read measurements {path}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}: invalid JSON: {exc}") from None
        control = None
        if isinstance(data, dict) and "repetitions" in data:
            analysis = data.get("analysis")
            if isinstance(analysis, dict) and isinstance(analysis.get("control"), bool):
                control = analysis["control"]
            data = data["repetitions"]
        records = list(_columns(data, str(path))) if isinstance(data, dict) else data
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise UsageError(f"{path}: expected a list of {{arm, seconds}} records")
        if not records:
            raise UsageError(f"{path}: no measurements; record some runs first")
        reps = [_rep(i, r, f"{path}: record {i + 1}") for i, r in enumerate(records)]
        return Recorded(reps, control)
    reader = csv.DictReader(io.StringIO(text))
    columns = [c.strip() for c in reader.fieldnames or []]
    missing = [c for c in ("arm", "seconds") if c not in columns]
    if missing:
        raise UsageError(
            f"{path}:1: no {' or '.join(repr(c) for c in missing)} column (columns: "
            f"{', '.join(columns) or 'none'}); expected arm, seconds[, control_seconds, "
            "warmup, index]"
        )
    rows = [{k.strip(): v for k, v in row.items() if k} for row in reader]
    if not rows:
        raise UsageError(f"{path}: a header and no measurements; record some runs first")
    return Recorded([_rep(i, r, f"{path}:{i + 2}") for i, r in enumerate(rows)])
