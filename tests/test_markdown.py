"""Markdown that case text cannot break (fidelity/markdown.py), judged by a real parser.

markdown-it-py with GitHub's tables and strikethrough parses each escaped text in the
places reports put it (mid-line, a table cell, a list item); it must come back as plain
text equal to what was escaped, with no HTML, emphasis, code, link or extra cell made of
it, and no control character left raw.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from fidelity.markdown import CUT_NOTE, code, defuse, fit, inline
from fidelity.text import visible

MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")
HOSTILE = {
    "closes-details": "</details><script>x</script>",
    "img-onerror": '<img src=x onerror="alert(1)">',
    "open-comment": "<!-- open comment",
    "inline-syntax": "*em* __strong__ `code` ~~gone~~ [link](http://x) ![i](y) <http://auto>",
    "entities": "&amp; &#60; &lt;",
    "pipes": "a | b || c",
    "heading": "# heading",
    "ordered": "1. list",
    "ordered-paren": "2) list",
    "bullet": "- item",
    "plus": "+ item",
    "quote": "> quote",
    "setext": "===",
    "fence": "```fence",
    "tilde-fence": "~~~fence",
    "backslashes": "\\ backslash \\* \\",
    "math": "$x^2$",
    "controls": "nul\x00 esc\x1b[31m cr\r lf\n del\x7f csi\x9b rtl\u202e",
}
texts = st.text(
    st.characters(codec="utf-8") | st.sampled_from(list("<>&*_`|~$#-+=.)!\\[]( \t\n\r\x00\x1b"))
)


def spanned(text: str) -> str:
    """What a code span must hold: one line, control characters as escapes."""
    return visible(text.replace("\r\n", " ").replace("\r", " ").replace("\n", " "))


def shown(text: str) -> str:
    """What a reader must see of inline text: that, and an invisible word joiner after each
    `@`, `www` and URL scheme (`defuse`: code spans make no mention or link)."""
    return defuse(spanned(text))


def inline_tokens(source: str) -> list[Token]:
    return [t for t in MD.parse(source) if t.type == "inline"]


def plain(token: Token) -> str:
    kinds = {child.type for child in token.children or []}
    assert kinds <= {"text"}, f"{kinds} made of {token.content!r}"
    return "".join(child.content for child in token.children or [])


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_text_is_text_in_a_paragraph(text: str) -> None:
    (token,) = inline_tokens(f"x {inline(text)} x")
    assert plain(token) == f"x {shown(text)} x"


@example("a|b\\|c")
@given(texts)
def test_any_text_is_text_mid_line(text: str) -> None:
    (token,) = inline_tokens(f"x {inline(text)} x")
    assert plain(token) == f"x {shown(text)} x"


@example("| x |")
@given(texts)
def test_any_text_is_one_table_cell(text: str) -> None:
    tokens = MD.parse(f"| a | b |\n|---|---|\n| {inline(text)} | z |\n")
    cells = [t for t in tokens if t.type == "inline"]
    assert len(cells) == 4, "the escaped text made or swallowed a cell"
    assert plain(cells[2]) == shown(text).strip() and plain(cells[3]) == "z"


@example("1. x")
@example("# x")
@given(texts.map(lambda t: t.lstrip(" \t\n\r")))
def test_any_text_at_a_line_start_opens_no_block(text: str) -> None:
    """A list item's text, or a line of its own, is never a heading, list, quote or fence."""
    item = MD.parse(f"- {inline(text)}\n")
    assert [t.type for t in item].count("bullet_list_open") == 1
    assert {t.type for t in item} <= {
        "bullet_list_open",
        "list_item_open",
        "paragraph_open",
        "inline",
        "paragraph_close",
        "list_item_close",
        "bullet_list_close",
    }
    if text.strip():
        (token,) = inline_tokens(inline(text))
        assert plain(token) == shown(text).strip()


@example("`")
@example(" a ")
@example("x``y`")
@given(texts.filter(lambda t: spanned(t).strip(" ")))
def test_a_code_span_holds_any_text(text: str) -> None:
    tokens = inline_tokens(f"x {code(text)} x")
    (token,) = tokens
    spans = [c for c in token.children or [] if c.type == "code_inline"]
    assert len(spans) == 1 and spans[0].content == spanned(text)


def test_a_code_span_in_a_table_keeps_its_cell() -> None:
    tokens = MD.parse(f"| a |\n|---|\n| {code('x|y', in_table=True)} |\n")
    (cell,) = [t for t in tokens if t.type == "inline"][1:]
    (span,) = [c for c in cell.children or [] if c.type == "code_inline"]
    assert span.content == "x|y"


@given(st.text(st.characters(codec="utf-8") | st.just("\n"), max_size=400), st.integers(0, 500))
def test_fit_keeps_the_limit_and_says_when_it_cut(text: str, limit: int) -> None:
    got = fit(text, limit)
    assert len(got.encode()) <= limit
    if len(text.encode()) <= limit:
        assert got == text
    elif got:
        assert got.endswith(CUT_NOTE) and text.startswith(got[: -len(CUT_NOTE)])


def test_no_mention_or_bare_link_survives_for_a_pr_comment() -> None:
    """`@octocat` in a value or a key would ping that person from a PR comment, and GFM
    made `https://...`, `www....` and `a@b.co` live links (cmark-gfm, GitHub's parser)."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    text = "ping @octocat @org/team see https://evil.example/x.png www.evil.example a@b.co"
    html = cmarkgfm.github_flavored_markdown_to_html(f"| a |\n|---|\n| {inline(text)} |\n")
    html += cmarkgfm.github_flavored_markdown_to_html(
        f"x {inline(text)} x\n", options=Options.CMARK_OPT_UNSAFE
    )
    assert "<a " not in html and "@octocat" not in html and "@org" not in html, html
    assert html.replace("\u2060", "").count("https://evil.example/x.png") == 2


def test_a_junit_file_keeps_no_text_direction_override_raw() -> None:
    """An `[[accept]] why` with U+202E reached the JUnit file raw (ESC was escaped): a CI
    page would show the rest of the line reversed."""
    import xml.etree.ElementTree as ET

    from fidelity.report_junit import JUnitCase, to_xml

    hostile = "why \u202eevil\u2066 \x1b[2J\ufffe"
    data = to_xml("s", [JUnitCase(hostile, hostile, error=hostile, output=hostile)], {"p": hostile})
    ET.fromstring(data)
    text = data.decode()
    assert not any(c in text for c in "\u202e\u2066\x1b\ufffe"), text
