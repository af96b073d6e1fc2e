"""Replays end to end: a program that caches what it trains, run cold then warm (and twice
cold) on each side of real commits, judged by the case's own comparators."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from support import PY, Repo, snapshot

from fidelity.matrix import gate, rejudge, reports
from fidelity.matrix.cases import files
from fidelity.matrix.run.request import RunRequest, Shard
from fidelity.matrix.verdict.compare import Verdict
from fidelity.matrix.verdict.evidence import ReplayVerdict
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome

# Trains one model per (alpha, beta) and persists each under the cache folder. The cache is
# read once, at start-up, as a simulator loads its predictors. VARIANT picks a defect.
TRAIN = """
import json, os, pathlib, random, sys, time
VARIANT = pathlib.Path("variant.txt").read_text().strip()
SCALE = float(pathlib.Path("scale.txt").read_text()) if pathlib.Path("scale.txt").exists() else 1.0
CLOCK = random.Random(time.time_ns())
STAMP = time.time_ns if VARIANT == "stamped" else (lambda: 0)
cache, out = pathlib.Path(os.environ["SIM_CACHE"]), pathlib.Path(sys.argv[1])
known = {p.stem: json.loads(p.read_text()) for p in sorted(cache.glob("*.json"))}

def key(alpha, beta):
    return f"m-{alpha}" if VARIANT == "key-misses-beta" else f"m-{alpha}-{beta}"

rows = []
for alpha, beta in [(1, 1), (1, 2), (2, 1)]:
    k = key(alpha, beta)
    if k in known and VARIANT != "ignores-cache":
        model = known[k]
        if VARIANT == "crashes-warm":
            sys.exit("cannot load " + k)
    else:
        model = {"w": alpha * 1.5 + beta * 0.25}
        (cache / f"{k}.json").write_text(json.dumps(model))
    for sample in range(8):
        noise = CLOCK.random() if VARIANT == "clock-seeded" else 0.0
        rows.append(f"{alpha},{beta},{sample},{model['w'] * SCALE + noise!r},{STAMP()}")
(out / "predictions.csv").write_text("alpha,beta,sample,w,stamp\\n" + "\\n".join(rows) + "\\n")
"""


def table(replay: str | None = "cold-warm", extra: str = "") -> str:
    line = f'replay = "{replay}"\n' if replay else ""
    return f"""
