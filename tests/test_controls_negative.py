"""Negative control of a fix: the new tests, run on the pre-fix source, must fail there."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from support import PY, Repo, snapshot

from fidelity.cli.main import main
from fidelity.controls import gate as controls
from fidelity.controls import negative as controls_negative
from fidelity.controls.verdict import Verdict

TABLE = f"""[controls]
command = {json.dumps([PY, "-m", "pytest", "-q"])}
import_check = ["calc"]

[[control]]
id = "placeholder"
why = "the table needs one control; negative uses its command"
edit = [{{ file = "calc/__init__.py", find = "def neg", replace = "def neg" }}]
survives = true
residue = "none"
"""
BUGGY = "def neg(a):\n    return a\n"
FIXED = "def neg(a):\n    return -a\n"
OLD_TESTS = "from calc import neg\n\n\ndef test_zero():\n    assert neg(0) == 0\n"
NEW_TEST = "\n\ndef test_negates():\n    assert neg(2) == -2\n"
WEAK_TEST = "\n\ndef test_still_zero():\n    assert neg(0) == 0\n"


def history(repo: Repo, new_tests: str) -> tuple[str, str]:
    old = repo.commit(
        {
            "calc/__init__.py": BUGGY,
            "tests/test_calc.py": OLD_TESTS,
            "cases/controls.toml": TABLE,
            ".gitignore": "__pycache__/\n",
        }
    )
    new = repo.commit({"calc/__init__.py": FIXED, "tests/test_calc.py": OLD_TESTS + new_tests})
    return old, new


def test_the_fixs_test_fails_on_the_pre_fix_source(make_repo: Callable[[str], Repo]) -> None:
    repo = make_repo("fix")
    old, new = history(repo, NEW_TEST)
    before = snapshot(repo.path)
    report = controls_negative.run(repo.path, controls.load(repo.path), old, new, ["calc/"])
    assert report.verdict() is Verdict.CAUGHT
    assert report.mixed.failing == frozenset({"tests/test_calc.py::test_negates"})
    assert report.touched == frozenset({"tests/test_calc.py"})
    assert report.exit_code() == 0
    assert snapshot(repo.path) == before


def test_a_test_that_passes_on_the_old_code_does_not_test_the_fix(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo("weak")
    old, _ = history(repo, WEAK_TEST)
    code = main(
        [
            "--quiet",
            "controls",
            "negative",
            "--repo",
            str(repo.path),
            "--source-from",
            old,
            "--paths",
            "calc",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "SURVIVED: every test passes on the pre-fix source" in out


def test_a_fix_test_that_only_crashes_on_the_old_code_is_caught_by_error(
    make_repo: Callable[[str], Repo], capsys: pytest.CaptureFixture[str]
) -> None:
    """The fix added an argument; its test calls it, so on the old code it fails with a
    TypeError whatever the old code computes: that is no evidence the test checks the fix."""
    repo = make_repo("api")
    old = repo.commit(
        {
            "calc/__init__.py": FIXED,
            "tests/test_calc.py": OLD_TESTS,
            "cases/controls.toml": TABLE,
            ".gitignore": "__pycache__/\n",
        }
    )
    repo.commit(
        {
            "calc/__init__.py": "def neg(a, twice=False):\n    return -2 * a if twice else -a\n",
            "tests/test_calc.py": OLD_TESTS + "\n\ndef test_twice():\n    neg(2, twice=True)\n",
        }
    )
    argv = ["-q", "controls", "negative", "--repo", str(repo.path), "--source-from", old]
    code = main([*argv, "--paths", "calc"])
    out = capsys.readouterr().out
    assert code == 1
    assert "CAUGHT BY ERROR: the 1 test(s) of the change fail on the pre-fix source only by " in out
    assert "(error: TypeError 1)" in out
