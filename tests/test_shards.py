"""Every case lands in exactly one shard, for any N, with or without durations; `--shard auto`
reads K and N from the job engine's variables, or refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import Repo

from fidelity.cli.main import main
from fidelity.errors import UsageError
from fidelity.matrix.run.shards import MAX_SHARDS, assign, from_env, parse, pick, resolve

ids = st.lists(st.text("abc123", min_size=1, max_size=4), unique=True, max_size=40)


@given(ids, st.integers(1, 12), st.booleans(), st.data())
def test_every_case_lands_in_exactly_one_shard(
    cases: list[str], n: int, timed: bool, data: st.DataObject
) -> None:
    durations = None
    if timed:
        durations = {c: data.draw(st.floats(0, 1000)) for c in cases if data.draw(st.booleans())}
    shards = assign(cases, n, durations)
    assert len(shards) == n
    flat = [c for shard in shards for c in shard]
    assert sorted(flat) == sorted(cases) and len(flat) == len(set(flat))
    assert shards == assign(cases, n, durations)  # deterministic


def reference_assign(ids: list[str], n: int, durations: dict[str, float] | None) -> list[list[str]]:
    """The assignment as first written (n lists, a scan of every shard per case): what the
    bounded `owners` must reproduce exactly, or a rebalanced run would move cases."""
    shards: list[list[str]] = [[] for _ in range(n)]
    if not durations:
        for i, case_id in enumerate(ids):
            shards[i % n].append(case_id)
        return shards
    known = sorted(durations[c] for c in ids if c in durations)
    typical = known[len(known) // 2] if known else 1.0
    order = sorted(range(len(ids)), key=lambda i: (-durations.get(ids[i], typical), i))
    load = [0.0] * n
    for i in order:
        target = min(range(n), key=lambda s: (load[s], s))
        shards[target].append(ids[i])
        load[target] += durations.get(ids[i], typical)
    position = {case_id: i for i, case_id in enumerate(ids)}
    return [sorted(shard, key=position.__getitem__) for shard in shards]


@given(ids, st.integers(1, 50), st.booleans(), st.data())
def test_one_shard_is_the_share_the_full_assignment_gives_it(
    cases: list[str], n: int, timed: bool, data: st.DataObject
) -> None:
    durations = None
    if timed:  # whole numbers and zeros: ties between shards are where the two could part
        durations = {
            c: float(data.draw(st.integers(0, 3))) for c in cases if data.draw(st.booleans())
        }
    expected = reference_assign(cases, n, durations)
    assert assign(cases, n, durations) == expected
    k = data.draw(st.integers(1, n))
    assert pick(cases, k, n, durations) == expected[k - 1]


def test_a_shard_of_the_largest_count_costs_only_the_cases() -> None:
    """`--shard 1/1e20` held 1.5 GB after 6 s (a list per shard): red before the fix."""
    cases = [f"case-{i}" for i in range(200)]
    durations = {c: float(i % 7) for i, c in enumerate(cases)}
    assert pick(cases, 3, MAX_SHARDS) == ["case-2"]
    assert pick(cases, MAX_SHARDS, MAX_SHARDS, durations) == []
    longest = max(cases, key=lambda c: (durations[c], -cases.index(c)))
    assert pick(cases, 1, MAX_SHARDS, durations) == [longest]


def test_durations_balance_the_load() -> None:
    durations = {"slow": 100.0, "a": 10.0, "b": 10.0, "c": 10.0, "d": 10.0}
    shards = assign(["a", "b", "slow", "c", "d"], 2, durations)
    assert shards == [["slow"], ["a", "b", "c", "d"]]


@pytest.mark.parametrize("bad", ["0/2", "3/2", "2", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="give K/N"):
        parse(bad)
    assert parse("2/4") == (2, 4)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("1/100000000000000000000", "N=100000000000000000000 is more than 2,147,483,647 shards"),
        ("1/2147483648", "N=2147483648 is more than"),
        (f"1/{'9' * 5000}", "N=999999999999... (5000 digits) is more than"),  # int() refuses it
        (f"{'0' * 5000}1/2", None),  # leading zeros are still the number 1
    ],
)
def test_a_shard_count_beyond_the_limit_is_refused(given: str, says: str | None) -> None:
    if says is None:
        assert parse(given) == (1, 2)
        return
    with pytest.raises(UsageError) as refused:
        parse(given)
    assert says in str(refused.value)
    assert "shards beyond the number of cases are valid and empty" in str(refused.value)
    assert parse(f"{MAX_SHARDS}/{MAX_SHARDS}") == (MAX_SHARDS, MAX_SHARDS)


# --shard auto: each engine's variables, and every way they can be wrong
GITHUB = {"FIDELITY_SHARD_INDEX": "2", "FIDELITY_SHARD_COUNT": "3"}
SLURM = {"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "5"}
KUBERNETES = {"JOB_COMPLETION_INDEX": "1", "FIDELITY_SHARD_COUNT": "3"}


@pytest.mark.parametrize(
    ("env", "shard"),
    [
        (GITHUB, (2, 3)),
        (SLURM, (2, 3)),  # --array=5-7: ids 5, 6, 7 are shards 1, 2, 3
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, (3, 4)),  # no MIN: 1-based
        ({**SLURM, "SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MAX": "7"}, (3, 3)),
        (
            {
                "SLURM_ARRAY_TASK_ID": "5",
                "SLURM_ARRAY_TASK_COUNT": "4",
                "SLURM_ARRAY_TASK_MIN": "1",
                "SLURM_ARRAY_TASK_MAX": "7",
                "SLURM_ARRAY_TASK_STEP": "2",
            },
            (3, 4),  # --array=1-7:2
        ),
        (KUBERNETES, (2, 3)),  # 0-based
        ({**GITHUB, **SLURM}, (2, 3)),  # two engines that agree
        ({**GITHUB, **KUBERNETES}, (2, 3)),
    ],
)
def test_auto_reads_each_engines_variables(env: dict[str, str], shard: tuple[int, int]) -> None:
    assert from_env(env) == shard
    assert resolve("auto", env) == f"{shard[0]}/{shard[1]}"
    assert resolve("1/2", env) == "1/2" and resolve(None, env) is None


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({}, "no shard index in the environment (looked for FIDELITY_SHARD_INDEX"),
        ({"FIDELITY_SHARD_COUNT": "3"}, "no shard index"),
        (
            {"FIDELITY_SHARD_INDEX": "2"},
            "FIDELITY_SHARD_INDEX is set but FIDELITY_SHARD_COUNT is not",
        ),
        ({**GITHUB, "FIDELITY_SHARD_INDEX": ""}, "FIDELITY_SHARD_INDEX='' is not a whole number"),
        ({**GITHUB, "FIDELITY_SHARD_COUNT": "4.0"}, "FIDELITY_SHARD_COUNT='4.0' is not a whole"),
        ({**GITHUB, "FIDELITY_SHARD_INDEX": "-1"}, "is not a whole number"),
        (
            {**GITHUB, "FIDELITY_SHARD_INDEX": "0"},
            "FIDELITY_SHARD_INDEX=0 with FIDELITY_SHARD_COUNT=3 is not a shard of 1..3",
        ),
        ({**GITHUB, "FIDELITY_SHARD_INDEX": "4"}, "is not a shard of 1..3"),
        ({**GITHUB, "FIDELITY_SHARD_COUNT": "0"}, "is not a shard of 1..0"),
        (
            {**GITHUB, "FIDELITY_SHARD_COUNT": "1" + "0" * 20},
            "FIDELITY_SHARD_COUNT=100000000000000000000 is more than 2,147,483,647 shards",
        ),
        ({**GITHUB, "FIDELITY_SHARD_COUNT": "9" * 5000}, "(5000 digits) is more than"),
        ({**SLURM, "SLURM_ARRAY_TASK_COUNT": "9" * 30}, "SLURM_ARRAY_TASK_COUNT=9999"),
        ({**KUBERNETES, "FIDELITY_SHARD_COUNT": "4294967296"}, "=4294967296 is more than"),
        (
            {"SLURM_ARRAY_TASK_ID": "6"},
            "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not",
        ),
        ({**SLURM, "SLURM_ARRAY_TASK_ID": "4"}, "SLURM_ARRAY_TASK_ID=4 (SLURM_ARRAY_TASK_MIN=5"),
        ({**SLURM, "SLURM_ARRAY_TASK_ID": "8"}, "is not a shard of 1..3"),
        ({**SLURM, "SLURM_ARRAY_TASK_MIN": "x"}, "SLURM_ARRAY_TASK_MIN='x' is not a whole number"),
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4"}, "is not a shard of 1..4"),
        ({**SLURM, "SLURM_ARRAY_TASK_MAX": "12"}, "the Slurm array 5-12 (step 1) is not a range"),
        ({**SLURM, "SLURM_ARRAY_TASK_STEP": "2"}, "is not a shard of 1..3"),  # 6 is off the step
        ({"JOB_COMPLETION_INDEX": "1"}, "set it to the Job's .spec.completions"),
        ({**KUBERNETES, "JOB_COMPLETION_INDEX": "3"}, "JOB_COMPLETION_INDEX=3 (0-based)"),
        (
            {**GITHUB, "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3"},
            "the FIDELITY_SHARD_INDEX/COUNT variables say shard 2/3 but the Slurm array variables say 3/3",
        ),
        (
            {**SLURM, "JOB_COMPLETION_INDEX": "0", "FIDELITY_SHARD_COUNT": "3"},
            "Kubernetes Indexed Job variables say 1/3",
        ),
    ],
)
def test_auto_refuses_what_it_cannot_read(env: dict[str, str], says: str) -> None:
    with pytest.raises(UsageError) as refused:
        from_env(env)
    assert says in str(refused.value)
    assert "give --shard K/N" in str(refused.value)  # and says what to do


ENGINE_VARIABLES = ("FIDELITY_SHARD_", "SLURM_", "JOB_COMPLETION_INDEX")


@pytest.mark.parametrize("env", [GITHUB, SLURM, KUBERNETES], ids=["matrix", "slurm", "kubernetes"])
def test_a_sharded_run_under_auto_runs_its_share(
    env: dict[str, str], sim_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith(ENGINE_VARIABLES)]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "shard"
    argv = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD", "--shard", "auto"]
    assert main([*argv, "--out", str(out)]) == 0
    selection = json.loads((out / "run.json").read_text())["selection"]
    assert selection["shard"] == [2, 3] and selection["selected"] == assign(["a", "b", "c"], 3)[1]
    assert selection["selected"] == ["b"]


def test_a_sharded_run_under_auto_refuses_without_variables(
    sim_repo: Repo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in [n for n in os.environ if n.startswith(ENGINE_VARIABLES)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    argv = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD", "--shard", "auto"]
    assert main([*argv, "--out", str(tmp_path / "s")]) == 2
    assert "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()  # refused before anything ran


@pytest.mark.parametrize(
    ("argv", "env", "code", "says"),
    [
        (["--shard", "1/100000000000000000000"], {}, 2, "N=100000000000000000000 is more than"),
        (
            ["--shard", "auto"],
            {"FIDELITY_SHARD_INDEX": "1", "FIDELITY_SHARD_COUNT": "9" * 25},
            2,
            "is more than",
        ),
        (
            ["--shard", f"3/{MAX_SHARDS}"],
            {},
            0,
            "1 of 3 declared cases selected by shard:3/2147483647",
        ),
        (
            ["--shard", "auto"],
            {"FIDELITY_SHARD_INDEX": "4", "FIDELITY_SHARD_COUNT": f"{MAX_SHARDS}"},
            0,
            "0 of 3",
        ),
    ],
    ids=["huge-n", "huge-env-count", "largest-n", "empty-beyond-the-cases"],
)
def test_a_run_with_a_huge_shard_count_answers_at_once(
    argv: list[str],
    env: dict[str, str],
    code: int,
    says: str,
    sim_repo: Repo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Red before the fix: `--shard 1/1e20` and `--shard auto` with a huge count allocated a
    list per shard (1.5 GB in 6 s, then MemoryError or a hang)."""
    for name in [n for n in os.environ if n.startswith(ENGINE_VARIABLES)]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "s"
    run = ["run", "--repo", str(sim_repo.path), "--baseline", "HEAD", "--out", str(out)]
    assert main(["-q", *run, *argv]) == code
    captured = capsys.readouterr()
    assert says in (captured.out if code == 0 else captured.err)
    assert out.exists() == (code == 0)


def test_the_shard_help_names_every_variable_the_readers_read() -> None:
    """The help once left out SLURM_ARRAY_TASK_STEP, which the Slurm reader divides by: the
    help is made from shards.READS, held here against every variable name the module reads."""
    import re
    from pathlib import Path

    from fidelity.cli.main import build_parser
    from fidelity.matrix.run import shards

    source = Path(shards.__file__).read_text()
    code = source.split("READS = (", 1)[0]  # the readers, not the help's own words
    read = set(re.findall(r'"([A-Z][A-Z_]{4,})"', code))
    assert {"SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX", "FIDELITY_SHARD_COUNT"} <= read
    import argparse

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    run = commands.choices["run"]
    shard_help = next(a.help for a in run._actions if "--shard" in a.option_strings)
    assert shard_help is not None
    missing = {name for name in read if name not in shard_help}
    assert not missing, missing
