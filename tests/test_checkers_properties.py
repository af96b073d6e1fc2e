"""Properties of the checkers over generated Markdown: no crash, faithful parse, real lines."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from checkers import dispatch, markdown
from checkers.check import Page, check_text
from checkers.config import KeyedTable, PageRules
from checkers.fences import code_blocks
from checkers.links import links
from checkers.markdown import normalize, parse, parse_headings, parser
from checkers.site import Site
from checkers.slugs import _KEPT_CATEGORIES as KEPT
from checkers.slugs import anchors, slug
from checkers.tablerows import MAX_FILLED_CELLS
from checkers.tables import parse_tables, tables_in

PREFIXES = ["", "", "", "- ", "> ", "  ", "    ", "1. ", "> - ", "   "]
BODIES = [
    "```",
    "~~~",
    "````",
    "```py",
    "~~~ x",
    "``` ",
    "| a | b |",
    "|---|---|",
    "| 1 \\| 2 | 3 |",
    "| x |",
    "a | b",
    "--|--",
    "# h",
    "## 2024-01-01",
    "### Attempt 2",
    "Setup",
    "## Setup",
    "",
    "",
    "text [x](#y) and [x](gone.md)",
    "![i](p.png) `co|de`",
    "[x][y] [x][]",
    "[y]: z.md",
    "**b** long prose text",
    "<a id='q'>",
    "---",
    "===",
    "\\[a\\]\\[b\\]",
    "\t|",
    "\r",
    "\0",
    "| k | v |\n|---|---|\n| a | 1 |",
    "| k | v |\n| - | :-: |\n| a \\| b |\n| c | d | e |",
    "```\ncode\n```",
    "~~~~\n~~~\n~~~~~",
    "````\nx\n```",
    "```\nx\n```py",
    "> ```\n> a\n> ```",
    "- ```\n  x\n  ```",
    "- ```\n  x\n- y",
    "# A *b* `c`",
    "| \x1c |\x85",
    "\u00a0|\u2003",
    "\x1c",
    "Title\n===",
    "## x <a id='k'>",
    "> | a | b |\n> |---|---|\n> | c |",
    "a `code\nspan` [x](gone.md)",
    "<span\nclass='x'> [y](#y)",
    "[t][y] and [t][]",
    "<!-- [c](gone.md) -->",
    "x[^n] [^m]",
    "[^n]: note [z](z.md)",
]

line = st.tuples(st.sampled_from(PREFIXES), st.one_of(st.sampled_from(BODIES), st.text(max_size=6)))
markdownish = st.lists(line, max_size=30).map(lambda ls: "\n".join(p + b for p, b in ls))
any_text = st.one_of(markdownish, st.text(max_size=200))
PROFILE = settings(  # randomness from the profile (conftest.py), twice its budget
    max_examples=2 * settings().max_examples,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
TIGHT = PageRules(
    max_row_chars=5,
    max_cell_chars=2,
    max_paragraph_chars=5,
    max_prose_paragraphs=1,
    canonical_sections=("Setup",),
    keyed_tables=(KeyedTable("a"), KeyedTable("k", heading="h")),
    link_bases=("docs", "../up"),
)


TASK_BOX = re.compile(r"^[ \t\v\f]*(?:[-+*]|[0-9]+[.)])[ \t\v\f]+\[[ xX]\][ \t\v\f]", re.M)


def plain() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("site")
    (root / "z.md").write_text("# Z\n")
    return Site(root)


@PROFILE
@given(text=any_text)
def test_never_raises_and_every_line_points_into_the_file(text: str, site: Site) -> None:
    for rules in (PageRules(), TIGHT):
        findings = check_text(text, Page("page.md", "page.md"), rules, site)
        lines = max(1, parse(text).line_count)
        for finding in findings:
            assert 1 <= finding.line <= lines, finding
            assert finding.col >= 1, finding


@PROFILE
@given(text=any_text)
def test_wrapped_rules_do_not_change_the_parse(text: str) -> None:
    """Only footnotes and task-list boxes (GitHub syntax that CommonMark lacks) parse
    differently (and nesting past markdown-it's 20 levels, which no page here reaches)."""
    assume("[^" not in text and not TASK_BOX.search(normalize(text)))
    assert parser().render(normalize(text)) == plain().render(normalize(text))


KINDS = ("inline", "html_block", "heading_open", "paragraph_open", "table_open", "fence")


@PROFILE
@given(text=any_text, kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=3, unique=True))
def test_the_token_index_finds_what_a_scan_finds(text: str, kinds: list[str]) -> None:
    """The rules look only at ``Parsed.of`` their token types (and skip an inline token
    holding neither '[' nor '<' when they look for links, images or inline HTML)."""
    parsed = parse(text)
    scanned = tuple(i for i, t in enumerate(parsed.tokens) if t.type in kinds)
    assert parsed.of(*kinds) == scanned
    for i in parsed.of("inline"):
        token = parsed.tokens[i]
        if any("pos" in child.meta for child in token.children or ()):
            assert "[" in token.content or "<" in token.content, token.content


