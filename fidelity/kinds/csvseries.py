"""A CSV/TSV output's columns as numbers, for the report's figures of the columns that moved.

Files are read as the comparator reads them (cells as text: the plain reader, else pandas'
parser, `csvread`), then each plotted column as numbers (NaN for a cell that is not one).
With a `key`, rows pair per key in the baseline's order, and each figure gets the candidate
minus the baseline per key. The columns that moved most are plotted first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fidelity.kinds import csvread
from fidelity.kinds.base import Series, Spec
from fidelity.kinds.diffs import OutputDiff


def columns(e: OutputDiff) -> tuple[str, ...]:
    """The columns to plot: those moved, else (within tolerance) those whose values differ."""
    if e.columns:
        return e.columns
    seen = dict.fromkeys(d.where.rsplit(" / ", 1)[-1] for d in e.largest if " / " in d.where)
    return tuple(seen)


@dataclass(frozen=True, slots=True)
class Table:
    """A CSV/TSV file's cells as text: rows x columns."""

    columns: tuple[str, ...]
    cells: Any  # 2-D numpy array of str

    def __contains__(self, column: object) -> bool:
        return column in self.columns

    def column(self, name: str) -> Any:
        return self.cells[:, self.columns.index(name)]


def read(path: Path, sep: str) -> Table:
    """The whole file as the comparator reads it: the plain reader, else pandas' parser."""
    try:
        parts = list(csvread.chunks(path, sep, plain=True))
    except csvread.NotPlain:
        parts = list(csvread.chunks(path, sep, plain=False))
    if not parts:
        return Table((), np.empty((0, 0), dtype=object))
    return Table(parts[0][0], np.concatenate([rows for _, rows in parts]))


def _number(cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        return float("nan")


def numbers(table: Table, column: str) -> Any:
    """The column as floats, NaN for a cell that is not a number; None without the column."""
    if column not in table:
        return None
    cells = table.column(column)
    try:
        return cells.astype(float)
    except ValueError:
        return np.array([_number(c) for c in cells], dtype=float)


def pairs(base: Table, cand: Table, key: Sequence[str]) -> tuple[Any, Any]:
    """The rows of each key on both sides, in the baseline's order: (baseline rows, candidate
    rows); a key that repeats counts by its first row."""

    def first(table: Table) -> dict[tuple[str, ...], int]:
        rows: dict[tuple[str, ...], int] = {}
        for i, k in enumerate(zip(*(table.column(c) for c in key), strict=True)):
            rows.setdefault(k, i)
        return rows

    theirs = first(cand)
    both = [(i, theirs[k]) for k, i in first(base).items() if k in theirs]
    found = np.array(both, dtype=np.intp).reshape(-1, 2)
    return found[:, 0], found[:, 1]


def most_moved(names: Sequence[str], base: Table, cand: Table, rows: Any) -> tuple[str, ...]:
    """The columns, the one that moved most first: by the sum over rows of each value's
    symmetric relative change |c - b| / (|b| + |c|), which counts how many rows moved and
    how far, and stays finite from 0. Rows pair by key, else by position; a cell that is a
    number on one side only counts as a whole change. Ties keep the file's order."""

    def score(column: str) -> float:
        b, c = numbers(base, column), numbers(cand, column)
        if b is None or c is None:
            return 0.0
        if rows is not None:
            b, c = b[rows[0]], c[rows[1]]
        else:
            n = min(len(b), len(c))
            b, c = b[:n], c[:n]
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.abs(c - b) / (np.abs(b) + np.abs(c))  # NaN: both 0, or not numbers
        one_missing = np.isnan(b) ^ np.isnan(c)  # a number on one side only: a whole change
        return float(np.where(one_missing, 1.0, np.nan_to_num(change, nan=0.0)).sum())

    scores = {column: score(column) for column in names}
    return tuple(sorted(names, key=lambda column: -scores[column]))


def series(
    e: OutputDiff, files: tuple[Path, Path], spec: Spec, sep: str, limit: int
) -> list[Series]:
    """The `limit` columns that moved most, each as both sides' numbers and, keyed, the
    candidate minus the baseline per key."""
    base, cand = read(files[0], sep), read(files[1], sep)
    key = [k for k in spec.get("key", ()) if k in base and k in cand]
    rows = pairs(base, cand, key) if key else None
    order = f"key ({', '.join(key)}) in baseline row order"
    found = []
    for column in most_moved(columns(e), base, cand, rows)[:limit]:
        b, c = numbers(base, column), numbers(cand, column)
        deltas = None
        if rows is not None and b is not None and c is not None:
            deltas = c[rows[1]] - b[rows[0]]
        found.append(Series(column, b, c, deltas, "key", order))
    return found
