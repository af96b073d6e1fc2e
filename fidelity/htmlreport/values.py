"""A moved case's value-level differences (old -> new, absolute and relative) and log tails.

Nothing is compared again here: the differences are the ones the run's comparators kept
(`OutputDiff.largest`, the bounded text diff), as each kind gives them (`Kind.kept`) and as
`fidelity compare` and the Markdown report show them. The relative difference is the stored
absolute one over |baseline|, the base that the tolerances use (`diffs.Tolerance`).
"""

from __future__ import annotations

import math
import stat
from pathlib import Path

from fidelity.htmlreport.page import esc, pre
from fidelity.kinds import registry
from fidelity.kinds.diffs import Difference, OutputDiff
from fidelity.matrix.verdict import words

LOG_BYTES = 4096  # of each log's end, per side
LOGS = ("stderr.log", "stdout.log")
HEAD = (
    "<tr><th>where</th><th>baseline</th><th>candidate</th><th>absolute</th>"
    "<th>relative</th><th>within tolerance</th></tr>"
)


def relative(d: Difference) -> str:
    """|cand - base| / |base| as a percentage; '' when not numeric, 'inf' from zero."""
    if d.abs_diff is None:
        return ""
    try:
        base = abs(float(d.base))
    except ValueError:
        return ""
    if base == 0 or math.isnan(base):
        return "inf" if d.abs_diff else "0%"
    return f"{100 * d.abs_diff / base:.4g}%"


def _absolute(d: Difference) -> str:
    return "" if d.abs_diff is None else f"{d.abs_diff:.6g}"


def _difference(d: Difference) -> str:
    cells = (d.where, d.base, d.cand, _absolute(d), relative(d), "yes" if d.within else "no")
    return "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>\n"


def output(e: OutputDiff) -> str:
    """One explained output: its summary line, then its kept differences as a table."""
    parts = [f"<h4>{esc(e.path)} <small>({esc(e.kind)})</small></h4>\n"]
    parts.append(f"<p>{esc(words.explanation(e))}</p>\n")
    if e.limit:
        parts.append(f'<p class="finding">not compared by value: {esc(e.limit)}</p>\n')
    for label, keys in (("rows added", e.rows_added), ("rows dropped", e.rows_dropped)):
        if keys:
            parts.append(f"<p>{esc(label)}: {esc(', '.join(keys))}</p>\n")
    kept, differences = registry.of(e.kind).kept(e)
    rows = "".join(_difference(d) for d in differences)
    if rows:
        parts.append(
            f"<p>{esc(kept)}, old -> new:</p>\n"
            f'<table class="values">\n<thead>{HEAD}</thead>\n<tbody>\n{rows}</tbody>\n</table>\n'
        )
    return "".join(parts)


def _tail(path: Path) -> str:
    """The end of a log, '' when there is none; a link or special file is not followed."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return ""
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - LOG_BYTES))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return ("...\n" if size > LOG_BYTES else "") + text


def logs(run_dir: Path, case_id: str) -> str:
    """Each side's stderr and stdout tails that are not empty, escaped."""
    parts = []
    for role in ("baseline", "candidate"):
        for name in LOGS:
            text = _tail(run_dir / role / "cases" / case_id / name)
            if text.strip():
                parts.append(f"<h4>{esc(role)} {esc(name)} (last {LOG_BYTES} bytes)</h4>\n")
                parts.append(pre(text))
    return "".join(parts)
