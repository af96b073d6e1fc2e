"""The no-op control in parts, one per lane, run side by side after every control (issue 38):
before, it ran alone at the end of a run while the other lanes stood idle. Each part is a
real run in its own lane; a test that fails in any part makes the no-op fail."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from support import Repo, snapshot
from test_controls import caught, control, fr, header, project

from fidelity.controls import gate as controls
from fidelity.controls import noop
from fidelity.controls.selection import Selection, TestTrace, Trace
from fidelity.controls.unmodified import Unmodified
from fidelity.controls.verdict import ControlResult, RunStatus, TreeRun, Verdict

MANY = """import pytest

from calc import add, mul


@pytest.mark.parametrize("x", range(20))
def test_add(x):
    assert add(x, 1) == x + 1


def test_mul():
    assert mul(2, 3) == 6
"""
# a second test file: parts are cut between test files, never inside one
MORE = """from calc import add


def test_more():
    assert add(1, 1) == 2


def test_traced_only():  # passes in the traced run of the unmodified tree alone
    import os

    assert add(0, 0) == 0 and "FIDELITY_TRACE" in os.environ
"""
TABLE = header() + control(
    "add-minus", fr("return a + b", "return a - b"), caught("test_add", match="includes")
)


def test_with_two_lanes_the_noop_runs_in_two_parts_side_by_side(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("noop-parts")
    project(repo, TABLE, MANY)
    repo.commit({"tests/test_more.py": MORE.split("\n\n\ndef test_traced_only")[0] + "\n"})
    before = snapshot(repo.path)
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    assert report.exit_code() == 0, report
    assert report.noop is not None and report.noop.verdict is Verdict.RESIDUE_HELD
    # add-minus runs the 21 that ran add(), and the no-op those 21 (test_mul: no control)
    assert report.noop.tests_run == 21
    assert report.noop.selection.endswith(", in 2 parts side by side"), report.noop.selection
    logs = sorted(p.name for p in Path(report.logs).glob("_no-op*.log"))
    assert logs == ["_no-op-1.log", "_no-op-2.log"]
    one = controls.run(repo.path, controls.load(repo.path), jobs=1, fresh=True)
    assert one.noop is not None and one.noop.tests_run == 21
    assert "parts" not in one.noop.selection
    assert snapshot(repo.path) == before


def test_a_test_that_fails_in_one_part_fails_the_noop(make_repo: Callable[[str], Repo]) -> None:
    """Red before (`merged` keeping the first part's run alone): the failing test is in the
    second part of two (its file comes last), and the no-op survived."""
    repo = make_repo("noop-parts-fail")
    table = header() + control(
        "add-minus", fr("return a + b", "return a - b"), caught("test_add", match="includes")
    )
    project(repo, table, MANY)
    repo.commit({"tests/test_more.py": MORE})
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    assert report.noop is not None and report.noop.tests_run == 22
    assert "parts" in report.noop.selection
    assert report.noop.verdict is Verdict.RESIDUE_CLOSED
    assert report.noop.failing == ("tests/test_more.py::test_traced_only",)
    assert report.leaks and report.exit_code() == 3


def test_merged_parts_pass_only_if_each_passed() -> None:
    ok = TreeRun(RunStatus.PASSED, tests=frozenset({"a"}), duration_s=1.0, mode="swap")
    bad = TreeRun(
        RunStatus.FAILED, failing=frozenset({"b"}), tests=frozenset({"b", "c"}), detail="1 failed"
    )
    for runs in ([ok, bad], [bad, ok]):
        both = noop.merged(runs)
        assert both.status is RunStatus.FAILED and both.failing == {"b"}
        assert both.tests == {"a", "b", "c"}
        assert both.detail == "1 failed", "red before: '1 failed (command: )'"
    assert noop.merged([ok, ok]).status is RunStatus.PASSED
    assert json.dumps(sorted(noop.merged([ok, ok]).tests)) == '["a"]'


def test_the_noop_runs_the_tests_that_failed_under_the_controls(
    make_repo: Callable[[str], Repo],
) -> None:
    """Each catch rests on its failing tests, and a fork that fails a test where a fresh
    process passes it fails that test in every control that runs it: the no-op needs those
    tests, not every test the controls ran. Red before: 21, test_add_zero too (it ran add()
    and passes under the edit)."""
    repo = make_repo("noop-failed")
    zero = MANY + "\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"
    project(repo, TABLE, zero)
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, report
    [add_minus] = report.results
    assert add_minus.tests_run == 21 and len(add_minus.failing) == 20
    assert report.noop is not None and report.noop.verdict is Verdict.RESIDUE_HELD
    assert (report.noop.tests_run, report.noop.selection) == (
        20,
        "20 of 22 tests: those that failed under the controls of its command",
    )


def _ended(verdict: Verdict, *failing: str) -> ControlResult:
    return ControlResult("c", verdict, (), failing)


def test_a_control_whose_failures_are_not_known_gives_the_noop_all_its_tests() -> None:
    tests = {t: TestTrace() for t in ("a", "b", "c", "d", "e")}
    u = Unmodified(("pytest",), TreeRun(RunStatus.PASSED), Trace(tests), None)
    ab, cd = Selection(("a", "b"), "two"), Selection(("c", "d"), "two")
    caught = _ended(Verdict.CAUGHT, "a")
    for ended in (Verdict.TIMEOUT, Verdict.CRASHED, Verdict.UNVIABLE):
        chosen = noop.selection(u, [(ab, caught), (cd, _ended(ended))])
        assert chosen is not None and chosen.ids == ("a", "c", "d"), ended
    chosen = noop.selection(u, [(ab, caught), (cd, None)])  # ended in an error
    assert chosen is not None and chosen.ids == ("a", "c", "d")
    assert noop.selection(u, [(ab, caught), (None, _ended(Verdict.TIMEOUT))]) is None
    # a control that ran every test and ended: only its failures count
    chosen = noop.selection(u, [(None, _ended(Verdict.CAUGHT, "e")), (ab, caught)])
    assert chosen is not None and chosen.ids == ("a", "e")
    # nothing failed: the tests the controls ran; a kept trace: every test
    survived = _ended(Verdict.SURVIVED)
    chosen = noop.selection(u, [(ab, survived), (cd, survived)])
    assert chosen is not None and chosen.ids == ("a", "b", "c", "d")
    assert chosen.why == "4 of 5 tests: those the controls under its command run"
    kept = Unmodified(("pytest",), TreeRun(RunStatus.PASSED), Trace(tests), None, reused="r")
    assert noop.selection(kept, [(ab, caught)]) is None
