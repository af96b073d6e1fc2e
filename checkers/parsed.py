"""What a parse returns, importable without markdown-it (a cached re-run never loads it).

``checkers.markdown`` parses; the rules read a ``Parsed``: the normalized text, its lines,
the tokens and where each type of top-level token is, so that a rule walks only its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

BUDGET = "fidelity_token_budget"  # env key: [tokens left], None when the parse is unbounded
UNREAD = "fidelity:unread"  # env key: [(first line, last line, col)] of blocks not read (0-based)
UNREAD_INLINE = "fidelity:unread-inline"  # env key: inline tokens with meta["unread"] (an offset)

# How deep the parser follows a page; past it, the part not read is reported (FD706).
# markdown-it's own limit (20 for both) dropped a whole page's tail after a list ten deep.
# Blocks recurse three Python frames a level, brackets about six, so both stay far below
# Python's recursion limit; brackets also cost time a level at each '[' (markdown-it tries
# each one as a link): 50,000 of them take 1.4 s at 20 levels and 7.5 s at 100.
BLOCK_NESTING = 100  # a quote is one level, a list two (the list and its item)
INLINE_NESTING = 20  # brackets, each one a link that may hold the next


class TooDense(Exception):
    """The page holds more tokens than its budget allows; the parse stopped."""


class ParserFailed(Exception):
    """markdown-it-py raised on the page (a bug of its own: 4.3.0 indexes past the end of
    the text in some lists of HTML blocks inside quotes); the message names what it raised."""


@contextmanager
def parser_failures() -> Iterator[None]:
    """An exception raised in markdown-it-py's own code as ``ParserFailed``: the page is
    reported as not checked (FD707), and the run goes on to the next page. One raised in
    the checkers' own code stays what it is, an internal error to report."""
    try:
        yield
    except (TooDense, ParserFailed):
        raise
    except Exception as exc:
        if not _raised_in_markdown_it(exc):
            raise
        raise ParserFailed(f"{type(exc).__name__}: {exc}") from exc


def _raised_in_markdown_it(exc: Exception) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename if tb is not None else ""
    return f"{os.sep}markdown_it{os.sep}" in where


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parse: the normalized text, its lines, tokens, reference and footnote labels, and
    where each type of top-level token is (``of``), so that a rule looks only at its own.
    ``unread`` holds what nesting past ``BLOCK_NESTING`` kept the parser from reading (0-based
    first and last line, column); ``unread_inline`` the inline tokens whose brackets went
    past ``INLINE_NESTING`` (``meta["unread"]``: the offset where the parser gave up)."""

    text: str
    lines: tuple[str, ...]
    tokens: tuple[Token, ...]
    references: frozenset[str]
    footnotes: frozenset[str] = frozenset()
    unread: tuple[tuple[int, int, int], ...] = ()
    unread_inline: tuple[Token, ...] = ()
    index: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.tokens and not self.index:
            index = self.index
            for i, token in enumerate(self.tokens):
                found = index.get(token.type)
                if found is None:
                    index[token.type] = [i]
                else:
                    found.append(i)

    def of(self, *types: str) -> tuple[int, ...]:
        """Indices of the tokens of these types, in document order."""
        found: list[int] = []
        for kind in types:
            found += self.index.get(kind, ())
        if len(types) > 1:
            found.sort()
        return tuple(found)

    @property
    def line_count(self) -> int:
        """Physical lines; a final newline does not start another one."""
        return len(self.lines) - (1 if self.text.endswith("\n") or not self.text else 0)

    def first_col(self, line: int) -> int:
        """1-based column of the first non-blank character of 1-based ``line``."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text) - len(text.lstrip()) + 1
