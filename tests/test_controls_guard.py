"""The editable-install trap under mutation controls, built for real with pip.

A venv holds an editable install of the same package from another checkout. Without the
guard the tests import that checkout, so a control's edit to the tree under test changes
nothing and the control wrongly survives; with the guard the run fails loudly (exit 3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest
from support import Repo, editable_venv, nested_venv

from fidelity.controls import gate as controls
from fidelity.controls.verdict import Verdict
from fidelity.plugins import fidelity_pytest_guard as pytest_guard

PKG = "def value():\n    return 1\n"
TEST = "from pkgsrc import value\n\n\ndef test_value():\n    assert value() == 1\n"


def table(python: Path, import_check: list[str]) -> str:
    command = json.dumps([str(python), "-m", "pytest", "-q"])
    return f"""[controls]
command = {command}
import_check = {json.dumps(import_check)}

[[control]]
id = "value-two"
why = "value must be 1"
edit = [{{ file = "src/pkgsrc/__init__.py", find = "return 1", replace = "return 2" }}]
caught_by = ["tests/test_value.py::test_value"]
"""


RESIDUE_CONTROL = """
[[control]]
id = "value-three"
why = "a residue that only another checkout's code lets hold"
edit = [{ file = "src/pkgsrc/__init__.py", find = "return 1", replace = "return 3" }]
survives = true
residue = "stale: the test catches this"
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = editable_venv(tmp_path_factory.mktemp("trap"), "pkgsrc", "src")
    other = python.parent.parent.parent / "other-pkgsrc" / "src" / "pkgsrc" / "__init__.py"
    other.write_text(PKG)  # the other checkout passes the same tests
    return python


def user_repo(make_repo: Callable[[str], Repo], python: Path, guard: list[str]) -> Repo:
    repo = make_repo("user")
    repo.commit(
        {
            "src/pkgsrc/__init__.py": PKG,
            "tests/test_value.py": TEST,
            "cases/controls.toml": table(python, guard),
        }
    )
    return repo


def test_without_import_check_the_guard_still_covers_the_tree(venv: Path, make_repo) -> None:
    """Issue 13 defect 1: with no import_check every control used to "survive" against the
    other checkout's code, a residue held, and the run said HOLDS (exit 0). The guard now
    covers the tree's own packages, found from its files, so the run is refused instead."""
    repo = user_repo(make_repo, venv, [])
    repo.commit(
        {
            "cases/controls.toml": table(venv, []).replace("import_check = []\n", "")
            + RESIDUE_CONTROL
        }
    )
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    assert report.guard == ("pkgsrc",), "found from src/pkgsrc/__init__.py"
    assert report.exit_code() == 3 and report.results == ()
    assert "fidelity import guard: pkgsrc" in report.baseline.detail
    assert "other-pkgsrc" in report.baseline.detail, "it names the other checkout"


def test_with_the_guard_the_run_fails_loudly(venv: Path, make_repo) -> None:
    repo = user_repo(make_repo, venv, ["pkgsrc"])
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    assert report.exit_code() == 3
    assert report.results == ()
    assert "fidelity import guard: pkgsrc resolves to" in report.baseline.detail
    assert "other-pkgsrc" in report.baseline.detail


