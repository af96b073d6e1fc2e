"""A/B verdicts on synthetic measurements; the runner for order and recording, never speed."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import run_cli

from fidelity.ab import runner as ab_runner
from fidelity.ab.runner import Order
from fidelity.ab.verdict import Arm, Expect, Repetition, Verdict, judge, swap
from fidelity.errors import UsageError


def reps(
    a: list[float], b: list[float], ca: list[float] | None = None, cb: list[float] | None = None
) -> list[Repetition]:
    out: list[Repetition] = []
    for arm, times, ctl in ((Arm.A, a, ca), (Arm.B, b, cb)):
        for i, t in enumerate(times):
            out.append(Repetition(len(out), arm, t, ctl[i] if ctl else None))
    return out


# --- the pure verdict ---


def test_disjoint_bands_are_established() -> None:
    j = judge(reps([1.0, 1.1, 1.2], [0.7, 0.8, 0.9]))
    assert j.verdict is Verdict.ESTABLISHED
    assert j.ratio == pytest.approx(0.8 / 1.1)
    assert j.ratio_band == pytest.approx((0.7 / 1.2, 0.9 / 1.0))
    assert j.holds(Expect.FASTER) and not j.holds(Expect.SLOWER)


def test_touching_bands_are_inconclusive() -> None:
    """The exact boundary: max(B) == min(A) is an overlap, so nothing is established."""
    assert judge(reps([1.0, 1.2], [0.8, 1.0])).verdict is Verdict.INCONCLUSIVE
    just_apart = math.nextafter(1.0, 0.0)
    assert judge(reps([1.0, 1.2], [0.8, just_apart])).verdict is Verdict.ESTABLISHED


def test_noisy_control_makes_a_clear_gap_not_separable() -> None:
    """The arms' bands are disjoint, but the shared control moved 50% between the arms'
    slots while the effect is 20%: the machine, not the change, may explain it."""
    j = judge(reps([1.0, 1.05], [0.8, 0.84], ca=[1.0, 1.9], cb=[0.5, 1.0]))
    assert j.verdict is Verdict.NOT_SEPARABLE
    assert "cannot be told from drift" in j.reason()
    assert not j.holds(Expect.DIFFER)


def test_control_moving_exactly_as_much_as_the_effect_does_not_exceed_it() -> None:
    j = judge(reps([1.0, 1.0], [2.0, 2.0], ca=[1.0, 1.0], cb=[2.0, 2.0]))
    assert j.drift == j.effect
    assert j.verdict is Verdict.ESTABLISHED
    j = judge(reps([1.0, 1.0], [2.0, 2.0], ca=[1.0, 1.0], cb=[2.0, 2.01]))
    assert j.verdict is Verdict.NOT_SEPARABLE


def test_quiet_control_keeps_the_verdict() -> None:
    j = judge(reps([1.0, 1.05], [0.8, 0.84], ca=[0.5, 0.5], cb=[0.5, 0.51]))
    assert j.verdict is Verdict.ESTABLISHED
    assert j.control_ratio == pytest.approx(0.505 / 0.5)


def test_warmups_are_not_counted() -> None:
    measured = [Repetition(0, Arm.A, 9.0, warmup=True), Repetition(1, Arm.B, 0.1, warmup=True)]
    measured += reps([1.0, 1.1], [1.05, 1.2])
    j = judge(measured)
    assert (j.n, j.a.high, j.b.low) == ((2, 2), 1.1, 1.05)


def test_bad_measurements_are_refused() -> None:
    with pytest.raises(ValueError, match="seconds must be positive"):
        judge(reps([1.0, 0.0], [1.0, 1.0]))
    with pytest.raises(ValueError, match="only some"):
        judge(reps([1.0], [1.0]) + [Repetition(9, Arm.A, 1.0, 1.0)])
    with pytest.raises(ValueError, match="each arm"):
        judge(reps([1.0], []))


times = st.lists(st.floats(0.001, 1000.0), min_size=1, max_size=8)


@settings(max_examples=200)
@given(a=times, b=times, control=st.booleans(), data=st.data())
def test_verdict_is_symmetric_under_swapping_arms(
    a: list[float], b: list[float], control: bool, data: st.DataObject
) -> None:
    ca = data.draw(st.lists(st.floats(0.001, 10.0), min_size=len(a), max_size=len(a)))
    cb = data.draw(st.lists(st.floats(0.001, 10.0), min_size=len(b), max_size=len(b)))
    measured = reps(a, b, ca if control else None, cb if control else None)
    j, k = judge(measured), judge(swap(measured))
    assert j.verdict is k.verdict
    assert j.ratio == pytest.approx(1 / k.ratio)
    assert j.ratio_band == pytest.approx((1 / k.ratio_band[1], 1 / k.ratio_band[0]))
    assert j.ratio_band[0] <= j.ratio * (1 + 1e-12) and j.ratio <= j.ratio_band[1] * (1 + 1e-12)
    if j.verdict is Verdict.ESTABLISHED:
        assert j.holds(Expect.FASTER) != k.holds(Expect.FASTER)


# --- the runner: order and recording ---


def test_abba_schedule() -> None:
    plan = ab_runner.schedule(4, 1, Order.ABBA)
    assert "".join(arm.upper() + ("w" if w else "") for arm, w in plan) == "AwBwABBAABBA"
    assert "".join(a.upper() for a, _ in ab_runner.schedule(2, 0, Order.ABAB)) == "ABAB"


def _logger(log: Path, mark: str, fail: bool = False) -> str:
    code = f"open({str(log)!r}, 'a').write({mark!r}); raise SystemExit({int(fail)})"
    return f'{sys.executable} -c "{code}"'


def test_runner_order_and_recording(tmp_path: Path) -> None:
    log = tmp_path / "log"
    out_json = tmp_path / "ab.json"
    argv = [
        "ab",
        "--a",
        _logger(log, "A"),
        "--b",
        _logger(log, "B"),
        "--control",
        _logger(log, "c"),
        "--reps",
        "2",
        "--json",
        str(out_json),
    ]
    code, out = run_cli(argv)
    assert log.read_text() == "AcBcAcBcBcAc"  # warm-ups A B, then A B B A; control after each
    data = json.loads(out_json.read_text())
    recorded = [(r["index"], r["arm"], r["warmup"]) for r in data["repetitions"]]
    assert recorded == [
        (0, "a", True),
        (1, "b", True),
        (2, "a", False),
        (3, "b", False),
        (4, "b", False),
        (5, "a", False),
    ]
    assert all(r["seconds"] > 0 and r["control_seconds"] > 0 for r in data["repetitions"])
    assert data["judgement"]["verdict"] in {"established", "not-separable", "inconclusive"}
    assert code in (0, 1)  # speed is not what this test is about
    assert "6 runs, 1 warm-up(s) per arm, ABBA order" in out


def test_failed_run_stops_and_exits_3(tmp_path: Path) -> None:
    log = tmp_path / "log"
    code, out = run_cli(
        ["ab", "--a", _logger(log, "A"), "--b", _logger(log, "B", fail=True), "--reps", "2"]
    )
    assert code == 3
    assert log.read_text() == "AB"
    assert "no verdict: arm B failed in slot 1 (exit 1)" in out


def test_too_few_reps_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--reps must be at least 2"):
        run_cli(["ab", "--a", "true", "--b", "true", "--reps", "1"])


# --- recorded measurements ---


def test_csv_measurements(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text(
        "arm,seconds,control_seconds,warmup\n"
        "a,5.0,1.0,true\na,1.0,1.0,\nb,0.8,1.0,\nb,0.82,1.01,\na,1.02,1.0,\n"
    )
    md = tmp_path / "ab.md"
    code, out = run_cli(["ab", "--from", str(path), "--expect", "faster", "--markdown", str(md)])
    assert code == 0
    assert "established: B/A = 0.802 (band 0.784-0.820), n = 2+2" in out
    assert "| B/A |" in md.read_text()


def test_json_per_arm_lists_and_expectation(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"a": [1.0, 1.1], "b": [1.3, 1.4]}))
    code, out = run_cli(["ab", "--from", str(path), "--expect", "faster"])
    assert code == 1
    assert "but B is not faster than A as expected" in out


def test_inconclusive_is_red_and_single_rep_untrusted(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"a": [1.0, 1.2], "b": [1.1, 1.3]}))
    assert run_cli(["ab", "--from", str(path)])[0] == 1
    path.write_text(json.dumps({"a": [1.0], "b": [2.0]}))
    code, out = run_cli(["ab", "--from", str(path)])
    assert code == 3
    assert "each arm needs 2 counted repetitions; got A 1, B 1" in out


def test_recorded_run_rejudges_identically(tmp_path: Path) -> None:
    measured = reps([1.0, 1.1, 1.05], [0.9, 0.95, 0.97], [0.3] * 3, [0.31] * 3)
    first = ab_runner.judged(measured, "", order="abba")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(first.to_json()))
    again = ab_runner.judged(ab_runner.load(path), "")
    assert again.judgement == first.judgement


def test_bad_record_is_located(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("arm,seconds\na,1.0\nc,2.0\n")
    with pytest.raises(UsageError, match=r"m.csv:3: arm must be 'a' or 'b'"):
        ab_runner.load(path)
