"""`controls from-fix` from real fixes (issue 22 item 2): the fix's tests are found by the
ids collected before and after it and by the lines it changed, each hunk is reverted and run,
the entry expects what failed there, and each entry is run once before it is printed. Each
shape of fix (new parametrize cases, a new test function, a changed expected value) is a
generated fix commit whose proposal then holds under `controls run --only ID`."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from support import Repo, run_cli, snapshot

from fidelity.controls.fixtests import (
    NO_FIX_TEST,
    expect,
    fix_tests,
    split_hunks,
    touched_functions,
)
from fidelity.controls.table import Control, Match, parse
from fidelity.controls.verdict import RunStatus, TreeRun

HEADER = '[controls]\ncommand = ["{python}", "-m", "pytest", "-q"]\n'
CALC = "def neg(a):\n    return a\n\n\ndef double(a):\n    return a + a\n"
FIXED = "def neg(a):\n    return -a\n\n\ndef double(a):\n    return a + a\n"
TESTS = "from calc import double, neg\n\n\ndef test_double():\n    assert double(2) == 4\n"
NEW_TEST = TESTS + "\n\ndef test_neg():\n    assert neg(2) == -2\n"

ABS = "def absolute(a):\n    return a\n"
ABS_FIXED = "def absolute(a):\n    return -a if a < 0 else a\n"
ABS_TESTS = """import pytest

from calc import absolute

CASES = [
    (1, 1),
    (2, 2),
]


@pytest.mark.parametrize(("a", "want"), CASES)
def test_absolute(a, want):
    assert absolute(a) == want


def test_zero():
    assert absolute(0) == 0
