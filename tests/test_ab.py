"""A/B verdicts on synthetic measurements; the runner for order and recording, never speed."""

from __future__ import annotations

import json
import random
import re
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import run_cli

from fidelity.ab import runner as ab_runner
from fidelity.ab.runner import Order
from fidelity.ab.verdict import Arm, Expect, Method, Repetition, Verdict, blocked, judge
from fidelity.cli import main as cli
from fidelity.cli.main import main
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


def abba(
    a: list[float], b: list[float], ca: list[float] | None = None, cb: list[float] | None = None
) -> list[Repetition]:
    """Runs recorded in ABBA order: pair k is (a[k], b[k]) run A first when k is even."""
    out: list[Repetition] = []
    for k, (x, y) in enumerate(zip(a, b, strict=True)):
        pair = [(Arm.A, x, ca[k] if ca else None), (Arm.B, y, cb[k] if cb else None)]
        for arm, t, c in pair if k % 2 == 0 else pair[::-1]:
            out.append(Repetition(len(out), arm, t, c))
    return out


SLOWER = [1.0, 1.02, 0.99, 1.01, 1.03, 0.98, 1.0, 1.01, 0.97, 1.02]


def test_clear_slowdown_is_established_with_its_interval() -> None:
    j = judge(abba(SLOWER, [t * 1.25 for t in SLOWER]))
    assert (j.verdict, j.method) == (Verdict.ESTABLISHED, Method.PAIRED)
    assert j.ratio == pytest.approx(1.25)
    assert j.interval.low is not None and 1 < j.interval.low <= 1.25 <= (j.interval.high or 0)
    assert j.interval.level >= 0.95
    assert j.holds(Expect.SLOWER) and not j.holds(Expect.FASTER)
    assert j.headline().startswith("established: B is 25.0% slower than A (96.8% interval ")


@pytest.mark.parametrize(
    ("measured", "level", "rate", "each"),
    [
        (abba(SLOWER, [t * 1.25 for t in SLOWER]), "96.8%", "3.2%", "1.6%"),  # 5 vs 5 pairs
        (abba(SLOWER[:8], [t * 1.25 for t in SLOWER[:8]]), "97.1%", "2.9%", "1.45%"),  # 4 vs 4
        (reps(SLOWER[:6], [t * 1.25 for t in SLOWER[:6]]), "95.8%", "4.2%", "2.1%"),
    ],
)
def test_verdict_states_the_level_it_computed_and_its_false_claim_rate(
    measured: list[Repetition], level: str, rate: str, each: str
) -> None:
    """Not "95%" whatever the runs: the exact level these sizes reach (rounded down), and
    the false-claim rate that goes with it (rounded up), in words."""
    j = judge(measured)
    assert j.interval.level >= 0.95 and f"({level} interval " in j.headline()
    assert f"false-claim rate {rate}: at most {rate} of runs like this establish a " in j.headline()
    assert f"two commands that take the same time, {each} each way; exact rank " in j.headline()
    assert j.interval.false_claim_rate() == pytest.approx(1 - j.interval.level)
    assert "95% interval" not in j.headline()


def test_inconclusive_states_the_rate_of_the_rule_too() -> None:
    j = judge(abba(SLOWER, SLOWER[::-1]))
    assert "(96.8% interval between " in j.headline() and "false-claim rate 3.2%" in j.headline()


def test_identical_arms_are_inconclusive_and_say_what_to_do() -> None:
    j = judge(abba(SLOWER, SLOWER[::-1]))
    assert j.verdict is Verdict.INCONCLUSIVE
    assert "no difference established" in j.headline() and "--reps 20" in j.headline()


def test_too_few_runs_give_no_interval_rather_than_a_weak_claim() -> None:
    """Seven pairs of a clear 2x slowdown: a 95% interval needs eight (4 AB + 4 BA)."""
    j = judge(abba(SLOWER[:7], [2 * t for t in SLOWER[:7]]))
    assert j.verdict is Verdict.INCONCLUSIVE and j.interval.low is None
    assert "7 runs per arm cannot give a 95% interval (paired needs at least 8" in j.headline()
    assert judge(abba(SLOWER[:8], [2 * t for t in SLOWER[:8]])).verdict is Verdict.ESTABLISHED


