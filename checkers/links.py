"""Links and images of a page, located in the source.

Only what markdown-it parses as a link, or an ``<a href>``/``<img src>``/``<source src>`` in
raw HTML, counts, so anything in a code block or code span is ignored by construction, and
so is anything inside an HTML comment (nothing renders it). Reference-style links are found
at their use site (markdown-it resolves them there). The column is the destination's when
it is written on the link, else the link's opening bracket.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from checkers.parsed import Parsed

if TYPE_CHECKING:
    from markdown_it.token import Token
from checkers.positions import Locator

_HTML_TARGET = re.compile(
    r"""<(?:a|img|source)\b[^>]*?\s(href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Link:
    """A link or image as parsed: 1-based line and column, raw href."""

    line: int
    col: int
    href: str
    kind: str


def without_comments(raw: str) -> str:
    """Raw HTML with every comment blanked out, newlines and offsets kept."""
    if "<!--" not in raw:
        return raw
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), raw)


def html_targets(raw: str) -> Iterator[tuple[int, str, str]]:
    """(offset, target, kind) of ``<a href>``, ``<img src>``, ``<source src>`` in raw HTML."""
    import html  # here: most pages hold no HTML link

    for match in _HTML_TARGET.finditer(without_comments(raw)):
        group = next(i for i in (2, 3, 4) if match.group(i) is not None)
        kind = "image" if match.group(1).lower() == "src" else "link"
        yield match.start(group), html.unescape(match.group(group)), kind


def _destination(content: str, child: Token, href: str) -> int:
    """Offset of a link's written destination, else of its first character."""
    start = child.meta["pos"]
    end = child.meta.get("end", len(content))
    label_end = content.find("](", start, end)
    if href and label_end >= 0:
        for needle in (href, unquote(href)):
            found = content.find(needle, label_end, end)
            if found >= 0:
                return found
    return int(start)


def _inline(token: Token) -> Iterator[tuple[int, str, str]]:
    """(offset, href, kind) of each link and image of an inline token."""
    content = token.content
    for child in token.children or ():
        if "pos" not in child.meta:
            continue
        if child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            yield _destination(content, child, href), href, "link"
        elif child.type == "image":
            src = str(child.attrs.get("src", ""))
            yield _destination(content, child, src), src, "image"
        elif child.type == "html_inline":
            for offset, target, kind in html_targets(child.content):
                yield child.meta["pos"] + offset, target, kind


def links(parsed: Parsed) -> tuple[Link, ...]:
    """Every link and image outside code and comments, in document order."""
    found = []
    where = Locator(parsed)
    for i in parsed.of("inline", "html_block"):
        token = parsed.tokens[i]
        inline = token.type == "inline"
        # a positioned child starts at its own '[' (link, image) or '<' (html_inline)
        if not token.map or (inline and "[" not in token.content and "<" not in token.content):
            continue
        for offset, href, kind in _inline(token) if inline else html_targets(token.content):
            line, col = where.at(token, offset, (href, unquote(href)))
            found.append(Link(line, col, href, kind))
    return tuple(found)
