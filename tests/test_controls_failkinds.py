"""How a control's tests failed: an assertion, a declared exception, or only a crash.

A control stands for a change of behaviour. An edit that makes the code crash (an import
inside a function, a name that does not exist) fails every test that runs it, and proves
only that the tests ran it: such a control is `caught-by-error`, never `caught`, and the
run does not exit 0. Real repositories and real pytest runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support import Repo
from test_controls import TESTS as BASE_TESTS
from test_controls import caught, control, fr, header, project

from fidelity.cli.main import main
from fidelity.controls import failkinds, junit, render
from fidelity.controls import gate as controls
from fidelity.controls.failkinds import Failure, Kind
from fidelity.controls.verdict import Report, Verdict

# the project of test_controls, plus a test that expects an exception of its own
TESTS = (
    "import pytest\n\n"
    + BASE_TESTS
    + '\n\ndef test_neg_refuses_text():\n    with pytest.raises(TypeError):\n        neg("x")\n'
)

T = "tests/test_calc.py::"
CRASH = "import calc._no_such_module\n    return a + b"
OWN_ERROR = "class FrozenError(AttributeError):\n        pass\n\n    raise FrozenError(a)"
TABLE = header() + "".join(
    [
        control("add-minus", fr("return a + b", "return a - b"), caught("test_add", "test_both")),
        control("add-crash", fr("return a + b", CRASH), caught("test_add", "test_both")),
        control(
            "mul-divides",
            fr("return a * b", "raise ZeroDivisionError(b)"),
            caught("test_mul", "test_both"),
            'raises = ["ArithmeticError"]',
        ),
        control(  # issue 38: `Exception` was left out of the classes a plugin recorded
            "mul-crashes-exception",
            fr("return a * b", "return a.no_such_attribute"),
            caught("test_mul", "test_both"),
            'raises = ["Exception"]',
        ),
        control(
            "mul-divides-undeclared",
            fr("return a * b", "return a.no_such_attribute"),
            caught("test_mul", "test_both"),
        ),
        control(
            "neg-raises",
            fr("return -a", "raise ValueError(a)"),
            caught("test_neg", "test_neg_refuses_text"),
        ),
        control(
            "neg-identity",
            fr("return -a", "return a"),
            caught("test_neg", "test_neg_refuses_text"),
        ),
        control(  # attrs' FrozenInstanceError: the library's own class, an AttributeError
            "neg-frozen",
            fr("return -a", OWN_ERROR),
            caught("test_neg", "test_neg_refuses_text"),
        ),
    ]
)


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> Report:
    repo = Repo(tmp_path_factory.mktemp("kinds") / "repo")
    project(repo, TABLE, TESTS)
    return controls.run(repo.path, controls.load(repo.path), jobs=2)


def test_each_kind_of_failure_has_its_verdict(kinds: Report) -> None:
    by_id = {r.id: r for r in kinds.results}
    assert {i: (r.verdict, r.how) for i, r in by_id.items()} == {
        "add-minus": (Verdict.CAUGHT, "assertion 2"),
        "add-crash": (Verdict.CAUGHT_BY_ERROR, "error: ModuleNotFoundError 2"),
        "mul-divides": (Verdict.CAUGHT, "declared: ZeroDivisionError 2"),
        "mul-crashes-exception": (Verdict.CAUGHT, "declared: AttributeError 2"),
        "mul-divides-undeclared": (Verdict.CAUGHT_BY_ERROR, "error: AttributeError 2"),
        "neg-raises": (Verdict.CAUGHT, "exception: ValueError 2"),
        "neg-identity": (Verdict.CAUGHT, "assertion 2"),
        # a class of the code's own is behaviour, whatever builtin error it derives from
        "neg-frozen": (Verdict.CAUGHT, "exception: FrozenError 2"),
    }
    # pytest.raises that saw nothing is the test's own check failing: an assertion
    assert by_id["neg-identity"].kinds[T + "test_neg_refuses_text"] == "assertion"
    assert kinds.exit_code() == 1, "a control caught only by crashing is never a pass"


def test_caught_by_error_says_why_and_what_to_do(kinds: Report) -> None:
    r = next(r for r in kinds.results if r.id == "add-crash")
    assert not r.met
    assert "by crashing (error: ModuleNotFoundError 2" in r.detail
    assert "`raises`" in r.detail, "names the key that declares an exception as behaviour"
    assert render.verdict(r) == "caught-by-error (error: ModuleNotFoundError 2)"
    record = next(line for line in render.records(kinds) if line.startswith("add-crash\t"))
    assert record.split("\t")[1] == "caught-by-error"
    assert record.endswith("\tby error: ModuleNotFoundError 2")


def test_cli_exit_and_every_format_say_how(
    make_repo: Callable[[str], Repo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a crash catches the one control: exit 1, and each format says it."""
    repo = make_repo("kinds-cli")
    project(
        repo,
        header() + control("add-crash", fr("return a + b", CRASH), caught("test_add", "test_both")),
        TESTS,
    )
    out = tmp_path / "out"
    argv = ["-q", "controls", "run", "--repo", str(repo.path), "--json", str(out / "c.json")]
    code = main([*argv, "--markdown", str(out / "c.md"), "--junit", str(out / "c.xml")])
    text = capsys.readouterr().out
    assert code == 1
    assert "MISSED: 1 of 1 controls did not meet their expectation (1 caught-by-error)" in text
    data = json.loads((out / "c.json").read_text())
    (entry,) = data["controls"]
    assert entry["verdict"] == "caught-by-error"
    assert entry["kinds"] == {
        f"{T}test_add": "error: ModuleNotFoundError",
        f"{T}test_both": "error: ModuleNotFoundError",
    }
    assert (
        "| add-crash | caught-by-error (error: ModuleNotFoundError 2) |"
        in (out / "c.md").read_text()
    )
    assert 'failures="1"' in (out / "c.xml").read_text()


