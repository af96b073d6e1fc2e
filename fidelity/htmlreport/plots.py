"""Baseline against candidate for each figure an explained output's kind asks for, as SVG
drawn by matplotlib.

The kind says what to draw (`Kind.series`): for a CSV or TSV output, each column it found
moved (or, within tolerance, each column whose values differ). Each figure shows the two
sides' distributions as empirical CDFs and, when the kind pairs the values (a table's key),
the candidate minus the baseline per pair. matplotlib is imported here only, through its
object API (no pyplot, no global backend): nothing else in fidelity loads it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fidelity.kinds import registry
from fidelity.kinds.base import Series
from fidelity.kinds.diffs import OutputDiff

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


def _curve(values: Any) -> tuple[Any, Any]:
    """An empirical CDF, as at most POINTS quantiles."""
    data = np.sort(np.asarray(values, dtype=float))
    data = data[~np.isnan(data)]
    if len(data) > POINTS:
        probs = np.linspace(0, 1, POINTS)
        return np.quantile(data, probs), probs
    return data, np.arange(1, len(data) + 1) / max(len(data), 1)


def _figure(s: Series) -> str:
    from matplotlib.figure import Figure

    column, base, cand, deltas = s.name, s.base, s.cand, s.deltas

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
            ax.set(xlabel=f"fraction of {len(shown)} {s.per}s (sorted by delta)")
        else:
            ax.plot(np.arange(len(shown)), shown, "o", markersize=3, color="C3")
            ax.set(xlabel=s.order)
        ax.axhline(0, color="0.6", linewidth=0.8)
        moved = int(np.count_nonzero(shown))
        ax.set_title(f"{column}: candidate - baseline, per {s.per}", fontsize=10, y=1.0)
        ax.set(ylabel=f"delta ({moved} of {len(shown)} {s.per}s differ)")
    for ax in axes:
        ax.locator_params(nbins=TICKS)
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    return text[text.index("<svg") :]


def plot(e: OutputDiff, files: tuple[Path, Path], spec: Mapping[str, Any], salt: str) -> list[Plot]:
    """The figures of one explained output, as many as its kind asks for (at most
    `COLUMNS`); [] for a kind that draws none."""
    kind = registry.of(e.kind)
    if not kind.plots or e.limit:
        return []
    big = [f for f in files if not f.is_file() or f.stat().st_size > FILE_BYTES]
    if big:
        why = f"{big[0].name} is missing or over {FILE_BYTES // 2**20} MiB: not plotted"
        return [Plot(name, note=why) for name in kind.plotted(e)[:COLUMNS]]
    return [_one(s, f"{salt}-{s.name}") for s in kind.series(e, files, spec, COLUMNS)]


def _one(s: Series, salt: str) -> Plot:
    """One figure, or why it could not be drawn."""
    import matplotlib

    b, c = s.base, s.cand
    if b is None or c is None or np.isnan(b).all() or np.isnan(c).all():
        return Plot(s.name, note="not numeric on both sides: no plot")
    # text as text (no glyph paths), ids unique per figure, `$` in a column name as is
    with matplotlib.rc_context(
        {"svg.fonttype": "none", "svg.hashsalt": salt, "text.parse_math": False}
    ):
        svg = _figure(s)
    deltas = s.deltas
    thinned = max(len(b), len(c)) > POINTS or (deltas is not None and len(deltas) > KEY_POINTS)
    note = f"more than {POINTS} values: drawn as quantiles" if thinned else ""
    return Plot(s.name, svg, note)
