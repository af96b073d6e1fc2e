"""Differential test: what check-docs calls a link, an undefined reference or an undefined
footnote is what GitHub's renderer (cmark-gfm, with footnotes) renders as one, or leaves as
literal brackets, on generated pages (``strategies.reference_pages``).

Three views of a page are compared, in document order:

- the links and images: fidelity's ``links()`` hrefs against cmark-gfm's ``href``/``src``
  (footnote references aside), so a link fidelity checks is one GitHub renders, and back;
- FD403: each ``[text][label]`` or ``[text][]`` that cmark-gfm leaves as literal text (no
  link, code span or raw HTML inside or between the brackets, a label that is not blank and
  not a footnote's ``^``) against the labels fidelity reports undefined;
- FD405: each ``[^label]`` left as literal text against the footnotes fidelity reports.

cmark-gfm is a test dependency only. Escaped brackets are fed to it as ``⟦``/``⟧``: both are
plain text to a parser, and the oracle can tell them from brackets in its output.
"""

from __future__ import annotations

import html
import re

import cmarkgfm
from cmarkgfm.cmark import Options
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import reference_pages

from checkers.links import links
from checkers.markdown import parse

OPTIONS = Options.CMARK_OPT_FOOTNOTES | Options.CMARK_OPT_UNSAFE
OPAQUE = "\x00"  # a link, an image, a footnote reference, a code span, raw HTML
PARAGRAPH = "\x01"  # where a paragraph starts or ends
EMPHASIS = "\x02"  # may sit inside a reference's brackets, not between them
_PIECES = re.compile(
    r'<sup class="footnote-ref">.*?</sup>|<code>.*?</code>|<[^>]*>|&[a-z]+;|&#\d+;|[^<&]',
    re.DOTALL,
)
_TARGET = re.compile(r'(?:href|src)="([^"]*)"')


def _label(text: str) -> str:
    return " ".join(text.split()).lower()


def _paragraph_text(rendered: str) -> list[str]:
    """The paragraphs' text, one character each, tags turned into the markers above."""
    out = []
    for paragraph in re.findall(r"<p>.*?</p>", rendered, re.DOTALL):
        for match in _PIECES.finditer(paragraph):
            piece = match.group(0)
            if re.fullmatch(r"</?p>", piece):
                out.append(PARAGRAPH)
            elif re.fullmatch(r"</?(em|strong|del)>", piece):
                out.append(EMPHASIS)
            elif piece.startswith("<"):
                out.append(OPAQUE)
            else:
                out.append(html.unescape(piece))
    return out


def _opener(chars: list[str], close: int) -> int:
    """Index of the ``[`` that the ``]`` at ``close`` closes, with nothing opaque between."""
    depth = 0
    for k in range(close - 1, -1, -1):
        if chars[k] in (OPAQUE, PARAGRAPH):
            return -1
        if chars[k] == "]":
            depth += 1
        elif chars[k] == "[":
            if depth == 0:
                return k
            depth -= 1
    return -1


def _literal_references(chars: list[str]) -> list[str]:
    found = []
    for i, char in enumerate(chars[:-1]):
        if char != "]" or chars[i + 1] != "[":
            continue
        j = i + 2
        while j < len(chars) and chars[j] not in ("[", "]", OPAQUE, PARAGRAPH):
            j += 1
        start = _opener(chars, i)
        if j >= len(chars) or chars[j] != "]" or start < 0:
            continue
        text = "".join(chars[start + 1 : i]).replace(EMPHASIS, "")
        label = "".join(chars[i + 2 : j]).replace(EMPHASIS, "") or text
        if not (text.startswith("^") or label.startswith("^") or not label.strip()):
            found.append(_label(label))
    return found