[[case]]
id = "train"
argv = [{json.dumps(PY)}, "train.py", "{{out}}"]
outputs = ["predictions.csv"]
cache_env = "SIM_CACHE"
{line}{extra}
[case.compare."predictions.csv"]
kind = "csv"
key = ["alpha", "beta", "sample"]
"""


def two_sides(
    repo: Repo, base_variant: str, cand_variant: str, replay: str | None = "cold-warm", **kw
) -> Outcome:
    extra = kw.pop("extra", "")
    base = repo.commit(
        {
            "train.py": TRAIN,
            "variant.txt": base_variant,
            "cases/matrix.toml": table(replay, extra),
            ".gitignore": "__pycache__/\n",
        }
    )
    repo.commit({"variant.txt": cand_variant, "train.py": TRAIN + "\n# refactored\n"})
    return gate.run(repo.path, RunRequest(base, "HEAD", **kw))


def replayed(outcome: Outcome, role: str = "candidate") -> ReplayVerdict:
    side = outcome.candidate if role == "candidate" else outcome.baseline
    found = side.cases["train"].replay
    assert found is not None
    return found.verdict


def test_the_correct_program_reproduces_from_its_cache(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "ok", "ok")
    assert replayed(outcome, "baseline") is ReplayVerdict.CACHE_REPRODUCES
    assert replayed(outcome) is ReplayVerdict.CACHE_REPRODUCES
    assert outcome.exit_code == 0, outcome.findings
    warm = outcome.candidate.cases["train"].replay.runs[-1]  # type: ignore[union-attr]
    assert warm.kind == "warm" and warm.cache_written == ()
    assert len(outcome.candidate.cases["train"].cache) == 3  # the cold run wrote three models
    # the warm run got a copy: the first run's cache is the evidence, as recorded
    assert rejudge.recompare(outcome.run_dir).exit_code == 0


def test_a_cache_key_that_misses_a_parameter_diverges_with_the_values(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "key-misses-beta", "key-misses-beta")
    replay = outcome.candidate.cases["train"].replay
    assert replay is not None and replay.verdict is ReplayVerdict.CACHE_DIVERGES
    said = " ".join(replay.differences)
    # (1, 1) loaded the model (1, 2) wrote last under the same key: 1.75 -> 2.0
    assert "predictions.csv" in said and "1.75" in said and "2.0" in said, said
    assert outcome.comparison.summary.replay_failures == 1
    assert outcome.exit_code == 1
    assert outcome.comparison.cases[0].verdict is Verdict.IDENTICAL  # the sides agree
    junit = {c.name: c for c in reports.junit_cases(outcome)}
    assert junit["train"].failure is not None
    assert "candidate cache-diverges" in junit["train"].failure
    assert "cache-diverges" in reports.markdown(outcome)


def test_a_program_that_ignores_its_cache_is_cache_not_used(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "ignores-cache", "ignores-cache")
    replay = outcome.candidate.cases["train"].replay
    assert replay is not None and replay.verdict is ReplayVerdict.CACHE_NOT_USED
    assert "wrote 3 cache files again" in replay.detail
    assert outcome.exit_code == 1


def test_a_warm_run_that_fails_is_replay_failed(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "crashes-warm", "crashes-warm")
    assert replayed(outcome) is ReplayVerdict.REPLAY_FAILED
    assert outcome.exit_code == 1


def test_a_clock_seeded_program_is_nondeterministic_and_a_refactor_is_not_moved(
    make_repo,
) -> None:
    outcome = two_sides(make_repo("sim"), "clock-seeded", "clock-seeded", replay="twice")
    assert replayed(outcome, "baseline") is ReplayVerdict.NONDETERMINISTIC
    assert replayed(outcome) is ReplayVerdict.NONDETERMINISTIC
    result = outcome.comparison.cases[0]
    assert result.verdict is Verdict.WITHIN_SPREAD, result
    assert "baseline 2 versions in 2 runs, candidate 2 in 2" in result.detail
    assert outcome.exit_code == 0
    # judged again from the run directory alone: the same class
    assert rejudge.recompare(outcome.run_dir).comparison.cases[0].verdict is Verdict.WITHIN_SPREAD


def test_without_replays_the_same_clock_seeded_refactor_is_moved(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "clock-seeded", "clock-seeded", replay=None)
    assert outcome.comparison.cases[0].verdict is Verdict.MOVED
    assert outcome.candidate.cases["train"].replay is None


def test_a_spread_seen_on_one_side_only_is_moved_and_said_too_small(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "clock-seeded", "ok", replay="twice")
    assert outcome.comparison.cases[0].verdict is Verdict.MOVED
    found = [f for f in outcome.findings if f.code is Code.SPREAD_TOO_SMALL]
    assert len(found) == 1 and "one side only" in found[0].message, outcome.findings
    assert "raise the case's `repeat`" in found[0].message
    assert outcome.exit_code == 3


def test_a_declared_nondeterministic_case_that_never_varied_cannot_be_judged(
    make_repo,
) -> None:
    extra = "repeat = 2\nnondeterministic = true\n"
    repo = make_repo("sim")
    base = repo.commit(
        {"train.py": TRAIN, "variant.txt": "ok", "cases/matrix.toml": table(None, extra)}
    )
    repo.commit({"train.py": TRAIN.replace("* 0.25", "* 0.5")})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert outcome.comparison.cases[0].verdict is Verdict.MOVED
    found = [f for f in outcome.findings if f.code is Code.SPREAD_TOO_SMALL]
    assert found and "did not vary in 2 runs" in found[0].message
    assert outcome.exit_code == 3


def test_a_prediction_names_the_candidates_replay_verdict(make_repo) -> None:
    repo = make_repo("sim")
    base = repo.commit(
        {"train.py": TRAIN, "variant.txt": "key-misses-beta", "cases/matrix.toml": table()}
    )
    predicted = (  # the cache's files are named anew, so the case moves too
        '[prediction]\nwhy = "the key names beta"\nmoved = ["train"]\n'
        'replay = { train = "cache-reproduces" }\n'
    )
    repo.commit({"cases/fix.toml": predicted, "variant.txt": "ok"})
    held = gate.run(repo.path, RunRequest(base, "HEAD", expect="cases/fix.toml"))
    assert replayed(held, "baseline") is ReplayVerdict.CACHE_DIVERGES
    assert held.judged is not None and held.judged.verdict.value == "HELD", held.judged
    assert held.judged.confirmed == ("train",)
    assert held.exit_code == 0
    # the same claim about a candidate that did not fix it is falsified
    repo.commit({"variant.txt": "key-misses-beta"})
    falsified = gate.run(repo.path, RunRequest(base, "HEAD", expect="cases/fix.toml"))
    assert falsified.judged is not None and falsified.judged.missed == ("train",)
    assert falsified.exit_code == 1


def test_an_unpredicted_replay_failure_falsifies_a_prediction(make_repo) -> None:
    repo = make_repo("sim")
    base = repo.commit({"train.py": TRAIN, "variant.txt": "ok", "cases/matrix.toml": table()})
    repo.commit({"cases/p.toml": '[prediction]\nwhy = "nothing moves"\n', "variant.txt": "x"})
    repo.commit({"variant.txt": "ignores-cache"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD", expect="cases/p.toml"))
    assert outcome.judged is not None and outcome.judged.failed == ("train",)
    assert outcome.exit_code == 1


def test_a_replay_file_edited_after_the_run_is_evidence_altered(make_repo) -> None:
    outcome = two_sides(make_repo("sim"), "ok", "ok")
    warm = outcome.run_dir / "candidate" / "cases" / "train" / "replay" / "warm"
    (warm / "out" / "predictions.csv").write_text("alpha,beta,w\n")
    again = rejudge.recompare(outcome.run_dir)
    altered = [f for f in again.findings if f.code is Code.EVIDENCE_ALTERED]
    assert altered and "replay/warm/out/predictions.csv changed" in altered[0].message
    assert again.exit_code == 3


def test_replay_in_the_cli_for_a_whole_run_with_the_users_tree_untouched(make_repo) -> None:
    repo = make_repo("sim")
    base = repo.commit({"train.py": TRAIN, "variant.txt": "ok", "cases/matrix.toml": table(None)})
    repo.commit({"variant.txt": "key-misses-beta"})
    before = snapshot(repo.path)
    fidelity = shutil.which("fidelity") or "fidelity"
    run = [fidelity, "run", "--baseline", base, "--replay", "cold-warm", "-q", "--repo"]
    done = subprocess.run([*run, str(repo.path)], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "train baseline: cache-reproduces" in done.stdout
    assert "! train candidate: cache-diverges" in done.stdout
    assert "1 replay failed" in done.stdout
    assert snapshot(repo.path) == before
    resumed = subprocess.run(
        [fidelity, "run", "--resume", "x", "--replay", "twice", "--repo", str(repo.path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert resumed.returncode == 2 and "keeps the --replay it began with" in resumed.stderr


def test_a_cold_warm_replay_without_a_cache_is_a_table_error(make_repo) -> None:
    from fidelity.errors import TableError
    from fidelity.matrix.cases import table as casetable

    text = table().replace('cache_env = "SIM_CACHE"\n', "")
    try:
        casetable.parse(text.encode(), "t.toml")
    except TableError as exc:
        assert any("needs a cache to warm" in p for p in exc.problems), exc.problems
    else:
        raise AssertionError("a cold-warm replay without a cache was accepted")
    declared = table(None, "nondeterministic = true\n")
    try:
        casetable.parse(declared.encode(), "t.toml")
    except TableError as exc:
        assert any("repeat = 3" in p for p in exc.problems), exc.problems
    else:
        raise AssertionError("a declared nondeterministic case with one run was accepted")


def test_a_warm_run_no_faster_than_a_long_cold_run_did_not_use_its_cache() -> None:
    from fidelity.matrix.run.replay import _not_used
    from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus, ReplayRun

    cold = CaseEvidence("c", "0" * 64, CaseStatus.OK, 0, 2.0, cache={"m.json": "a" * 64})
    warm = ReplayRun("warm", "replay/warm", CaseStatus.OK, 0, 2.1, cache={"m.json": "a" * 64})
    assert "saved nothing" in _not_used(cold, warm)
    barely = ReplayRun("warm", "replay/warm", CaseStatus.OK, 0, 1.9, cache={"m.json": "a" * 64})
    assert _not_used(cold, barely) == ""  # faster, if not by much: speed is only a hint
    faster = ReplayRun("warm", "replay/warm", CaseStatus.OK, 0, 0.5, cache={"m.json": "a" * 64})
    assert _not_used(cold, faster) == ""
    short = CaseEvidence("c", "0" * 64, CaseStatus.OK, 0, 0.2, cache={"m.json": "a" * 64})
    assert _not_used(short, warm) == ""  # under a second, speed is not judged
    empty = CaseEvidence("c", "0" * 64, CaseStatus.OK, 0, 2.0)
    assert "wrote nothing to its cache" in _not_used(empty, faster)
    # with both runs' CPU read, CPU decides: a warm run that waited longer than the cold run
    # worked, but spent no CPU, used its cache; one that spent as much did not
    worked = CaseEvidence("c", "0" * 64, CaseStatus.OK, 0, 2.0, cache={"m": "a" * 64}, cpu_s=1.5)
    waited = ReplayRun(
        "warm", "replay/warm", CaseStatus.OK, 0, 2.5, cache={"m": "a" * 64}, cpu_s=0.1
    )
    assert _not_used(worked, waited) == ""
    busy = ReplayRun("warm", "replay/warm", CaseStatus.OK, 0, 0.9, cache={"m": "a" * 64}, cpu_s=1.6)
    said = _not_used(worked, busy)
    assert "1.60 CPU-s, no less than the cold run's 1.50 CPU-s (wall 0.90 s and 2.00 s)" in said


def test_replay_for_a_whole_run_keeps_each_cases_own_and_twice_without_a_cache() -> None:
    from fidelity.matrix.cases import table as casetable

    text = table("twice") + '\n[[case]]\nid = "plain"\nargv = ["x"]\noutputs = ["o"]\n'
    text += '\n[[case]]\nid = "cached"\nargv = ["x"]\ncache_env = "C"\n'
    text += '\n[[case]]\nid = "named"\nargv = ["x", "--cache", "{cache}"]\noutputs = ["o"]\n'
    matrix = casetable.with_replay(casetable.parse(text.encode(), "t.toml"), "cold-warm")
    assert {c.id: c.replay for c in matrix.cases} == {
        "train": "twice",
        "plain": "twice",
        "cached": "cold-warm",
        "named": "cold-warm",  # `{cache}` in the command is a cache as much as cache_env
    }
    assert [c.id for c in matrix.cases if c.replay_note] == ["plain"]  # said, not silent
    assert casetable.with_replay(matrix, None) is matrix


def test_a_noisy_case_whose_steady_column_moved_is_moved_not_within_spread(make_repo) -> None:
    """The stamp column varies between runs; w does not, and the candidate scales it."""
    repo = make_repo("sim")
    base = repo.commit(
        {"train.py": TRAIN, "variant.txt": "stamped", "cases/matrix.toml": table("twice")}
    )
    repo.commit({"scale.txt": "100"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert replayed(outcome) is ReplayVerdict.NONDETERMINISTIC
    result = outcome.comparison.cases[0]
    assert result.verdict is Verdict.MOVED, result
    assert "predictions.csv w: differs between the sides, never between runs" in result.detail
    # first: the terminal cuts a case's line from the end, and this is why it moved
    assert result.detail.startswith("predictions.csv w: differs between the sides"), result
    assert outcome.exit_code == 1 and not outcome.findings


def test_a_noisy_column_that_moved_far_beyond_its_spread_is_moved(make_repo) -> None:
    repo = make_repo("sim")
    base = repo.commit(
        {"train.py": TRAIN, "variant.txt": "clock-seeded", "cases/matrix.toml": table("twice")}
    )
    repo.commit({"scale.txt": "100"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    result = outcome.comparison.cases[0]
    assert result.verdict is Verdict.MOVED, result
    assert "between the sides, at most" in result.detail and "between runs" in result.detail
    assert outcome.exit_code == 1


def test_a_change_that_makes_a_case_deterministic_is_a_move_with_enough_runs(make_repo) -> None:
    repo = make_repo("sim")
    base = repo.commit(
        {
            "train.py": TRAIN,
            "variant.txt": "clock-seeded",
            "cases/matrix.toml": table(None, "repeat = 3\n"),
        }
    )
    repo.commit({"variant.txt": "ok"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    result = outcome.comparison.cases[0]
    assert result.verdict is Verdict.MOVED and "the change moved how it varies" in result.detail
    assert not [f for f in outcome.findings if f.code is Code.SPREAD_TOO_SMALL]
    assert outcome.exit_code == 1


def test_noise_in_the_outputs_does_not_hide_a_cache_written_again(make_repo) -> None:
    repo = make_repo("sim")
    base = repo.commit(
        {
            "train.py": TRAIN.replace('VARIANT != "ignores-cache"', "False"),
            "variant.txt": "stamped",
            "cases/matrix.toml": table("cold-warm", "repeat = 2\n"),
        }
    )
    outcome = gate.run(repo.path, RunRequest(base, base))
    assert replayed(outcome) is ReplayVerdict.CACHE_NOT_USED
    assert outcome.candidate.cases["train"].replay.varying == ("predictions.csv",)  # type: ignore[union-attr]


HOSTILE_CACHE = """
import os, pathlib, sys
cache, out = pathlib.Path(os.environ["SIM_CACHE"]), pathlib.Path(sys.argv[1])
kind = pathlib.Path("variant.txt").read_text().strip()
if kind == "fifo" and not (cache / "m.json").exists():
    os.mkfifo(cache / "pipe")
    (cache / "m.json").write_text("1")
