"""Did a merge keep every keyed record row? (pure; the merge may have been made by anyone).

`fidelity merge-records` merges keyed tables by key, but git runs it only where it is
configured: a merge made on a forge's web page, in an editor's conflict view ("keep ours"),
or on a machine without the driver gets git's text merge or a person's choice. This audit
judges the result against the merge base and every parent, row by row, with the driver's
own rules: a key that no parent changed keeps the base's row (or stays absent); a key that
exactly one version of change touched takes that change (added, changed or deleted); a key
that parents changed in different ways is a conflict a person resolved, so any resolution
passes except losing a row that every changing parent kept. A key may appear once.

Tables are matched across versions by (heading, key column, how many such tables came
before it), as the driver matches them: renaming a table's heading on one side makes its
rows look lost from the old heading. Rows are compared by their cells, not their spacing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checkers.tables import Table, parse_tables

Ident = tuple[str | None, str, int]
Cells = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a record: its label (a commit, `the base`) and its text, or None when
    that version has no such file."""

    label: str
    text: str | None


@dataclass(frozen=True, slots=True)
class Problem:
    line: int  # in the merged text; 0 when the row is not there
    message: str


@dataclass(frozen=True, slots=True)
class _Rows:
    cells: dict[str, Cells]  # key -> the first row's cells
    lines: dict[str, list[int]]  # key -> every line the key is on


def _key_index(table: Table, keys: Sequence[str]) -> tuple[str, int] | None:
    for key in keys:
        index = table.column(key)
        if index is not None:
            return key, index
    return None


def tables(text: str | None, keys: Sequence[str]) -> dict[Ident, _Rows]:
    """Every table with a key column, by identity; rows without a key are left out."""
    found: dict[Ident, _Rows] = {}
    seen: dict[tuple[str | None, str], int] = {}
    for table in parse_tables(text or ""):
        column = _key_index(table, keys)
        if column is None:
            continue
        name, index = column
        seen[(table.heading, name)] = seen.get((table.heading, name), 0) + 1
        rows = _Rows({}, {})
        for row in table.rows:
            key = row.texts[index].strip() if index < row.cell_count else ""
            if not key:
                continue
            rows.cells.setdefault(key, tuple(t.strip() for t in row.texts))
            rows.lines.setdefault(key, []).append(row.line)
        found[(table.heading, name, seen[(table.heading, name)])] = rows
    return found


def duplicates(text: str, keys: Sequence[str]) -> list[Problem]:
    """A key held by more than one row of a table."""
    problems = []
    for (heading, name, _), rows in tables(text, keys).items():
        for key, lines in rows.lines.items():
            if len(lines) > 1:
                where = f" under {heading!r}" if heading else ""
                shown = ", ".join(str(n) for n in lines)
                problems.append(
                    Problem(
                        lines[1],
                        f"{name} {key!r}{where} is on {len(lines)} rows (lines {shown}); keep one",
                    )
                )
    return problems


def audit(
    base: Version, parents: Sequence[Version], merged: str, keys: Sequence[str]
) -> list[Problem]:
    """Every row the merge lost, kept against a deletion, or changed on its own, and every
    duplicated key, located in the merged text."""
    result = tables(merged, keys)
    versions = [tables(base.text, keys)] + [tables(p.text, keys) for p in parents]
    problems = duplicates(merged, keys)
    idents = dict.fromkeys([i for v in (*versions, result) for i in v])
    for ident in idents:
        old = versions[0].get(ident, _Rows({}, {}))
        sides = [v.get(ident, _Rows({}, {})) for v in versions[1:]]
        new = result.get(ident, _Rows({}, {}))
        every = dict.fromkeys([*old.cells, *(k for s in sides for k in s.cells), *new.cells])
        for key in every:
            why = _judge(
                old.cells.get(key), [s.cells.get(key) for s in sides], new.cells.get(key), parents
            )
            if why:
                line = new.lines.get(key, [0])[0]
                where = f" under {ident[0]!r}" if ident[0] else ""
                problems.append(Problem(line, f"{ident[1]} {key!r}{where}: {why}"))
    return sorted(problems, key=lambda p: p.line)


def _judge(
    old: Cells | None, sides: Sequence[Cells | None], got: Cells | None, parents: Sequence[Version]
) -> str:
    """Why the merged row `got` breaks the rules, given the base's and each parent's, or ''."""
    changes = {side for side in sides if side != old}
    if not changes:
        return "" if got == old else _unchanged(old, got)
    if len(changes) == 1:
        (change,) = changes
        if got == change:
            return ""
        who = ", ".join(p.label for p, s in zip(parents, sides, strict=True) if s == change)
        return _one_change(who, old, change, got)
    if got is None and None not in changes:
        return "parents changed this row in different ways and the merge lost it; keep one"
    return ""


def _unchanged(old: Cells | None, got: Cells | None) -> str:
    if old is None:
        return "this row is in no parent: the merge added it (commit it on its own)"
    if got is None:
        return "every parent kept this row, the merge lost it"
    return "no parent changed this row, the merge did"


def _one_change(who: str, old: Cells | None, change: Cells | None, got: Cells | None) -> str:
    if change is None:
        return f"{who} deleted this row, the merge kept it"
    if got is None:
        return f"{who} {'added' if old is None else 'changed'} this row, the merge lost it"
    if got == old:
        return f"the merge undid the change {who} made to this row"
    return f"the merge holds neither the row {who} wrote nor the base's"
