"""Control tables: every problem located by file, control id and JSON path; bad commands."""

from __future__ import annotations

import pytest

from fidelity.controls import runner as controls_run
from fidelity.controls.table import NOOP_ID, Edit, Match, parse
from fidelity.errors import TableError, UsageError

GOOD = b"""
[controls]
import_check = ["calc"]

[[control]]
id = "add-minus"
why = "add must add"
edit = [{ file = "calc.py", find = "a + b", replace = "a - b" }]
caught_by = ["tests/test_calc.py::test_add"]
match = "includes"

[[control]]
id = "residue"
why = "known"
edit = [{ file = "calc.py", patch = "--- a/calc.py" }]
survives = true
residue = "not tested"
timeout_s = 5
"""


def problems(text: str) -> list[str]:
    with pytest.raises(TableError) as info:
        parse(text.encode(), "cases/controls.toml")
    assert str(info.value).startswith("invalid control table cases/controls.toml:")
    return info.value.problems


def test_a_good_table_and_its_defaults() -> None:
    table = parse(GOOD, "c.toml")
    first, second = table.controls
    assert first.command == ("python", "-m", "pytest", "-q") and first.match is Match.INCLUDES
    assert first.edits == (Edit("calc.py", "a + b", "a - b"),)
    assert second.survives and second.timeout_s == 5 and second.edits[0].patch
    assert table.noop().id == NOOP_ID and table.noop().survives and table.noop().edits == ()


def control(body: str, cid: str = "x") -> str:
    return f'[[control]]\nid = "{cid}"\nwhy = "w"\n{body}\n'


EDIT = 'edit = [{ file = "a.py", find = "1", replace = "2" }]'


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            EDIT + '\ncaught_by = ["t"]\ncolour = 1',
            "control 'x' at $.control[0].colour: unknown key 'colour'",
        ),
        (
            'edit = [{ file = "a.py", find = "1", replace = "2", patch = "p" }]\ncaught_by = ["t"]',
            "control 'x' at $.control[0].edit[0]: give either find + replace, or patch (not both)",
        ),
        (
            'edit = [{ file = "a.py", find = "1" }]\ncaught_by = ["t"]',
            "control 'x' at $.control[0].edit[0]: give either find + replace, or patch (not both)",
        ),
        (
            EDIT,
            "control 'x' at $.control[0]: give either caught_by (with an optional match), "
            "or survives = true with a residue",
        ),
        (
            EDIT + '\ncaught_by = ["t"]\nsurvives = true\nresidue = "r"',
            "control 'x' at $.control[0]: give either caught_by",
        ),
        (
            EDIT + '\ncaught_by = ["t"]\nmatch = "some"',
            "control 'x' at $.control[0].match: 'some' is not one of ['exact', 'includes']",
        ),
        (
            'edit = [{ file = "/etc/passwd", find = "1", replace = "2" }]\ncaught_by = ["t"]',
            "control 'x' at $.control[0].edit[0].file: '/etc/passwd' does not match",
        ),
    ],
)
def test_each_problem_is_located(body: str, expected: str) -> None:
    found = problems(control(body))
    assert any(p.startswith(expected) for p in found), found


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        ("timeout_s = nan", "", "at $.controls.timeout_s: must be a finite number"),
        ("timeout_s = inf", "", "at $.controls.timeout_s: must be a finite number"),
        ("", "timeout_s = -inf", "control 'x' at $.control[0].timeout_s"),
        ("", "timeout_s = nan", "control 'x' at $.control[0].timeout_s: must be a finite"),
        ("timeout_s = 1e300", "", "at $.controls.timeout_s: 1e+300 is greater than the maximum"),
    ],
)
def test_time_limits_that_cannot_be_waited_for_are_located_errors(
    head: str, body: str, expected: str
) -> None:
    """TOML's nan and inf pass a schema's bounds: nan made every control a timeout (exit 3,
    nothing had timed out), inf and 1e300 a traceback when waited for."""
    found = problems(f"[controls]\n{head}\n" + control(EDIT + '\ncaught_by = ["t"]\n' + body))
    assert any(p.startswith(expected) for p in found), found
    longest = "[controls]\ntimeout_s = 1e9\n" + control(EDIT + '\ncaught_by = ["t"]')
    assert parse(longest.encode(), "c.toml").controls[0].timeout_s == 1e9


def test_duplicate_ids_and_unknown_head_keys() -> None:
    dup = control(EDIT + '\ncaught_by = ["t"]') * 2
    assert problems(dup) == [
        "control 'x' at $.control[1].id: duplicate id; first used at $.control[0]"
    ]
    head = '[controls]\nimport_checks = ["a"]\n' + control(EDIT + '\ncaught_by = ["t"]')
    assert problems(head)[0].startswith("at $.controls.import_checks: unknown key 'import_checks'")
    assert problems("[[control]]\nid = 3")[0].startswith("control #1 at $.control[0]")
    assert problems("not toml [")[0].startswith("invalid TOML")


def test_commands_the_runner_cannot_read_are_usage_errors() -> None:
    controls_run.check_command(["python", "-m", "pytest"], ["calc"], "t")
    controls_run.check_command(["make", "test", "JUNIT={junit}"], [], "t")
    with pytest.raises(UsageError, match="is not pytest; put {junit}"):
        controls_run.check_command(["make", "test"], [], "t")
    with pytest.raises(UsageError, match="is not pytest; put {junit}"):  # a literal {junit}
        controls_run.check_command(["make", "test", "JUNIT={{junit}}"], [], "t")
    with pytest.raises(UsageError, match="-x stops at the first failure"):
        controls_run.check_command(["pytest", "-x"], [], "t")
    for stop in ("-qx", "-xq", "--sw", "--stepwise", "--maxfail=2", "--exitfirst"):
        with pytest.raises(UsageError, match="stops at the first failure"):
            controls_run.check_command(["pytest", stop], [], "t")
    for fine in ("-q", "-kx", "-k", "-p", "--tb=short"):
        controls_run.check_command(["pytest", fine], [], "t")
    with pytest.raises(UsageError, match="import_check needs a pytest command"):
        controls_run.check_command(["make", "JUNIT={junit}"], ["calc"], "t")


def test_pytest_gets_junit_family_and_the_guard(tmp_path) -> None:
    argv = controls_run.argv_for(["python", "-m", "pytest", "-q"], tmp_path / "j.xml", tmp_path)
    assert argv == [
        *("python", "-m", "pytest", "-q", "-o", "junit_family=xunit1", "-p", "no:cacheprovider"),
        *("-p", "fidelity_pytest_guard", "-p", "fidelity_pytest_controls"),
        f"--junitxml={tmp_path / 'j.xml'}",
        f"--basetemp={tmp_path.parent / 'pytest-tmp'}",
    ], "exactly what docs/controls.md says fidelity appends"
    named = ["python", "-m", "pytest", "--basetemp=/elsewhere"]
    assert controls_run.argv_for(named, tmp_path / "j.xml", tmp_path)[-1] != "--basetemp=" + str(
        tmp_path.parent / "pytest-tmp"
    ), "a command that names its own base temporary folder keeps it"
    other = controls_run.argv_for(["run", "--out={junit}"], tmp_path / "j.xml", tmp_path)
    assert other == ["run", f"--out={tmp_path / 'j.xml'}"]