if kind == "linked-root" and not cache.is_symlink() and not any(cache.iterdir()):
    outside = pathlib.Path(sys.argv[2])
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("not evidence")
    cache.rmdir()
    cache.symlink_to(outside)
(out / "r.txt").write_text("same")
"""


def test_a_fifo_or_a_linked_cache_root_neither_crashes_nor_leaks_into_the_warm_copy(
    make_repo, tmp_path
) -> None:
    outside = tmp_path / "outside"
    argv = f'[{json.dumps(PY)}, "h.py", "{{out}}", {json.dumps(str(outside))}]'
    cases = f"""
[[case]]
id = "train"
argv = {argv}
outputs = ["r.txt"]
cache_env = "SIM_CACHE"
replay = "cold-warm"
"""
    for kind in ("fifo", "linked-root"):
        repo = make_repo(kind)
        base = repo.commit({"h.py": HOSTILE_CACHE, "variant.txt": kind, "cases/matrix.toml": cases})
        outcome = gate.run(repo.path, RunRequest(base, base))
        replay = outcome.candidate.cases["train"].replay
        assert replay is not None, kind
        warm_cache = outcome.run_dir / "candidate" / "cases" / "train" / "replay" / "warm" / "cache"
        # the copy took neither the special file nor what the linked root points at
        assert "secret.txt" not in replay.runs[-1].cache, kind
        assert warm_cache.is_symlink() or not (warm_cache / "secret.txt").exists(), kind
        assert not (warm_cache / "pipe").exists(), kind
        if kind == "fifo":
            assert replay.verdict is ReplayVerdict.CACHE_REPRODUCES, replay


def test_a_partial_run_cannot_confirm_a_replay_prediction_about_a_case_it_left_out(
    make_repo,
) -> None:
    repo = make_repo("sim")
    two = table() + table().replace('id = "train"', 'id = "other"')
    predicted = '[prediction]\nwhy = "w"\nreplay = { train = "cache-reproduces" }\n'
    base = repo.commit(
        {"train.py": TRAIN, "variant.txt": "ok", "cases/matrix.toml": two, "p.toml": predicted}
    )
    outcome = gate.run(repo.path, RunRequest(base, base, expect="p.toml", selectors=("other",)))
    assert any(f.code is Code.PARTIAL_PREDICTION for f in outcome.findings), outcome.findings
    assert outcome.exit_code == 3


def test_shards_run_with_and_without_replay_do_not_merge(make_repo, tmp_path) -> None:
    import pytest

    from fidelity.errors import UsageError
    from fidelity.matrix import merge

    repo = make_repo("sim")
    two = table(None) + table(None).replace('id = "train"', 'id = "other"')
    base = repo.commit({"train.py": TRAIN, "variant.txt": "ok", "cases/matrix.toml": two})
    run = RunRequest(base, base)
    one = gate.run(
        repo.path, replace(run, shard=Shard(1, 2), replay="cold-warm", out=tmp_path / "s1")
    )
    other = gate.run(repo.path, replace(run, shard=Shard(2, 2), out=tmp_path / "s2"))
    with pytest.raises(UsageError, match="its --replay differs"):
        merge.merge([one.run_dir, other.run_dir], tmp_path / "merged")
    again = gate.run(
        repo.path, replace(run, shard=Shard(2, 2), replay="cold-warm", out=tmp_path / "s3")
    )
    merged = merge.merge([one.run_dir, again.run_dir], tmp_path / "merged2")
    assert merged.exit_code == 0, merged.findings


def test_a_cache_named_in_the_command_is_replayed_cold_then_warm(make_repo) -> None:
    """A simulator given its cache as `{cache}` in argv (no cache_env): the table is valid,
    and the warm run gets a copy of what the cold run wrote there."""
    repo = make_repo("sim")
    named = TRAIN.replace('pathlib.Path(os.environ["SIM_CACHE"])', "pathlib.Path(sys.argv[2])")
    text = table().replace('cache_env = "SIM_CACHE"\n', "")
    text = text.replace('"train.py", "{out}"]', '"train.py", "{out}", "{cache}"]')
    base = repo.commit({"train.py": named, "variant.txt": "ok", "cases/matrix.toml": text})
    repo.commit({"train.py": named + "\n# refactored\n"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert replayed(outcome) is ReplayVerdict.CACHE_REPRODUCES, outcome.candidate.cases
    assert replayed(outcome, "baseline") is ReplayVerdict.CACHE_REPRODUCES
    assert len(outcome.candidate.cases["train"].cache) == 3 and outcome.exit_code == 0


def test_a_case_replayed_otherwise_than_asked_says_so(make_repo, tmp_path) -> None:
    from support import fidelity_cli

    repo = make_repo("sim")
    plain = f'[[case]]\nid = "plain"\nargv = [{json.dumps(PY)}, "-c", "print(1)"]\n'
    base = repo.commit({"cases/matrix.toml": plain + 'outputs = ["o"]\n'})
    repo.commit({"notes.txt": "x"})
    done = fidelity_cli(repo.path, "run", "--baseline", base, "--replay", "cold-warm")
    said = " ".join(done.stdout.split())
    assert (
        "--replay cold-warm asked; no cache to warm (no cache_env, no {cache}), so run twice"
        in said
    ), done.stdout + done.stderr


# A cold run that works 1.2 CPU-s and a warm run that only waits: under load the cold run's
# wall time is anything, its CPU is its own cost. Speed is judged on CPU.
SLEEPS_WARM = """
import os, pathlib, sys, time
cache, out = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[1])
model = cache / "model.txt"
if model.exists():  # longer on the wall than the cold run: only CPU says it was quicker
    time.sleep(3.0)