@PROFILE
@given(text=any_text)
@example(text="a `code\nspan` then [x](gone.md)")
@example(text="- <span\n  class='x'> [y](#y) ![i](p.png)")
@example(text="\xa0\ntext [x](#y) and [x](gone.md)")  # found by `explore`, seed 202
def test_every_link_is_located_at_its_destination_or_its_bracket(text: str) -> None:
    parsed = parse(text)
    for link in links(parsed):
        at = parsed.lines[link.line - 1][link.col - 1 :]
        starts = (link.href, unquote(link.href), "[", "!")
        assert any(s and at.startswith(s) for s in starts), (link, at)


@PROFILE
@given(text=any_text)
def test_excluded_code_regions_are_exactly_markdown_its(text: str) -> None:
    assume("[^" not in text)  # plain CommonMark has no footnotes: see FOOTNOTE_BLOCKS
    ours = [(b.start, b.end, b.kind) for b in code_blocks(parse(text))]
    theirs = [
        (t.map[0] + 1, t.map[1], t.type)
        for t in plain().parse(normalize(text))
        if t.type in ("fence", "code_block") and t.map
    ]
    assert ours == theirs


def _content_lines(content: str) -> int:
    return content.count("\n") + (1 if content and not content.endswith("\n") else 0)


@PROFILE
@given(text=any_text)
@example(text="````\nx\n```")
@example(text="```\nx\n    ```")
@example(text="```\nabc")
@example(text="- ```\n  x\n  ```")
def test_fence_closure_matches_the_line_arithmetic(text: str) -> None:
    """A closed fence spans its content lines plus opener and closer, an unclosed one not."""
    for token in parse(text).tokens:
        if token.type == "fence" and token.map:
            span = token.map[1] - token.map[0]
            assert token.meta["closed"] == (span == _content_lines(token.content) + 2)


@PROFILE
@given(text=any_text)
@example(text="| a | b |\n|---|---|\n| x |\x1c\n|\u00a0| y |\x85\n| \u2003 |\u2028")
def test_cells_as_written_agree_with_markdown_it_after_padding(text: str) -> None:
    assume("[^" not in text)  # plain CommonMark has no footnotes: see FOOTNOTE_BLOCKS
    theirs: list[list[str]] = []
    row: list[str] | None = None
    for token in plain().parse(normalize(text)):
        if token.type == "tr_open":
            row = []
            theirs.append(row)
        elif token.type == "inline" and row is not None:
            row.append(token.content)
        elif token.type == "tr_close":
            row = None
    ours = []
    for table in tables_in(parse(text)):
        width = table.header.cell_count
        for r in (table.header, *table.rows):
            ours.append([*r.texts[:width], *[""] * (width - r.cell_count)])
    assert ours == theirs


@PROFILE
@given(text=any_text)
@example(text="| a |\n---\n")
@example(text="| a |\n|---|\n| b |\nfoo\n---\n")
@example(text="| a |\n|---|\n## h\n> | a |\n> |---|\n> x\n---\n")
@example(text="- | a |\n  |---|\n  x\n ---\nTitle\n===")
@example(text="[^n]: note\n> [^n]:\n  \n> > | <a id='r'> |\n> |---|---|")  # found by `dev`
@example(text=">|<a id=''>\n-|-")  # the same, shrunk: an anchor in a table row
def test_the_cheap_parse_for_link_targets_finds_the_same_anchors(text: str) -> None:
    assert anchors(parse_headings(text)) == anchors(parse(text))


