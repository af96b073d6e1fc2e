"""Prose paragraphs: caps on each one and a budget per page, never a cap on the file.

A prose paragraph is a run of paragraph lines with no other line between them, whatever
holds them: a paragraph, the list items that run on from it (or from each other) and
block-quote lines fold into one, because a tight bulleted or quoted run reads as one wall.
A blank line, heading, table, code block or HTML block ends the run. A paragraph that
opens with emphasis is prose like any other.

Length is visible text: link targets, markup, code spans and inline HTML do not count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from checkers.config import PageRules
from checkers.findings import Code, Finding, content_subject
from checkers.parsed import Parsed

if TYPE_CHECKING:
    from markdown_it.token import Token


@dataclass(frozen=True, slots=True)
class Prose:
    """One prose paragraph: 1-based first and last line, visible characters, and how many
    paragraphs it folds, of which in list items and in block quotes."""

    start: int
    end: int
    chars: int
    parts: int = 1
    items: int = 0
    quoted: int = 0

    def describe(self) -> str:
        """What a reader sees: a paragraph, or a run of list items or quoted lines."""
        span = f"line {self.start}" if self.start == self.end else f"lines {self.start}-{self.end}"
        if self.parts == 1:
            where = "list item" if self.items else "paragraph"
            return f"{'quoted ' if self.quoted else ''}prose {where} ({span})"
        plain = self.parts - self.items - self.quoted
        pieces = [
            _count(n, noun)
            for n, noun in (
                (plain, "paragraph"),
                (self.items, "list item"),
                (self.quoted, "quoted paragraph"),
            )
            if n
        ]
        return f"run of {' and '.join(pieces)} with no blank line between them ({span})"


_CONTAINERS = ("list_item_open", "list_item_close", "blockquote_open", "blockquote_close")


def _count(n: int, noun: str) -> str:
    return f"a {noun}" if n == 1 else f"{n} {noun}s"


def visible_length(children: list[Token] | None) -> int:
    """Characters a reader sees, excluding code spans, inline HTML and link targets."""
    total = 0
    for child in children or ():
        if child.type == "text":
            total += len(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            total += 1
        elif child.type == "image":
            total += visible_length(child.children)
    return total


def prose_paragraphs(parsed: Parsed) -> tuple[Prose, ...]:
    """Every prose paragraph, contiguous paragraph runs folded into one."""
    runs: list[Prose] = []
    tokens = parsed.tokens
    items = quotes = 0
    for i in parsed.of("paragraph_open", *_CONTAINERS):
        token = tokens[i]
        if token.type != "paragraph_open":
            if token.type.startswith("list_item_"):
                items += token.nesting
            else:
                quotes += token.nesting
            continue
        if not token.map:
            continue
        start, stop = token.map
        chars = visible_length(tokens[i + 1].children)
        item, quoted = int(items > 0), int(quotes > 0 and not items)
        if runs and runs[-1].end == start:
            last = runs[-1]
            runs[-1] = Prose(
                last.start,
                stop,
                last.chars + 1 + chars,
                last.parts + 1,
                last.items + item,
                last.quoted + quoted,
            )
        else:
            runs.append(Prose(start + 1, stop, chars, 1, item, quoted))
    return tuple(runs)


def check_prose(parsed: Parsed, rules: PageRules, path: str) -> list[Finding]:
    """FD103 for each paragraph over the cap; FD104 once, at the first over the budget."""
    findings = []
    runs = prose_paragraphs(parsed)
    cap = rules.max_paragraph_chars
    for run in runs:
        if cap and run.chars > cap:
            findings.append(
                Finding(
                    path,
                    run.start,
                    parsed.first_col(run.start),
                    Code.PARAGRAPH_TOO_LONG,
                    f"{run.describe()} has {run.chars} characters, over "
                    f"max_paragraph_chars {cap}; split it with a blank line or move the "
                    "detail into a table row",
                    content_subject(" ".join(parsed.lines[run.start - 1 : run.end])),
                )
            )
    budget = rules.max_prose_paragraphs
    if budget and len(runs) > budget:
        first = runs[budget]
        findings.append(
            Finding(
                path,
                first.start,
                parsed.first_col(first.start),
                Code.TOO_MANY_PARAGRAPHS,
                f"page has {len(runs)} prose paragraphs, over max_prose_paragraphs {budget}; "
                f"this is paragraph {budget + 1}: fold the surplus into tables or another page",
            )
        )
    return findings
