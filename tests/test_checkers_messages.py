"""Messages stay short whatever a page holds (issue 36: an FD301 message of 200,156
characters, in every report and annotation). A value quoted from the page is cut at
``QUOTED`` characters, with an ellipsis and a count of the rest; no message is longer than
``MESSAGE_MAX`` with the default configuration."""

from __future__ import annotations

import pytest

from checkers.check import Page, check_text
from checkers.config import KeyedTable, PageRules
from checkers.findings import QUOTED, clip
from checkers.markdown import parse, parse_headings
from checkers.site import Site
from checkers.slugs import anchors

MESSAGE_MAX = 1_000
LONG = "x" * 200_000
RULES = PageRules(
    max_row_chars=0,
    max_cell_chars=5,
    max_paragraph_chars=0,
    max_prose_paragraphs=0,
    canonical_sections=("Usage",),
    keyed_tables=(KeyedTable("k" * 500),),
)
PAGES = {
    "FD301": "`" * 200_000 + "\ncode\n",
    "FD401": f"[a]({LONG}.md) ![b](/{LONG}.png)\n",
    "FD402": f"[a](#{LONG}) [b](page.md#{LONG}) [c](page.md?plain=1#L{'9' * 5000})\n",
    "FD403": f"[a][{'l' * 900}] [b][{'m ' * 400}]\n",
    "FD404": f"[a](../{LONG}.md)\n",
    "FD405": f"w [^{'n' * 5000}]\n",
    "FD201": f"## Attempt 2 {LONG}\n",
    "FD202": f"## Notes {LONG}\n",
    "FD102": f"| {'k' * 500} | {LONG} |\n|---|---|\n| {LONG} | b |\n| {LONG} | c |\n",
    "FD501": f"| {'k' * 500} |\n|---|\n| {LONG} |\n| {LONG} |\n",
    "FD504": "No table here.\n",
    "FD704": f"<!-- fidelity: {LONG} -->\n\n<!-- fidelity: disable {'FD9' * 9000} -->\n",
}


def test_clip_keeps_a_short_value_and_counts_what_it_cuts() -> None:
    assert clip("x" * QUOTED) == "x" * QUOTED
    assert clip("x" * (QUOTED + 1)) == "x" * QUOTED + "… (1 more character)"
    assert clip(LONG) == "x" * QUOTED + f"… ({200_000 - QUOTED:,} more characters)"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("site")
    (root / "page.md").write_text("# Page\n\nOne line.\n")
    return Site(root)


@pytest.mark.parametrize("code", PAGES)
def test_no_message_grows_with_the_page(code: str, site: Site) -> None:
    findings = check_text(PAGES[code], Page("page.md", "page.md"), RULES, site)
    assert code in {str(f.code) for f in findings}
    for finding in findings:
        assert len(finding.message) <= MESSAGE_MAX, (finding.code, finding.message[:300])
        assert "\n" not in finding.message
    cut = [f.message for f in findings if str(f.code) == code]
    assert all(" more character" in message for message in cut), cut


def test_an_unclosed_fence_of_200000_backticks_is_one_short_line(site: Site) -> None:
    (finding,) = check_text(PAGES["FD301"], Page("page.md", "page.md"), PageRules(), site)
    assert finding.message == (
        "unclosed " + "`" * QUOTED + f"… ({200_000 - QUOTED:,} more characters) fence swallows "
        "1 line to the end of the document; close it with a line of at least 200,000 '`' "
        "and nothing after them"
    )


def test_a_label_across_lines_is_quoted_on_one(site: Site) -> None:
    page = Page("page.md", "page.md")
    (finding,) = check_text("[text][two\nlines]\n", page, PageRules(), site)
    assert finding.render() == (
        "page.md:1:1: FD403 reference [two lines] is not defined; add a line "
        "'[two lines]: <target>' or fix the label"
    )


def test_a_line_anchor_of_5000_digits_is_past_the_file_not_a_traceback(site: Site) -> None:
    """int() refuses more than 4,300 digits: this link was a ValueError traceback."""
    text = f"[c](page.md?plain=1#L{'9' * 5000})\n"
    (finding,) = check_text(text, Page("page.md", "page.md"), PageRules(), site)
    assert finding.render() == (
        "page.md:1:5: FD402 line anchor '#L" + "9" * (QUOTED - 1) + f"… ({5001 - QUOTED:,} "
        "more characters)' is past page.md (3 lines)"
    )


HTML_ANCHORS = """# Target

<!-- <a id="old-section"></a> commented out -->

<!--
<a name="removed"></a>
-->

<a ID="legacy"></a> <A NAME="legacy2"></A> <div Id="mixed"></div>

Text <!-- <span id="inline-gone"> --> and <span iD="inline">here</span>.

<!-- unclosed, so to the end of this block
<a id="unclosed">
"""


@pytest.mark.parametrize("parse_page", [parse, parse_headings])
def test_html_anchors_are_read_case_blind_and_never_from_comments(parse_page) -> None:
    """GitHub renders a comment as nothing, and HTML's attribute names are case-blind: an
    id in a comment was an anchor (a false pass), and `ID=` was none (a false FD402)."""
    assert anchors(parse_page(HTML_ANCHORS)) == {
        "target", "legacy", "legacy2", "mixed", "inline"
    }  # fmt: skip