def test_run_order_effect_cancels() -> None:
    """Whichever arm runs second is 30% faster (warm caches): identical arms stay identical,
    where the order-blind unpaired reading of the same runs would see nothing either way
    but a naive A-first pairing would see a 30% difference."""
    reps = []
    for k in range(10):
        first, second = (Arm.A, Arm.B) if k % 2 == 0 else (Arm.B, Arm.A)
        reps += [
            Repetition(2 * k, first, 1.0 + 0.01 * k),
            Repetition(2 * k + 1, second, 0.7 + 0.01 * k),
        ]
    j = judge(reps)
    assert j.ratio == pytest.approx(1.0, abs=0.01) and j.verdict is Verdict.INCONCLUSIVE
    assert j.method is Method.PAIRED and j.interval.width() < 1.05  # unpaired: about 1.7


def test_recorded_without_order_is_judged_unpaired() -> None:
    reps = [Repetition(0, Arm.A, t) for t in SLOWER] + [
        Repetition(0, Arm.B, 1.3 * t) for t in SLOWER
    ]
    j = judge(reps)
    assert j.method is Method.UNPAIRED and j.verdict is Verdict.ESTABLISHED
    assert "judged unpaired: run order unknown" in j.note


def test_arms_recorded_in_blocks_never_establish_a_difference() -> None:
    """Identical arms run AAAAAAAAAA then BBBBBBBBBB on a machine slowing 1% a run: the
    order-blind interval said "established: B is 9.6% slower" at a stated 4.4% false-claim
    rate that only holds when order and arm are not confounded."""
    arms = [Arm.A] * 10 + [Arm.B] * 10
    drifting = [Repetition(i, arm, 1.0 + 0.01 * i) for i, arm in enumerate(arms)]
    j = judge(drifting)
    assert j.method is Method.UNPAIRED and j.verdict is Verdict.INCONCLUSIVE
    assert j.interval.excludes_one  # the interval alone would have claimed it
    assert "the arms ran in blocks (2 stretches of one arm where a random order makes" in j.note
    unknown = [replace(r, index=0) for r in drifting]  # no order recorded: the user's claim
    assert judge(unknown).verdict is Verdict.ESTABLISHED


def test_orders_that_mix_the_arms_are_not_called_blocks() -> None:
    """ABAB (every pair A first) and ABBA never; random orders at most at the test's 5%."""
    abab = [Repetition(i, Arm.A if i % 2 == 0 else Arm.B, 1.0 + 0.01 * i) for i in range(20)]
    assert blocked(abab) == "" and blocked(abba(SLOWER, SLOWER)) == ""
    rng = random.Random(7)
    flagged = 0
    for _ in range(400):
        arms = [Arm.A] * 10 + [Arm.B] * 10
        rng.shuffle(arms)
        flagged += bool(blocked([Repetition(i, arm, 1.0) for i, arm in enumerate(arms)]))
    assert flagged <= 0.08 * 400, flagged


def _drifting(shared: bool) -> list[Repetition]:
    """B 10% slower; the machine slows by up to 40% from slot to slot. With a shared
    drift the control sees it too; otherwise the control has noise of its own."""
    reps, k = [], 0
    for pair in range(12):
        arms = (Arm.A, Arm.B) if pair % 2 == 0 else (Arm.B, Arm.A)
        for arm in arms:
            machine = 1.0 + 0.4 * ((k * 7919) % 11) / 10
            own = 1.0 + 0.4 * ((k * 104729) % 13) / 12
            work = 1.1 if arm is Arm.B else 1.0
            reps.append(Repetition(k, arm, work * machine, 0.5 * (machine if shared else own)))
            k += 1
    return reps


def test_control_corrects_shared_drift_and_says_so() -> None:
    j = judge(_drifting(shared=True))
    assert j.ratio == pytest.approx(1.1) and j.verdict is Verdict.ESTABLISHED
    assert j.raw is not None and j.raw.width() > j.interval.width()
    assert "the control moved B/A from" in j.control_words() and "and narrowed" in j.control_words()


