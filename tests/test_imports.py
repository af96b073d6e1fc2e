"""The import contract (pyproject's [tool.importlinter]) holds, and breaks on each defect.

Imports run one way: cli -> demo -> capabilities (which never import each other) ->
infrastructure -> checkers (which import nothing of fidelity), with no cycle between
sibling modules; inside `fidelity.git`, each noun runs git through `command` and imports no
other; inside `fidelity.matrix`, the commands import the run machinery, which imports the case
table, which imports the verdict, and never the other way. The red cases plant one bad import in a copy of the source each.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint(where: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache"],
        cwd=where,
        env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_contract_holds_on_this_tree() -> None:
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 kept, 0 broken" in done.stdout


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "files")
    for package in ("fidelity", "checkers"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(copy: Path, module: str, line: str) -> None:
    path = copy / module
    text = path.read_text()
    head, sep, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + sep + line + "\n" + rest)


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # an upward import: a comparator reaching for the command line
        (
            "fidelity/matrix/verdict/compare.py",
            "import fidelity.cli.options",
            "imports run one way",
        ),
        # capabilities are independent of each other
        ("fidelity/matrix/gate.py", "import fidelity.controls.verdict", "imports run one way"),
        # the checkers stand alone
        ("checkers/fences.py", "import fidelity.errors", "the checkers import nothing"),
        # a cycle between siblings: the comparators' shared types importing a comparator
        ("fidelity/kinds/diffs.py", "import fidelity.kinds.csvcmp", "no import cycle"),
        # a comparator kind sits below the verdict that asks it
        (
            "fidelity/kinds/jsontree.py",
            "import fidelity.matrix.verdict.compare",
            "imports run one way",
        ),
        # the verdict judges evidence and never reaches for the machinery that made it
        ("fidelity/matrix/verdict/compare.py", "import fidelity.matrix.run.rundir", "rooms import"),
        # the case table is read by the run, not the other way
        ("fidelity/matrix/cases/table.py", "import fidelity.matrix.run.shards", "rooms import"),
        # the run machinery never calls up into a command
        ("fidelity/matrix/run/runner.py", "import fidelity.matrix.gate", "rooms import"),
        # two commands side by side stay independent
        ("fidelity/matrix/merge.py", "import fidelity.matrix.rejudge", "rooms import"),
        # git sits below the worktrees that are built on it
        ("fidelity/git/command.py", "import fidelity.worktree", "imports run one way"),
        # one git noun leaning on another instead of on the runner
        ("fidelity/git/objects.py", "import fidelity.git.log", "run git through command"),
        # the runner reaching up into a noun
        ("fidelity/git/command.py", "import fidelity.git.stage", "run git through command"),
    ],
)
def test_each_bad_import_breaks_the_contract(
    copy: Path, module: str, line: str, broken: str
) -> None:
    assert lint(copy).returncode == 0, "the copy holds before the plant"
    plant(copy, module, line)
    done = lint(copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{broken}" in done.stdout and "BROKEN" in done.stdout


def agents_line(text: str) -> list[str]:
    """The packages AGENTS.md's import-direction line names, in order."""
    start = text.index("- Imports run one way (")
    line = " ".join(text[start : text.index(");", start)].split())
    return re.findall(r"[a-z]+", line.split("(", 1)[1])


def test_agents_md_names_the_layers_in_the_contracts_order() -> None:
    """AGENTS.md's line once left out three layers; it must name every package of the upper
    layers, in the contract's order."""
    import tomllib

    layers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    order = next(c for c in layers["contracts"] if c["id"] == "layers")["layers"]
    named = agents_line((ROOT / "AGENTS.md").read_text())
    packages = [
        [m.strip().removeprefix("fidelity.") for m in layer.split("|")] for layer in order[:5]
    ]
    seen = [min(named.index(p) for p in layer if p in named) for layer in packages]
    assert all(p in named for layer in packages for p in layer), (packages, named)
    assert seen == sorted(seen), (packages, named)
    assert named[-1] == "checkers"


def test_the_agents_line_check_sees_a_missing_layer() -> None:
    named = agents_line("- Imports run one way (cli -> demo -> matrix -> checkers); x")
    assert "preflight" not in named and named == ["cli", "demo", "matrix", "checkers"]