def test_a_real_change_of_behaviour_is_still_caught_when_one_test_crashes(
    make_repo: Callable[[str], Repo],
) -> None:
    """One expected test fails by its assertion, another by an error: a catch."""
    repo = make_repo("kinds-mixed")
    tests = TESTS + "\n\ndef test_text():\n    assert add('a', 'b') == 'ab'\n"
    edit = fr("return a + b", "return a + b + len(str(a))")
    project(
        repo,
        header() + control("add-len", edit, caught("test_add", "test_both", "test_text")),
        tests,
    )
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    (r,) = report.results
    assert (r.verdict, r.how, report.exit_code()) == (
        Verdict.CAUGHT,
        "assertion 2, error: TypeError 1",
        0,
    )


# --- reading JUnit from other runners, and the property -----------------------------------


def test_failures_of_other_runners_are_read_from_type_or_message() -> None:
    xml = b"""<testsuite>
    <testcase classname="m" name="a"><failure message="assert 1 == 2"/></testcase>
    <testcase classname="m" name="b"><failure type="builtins.NameError" message="x"/></testcase>
    <testcase classname="m" name="c"><failure message="ModuleNotFoundError: No module"/></testcase>
    <testcase classname="m" name="d"><failure message="pkg.errors.Refused: no"/></testcase>
    <testcase classname="m" name="e"><failure message="Failed: DID NOT RAISE"/></testcase>
    <testcase classname="m" name="f"><error message="boom">
      <properties><property name="fidelity_failure" value="error TypeError"/></properties>
    </error></testcase>
    </testsuite>"""
    kinds = {r.id: r.failure for r in junit.parse_bytes(xml, "x.xml")}
    assert kinds == {
        "m::a": Failure(Kind.ASSERTION),
        "m::b": Failure(Kind.ERROR, ("NameError",)),
        "m::c": Failure(Kind.ERROR, ("ModuleNotFoundError",)),
        "m::d": Failure(Kind.EXCEPTION, ("Refused",)),
        "m::e": Failure(Kind.ASSERTION, ("Failed",)),
        "m::f": Failure(Kind.ERROR, ("TypeError",)),
    }


