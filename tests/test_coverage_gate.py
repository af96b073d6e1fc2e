"""The coverage gate: .ci/run measures the product's branch coverage under the README's own
test command (no second run of the suite) and fails below the floor in pyproject.toml.

The mechanism is a start-up hook .ci/run installs into its own venv (.ci/coverage_hook.py):
with FIDELITY_CI_COVERAGE set, coverage starts in a Python process when it first imports the
product. Here it runs on a copy of the source, loaded through sitecustomize instead of a .pth
file: a process that imports no fidelity starts one that does, only the second is measured,
the data is combined and reported with the project's own [tool.coverage] settings, and a
planted function no process reaches takes the total under a floor it met before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from fnmatch import fnmatch
from pathlib import Path

from fidelity.controls import runner

ROOT = Path(__file__).resolve().parents[1]
README_COMMAND = "python -m pip install -e '.[test]' && python -m pytest"
PARENT = "import subprocess, sys; subprocess.run([sys.executable, '-m', 'fidelity', '--version'])"


def ci_lines() -> list[str]:
    return (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_ci_measures_the_readme_command_and_reports_after_it() -> None:
    lines = ci_lines()
    test = lines.index(README_COMMAND)
    before = lines[test - 5 : test]
    assert before[1:3] == [
        'cp .ci/coverage_hook.py "$site/fidelity_ci_coverage.py"',
        'echo "import fidelity_ci_coverage" >"$site/fidelity_ci_coverage.pth"',
    ]
    assert 'export FIDELITY_CI_COVERAGE="$PWD/pyproject.toml"' in before[-1]
    assert 'COVERAGE_FILE="$scratch/' in before[-1], "absolute: no data in scratch repos"
    assert lines[test + 1 : test + 4] == [
        "unset FIDELITY_CI_COVERAGE",
        "coverage combine --quiet",
        "coverage report  # fails below the floor, [tool.coverage.report] fail_under",
    ]
    assert not any("--fail-under" in line for line in lines), "one floor, in pyproject.toml"


def test_the_floor_is_set_and_branches_count() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    config = project["tool"]
    run, report = config["coverage"]["run"], config["coverage"]["report"]
    assert run["branch"] is True and run["parallel"] is True
    assert run["source_pkgs"][:2] == ["fidelity", "checkers"]
    assert report["include"] == ["fidelity/*", "checkers/*"], "the checkout's files only"
    assert report["fail_under"] >= 93, "the floor is raised, never lowered"
    assert report["precision"] == 2, "compared as shown: at 0, 92.5% rounds up to 93 and passes"
    canonical, copies = config["coverage"]["paths"]["plugins"]
    folder = Path(tempfile.mkdtemp(prefix=runner.PLUGIN_PREFIX))  # as plugin_dir names one
    folder.rmdir()
    assert canonical == "fidelity/plugins/" and fnmatch(f"{folder}/", copies), copies
    extra = project["project"]["optional-dependencies"]["test"]
    assert any(d.startswith("coverage[toml]>=") for d in extra), "CI's venv gets coverage"


def copy_source(tmp_path: Path) -> Path:
    """fidelity and checkers copied beside a pyproject.toml with the project's settings, and
    the hook where every Python process with this PYTHONPATH loads it at start-up."""
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("fidelity", "checkers"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    hook = tmp_path / "hook"
    hook.mkdir()
    shutil.copy(ROOT / ".ci" / "coverage_hook.py", hook / "fidelity_ci_coverage.py")
    (hook / "sitecustomize.py").write_text("import fidelity_ci_coverage  # noqa: F401\n")
    return tmp_path


def run(tmp: Path, *argv: str, measure: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    env.pop("FIDELITY_CI_COVERAGE", None)
    env |= {"PYTHONPATH": f"{tmp / 'hook'}:{tmp}", "COVERAGE_FILE": str(tmp / "data" / "cov")}
    if measure:
        env["FIDELITY_CI_COVERAGE"] = str(tmp / "pyproject.toml")
    return subprocess.run(
        [sys.executable, *argv], cwd=tmp, env=env, capture_output=True, text=True, timeout=120
    )


def total(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run(tmp, "-m", "coverage", "report", "--format=total", "--precision=2", *extra)


def test_the_hook_measures_started_processes_and_the_floor_goes_red(tmp_path: Path) -> None:
    tmp = copy_source(tmp_path)
    (tmp / "data").mkdir()
    assert run(tmp, "-c", PARENT).returncode == 0
    assert list((tmp / "data").iterdir()) == [], "without the variable nothing is measured"
    done = run(tmp, "-c", PARENT, measure=True)
    assert done.returncode == 0 and done.stdout.startswith("fidelity "), done.stderr
    assert done.stderr == "", "a measured process prints nothing of coverage's"
    data = list((tmp / "data").iterdir())
    assert len(data) == 1, "the process that imported fidelity, not its parent"
    assert run(tmp, "-c", "pass", measure=True).returncode == 0
    assert list((tmp / "data").iterdir()) == data, "nor one that imports none of it"
    assert run(tmp, "-m", "coverage", "combine", "--quiet").returncode == 0
    measured = total(tmp, "--fail-under=0")
    assert measured.returncode == 0, measured.stderr
    reached = float(measured.stdout)
    assert 0 < reached < 20, "--version reaches a little of the product"
    below = total(tmp)  # the project's floor
    assert below.returncode == 2 and "is less than fail-under" in below.stdout + below.stderr
    floor = f"--fail-under={reached}"  # met exactly
    assert total(tmp, floor).returncode == 0
    text = tmp / "fidelity" / "text.py"
    planted = (
        "\n\ndef planted(x: int) -> int:\n"
        + "".join(f"    x += {i}\n" for i in range(200))
        + "    return x if x > 0 else -x\n"
    )
    text.write_text(text.read_text() + planted)
    red = total(tmp, floor)
    assert red.returncode == 2 and float(red.stdout.split()[0]) < reached, red.stdout
