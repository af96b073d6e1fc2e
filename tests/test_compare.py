"""The pure comparison: classes, summary counts and properties over random evidence."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from strategies import DEF, case_ids, side

from fidelity.kinds.diffs import OutputDiff
from fidelity.matrix.verdict.compare import SWAPPED, Verdict, compare, compare_case, file_delta
from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus, SideEvidence
from fidelity.matrix.verdict.findings import Harness, exit_code, provenance

OK = CaseEvidence("x", DEF, CaseStatus.OK, 0, outputs={"o": "1" * 64}, cache={"c": "1" * 64})


def test_file_delta_names_changed_added_and_missing() -> None:
    delta = file_delta({"a": "1", "b": "1", "m": "1"}, {"a": "1", "b": "2", "n": "1"})
    assert (delta.changed, delta.added, delta.missing) == (("b",), ("n",), ("m",))
    assert delta.count == 3 and bool(delta)
    assert not file_delta({"a": "1"}, {"a": "1"})


def test_each_class() -> None:
    moved = replace(OK, outputs={"o": "2" * 64})
    failed = replace(OK, status=CaseStatus.FAILED, exit_code=1)
    cache_only = replace(OK, cache={"c": "2" * 64})
    assert compare_case("x", DEF, OK, OK).verdict is Verdict.IDENTICAL
    assert compare_case("x", DEF, OK, moved).verdict is Verdict.MOVED
    assert compare_case("x", DEF, OK, cache_only).verdict is Verdict.MOVED
    assert compare_case("x", DEF, OK, cache_only).cache.changed == ("c",)
    assert compare_case("x", DEF, failed, OK).verdict is Verdict.BASELINE_FAILED
    assert compare_case("x", DEF, OK, failed).verdict is Verdict.CANDIDATE_ONLY_FAILED
    assert compare_case("x", DEF, failed, failed).verdict is Verdict.BOTH_FAILED
    assert compare_case("x", DEF, OK, None).verdict is Verdict.NOT_COMPARED
    not_run = replace(OK, status=CaseStatus.NOT_RUN)
    assert compare_case("x", DEF, not_run, OK).detail == "ran only on candidate"
    missing = replace(OK, missing_outputs=("*.csv",))
    assert compare_case("x", DEF, OK, missing).verdict is Verdict.MISSING_EVIDENCE
    empty = replace(OK, outputs={}, cache={})
    assert compare_case("x", DEF, empty, empty).verdict is Verdict.MISSING_EVIDENCE
    assert compare_case("x", DEF, empty, OK).verdict is Verdict.MOVED
    other = replace(OK, definition_sha="e" * 64)
    assert compare_case("x", DEF, OK, other).verdict is Verdict.DEFINITION_DIFFERS
    own = [("baseline", {"x": "f" * 64}), ("candidate", None)]
    result = compare_case("x", DEF, OK, OK, own=own)
    assert result.verdict is Verdict.DEFINITION_DIFFERS
    assert "baseline's own table" in result.detail
    assert compare_case("x", DEF, OK, OK, own=[("baseline", {"y": "f" * 64})]).verdict is (
        Verdict.IDENTICAL
    )


def test_an_added_output_moves_even_when_every_changed_one_is_within_tolerance() -> None:
    changed = replace(OK, outputs={**OK.outputs, "o": "2" * 64})
    tolerated = (OutputDiff("o", "csv", True, "within tolerance"),)
    assert (
        compare_case("x", DEF, OK, changed, explained=tolerated).verdict is Verdict.WITHIN_TOLERANCE
    )
    added = replace(changed, outputs={**changed.outputs, "new.csv": "3" * 64})
    result = compare_case("x", DEF, OK, added, explained=tolerated)
    assert result.verdict is Verdict.MOVED
    assert result.outputs.added == ("new.csv",)


def sides(ids: list[str], data: st.DataObject) -> tuple[SideEvidence, SideEvidence]:
    return data.draw(side("baseline", ids)), data.draw(side("candidate", ids))


@given(case_ids, st.data())
def test_every_declared_case_lands_in_exactly_one_class(
    ids: list[str], data: st.DataObject
) -> None:
    base, cand = sides(ids, data)
    result = compare([(i, DEF) for i in ids], base, cand)
    s = result.summary
    assert [r.case_id for r in result.cases] == ids
    assert (
        s.identical
        + s.moved
        + s.failures
        + s.missing_evidence
        + s.definition_differs
        + (s.not_compared)
        == s.declared
        == len(ids)
    )
    assert s.compared == s.identical + s.moved


@given(case_ids, st.data())
def test_a_side_compared_with_itself_is_all_identical(ids: list[str], data: st.DataObject) -> None:
    base = data.draw(side("baseline", ids))
    ok = {k: replace(v, status=CaseStatus.OK, missing_outputs=()) for k, v in base.cases.items()}
    base = replace(base, cases=ok)
    result = compare([(i, DEF) for i in ids], base, replace(base, role="candidate"))
    for r in result.cases:
        if r.case_id not in ok:
            assert r.verdict is Verdict.NOT_COMPARED
        elif ok[r.case_id].outputs or ok[r.case_id].cache:
            assert r.verdict is Verdict.IDENTICAL
        else:  # nothing to compare is never "identical"
            assert r.verdict is Verdict.MISSING_EVIDENCE


@given(case_ids, st.data())
def test_swapping_sides_swaps_failures_and_keeps_the_moved_set(
    ids: list[str], data: st.DataObject
) -> None:
    base, cand = sides(ids, data)
    declared = [(i, DEF) for i in ids]
    forward = compare(declared, base, cand)
    backward = compare(declared, cand, base)
    for f, b in zip(forward.cases, backward.cases, strict=True):
        assert b.verdict is SWAPPED.get(f.verdict, f.verdict)
        assert f.outputs.changed == b.outputs.changed
        assert (f.outputs.added, f.outputs.missing) == (b.outputs.missing, b.outputs.added)


HARNESS = Harness("WORKTREE", "0" * 40, False, (), "cases/matrix.toml", "a" * 64, False)


@given(case_ids, st.data())
def test_the_gate_never_exits_0_without_comparing(ids: list[str], data: st.DataObject) -> None:
    base, cand = sides(ids, data)
    result = compare([(i, DEF) for i in ids], base, cand)
    code = exit_code(result, provenance(HARNESS, base, cand, result))
    if code == 0:
        assert result.summary.compared == result.summary.identical == len(ids) > 0
    if result.summary.compared == 0:
        assert code == 3
