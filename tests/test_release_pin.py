"""The install line works as printed: every ref the docs pin is a release of this repository.

README.md, docs/ and docs/recipes/ install `fidelity-gate @ git+URL@REF`. They printed
`@v0.1.0`, a tag the repository never had, so the line failed for everyone who copied it.
Each REF must resolve to a commit in this repository (`git cat-file -e REF^{commit}`) and be
an ancestor of HEAD, as a clean clone of main holds it: a tag made on one machine need not
reach a clone, so the docs pin the release commit's full sha. The version is written once
(pyproject.toml), and CHANGELOG.md has its section. The red cases plant an unknown tag, an
unknown sha and a commit off HEAD's history in a repository of their own.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support import Repo, git_env

ROOT = Path(__file__).resolve().parents[1]
# the URL's last `@` starts the ref; a `#fragment` (egg=, subdirectory=) is not part of it
INSTALL = re.compile(r"fidelity-gate @ (git\+[^\s\"']+)")


def pinned(text: str) -> list[str]:
    """The refs of every `fidelity-gate @ git+...@REF` in text (none: no @REF). The `@` of a
    user (`git@host`) is before the path, the ref's after it."""
    urls = (m.group(1).split("#")[0] for m in INSTALL.finditer(text))
    paths = (url.split("://", 1)[-1].partition("/")[2] for url in urls)
    return [path.rsplit("@", 1)[1] for path in paths if "@" in path]


def sources(root: Path) -> list[Path]:
    docs = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return docs + sorted(p for p in (root / "docs" / "recipes").iterdir() if p.is_file())


def git_ok(repo: Path, *args: str) -> bool:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=git_env(repo.parent), capture_output=True, check=False
    )
    return done.returncode == 0


def unresolved(repo: Path, ref: str) -> str:
    """Why ref is not a pin that works in repo, or ''."""
    if not git_ok(repo, "cat-file", "-e", f"{ref}^{{commit}}"):
        return "does not resolve to a commit here (a shallow clone? git fetch --unshallow)"
    if not git_ok(repo, "merge-base", "--is-ancestor", ref, "HEAD"):
        return "is not an ancestor of HEAD: pin a release commit on this history"
    return ""


def test_every_pinned_ref_is_a_release_on_this_history() -> None:
    found = {p.relative_to(ROOT).as_posix(): pinned(p.read_text()) for p in sources(ROOT)}
    refs = [(name, ref) for name, pins in found.items() for ref in pins]
    assert len(refs) >= 7, found  # README, docs/ci.md's four, the two recipe files
    assert {name for name, _ in refs} >= {"README.md", "docs/ci.md"}
    wrong = [f"{name}: @{ref} {why}" for name, ref in refs if (why := unresolved(ROOT, ref))]
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "refs"),
    [
        ('pip install "fidelity-gate @ git+https://github.com/OWNER/fidelity@v0.2.0"', ["v0.2.0"]),
        ("FIDELITY_PIP: 'fidelity-gate @ git+https://h/o/fidelity@abc#egg=x'", ["abc"]),
        ('"fidelity-gate @ git+ssh://git@github.com/o/fidelity@0123"', ["0123"]),
        ('"fidelity-gate @ git+https://github.com/OWNER/fidelity"', []),
        ('"fidelity-gate @ git+ssh://git@github.com/o/fidelity"', []),
    ],
)
def test_the_pins_are_read_from_every_spelling(text: str, refs: list[str]) -> None:
    assert pinned(text) == refs


def test_a_bad_pin_goes_red(tmp_path: Path) -> None:
    """What the docs printed (a tag that was never made), a sha of nothing, a commit on a
    side branch: each named; the release commit on HEAD's history passes."""
    repo = Repo(tmp_path / "r")
    release = repo.commit({"pyproject.toml": "x"}, "release")
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit({"side.txt": "x"}, "side")
    repo.git("checkout", "-q", "main")
    repo.commit({"docs.md": "pin"}, "docs pin the release")
    assert unresolved(repo.path, release) == ""
    assert "does not resolve" in unresolved(repo.path, "v0.1.0")
    assert "does not resolve" in unresolved(repo.path, "0" * 40)
    assert "not an ancestor of HEAD" in unresolved(repo.path, side)


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def test_fidelity_version_says_pyprojects_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fidelity", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"fidelity {version()}", (
        "the installed metadata is stale: python -m pip install -e '.[test]'"
    )


def literal_versions(root: Path, wanted: str) -> list[str]:
    """Python files under fidelity/ that write the version out again."""
    quoted = re.compile(rf"""["']{re.escape(wanted)}["']""")
    return [
        p.relative_to(root).as_posix()
        for p in sorted((root / "fidelity").rglob("*.py"))
        if quoted.search(p.read_text(encoding="utf-8"))
    ]


def test_the_version_is_written_in_one_place(tmp_path: Path) -> None:
    assert literal_versions(ROOT, version()) == []
    planted = tmp_path / "fidelity"
    planted.mkdir()
    (planted / "__init__.py").write_text(f'__version__ = "{version()}"\n')
    assert literal_versions(tmp_path, version()) == ["fidelity/__init__.py"]


def test_the_changelog_has_the_versions_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(version())}$", text, re.M), (
        f"CHANGELOG.md has no '## {version()}' section"
    )
    assert "## How a release is cut" in text
