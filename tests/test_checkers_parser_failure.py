"""A page the Markdown parser fails on is FD707, not a crash of the whole run.

markdown-it-py 4.3.0 raises IndexError on some lists of HTML blocks inside quotes (found by
fuzzing the parser; 3.0.0 parses the same text). Before FD707 that ended `check-docs` with
an internal error (exit 3) and no word about the other pages; now the page is reported as
not checked, every other page is checked, and a link into the page says why its anchors
are unknown.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock

from checkers.check import Page, check_pages
from checkers.config import load

# the text markdown-it-py 4.3.0 raises IndexError on
FAILS_4_3 = "   ~~~\n- !\n    1)\n> - 1)\n1. | a | b |\n>+\n* <pre>\n~~~\n> - <pre>\n\t>"


def _repo(tmp_path: Path, pages: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in pages.items():
        (root / name).write_text(text)
    return root


def _planted(monkeypatch: pytest.MonkeyPatch, in_markdown_it: bool) -> None:
    """markdown-it's `getLines` fails on a page holding BOOM: raised in its own code (its
    real `getLines` asked for a line past the end), or in ours (raised here)."""
    real = StateBlock.getLines

    def get_lines(self: StateBlock, begin: int, end: int, indent: int, keep: bool) -> str:
        if "BOOM" in self.src:
            if in_markdown_it:
                return real(self, begin, len(self.bMarks) + 9, indent, keep)
            raise IndexError("raised by the checkers")
        return real(self, begin, end, indent, keep)

    monkeypatch.setattr(StateBlock, "getLines", get_lines)


def test_a_parser_that_raises_is_fd707_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path, {"bad.md": "# Bad\n\nBOOM\n", "good.md": "# Good\n\n[x](gone.md)\n"})
    _planted(monkeypatch, in_markdown_it=True)
    pages = tuple(Page(name, name) for name in ("bad.md", "good.md"))
    found = [f.render() for f in check_pages(root, pages, load(root)).findings]
    assert found[0].startswith("bad.md:1:1: FD707 markdown-it-py ") and found[0].endswith(
        "failed on this page (IndexError: list index out of range); not checked: report "
        "the page to markdown-it-py, or reword the lines it fails on"
    ), found
    assert [f.split(": ")[1].split()[0] for f in found[1:]] == ["FD401"], found


def test_an_error_in_the_checkers_own_code_is_not_blamed_on_the_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only what markdown-it-py's own code raises is FD707 (a finding one could baseline);
    the checkers' own failure stays an error to report."""
    root = _repo(tmp_path, {"bad.md": "# Bad\n\nBOOM\n"})
    _planted(monkeypatch, in_markdown_it=False)
    with pytest.raises(IndexError, match="raised by the checkers"):
        check_pages(root, (Page("bad.md", "bad.md"),), load(root))


def _plain_fails(text: str) -> bool:
    try:
        MarkdownIt("commonmark").enable("table").parse(text)
    except IndexError:
        return True
    return False


def test_the_page_markdown_it_fails_on_is_reported_by_the_command(tmp_path: Path) -> None:
    """Through the installed command: FD707 (exit 1) where the installed markdown-it-py
    raises on the text, a clean page where it does not; the page beside it is checked, and
    a link to an anchor in the failed page says the page could not be parsed."""
    link = "[x](odd.md#a) and [y](gone.md)\n"
    root = _repo(tmp_path, {"odd.md": FAILS_4_3, "other.md": link})
    done = subprocess.run(
        [sys.executable, "-m", "fidelity", "-q", "check-docs", "--no-cache", "odd.md", "other.md"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    codes = [line.split(": ")[1].split()[0] for line in lines if ": FD" in line]
    if _plain_fails(FAILS_4_3):
        assert done.returncode == 1 and codes == ["FD707", "FD402", "FD401"], done
        assert "odd.md could not be parsed (markdown-it-py raised IndexError" in lines[1], lines
    else:
        assert done.returncode == 1 and "FD707" not in codes and "FD401" in codes, done


def test_a_link_into_a_page_too_dense_to_parse_says_why(tmp_path: Path) -> None:
    """A page checked in the same run and too dense to parse (FD705) has unknown anchors,
    not none: a link into it said "no anchor" (red before)."""
    dense = "*a " * 1300 + "\n"
    root = _repo(tmp_path, {"dense.md": dense, "other.md": "[x](dense.md#a)\n"})
    (root / "pyproject.toml").write_text("[tool.fidelity.docs]\nmax_page_bytes = 4000\n")
    pages = tuple(Page(name, name) for name in ("dense.md", "other.md"))
    found = [f.render() for f in check_pages(root, pages, load(root)).findings]
    assert found[0].startswith("dense.md:1:1: FD705 "), found
    assert found[1] == (
        "other.md:1:5: FD402 cannot check '#a': dense.md holds more than 1,000 Markdown "
        "tokens (one per 8 bytes of max_page_bytes 4,000)"
    ), found
