"""Mutation controls end to end: real repositories, real pytest runs, every verdict.

Each control runs the small project's tests in its own worktree; the user's checkout
(work tree, index, HEAD, worktree list) is compared byte for byte before and after.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from support import PY, Repo, alive, snapshot, wait_for

from fidelity.cli.main import main
from fidelity.controls import gate as controls
from fidelity.controls import render
from fidelity.controls.verdict import Report, RunStatus, Verdict, identical_subsets
from fidelity.errors import UsageError

CALC = """def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def neg(a):
    return -a
"""

TESTS = """from calc import add, mul, neg


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6


def test_both():
    assert add(1, 1) == mul(1, 2)


def test_neg():
    assert neg(2) == -2
"""

T = "tests/test_calc.py::"
NEG_PATCH = """--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -8,2 +8,2 @@
 def neg(a):
-    return -a
+    return a
"""


def header(import_check: str = '["calc"]') -> str:
    command = json.dumps([PY, "-m", "pytest", "-q"])
    return f"[controls]\ncommand = {command}\nimport_check = {import_check}\ntimeout_s = 60\n"


def control(cid: str, edit: str, expect: str, extra: str = "") -> str:
    return f'\n[[control]]\nid = "{cid}"\nwhy = "w"\nedit = [{edit}]\n{expect}\n{extra}'


def fr(find: str, replace: str, file: str = "calc/__init__.py") -> str:
    return f"{{ file = {json.dumps(file)}, find = {json.dumps(find)}, replace = {json.dumps(replace)} }}"


def caught(*tests: str, match: str = "exact") -> str:
    return f"caught_by = {json.dumps([T + t for t in tests])}\nmatch = {json.dumps(match)}"


RESIDUE = 'survives = true\nresidue = "neg of negatives untested"'
SLOW = "__import__('time').sleep(30) or a + b"
KILL = "__import__('os').kill(__import__('os').getpid(), 9)"

EVERY_VERDICT = header() + "".join(
    [
        control("add-minus", fr("a + b", "a - b"), caught("test_add", "test_both")),
        control("mul-plus", fr("a * b", "a + b"), caught("test_mul")),
        control("mul-plus-includes", fr("a * b", "a + b"), caught("test_mul", match="includes")),
        control("neg-abs", fr("return -a", "return -abs(a)"), caught("test_neg")),
        control("neg-abs-residue", fr("return -a", "return -abs(a)"), RESIDUE),
        control("neg-identity", fr("return -a", "return a"), RESIDUE),
        control(
            "neg-patch",
            f'{{ file = "calc/__init__.py", patch = {json.dumps(NEG_PATCH)} }}',
            caught("test_neg"),
        ),
        control("syntax-error", fr("def add(a, b):", "def add(a, b)"), caught("test_add")),
        control("slow", fr("a + b", SLOW), caught("test_add"), "timeout_s = 2"),
        control("killed", fr("return a * b", f"return {KILL}"), caught("test_mul")),
    ]
)

EXPECTED = {
    "add-minus": Verdict.CAUGHT,
    "mul-plus": Verdict.CAUGHT_DIFFERENTLY,
    "mul-plus-includes": Verdict.CAUGHT,
    "neg-abs": Verdict.SURVIVED,
    "neg-abs-residue": Verdict.RESIDUE_HELD,
    "neg-identity": Verdict.RESIDUE_CLOSED,
    "neg-patch": Verdict.CAUGHT,
    "syntax-error": Verdict.UNVIABLE,
    "slow": Verdict.TIMEOUT,
    "killed": Verdict.CRASHED,
}


def project(repo: Repo, table: str, tests: str = TESTS) -> str:
    return repo.commit(
        {
            "calc/__init__.py": CALC,
            "tests/test_calc.py": tests,
            "cases/controls.toml": table,
            ".gitignore": "__pycache__/\n",
        }
    )


def dirty(repo: Repo) -> None:
    """Uncommitted work the run must leave exactly as it was: staged, unstaged, untracked."""
    repo.write({"notes.txt": "staged\n"})
    repo.git("add", "notes.txt")
    repo.write({"notes.txt": "staged, then edited\n", "wip.py": "x = 1\n"})


@pytest.fixture(scope="module")
def every_verdict(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Report, dict, dict]:
    repo = Repo(tmp_path_factory.mktemp("every") / "repo")
    project(repo, EVERY_VERDICT)
    dirty(repo)
    before = snapshot(repo.path)
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    return repo, report, before, snapshot(repo.path)


def test_every_verdict_from_real_runs(every_verdict) -> None:
    _, report, _, _ = every_verdict
    assert report.baseline.status is RunStatus.PASSED
    assert {r.id: r.verdict for r in report.results} == EXPECTED
    assert report.noop is not None and report.noop.verdict is Verdict.RESIDUE_HELD
    assert report.exit_code() == 1


def test_full_failing_subsets_and_reasons(every_verdict) -> None:
    _, report, _, _ = every_verdict
    by_id = {r.id: r for r in report.results}
    assert by_id["mul-plus"].failing == (T + "test_both", T + "test_mul")
    assert by_id["mul-plus"].expected == (T + "test_mul",)
    assert "collection error" in by_id["syntax-error"].detail
    assert "SyntaxError" in by_id["syntax-error"].detail, "the tail of the error is shown"
    assert "signal 9" in by_id["killed"].detail
    for crashed in ("slow", "killed"):
        assert by_id[crashed].failing == (), "a crash or timeout is never scored as a catch"
    assert identical_subsets(report.results) == [
        ("mul-plus", "mul-plus-includes"),
        ("neg-identity", "neg-patch"),
    ], "controls that fail the same tests do not discriminate"


def test_caught_differently_names_what_differs_and_the_fix(every_verdict) -> None:
    """mul-plus expected test_mul; test_both failed as well: the words say which tests
    differ, in which direction, and which command writes the entry that expects them."""
    _, report, _, _ = every_verdict
    words = render.detail(next(r for r in report.results if r.id == "mul-plus"))
    assert "0 did not fail, 1 failed unexpectedly" in words
    assert f"failed unexpectedly:\n{T}test_both\n" in words
    assert "`fidelity controls suggest mul-plus`" in words


def test_quiet_prints_one_record_per_line(every_verdict) -> None:
    """Off a terminal the table folds ids into 5-character pieces; `-q` prints records."""
    _, report, _, _ = every_verdict
    out = StringIO()
    render.report(Console(file=out, width=80, color_system=None), report, quiet=True)
    lines = out.getvalue().splitlines()
    assert not any(c in out.getvalue() for c in "─│┃━")
    mine = [line.split("\t") for line in lines if line.startswith("mul-plus\t")]
    fix = render.suggest(next(r for r in report.results if r.id == "mul-plus"))
    assert mine == [
        [
            "mul-plus",
            "caught-differently",
            mine[0][2],
            f"{T}test_both, {T}test_mul",
            f"did not fail: -; failed unexpectedly: {T}test_both; fix: {fix}",
            "by assertion 2",
        ]
    ]
    # issue 38: records had 5 or 6 fields, so field 5 meant the detail on one line and how
    # the tests failed on the next; now every line has the six, empty where none applies
    records = [line.split("\t") for line in lines if "\t" in line]
    assert {len(fields) for fields in records} == {len(render.RECORD_FIELDS)}, records
    assert len(records) == len(report.results), "one line per control"
    survived = next(line for line in lines if line.startswith("neg-abs\t"))
    assert survived.split("\t")[1:2] == ["survived"] and "no test failed" in survived
    for r in report.results:  # every control on a line of its own, whole
        assert any(line.startswith(f"{r.id}\t{r.verdict}\t") for line in lines), r.id


def _long_ids(report: Report) -> Report:
    """The report with each failing id as long as a deep parametrized one."""
    deep = "tests/integration/test_a_rather_long_module_name.py::TestSomething::test_"
    results = tuple(
        replace(r, failing=tuple(t.replace(T, deep) for t in r.failing))
        if r.verdict is not Verdict.CAUGHT_DIFFERENTLY
        else r
        for r in report.results
    )
    return replace(report, results=results)


def test_every_failing_test_id_is_shown_whole_at_any_width(every_verdict) -> None:
    """At 80 columns the table folded toolz's test ids into 9-character slivers. At every
    width, each failing test id is shown whole on one line: in the table where it fits,
    else in a block per control (verdict line, then each failing test on its own line)."""
    _, plain, _, _ = every_verdict
    for report in (plain, _long_ids(plain)):
        failing = [t for r in report.results for t in r.failing]
        assert failing
        kinds = set()
        for width in range(50, 260, 15):
            out = StringIO()
            render.report(Console(file=out, width=width, color_system=None), report)
            lines = out.getvalue().splitlines()
            table = any(c in out.getvalue() for c in "─│┃━")
            kinds.add(table)
            assert table is render.fits(report, width)
            for t in failing:
                assert any(t in line for line in lines), (width, t, out.getvalue())
            if not table:
                heads = [line for line in lines if line.startswith("mul-plus  ")]
                assert heads and heads[0].startswith("mul-plus  caught-differently (assertion")
        assert kinds == {True, False}, "both layouts were seen"


def test_checkout_untouched_after_the_run(every_verdict) -> None:
    repo, _, before, after = every_verdict
    assert after == before
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_unsound_harness_judges_nothing(make_repo: Callable[[str], Repo]) -> None:
    repo = make_repo("unsound")
    broken = TESTS.replace("== 5", "== 6")
    project(repo, header() + control("add-minus", fr("a + b", "a - b"), caught("test_add")), broken)
    dirty(repo)
    before = snapshot(repo.path)
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    assert report.exit_code() == 3
    assert report.results == () and report.noop is None
    assert report.baseline.failing == frozenset({T + "test_add"})
    assert snapshot(repo.path) == before, "also after a failure"


def test_leaking_harness_is_untrusted(make_repo: Callable[[str], Repo], tmp_path: Path) -> None:
    """A control that leaves state outside its tree makes the no-op (run last) fail: exit 3."""
    repo = make_repo("leak")
    flag = tmp_path / "poisoned"
    tests = (
        TESTS
        + f"\n\ndef test_clean():\n    assert not __import__('os').path.exists({str(flag)!r})\n"
    )
    poison = f"open({str(flag)!r}, 'w').close() or a + b"
    project(repo, header() + control("poison", fr("a + b", poison), caught("test_clean")), tests)
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert [r.verdict for r in report.results] == [Verdict.CAUGHT]
    assert report.noop is not None and report.noop.verdict is Verdict.RESIDUE_CLOSED
    assert report.exit_code() == 3


def test_with_uncommitted_runs_the_work_tree_and_keeps_the_index(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("wip")
    table = header() + control(
        "neg-abs", fr("return -a", "return -abs(a)"), caught("test_neg_negative")
    )
    project(repo, table)
    # the test that catches neg-abs exists only in the work tree, not committed, not staged
    repo.write(
        {"tests/test_calc.py": TESTS + "\n\ndef test_neg_negative():\n    assert neg(-2) == 2\n"}
    )
    repo.write({"notes.txt": "staged\n"})
    repo.git("add", "notes.txt")
    before = snapshot(repo.path)
    with pytest.raises(
        UsageError, match="caught_by names no collected test: tests/test_calc.py::test_neg_negative"
    ):
        controls.run(repo.path, controls.load(repo.path), jobs=2)  # that test is not at HEAD
    wip = controls.run(repo.path, controls.load(repo.path), jobs=2, with_uncommitted=True)
    assert [r.verdict for r in wip.results] == [Verdict.CAUGHT]
    assert wip.rev == "HEAD+uncommitted"
    assert snapshot(repo.path) == before


def test_only_and_in_diff_select_controls(make_repo: Callable[[str], Repo]) -> None:
    repo = make_repo("select")
    table = header() + control("add-minus", fr("a + b", "a - b"), caught("test_add", "test_both"))
    table += control("other-file", fr("x = 1", "x = 2", "other.py"), RESIDUE)
    base = project(repo, table)
    repo.commit({"other.py": "x = 1\n"})
    assert [
        c.id
        for c in controls.select(
            repo.path, controls.load(repo.path), repo.git("rev-parse", "HEAD"), (), base
        )
    ] == ["other-file"]
    report = controls.run(repo.path, controls.load(repo.path), only=["add-minus"], jobs=1)
    assert [r.id for r in report.results] == ["add-minus"] and report.exit_code() == 0
    none = controls.run(repo.path, controls.load(repo.path), in_diff="HEAD", jobs=1)
    assert none.results == () and none.exit_code() == 0, "a change with nothing to judge skips"
    assert "nothing to judge, so nothing ran" in none.skipped


def test_cli_run_writes_every_format(
    make_repo: Callable[[str], Repo], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("cli")
    project(
        repo,
        header()
        + control("add-minus", fr("a + b", "a - b"), caught("test_add", "test_both"))
        + control("neg-abs", fr("return -a", "return -abs(a)"), caught("test_neg")),
    )
    out = tmp_path / "out"
    code = main(
        [
            "--quiet",
            "controls",
            "run",
            "--repo",
            str(repo.path),
            "--jobs",
            "2",
            "--json",
            str(out / "c.json"),
            "--markdown",
            str(out / "c.md"),
            "--junit",
            str(out / "c.xml"),
        ]
    )
    text = capsys.readouterr().out
    assert code == 1
    assert (
        "MISSED: 1 of 2 controls did not meet their expectation (1 survived); 1 did (1 caught) "
        "(exit 1)" in text
    ), "the summary adds up: missed and met are counted apart"
    data = json.loads((out / "c.json").read_text())
    assert data["exit_code"] == 1 and [c["verdict"] for c in data["controls"]] == [
        "caught",
        "survived",
    ]
    assert "| neg-abs | survived |" in (out / "c.md").read_text()
    xml = (out / "c.xml").read_text()
    assert 'tests="2" failures="1" errors="0"' in xml


def test_cli_unknown_only_and_bad_table_are_usage_errors(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("usage")
    project(repo, header() + control("a", fr("a + b", "a - b"), caught("test_add")))
    assert main(["controls", "run", "--repo", str(repo.path), "--only", "zz"]) == 2
    assert "unknown control id zz; known: a" in capsys.readouterr().err
    repo.commit(
        {"cases/controls.toml": header() + control("a", fr("x", "y"), caught("t"), "colour = 1")}
    )
    assert main(["controls", "list", "--repo", str(repo.path)]) == 2
    err = capsys.readouterr().err.replace("\n", "")  # the error console wraps at 80 columns
    assert (
        "controls.toml" in err and "control 'a' at $.control[0].colour: unknown key 'colour'" in err
    )


def test_cli_list(make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo("list")
    project(repo, header() + control("add-minus", fr("a + b", "a - b"), caught("test_add")))
    assert main(["--quiet", "controls", "list", "--repo", str(repo.path)]) == 0
    out = capsys.readouterr().out
    expect = f"exact: {T}test_add"
    assert f"add-minus\tcalc/__init__.py\t{expect}\tw" in out.splitlines(), "one line under -q"


def test_ctrl_c_kills_the_control_and_leaves_the_checkout(
    make_repo: Callable[[str], Repo], tmp_path: Path
) -> None:

    repo = make_repo("ctrlc")
    mark = tmp_path / "pid"
    sleeper = f"open({str(mark)!r}, 'w').write(str(__import__('os').getpid())) or __import__('time').sleep(120) or a + b"
    project(repo, header() + control("sleepy", fr("a + b", sleeper), caught("test_add")))
    dirty(repo)
    before = snapshot(repo.path)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fidelity",
            "--quiet",
            "controls",
            "run",
            "--repo",
            str(repo.path),
            "--jobs",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(mark)
        assert repo.git("worktree", "list", "--porcelain").count("worktree ") >= 2
        child.send_signal(2)
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 130, err
    test_pid = int(mark.read_text())
    deadline = time.monotonic() + 10  # a warm run's child is reaped by init once killed
    while alive(test_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(test_pid), "the running test command was not killed"
    assert snapshot(repo.path) == before


def test_only_a_control_with_its_own_command_runs_that_command_alone(
    make_repo: Callable[[str], Repo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 item 4: `--only ID` ran the table's whole command on the unmodified tree
    first (160-220 s of fidelity's own suite) although ID names a narrower command. Now the
    unmodified tree and the no-op control run under the commands the chosen controls use."""
    marks = tmp_path / "marks"
    monkeypatch.setenv("MARKS", str(marks))
    narrow = json.dumps([PY, "-m", "pytest", "-q", "tests/test_calc.py"])
    table = header() + control(
        "add-minus",
        fr("a + b", "a - b"),
        caught("test_add", "test_both"),
        f"command = {narrow}",
    )
    project(repo := make_repo("only-narrow"), table)
    repo.commit(
        {
            "tests/test_whole.py": "import os\n\n\ndef test_whole_suite():\n"
            "    open(os.environ['MARKS'], 'a').write('ran\\n')\n"
        }
    )
    report = controls.run(repo.path, controls.load(repo.path), only=["add-minus"], jobs=1)
    assert report.exit_code() == 0, report
    assert not marks.exists(), "the table's command ran the whole suite"
    assert report.noop is not None and report.noop.verdict is Verdict.RESIDUE_HELD
    assert all(t.startswith("tests/test_calc.py::") for t in report.baseline.tests)


def _hostile_ids(report: Report) -> Report:
    """Each failing id with a line break and a CI command after it, as a parametrized test
    id may be (pytest's `disable_test_id_escaping...` option leaves it unescaped)."""
    bad = "[nl\n::add-mask::tid\r::stop-commands::x\x1b[2J\u202e]"
    results = tuple(replace(r, failing=tuple(t + bad for t in r.failing)) for r in report.results)
    return replace(report, results=results)


@pytest.mark.parametrize(("width", "quiet"), [(60, False), (250, False), (80, True)])
def test_a_test_id_never_starts_a_line_of_its_own_or_a_terminal_command(
    every_verdict, width: int, quiet: bool
) -> None:
    """A test id holding a line break put `::add-mask::...` at the start of a line of
    `controls run`'s output: a workflow command of the test file's making."""
    _, plain, _, _ = every_verdict
    out = StringIO()
    render.report(
        Console(file=out, width=width, color_system=None), _hostile_ids(plain), quiet=quiet
    )
    text = out.getvalue()
    assert not any(c in text for c in "\r\x1b\u202e"), repr(text)
    for line in text.splitlines():
        assert not line.lstrip(" │┃").startswith("::"), line
