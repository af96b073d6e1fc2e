"""Code blocks as CommonMark pairs them, and the unclosed fences among them.

A closing fence uses the opener's character, is at least as long, and has nothing but
spaces after it; one with an info string is content, not a closer. An unclosed fence runs
to the end of its container (list item, block quote) or of the document, which silently
turns everything after it into code, so it is reported at the opener with the number of
lines it swallowed.
"""

from __future__ import annotations

from dataclasses import dataclass

from checkers.findings import Code, Finding, clip
from checkers.parsed import Parsed

_CONTAINERS = {"blockquote_open": "block quote", "list_item_open": "list item"}


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A fenced or indented code block: 1-based first and last line, inclusive."""

    start: int
    end: int
    kind: str
    markup: str
    closed: bool
    container: str | None


def code_blocks(parsed: Parsed) -> tuple[CodeBlock, ...]:
    """Every code block markdown-it produced, in document order."""
    stack: list[str] = []
    blocks: list[CodeBlock] = []
    tokens = parsed.tokens
    kinds = ("fence", "code_block", *_CONTAINERS, "blockquote_close", "list_item_close")
    for i in parsed.of(*kinds):
        token = tokens[i]
        if token.type in _CONTAINERS:
            stack.append(_CONTAINERS[token.type])
        elif token.type in ("blockquote_close", "list_item_close"):
            stack.pop()
        elif token.type in ("fence", "code_block") and token.map:
            closed = token.type == "code_block" or bool(token.meta.get("closed"))
            container = stack[-1] if stack else None
            start, stop = token.map
            blocks.append(CodeBlock(start + 1, stop, token.type, token.markup, closed, container))
    return tuple(blocks)


def unclosed_fences(parsed: Parsed, path: str) -> list[Finding]:
    """FD301 at the opener of every fence that no closer ends."""
    findings = []
    for block in code_blocks(parsed):
        if block.closed:
            continue
        swallowed = block.end - block.start
        if block.end >= parsed.line_count or block.container is None:
            where = "the end of the document"
        else:
            where = f"the end of its {block.container}"
        noun = "line" if swallowed == 1 else "lines"
        findings.append(
            Finding(
                path,
                block.start,
                parsed.lines[block.start - 1].find(block.markup) + 1,
                Code.UNCLOSED_FENCE,
                f"unclosed {clip(block.markup)} fence swallows {swallowed} {noun} to {where}; "
                f"close it with a line of at least {len(block.markup):,} {block.markup[0]!r} "
                "and nothing after them",
            )
        )
    return findings