@PROFILE
@given(text=any_text)
@example(text="- | a |\n  |---|\n  x\n- y\n| b |\n|-|\n> q")  # a list item ends a table
@example(text="[^n]: note\n> | a |\n> |---|\n> x\n---\n")
def test_the_table_parse_finds_the_tables_of_the_full_parse(text: str) -> None:
    """parse_tables (merge-records, stale) reads tables without their cell tokens; it must
    find the very tables, rows and headings check-docs finds."""
    assert parse_tables(text) == tables_in(parse(text))


def test_the_table_parse_stops_where_too_many_cells_would_be_filled_in() -> None:
    """markdown-it >= 4 ends a table once it has filled in 65,536 missing cells: 3 columns
    and rows of one cell end it at the 32,769th row, and the table parse must end it there
    too. markdown-it-py 3.0.0 (which pyproject admits) has no limit: both parse all rows."""
    text = "| a | b | c |\n|---|---|---|\n" + "| x |\n" * 33_000
    (ours,) = parse_tables(text)
    (theirs,) = tables_in(parse(text))
    limited = MAX_FILLED_CELLS == 65_536
    assert ours == theirs and len(ours.rows) == (32_768 if limited else 33_000)


# A footnote definition changes what is a table or a code block, so plain CommonMark (the
# oracle above) cannot judge a text holding one. GitHub can: each expected answer is what
# cmark-gfm (cmarkgfm 2025.10.22, footnotes on) made of the text: the first and last lines
# of each table, the first line of each code block. Plain markdown-it-py differs on each.
FOOTNOTE_BLOCKS = [
    (">>[^n]:\n>a||\n>-|-", [(2, 3)], []),  # a table in a quote after an empty definition
    (">>[^n]: e\n>a||\n>-|-", [], []),  # lazy lines of the definition's paragraph
    ("[^n]:e\nk||\n-|-", [], []),
    ("[^n]: note [z](z.md)\n    ```", [], [2]),  # a fence inside the definition
    ("[^n]: note [z](z.md)\n- \n   ```\ncode\n```", [], [3, 5]),
    ("| a | b |\n|---|---|\n| 1 | 2 |\n[^n]: note", [(1, 3)], []),  # it ends a table
]


@pytest.mark.parametrize(("text", "tables", "code"), FOOTNOTE_BLOCKS)
def test_tables_and_code_next_to_footnotes_are_githubs(
    text: str, tables: list[tuple[int, int]], code: list[int]
) -> None:
    parsed = parse(text)
    spans = [(t.line, t.rows[-1].line if t.rows else t.line + 1) for t in tables_in(parsed)]
    blocks = sorted(b.start for b in code_blocks(parsed))
    assert (spans, blocks) == (tables, code)
    tokens = plain().parse(normalize(text))
    theirs = (
        [(t.map[0] + 1, t.map[1]) for t in tokens if t.type == "table_open" and t.map],
        sorted(t.map[0] + 1 for t in tokens if t.type in ("fence", "code_block") and t.map),
    )
    assert theirs != (tables, code), "plain CommonMark gets this one right: not a blind spot"


@given(text=st.text(max_size=40))
@example(text="".join(map(chr, range(128))))
@example(text="\u212a K\u0130 _x-y")  # the Kelvin sign lowers to ASCII 'k'
def test_the_ascii_slug_keeps_what_the_category_rule_keeps(text: str) -> None:
    """`slug` takes a regular expression for ASCII text; it must keep exactly the
    characters whose Unicode category github-slugger keeps."""
    lowered = text.lower()
    kept = "".join(ch for ch in lowered if ch in " -" or unicodedata.category(ch) in KEPT)
    assert slug(text) == kept.replace(" ", "-")


EVERY_CHARACTER = string.ascii_letters[:4] + string.digits[:2] + string.punctuation + " \t\n\u00a0é"
# what each inline rule matches, so that generated content holds them whole
MARKUP = ["&amp;", "&#35;", "\\#", "`x`", "*x*", "_x_", "[x](y)", "[x]", "![x](y)", "<b>", "<a:b>"]
INLINE = st.lists(st.sampled_from([*EVERY_CHARACTER, *MARKUP]), max_size=20).map("".join)
EVERYTHING = re.compile("")  # matches any content: no fast path, every inline content parsed


