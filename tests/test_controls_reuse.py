"""The unmodified tree's trace, reused by a later `controls run` of the same tree (issue 38
item 2): the traced run was most of a run's fixed cost, paid again by every `--only`. Real
repositories and real pytest runs; the checkout is never touched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support import Repo, run_cli, snapshot
from test_controls import TESTS, caught, control, fr, header, project

from fidelity.controls import gate as controls
from fidelity.controls import reuse
from fidelity.controls.table import parse
from fidelity.controls.verdict import Report, Verdict

TABLE = header() + "".join(
    [
        control("add-minus", fr("return a + b", "return a - b"), caught("test_add", "test_both")),
        control("neg-identity", fr("return -a", "return a"), caught("test_neg")),
    ]
)


def traces(report: Report) -> list[Path]:
    return sorted(Path(report.logs).glob("*.trace.json"))


def verdicts(report: Report) -> list[tuple[str, Verdict, tuple[str, ...], int]]:
    return [(r.id, r.verdict, r.failing, r.tests_run) for r in report.results]


def test_a_second_run_of_the_same_tree_reads_the_first_trace(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("reuse")
    project(repo, TABLE)
    before = snapshot(repo.path)
    first = controls.run(repo.path, controls.load(repo.path), jobs=1)
    second = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert first.exit_code() == second.exit_code() == 0
    assert traces(first) and not traces(second), "the second run traced the tree again"
    assert verdicts(second) == verdicts(first)
    note = " ".join(" ".join(second.notes).split())
    assert f"passed in run {Path(first.logs).name}" in note, second.notes
    assert second.noop is not None and second.noop.verdict is Verdict.RESIDUE_HELD
    assert second.noop.tests_run == len(first.baseline.tests), "the no-op ran every test now"
    # traced now, every test passed just now: the no-op runs the tests that failed under
    # the controls (test_mul fails under none); red before: all 4
    assert first.noop is not None and first.noop.verdict is Verdict.RESIDUE_HELD
    assert (first.noop.tests_run, first.noop.selection) == (
        3,
        "3 of 4 tests: those that failed under the controls of its command",
    )
    assert snapshot(repo.path) == before


def test_a_changed_tree_fresh_or_a_damaged_trace_traces_again(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("reuse-again")
    project(repo, TABLE)
    first = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert traces(first)
    fresh = controls.run(repo.path, controls.load(repo.path), jobs=1, fresh=True)
    assert traces(fresh) and not fresh.notes, "--fresh traced it again"
    repo.commit({"README.md": "another tree\n"})
    changed = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert traces(changed) and not changed.notes, "a new tree is traced"
    for t in traces(changed) + traces(fresh):
        t.unlink()
    damaged = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert traces(damaged) and not damaged.notes, "a kept run without its trace is no use"
    assert verdicts(damaged) == verdicts(first)


def test_the_cli_says_it_reused_and_fresh_traces_again(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("reuse-cli")
    project(repo, TABLE)
    argv = ["controls", "run", "--repo", str(repo.path), "--jobs", "1"]
    code, text = run_cli(argv)
    said = "no-op control: survived (3 of 4 tests: those that failed under the controls of"
    assert code == 0 and said in " ".join(text.split()), text
    code, text = run_cli(argv)
    assert code == 0 and "was not traced again" in " ".join(text.split()), text
    code, text = run_cli([*argv, "--fresh"])
    assert code == 0 and "was not traced again" not in " ".join(text.split())


def test_the_key_names_everything_that_decides_the_run() -> None:
    table = parse(TABLE.encode(), "t")
    base = reuse.key("tree", table, ("python", "-m", "pytest"), ("calc",), "env")
    assert base == reuse.key("tree", table, ("python", "-m", "pytest"), ("calc",), "env")
    others = [
        reuse.key("other-tree", table, ("python", "-m", "pytest"), ("calc",), "env"),
        reuse.key("tree", table, ("python", "-m", "pytest", "-x"), ("calc",), "env"),
        reuse.key("tree", table, ("python", "-m", "pytest"), ("calc", "more"), "env"),
        reuse.key("tree", table, ("python", "-m", "pytest"), ("calc",), "other-env"),
    ]
    assert base not in others and len(set(others)) == len(others)
    assert len(reuse.environment()) == 64


def test_a_tree_that_stopped_passing_is_still_untrusted_when_its_trace_is_read(
    make_repo: Callable[[str], Repo], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the reuse rests on: passing is not read back. The tests fail now for a reason the
    key cannot see (a variable they read); the trace is reused, the no-op control runs every
    test and fails, and the run is exit 3 as a fresh one would be."""
    repo = make_repo("reuse-stopped")
    watch = "\n\ndef test_env():\n    import os\n\n    assert os.environ.get('BREAK_NOW') != '1'\n"
    project(repo, TABLE, TESTS + watch)
    first = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert first.exit_code() == 0, first
    monkeypatch.setenv("BREAK_NOW", "1")
    second = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert not traces(second) and second.notes, "the trace was read"
    assert second.noop is not None and second.noop.failing == ("tests/test_calc.py::test_env",)
    assert second.exit_code() == 3, second


def test_an_installed_package_changing_changes_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "shop-1.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    before = reuse.environment()
    assert reuse.environment() == before
    (site / "shop-1.0.dist-info").rename(site / "shop-1.1.dist-info")
    upgraded = reuse.environment()
    (site / "extra.pth").write_text("")
    assert len({before, upgraded, reuse.environment()}) == 3


def test_a_trace_by_probes_is_reused_only_for_the_files_it_followed(
    make_repo: Callable[[str], Repo],
) -> None:
    """The traced run follows by probes only the files the controls edit: a table that edits
    another file traces again (red before: the kept trace was read, and the control on the
    test file ran no test). A test module is rewritten by pytest, so its live code is no
    compile of the file's: the probes are refused, and every call is traced instead."""
    repo = make_repo("reuse-probed")
    project(repo, TABLE)
    first = controls.run(repo.path, controls.load(repo.path), jobs=1)
    kept = json.loads(traces(first)[0].read_text())
    assert kept["probed"] == ["calc/__init__.py"], kept.get("probe_refused")
    edit = fr("assert mul(2, 3) == 6", "assert mul(2, 3) == 7", "tests/test_calc.py")
    wider = TABLE + control("test-edited", edit, caught("test_mul"))
    (repo.path / "cases" / "controls.toml").write_text(wider)  # the same tree, a new table
    second = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert traces(second), "traced again"
    assert not any("not traced again" in n for n in second.notes), second.notes
    again = json.loads(traces(second)[0].read_text())
    assert "probed" not in again and "rewritten" not in again["probe_refused"], again
    assert "test_calc.py" in again["probe_refused"]
    assert second.exit_code() == 0, verdicts(second)
    assert verdicts(second)[:2] == verdicts(first)
