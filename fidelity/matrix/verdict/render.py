"""Terminal rendering of a matrix outcome through an injected rich Console.

Findings come first, above the verdict, so that an untrusted answer is never read as a
pass. The layout stays readable at 80 columns and in a plain CI log. Text from a case
(file names, stderr) is printed escaped: no control byte of its own reaches the terminal,
and no line break in it starts a line that a CI system would read as a command.
"""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from fidelity.matrix.verdict import words
from fidelity.matrix.verdict.compare import FAILURES, Comparison, Verdict
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.matrix.verdict.plain import case_lines, head, tail
from fidelity.text import one_line

STYLE = {
    Verdict.IDENTICAL: "green",
    Verdict.WITHIN_TOLERANCE: "green",
    Verdict.WITHIN_SPREAD: "green",
    Verdict.MOVED: "yellow",
    Verdict.NOT_COMPARED: "red",
    Verdict.MISSING_EVIDENCE: "red",
    Verdict.DEFINITION_DIFFERS: "red",
}


def _line(console: Console, text: str, style: str = "") -> None:
    console.print(Text(one_line(text), style), soft_wrap=True)


def case_table(comparison: Comparison, show_identical: bool, run_dir: Path | None = None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
    table.add_column("case", overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in comparison.cases:
        if r.verdict is Verdict.IDENTICAL and not show_identical:
            continue
        style = "red" if r.verdict in FAILURES else STYLE.get(r.verdict, "")
        # details quote the user's outputs and keys: text, never markup (`$.items[/x]`)
        table.add_row(
            Text(one_line(r.case_id)),
            Text(str(r.verdict), style),
            Text(one_line(words.case_detail(r, run_dir))),
        )
    return table


def outcome(
    console: Console, result: Outcome, show_identical: bool = False, plain: bool = False
) -> None:
    """The verdict; `plain` (-q) prints one unwrapped line per case instead of a table (the
    lines of `verdict.plain`, which a quiet run writes without rich)."""
    for text, style in head(result):
        _line(console, text, style)
    if plain:
        for text in case_lines(result.comparison, show_identical, result.run_dir):
            _line(console, text)
    elif show_identical or any(r.verdict is not Verdict.IDENTICAL for r in result.comparison.cases):
        console.print(case_table(result.comparison, show_identical, result.run_dir))
    for text, style in tail(result):
        _line(console, text, style)
