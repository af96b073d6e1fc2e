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


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('paths = ["/abs/docs/*.md"]', "paths[0]: '/abs/docs/*.md' is not inside the repository"),
        ('paths = [""]', "paths[0]: '' is empty"),
        ('paths = ["docs/*.md", "../*.md"]', "paths[1]: '../*.md' is not inside the repository"),
        ('ratchets = "../secret.json"', "ratchets: '../secret.json' is not inside the repository"),
        ('ratchets = "/tmp/r.json"', "ratchets: '/tmp/r.json' is not inside the repository"),
    ],
)
def test_configured_paths_outside_the_root_are_a_configuration_error(
    repo: Path, setting: str, said: str
) -> None:
    """A glob or baseline file that leaves the root (or names nothing) is refused naming the
    key, before anything is read or written: never a traceback, never a file outside."""
    (repo / "docs" / "a.md").write_text("# A\n")
    (repo / "pyproject.toml").write_text(f"[tool.fidelity.docs]\n{setting}\n")
    for argv in (["check-docs"], ["check-docs", "--update-baseline"]):
        done = fidelity_cli(repo, "-q", *argv)
        assert done.returncode == 2, done.stderr
        assert f"[tool.fidelity.docs].{said}" in done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert sorted(p.name for p in repo.parent.iterdir()) == ["repo", "secret.md"]


def test_a_baseline_file_linked_outside_the_root_is_neither_read_nor_written(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"version": 2, "pages": {}}\n')
    (repo / "records").mkdir()
    (repo / "records" / "ratchets.json").symlink_to(outside)
    (repo / "docs" / "a.md").write_text("[gone](missing.md)\n")
    (repo / "pyproject.toml").write_text('[tool.fidelity.docs]\npaths = ["docs/*.md"]\n')
    for argv in (["check-docs"], ["check-docs", "--record-baseline"]):
        done = fidelity_cli(repo, "-q", *argv)
        assert done.returncode == 2, done.stderr
        assert "ratchets: records/ratchets.json resolves to " in done.stderr
        assert "outside the repository" in done.stderr
    assert outside.read_text() == '{"version": 2, "pages": {}}\n'


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


def test_a_byte_order_mark_is_not_part_of_the_page(repo: Path) -> None:
    """GitHub renders a page that starts with a BOM as if it did not: its first line is a
    heading (an anchor, a dated heading), and a bad byte on it is located without the BOM."""
    bom = "\ufeff".encode()
    (repo / "docs" / "bom.md").write_bytes(bom + b"# Setup\n\n[self](#setup)\n")
    (repo / "docs" / "other.md").write_bytes(b"[there](bom.md#setup)\n")
    (repo / "docs" / "dated.md").write_bytes(bom + b"# 2024-01-01 attempt 2\n")
    (repo / "docs" / "bad.md").write_bytes(bom + b"na\xffve\n")
    done = fidelity_cli(repo, "-q", "check-docs", "docs")
    lines = done.stdout.splitlines()
    assert [line.split(" ")[:2] for line in lines[:-1]] == [
        ["docs/bad.md:1:3:", "FD701"],
        ["docs/dated.md:1:1:", "FD201"],
    ], done.stdout
    assert done.returncode == 1, done.stderr


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


def test_a_file_name_with_a_newline_or_an_escape_stays_on_its_one_line(repo: Path) -> None:
    """A name holding a newline split its finding over two lines; an ESC in it restyled the
    terminal. Both are printed escaped, as a heading's text already was."""
    (repo / "docs" / "new\nline.md").write_text("[x](nope.md)\n")
    (repo / "docs" / "esc\x1b[7mrev.md").write_text("[x](nope.md)\n")
    done = fidelity_cli(repo, "-q", "check-docs", "docs")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "docs/esc\\x1b[7mrev.md:1:5: FD401 link target 'nope.md' does not exist (docs/nope.md)",
        "docs/new\\nline.md:1:5: FD401 link target 'nope.md' does not exist (docs/nope.md)",
        "check-docs: 2 findings in 2 of 2 files",
    ]


@pytest.mark.parametrize(
    "report",
    [
        [],
        ["--json", "r.json"],
        ["--sarif", "r.sarif"],
        ["--format", "github"],
        ["--record-baseline"],
    ],
)
def test_a_page_whose_name_is_not_utf8_and_has_a_finding_is_reported(
    tmp_path: Path, report: list[str]
) -> None:
    """Its finding's fingerprint, the SARIF uri and the ratchets file each encoded the name
    as UTF-8: "internal error", exit 3, and the ratchets file left empty."""
    import json
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / os.fsdecode(b"p\xff.md")).write_text("[x](gone.md)\n")
    done = fidelity_cli(tmp_path, "check-docs", "--no-cache", *report, ".")
    assert done.returncode == (0 if report == ["--record-baseline"] else 1), done.stderr
    assert "p\\udcff.md" in done.stdout + done.stderr, done.stdout
    written = {
        "--json": "r.json",
        "--sarif": "r.sarif",
        "--record-baseline": "records/ratchets.json",
    }
    if report and report[0] in written:
        data = json.loads((tmp_path / written[report[0]]).read_text(encoding="utf-8"))
        assert "p%FF.md" in json.dumps(data) or "p\\udcff.md" in json.dumps(data), data
    if report == ["--record-baseline"]:
        assert fidelity_cli(tmp_path, "check-docs", "--no-cache", ".").returncode == 0, "held"
