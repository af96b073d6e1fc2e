"""A controls run writes nothing into fidelity's own installation.

pytest writes assertion-rewritten bytecode next to every `-p` plugin. When the plugins' folder
was fidelity's installed package, `fidelity demo` after `pip install .` left
`fidelity/plugins/__pycache__/*-pytest-*.pyc` in site-packages; `pip uninstall` kept them, and
the leftover folder made `fidelity` a namespace package that shadowed the editable install
`.ci/run` makes next (`cannot import name '__version__' from 'fidelity'`). Here fidelity runs
from a copy of its source standing in for site-packages, and that copy must not change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support import PY, Repo

ROOT = Path(__file__).resolve().parents[1]
CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TABLE = f"""[controls]
command = ["{PY}", "-m", "pytest", "-q"]

[[control]]
id = "add-minus"
why = "addition is tested"
edit = [{{ file = "calc/__init__.py", find = "a + b", replace = "a - b" }}]
caught_by = ["tests/test_calc.py::test_add"]
"""


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_a_controls_run_leaves_the_installed_package_as_it_was(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for package in ("fidelity", "checkers"):
        shutil.copytree(
            ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    before = files_under(site)
    repo = Repo(tmp_path / "repo")
    repo.commit(
        {
            "calc/__init__.py": CALC,
            "tests/test_calc.py": TESTS,
            "cases/controls.toml": TABLE,
            ".gitignore": "__pycache__/\n",
        }
    )
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "fidelity", "controls", "run", "--jobs", "1"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "caught" in done.stdout
    assert files_under(site) - before == set(), "the test processes wrote into the package"