def test_control_with_its_own_noise_widens_and_says_drop_it() -> None:
    j = judge(_drifting(shared=False))
    assert (
        "widened" in j.control_words()
        and "the next run may do better without --control" in j.control_words()
    )


FROM_TO = re.compile(r"from (\S+) to (\S+?)[:\s]")


def test_a_change_too_small_for_three_digits_is_shown_with_more() -> None:
    """The issue's run: "widened its interval from 0.798-0.825 to 0.798-0.825"."""
    fixture = Path(__file__).resolve().parents[1] / "cases/fixtures/ab/paired.csv"
    judged = ab_runner.judged(ab_runner.load(fixture).reps, "").judgement
    assert judged is not None
    words = judged.control_words()
    assert "moved B/A from 0.813 to 0.812 and widened its interval by 0.6% from " in words
    assert "from 0.7983-0.8253 to 0.7980-0.8253: " in words
    assert "(the control itself ran 0.008% slower in B's slots)" in words


def test_a_control_that_changes_nothing_says_so() -> None:
    measured = abba(SLOWER, [1.2 * t for t in SLOWER], [1.0] * 10, [1.0] * 10)
    words = judge(measured).control_words()
    assert words.startswith("the control left B/A at 1.200 and left its interval as it was (")


@settings(max_examples=200)
@given(st.lists(st.floats(0.5, 2.0), min_size=8, max_size=12), st.data())
def test_control_words_never_say_from_x_to_x(a: list[float], data: st.DataObject) -> None:
    def same(n: int) -> list[float]:
        return data.draw(st.lists(st.floats(0.5, 2.0), min_size=n, max_size=n))

    words = judge(abba(a, same(len(a)), same(len(a)), same(len(a)))).control_words()
    for before, after in FROM_TO.findall(words):
        assert before != after, words


def test_bad_measurements_are_refused() -> None:
    with pytest.raises(ValueError, match="seconds must be positive"):
        judge(reps([1.0, 0.0], [1.0, 1.0]))
    with pytest.raises(ValueError, match="only some"):
        judge(reps([1.0], [1.0]) + [Repetition(9, Arm.A, 1.0, 1.0)])
    with pytest.raises(ValueError, match="each arm"):
        judge(reps([1.0], []))


def test_warmups_are_not_counted() -> None:
    measured = [Repetition(0, Arm.A, 9.0, warmup=True), Repetition(1, Arm.B, 0.1, warmup=True)]
    measured += [replace(r, index=r.index + 2) for r in abba(SLOWER, SLOWER)]
    j = judge(measured)
    assert (j.n, j.a.high, j.b.low, j.method) == ((10, 10), 1.03, 0.97, Method.PAIRED)


times = st.lists(st.floats(0.001, 1000.0), min_size=1, max_size=12)


def swap(reps: list[Repetition]) -> list[Repetition]:
    """The same measurements with the arms' names exchanged."""
    other = {Arm.A: Arm.B, Arm.B: Arm.A}
    return [replace(r, arm=other[r.arm]) for r in reps]


@settings(max_examples=200)
@given(a=times, control=st.booleans(), paired=st.booleans(), data=st.data())
def test_verdict_is_symmetric_under_swapping_arms(
    a: list[float], control: bool, paired: bool, data: st.DataObject
) -> None:
    b = data.draw(st.lists(st.floats(0.001, 1000.0), min_size=len(a), max_size=len(a)))
    ca = data.draw(st.lists(st.floats(0.001, 10.0), min_size=len(a), max_size=len(a)))
    cb = data.draw(st.lists(st.floats(0.001, 10.0), min_size=len(a), max_size=len(a)))
    measured = (abba if paired else reps)(a, b, ca if control else None, cb if control else None)
    j, k = judge(measured), judge(swap(measured))
    assert j.verdict is k.verdict and j.method is k.method
    assert j.ratio == pytest.approx(1 / k.ratio)
    if j.interval.low is not None:
        assert j.interval.low == pytest.approx(1 / (k.interval.high or 0))
        assert j.interval.low <= j.ratio * (1 + 1e-9) and j.ratio <= (j.interval.high or 0) * (
            1 + 1e-9
        )
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
    ]
    code, out = run_cli([*argv, "--reps", "8", "--json", str(out_json)])
    # warm-ups A B, then A B B A twice over; the control after each arm, in its slot
    assert log.read_text() == "AcBc" + "AcBcBcAc" * 4
    data = json.loads(out_json.read_text())
    recorded = [(r["index"], r["arm"], r["warmup"]) for r in data["repetitions"]]
    assert recorded[:6] == [
        (0, "a", True),
        (1, "b", True),
        (2, "a", False),
        (3, "b", False),
        (4, "b", False),
        (5, "a", False),
    ]
    assert len(recorded) == 18
    assert all(r["seconds"] > 0 and r["control_seconds"] > 0 for r in data["repetitions"])
    assert data["judgement"]["verdict"] in {"established", "inconclusive"}
    assert (
        data["judgement"]["method"] == "paired" and data["judgement"]["interval"]["level"] >= 0.95
    )
    assert code in (0, 1)  # speed is not what this test is about
    assert "18 runs (each followed by the control), 1 warm-up(s) per arm, ABBA order" in out


