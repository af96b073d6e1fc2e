"""The git processes `controls run` starts per control: a status that proves the lane's
worktree clean, and a reset or clean only when a run left something behind (issue 38:
every control paid for `status` twice, `reset` and `clean`, even on a clean tree). Counted
through a `git` first on PATH that logs each call (as in test_run_footprint)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support import Repo
from test_controls import caught, control, fr, header, project

from fidelity.controls import gate as controls

TABLE = header() + "".join(
    [
        control("add-minus", fr("return a + b", "return a - b"), caught("test_add", "test_both")),
        control("mul-plus", fr("return a * b", "return a + b"), caught("test_mul", "test_both")),
        control("neg-identity", fr("return -a", "return a"), caught("test_neg")),
    ]
)
WRITES = "\n\ndef test_writes_a_file():\n    open('left-behind.txt', 'w').write('x')\n"


def cleanups(log: Path) -> list[str]:
    """The lane's status, reset and clean calls, each from its git subcommand on."""
    calls = [c.partition("--no-replace-objects ")[2] for c in log.read_text().splitlines()]
    return [
        c
        for c in calls
        if c.startswith(("status", "reset", "clean"))
        and "--ignored" in c
        or c.startswith(("reset", "clean"))
    ]


def test_a_clean_run_costs_one_status_per_control(
    make_repo: Callable[[str], Repo], git_log: Path
) -> None:
    repo = make_repo("footprint")
    project(repo, TABLE)
    git_log.write_text("")
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, report
    seen = cleanups(git_log)
    assert not [c for c in seen if c.startswith(("reset", "clean"))], seen
    # one status after the unmodified run, each control, and the no-op control
    assert len(seen) == 5, seen


def test_a_run_that_leaves_a_file_is_cleaned(
    make_repo: Callable[[str], Repo], git_log: Path
) -> None:
    from test_controls import TESTS

    repo = make_repo("footprint-writes")
    project(repo, TABLE, TESTS + WRITES)
    git_log.write_text("")
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, report
    seen = cleanups(git_log)
    # the unmodified tree runs every test, so test_writes_a_file; each control runs only
    # the tests that ran its edit, which write nothing, and so does the no-op after a
    # fresh trace (the tests the controls run)
    assert len([c for c in seen if c.startswith("clean")]) == 1, seen
    assert not [c for c in seen if c.startswith("reset")], "no tracked file changed"
    assert len(seen) == 6, "a status per run, a clean after the one that wrote: no 2nd status"


UNCONFIGURE = (
    "import os\n\n\ndef pytest_unconfigure(config):\n"
    "    with open(os.environ['MARKS'], 'a') as f:\n"
    "        f.write(os.environ.get('FIDELITY_SELECT', 'unmodified') + '\\n')\n"
)


def test_a_warm_control_reports_briefly_and_skips_the_session_end(
    make_repo: Callable[[str], Repo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: pytest spent about a seventh of a control's run formatting long tracebacks
    and a tenth in its forced garbage collection at session end. A warm control's log names
    each failure in one line, and its forked child leaves once the reports are written (a
    conftest's unconfigure hook no longer runs there); the verdicts are the same."""
    marks = tmp_path / "marks"
    monkeypatch.setenv("MARKS", str(marks))
    repo = make_repo("footprint-brief")
    project(repo, TABLE)
    repo.commit({"tests/conftest.py": UNCONFIGURE})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, report
    assert [r.how for r in report.results] == ["assertion 2", "assertion 2", "assertion 1"]
    (runs,) = (repo.path / ".fidelity" / "controls").iterdir()
    log = (runs / "add-minus.log").read_text()
    assert "test_calc.py:5: assert -1 == 5" in log and "def test_add" not in log, log
    assert "2 failed" in log, "the summary is still written"
    # the traced run of the unmodified tree is a collected server's child too
    assert not marks.exists(), marks.read_text()
    again = controls.run(repo.path, controls.load(repo.path), jobs=1, swap=False, fresh=True)
    assert again.exit_code() == 0, again
    assert marks.read_text().splitlines() == ["unmodified"], "only the cold run's hook ran"
