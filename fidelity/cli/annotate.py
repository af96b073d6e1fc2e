"""GitHub annotations for a gate that did not hold, printed under GitHub Actions only.

Each names why, at the file and line that holds the cause where there is one: a case's
entry in the case table, a record's row, a commit message file; else a plain `::error`.
The verdict comes first. GitHub shows at most 10 error annotations per step, so past that
the last one counts the rest. A gate that holds prints none, and `--json -` keeps standard
output to the JSON alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity import github
from fidelity.cli import options
from fidelity.github import Annotation

if TYPE_CHECKING:
    from rich.console import Console

    from checkers.trailers import TrailerReport
    from fidelity.history.stale import StaleReport
    from fidelity.matrix.verdict.outcome import Outcome
    from fidelity.preflight.outcome import Report

MAX = 10  # what GitHub shows of one step's error annotations


def emit(console: Console, json_path: Path | None, notes: Sequence[Annotation]) -> None:
    """Print the annotations to standard output when running under GitHub Actions."""
    if not notes or not github.active() or options.to_stdout(json_path):
        return
    if len(notes) > MAX:
        rest = len(notes) - MAX + 1
        more = f"{rest} more not annotated (GitHub shows {MAX} per step); the log lists them"
        notes = [*notes[: MAX - 1], Annotation(notes[0].title, more)]
    github.emit(console.file, notes)


def outcome(command: str, result: Outcome, root: Path) -> list[Annotation]:
    """The verdict, each finding, each case judged a failure: at its case-table line when
    the table under root is the one the run read."""
    from fidelity.matrix import reports
    from fidelity.matrix.run import harness
    from fidelity.matrix.verdict import words

    if result.exit_code == 0:
        return []
    lines = harness.table_lines(root, result.harness)
    table = result.harness.table_path if lines is not None else None
    title = f"fidelity {command}"

    def case(case_id: str | None, heading: str, message: str) -> Annotation:
        if case_id is None or table is None:
            return Annotation(heading, message)
        return Annotation(heading, message, table, (lines or {}).get(case_id))

    notes = [Annotation(title, f"{words.verdict(result)}; run directory {result.run_dir}")]
    notes += [case(f.case_id, f"{title}: {f.code}", words.finding_line(f)) for f in result.findings]
    for r in result.comparison.cases:
        failure, error = reports.judge_case(r, result)
        if failure or error:
            notes.append(case(r.case_id, f"{title}: case {r.case_id}", failure or error or ""))
    return notes


def stale(report: StaleReport, code: int) -> list[Annotation]:
    """The summary, then each row that is not fresh, at its line in its record."""
    if code == 0:
        return []
    notes = [Annotation("fidelity stale", report.summary())]
    for c in report.checks:
        if not c.ok:
            title = f"fidelity stale: {c.status} row {c.row.key}"
            said = f"{c.row.key} (commit {c.row.commit or 'none'}): {c.detail()}"
            notes.append(Annotation(title, said, c.row.path, c.row.line))
    return notes


def trailers(report: TrailerReport, message_file: Path | None) -> list[Annotation]:
    """The summary, then each finding: at its line of the message file, or naming the
    commit (a commit's message is in no file)."""
    if report.exit_code() == 0:
        return []
    notes = [Annotation("fidelity trailers", report.summary())]
    for f in report.findings:
        if message_file is not None:
            notes.append(Annotation(f"fidelity trailers: {f.code}", f.message, f.where, f.line))
        else:
            title = f"fidelity trailers: {f.code} in commit {f.where}"
            notes.append(Annotation(title, f"line {f.line}: {f.message}"))
    return notes


def summary(command: str, report: Any, said: str) -> list[Annotation]:
    """One plain annotation with the summary of a report that has no location of its own."""
    return [] if report.exit_code() == 0 else [Annotation(f"fidelity {command}", said)]


LOCATED = re.compile(
    r"(?P<file>[^\s:][^:]*):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<message>.+)", re.S
)


NAMED = re.compile(r"(?P<file>[^\s:][^:]*): (?P<message>.+)", re.S)
UNDER = re.compile(r" under (?P<heading>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def _unlocated(title: str, detail: str, root: Path) -> Annotation:
    """A detail that names a file but no line (a record row a merge lost is on no line of
    the file): at the heading of the table it was lost from, when the file under root has
    that heading, else at the file; plain when it names no file there."""
    named = NAMED.fullmatch(detail)
    path = root / named["file"] if named else None
    if named is None or path is None or not _inside(path, root):
        return Annotation(title, detail)
    return Annotation(title, named["message"], named["file"], _heading_line(path, detail))


def _inside(path: Path, root: Path) -> bool:
    """path is a file under root (never a name that leads out of it)."""
    try:
        return path.resolve().is_relative_to(root.resolve()) and path.is_file()
    except OSError:
        return False


def _heading_line(path: Path, detail: str) -> int | None:
    """The line of the heading `under 'NAME'` in detail names, in the file at path."""
    import ast

    under = UNDER.search(detail)
    if under is None:
        return None
    heading = ast.literal_eval(under["heading"])
    for number, line in enumerate(path.read_text("utf-8", "replace").splitlines(), 1):
        text = line.strip()
        if text.startswith("#") and text.lstrip("#").strip() == heading:
            return number
    return None


def preflight(report: Report, root: Path | None = None) -> list[Annotation]:
    """The closing count, then each detail of a gate that failed or could not judge: at
    its `path:line[:col]` when it names one (checker findings, record rows), at its file
    (and a lost row's table heading) when it names only a file under root (default: the
    working directory, the checkout's top in CI), else plain."""
    from fidelity.preflight.outcome import Status

    root = root or Path.cwd()

    if report.exit_code() == 0:
        return []
    notes = [Annotation("fidelity preflight", f"{report.judged}: {report.closing()}")]
    for result in report.results:
        if result.status not in (Status.FAILED, Status.UNTRUSTED, Status.INVALID):
            continue
        title = f"fidelity preflight: {result.gate}"
        if not result.details:
            notes.append(Annotation(title, result.summary))
        for detail in result.details:
            found = LOCATED.fullmatch(detail)
            if found is None:
                notes.append(_unlocated(title, detail, root))
                continue
            col = int(found["col"]) if found["col"] else None
            notes.append(
                Annotation(title, found["message"], found["file"], int(found["line"]), col)
            )
    return notes
