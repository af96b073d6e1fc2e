"""`fidelity run` and `fidelity compare` end to end, on real repositories and processes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import PY, Repo, matrix_toml, snapshot

from fidelity.cli.main import main
from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome


def run(repo: Repo, baseline: str, candidate: str = "HEAD", **kw: object) -> Outcome:
    return gate.run(repo.path, RunRequest(baseline, candidate, **kw))  # type: ignore[arg-type]


def verdicts(outcome: Outcome) -> dict[str, str]:
    return {r.case_id: str(r.verdict) for r in outcome.comparison.cases}


def codes(outcome: Outcome) -> set[Code]:
    return {f.code for f in outcome.findings}


def test_identical_sides_hold_with_exit_0(sim_repo: Repo) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    cand = sim_repo.commit({"unrelated.txt": "x"}, "refactor")
    outcome = run(sim_repo, base, cand)
    assert verdicts(outcome) == {"a": "identical", "b": "identical", "c": "identical"}
    assert outcome.findings == ()
    assert outcome.exit_code == 0
    s = outcome.comparison.summary
    assert (s.declared, s.compared, s.cache_files_baseline, s.cache_files_differ) == (3, 3, 3, 0)


def test_moved_outputs_and_cache_exit_1(sim_repo: Repo) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"value.txt": "two\n"}, "change")
    outcome = run(sim_repo, base)
    assert set(verdicts(outcome).values()) == {"moved"}
    moved = outcome.comparison.cases[0]
    assert moved.outputs.changed == ("result.txt",)
    assert moved.cache.changed == ("c.txt",)
    assert outcome.comparison.summary.cache_files_differ == 3
    assert outcome.exit_code == 1


def test_candidate_failure_and_baseline_failure(sim_repo: Repo) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    bad = sim_repo.commit({"value.txt": "bad\n"}, "break c")
    forward = run(sim_repo, base, bad)
    assert verdicts(forward)["c"] == "candidate-only-failed"
    assert forward.exit_code == 1
    backward = run(sim_repo, bad, base)
    assert verdicts(backward)["c"] == "baseline-failed"
    assert backward.exit_code == 1
    both = run(sim_repo, bad, bad)
    assert verdicts(both)["c"] == "both-failed"
    assert "exit 3" in both.comparison.cases[2].detail


def test_timeout_kills_the_case_and_is_a_status(sim_repo: Repo) -> None:
    sim_repo.commit(
        {
            "cases/matrix.toml": matrix_toml({"slow": "sleep", "a": "ok"}, timeout="1").replace(
                "timeout_s = 20\ntimeout = 1", "timeout_s = 0.5"
            )
        }
    )
    outcome = run(sim_repo, "HEAD")
    assert verdicts(outcome) == {"slow": "both-failed", "a": "identical"}
    assert outcome.baseline.cases["slow"].status == "timeout"
    assert outcome.baseline.cases["slow"].duration_s < 10  # killed, not waited for (it sleeps)
    assert outcome.exit_code == 1


def test_missing_command_is_a_status_not_a_crash(sim_repo: Repo) -> None:
    table = (
        matrix_toml({"a": "ok"})
        + '\n[[case]]\nid = "ghost"\nargv = ["no-such-cmd-xyz"]\noutputs = ["x"]\n'
    )
    sim_repo.commit({"cases/matrix.toml": table})
    outcome = run(sim_repo, "HEAD")
    assert outcome.candidate.cases["ghost"].status == "not-found"
    assert verdicts(outcome)["ghost"] == "both-failed"


def test_nothing_compared_never_exits_0(sim_repo: Repo) -> None:
    sim_repo.commit({"cases/matrix.toml": matrix_toml({"x": "fail", "y": "fail"})})
    outcome = run(sim_repo, "HEAD")
    assert outcome.comparison.summary.compared == 0
    assert Code.NOTHING_COMPARED in codes(outcome)
    assert outcome.exit_code == 3


def test_setup_failure_means_nothing_ran(sim_repo: Repo) -> None:
    table = matrix_toml(
        {"a": "ok"}, extra_matrix=f'setup = [[{json.dumps(PY)}, "-c", "raise SystemExit(4)"]]'
    )
    sim_repo.commit({"cases/matrix.toml": table})
    outcome = run(sim_repo, "HEAD")
    assert verdicts(outcome) == {"a": "not-compared"}
    assert {Code.SETUP_FAILED, Code.EXECUTED_DIFFERS, Code.NOTHING_COMPARED} <= codes(outcome)
    assert outcome.exit_code == 3


def test_setup_runs_once_per_side_in_the_worktree(sim_repo: Repo) -> None:
    setup = f"setup = [[{json.dumps(PY)}, \"-c\", \"open('value.txt', 'w').write('set')\"]]"
    sim_repo.commit({"cases/matrix.toml": matrix_toml({"a": "ok"}, extra_matrix=setup)})
    outcome = run(sim_repo, "HEAD")
    for side in (outcome.baseline, outcome.candidate):
        assert [s.status for s in side.setup] == ["ok"]
    out = outcome.run_dir / "candidate" / "cases" / "a" / "out" / "result.txt"
    assert out.read_text() == "set"
    assert outcome.exit_code == 0


def test_dirty_harness_fires_only_for_an_uncommitted_table(sim_repo: Repo) -> None:
    (sim_repo.path / "scratch.txt").write_text("unrelated edit")
    clean = run(sim_repo, "HEAD")
    assert Code.DIRTY_HARNESS not in codes(clean)
    assert clean.harness.dirty and clean.exit_code == 0
    table = sim_repo.path / "cases" / "matrix.toml"
    table.write_text(table.read_text().replace('"a"', '"a2"'))
    dirty = run(sim_repo, "HEAD")
    assert Code.DIRTY_HARNESS in codes(dirty)
    assert dirty.exit_code == 3


def test_harness_revision_decides_the_table_for_both_sides(sim_repo: Repo) -> None:
    first = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"cases/matrix.toml": matrix_toml({"only": "ok"})}, "new table")
    only = sim_repo.git("rev-parse", "HEAD")
    # the checkout holds yet another table: only the harness revision's can name "only"
    sim_repo.commit({"cases/matrix.toml": matrix_toml({"x": "ok"})}, "the checkout's table")
    outcome = run(sim_repo, first, first, harness_rev=only)
    assert list(verdicts(outcome)) == ["only"]
    # both sides' own tables at `first` do not define "only": no finding for a new case
    assert outcome.findings == ()


def test_definition_differs_when_harness_changed_a_case(sim_repo: Repo) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    changed = matrix_toml({"a": "ok", "b": "fail-if-bad", "c": "fail-if-bad"})
    sim_repo.commit({"cases/matrix.toml": changed}, "redefine b")
    outcome = run(sim_repo, base)
    assert verdicts(outcome)["b"] == "definition-differs"
    assert verdicts(outcome)["a"] == "identical"
    assert Code.DEFINITION_DIFFERS in codes(outcome)
    assert outcome.exit_code == 3
    # same table on both sides: the finding does not fire
    assert Code.DEFINITION_DIFFERS not in codes(run(sim_repo, "HEAD"))


def test_dirty_side_detected_in_a_fresh_worktree(make_repo) -> None:
    repo = make_repo("crlf")
    table = f'[[case]]\nid = "a"\nargv = [{json.dumps(PY)}, "prog.py", "{{out}}"]\n'
    repo.commit(
        {
            "prog.py": "import sys\nopen(sys.argv[1] + '/r.txt', 'w').write('x')\n",
            "data.txt": "line\n",
            ".gitattributes": "*.txt filter=stamp\n",
            "cases/matrix.toml": table + 'outputs = ["r.txt"]\n',
        }
    )
    clean = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert Code.DIRTY_SIDE not in {f.code for f in clean.findings}
    # a smudge filter whose output the clean filter does not undo (keyword expansion, a
    # broken LFS setup) leaves a fresh checkout dirty before anything ran
    repo.git("config", "filter.stamp.smudge", "sed s/^/X/")
    repo.git("config", "filter.stamp.clean", "cat")
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert outcome.candidate.source_dirty
    assert "data.txt" in outcome.candidate.dirty_paths
    assert Code.DIRTY_SIDE in {f.code for f in outcome.findings}
    assert outcome.exit_code == 3


def test_worktrees_are_removed_and_pruned(sim_repo: Repo) -> None:
    outcome = run(sim_repo, "HEAD")
    assert outcome.baseline.worktree_removed and outcome.candidate.worktree_removed
    assert not Path(outcome.baseline.worktree).exists()
    assert sim_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_compare_rerenders_and_detects_altered_evidence(sim_repo: Repo, capsys) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"value.txt": "two\n"})
    out = sim_repo.path.parent / "run1"
    code = main(
        ["--quiet", "run", "--repo", str(sim_repo.path), "--baseline", base, "--out", str(out)]
    )
    assert code == 1
    report = out.parent / "verdict.json"
    assert main(["--quiet", "compare", str(out), "--json", str(report)]) == 1
    data = json.loads(report.read_text())
    assert data["schema"] == "fidelity.run/1"
    assert [c["verdict"] for c in data["comparison"]["cases"]] == ["moved"] * 3
    (out / "candidate" / "cases" / "a" / "out" / "result.txt").write_text("forged")
    assert main(["--quiet", "compare", str(out)]) == 3
    assert "evidence-altered" in capsys.readouterr().out


def test_out_dir_that_is_not_empty_is_refused(sim_repo: Repo, tmp_path: Path) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "x").write_text("keep me")
    code = main(["run", "--repo", str(sim_repo.path), "--baseline", "HEAD", "--out", str(out)])
    assert code == 2
    assert (out / "x").read_text() == "keep me"


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--baseline", "no-such-rev"],
        ["run", "--baseline", "HEAD", "--cases", "missing.toml"],
        ["run", "--baseline", "HEAD", "--harness", "no-such"],
    ],
)
def test_usage_errors_exit_2(sim_repo: Repo, argv: list[str]) -> None:
    assert main([*argv, "--repo", str(sim_repo.path)]) == 2


def test_invalid_table_exits_2_naming_file_case_and_path(sim_repo: Repo, capsys) -> None:
    table = sim_repo.path / "cases" / "matrix.toml"
    table.write_text(table.read_text().replace('outputs = ["result.txt"]', 'output = ["r"]', 1))
    assert main(["run", "--repo", str(sim_repo.path), "--baseline", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert "cases/matrix.toml" in err and "case 'a'" in err and "$.case[0].output" in err


def test_run_dir_is_ignored_by_git(sim_repo: Repo) -> None:
    outcome = run(sim_repo, "HEAD")
    assert outcome.run_dir.is_relative_to(sim_repo.path / ".fidelity")
    assert sim_repo.git("status", "--porcelain") == ""
    shutil.rmtree(sim_repo.path / ".fidelity")


def csv_table(spec: str) -> str:
    copy = "import shutil, sys; shutil.copy('m.csv', sys.argv[1])"
    return (
        f'[[case]]\nid = "m"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(copy)}, "{{out}}"]\n'
        f'outputs = ["m.csv"]\n\n[case.compare."m.csv"]\nkind = "csv"\nkey = ["id"]\n{spec}\n'
    )


def test_difference_inside_tolerance_is_reported_apart_and_holds(make_repo) -> None:
    repo = make_repo("tol")
    base = repo.commit(
        {"m.csv": "id,v\n1,1.000\n2,2.000\n", "cases/matrix.toml": csv_table("atol = 0.01")}
    )
    repo.commit({"m.csv": "id,v\n2,2.005\n1,1.000\n"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert verdicts(outcome) == {"m": "within-tolerance"}
    assert outcome.comparison.summary.within_tolerance == 1
    assert outcome.exit_code == 0
    repo.commit({"m.csv": "id,v\n2,2.5\n1,1.000\n"})
    moved = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert verdicts(moved) == {"m": "moved"}
    assert moved.comparison.cases[0].explained[0].keys == ("2",)


def test_widened_tolerance_is_flagged_and_narrowed_is_not(make_repo) -> None:
    repo = make_repo("widen")
    base = repo.commit({"m.csv": "id,v\n1,1.0\n", "cases/matrix.toml": csv_table("atol = 0.01")})
    repo.commit({"m.csv": "id,v\n1,1.4\n", "cases/matrix.toml": csv_table("atol = 0.5")})
    widened = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert verdicts(widened) == {"m": "within-tolerance"}
    assert Code.TOLERANCE_WIDENED in codes(widened)
    assert widened.exit_code == 3
    repo.commit({"cases/matrix.toml": csv_table("atol = 0.001")})
    narrowed = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert Code.TOLERANCE_WIDENED not in codes(narrowed)
    assert verdicts(narrowed) == {"m": "moved"}


def test_cases_do_not_inherit_the_callers_git_variables(make_repo, monkeypatch) -> None:
    repo = make_repo("hooked")
    head = "import subprocess, sys; open(sys.argv[1] + '/v.txt', 'wb').write(subprocess.check_output(['git', 'rev-parse', 'HEAD']))"
    table = f'[[case]]\nid = "head"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(head)}, "{{out}}"]\noutputs = ["v.txt"]\n'
    base = repo.commit({"cases/matrix.toml": table})
    repo.commit({"x.txt": "x"})
    before = snapshot(repo.path)
    # as inside a git hook: these point every git command at the user's repository
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo.path))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo.path / ".git" / "index"))
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert verdicts(outcome) == {"head": "moved"}  # each case saw its own worktree's HEAD
    assert snapshot(repo.path) == before


def test_unparseable_csv_is_a_move_with_a_reason_not_a_crash(make_repo) -> None:
    repo = make_repo("badcsv")
    base = repo.commit({"m.csv": "id,v\n1,1\n", "cases/matrix.toml": csv_table("")})
    repo.commit({"m.csv": 'id,v\n1,2\n"x\n'})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert verdicts(outcome) == {"m": "moved"}
    assert "not parseable as csv" in outcome.comparison.cases[0].explained[0].summary
    assert (outcome.run_dir / "run.json").is_file() and outcome.exit_code == 1


def test_checkout_and_index_unchanged_after_failing_and_timed_out_cases(sim_repo: Repo) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    table = matrix_toml({"a": "ok", "c": "fail-if-bad", "slow": "sleep"}).replace(
        "timeout_s = 20", "timeout_s = 0.5"
    )
    sim_repo.commit({"value.txt": "bad\n", "cases/matrix.toml": table})
    (sim_repo.path / "wip.txt").write_text("uncommitted work")
    sim_repo.git("add", "wip.txt")
    (sim_repo.path / "prog.py").write_text("edited but unstaged\n")
    before = snapshot(sim_repo.path)
    outcome = run(sim_repo, base, harness_rev="HEAD")
    assert verdicts(outcome)["c"] == "candidate-only-failed"
    assert outcome.candidate.cases["slow"].status == "timeout"
    assert snapshot(sim_repo.path) == before


@pytest.mark.parametrize(
    ("setup", "argv"),
    [
        (lambda r: None, ["cases", "list", "--cases", "nope.toml"]),
        (
            lambda r: (r / "busy").write_text("a file"),
            ["run", "--baseline", "HEAD", "--out", "busy"],
        ),
        (lambda r: (r / "pyproject.toml").write_text("tool = 1\n"), ["run", "--baseline", "HEAD"]),
    ],
)
def test_bad_inputs_are_usage_errors_not_tracebacks(
    sim_repo: Repo, setup, argv, capsys, monkeypatch
) -> None:
    setup(sim_repo.path)
    monkeypatch.chdir(sim_repo.path)
    assert main([*argv, "--repo", str(sim_repo.path)]) == 2
    assert "Traceback" not in capsys.readouterr().err