"""

HALF = "def half(a):\n    return a // 2\n"
HALF_FIXED = "def half(a):\n    return a / 2\n"
HALF_TESTS = (
    "from calc import half\n\n\ndef test_half_even():\n    assert half(4) == 2\n\n\n"
    "def test_half_odd():\n    assert half(5) == 2\n"
)


def _proposed(repo: Repo, spec: str, capsys: pytest.CaptureFixture[str]) -> tuple[Control, str]:
    """Run from-fix (the checkout proven untouched), then the one proposal as a table entry
    under `controls run --only ID`: it must hold there too. The entry, and the printed text
    unwrapped."""
    before = snapshot(repo.path)
    code, out = run_cli(["controls", "from-fix", spec, "--repo", str(repo.path)])
    err = capsys.readouterr().err
    assert code == 0, err + out
    assert snapshot(repo.path) == before, "from-fix touched the checkout"
    assert "PROPOSED: 1 control(s)" in err and "held (1 caught)" in err
    (proposed,) = parse((HEADER + out).encode(), "proposed").controls
    repo.commit({"cases/controls.toml": HEADER + out})
    report = repo.path.parent / "run.json"
    argv = ["controls", "run", "--only", proposed.id, "--repo", str(repo.path), "-q"]
    code, _ = run_cli([*argv, "--json", str(report)])
    data = json.loads(report.read_text())
    assert code == 0, data["summary"]
    assert [(c["id"], c["verdict"]) for c in data["controls"]] == [(proposed.id, "caught")]
    return proposed, " ".join(line.removeprefix("# ") for line in out.splitlines())


def test_new_parametrize_cases_on_an_existing_test_are_the_expected_ids(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("cases")
    base = repo.commit(
        {"calc.py": ABS, "tests/test_calc.py": ABS_TESTS, "cases/controls.toml": HEADER}
    )
    more = ABS_TESTS.replace("    (2, 2),\n", "    (2, 2),\n    (-3, 3),\n    (-1, 1),\n")
    fix = repo.commit({"calc.py": ABS_FIXED, "tests/test_calc.py": more})
    proposed, out = _proposed(repo, f"{base}..{fix}", capsys)
    assert proposed.caught_by == (
        "tests/test_calc.py::test_absolute[-1-1]",
        "tests/test_calc.py::test_absolute[-3-3]",
    )
    assert proposed.match is Match.EXACT and not proposed.survives
    assert "The fix's tests (2)" in out, "only the new cases are the fix's: no line of the test"
    assert "2 of the 2 test(s) the fix added or changed fail without this hunk" in out
    assert f"run once as written at {fix[:10]}: caught, held" in out


def test_a_new_test_function_is_the_expected_id(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("fix")
    base = repo.commit(
        {"calc.py": CALC, "tests/test_calc.py": TESTS, "cases/controls.toml": HEADER}
    )
    fix = repo.commit({"calc.py": FIXED, "tests/test_calc.py": NEW_TEST, "README.md": "x\n"})
    proposed, _ = _proposed(repo, f"{base}..{fix}", capsys)
    assert proposed.caught_by == ("tests/test_calc.py::test_neg",)
    assert proposed.files == ("calc.py",) and proposed.match is Match.EXACT


def test_a_changed_expected_value_keeps_its_id_and_is_expected(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("value")
    base = repo.commit(
        {"calc.py": HALF, "tests/test_calc.py": HALF_TESTS, "cases/controls.toml": HEADER}
    )
    changed = HALF_TESTS.replace("half(5) == 2\n", "half(5) == 2.5\n")
    fix = repo.commit({"calc.py": HALF_FIXED, "tests/test_calc.py": changed})
    proposed, out = _proposed(repo, f"{base}..{fix}", capsys)
    assert proposed.caught_by == ("tests/test_calc.py::test_half_odd",)
    assert "The fix's tests (1)" in out, "test_half_even passes either way and is not the fix's"


def test_a_hunk_no_test_catches_is_proposed_as_a_residue_and_held(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("residue")
    base = repo.commit(
        {"calc.py": CALC, "tests/test_calc.py": TESTS, "cases/controls.toml": HEADER}
    )
    fix = repo.commit({"calc.py": FIXED})
    code, out = run_cli(["controls", "from-fix", f"{base}..{fix}", "--repo", str(repo.path)])
    assert code == 0, out
    (proposed,) = parse((HEADER + out).encode(), "proposed").controls
    assert proposed.survives and proposed.residue == NO_FIX_TEST
    assert "held (1 residue-held)" in capsys.readouterr().err


def test_a_hunk_whose_revert_stops_collection_is_not_proposed_and_exits_1(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("unviable")
    base = repo.commit(
        {"calc.py": CALC, "tests/test_calc.py": TESTS, "cases/controls.toml": HEADER}
    )
    triple = CALC + "\n\ndef triple(a):\n    return 3 * a\n"
    tests = TESTS.replace("double, neg", "double, neg, triple") + (
        "\n\ndef test_triple():\n    assert triple(2) == 6\n"
    )
    fix = repo.commit({"calc.py": triple, "tests/test_calc.py": tests})
    code, out = run_cli(["controls", "from-fix", f"{base}..{fix}", "--repo", str(repo.path)])
    assert code == 1
    assert parse((HEADER + out).encode(), "proposed").controls == (), "the entry is commented"
    assert "# NOT PROPOSED: with this hunk reverted the tests gave no verdict" in out
    assert "# the reverted run was unviable: collection error in tests/test_calc.py" in out
    assert "NOT HELD: 1 of 1 hunk(s) gave no entry that held" in capsys.readouterr().err


def test_a_hunk_whose_revert_only_crashes_its_test_is_not_held_and_exits_1(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    """Reverting `triple` makes its new test fail with AttributeError, not on a value: the
    entry, run, is caught-by-error, which does not hold (red with every run entry counted
    held whatever its verdict: it printed PROPOSED and exited 0)."""
    repo = make_repo("crash-only")
    base = repo.commit(
        {"calc.py": CALC, "tests/test_calc.py": TESTS, "cases/controls.toml": HEADER}
    )
    triple = CALC + "\n\ndef triple(a):\n    return 3 * a\n"
    tests = "import calc\n" + TESTS + "\n\ndef test_triple():\n    assert calc.triple(2) == 6\n"
    fix = repo.commit({"calc.py": triple, "tests/test_calc.py": tests})
    code, out = run_cli(["controls", "from-fix", f"{base}..{fix}", "--repo", str(repo.path)])
    err = capsys.readouterr().err
    assert code == 1, err + out
    assert "NOT HELD" in err and "PROPOSED: 1 control" not in err, err
    assert "caught-by-error" in err + out, err + out


def test_a_fix_whose_tree_fails_is_untrusted_and_proposes_nothing(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("red")
    base = repo.commit(
        {"calc.py": CALC, "tests/test_calc.py": TESTS, "cases/controls.toml": HEADER}
    )
    red = NEW_TEST.replace("neg(2) == -2", "neg(2) == 2")
    fix = repo.commit({"calc.py": FIXED, "tests/test_calc.py": red})
    code, out = run_cli(["controls", "from-fix", f"{base}..{fix}", "--repo", str(repo.path)])
    assert (code, out) == (3, "")
    assert f"UNTRUSTED: {fix[:10]} itself does not pass (failed: " in capsys.readouterr().err


def test_from_fix_needs_a_range_and_says_when_there_is_no_source_hunk(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("docs")
    base = repo.commit({"calc.py": CALC})
    docs = repo.commit({"tests/test_calc.py": TESTS})
    assert run_cli(["controls", "from-fix", f"{base}..{docs}", "--repo", str(repo.path)])[0] == 1
    assert "NOTHING TO PROPOSE" in capsys.readouterr().err
    with pytest.raises(Exception, match="BASE..FIX"):
        run_cli(["controls", "from-fix", base, "--repo", str(repo.path)])


# --- the pure half ---


def _run(*failing: str) -> TreeRun:
    status = RunStatus.FAILED if failing else RunStatus.PASSED
    return TreeRun(status, frozenset(failing), frozenset({*failing, "t.py::other"}))


def test_expect_prefers_the_fix_s_tests_and_says_when_others_fail_too() -> None:
    mine = ("t.py::test_a[1]", "t.py::test_a[2]")
    e = expect(mine, _run("t.py::test_a[2]", "t.py::test_old"))
    assert (e.caught_by, e.match) == (("t.py::test_a[2]",), Match.INCLUDES)
    assert e.said == (
        "1 of the 2 test(s) the fix added or changed fail without this hunk; 1 pass: "
        "t.py::test_a[1]",
        "1 other test(s) fail too, so match = includes: t.py::test_old",
    )
    only = expect(mine, _run(*mine))
    assert (only.caught_by, only.match) == (mine, Match.EXACT)


def test_expect_falls_back_to_older_tests_then_to_a_residue() -> None:
    older = expect(("t.py::test_new",), _run("t.py::test_old"))
    assert (older.caught_by, older.match, older.residue) == (("t.py::test_old",), Match.EXACT, "")
    assert older.said[0].startswith("none of the 1 test(s) the fix added or changed fails")
    assert expect((), _run()).residue == NO_FIX_TEST
    assert "not even the 1 test(s)" in expect(("t.py::test_new",), _run()).residue


def test_fix_tests_are_new_ids_and_cases_of_touched_functions() -> None:
    fix_ids = ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b", "t.py::test_c[x]"]
    base_ids = ["t.py::test_a[1]", "t.py::test_b", "t.py::test_c[x]"]
    assert fix_tests(fix_ids, base_ids, ["t.py::test_c"]) == ("t.py::test_a[2]", "t.py::test_c[x]")
    assert fix_tests(fix_ids, None, ["t.py::test_b"]) == ("t.py::test_b",), "BASE not listed"


def test_a_new_parametrize_case_in_the_decorator_touches_its_function() -> None:
    source = (
        "import pytest\n\n\n@pytest.mark.parametrize('a', [\n    1,\n    2,\n])\n"
        "def test_a(a):\n    assert a\n\n\nclass TestB:\n    def test_b(self):\n        pass\n"
    )
    assert touched_functions("t.py", source, {6}) == ["t.py::test_a"]
    assert touched_functions("t.py", source, {14}) == ["t.py::TestB::test_b"]
    assert touched_functions("t.py", source, {1}) == []


def test_split_hunks_gives_one_patch_per_hunk() -> None:
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        "@@ -9,2 +9,2 @@\n d\n-e\n+f\ndiff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n"
        "@@ -1 +1 @@\n-g\n+h\n"
    )
    hunks = split_hunks(diff)
    assert [(h.file, h.first_line) for h in hunks] == [("x.py", 1), ("x.py", 9), ("y.py", 1)]
    assert hunks[1].patch == "--- a/x.py\n+++ b/x.py\n@@ -9,2 +9,2 @@\n d\n-e\n+f\n"


SPREAD = (
    "def neg(a):\n    return a\n\n\ndef double(a):\n    return a + a\n\n\n"
    "def triple(a):\n    return 3 * a\n\n\ndef quad(a):\n    return 4 * a\n"
)
SPREAD_FIXED = (
    SPREAD.replace("def neg(a):\n    return a\n", "def neg(a):\n    return _negate(a)\n")
    + "\n\ndef _negate(a):\n    return -a\n"
)


def test_a_hunk_that_only_crashes_alone_is_reverted_with_the_hunk_that_uses_it(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: the fix adds a helper (hunk 2) and calls it (hunk 1). Reverted alone, the
    helper's hunk leaves a call to a name that is gone, so the tests can only crash and the
    entry could never hold; it is proposed reverted together with the hunk that calls it."""
    repo = make_repo("grouped")
    base = repo.commit(
        {"calc.py": SPREAD, "tests/test_calc.py": TESTS, "cases/controls.toml": HEADER}
    )
    fix = repo.commit({"calc.py": SPREAD_FIXED, "tests/test_calc.py": NEW_TEST})
    before = snapshot(repo.path)
    code, out = run_cli(["controls", "from-fix", f"{base}..{fix}", "--repo", str(repo.path)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 0, err + out
    assert snapshot(repo.path) == before
    assert "PROPOSED: 2 control(s)" in err and "held (2 caught)" in err, err
    single, grouped = parse((HEADER + out).encode(), "proposed").controls
    assert single.id.endswith("-calc-1") and grouped.id.endswith("-calc-1-2")
    assert [e.file for e in grouped.edits] == ["calc.py"], "one patch for the file"
    patch = grouped.edits[0].patch or ""
    assert patch.count("\n@@ -") == 2, "holding both hunks"
    assert grouped.caught_by == ("tests/test_calc.py::test_neg",)
    flat = " ".join(line.removeprefix("# ") for line in out.splitlines())
    assert "hunks 1, 2 reverted together: hunk 2 alone was caught-by-error" in flat, flat
    repo.commit({"cases/controls.toml": HEADER + out})
    code, text = run_cli(["controls", "run", "--repo", str(repo.path), "-q"])
    assert code == 0, text


def test_hunks_are_linked_by_the_names_they_bind_and_use() -> None:
    from fidelity.controls import hunkdeps
    from fidelity.controls.fixtests import Hunk

    def hunk(fix: str, base: str = "") -> Hunk:
        body = "".join(f"-{x}\n" for x in fix.splitlines())
        body += "".join(f"+{x}\n" for x in base.splitlines())
        return Hunk("m.py", f"--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n{body}", 1)

    helper = hunk("def _negate(a):\n    return -a")
    call = hunk("    return _negate(a)", "    return a")
    other = hunk("    return 3 * a", "    return a * 3")
    renamed = hunk("def new_name():", "def old_name():")
    caller = hunk("    new_name()", "    old_name()")
    imported = hunk("from m.util import clamp as clip")
    user = hunk("    x = clip(y)")
    assert hunkdeps.linked(helper, call) and not hunkdeps.linked(helper, other)
    assert hunkdeps.linked(renamed, caller) and hunkdeps.linked(imported, user)
    assert hunkdeps.groups([call, other, helper], [2]) == [(0, 2)]
    assert hunkdeps.groups([call, other, helper], [1]) == [], "a group of one is no group"
    assert not hunkdeps.linked(hunk("    result = 1"), hunk("    result = 2")), "locals"
