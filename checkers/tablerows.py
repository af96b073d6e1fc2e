"""What markdown-it's table rule takes of a page, without the tokens it pushes.

``rows_of`` gives a table's header and body rows as written: ``(line, col, text)``, ``text``
without the container prefix and surrounding whitespace (``checkers.markdown`` attaches them
to every ``table_open`` as ``meta["rows"]``). ``rows_only_table`` wraps the table rule for a
parse that wants the rows alone (``checkers.tables.parse_tables``: merge-records and
``stale`` read 100,000-row records): it lets the rule decide where a table starts, then
finds where it ends the way the rule does (its terminators, a blank or indented-code line,
the limit on cells filled in) and pushes one ``table_open`` and one ``table_close`` instead
of a dozen tokens a row. A property test holds both parses to the same tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it.rules_block.state_block import StateBlock

BlockRule = Callable[[StateBlock, int, int, bool], bool]

try:  # what the table rule trims: CommonMark whitespace, not str.isspace()
    from markdown_it.common.utils import MD_TRIM_CHARS

    TRIM: str | None = MD_TRIM_CHARS
except ImportError:  # markdown-it-py < 4 trimmed table lines with str.strip()
    TRIM = None

try:  # the table rule stops a table that would fill in more cells (markdown-it-py >= 4)
    from markdown_it.rules_block.table import MAX_AUTOCOMPLETED_CELLS

    MAX_FILLED_CELLS: int = MAX_AUTOCOMPLETED_CELLS
except ImportError:  # pragma: no cover - markdown-it-py 3.0.0: no limit
    MAX_FILLED_CELLS = 2**63


def line_text(state: StateBlock, line: int) -> tuple[int, str]:
    """(0-based column, text) of a line after the container prefix the parser stripped."""
    start = state.bMarks[line] + state.tShift[line]
    line_start = state.src.rfind("\n", 0, start) + 1
    return start - line_start, state.src[start : state.eMarks[line]]


def rows_of(state: StateBlock, first: int, stop: int) -> tuple[tuple[int, int, str], ...]:
    """``(line, col, text)`` of a table's header and body rows (lines first..stop)."""
    rows = []
    for line in range(first, stop):
        if line != first + 1:  # the delimiter row carries no cells
            col, text = line_text(state, line)
            stripped = text.lstrip(TRIM)
            rows.append((line, col + len(text) - len(stripped), stripped.rstrip(TRIM)))
    return tuple(rows)


_SEPARATOR = re.compile(r"(?<!\\)\|")  # a pipe not right after a backslash, as escapedSplit


def cell_count(row: str) -> int:
    """Cells of a trimmed, non-empty row as the table rule counts them: markdown-it's
    ``escapedSplit`` pieces, minus an empty first and an empty last one."""
    pieces = len(_SEPARATOR.findall(row)) + 1
    first_empty = row.startswith("|")
    last_empty = pieces - first_empty > 0 and _SEPARATOR.match(row, len(row) - 1) is not None
    return pieces - first_empty - last_empty


def _body_end(state: StateBlock, start: int, end: int) -> int:
    """The line after a table's last body row, found the way the table rule finds it: its
    terminators, a blank or indented-code line, or too many cells to fill in."""
    width = cell_count(line_text(state, start)[1].strip(TRIM))
    terminators = state.md.block.ruler.getRules("blockquote")
    parent, state.parentType = state.parentType, "table"  # what the terminators see there
    line, filled = start + 2, 0
    while line < end and state.sCount[line] >= state.blkIndent:
        if any(terminate(state, line, end, True) for terminate in terminators):
            break
        text = line_text(state, line)[1].strip(TRIM)
        if not text or state.is_code_block(line):
            break
        filled += width - cell_count(text)
        if filled > MAX_FILLED_CELLS:
            break
        line += 1
    state.parentType = parent
    return line


def rows_only_table(rule: BlockRule) -> BlockRule:
    """The table rule's rows without its dozen tokens a row: one ``table_open`` carrying
    ``meta["rows"]`` as the full parse gives it, and its ``table_close``."""

    def table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if not rule(state, start, end, True):
            return False
        if silent:
            return True
        stop = _body_end(state, start, end)
        token = state.push("table_open", "table", 1)
        token.map = [start, stop]
        token.meta["rows"] = rows_of(state, start, stop)
        state.push("table_close", "table", -1)
        state.line = stop
        return True

    return table