def test_failed_run_stops_and_exits_3(tmp_path: Path) -> None:
    log = tmp_path / "log"
    code, out = run_cli(["ab", "--a", _logger(log, "A"), "--b", _logger(log, "B", fail=True)])
    assert code == 3
    assert log.read_text() == "AB"
    assert "no verdict: arm B failed in slot 1 (exit 1); fix the command, then re-run" in out


def test_missing_command_and_timeout_are_named(tmp_path: Path) -> None:
    code, out = run_cli(["ab", "-q", "--a", "true", "--b", "no-such-command-here"])
    assert code == 3
    assert "arm B could not start in slot 1:" in out and "exit None" not in out
    sleeper = f"{sys.executable} -c 'import time; time.sleep(5)'"
    code, out = run_cli(["ab", "-q", "--a", sleeper, "--b", "true", "--timeout", "0.2"])
    assert code == 3
    assert "arm A timed out in slot 0 (timed out after 0.2 s" in out


def test_too_few_reps_is_a_usage_error() -> None:
    """Fewer runs than a 95% interval needs would only ever say inconclusive: refused."""
    with pytest.raises(
        UsageError,
        match="--reps 7 cannot establish a difference: a 95% interval in abba order needs at least 8",
    ):
        run_cli(["ab", "--a", "true", "--b", "true", "--reps", "7"])
    with pytest.raises(UsageError, match="in abab order needs at least 4"):
        run_cli(["ab", "--a", "true", "--b", "true", "--reps", "3", "--order", "abab"])