def github_view(page: str) -> tuple[list[str], list[str], list[str]]:
    """(link and image targets, literal references' labels, literal footnotes' labels)."""
    source = page.replace("\\[", "\u27e6").replace("\\]", "\u27e7")
    rendered = cmarkgfm.github_flavored_markdown_to_html(source, options=OPTIONS)
    body = re.sub(r'<section class="footnotes".*</section>', "", rendered, flags=re.DOTALL)
    targets = [
        html.unescape(_TARGET.findall(tag)[0])
        for tag in re.findall(r"<(?:a|img) [^>]*>", body)
        if "data-footnote-ref" not in tag
    ]
    chars = _paragraph_text(body)
    text = "".join(chars).replace(EMPHASIS, OPAQUE)
    notes = [_label(m) for m in re.findall(r"\[\^([^\[\]\s\x00]+)\]", text)]
    return targets, _literal_references(chars), notes


def fidelity_view(page: str) -> tuple[list[str], list[str], list[str]]:
    parsed = parse(page)
    references, notes = [], []
    for token in parsed.tokens:
        references += [_label(label) for _, label in token.meta.get("undefined_references", ())]
        notes += [_label(label) for _, label in token.meta.get("undefined_footnotes", ())]
    return [link.href for link in links(parsed)], references, notes


@given(reference_pages())
@example("w[IRC][^IRC]\n\n[^IRC]: x\n")  # issue 23: literal [IRC], then the footnote
@example("w[text][label](u.md)\n\n")  # issue 23: literal [text], then the inline link
@example("w[^x][a] [^y](u.md)\n\n[a]: /a\n[^x]: x\n")  # a link, not a footnote, wins
@example("w[[^y]][b]\n\n[b]: /b\n[^y]: y\n")  # a footnote inside a link's text
@example("w[a][[A]] [c][\\][ c]\n\n[a]: /a\n")  # no label: a shortcut; an escaped ]
def test_links_and_undefined_references_are_what_github_renders(page: str) -> None:
    ours, theirs = fidelity_view(page), github_view(page)
    assert ours[0] == theirs[0], "links"
    assert ours[1] == theirs[1], "undefined references (FD403)"
    assert ours[2] == theirs[2], "undefined footnotes (FD405)"


def test_the_oracle_sees_each_form() -> None:
    """The oracle itself can fail: each kind of finding is seen where cmark-gfm leaves it."""
    page = "w[a][b] [c][] [d] [^n] [e](u.md) [f][g](v.md) `[h][i]`\n\n[^m]: m\n"
    assert github_view(page) == (["u.md", "v.md"], ["b", "c"], ["n"])
    assert fidelity_view(page) == github_view(page)


ITEM_STARTS = [
    "- ",
    "* ",
    "1. ",
    "2) ",
    "   - ",
    "-  ",
    "-\t",
    "> - ",
    "- - ",
    "-\n  ",
    "",
    "-     ",
]
BOXES = ["[x]", "[X]", "[ ]", "[\t]", "[y]", "[]", "\\[x]", "[x][y]", "[ x]"]
AFTER_BOX = [" a", "\ta", "", " ", "a", "\u00a0a", "\x0ba", " [x]", "[x]", "(u.md)", " [y]"]
task_lines = st.tuples(
    st.sampled_from(ITEM_STARTS), st.sampled_from(BOXES), st.sampled_from(AFTER_BOX)
).map("".join)


@given(st.lists(task_lines, min_size=1, max_size=4).map("\n".join))
@example("- [x] done")  # issue 36: a checkbox on GitHub, reported as a link to gone-x.md
@example("- [x] [x] and [x]done\n- [x]done\n- [x]")  # boxes, then links
@example("> - [x] a\n\n- - [x] b")  # cmark-gfm matches the box from the line's start
def test_task_list_boxes_are_links_exactly_where_github_renders_one(items: str) -> None:
    """A task-list item's `[x]` is a checkbox on GitHub, never a link, even where `[x]` is
    defined; anywhere else it is a link to the definition."""
    page = items + "\n\n[x]: gone-x.md\n[y]: gone-y.md\n"
    assert fidelity_view(page)[0] == github_view(page)[0]
