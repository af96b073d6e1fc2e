"""Headings: no per-attempt diary entries at any depth; optional canonical `## ` sections.

A dated or numbered-attempt heading turns a keyed record into a diary; the attempt belongs
in a row. The pattern is checked at every depth (1-6, ATX and setext), because moving the
entry one `#` deeper is the first workaround anyone tries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from checkers.config import PageRules
from checkers.findings import Code, Finding, clip
from checkers.parsed import Parsed


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading: depth 1-6, raw inline text, 1-based line and column."""

    level: int
    text: str
    line: int
    col: int


def _column(parsed: Parsed, line: int, markup: str, text: str) -> int:
    """Column of the ATX marker or, for setext headings, of the text, past any container."""
    source = parsed.lines[line - 1]
    found = source.find(markup if markup.startswith("#") else text[:1])
    return found + 1 if found >= 0 else parsed.first_col(line)


def headings(parsed: Parsed) -> tuple[Heading, ...]:
    """Every heading in document order (headings inside containers included)."""
    found = []
    tokens = parsed.tokens
    for i in parsed.of("heading_open"):
        token = tokens[i]
        if token.map:
            line = token.map[0] + 1
            text = tokens[i + 1].content.strip()
            found.append(
                Heading(int(token.tag[1]), text, line, _column(parsed, line, token.markup, text))
            )
    return tuple(found)


def check_headings(parsed: Parsed, rules: PageRules, path: str) -> list[Finding]:
    """FD201 forbidden per-attempt headings; FD202 `## ` sections outside the allowlist."""
    findings = []
    forbidden = re.compile(rules.forbidden_headings) if rules.forbidden_headings else None
    allowed = rules.canonical_sections
    for heading in headings(parsed):
        if forbidden and (match := forbidden.search(heading.text)):
            findings.append(
                Finding(
                    path,
                    heading.line,
                    heading.col,
                    Code.FORBIDDEN_HEADING,
                    f"per-attempt heading {clip(heading.text)!r} "
                    f"(matched {clip(match.group(0))!r}); "
                    "record the attempt as a row of a keyed table instead",
                    heading.text,
                )
            )
        if allowed is not None and heading.level == 2 and heading.text not in allowed:
            names = ", ".join(repr(name) for name in allowed) or "none"
            findings.append(
                Finding(
                    path,
                    heading.line,
                    heading.col,
                    Code.NON_CANONICAL_SECTION,
                    f"section {clip(heading.text)!r} is not canonical for this page; "
                    f"allowed: {names}",
                    heading.text,
                )
            )
    return findings
