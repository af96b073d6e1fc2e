"""GFM tables of a Markdown text, as written in the source.

Stable API (``fidelity stale`` and the keyed-table checks build on it)::

    parse_tables(text) -> tuple[Table, ...]        # every table, in document order
    tables_in(parsed)  -> tuple[Table, ...]        # same, from a checkers.markdown.parse()
    Table.heading      # text of the nearest preceding heading (any depth), or None
    Table.line         # 1-based source line of the header row
    Table.header       # Row: the header row
    Table.rows         # tuple[Row, ...]: body rows (the delimiter row is not a row)
    Table.columns      # tuple[str, ...]: header cell texts
    Table.column(name) # index of a header cell by exact text, or None
    Table.records()    # tuple[dict[str, str], ...]: body rows keyed by header text
    Row.line, Row.col  # 1-based source line and column of the row's first character
    Row.source         # the row as written, without container prefix or outer whitespace
    Row.cells          # tuple[Cell, ...] as written: never padded or truncated
    Row.cell_count     # len(cells), to compare with the header's
    Row.texts          # tuple[str, ...] of cell texts
    Cell.text, Cell.col

Cells are split the way markdown-it-py (and GFM) split them: at every ``|`` not preceded
by a backslash, even inside code spans; ``\\|`` becomes ``|`` in the cell text. A cell's
text is stripped of surrounding whitespace and otherwise raw Markdown (emphasis markers,
backticks and link syntax stay). Tables inside lists and block quotes are included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checkers.parsed import Parsed

if TYPE_CHECKING:
    from markdown_it.token import Token


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell's stripped text and its 1-based source column."""

    text: str
    col: int


@dataclass(frozen=True, slots=True)
class Row:
    """One table row as written (header or body); cells are split when first asked for."""

    line: int
    col: int
    source: str
    _split: list[tuple[Cell, ...]] = field(default_factory=list, compare=False, repr=False)

    @property
    def cells(self) -> tuple[Cell, ...]:
        if not self._split:
            self._split.append(split_cells(self.source, self.col))
        return self._split[0]

    @property
    def cell_count(self) -> int:
        return len(self.cells)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(cell.text for cell in self.cells)


@dataclass(frozen=True, slots=True)
class Table:
    """A GFM table: header, body rows and the heading it sits under."""

    heading: str | None
    header: Row
    rows: tuple[Row, ...]

    @property
    def line(self) -> int:
        return self.header.line

    @property
    def columns(self) -> tuple[str, ...]:
        return self.header.texts

    def column(self, name: str) -> int | None:
        """Index of the header cell whose text is exactly ``name``."""
        try:
            return self.columns.index(name)
        except ValueError:
            return None

    def records(self) -> tuple[dict[str, str], ...]:
        """Body rows as header-text -> cell-text; missing cells are ``""``, extras dropped."""
        names = self.columns
        return tuple(
            {name: (row.texts[i] if i < row.cell_count else "") for i, name in enumerate(names)}
            for row in self.rows
        )


_PIPE = re.compile(r"(?<!\\)\|")


def split_cells(source: str, col: int) -> tuple[Cell, ...]:
    """Split a trimmed row into cells like markdown-it's ``escapedSplit``; ``col`` is 1-based.

    A pipe is escaped when the character before it is a backslash (markdown-it does not
    count backslashes), and ``\\|`` becomes ``|`` in the cell text.
    """
    from checkers.tablerows import TRIM  # rows are split after a parse: markdown-it is loaded

    pieces: list[tuple[str, int]] = []
    start = 0
    for match in _PIPE.finditer(source):
        pieces.append((source[start : match.start()], start))
        start = match.end()
    pieces.append((source[start:], start))
    if pieces and not pieces[0][0]:
        pieces.pop(0)
    if pieces and not pieces[-1][0]:
        pieces.pop()
    cells = []
    for raw, offset in pieces:
        lead = len(raw) - len(raw.lstrip(TRIM))
        cells.append(Cell(raw.strip(TRIM).replace("\\|", "|"), col + offset + lead))
    return tuple(cells)


def _row(meta_row: tuple[int, int, str]) -> Row:
    line, col, source = meta_row
    return Row(line + 1, col + 1, source)


def tables_in(parsed: Parsed) -> tuple[Table, ...]:
    """Every table of a parse, in document order."""
    found: list[Table] = []
    heading: str | None = None
    tokens = parsed.tokens
    for i in parsed.of("heading_open", "table_open"):
        token = tokens[i]
        if token.type == "heading_open":
            heading = _inline_content(tokens, i + 1)
        elif token.type == "table_open":
            rows = tuple(_row(r) for r in token.meta.get("rows", ()))
            if rows:
                found.append(Table(heading, rows[0], rows[1:]))
    return tuple(found)


def _inline_content(tokens: tuple[Token, ...], index: int) -> str:
    if index < len(tokens) and tokens[index].type == "inline":
        return tokens[index].content.strip()
    return ""


def parse_tables(text: str) -> tuple[Table, ...]:
    """Every GFM table of a Markdown text, in document order (from a parse that reads
    tables and headings alone: the tables ``tables_in(parse(text))`` finds, for less)."""
    from checkers.markdown import parse_tables_only

    return tables_in(parse_tables_only(text))
