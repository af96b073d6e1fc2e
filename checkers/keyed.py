"""Keyed tables: one row per key, and every row as wide as the header.

A table is keyed when its page declares the key column (optionally under one heading) and
its header has that column. Cell counts are as written: markdown-it silently pads short
rows and drops extra cells, which is how a mis-piped row shifts a figure into the wrong
column unnoticed. A page that declares a key but has no such table is a finding too: the
rule must not pass by checking nothing.
"""

from __future__ import annotations

from checkers.config import KeyedTable, PageRules
from checkers.findings import Code, Finding, clip, content_subject
from checkers.tables import Row, Table


def _matches(table: Table, spec: KeyedTable) -> bool:
    heading_ok = spec.heading is None or table.heading == spec.heading
    return heading_ok and table.column(spec.key) is not None


def _check_table(table: Table, key: str, path: str) -> list[Finding]:
    findings = []
    index = table.column(key)
    assert index is not None
    width = table.header.cell_count
    seen: dict[str, Row] = {}
    for row in table.rows:
        if row.cell_count != width:
            findings.append(
                Finding(
                    path,
                    row.line,
                    row.col,
                    Code.CELL_COUNT,
                    f"row has {row.cell_count} cells, the header has {width}; "
                    "check for a missing or unescaped '|'",
                    content_subject(row.source),
                )
            )
        value = row.texts[index] if index < row.cell_count else ""
        col = row.cells[index].col if index < row.cell_count else row.col
        if not value:
            findings.append(
                Finding(
                    path,
                    row.line,
                    col,
                    Code.EMPTY_KEY,
                    f"row has an empty {clip(key)!r} key",
                    content_subject(row.source),
                )
            )
        elif value in seen:
            findings.append(
                Finding(
                    path,
                    row.line,
                    col,
                    Code.DUPLICATE_KEY,
                    f"duplicate {clip(key)!r} key {clip(value)!r} "
                    f"(first at line {seen[value].line}); "
                    "update that row instead of adding another",
                    value,
                )
            )
        else:
            seen[value] = row
    return findings


def check_keyed(tables: tuple[Table, ...], rules: PageRules, path: str) -> list[Finding]:
    """FD501 duplicate, FD502 cell count, FD503 empty key, FD504 no keyed table found."""
    findings = []
    for spec in rules.keyed_tables:
        matching = [t for t in tables if _matches(t, spec)]
        if not matching:
            under = f" under heading {clip(spec.heading)!r}" if spec.heading else ""
            findings.append(
                Finding(
                    path,
                    1,
                    1,
                    Code.NO_KEYED_TABLE,
                    f"no table with key column {clip(spec.key)!r}{under}, but the page "
                    "configuration declares one",
                )
            )
        for table in matching:
            findings.extend(_check_table(table, spec.key, path))
    return findings