else:
    end = time.process_time() + 1.2
    while time.process_time() < end:
        pass
    model.write_text("trained")
(out / "r.txt").write_text(model.read_text())
"""


def test_a_warm_run_is_judged_on_cpu_not_on_wall_time(make_repo) -> None:
    repo = make_repo("sim")
    text = (
        f'[[case]]\nid = "train"\nargv = [{json.dumps(PY)}, "train.py", "{{out}}", "{{cache}}"]\n'
        'outputs = ["r.txt"]\nreplay = "cold-warm"\n'
    )
    base = repo.commit({"train.py": SLEEPS_WARM, "cases/matrix.toml": text})
    repo.commit({"notes.txt": "refactor"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD", jobs=1))
    first = outcome.candidate.cases["train"]
    assert first.replay is not None, first
    warm = first.replay.runs[-1]
    assert first.cpu_s is not None and first.cpu_s >= 1.0, first
    assert warm.cpu_s is not None and warm.cpu_s < 0.5 * first.cpu_s, warm
    assert warm.duration_s > first.duration_s, (warm, first)  # wall time would say "no faster"
    assert first.replay.verdict is ReplayVerdict.CACHE_REPRODUCES, first.replay.detail
    assert "CPU-s" in first.replay.detail


SPARSE = """
import os, pathlib, sys
model = pathlib.Path(os.environ["SIM_CACHE"]) / "model.bin"
if not model.exists():  # cold: a 64 MiB file of which a few bytes are written
    with model.open("wb") as f:
        f.write(b"head")
        f.seek(32 << 20)
        f.write(b"middle")
        f.truncate(64 << 20)
