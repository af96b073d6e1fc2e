"""Did a merge keep every keyed record row? (pure; the merge may have been made by anyone).

`fidelity merge-records` merges keyed tables by key, but git runs it only where it is
configured: a merge made on a forge's web page, in an editor's conflict view ("keep ours"),
or on a machine without the driver gets git's text merge or a person's choice. This audit
judges the result row by row with the driver's own rules, merging the parents in as git
does: the first parent, then each other one against its merge base with those before it
(an octopus merge goes pairwise). At each step a key that neither side changed since the
base keeps its row (or stays absent); a key one side changed takes that change (added,
changed or deleted); a key both changed in different ways is a conflict a person resolved,
so any resolution passes except losing a row that both changing sides kept. A key may
appear once. When a step has several merge bases (a criss-cross history), the result must
hold against each of them.

Tables are matched across versions by (heading, key column, how many such tables came
before it), as the driver matches them: renaming a table's heading on one side makes its
rows look lost from the old heading. Rows are compared by their cells, not their spacing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checkers.tables import parse_tables
from fidelity.recordmerge.keyed import key_column
from fidelity.text import counted

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


def tables(text: str | None, keys: Sequence[str]) -> dict[Ident, _Rows]:
    """Every table with a key column, by identity; rows without a key are left out."""
    found: dict[Ident, _Rows] = {}
    seen: dict[tuple[str | None, str], int] = {}
    for table in parse_tables(text or ""):
        column = key_column(table, keys)
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
                        f"{name} {key!r}{where} is on {counted(len(lines), 'row')} "
                        f"(lines {shown}); keep one",
                    )
                )
    return problems


@dataclass(frozen=True, slots=True)
class Step:
    """One parent merged in, with its merge bases against the parents before it."""

    side: Version
    bases: tuple[Version, ...]


@dataclass(frozen=True, slots=True)
class _Fixed:
    """The row a key must have: `value` (None: absent), set by the parents in `by` (none:
    nobody changed it), from `old`."""

    value: Cells | None
    by: tuple[str, ...] = ()
    old: Cells | None = None


@dataclass(frozen=True, slots=True)
class _Free:
    """A conflict a person resolved: any row passes; `required`: it may not be lost."""

    required: bool


_Expected = _Fixed | _Free
MAX_PATHS = 8  # combinations of merge bases judged (criss-cross histories)


def _step(acc: _Expected, base: Cells | None, side: Cells | None, label: str) -> _Expected:
    if isinstance(acc, _Free) or side == base:
        return acc
    if acc.value == base:
        return _Fixed(side, (label,), base)
    if acc.value == side:
        return _Fixed(side, (*acc.by, label), acc.old)
    return _Free(required=acc.value is not None and side is not None)


def _problem(expected: _Expected, got: Cells | None) -> str:
    """Why the merged row `got` breaks what was expected, or ''."""
    if isinstance(expected, _Free):
        if expected.required and got is None:
            return "parents changed this row in different ways and the merge lost it; keep one"
        return ""
    if got == expected.value:
        return ""
    if not expected.by:
        if expected.value is None:
            return "this row is in no parent: the merge added it (commit it on its own)"
        if got is None:
            return "every parent kept this row, the merge lost it"
        return "no parent changed this row, the merge did"
    who = ", ".join(expected.by)
    if expected.value is None:
        return f"{who} deleted this row, the merge kept it"
    if got is None:
        return f"{who} {'added' if expected.old is None else 'changed'} this row, the merge lost it"
    if got == expected.old:
        return f"the merge undid the change {who} made to this row"
    return f"the merge holds neither the row {who} wrote nor the base's"


def _paths(steps: Sequence[Step]) -> list[tuple[Version, ...]]:
    """Each combination of one base per step (at most MAX_PATHS)."""
    paths: list[tuple[Version, ...]] = [()]
    for step in steps:
        bases = step.bases or (Version("no common history", None),)
        paths = [(*p, b) for p in paths for b in bases][:MAX_PATHS]
    return paths


def audit(first: Version, steps: Sequence[Step], merged: str, keys: Sequence[str]) -> list[Problem]:
    """Every row the merge lost, kept against a deletion, or changed on its own, and every
    duplicated key, located in the merged text."""
    result = tables(merged, keys)
    problems = duplicates(merged, keys)
    sides = [tables(first.text, keys)] + [tables(s.side.text, keys) for s in steps]
    seen: set[tuple[int, str]] = set()
    for path in _paths(steps):
        bases = [tables(b.text, keys) for b in path]
        idents = dict.fromkeys([i for v in (*sides, *bases, result) for i in v])
        for ident in idents:
            for problem in _judge_table(
                ident, first, steps, sides=sides, bases=bases, result=result
            ):
                if (problem.line, problem.message) not in seen:
                    seen.add((problem.line, problem.message))
                    problems.append(problem)
    return sorted(problems, key=lambda p: p.line)


def _judge_table(
    ident: Ident,
    first: Version,
    steps: Sequence[Step],
    *,
    sides: Sequence[dict[Ident, _Rows]],
    bases: Sequence[dict[Ident, _Rows]],
    result: dict[Ident, _Rows],
) -> list[Problem]:
    empty = _Rows({}, {})
    own = [v.get(ident, empty).cells for v in sides]
    base_rows = [v.get(ident, empty).cells for v in bases]
    new = result.get(ident, empty)
    every = dict.fromkeys([k for rows in (*own, *base_rows, new.cells) for k in rows])
    found = []
    for key in every:
        start = base_rows[0].get(key) if base_rows else own[0].get(key)
        value = own[0].get(key)
        expected: _Expected = _Fixed(value, (first.label,) if value != start else (), start)
        for step, rows, base in zip(steps, own[1:], base_rows, strict=True):
            expected = _step(expected, base.get(key), rows.get(key), step.side.label)
        why = _problem(expected, new.cells.get(key))
        if why:
            where = f" under {ident[0]!r}" if ident[0] else ""
            line = new.lines.get(key, [0])[0]
            found.append(Problem(line, f"{ident[1]} {key!r}{where}: {why}"))
    return found