def _children(text: str, fast: bool) -> list[list[MutableMapping[str, Any]]]:
    with pytest.MonkeyPatch.context() as patch:
        if not fast:
            patch.setattr(markdown, "_ACTIVE", EVERYTHING)
        tokens = parse(text).tokens
    return [[c.as_dict() for c in t.children or ()] for t in tokens if t.type == "inline"]


@PROFILE
@given(text=st.one_of(any_text, INLINE))
def test_inline_content_without_markup_is_one_text_token_as_the_parse_makes_it(text: str) -> None:
    """Red when a character at which an inline rule matches is missing from `_ACTIVE`: its
    content would be one text token where the parse makes a link, a break or an entity."""
    assert _children(text, fast=True) == _children(text, fast=False)


for _markup in [*MARKUP, "a\nb"]:  # each rule's markup alone, whatever the draw
    test_inline_content_without_markup_is_one_text_token_as_the_parse_makes_it = example(_markup)(
        test_inline_content_without_markup_is_one_text_token_as_the_parse_makes_it
    )


@pytest.mark.parametrize(
    "content",
    ["a\nb", "a\\#b", "a `b` c", "*a*", "_a_", "[a](b)", "<http://a.b>", "<b>", "a &amp; b"],
)
def test_each_active_character_is_one_some_content_needs(content: str) -> None:
    """The other way: content with one active character parses to more than its text."""
    assert markdown._ACTIVE.search(content) is not None
    alone: list[Token] = []
    markdown._plain_text(content, alone)
    assert _children(content, fast=False) != [[t.as_dict() for t in alone]]


BRACKETS = st.lists(
    st.sampled_from([*"[]()!<>&\\`*_~^ a\n:#", "[^", "](", "][", "<a>", "&amp;", "[x]: y\n"]),
    max_size=80,
).map("".join)


BLOCKS = st.lists(
    st.tuples(
        st.sampled_from(["", "", "  ", "    ", "> ", "- ", "1. ", "> - "]),
        st.sampled_from(
            [
                *"`~>*-_+#[<|=:",
                "```",
                "~~~",
                "***",
                "---",
                "___",
                "# h",
                "###### h",
                "1)",
                "2.",
                "[x]: y",
                "[^n]: z",
                "<div>",
                "<!-- c -->",
                "| a | b |",
                "|---|",
                "a | b",
                "===",
                "text",
                "",
                "\t",
                "9. x",
                "* a",
                "+ b",
                "- [ ] t",
            ]
        ),
    ),
    max_size=30,
).map(lambda lines: "\n".join(p + b for p, b in lines))


def _tokens(
    text: str, dispatched: bool, parser: Any = markdown.parser
) -> list[MutableMapping[str, Any]]:
    """Every token with its children and meta, from a parser built with its rules
    dispatched by character (`checkers.dispatch`) or in markdown-it's chains."""
    with pytest.MonkeyPatch.context() as patch:
        if not dispatched:
            patch.setattr(dispatch, "by_first_character", lambda md: False)
            patch.setattr(dispatch, "blocks_by_first_character", lambda md: False)
        md = parser.__wrapped__()
    return [t.as_dict() for t in md.parse(normalize(text), {})]


@PROFILE
@given(text=st.one_of(any_text, INLINE, BRACKETS, BLOCKS))
@example("[" * 25 + "a" + "]" * 25)  # past the nesting limit
@example("[a [a [a [a](b) [a][b] [[c]] <x> &amp; \\[ `[` *a* _b_ ~~c~~ ![i](j)")
@example("a\n- b\n1. c\n2) d\n# e\n> f\n```\ng\n```\n<div>\n\n[x]: y\n***\nh\n===")
def test_rules_dispatched_by_character_parse_as_the_chain(text: str) -> None:
    """Red when a rule is dispatched at fewer characters than it starts at (`_` dropped
    from emphasis, `&` from entity, `>` from blockquote, a digit from list): the dispatched
    parse misses what the chain finds. The blocks-only parsers too."""
    assert _tokens(text, dispatched=True) == _tokens(text, dispatched=False)
    for blocks in (markdown.block_parser, markdown.table_parser):
        assert _tokens(text, True, blocks) == _tokens(text, False, blocks)