@pytest.mark.parametrize("flag", ["--reps", "--warmup"])
def test_more_runs_than_the_bound_is_a_usage_error(flag: str) -> None:
    """`--reps 10**12` listed 2 * 10^12 slots before the first run (a MemoryError or a hang):
    red before the bound."""
    with pytest.raises(UsageError, match=f"{flag} 1000000000000: at most 1,000,000 runs per arm"):
        run_cli(["ab", "--a", "true", "--b", "true", flag, str(10**12)])


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "0", "-5", "1e10", "soon"])
def test_a_time_limit_that_cannot_be_waited_for_is_refused_before_any_run(
    value: str, capsys
) -> None:
    """nan and inf were a traceback (exit 3); 0 and -5 ran, then blamed the command."""
    with pytest.raises(SystemExit) as info:
        main(["ab", "--a", "true", "--b", "true", "--timeout", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --timeout:" in err and "Traceback" not in err


@pytest.mark.parametrize("flag", ["--cwd-a", "--cwd-b"])
def test_an_arms_folder_that_is_not_there_is_refused_before_any_run(
    flag: str, tmp_path: Path
) -> None:
    """It started the runs, then blamed the command ("fix the command") for the folder."""
    with pytest.raises(UsageError, match=f"{flag} {tmp_path / 'gone'}: no such folder"):
        run_cli(["ab", "--a", "true", "--b", "true", flag, str(tmp_path / "gone")])


def test_recorded_commands_keep_their_quoting(tmp_path: Path) -> None:
    out_json = tmp_path / "ab.json"
    a = f"{sys.executable} -c 'print(\"a b\")'"
    run_cli(["ab", "--a", a, "--b", a, "--reps", "8", "--warmup", "0", "--json", str(out_json)])
    shown = json.loads(out_json.read_text())["commands"]["a"]
    assert shlex.split(shown) == shlex.split(a)


def test_json_to_stdout_stays_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ab", "--a", "true", "--b", "true", "--reps", "8", "--json", "-"]) in (0, 1)
    captured = capsys.readouterr()
    assert json.loads(captured.out)["judgement"]["method"] == "paired"
    assert "runs, 1 warm-up(s) per arm" in captured.err


# --- recorded measurements ---


def _csv(rows: list[tuple[str, float, float]]) -> str:
    return "arm,seconds,control_seconds\n" + "".join(f"{a},{s},{c}\n" for a, s, c in rows)


def test_csv_measurements(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    measured = abba(SLOWER, [0.8 * t for t in SLOWER])
    path.write_text(
        "arm,seconds,control_seconds,warmup\na,5.0,1.0,true\n"
        + "".join(f"{r.arm},{r.seconds},1.0,\n" for r in measured)
    )
    md = tmp_path / "ab.md"
    code, out = run_cli(["ab", "--from", str(path), "--expect", "faster", "--markdown", str(md)])
    assert code == 0
    assert "established: B is 20.0% faster than A (96.8% interval " in out
    assert "paired, 10+10 runs; false-claim rate 3.2%" in out
    report = md.read_text()
    assert "false-claim rate 3.2%" in report and "| B/A 96.8% interval |" in report
    assert "| B/A (paired, control-corrected) |  |  | 0\\.800 |  | 0\\.800-0.800 |" in report


def test_quiet_prints_only_records(tmp_path: Path) -> None:
    """`ab -q`: one self-describing line per arm, per ratio and for the verdict; no title,
    header, table or sentence (the summary is in --json and --markdown)."""
    path = tmp_path / "m.csv"
    path.write_text(
        _csv([(r.arm, r.seconds, 1.0) for r in abba(SLOWER, [0.8 * t for t in SLOWER])])
    )
    code, out = run_cli(["ab", "-q", "--from", str(path), "--expect", "faster"])
    assert code == 0
    assert out.splitlines() == [
        "A\t10 runs\tmin 0.9700 s\tmedian 1.0050 s\tmax 1.0300 s",
        "B\t10 runs\tmin 0.7760 s\tmedian 0.8040 s\tmax 0.8240 s",
        "control in A's slots\t10 runs\tmin 1.0000 s\tmedian 1.0000 s\tmax 1.0000 s",
        "control in B's slots\t10 runs\tmin 1.0000 s\tmedian 1.0000 s\tmax 1.0000 s",
        "B/A (paired, control-corrected)\t0.800\t96.8% interval 0.800-0.800",
        "B/A uncorrected\t0.800\t96.8% interval 0.800-0.800",
        "control B/A\t1.000\t96.8% interval 1.000-1.000",
        "verdict\testablished\tB 20.0% faster than A\texpect faster: holds\t"
        "false-claim rate 3.2%\texact ranks\texit 0",
    ]
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"a": [1.0], "b": [2.0]}))
    code, out = run_cli(["ab", "-q", "--from", str(path)])
    assert (code, out) == (
        3,
        "verdict\tnone\teach arm needs 2 counted repetitions; got A 1, B 1\texit 3\n",
    )


def test_quiet_run_sends_its_progress_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ab", "-q", "--a", "true", "--b", "true", "--reps", "8"]) in (0, 1)
    captured = capsys.readouterr()
    assert "runs, 1 warm-up(s) per arm" in captured.err
    assert [line.split("\t")[0] for line in captured.out.splitlines()] == [
        "A",
        "B",
        "B/A (paired)",
        "verdict",
    ]


def test_established_the_other_way_is_red(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"a": SLOWER, "b": [1.3 * t for t in SLOWER]}))
    code, out = run_cli(["ab", "--from", str(path), "--expect", "faster"])
    assert code == 1
    assert "established: B is 30.0% slower than A" in out
    assert "but B was expected to be faster than A (exit 1)" in out
    assert "judged unpaired: run order unknown" in out


