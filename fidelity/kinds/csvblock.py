"""Rows that arrive in step, compared a whole column at a time.

The per-cell rule is `diffs.judge`'s, applied to arrays: texts compared with one array
comparison per column; only cells whose text differs are parsed (numpy's parse of a text is
Python's `float`), and a column that holds a non-number is parsed cell by cell. Own paths
are replaced once per column (its differing cells joined), not once per cell. Differences
are counted in bulk; a `Difference` is made only for the few that can be shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fidelity.kinds.diffs import Block, Difference, Tolerance
from fidelity.kinds.sources import Neutral

Array = np.ndarray[Any, Any]


@dataclass(frozen=True, slots=True)
class Column:
    """A compared column: its name, its index on each side, its tolerance."""

    name: str
    base: int
    cand: int
    tol: Tolerance


def floats(texts: Array) -> tuple[Array, Array]:
    """Each text as `diffs._number` reads it: (values, which are numbers)."""
    ok = np.ones(len(texts), dtype=bool)
    try:
        values = texts.astype(np.float64)
    except (ValueError, TypeError):
        values = np.full(len(texts), np.nan)
        for n, text in enumerate(texts):
            try:
                values[n] = float(text)
            except ValueError:
                ok[n] = False
    for at in np.flatnonzero(np.isinf(values) & ok):  # "1e999" is not a number, "inf" is
        ok[at] = texts[at].strip().lower() in ("inf", "-inf")
    return values, ok


def _integers(b: str, c: str, tol: Tolerance) -> tuple[float, bool] | None:
    """Two cells that both spell integers, judged exactly (past 2**53 two of them can be
    one float); None for any other pair, judged as floats."""
    try:
        x, y = int(b), int(c)
    except ValueError:
        return None
    size, holds = tol.judge(x, y)
    return (math.inf if size is None else size), holds


@dataclass(frozen=True, slots=True)
class Cells:
    """The differing cells of a block, column by column: row, column, judgement."""

    rows: Array
    columns: Array
    within: Array
    changed: Array  # no tolerance applies (not both numbers)
    absd: Array  # NaN where changed
    base: Array
    cand: Array


def _judged(rows: Array, k: int, bt: Array, ct: Array, tol: Tolerance) -> Cells:
    bf, b_ok = floats(bt)
    cf, c_ok = floats(ct)
    numeric = b_ok & c_ok
    with np.errstate(invalid="ignore", over="ignore"):
        same = numeric & ((bf == cf) | (np.isnan(bf) & np.isnan(cf)))
        absd = np.where(same, 0.0, np.abs(cf - bf))
        finite = np.isfinite(bf) & np.isfinite(cf)
        close = numeric & finite & (absd <= tol.atol + tol.rtol * np.abs(bf))
        big = numeric & finite & (np.maximum(np.abs(bf), np.abs(cf)) >= 2.0**53)
    for i in np.flatnonzero(big & (bt != ct)):  # integers one float cannot tell apart
        exact = _integers(str(bt[i]), str(ct[i]), tol)
        if exact is not None:
            absd[i], close[i] = exact
            same[i] = absd[i] == 0
    absd[~numeric] = np.nan
    columns = np.full(len(rows), k)
    return Cells(rows, columns, same | close, ~numeric, absd, bt, ct)


def differing(
    base: Array, cand: Array, columns: Sequence[Column], neutral: Neutral
) -> tuple[Cells | None, bool]:
    """The judged differing cells of two blocks of rows in step, in the order a row-by-row
    walk meets them, and whether some cells were equal once own paths were placeholders."""
    found: list[Cells] = []
    paths_only = False
    for k, column in enumerate(columns):
        rows = np.flatnonzero(base[:, column.base] != cand[:, column.cand])
        if not len(rows):
            continue
        bt, ct = base[rows, column.base], cand[rows, column.cand]
        if neutral.base or neutral.cand:
            same = np.array(neutral.same_each(bt.tolist(), ct.tolist()), dtype=bool)
            if same.any():
                paths_only = True
                rows, bt, ct = rows[~same], bt[~same], ct[~same]
        if len(rows):
            found.append(_judged(rows, k, bt, ct, column.tol))
    if not found:
        return None, paths_only
    parts = [np.concatenate([getattr(c, f) for c in found]) for f in Cells.__slots__]
    order = np.lexsort((parts[1], parts[0]))  # by row, then column: the walk's order
    return Cells(*(p[order] for p in parts)), paths_only


def block(cells: Cells, columns: Sequence[Column], top: int, label: Callable[[int], str]) -> Block:
    """The cells as a tally counts them; `label(row)` is a row's key as shown."""
    out = ~cells.within
    out_rows = cells.rows[out]
    rows = out_rows[np.r_[True, out_rows[1:] != out_rows[:-1]]] if len(out_rows) else out_rows
    out_columns = cells.columns[out]
    _, first = np.unique(out_columns, return_index=True)
    names = [columns[int(k)].name for k in out_columns[np.sort(first)]]
    rank = np.where(np.isnan(cells.absd), np.inf, cells.absd)
    chosen = np.lexsort((np.arange(len(rank)), -rank, cells.within))[:top]
    shown = [
        Difference(
            f"{label(int(cells.rows[n]))} / {columns[int(cells.columns[n])].name}",
            cells.base[n],
            cells.cand[n],
            None if cells.changed[n] else float(cells.absd[n]),
            bool(cells.within[n]),
        )
        for n in np.sort(chosen)
    ]
    return Block(
        within=int(cells.within.sum()),
        out=int(out.sum()),
        changed=int(cells.changed.sum()),
        columns=names,
        rows=len(rows),
        key=lambda n: label(int(rows[n])),
        top=shown,
    )
