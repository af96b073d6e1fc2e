"""Baseline against candidate for each moved numeric column, as SVG drawn by matplotlib.

For a CSV or TSV output the comparator explained, each column it found moved (or, for an
output within tolerance, each column whose values differ) gets one figure: the two sides'
distributions as empirical CDFs, and, when the table keys the rows, the candidate minus the
baseline per key. Files are read as the comparator reads them (cells as text: the plain
reader, else pandas' parser, `matrix.csvread`), then the plotted column as numbers; pandas is
not imported for a plain file. matplotlib is imported here only, through its object API (no
pyplot, no global backend): nothing else in fidelity loads it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fidelity.matrix import csvread
from fidelity.matrix.diffs import OutputDiff

POINTS = 400  # drawn per curve: more values are drawn as this many quantiles
TICKS = 5  # at most, per axis: each tick is a text whose extent is measured on every draw
KEY_POINTS = 400  # per-key deltas drawn one by one; more are drawn sorted, as quantiles
FILE_BYTES = 64 * 2**20  # a larger output is not read for a plot (said on the page)
COLUMNS = 4  # plotted per output


@dataclass(frozen=True, slots=True)
class Plot:
    column: str
    svg: str = ""  # the <svg> element; "" when the column could not be plotted
    note: str = ""  # why not, or what was thinned out


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


def _curve(values: Any) -> tuple[Any, Any]:
    """An empirical CDF, as at most POINTS quantiles."""
    data = np.sort(np.asarray(values, dtype=float))
    data = data[~np.isnan(data)]
    if len(data) > POINTS:
        probs = np.linspace(0, 1, POINTS)
        return np.quantile(data, probs), probs
    return data, np.arange(1, len(data) + 1) / max(len(data), 1)


def _figure(column: str, base: Any, cand: Any, deltas: Any, key: Sequence[str]) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.6, 3.2) if deltas is not None else (5.2, 3.2))
    # fixed margins: a constrained layout costs twice the figure's drawing
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.16, top=0.9, wspace=0.3)
    axes = fig.subplots(1, 2 if deltas is not None else 1, squeeze=False)[0]
    for values, label, style in ((base, "baseline", "-"), (cand, "candidate", "--")):
        x, y = _curve(values)
        axes[0].step(x, y, where="post", linestyle=style, label=f"{label} (n={len(values)})")
    # titles at a fixed height: placing them above the ticks measures every tick label again
    axes[0].set_title(f"{column}: distribution (CDF)", fontsize=10, y=1.0)
    axes[0].set(xlabel=column, ylabel="fraction <= x")
    axes[0].legend(loc="lower right", fontsize="small")
    if deltas is not None:
        shown = deltas[~np.isnan(deltas)]
        ax = axes[1]
        if len(shown) > KEY_POINTS:
            x, y = _curve(shown)
            ax.plot(y, x, ".-", markersize=2, color="C3")
            ax.set(xlabel=f"fraction of {len(shown)} keys (sorted by delta)")
        else:
            ax.plot(np.arange(len(shown)), shown, "o", markersize=3, color="C3")
            ax.set(xlabel=f"key ({', '.join(key)}) in baseline row order")
        ax.axhline(0, color="0.6", linewidth=0.8)
        moved = int(np.count_nonzero(shown))
        ax.set_title(f"{column}: candidate - baseline, per key", fontsize=10, y=1.0)
        ax.set(ylabel=f"delta ({moved} of {len(shown)} keys differ)")
    for ax in axes:
        ax.locator_params(nbins=TICKS)
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    return text[text.index("<svg") :]


def plot(e: OutputDiff, files: tuple[Path, Path], spec: Mapping[str, Any], salt: str) -> list[Plot]:
    """One figure per plotted column of one explained CSV/TSV output; [] for other kinds."""
    if e.kind not in ("csv", "tsv") or e.limit:
        return []
    big = [f for f in files if not f.is_file() or f.stat().st_size > FILE_BYTES]
    if big:
        why = f"{big[0].name} is missing or over {FILE_BYTES // 2**20} MiB: not plotted"
        return [Plot(c, note=why) for c in columns(e)[:COLUMNS]]
    sep = "\t" if e.kind == "tsv" else ","
    base, cand = read(files[0], sep), read(files[1], sep)
    key = [k for k in spec.get("key", ()) if k in base and k in cand]
    rows = pairs(base, cand, key) if key else None
    wanted = most_moved(columns(e), base, cand, rows)[:COLUMNS]
    return [_one(column, base, cand, (key, rows), f"{salt}-{column}") for column in wanted]


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


def _one(
    column: str, base: Table, cand: Table, keyed: tuple[Sequence[str], Any], salt: str
) -> Plot:
    """One column's figure; keyed is the table's key and `pairs` of its rows, if keyed."""
    import matplotlib

    b, c = numbers(base, column), numbers(cand, column)
    if b is None or c is None or np.isnan(b).all() or np.isnan(c).all():
        return Plot(column, note="not numeric on both sides: no plot")
    key, rows = keyed
    deltas = c[rows[1]] - b[rows[0]] if rows is not None else None
    # text as text (no glyph paths), ids unique per figure, `$` in a column name as is
    with matplotlib.rc_context(
        {"svg.fonttype": "none", "svg.hashsalt": salt, "text.parse_math": False}
    ):
        svg = _figure(column, b, c, deltas, key)
    thinned = max(len(b), len(c)) > POINTS or (deltas is not None and len(deltas) > KEY_POINTS)
    note = f"more than {POINTS} values: drawn as quantiles" if thinned else ""
    return Plot(column, svg, note)