def test_inconclusive_is_red_and_single_rep_untrusted(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"a": [1.0, 1.2], "b": [1.1, 1.3]}))
    code, out = run_cli(["ab", "--from", str(path)])
    assert code == 1
    assert "2 runs per arm cannot give a 95% interval (unpaired needs at least 4 per arm)" in out
    path.write_text(json.dumps({"a": [1.0], "b": [2.0]}))
    code, out = run_cli(["ab", "--from", str(path)])
    assert code == 3
    assert "each arm needs 2 counted repetitions; got A 1, B 1" in out


def test_recorded_run_rejudges_identically(tmp_path: Path) -> None:
    measured = abba(SLOWER, [0.9 * t for t in SLOWER], [0.3] * 10, [0.31] * 10)
    first = ab_runner.judged(measured, "", order="abba")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(first.to_json()))
    again = ab_runner.judged(ab_runner.load(path).reps, "")
    assert again.judgement == first.judgement


def test_bad_record_is_located(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("arm,seconds\na,1.0\nc,2.0\n")
    with pytest.raises(UsageError, match=r"m.csv:3: arm must be 'a' or 'b'"):
        ab_runner.load(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "arm,time\na,1.0\n",
            r"m.csv:1: no 'seconds' column \(columns: arm, time\); expected arm, seconds",
        ),
        ("arm,seconds\n", r"m.csv: a header and no measurements; record some runs first"),
        ("arm,seconds\na,\n", r"m.csv:2: no seconds value; every record needs one"),
        ("", r"m.csv:1: no 'arm' or 'seconds' column \(columns: none\)"),
    ],
)
def test_unusable_csv_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "m.csv"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        ab_runner.load(path)


def test_the_analysis_is_fixed_before_the_runs(tmp_path: Path) -> None:
    """Identical arms whose control widens the interval: judged as measured, inconclusive;
    looked at again without the control (asked, or the control's times cut from the file),
    the look is exploratory and never established, whatever its interval says."""
    drift = [1.0, 1.3, 1.0, 1.3, 1.0, 1.3, 1.0, 1.3, 1.0, 1.3]
    a = [d * 1.0 for d in drift]
    b = [d * 0.9 for d in drift]  # B is 10% faster, the control is pure noise
    noise = [0.5, 0.9, 0.4, 1.1, 0.6, 0.3, 1.2, 0.5, 0.8, 0.4]
    measured = abba(a, b, noise, list(reversed(noise)))
    report = ab_runner.judged(measured, "", order="abba")
    assert report.judgement is not None and report.judgement.verdict is Verdict.INCONCLUSIVE
    path = tmp_path / "run.json"
    path.write_text(json.dumps(report.to_json()))
    assert report.to_json()["analysis"] == {"control": True}
    plain = ab_runner.judged([replace(r, control_seconds=None) for r in measured], "")
    assert plain.judgement is not None and plain.judgement.verdict.value == "established"

    code, out = run_cli(["ab", "--from", str(path), "--without-control"])
    said = " ".join(out.split())
    assert code == 1, out
    assert "exploratory, not a verdict: " in said and "run afresh without --control" in said
    assert "established" not in said.split("exploratory")[0]

    stripped = report.to_json()
    for r in stripped["repetitions"]:
        r["control_seconds"] = None
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(stripped))
    code, out = run_cli(["ab", "--from", str(cut)])
    assert code == 1 and "exploratory, not a verdict" in " ".join(out.split()), out


def test_without_control_needs_recorded_runs() -> None:
    with pytest.raises(UsageError, match="--without-control looks at recorded runs"):
        run_cli(["ab", "--a", "true", "--b", "true", "--without-control"])


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "soon"])
def test_a_recorded_time_that_is_no_time_is_a_located_usage_error(
    tmp_path: Path, value: str
) -> None:
    """inf was exit 3 ("seconds must be positive, got inf") where a word was exit 2."""
    path = tmp_path / "m.csv"
    rows = "".join(f"{arm},1.0\n" for arm in "abba" * 2)
    path.write_text(f"arm,seconds\n{rows}b,{value}\n")
    with pytest.raises(UsageError, match=f"{path}:.*seconds {value!r} is not a"):
        run_cli(["ab", "--from", str(path)])
