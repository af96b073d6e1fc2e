"""Reports that are a table, a one-line summary and a JSON document, said three ways.

Every such report offers `table() -> (columns, rows)`, `to_json()` and `exit_code()`; this
module renders it to the terminal and writes the --json and --markdown files. Under `-q`
(a `PlainConsole`) the table is plain text for CI logs: the title, a header line, then one
record per line with tab-separated cells, never wrapped or folded, then the summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from fidelity.cli import options
from fidelity.markdown import fit, inline
from fidelity.text import one_line, visible

if TYPE_CHECKING:
    from rich.console import Console


class Report(Protocol):
    def table(self) -> tuple[list[str], list[list[str]]]: ...

    def to_json(self) -> dict[str, Any]: ...

    def exit_code(self) -> int: ...


class Listing:
    """A plain list of records (cases, controls) as a report, rendered like every table."""

    def __init__(self, columns: list[str], rows: list[list[str]]) -> None:
        self.columns, self.rows = columns, rows

    def table(self) -> tuple[list[str], list[list[str]]]:
        return self.columns, self.rows

    def to_json(self) -> dict[str, Any]:
        return {"rows": [dict(zip(self.columns, row, strict=True)) for row in self.rows]}

    def exit_code(self) -> int:
        return 0


def _cell(text: str) -> str:
    """A cell on one line of a CI log: repository text (a commit subject, a row's key, a
    test name) can hold a line break, a carriage return or a terminal's escape."""
    return " ".join(visible(text).split("\n")).replace("\t", " ")


def plain_lines(title: str, report: Report, summary: str) -> list[str]:
    """The report as lines: title, tab-separated header, one line per record, summary."""
    columns, rows = report.table()
    if not rows:
        return [f"{title}: no rows", _cell(summary)]
    body = ["\t".join(_cell(c) for c in row) for row in rows]
    return [title, "\t".join(columns), *body, _cell(summary)]


def write_plain(stream: IO[str], title: str, report: Report, summary: str) -> None:
    """The report as ``-q`` prints it, to ``stream`` (``console.plain_file``): no console is
    made, so rich is not imported."""
    stream.write("".join(line + "\n" for line in plain_lines(title, report, summary)))
    stream.flush()


def print_lines(console: Console, lines: list[str]) -> None:
    """Lines of user data (findings), as they are: never markup, never wrapped."""
    from fidelity.cli.plain import PlainConsole

    if not lines:
        return
    lines = [one_line(line) for line in lines]  # one record each, whatever it quotes
    if isinstance(console, PlainConsole):
        console.file.write("".join(line + "\n" for line in lines))
        console.file.flush()
        return
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


def render(console: Console, title: str, report: Report, summary: str) -> None:
    """The report as a rich table followed by its one-line summary (plain under `-q`)."""
    from fidelity.cli.console import WIDE, plain_stdout

    stream, width = plain_stdout(console), WIDE  # a console not made: none is
    if stream is None:
        from fidelity.cli.plain import PlainConsole

        if isinstance(console, PlainConsole):
            # straight to the file: rich would expand the tabs and could fold long lines
            lines = plain_lines(title, report, summary)
            console.file.write("".join(line + "\n" for line in lines))
            console.file.flush()
            return
        stream, width = _plain_file(console), console.width
    columns, rows = report.table()
    rows = [[visible(cell) for cell in row] for row in rows]  # repository text, escaped
    summary = one_line(summary)
    if stream is not None and rows and _plain_summary(summary):
        from fidelity.cli import boxtable

        drawn = boxtable.drawn(title, columns, rows, width)
        if drawn is not None:
            stream.write(drawn + summary + "\n")
            stream.flush()
            return
    _rich_table(console, title, columns, rows)
    console.print(summary, markup=False, soft_wrap=True)


def _plain_summary(summary: str) -> bool:
    """A summary rich prints as it is: printable, no `:emoji:` code to replace."""
    return summary.isprintable() and ":" not in summary


def _plain_file(console: Console) -> IO[str] | None:
    """The console's file when rich would draw a table there as plain geometry: made by
    `console.make` off a terminal (a `Trimmed` file), uncoloured, UTF-8 (`boxtable`)."""
    from fidelity.cli.console import Trimmed

    if not isinstance(console.file, Trimmed) or console.is_terminal:
        return None
    if console.color_system is not None or not console.encoding.startswith("utf"):
        return None
    return console.file


def _rich_table(console: Console, title: str, columns: list[str], rows: list[list[str]]) -> None:
    from rich.table import Table
    from rich.text import Text

    if not rows:
        console.print(f"{title}: no rows", markup=False)
        return
    table = Table(title=Text(title), title_justify="left")
    for column in columns:  # test ids and paths are data, never markup (`test_x[/api/users]`)
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def markdown(title: str, report: Report, summary: str) -> str:
    """The report as a GitHub-flavoured Markdown section (fits a PR comment); every cell is
    escaped, since rows quote commit subjects, record cells and test ids."""
    columns, rows = report.table()
    lines = [f"### {inline(title)}", "", inline(summary), ""]
    if rows:
        lines += ["| " + " | ".join(map(inline, columns)) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(map(inline, row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def emit(
    console: Console,
    title: str,
    report: Report,
    summary: str,
    *,
    json_path: Path | None = None,
    markdown_path: Path | None = None,
    code: int | None = None,
    show: bool = True,
) -> int:
    """Write the --json/--markdown files first (nothing is lost if the terminal fails), then
    render to the terminal unless JSON goes to standard output or `show` is False (the
    caller prints its own lines); return the exit code. A report that cannot be written is
    an error (exit 2) once the report has been shown."""
    code = report.exit_code() if code is None else code
    failed = None
    try:
        if json_path is not None:
            data = {**report.to_json(), "summary": summary, "exit_code": code}
            options.write(json_path, json.dumps(data, indent=2) + "\n")
        if markdown_path is not None:
            text = markdown(title, report, summary)
            options.write_markdown(markdown_path, lambda limit: fit(text, limit))
    except options.ReportError as exc:
        failed = exc
    if show and not options.to_stdout(json_path):
        render(console, title, report, summary)
    if failed is not None:
        raise failed
    return code
