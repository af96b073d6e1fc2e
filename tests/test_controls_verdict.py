"""The pure verdict core: properties over generated runs and controls."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fidelity.controls.diffsel import touched
from fidelity.controls.junit import Outcome, Suite, TestResult
from fidelity.controls.table import Control, Edit, Match
from fidelity.controls.verdict import (
    ControlResult,
    RunStatus,
    TreeRun,
    Verdict,
    classify,
    combine,
    difference,
    identical_subsets,
    judge,
    matches,
)
from fidelity.proc import ProcStatus

TESTS = [f"tests/test_m.py::t{i}" for i in range(6)]
subsets = st.frozensets(st.sampled_from(TESTS))


@st.composite
def controls(draw: st.DrawFn) -> Control:
    survives = draw(st.booleans())
    expected = () if survives else tuple(sorted(draw(subsets.filter(bool))))
    return Control(
        "c",
        "w",
        (),
        ("pytest",),
        caught_by=expected,
        match=draw(st.sampled_from(Match)),
        survives=survives,
        residue="r" if survives else "",
    )


runs = st.builds(
    TreeRun,
    status=st.sampled_from(RunStatus),
    failing=subsets,
    tests=st.just(frozenset(TESTS)),
)


@given(controls(), runs)
def test_only_a_completed_failing_run_can_be_a_catch(control: Control, run: TreeRun) -> None:
    result = judge(control, run)
    if result.verdict in (Verdict.CAUGHT, Verdict.CAUGHT_DIFFERENTLY, Verdict.RESIDUE_CLOSED):
        assert run.status in (RunStatus.FAILED, RunStatus.PASSED) and run.failing
    if run.status in (RunStatus.TIMEOUT, RunStatus.CRASHED, RunStatus.UNVIABLE):
        assert not result.met
    if control.survives:
        assert result.verdict not in (Verdict.CAUGHT, Verdict.SURVIVED)


@given(subsets, subsets)
def test_exact_implies_includes(expected: frozenset[str], failing: frozenset[str]) -> None:
    if matches(expected, failing, Match.EXACT):
        assert matches(expected, failing, Match.INCLUDES)
    assert matches(expected, expected | failing, Match.INCLUDES)


@given(st.lists(subsets, min_size=1, max_size=5))
def test_identical_subsets_group_exactly_the_equal_sets(sets: list[frozenset[str]]) -> None:
    results = [
        ControlResult(f"c{i}", Verdict.CAUGHT, (), tuple(sorted(s))) for i, s in enumerate(sets)
    ]
    groups = identical_subsets(results)
    for group in groups:
        assert len({sets[int(cid[1:])] for cid in group}) == 1
    flagged = {cid for g in groups for cid in g}
    for i, s in enumerate(sets):
        duplicated = s and sum(1 for t in sets if t == s) > 1
        assert (f"c{i}" in flagged) == bool(duplicated)


def suite(**outcomes: Outcome) -> Suite:
    return Suite({k: TestResult(k, v) for k, v in outcomes.items()})


def test_classify_never_reads_a_crash_or_timeout_as_failing_tests() -> None:
    failed = suite(a=Outcome.FAILED, b=Outcome.PASSED)
    assert classify(ProcStatus.TIMEOUT, None, failed).status is RunStatus.TIMEOUT
    assert classify(ProcStatus.CRASHED, -11, failed).failing == frozenset()
    assert classify(ProcStatus.FAILED, 1, failed).failing == {"a"}
    assert classify(ProcStatus.FAILED, 2, suite(m=Outcome.COLLECTION)).status is RunStatus.UNVIABLE
    assert classify(ProcStatus.FAILED, 4, suite(a=Outcome.PASSED)).status is RunStatus.UNVIABLE
    assert classify(ProcStatus.OK, 0, suite()).status is RunStatus.UNVIABLE, "no test ran"
    assert classify(ProcStatus.FAILED, 1, None, "boom").detail == "no JUnit report (exit 1): boom"


def test_in_diff_selects_by_edited_file_or_expected_test_file() -> None:
    a = Control("a", "w", (), ("pytest",), caught_by=("tests/test_a.py::t",))
    b = Control("b", "w", (Edit("src/b.py", "x", "y"),), ("pytest",), survives=True, residue="r")
    assert touched(a, {"tests/test_a.py"}) == ["tests/test_a.py"]
    assert touched(b, {"tests/test_a.py"}) == []
    assert touched(b, {"src/b.py", "README.md"}) == ["src/b.py"] and not touched(a, {"src/b.py"})
    assert touched(a, {"docs/x.md"}) == touched(b, {"docs/x.md"}) == []


def test_the_unmodified_tree_passes_only_under_every_command() -> None:
    ok = TreeRun(RunStatus.PASSED, tests=frozenset({"a"}), duration_s=1.0)
    bad = TreeRun(RunStatus.FAILED, failing=frozenset({"b"}), tests=frozenset({"b"}))
    assert combine([("pytest", ok)]).status is RunStatus.PASSED
    both = combine([("pytest", ok), ("pytest -k b", bad)])
    assert both.status is RunStatus.FAILED and both.failing == {"b"}
    assert both.tests == {"a", "b"} and both.detail == " (command: pytest -k b)"


def test_exact_refuses_an_extra_failure_that_includes_accepts() -> None:
    expected, failing = {"t.py::a"}, {"t.py::a", "t.py::b"}
    assert not matches(expected, failing, Match.EXACT)
    assert matches(expected, failing, Match.INCLUDES)
    assert matches(expected, {"t.py::a"}, Match.EXACT)


def test_difference_names_the_cases_of_a_function_id_that_passed() -> None:
    """`caught_by = ["t.py::test_f"]` expects every case of test_f; the case that passed is
    named, and so is an unexpected failure (not under `includes`)."""
    known = ("t.py::test_f[1]", "t.py::test_f[2]", "t.py::test_g")
    failing = ("t.py::test_f[1]", "t.py::test_g")
    exact = ControlResult(
        "c", Verdict.CAUGHT_DIFFERENTLY, ("t.py::test_f",), failing, match="exact"
    )
    assert difference(exact, known) == (("t.py::test_f[2]",), ("t.py::test_g",))
    loose = ControlResult(
        "c", Verdict.CAUGHT_DIFFERENTLY, ("t.py::test_f",), failing, match="includes"
    )
    assert difference(loose, known) == (("t.py::test_f[2]",), ())
    met = ControlResult("c", Verdict.CAUGHT, ("t.py::test_f", "t.py::test_g"), known, match="exact")
    assert difference(met, known) == ((), ())


def test_an_expected_test_the_run_skipped_is_named_as_skipped() -> None:
    """caught_by named an always-skipped test: the verdict said "no test failed" (survived)
    or "did not fail: ...", never that the test was skipped and so could catch nothing."""
    skip, other = TESTS[0], TESTS[1]
    suite = Suite(
        {
            skip: TestResult(skip, Outcome.SKIPPED, "always skipped"),
            other: TestResult(other, Outcome.PASSED),
        }
    )
    run = classify(ProcStatus.OK, 0, suite)
    assert run.skipped == {skip}
    control = Control("c", "w", (), ("pytest",), caught_by=(skip,))
    survived = judge(control, run)
    assert survived.verdict is Verdict.SURVIVED
    assert (
        survived.detail
        == f"no test failed; {skip} skipped, so never run: a skipped test catches nothing"
    )
    failing = Suite({**suite.results, other: TestResult(other, Outcome.FAILED, "x")})
    differently = judge(control, classify(ProcStatus.FAILED, 1, failing))
    assert differently.verdict is Verdict.CAUGHT_DIFFERENTLY
    assert differently.detail.endswith(
        f"; {skip} skipped, so never run: a skipped test catches nothing"
    )
    plain = judge(Control("c", "w", (), ("pytest",), caught_by=(other,)), run)
    assert plain.detail == "no test failed"
