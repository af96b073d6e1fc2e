"""Caps on each table entry: a row's source length and each cell's text.

Capping the entry rather than the file means adding a row never forces deleting someone
else's, and two concurrent additions cannot merge into a page that fails.
"""

from __future__ import annotations

from checkers.config import PageRules
from checkers.findings import Code, Finding, clip, content_subject
from checkers.tables import Table


def check_rows(tables: tuple[Table, ...], rules: PageRules, path: str) -> list[Finding]:
    """FD101 for rows over ``max_row_chars``; FD102 for cells over ``max_cell_chars``."""
    findings = []
    row_cap, cell_cap = rules.max_row_chars, rules.max_cell_chars
    for table in tables:
        for row in (table.header, *table.rows):
            if row_cap and len(row.source) > row_cap:
                findings.append(
                    Finding(
                        path,
                        row.line,
                        row.col,
                        Code.ROW_TOO_LONG,
                        f"table row has {len(row.source)} characters, over max_row_chars "
                        f"{row_cap}; shorten it or link to the detail",
                        content_subject(row.source),
                    )
                )
            if not cell_cap or len(row.source) <= cell_cap:
                continue  # no cell can be longer than its row
            for index, cell in enumerate(row.cells):
                if len(cell.text) > cell_cap:
                    name = table.columns[index] if index < len(table.columns) else index + 1
                    column = repr(clip(name)) if isinstance(name, str) else name
                    findings.append(
                        Finding(
                            path,
                            row.line,
                            cell.col,
                            Code.CELL_TOO_LONG,
                            f"cell in column {column} has {len(cell.text)} characters, over "
                            f"max_cell_chars {cell_cap}; shorten it or link to the detail",
                            f"{name}: {content_subject(cell.text)}",
                        )
                    )
    return findings
