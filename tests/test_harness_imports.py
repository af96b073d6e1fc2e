"""A `{harness}` driver imports its side's own code, as docs/case-matrix.md shows it.

`python {harness}/cases/drive.py` puts the script's folder first on sys.path, not the
working directory: without the side's worktree on PYTHONPATH the driver cannot import the
project at all (both sides fail with ModuleNotFoundError, after `import_check` passed on
the worktree). A case that names `{harness}` therefore runs with its side's worktree first
on PYTHONPATH, unless the table sets PYTHONPATH itself. Red before the fix: every side
`failed`, ModuleNotFoundError in the case's stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import PY, Repo

from fidelity.matrix import gate
from fidelity.matrix.cases import table
from fidelity.matrix.run import runner
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.outcome import Outcome

# the driver as the docs show it: no sys.path edit of its own
DRIVE = """
import pathlib, sys
import tinymod
pathlib.Path(sys.argv[sys.argv.index("--out") + 1], "value.txt").write_text(
    f"{tinymod.VALUE} {tinymod.__file__}\\n"
)
"""
TABLE = f"""[matrix]
name = "harness-driver"
import_check = ["tinymod"]

[[case]]
id = "dp2-online"
argv = [{json.dumps(PY)}, "{{harness}}/cases/drive.py", "--lanes", "2", "--out", "{{out}}"]
outputs = ["value.txt"]
"""


SHELL = """[matrix]
name = "shell"

[[case]]
id = "s"
shell = true
argv = "python {harness}/cases/drive.py --out {out}"
outputs = ["value.txt"]
"""


def history(repo: Repo) -> tuple[str, str]:
    """The project (a package at the top) with its harness; then a change of its value."""
    files = {"tinymod/__init__.py": "VALUE = 1\n", "cases/drive.py": DRIVE}
    base = repo.commit({**files, "cases/matrix.toml": TABLE, ".gitignore": "__pycache__/\n"})
    return base, repo.commit({"tinymod/__init__.py": "VALUE = 2\n"}, "change the value")


def value(outcome: Outcome, side: str) -> tuple[str, str]:
    text = (outcome.run_dir / side / "cases" / "dp2-online" / "out" / "value.txt").read_text()
    number, where = text.split()
    return number, where


def test_a_harness_driver_imports_each_sides_own_code(make_repo) -> None:
    repo: Repo = make_repo("h")
    base, cand = history(repo)
    outcome = gate.run(repo.path, RunRequest(base, cand))
    assert [r.verdict.value for r in outcome.comparison.cases] == ["moved"], outcome.findings
    assert outcome.exit_code == 1
    for side, number in (("baseline", "1"), ("candidate", "2")):
        got, where = value(outcome, side)
        assert got == number  # the side's own code, not the harness's (which holds 2)
        worktree = outcome.manifest["sides"][side]["worktree"]
        assert Path(where).is_relative_to(worktree), (where, worktree)


def test_the_documented_command_line_holds_through_the_cli(make_repo) -> None:
    """`fidelity run` as a user types it: exit 1 (moved), no ModuleNotFoundError."""
    repo: Repo = make_repo("h")
    base, cand = history(repo)
    done = subprocess.run(
        [sys.executable, "-m", "fidelity", "-q", "run", "--baseline", base, "--candidate", cand],
        cwd=repo.path,
        env=repo.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ModuleNotFoundError" not in done.stdout + done.stderr


def case_of(text: str) -> tuple[table.Matrix, table.Case]:
    matrix = table.parse(text.encode(), "t.toml")
    return matrix, matrix.cases[0]


def test_the_worktree_comes_first_and_an_inherited_path_stays(monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    matrix, case = case_of(TABLE)
    places = {"worktree": "/wt", "harness": "/h", "out": "/o", "cache": "/c"}
    env = runner.case_env(matrix, case, places)
    assert env["PYTHONPATH"] == os.pathsep.join(["/wt", "/elsewhere"])


def test_a_table_that_sets_pythonpath_keeps_its_own(monkeypatch) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    places = {"worktree": "/wt", "harness": "/h", "out": "/o", "cache": "/c"}
    own = TABLE.replace('import_check = ["tinymod"]', 'env = { PYTHONPATH = "{worktree}/src" }')
    matrix, case = case_of(own)
    assert runner.case_env(matrix, case, places)["PYTHONPATH"] == "/wt/src"
    in_case = TABLE + 'env = { PYTHONPATH = "{worktree}/lib" }\n'
    matrix, case = case_of(in_case)
    assert runner.case_env(matrix, case, places)["PYTHONPATH"] == "/wt/lib"


def test_a_case_that_names_no_harness_is_left_as_it_was(monkeypatch) -> None:
    """Tables without `{harness}` run exactly as before: nothing is added."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    matrix, case = case_of(TABLE.replace("{harness}/", ""))
    places = {"worktree": "/wt", "out": "/o", "cache": "/c"}
    assert "PYTHONPATH" not in runner.case_env(matrix, case, places)
    matrix, case = case_of(SHELL)
    assert runner.case_env(matrix, case, {**places, "harness": "/h"})["PYTHONPATH"] == "/wt"
