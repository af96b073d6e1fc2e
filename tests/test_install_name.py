"""Every install this repository tells anyone to run installs this project, never the bare name.

`fidelity` on the public package index is an unrelated 2017 library with no `fidelity`
command: a recipe that installs it cannot pass, and runs someone else's code. The
distribution is `fidelity-gate`; the command and the import package stay `fidelity`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from support import run_git

import fidelity

ROOT = Path(__file__).resolve().parents[1]
TEXT = (".md", ".markdown", ".yml", ".yaml", ".toml")
INSTALL = re.compile(r"\bpip[x3]?\s+install\b(?P<rest>[^\n]*)")
# the words of one shell command end at a separator, a comment or a closing fence
COMMAND_END = re.compile(r"&&|\|\||[;|#)`]")
BARE = re.compile(r"fidelity(?![\w.-])")


def bare_installs(text: str) -> list[int]:
    """Line numbers of `pip install` commands that name the bare distribution `fidelity`."""
    hits = []
    for found in INSTALL.finditer(text):
        words = COMMAND_END.split(found.group("rest"), maxsplit=1)[0].split()
        if any(BARE.match(w.strip("\"'")) for w in words):
            hits.append(text.count("\n", 0, found.start()) + 1)
    return hits


@pytest.mark.parametrize(
    "line",
    [
        "python -m pip install fidelity",
        "pip install -q fidelity && fidelity demo",
        "- run: pip install 'fidelity==0.1.0'",
        'pip3 install "fidelity @ git+https://example.invalid/fidelity@v0.1.0"',
        "pipx install fidelity[test]",
    ],
)
def test_a_bare_name_install_is_caught(line: str) -> None:
    assert bare_installs(f"intro\n\n{line}\n") == [3]


@pytest.mark.parametrize(
    "line",
    [
        'python -m pip install "fidelity-gate @ git+https://github.com/OWNER/fidelity@v0.1.0"',
        'python -m pip install "$FIDELITY_PIP"',
        "python -m pip install . && fidelity demo",
        "python -m pip install -e '.[test]'  # then: fidelity check-docs",
    ],
)
def test_this_project_installed_by_its_own_name_passes(line: str) -> None:
    assert bare_installs(line) == []


def test_no_file_in_the_repository_installs_the_bare_name() -> None:
    listed = run_git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    files = sorted({f for f in listed.split("\0") if f.endswith(TEXT)})
    assert "docs/ci.md" in files and "pyproject.toml" in files  # the walk saw the repository
    found = [
        f"{name}:{line}: installs the bare name `fidelity`; install fidelity-gate (docs/ci.md)"
        for name in files
        if (ROOT / name).is_file()
        for line in bare_installs((ROOT / name).read_text(errors="replace"))
    ]
    assert found == []


def test_the_distribution_is_fidelity_gate_at_the_packages_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "fidelity-gate"
    assert project["scripts"] == {"fidelity": "fidelity.cli.main:main"}
    # what `fidelity --version` says, read from the installed metadata: stale after a bump
    # until the package is installed again
    assert project["version"] == fidelity.__version__, (
        f"pyproject.toml says {project['version']}, the installed metadata "
        f"{fidelity.__version__}: python -m pip install -e '.[test]'"
    )


def test_the_version_read_from_the_dist_info_is_the_metadatas(tmp_path: Path) -> None:
    """`fidelity.__version__` reads the one `fidelity_gate-*.dist-info` beside the package
    (importlib.metadata is 0.02 CPU-s of start-up); anything else falls back to it."""
    from importlib import metadata

    assert fidelity.__version__ == metadata.version(fidelity.DISTRIBUTION)
    assert fidelity.dist_info_version(str(tmp_path)) is None
    info = tmp_path / "fidelity_gate-9.1.dist-info"
    info.mkdir()
    assert fidelity.dist_info_version(str(tmp_path)) is None  # no METADATA
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: fidelity-gate\nVersion: 9.1\n")
    (tmp_path / "other_pkg-1.0.dist-info").mkdir()
    assert fidelity.dist_info_version(str(tmp_path)) == "9.1"
    (tmp_path / "fidelity_gate-9.0.dist-info").mkdir()  # two installs' leftovers: ambiguous
    assert fidelity.dist_info_version(str(tmp_path)) is None
