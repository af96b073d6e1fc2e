"""Baseline against candidate for each moved numeric column, as SVG drawn by matplotlib.

For a CSV or TSV output the comparator explained, each column it found moved (or, for an
output within tolerance, each column whose values differ) gets one figure: the two sides'
distributions as empirical CDFs, and, when the table keys the rows, the candidate minus the
baseline per key. Files are read as the comparator reads them (cells as text; pandas),
then the plotted column as numbers. matplotlib is imported here only, through its object
API (no pyplot, no global backend): nothing else in fidelity loads it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

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


def _read(path: Path, sep: str) -> Any:
    import pandas as pd

    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


def _numbers(frame: Any, column: str) -> Any:
    import pandas as pd

    return pd.to_numeric(frame[column], errors="coerce") if column in frame else None


def _curve(values: Any) -> tuple[Any, Any]:
    """An empirical CDF, as at most POINTS quantiles."""
    data = np.sort(np.asarray(values, dtype=float))
    data = data[~np.isnan(data)]
    if len(data) > POINTS:
        probs = np.linspace(0, 1, POINTS)
        return np.quantile(data, probs), probs
    return data, np.arange(1, len(data) + 1) / max(len(data), 1)


def _deltas(base: Any, cand: Any, key: Sequence[str], column: str) -> Any:
    """Candidate minus baseline per key present on both sides, in the baseline's order."""
    keys = list(key)
    left = base[keys].assign(_b=_numbers(base, column)).drop_duplicates(subset=keys)
    right = cand[keys].assign(_c=_numbers(cand, column)).drop_duplicates(subset=keys)
    both = left.merge(right, on=keys, how="inner", sort=False)
    return (both["_c"] - both["_b"]).to_numpy(dtype=float)


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
    wanted = columns(e)[:COLUMNS]
    big = [f for f in files if not f.is_file() or f.stat().st_size > FILE_BYTES]
    if big:
        why = f"{big[0].name} is missing or over {FILE_BYTES // 2**20} MiB: not plotted"
        return [Plot(c, note=why) for c in wanted]
    sep = "\t" if e.kind == "tsv" else ","
    base, cand = _read(files[0], sep), _read(files[1], sep)
    key = [k for k in spec.get("key", ()) if k in base and k in cand]
    return [_one(column, base, cand, key, f"{salt}-{column}") for column in wanted]


def _one(column: str, base: Any, cand: Any, key: Sequence[str], salt: str) -> Plot:
    import matplotlib

    b, c = _numbers(base, column), _numbers(cand, column)
    if b is None or c is None or b.isna().all() or c.isna().all():
        return Plot(column, note="not numeric on both sides: no plot")
    deltas = _deltas(base, cand, key, column) if key else None
    # text as text (no glyph paths), ids unique per figure, `$` in a column name as is
    with matplotlib.rc_context(
        {"svg.fonttype": "none", "svg.hashsalt": salt, "text.parse_math": False}
    ):
        svg = _figure(column, b, c, deltas, key)
    thinned = max(len(b), len(c)) > POINTS or (deltas is not None and len(deltas) > KEY_POINTS)
    note = f"more than {POINTS} values: drawn as quantiles" if thinned else ""
    return Plot(column, svg, note)
