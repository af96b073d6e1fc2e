"""check-docs on hostile trees: nothing outside the root is opened, loops and bad bytes are
findings, a page too large to hold is a finding, and none of it is a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import fidelity_cli

from checkers.tree import check_tree

OPENED: list[str] = []
_WATCHING = False


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _WATCHING and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        OPENED.append(os.path.realpath(os.fsdecode(args[0])))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it records only while watching


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every file the interpreter opens while the test body runs (real paths)."""
    global _WATCHING
    OPENED.clear()
    _WATCHING = True
    try:
        yield OPENED
    finally:
        _WATCHING = False


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "docs").mkdir()
    (tmp_path / "secret.md").write_text("# Secret\n\n## Token\n")
    return root


def test_no_markdown_outside_the_root_is_opened(repo: Path, opened: list[str]) -> None:
    (repo / "docs" / "escape.md").symlink_to(repo.parent / "secret.md")
    (repo / "docs" / "page.md").write_text(
        "[a](../../secret.md#token) [b](escape.md#token) [c](/../secret.md#token) "
        "[d](../../../../../../etc/passwd)\n"
    )
    result = check_tree(["docs"], repo)
    secret = os.path.realpath(repo.parent / "secret.md")
    assert secret not in opened
    assert not [p for p in opened if p.startswith("/etc/")]
    codes = [(f.path, str(f.code)) for f in result.findings]
    # /../secret.md stays at the root, as GitHub resolves it: the root has no secret.md
    page = [("docs/page.md", code) for code in ("FD404", "FD404", "FD401", "FD404")]
    assert codes == [("docs/escape.md", "FD703"), *page]


def test_nearest_neighbour_a_markdown_target_inside_is_opened(
    repo: Path, opened: list[str]
) -> None:
    (repo / "inside.md").write_text("# Inside\n\n## Token\n")
    (repo / "docs" / "page.md").write_text("[a](../inside.md#token) [b](../inside.md#nope)\n")
    result = check_tree(["docs/page.md"], repo)
    assert os.path.realpath(repo / "inside.md") in opened
    assert [str(f.code) for f in result.findings] == ["FD402"]


def test_paths_outside_the_root_are_a_usage_error(repo: Path) -> None:
    done = fidelity_cli(repo, "-q", "check-docs", "../secret.md")
    assert done.returncode == 2, done.stderr
    assert "../secret.md: outside the repository root" in done.stderr
    assert "Traceback" not in done.stderr


def test_symlink_loops_under_a_docs_folder_are_findings_not_tracebacks(repo: Path) -> None:
    docs = repo / "docs"
    (docs / "ok.md").write_text("# Ok\n\n[loop](loop.md#x) [dir](spin/x.md)\n")
    (docs / "loop.md").symlink_to("loop.md")
    (docs / "a.md").symlink_to("b.md")
    (docs / "b.md").symlink_to("a.md")
    (docs / "spin").symlink_to("spin")
    (docs / "deep").mkdir()
    (docs / "deep" / "up").symlink_to("..")
    done = fidelity_cli(repo, "-q", "check-docs", "docs")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "docs/a.md:1:1: FD703 page cannot be read (a folder, a broken link or a symlink loop); "
        "not checked; fix or exclude it",
        "docs/b.md:1:1: FD703 page cannot be read (a folder, a broken link or a symlink loop); "
        "not checked; fix or exclude it",
        "docs/loop.md:1:1: FD703 page cannot be read (a folder, a broken link or a symlink "
        "loop); not checked; fix or exclude it",
        "docs/ok.md:3:8: FD401 link target 'loop.md' does not exist (docs/loop.md)",
        "docs/ok.md:3:25: FD401 link target 'spin/x.md' does not exist (docs/spin/x.md)",
        "check-docs: 5 findings in 4 of 4 files",
    ]


def test_a_non_utf8_page_is_a_finding_not_a_traceback(repo: Path) -> None:
    (repo / "docs" / "page.md").write_bytes(b"# Title\n\nna\xefve \xff text\n")
    done = fidelity_cli(repo, "-q", "check-docs", "docs/page.md")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith("docs/page.md:3:3: FD701 page is not valid UTF-8")


def test_a_page_over_max_page_bytes_is_a_finding(repo: Path, opened: list[str]) -> None:
    (repo / "pyproject.toml").write_text("[tool.fidelity.docs]\nmax_page_bytes = 1000\n")
    (repo / "docs" / "big.md").write_text("# Big\n\n" + "word " * 400)
    (repo / "docs" / "small.md").write_text("# Small\n")
    result = check_tree(["docs"], repo)
    assert [(f.path, str(f.code)) for f in result.findings] == [("docs/big.md", "FD702")]
    assert "2,007 bytes, over max_page_bytes 1,000" in result.findings[0].message


def test_findings_stay_on_one_line_at_any_width(repo: Path) -> None:
    (repo / "docs" / "page.md").write_text(
        "## Attempt 2 of a heading long enough to wrap at forty columns\n"
    )
    done = fidelity_cli(repo, "-q", "check-docs", "docs/page.md", env={"COLUMNS": "40"})
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("docs/page.md:1:1: FD201 per-attempt heading")
    assert done.stdout.splitlines()[0].endswith("as a row of a keyed table instead")