def test_declared_exceptions_match_along_the_mro() -> None:
    divided = failkinds.from_property("exception ZeroDivisionError ArithmeticError")
    assert failkinds.declared(divided, ["ArithmeticError"]).kind is Kind.DECLARED
    assert failkinds.declared(divided, ["builtins.ZeroDivisionError"]).kind is Kind.DECLARED
    assert failkinds.declared(divided, ["KeyError"]) == divided
    assert failkinds.declared(Failure(Kind.ASSERTION, ("AssertionError",)), ["AssertionError"]) == (
        Failure(Kind.ASSERTION, ("AssertionError",))
    )
    crash = failkinds.from_property("error TypeError Exception BaseException")
    assert failkinds.declared(crash, ["Exception"]).kind is Kind.DECLARED
    assert failkinds.declared(crash, ["BaseException"]).kind is Kind.DECLARED
    # another runner's report names only the most derived class
    bare = Failure(Kind.ERROR, ("TypeError",))
    assert failkinds.declared(bare, ["Exception"]).kind is Kind.DECLARED
    interrupted = Failure(Kind.EXCEPTION, ("KeyboardInterrupt",))
    assert failkinds.declared(interrupted, ["Exception"]) == interrupted
    assert failkinds.declared(interrupted, ["BaseException"]).kind is Kind.DECLARED
    assert failkinds.from_property("nonsense") == failkinds.UNKNOWN
    assert not failkinds.only_errors([])


def test_suggest_warns_when_the_edit_only_crashes(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("kinds-suggest")
    project(repo, header() + control("add-minus", fr("a + b", "a - b"), caught("test_add")), TESTS)
    argv = ["-q", "controls", "suggest", "--repo", str(repo.path), "--file", "calc/__init__.py"]
    code = main([*argv, "--find", "return a + b", "--replace", CRASH, "--id", "crash"])
    err = capsys.readouterr().err
    assert code == 0
    assert "but every one fails by crashing (error: ModuleNotFoundError 2)" in " ".join(err.split())


def test_every_controls_action_under_quiet_prints_records(
    make_repo: Callable[[str], Repo],
) -> None:
    """Issue 22: `-q` on each controls action, off a terminal, prints plain lines (no table
    folded to 80 columns), one record per line, the summary last."""
    import subprocess
    import sys

    repo = make_repo("kinds-quiet")
    long_id = "add-minus-" + "x" * 90
    old = project(
        repo,
        header() + control(long_id, fr("a + b", "a - b"), caught("test_add", "test_both")),
        TESTS,
    )
    repo.commit(
        {
            "calc/__init__.py": "def add(a, b):\n    return a + b\n\n\n"
            "def mul(a, b):\n    return a * b\n\n\ndef neg(a):\n    return -a\n"
        }
    )

    def quiet(*action: str) -> list[str]:
        argv = [sys.executable, "-m", "fidelity", "controls", *action, "-q"]
        done = subprocess.run([*argv, "--repo", str(repo.path)], capture_output=True, text=True)
        text = done.stdout + done.stderr
        assert not any(c in text for c in "─│┃━┏┗"), text
        return [line for line in text.splitlines() if line]

    listed = quiet("list")
    assert sum(line.startswith(long_id + "\t") for line in listed) == 1, listed
    assert quiet("validate")[-1].startswith("VALID: 1 controls")
    ran = quiet("run")
    assert sum(line.startswith(long_id + "\tcaught\t") for line in ran) == 1, ran
    assert ran[-1].startswith("HOLDS:")
    negative = quiet("negative", "--source-from", old, "--paths", "calc")
    assert negative[-1].startswith("SURVIVED"), negative
