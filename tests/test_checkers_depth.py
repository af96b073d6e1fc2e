"""check-docs never reports a page clean that it did not fully read (issue 36).

markdown-it stops at a nesting depth: past it, the rest of a container (for a list, the rest
of the page) was dropped without a word, and a page of broken links passed. Now blocks are
followed 100 levels deep (a quote is one level, a list item two) and brackets 20; past
either, what is not read is FD706 on the first line skipped, and the page after the deep
container is read. GitHub's renderer (cmark-gfm) is the oracle: every link it renders is
one check-docs checks, or the page carries an FD706 at or above it.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import Repo, fidelity_cli

from checkers.check import Page, check_pages, check_text
from checkers.config import PageRules, from_section
from checkers.links import links
from checkers.markdown import parse
from checkers.site import Site

NO_CAPS = PageRules(max_paragraph_chars=0, max_prose_paragraphs=0)


def nested_list(depth: int) -> str:
    return "".join("  " * i + f"- item {i}\n" for i in range(depth))


def _findings(root: Path, text: str) -> list[str]:
    root.mkdir(exist_ok=True)
    (root / "page.md").write_text(text)
    config = from_section({"max_paragraph_chars": 0, "max_prose_paragraphs": 0})
    result = check_pages(root, (Page("page.md", "page.md"),), config)
    return [f.render() for f in result.findings]


def test_after_a_list_ten_levels_deep_the_page_is_still_read(tmp_path: Path) -> None:
    """Issue 36's probe through the CLI: 9 levels gave FD401, 10 levels a clean page."""
    repo = Repo(tmp_path / "repo")
    for depth in (9, 10, 40):
        repo.write({"README.md": nested_list(depth) + "\n[b](missing-after.md)\n"})
        done = fidelity_cli(repo.path, "-q", "check-docs", "--no-cache", "README.md")
        assert done.returncode == 1, (depth, done.stdout)
        assert done.stdout.splitlines()[0] == (
            f"README.md:{depth + 2}:5: FD401 link target 'missing-after.md' does not exist "
            "(missing-after.md)"
        )


def test_a_quote_twenty_deep_shows_its_text(tmp_path: Path) -> None:
    found = _findings(tmp_path / "r", ">" * 20 + " [q](missing-q.md)\n")
    assert found == ["page.md:1:26: FD401 link target 'missing-q.md' does not exist (missing-q.md)"]


def test_a_link_behind_fifty_thousand_brackets_is_never_passed_clean(tmp_path: Path) -> None:
    """markdown-it gives up on brackets nested past 20 and skips to the paragraph's end;
    GitHub renders the link. The page is not clean: FD706 where the parser gave up."""
    found = _findings(tmp_path / "r", "[" * 50_000 + "[b](missing-b.md)\n")
    assert found == [
        "page.md:1:22: FD706 brackets nested deeper than 20: links after this point in the "
        "paragraph may be missed (not checked); escape the brackets (\\[) or unnest them"
    ]


def test_brackets_within_the_limit_are_read_as_before(tmp_path: Path) -> None:
    found = _findings(tmp_path / "r", "[" * 15 + "[b](missing-b.md)\n")
    assert found == ["page.md:1:20: FD401 link target 'missing-b.md' does not exist (missing-b.md)"]


def test_past_the_block_limit_the_rest_of_the_page_is_read(tmp_path: Path) -> None:
    deep = nested_list(60) + "  " * 60 + "[x](missing-deep.md)\n"
    found = _findings(tmp_path / "r", deep + "\nafter [c](missing-c.md)\n")
    assert found == [
        "page.md:50:101: FD706 nesting deeper than 100 levels (a quote is one, a list item "
        "two): lines 50-61 are not checked; flatten it",
        "page.md:63:11: FD401 link target 'missing-c.md' does not exist (missing-c.md)",
    ]


