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
from fidelity.matrix.verdict.findings import Finding
from fidelity.matrix.verdict.outcome import Outcome
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
VERDICT_STYLE = {0: "bold green", 1: "bold yellow", 3: "bold red"}


def _line(console: Console, text: str, style: str = "") -> None:
    console.print(Text(one_line(text), style), soft_wrap=True)


def findings(console: Console, found: tuple[Finding, ...]) -> None:
    if not found:
        return
    _line(console, f"Provenance findings ({len(found)}): the verdict cannot be trusted", "bold red")
    for f in found:
        _line(console, f"  ! {words.finding_line(f)}")


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


def case_lines(comparison: Comparison, show_identical: bool, run_dir: Path | None) -> list[str]:
    """The case table as one unwrapped line per case, for CI logs and grep."""
    return [
        f"{r.case_id}: {r.verdict}: {words.case_detail(r, run_dir)}"
        for r in comparison.cases
        if show_identical or r.verdict is not Verdict.IDENTICAL
    ]


def outcome(
    console: Console, result: Outcome, show_identical: bool = False, plain: bool = False
) -> None:
    """The verdict; `plain` (-q) prints one unwrapped line per case instead of a table."""
    _line(console, words.headline(result))
    findings(console, result.findings)
    for text in words.allowed_lines(result):
        _line(console, text)
    if plain:
        for text in case_lines(result.comparison, show_identical, result.run_dir):
            _line(console, text)
    elif show_identical or any(r.verdict is not Verdict.IDENTICAL for r in result.comparison.cases):
        console.print(case_table(result.comparison, show_identical, result.run_dir))
    for text in words.selection_line(result) + words.summary_lines(
        result.comparison, result.selection
    ):
        _line(console, text)
    for text in words.replay_lines(result):
        _line(console, text)
    for text in words.prediction_lines(result) + words.setup_lines(result):
        _line(console, text)
    for text in words.same_commit(result):  # right above the verdict, never read apart
        _line(console, text, "bold yellow")
    _line(console, words.verdict(result), VERDICT_STYLE.get(result.exit_code, "bold"))
    _line(console, f"run directory: {result.run_dir}")
