"""The verdict as `-q` prints it: one unwrapped line per record, in the terminal's order,
each with the style the terminal gives it, written without rich.

Apart from `render` so that a quiet run does not import rich (about 40 ms of CPU, more than
ten trivial cases cost): its lines go straight to the stream. `render` prints the same
lines, with the case table in place of the case lines on a terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from fidelity.matrix.verdict import words
from fidelity.matrix.verdict.compare import Comparison, Verdict
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.text import one_line

VERDICT_STYLE = {0: "bold green", 1: "bold yellow", 3: "bold red"}
Styled = list[tuple[str, str]]  # (line, rich style)


def head(result: Outcome) -> Styled:
    """What comes above the cases: the headline, the findings, the allowed ones."""
    lines = [(words.headline(result), "")]
    if result.findings:
        said = f"Provenance findings ({len(result.findings)}): the verdict cannot be trusted"
        lines.append((said, "bold red"))
        lines += [(f"  ! {words.finding_line(f)}", "") for f in result.findings]
    return lines + [(text, "") for text in words.allowed_lines(result)]


def tail(result: Outcome) -> Styled:
    """What comes below the cases, the verdict and the run directory last."""
    said = words.selection_line(result) + words.summary_lines(result.comparison, result.selection)
    said += words.replay_lines(result) + words.prediction_lines(result) + words.setup_lines(result)
    lines = [(text, "") for text in said]
    lines += [(text, "bold yellow") for text in words.same_commit(result)]  # above the verdict
    lines.append((words.verdict(result), VERDICT_STYLE.get(result.exit_code, "bold")))
    return lines + [(f"run directory: {result.run_dir}", "")]


def case_lines(comparison: Comparison, show_identical: bool, run_dir: Path | None) -> list[str]:
    """The case table as one unwrapped line per case, for CI logs and grep."""
    return [
        f"{r.case_id}: {r.verdict}: {words.case_detail(r, run_dir)}"
        for r in comparison.cases
        if show_identical or r.verdict is not Verdict.IDENTICAL
    ]


def lines(result: Outcome, show_identical: bool = False) -> list[str]:
    """Every line `-q` prints, unstyled."""
    cases = case_lines(result.comparison, show_identical, result.run_dir)
    return [t for t, _ in head(result)] + cases + [t for t, _ in tail(result)]


def write(stream: IO[str], result: Outcome, show_identical: bool = False) -> None:
    """The lines as the plain console printed them: each `one_line`, tabs expanded; off a
    terminal, without trailing blanks (`console.Trimmed`)."""
    trim = not stream.isatty()
    stream.write("".join(_shown(text, trim) + "\n" for text in lines(result, show_identical)))
    stream.flush()


def _shown(text: str, trim: bool) -> str:
    line = one_line(text)
    if "\t" in line:
        line = line.expandtabs(8) if line.isascii() else _expanded_by_cells(line)
    return line.rstrip(" ") if trim else line


def _expanded_by_cells(line: str) -> str:
    """Tabs expanded as rich does, by terminal cells (a wide character takes two)."""
    from rich.text import Text

    text = Text(line)
    text.expand_tabs(8)
    return text.plain