@pytest.mark.parametrize(("depth", "code"), [(49, "FD401"), (50, "FD706")])
def test_a_list_is_read_49_deep(depth: int, code: str, tmp_path: Path) -> None:
    """The limit docs/check-docs.md states: a list 49 deep is read to its deepest item."""
    page = nested_list(depth - 1) + "  " * (depth - 1) + "- [x](missing.md)\n"
    assert [line.split(": ")[1][:5] for line in _findings(tmp_path / "r", page)] == [code]


HOSTILE = {
    "400,000 nested quotes": ">" * 400_000 + " x\n",
    "a list 500 deep": nested_list(500),
    "3,000 nested footnote definitions": "".join(f"[^{i}]: " for i in range(3_000)) + "x\n",
    "100,000 brackets": "[" * 100_000 + "\n",
    "nested images": "![" * 3_000 + "a" + "](x.png)" * 3_000 + "\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(tmp_path_factory.mktemp("site"))


@pytest.mark.parametrize("shape", HOSTILE)
def test_hostile_depths_are_a_finding_never_a_recursion_error(shape: str, site: Site) -> None:
    """The limits keep the parser's recursion far from Python's: the stack here is already
    deeper than a run's (pytest's own frames)."""
    assert sys.getrecursionlimit() <= 1000
    findings = check_text(HOSTILE[shape], Page("p.md", "p.md"), NO_CAPS, site)
    assert "FD706" in {str(f.code) for f in findings}


def _github_targets(page: str) -> list[str]:
    rendered = cmarkgfm.github_flavored_markdown_to_html(page, options=Options.CMARK_OPT_UNSAFE)
    return re.findall(r'href="([^"]*)"', rendered)


@st.composite
def deep_pages(draw: st.DrawFn) -> str:
    """Blocks of quotes and lists nested around the limits, a distinct link in each."""
    blocks = []
    for i in range(draw(st.integers(1, 4))):
        depth = draw(st.integers(0, 130))
        link = f"[t](m{i}.md)"
        if draw(st.booleans()):
            blocks.append(">" * depth + f" {link}")
        else:
            blocks.append(nested_list(depth // 2) + "  " * (depth // 2) + link)
    return "\n\n".join(blocks) + "\n"


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page=deep_pages())
def test_every_link_github_renders_is_checked_or_the_page_says_what_it_skipped(
    page: str, site: Site
) -> None:
    ours = {link.href for link in links(parse(page))}
    findings = check_text(page, Page("p.md", "p.md"), NO_CAPS, site)
    skipped = [f.line for f in findings if str(f.code) == "FD706"]
    lines = page.split("\n")
    theirs = _github_targets(page)
    assert theirs, "the oracle renders every link of these pages"
    for href in theirs:
        line = next(n for n, text in enumerate(lines, 1) if f"({href})" in text)
        assert href in ours or any(first <= line for first in skipped), (href, line)


@pytest.mark.parametrize("unit", ["[a ", "[a] ", "[a][b] ", "[[[x]]] ", "[a [b] c] "])
def test_brackets_are_scanned_no_more_often_than_markdown_it_does(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a `[` that opens no link, the link rule, the shortcut fallback and the
    undefined-reference rule each scanned for its closing bracket (unclosed `[a [a [a`:
    three scans where markdown-it makes one, 2.5x its parse). Counted, not timed: the scans
    of the shared parser against those of bare markdown-it on the same text (3x before)."""
    from markdown_it import MarkdownIt, helpers

    from checkers import labels

    text = "\n\n".join(unit * 30 for _ in range(20))
    scans = {"ours": 0, "bare": 0}

    def counting(who: str, scan: Callable[..., int]) -> Callable[..., int]:
        def counted(*args: Any) -> int:
            scans[who] += 1
            return scan(*args)

        return counted

    bare = MarkdownIt("commonmark")
    bare.helpers = types.SimpleNamespace(  # type: ignore[assignment]
        parseLinkLabel=counting("bare", helpers.parseLinkLabel),
        parseLinkDestination=helpers.parseLinkDestination,
        parseLinkTitle=helpers.parseLinkTitle,
    )
    bare.parse(text)
    monkeypatch.setattr(labels, "_parse_label", counting("ours", labels._parse_label))
    parse(text)
    assert 0 < scans["ours"] <= scans["bare"]
