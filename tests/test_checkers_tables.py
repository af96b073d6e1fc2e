"""checkers.tables: cells as written, escaped pipes, lines, headings, containers."""

from __future__ import annotations

from checkers.tables import parse_tables

RECORD = """\
# Records

## Scoreboard

| row | figure \\| unit | commit |
|---|---|---|
| r1 | 0.2 s \\| wall | abc123 |
| r2 | short
| r3 | a | b | extra |

> ### Quoted
> | q | w |
> |---|---|
> | 1 | 2 |
"""


def test_cells_lines_and_headings_as_written() -> None:
    first, quoted = parse_tables(RECORD)
    assert first.heading == "Scoreboard"
    assert first.line == 5
    assert first.columns == ("row", "figure | unit", "commit")
    assert [row.line for row in first.rows] == [7, 8, 9]
    assert [row.cell_count for row in first.rows] == [3, 2, 4]
    assert first.rows[0].texts == ("r1", "0.2 s | wall", "abc123")
    assert first.rows[0].source == "| r1 | 0.2 s \\| wall | abc123 |"
    assert first.column("commit") == 2
    assert first.column("missing") is None
    assert first.records()[1] == {"row": "r2", "figure | unit": "short", "commit": ""}
    assert quoted.heading == "Quoted"
    assert (quoted.header.line, quoted.header.col) == (12, 3)
    assert quoted.rows[0].cells[1].col == 9


def test_no_table_without_delimiter_row_or_inside_code() -> None:
    assert parse_tables("| a | b |\n| c | d |\n") == ()
    assert parse_tables("```\n| a | b |\n|---|---|\n```\n") == ()


def test_table_without_heading_and_pipe_in_code_span_splits_like_gfm() -> None:
    (table,) = parse_tables("| a | b |\n|---|---|\n| `x|y` | z |\n")
    assert table.heading is None
    assert table.rows[0].texts == ("`x", "y`", "z")


def test_cells_are_counted_as_markdown_it_splits_them() -> None:
    """cell_count (the table parse's fill-in limit) against markdown-it's escapedSplit on
    every row of up to 8 characters from a pipe, a backslash and a letter."""
    import itertools

    from markdown_it.rules_block.table import escapedSplit

    from checkers.tablerows import cell_count

    for size in range(1, 9):
        for chars in itertools.product("|\\a", repeat=size):
            row = "".join(chars)
            cells = escapedSplit(row)
            if cells and cells[0] == "":
                cells.pop(0)
            if cells and cells[-1] == "":
                cells.pop()
            assert cell_count(row) == len(cells), row