def test_guarded_and_importable_the_control_is_caught(venv: Path, make_repo) -> None:
    repo = user_repo(make_repo, venv, ["pkgsrc"])
    repo.commit({"pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n'})
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    assert [r.verdict for r in report.results] == [Verdict.CAUGHT]
    assert report.exit_code() == 0


class ElsewhereFinder:
    """A meta-path finder serving `guarded_pkg` from outside the root, as an editable one does."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name != "guarded_pkg":
            return None
        spec = ModuleSpec(name, None, origin="/elsewhere/guarded_pkg/__init__.py")
        spec.has_location = True
        return spec


def test_shadowing_finders_are_removed(tmp_path: Path) -> None:
    sys.meta_path.insert(0, ElsewhereFinder)
    try:
        removed = pytest_guard.remove_shadowing_finders(["guarded_pkg", "json"], str(tmp_path))
        assert removed == ["ElsewhereFinder (guarded_pkg)"]
        assert ElsewhereFinder not in sys.meta_path
    finally:
        if ElsewhereFinder in sys.meta_path:
            sys.meta_path.remove(ElsewhereFinder)
    found = pytest_guard.problems(["json"], str(tmp_path), final=True)
    assert found and "outside the tree under test" in found[0]


@pytest.fixture(scope="module")
def pytest_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An interpreter that has pytest but not fidelity, as a user's own venv would."""
    python = nested_venv(tmp_path_factory.mktemp("pytest-only") / "venv", process_pth=False)
    probe = subprocess.run([str(python), "-c", "import fidelity"], cwd=python.parent)
    assert probe.returncode != 0, "precondition: fidelity must not import there (editable install)"
    return python


def test_the_guard_loads_where_fidelity_is_not_installed(pytest_only: Path, make_repo) -> None:
    repo = user_repo(make_repo, pytest_only, ["no_such_module_zz"])
    repo.commit({"pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n'})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    # the guard ran in that interpreter: it is the one that says the module does not resolve
    assert "fidelity import guard: no_such_module_zz does not resolve" in report.baseline.detail
    assert report.exit_code() == 3


def test_guarded_control_is_caught_in_an_interpreter_without_fidelity(
    pytest_only: Path, make_repo
) -> None:
    repo = user_repo(make_repo, pytest_only, ["pkgsrc"])
    repo.commit({"pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n'})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert [r.verdict for r in report.results] == [Verdict.CAUGHT]


def test_an_interpreter_without_pytest_is_named_in_one_line_with_its_log(
    tmp_path: Path, make_repo
) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    repo = user_repo(make_repo, bare / "bin" / "python", ["pkgsrc"])
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    detail = report.baseline.detail
    assert f"pytest is not installed for {bare / 'bin' / 'python'}" in detail
    assert "\n" not in detail and " | " not in detail
    log = Path(detail.rsplit("log: ", 1)[1].split(" ")[0])
    assert log.is_file() and "No module named pytest" in log.read_text()
    assert report.exit_code() == 3


def test_a_command_that_cannot_start_says_so(tmp_path: Path, make_repo) -> None:
    repo = user_repo(make_repo, tmp_path / "no-such-python", [])
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert "could not be started" in report.baseline.detail
    assert "{python}" in report.baseline.detail
    assert report.exit_code() == 3


def test_many_modules_from_elsewhere_give_a_short_first_line(tmp_path: Path) -> None:
    """Issue 22: a package whose 30 submodules came from another checkout made a 2.8 kB
    single line. The guard now says the first problem, how many more, and what to do on one
    line, and lists the rest below it; the controls report shows the first line."""
    from fidelity import proc
    from fidelity.controls import runner

    elsewhere, tree = tmp_path / "elsewhere", tmp_path / "tree"
    files = {"pkgx/__init__.py": ""} | {f"pkgx/m{i}.py": "" for i in range(30)}
    for name, text in files.items():
        (elsewhere / name).parent.mkdir(parents=True, exist_ok=True)
        (elsewhere / name).write_text(text)
    tree.mkdir()
    imports = "".join(f"import pkgx.m{i}\n" for i in range(30))
    (tree / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(elsewhere)!r})\n")
    (tree / "test_x.py").write_text(f"{imports}\n\ndef test_x():\n    pass\n")
    env = {
        **os.environ,
        "PYTHONPATH": str(runner.PLUGIN_SOURCE),
        "FIDELITY_GUARD_ROOT": str(tree),
        "FIDELITY_GUARD_TREE": "pkgx",
    }
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*argv, "-p", "fidelity_pytest_guard"], cwd=tree, env=env, capture_output=True, text=True
    )
    output = done.stdout + done.stderr
    assert done.returncode == runner.GUARD_EXIT, output
    first = next(line for line in output.splitlines() if runner.GUARD_MARK in line)
    assert len(first) < 500, first
    assert "(and 30 more, listed below)" in first and "pythonpath" in first
    assert output.count(f"outside the tree under test {tree}") >= 21, "one line per problem"
    assert "  ... 11 more" in output
    detail = runner.explain(proc.ProcStatus.OK, "", argv, output, None)
    assert detail.startswith("fidelity import guard: pkgx") and len(detail) < 600, detail
