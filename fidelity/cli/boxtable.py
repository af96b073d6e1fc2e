"""A report's table drawn as rich draws it off a terminal, without importing rich's table.

Off a terminal (a CI log, a pipe, a file) a console is `WIDE` and uncoloured, so rich's
table is plain geometry: a heavy head, one line a row, each column as wide as its widest
cell. Importing and laying out rich's table cost about 18 ms of a 77 ms `cases list`. This
draws the same characters for the common table, whose every cell, column name and title is
printable ASCII (one column a character, nothing to expand or fold) and which fits the
console; any other table, or a console that is a terminal, coloured or not UTF-8 (rich
draws an ASCII box there), returns None and rich draws it. A property test holds the two
to the same output.
"""

from __future__ import annotations

from collections.abc import Sequence


def _plain(text: str) -> bool:
    return text.isascii() and text.isprintable()


def _line(left: str, fill: str, middle: str, right: str, widths: Sequence[int]) -> str:
    return left + middle.join(fill * (w + 2) for w in widths) + right


def _cells(edge: str, texts: Sequence[str], widths: Sequence[int]) -> str:
    return edge + edge.join(f" {t.ljust(w)} " for t, w in zip(texts, widths, strict=True)) + edge


def drawn(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], width: int
) -> str | None:
    """The table as rich prints it to a plain console `width` columns wide (title, head,
    rows, bottom), or None when a text is not printable ASCII or the table is wider than
    the console (rich measures, folds and draws that one)."""
    texts = [columns, *rows]
    if not title or not columns or not all(_plain(t) for row in texts for t in row):
        return None
    if not _plain(title) or any(len(row) != len(columns) for row in rows):
        return None
    widths = [max(map(len, column)) for column in zip(*texts, strict=True)]
    if sum(widths) + 3 * len(widths) + 1 > width or len(title) > width:
        return None
    lines = [
        title,
        _line("┏", "━", "┳", "┓", widths),
        _cells("┃", columns, widths),
        _line("┡", "━", "╇", "┩", widths),
        *(_cells("│", row, widths) for row in rows),
        _line("└", "─", "┴", "┘", widths),
    ]
    return "".join(line + "\n" for line in lines)
