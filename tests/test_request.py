"""`RunRequest`, the one typed value from the CLI to a run: recorded in plan.json and read back
as written, tied to the plan schema, plan.json files of earlier versions resumed, one that is
not valid refused (exit 2) at its JSON path, and the rules that follow from a field's sort: a
resume refuses a recorded option, `--resume-if-exists` compares every recorded option and no
invocation option. Real repositories and runs."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import Repo

from fidelity import schema
from fidelity.cli.main import main
from fidelity.errors import UsageError
from fidelity.matrix import gate
from fidelity.matrix.run.plan import InvalidPlan, PlanRecord, SidePlan
from fidelity.matrix.run.request import RunRequest, Shard, Sort, of_sort

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)
shards = st.integers(1, 9).flatmap(lambda n: st.builds(Shard, st.integers(1, n), st.just(n)))
requests = st.builds(
    RunRequest,
    names,
    names,
    cases=names,
    harness_rev=st.none() | names,
    expect=st.none() | names,
    selectors=st.lists(names, max_size=3).map(tuple),
    shard=st.none() | shards,
    durations=st.none() | st.dictionaries(names, st.floats(0, 1e6), max_size=3),
    replay=st.sampled_from([None, "cold-warm", "twice"]),
    partial=st.booleans(),
)
SHA = "a" * 40


def record(request: RunRequest) -> PlanRecord:
    sides = (SidePlan("baseline", str(request.baseline), SHA), SidePlan("candidate", "c", SHA))
    return PlanRecord(
        replace(request, candidate="c"), sides, "b" * 64, "2026-01-01", "t", Path("/r")
    )


@given(requests)
def test_a_plan_reads_back_as_it_was_written(request: RunRequest) -> None:
    written = record(request)
    text = json.dumps(written.to_json())
    assert PlanRecord.from_json(json.loads(text)) == written
    assert written.request.differences(PlanRecord.from_json(json.loads(text)).request) == []


def test_what_is_not_recorded_is_not_written() -> None:
    asked = RunRequest("a", "c", cases="t.toml", out=Path("/o"), jobs=7, ci=True)
    read = PlanRecord.from_json(record(asked).to_json()).request
    assert (read.out, read.jobs, read.ci) == (None, 2, False)  # this invocation's, not the run's
    assert "7" not in json.dumps(record(asked).to_json())


RESOLVED = {"schema", "repo", "table_sha256", "harness_tree", "sides", "started"}


def untied(properties: set[str]) -> set[str]:
    """Recorded options plan.json's schema has no property for, and properties no field or
    resolved fact stands for."""
    recorded = {f.metadata["key"] or f.name for f in of_sort(Sort.RECORDED)}
    return (recorded | RESOLVED) ^ properties


def test_every_recorded_option_is_a_property_of_the_plan_schema() -> None:
    """A new recorded option without its line in the schema (which refuses unknown keys)
    would make every plan.json it is in unreadable: red here first."""
    properties = set(schema.load("run")["$defs"]["plan"]["properties"])
    assert untied(properties) == set()
    assert untied(properties - {"shard"}) == {"shard"}  # the check can fail
    assert of_sort(*Sort) == fields(RunRequest)  # every field says what it is to plan.json


def test_a_shard_is_k_of_n() -> None:
    assert str(Shard.parse("2/3")) == "2/3" and Shard.parse(" 2/3 ") == Shard(2, 3)
    assert Shard.given("auto", {"FIDELITY_SHARD_INDEX": "1", "FIDELITY_SHARD_COUNT": "2"}) == Shard(
        1, 2
    )
    assert Shard.given(None, {}) is None
    with pytest.raises(UsageError, match="give K/N"):
        Shard(3, 2)


# plan.json as fidelity wrote it before RunRequest, and the oldest plan the schema reads: its
# required keys only (no repo, shard, durations, replay, partial or harness tree)
KEYS_BEFORE = {
    "schema", "repo", "harness_rev", "table_path", "table_sha256", "harness_tree", "sides",
    "expect", "selectors", "started", "shard", "durations", "replay", "partial",
}  # fmt: skip
KEYS_REQUIRED = KEYS_BEFORE - {"repo", "shard", "durations", "replay", "partial", "harness_tree"}


def begun(repo: Repo, out: Path, request: RunRequest) -> dict[str, Any]:
    """A run directory as a killed run leaves it (a plan, evidence, no run.json); its plan."""
    gate.run(repo.path, replace(request, out=out))
    (out / "run.json").unlink()
    plan: dict[str, Any] = json.loads((out / "plan.json").read_text())
    return plan


def resume(repo: Repo, out: Path, *extra: str) -> int:
    return main(["-q", "run", "--repo", str(repo.path), "--resume", str(out), *extra])


@pytest.mark.parametrize("keys", [KEYS_BEFORE, KEYS_REQUIRED], ids=["before", "required"])
def test_a_plan_an_earlier_fidelity_wrote_resumes(
    sim_repo: Repo, tmp_path: Path, keys: set[str]
) -> None:
    out = tmp_path / "run"
    plan = begun(sim_repo, out, RunRequest("HEAD", "HEAD", selectors=("a", "b")))
    assert set(plan) == KEYS_BEFORE  # the shape is unchanged: an earlier fidelity reads ours too
    old = {k: v for k, v in plan.items() if k in keys}
    (out / "plan.json").write_text(json.dumps(old, indent=1) + "\n")
    assert resume(sim_repo, out) == 0
    selected = json.loads((out / "run.json").read_text())["selection"]["selected"]
    assert selected == ["a", "b"]


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        ({"shard": "3/2"}, "at $.shard: '3/2' is no shard (--shard)"),
        ({"selectors": "a"}, "at $.selectors: 'a' is not of type 'array'"),
        ({"sides": {"baseline": {"rev": "HEAD", "sha": SHA}}}, "at $.sides: 'candidate'"),
        ({"next_option": True}, "at $: Additional properties are not allowed ('next_option'"),
    ],
)
def test_a_plan_that_is_not_valid_is_refused_where_it_is_wrong(
    sim_repo: Repo, tmp_path: Path, capsys, edit: dict[str, Any], where: str
) -> None:
    """Exit 2, as a resume of no run is: nothing is judged, the run can be started again.
    An unknown key is a plan a newer fidelity wrote: resumed here, it would lose its meaning."""
    out = tmp_path / "run"
    plan = begun(sim_repo, out, RunRequest("HEAD", "HEAD", shard=Shard(1, 2)))
    (out / "plan.json").write_text(json.dumps({**plan, **edit}))
    assert resume(sim_repo, out) == 2
    err = capsys.readouterr().err
    assert f"plan.json {where}" in " ".join(err.split()), err
    assert "start a new run without --resume" in err
    again = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD"]
    assert main([*again, "--shard", "1/2", "--out", str(out), "--resume-if-exists"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"holds files but no run of fidelity's ({out / 'plan.json'} {where}" in err, err
    with pytest.raises(InvalidPlan):
        PlanRecord.from_json({**plan, **edit})


@pytest.mark.parametrize(
    "extra",
    [
        ["--case", "a"],
        ["--tag", "t"],
        ["--shard", "1/2"],
        ["--cases", "cases/matrix.toml"],
        ["--harness", "HEAD"],
        ["--expect", "p.toml"],
        ["--replay", "twice"],
        ["--partial"],
        ["--out", "elsewhere"],
    ],
)
def test_a_resume_refuses_an_option_the_run_began_without(
    sim_repo: Repo, tmp_path: Path, capsys, extra: list[str]
) -> None:
    """A resumed run is the run it began as: an option that would make it another is
    refused before anything is read (it was ignored before, but for --replay)."""
    assert resume(sim_repo, tmp_path / "nowhere", *extra) == 2
    flag = "--case/--tag" if extra[0] in ("--case", "--tag") else extra[0]
    said = f"a resumed run keeps the {flag} it began with: drop {flag}"
    assert said in capsys.readouterr().err


def test_a_resume_takes_this_commands_sides_and_jobs(sim_repo: Repo, tmp_path: Path) -> None:
    out = tmp_path / "run"
    begun(sim_repo, out, RunRequest("HEAD", "HEAD"))
    assert (
        resume(sim_repo, out, "--baseline", sim_repo.git("rev-parse", "HEAD"), "--jobs", "1") == 0
    )


def test_a_restarted_run_is_another_run_when_a_recorded_option_differs(
    sim_repo: Repo, tmp_path: Path, capsys
) -> None:
    """`--resume-if-exists` compares every recorded option (here --partial, which it did
    not compare before) and no option of the invocation (--jobs)."""
    out = tmp_path / "run"
    argv = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD", "--case", "a"]
    argv += ["--out", str(out), "--resume-if-exists"]
    assert main([*argv, "--jobs", "1"]) == 0
    assert main([*argv, "--jobs", "3"]) == 0
    assert "holds this run, complete: judged again" in capsys.readouterr().err
    assert main([*argv, "--partial"]) == 2
    assert "its --partial is False, this one's True" in capsys.readouterr().err
