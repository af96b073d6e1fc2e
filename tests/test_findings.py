"""Each provenance finding fires on the input it exists for, and not on its nearest neighbour."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fidelity.matrix.verdict.compare import compare
from fidelity.matrix.verdict.evidence import (
    CaseEvidence,
    CaseStatus,
    ImportResolution,
    SetupStep,
    SideEvidence,
    side_from_json,
    side_to_json,
)
from fidelity.matrix.verdict.findings import Code, Harness, exit_code, provenance
from fidelity.proc import ProcStatus

DEF = "d" * 64
OK = CaseEvidence("a", DEF, CaseStatus.OK, 0, outputs={"o": "1" * 64})
BASE = SideEvidence("baseline", "main", "1" * 40, cases={"a": OK})
CAND = replace(BASE, role="candidate", rev="HEAD")
HARNESS = Harness("WORKTREE", "0" * 40, False, (), "cases/matrix.toml", "a" * 64, False)


def codes(
    harness: Harness = HARNESS, base: SideEvidence = BASE, cand: SideEvidence = CAND
) -> set[Code]:
    comparison = compare([("a", DEF)], base, cand)
    return {f.code for f in provenance(harness, base, cand, comparison)}


def test_clean_run_has_no_findings_and_exits_0() -> None:
    comparison = compare([("a", DEF)], BASE, CAND)
    assert provenance(HARNESS, BASE, CAND, comparison) == ()
    assert exit_code(comparison, ()) == 0


@pytest.mark.parametrize(
    ("code", "red", "green"),
    [
        (
            Code.DIRTY_SIDE,
            {"cand": replace(CAND, source_dirty=True, dirty_paths=("x.py",))},
            {"cand": replace(CAND, source_dirty=False)},
        ),
        (
            Code.DIRTY_HARNESS,
            {"harness": replace(HARNESS, table_dirty=True, dirty=True)},
            {"harness": replace(HARNESS, dirty=True, dirty_paths=("notes.txt",))},
        ),
        (
            Code.SHADOWED_IMPORT,
            {
                "base": replace(
                    BASE, imports=(ImportResolution("pkg", "/other/pkg/__init__.py", False),)
                )
            },
            {
                "base": replace(
                    BASE, imports=(ImportResolution("pkg", "/wt/pkg/__init__.py", True),)
                )
            },
        ),
        (
            Code.UNRESOLVED_IMPORT,
            {"base": replace(BASE, imports=(ImportResolution("pkg", None, False, "no module"),))},
            {"base": replace(BASE, imports=(ImportResolution("pkg", "/wt/pkg.py", True),))},
        ),
        (
            Code.SETUP_FAILED,
            {
                "base": replace(
                    BASE, setup=(SetupStep("pip install -e .", ProcStatus.FAILED, 1, 0.1),)
                )
            },
            {"base": replace(BASE, setup=(SetupStep("pip install -e .", ProcStatus.OK, 0, 0.1),))},
        ),
        (
            Code.EXECUTED_DIFFERS,
            {"cand": replace(CAND, cases={"a": replace(OK, status=CaseStatus.NOT_RUN)})},
            {"cand": replace(CAND, cases={"a": replace(OK, status=CaseStatus.FAILED)})},
        ),
        (
            Code.CACHE_NOT_EMPTY,
            {"cand": replace(CAND, cases={"a": replace(OK, cache_preexisting=("stale.bin",))})},
            {"cand": replace(CAND, cases={"a": replace(OK, cache={"fresh.bin": "2" * 64})})},
        ),
        (
            Code.WORKTREE_NOT_REMOVED,
            {"cand": replace(CAND, worktree_removed=False, worktree="/tmp/wt")},
            {"cand": replace(CAND, worktree_removed=True, worktree="/tmp/wt")},
        ),
        (  # a set-up worktree kept on purpose (reuse_setup) is not one that failed to go
            Code.WORKTREE_NOT_REMOVED,
            {"cand": replace(CAND, worktree_removed=False, worktree="/tmp/wt")},
            {"cand": replace(CAND, worktree_removed=False, worktree="/tmp/wt", kept="/tmp/wt")},
        ),
        (
            Code.MISSING_EVIDENCE,
            {"cand": replace(CAND, cases={"a": replace(OK, missing_outputs=("*.csv",))})},
            {"cand": replace(CAND, cases={"a": replace(OK, outputs={"o": "9" * 64})})},
        ),
        (
            Code.DEFINITION_DIFFERS,
            {"base": replace(BASE, own_definitions={"a": "e" * 64})},
            {"base": replace(BASE, own_definitions={"a": DEF, "gone": "e" * 64})},
        ),
        (
            Code.NOTHING_COMPARED,
            {"base": replace(BASE, cases={"a": replace(OK, status=CaseStatus.FAILED)})},
            {"base": replace(BASE, cases={"a": replace(OK, outputs={"o": "9" * 64})})},
        ),
    ],
)
def test_finding_fires_and_does_not(code: Code, red: dict, green: dict) -> None:
    assert code in codes(**red)
    assert code not in codes(**green)
    comparison = compare([("a", DEF)], red.get("base", BASE), red.get("cand", CAND))
    found = provenance(
        red.get("harness", HARNESS), red.get("base", BASE), red.get("cand", CAND), comparison
    )
    assert exit_code(comparison, found) == 3


def test_moved_or_failed_without_findings_exits_1() -> None:
    moved = replace(CAND, cases={"a": replace(OK, outputs={"o": "9" * 64})})
    comparison = compare([("a", DEF)], BASE, moved)
    assert exit_code(comparison, ()) == 1


def test_a_setup_steps_status_is_an_enum_written_as_before() -> None:
    """run.json keeps the strings it always held ("failed"); read back, the status is a
    ProcStatus again, so `is not ProcStatus.OK` judges a reloaded run as it judged the live one."""
    side = replace(BASE, setup=(SetupStep("pip install -e .", ProcStatus.FAILED, 1, 0.1),))
    text = json.dumps(side_to_json(side))
    assert '"status": "failed"' in text
    again = side_from_json(json.loads(text))
    assert again == side and again.setup[0].status is ProcStatus.FAILED
    assert Code.SETUP_FAILED in codes(base=again)
