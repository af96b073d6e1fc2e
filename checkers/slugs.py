"""Anchors a `#fragment` can land on, the way GitHub renders a Markdown file.

Headings get github-slugger's slug of their text content: lowercased, every character that
is not a letter, mark, decimal or letter number, connector punctuation (``_``), hyphen or
space removed, each space turned into ``-``; a repeat gets ``-1``, ``-2``, ... (skipping
slugs already taken). Explicit HTML ``id``/``name`` attributes count; ``{#id}`` attribute
syntax does not (GitHub ignores it). A footnote ``[^x]`` gives ``fn-x`` and ``fnref-x``
(GitHub prefixes every id with ``user-content-``; link checking accepts both).
Not guaranteed: emoji shortcodes (``:smile:``) are slugged as written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

from checkers.parsed import Parsed

if TYPE_CHECKING:
    from markdown_it.token import Token

_HTML_ANCHOR = re.compile(
    r"""<[A-Za-z][^>]*?\s(?i:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))"""
)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # unclosed: to the block's end


_KEPT_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "Pc"})


def _kept(ch: str) -> bool:
    return ch in " -" or unicodedata.category(ch) in _KEPT_CATEGORIES


_ASCII_DROPPED = re.compile(r"[^a-z0-9_ \-]")  # the ASCII characters _kept refuses, lower case


def slug(text: str) -> str:
    """github-slugger's slug of one heading's text content, before de-duplication. ASCII
    text takes one regular expression (its kept characters: letters, digits, ``_``, space
    and ``-``) instead of a category lookup a character."""
    lowered = text.lower()
    if lowered.isascii():
        return _ASCII_DROPPED.sub("", lowered).replace(" ", "-")
    return "".join(ch for ch in lowered if _kept(ch)).replace(" ", "-")


def unique_slugs(texts: Iterable[str]) -> tuple[str, ...]:
    """Slugs for headings in order, de-duplicated exactly as github-slugger does."""
    occurrences: dict[str, int] = {}
    out = []
    for text in texts:
        base = result = slug(text)
        while result in occurrences:
            occurrences[base] += 1
            result = f"{base}-{occurrences[base]}"
        occurrences[result] = 0
        out.append(result)
    return tuple(out)


def text_content(children: list[Token] | None) -> str:
    """What the rendered heading's ``textContent`` holds: text and code, no tags or alts."""
    parts = []
    for child in children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def html_anchors(html: str) -> set[str]:
    """Values of ``id`` and ``name`` attributes (HTML's names are case-blind: ``ID=``) in
    raw HTML, outside comments, which GitHub renders as nothing."""
    if "<!--" in html:
        html = _HTML_COMMENT.sub("", html)
    return {next(g for g in m.groups() if g is not None) for m in _HTML_ANCHOR.finditer(html)}


def anchors(parsed: Parsed) -> frozenset[str]:
    """Every fragment that lands somewhere in the page."""
    texts = []
    found: set[str] = set()
    tokens = parsed.tokens
    for i in parsed.of("footnote_reference_open", "heading_open", "html_block", "inline"):
        token = tokens[i]
        if token.type == "footnote_reference_open":
            label = token.meta["label"]
            found |= {f"fn-{label}", f"fnref-{label}"}
        elif token.type == "heading_open":
            texts.append(text_content(tokens[i + 1].children))
        elif token.type == "html_block":
            found |= html_anchors(token.content)
        elif token.type == "inline" and "<" in token.content:  # an html_inline's own '<'
            for child in token.children or ():
                if child.type == "html_inline":
                    found |= html_anchors(child.content)
    return frozenset(found.union(unique_slugs(texts)))
