"""Source positions of offsets inside a token's content.

markdown-it gives block tokens a line range but no columns, and inline tokens nothing; the
inline rules that matter record ``meta["pos"]``, an offset into their inline token's
content (see ``checkers.markdown``). Content line ``k`` of an inline or HTML block token is
source line ``map[0] + k`` with container prefixes and indentation removed, so a column is
found by locating the content line in the source line (as its suffix, else by search).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checkers.parsed import Parsed

if TYPE_CHECKING:
    from markdown_it.token import Token


class Locator:
    """1-based (line, column) of content offsets; cheap for increasing offsets per token."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self._last: tuple[int, int, int] = (-1, 0, 0)  # (token id, offset, newlines before)
        # (token id, source line of content line 0, its column there or None)
        self._first: tuple[int, int, int | None] = (-1, 0, None)

    def _first_line(self, token: Token) -> int:
        """0-based source line of the content's first line. Usually ``map[0]``, but
        markdown-it strips a paragraph with ``str.strip()``, which also drops leading lines
        holding only Unicode spaces (U+00A0, U+2003) that CommonMark does not call blank."""
        assert token.map is not None
        if self._first[0] == id(token):
            return self._first[1]
        start = token.map[0]
        spare = token.map[1] - start - token.content.count("\n") - 1
        first = token.content.split("\n", 1)[0]
        found, base = start, None
        for line in range(start, min(start + spare, len(self.parsed.lines) - 1) + 1):
            base = _base(self.parsed.lines[line], first)
            if base is not None:
                found = line
                break
        self._first = (id(token), found, base)
        return found

    def _newlines(self, token: Token, pos: int) -> int:
        key, last, count = self._last
        if key == id(token) and pos >= last:
            count += token.content.count("\n", last, pos)
        else:
            count = token.content.count("\n", 0, pos)
        self._last = (id(token), pos, count)
        return count

    def at(self, token: Token, pos: int, needles: tuple[str, ...] = ()) -> tuple[int, int]:
        """Line and column of ``token.content[pos]`` in the source; when the content line
        is not found there as written (a table cell's ``\\|``), the first needle found."""
        assert token.map is not None
        content = token.content
        k = self._newlines(token, pos)
        line = min(self._first_line(token) + k, len(self.parsed.lines) - 1)
        start = content.rfind("\n", 0, pos) + 1
        stop = content.find("\n", pos)
        here = content[start : stop if stop >= 0 else len(content)]
        source = self.parsed.lines[line]
        first = self._first  # content line 0 was just located there: a link per paragraph
        base = first[2] if k == 0 and first[0] == id(token) and first[1] == line else None
        if base is None:
            base = _base(source, here)
        if base is None:
            found = next((i for i in (source.find(n) for n in needles if n) if i >= 0), -1)
            return line + 1, found + 1 if found >= 0 else self.parsed.first_col(line + 1)
        return line + 1, base + pos - start + 1


def _base(source: str, content_line: str) -> int | None:
    """0-based column in ``source`` where ``content_line`` starts, or None."""
    tail = content_line.rstrip()
    if not tail:
        return None
    trimmed = source.rstrip()
    if trimmed.endswith(tail):
        return len(trimmed) - len(tail)
    found = source.find(content_line)
    return found if found >= 0 else None
