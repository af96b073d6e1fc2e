"""Links and images: relative targets must exist, `#fragment`s must land on an anchor.

Only what markdown-it parses as a link, or an ``<a href>``/``<img src>``/``<source src>`` in
raw HTML, counts, so anything in a code block or code span is ignored by construction.
Reference-style links are checked at their use site (markdown-it resolves them there and
keeps no line for the definition). URLs with a scheme (``https:``,
``mailto:``) or a host (``//``) are never fetched. Hrefs are percent-decoded before they are
compared with the filesystem or with slugs. A path is tried against the page's directory,
then each of the page's ``link_bases`` (root-relative); ``/path`` is root-relative.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from markdown_it.token import Token

from checkers.findings import Code, Finding
from checkers.markdown import Parsed

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HTML_TARGET = re.compile(
    r"""<(?:a|img|source)\b[^>]*?\s(href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""",
    re.IGNORECASE,
)
MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class Link:
    """A link or image as parsed: 1-based line and column, raw href."""

    line: int
    col: int
    href: str
    kind: str


@dataclass(frozen=True, slots=True)
class Target:
    """A local link target: decoded root-relative candidates tried in order, and fragment."""

    path: str
    fragment: str


def _breaks(children: list[Token] | None) -> int:
    return sum(1 for c in children or () if c.type in ("softbreak", "hardbreak"))


def _html_links(raw: str) -> Iterator[tuple[int, str, str]]:
    """(line offset, target, kind) for ``<a href>``, ``<img src>``, ``<source src>`` in HTML."""
    for match in _HTML_TARGET.finditer(raw):
        value = next(g for g in match.groups()[1:] if g is not None)
        kind = "image" if match.group(1).lower() == "src" else "link"
        yield raw.count("\n", 0, match.start()), html.unescape(value), kind


def _inline_links(token: Token) -> Iterator[tuple[int, str, str]]:
    """(line offset, href, kind) for each link and image of an inline token."""
    offset = 0
    for child in token.children or ():
        if child.type in ("softbreak", "hardbreak"):
            offset += 1
        elif child.type == "link_open":
            yield offset, str(child.attrs.get("href", "")), "link"
        elif child.type == "image":
            yield offset, str(child.attrs.get("src", "")), "image"
            offset += _breaks(child.children)
        elif child.type == "html_inline":
            for extra, target, kind in _html_links(child.content):
                yield offset + extra, target, kind


def _column(text: str, href: str, cursor: int) -> int:
    """0-based column of the href at or after ``cursor``, else of the first bracket."""
    for needle in (href, unquote(href)):
        found = text.find(needle, cursor) if needle else -1
        if found >= 0:
            return found
    found = text.find("[", cursor)
    return found if found >= 0 else len(text) - len(text.lstrip())


def links(parsed: Parsed) -> tuple[Link, ...]:
    """Every link and image outside code (Markdown or raw HTML), in document order."""
    found = []
    cursors: dict[int, int] = {}
    for token in parsed.tokens:
        if not token.map or token.type not in ("inline", "html_block"):
            continue
        inline = token.type == "inline"
        for offset, href, kind in _inline_links(token) if inline else _html_links(token.content):
            line = token.map[0] + offset
            text = parsed.lines[line] if line < len(parsed.lines) else ""
            col = _column(text, href, cursors.get(line, 0))
            cursors[line] = col + 1
            found.append(Link(line + 1, col + 1, href, kind))
    return tuple(found)


def local_target(href: str) -> Target | None:
    """The decoded path and fragment of a local href; None for external URLs."""
    if _SCHEME.match(href) or href.startswith("//"):
        return None
    path, _, fragment = href.partition("#")
    path = path.partition("?")[0]
    return Target(unquote(path), unquote(fragment))


Exists = Callable[[str], bool]
AnchorsOf = Callable[[str], frozenset[str] | None]


def _join(base: str, path: str) -> str:
    parts: list[str] = []
    for part in f"{base}/{path}".split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or "."


def candidates(page: str, path: str, link_bases: tuple[str, ...]) -> tuple[str, ...]:
    """Root-relative paths a link's path may mean, in the order they are tried."""
    if path.startswith("/"):
        return (_join("", path),)
    page_dir = page.rpartition("/")[0]
    return tuple(dict.fromkeys(_join(base, path) for base in (page_dir, *link_bases)))


def check_link(
    link: Link, page: str, link_bases: tuple[str, ...], exists: Exists, anchors_of: AnchorsOf
) -> tuple[Code, str] | None:
    """None when the link resolves, else (code, message)."""
    target = local_target(link.href)
    if target is None:
        return None
    if target.path:
        tried = candidates(page, target.path, link_bases)
        found = next((c for c in tried if exists(c)), None)
        if found is None:
            where = ", ".join(tried)
            return Code.MISSING_FILE, f"{link.kind} target {target.path!r} does not exist ({where})"
    else:
        found = page
    if not target.fragment or target.fragment.lower() == "top":
        return None
    known = anchors_of(found)
    if known is None or target.fragment in known:
        return None
    return Code.MISSING_ANCHOR, f"no anchor '#{target.fragment}' in {found}" + _hint(
        target.fragment, known
    )


def _hint(fragment: str, known: frozenset[str]) -> str:
    close = difflib.get_close_matches(fragment, sorted(known), n=1)
    return f"; did you mean '#{close[0]}'?" if close else ""


def check_links(
    parsed: Parsed,
    page: str,
    path: str,
    link_bases: tuple[str, ...],
    exists: Exists,
    anchors_of: AnchorsOf,
) -> list[Finding]:
    """FD401 for missing files, FD402 for fragments with no anchor."""
    findings = []
    for link in links(parsed):
        problem = check_link(link, page, link_bases, exists, anchors_of)
        if problem is not None:
            code, message = problem
            findings.append(Finding(path, link.line, link.col, code, message))
    return findings