(pathlib.Path(sys.argv[1]) / "o.txt").write_text(str(model.stat().st_size))
"""


def sparse(path: Path, size: int) -> None:
    with path.open("wb") as f:
        f.write(b"head")
        f.seek(size // 2)
        f.write(b"middle")
        f.truncate(size)


def held(path: Path) -> int:
    """The bytes a file takes on disk."""
    return path.stat().st_blocks * 512


def hash_tree(root: Path) -> dict[str, str]:
    """Every regular file under root, by POSIX relative path, to its sha256."""
    return {rel: files.sha256_file(path) for rel, path in files.walk(root).files.items()}


def test_a_sparse_file_is_copied_sparse(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "deep").mkdir(parents=True)
    sparse(src / "deep" / "model.bin", 256 << 20)
    (src / "small.txt").write_text("dense and small")
    os.utime(src / "small.txt", ns=(1_000_000_000, 1_234_567_891))
    if held(src / "deep" / "model.bin") > 1 << 20:
        pytest.skip("this filesystem does not keep holes")
    files.copy_tree(src, tmp_path / "dst")
    copy = tmp_path / "dst" / "deep" / "model.bin"
    assert copy.stat().st_size == 256 << 20
    assert held(copy) < 1 << 20, f"{held(copy)} bytes on disk for a copy of a sparse file"
    assert hash_tree(tmp_path / "dst") == hash_tree(src)
    assert (tmp_path / "dst" / "small.txt").stat().st_mtime_ns == 1_234_567_891


def test_a_sparse_cache_stays_sparse_in_the_warm_copy(make_repo) -> None:
    repo: Repo = make_repo("sim")
    case = (
        f'[[case]]\nid = "s"\nargv = [{json.dumps(PY)}, "sparse.py", "{{out}}"]\n'
        'outputs = ["o.txt"]\ncache_env = "SIM_CACHE"\nreplay = "cold-warm"\n'
    )
    repo.commit({"sparse.py": SPARSE, "cases/matrix.toml": case})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert replayed_case(outcome, "s") is ReplayVerdict.CACHE_REPRODUCES, outcome.findings
    cold = outcome.run_dir / "candidate" / "cases" / "s" / "cache" / "model.bin"
    if held(cold) > 1 << 20:
        pytest.skip("this filesystem does not keep holes")
    warm = outcome.run_dir / "candidate" / "cases" / "s" / "replay" / "warm" / "cache" / "model.bin"
    assert warm.stat().st_size == 64 << 20 and held(warm) < 1 << 20, held(warm)
    assert outcome.exit_code == 0


def replayed_case(outcome: Outcome, case_id: str) -> ReplayVerdict:
    found = outcome.candidate.cases[case_id].replay
    assert found is not None
    return found.verdict
