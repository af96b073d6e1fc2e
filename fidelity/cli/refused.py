"""The reports of a judge that could not judge: `merge`, `compare` or `verify` refused (exit 2:
a shard unfinished, shards of two runs, no such folder) or found its input untrusted before
judging (exit 3: a damaged run.json) still write the --junit, --markdown and --html files
asked for, each saying why and what to do next. A CI job collects what the judge wrote; a
JUnit file missing is a dashboard with nothing red on it, so a refusal is a test case in error.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from fidelity import markdown, report_junit
from fidelity.cli import options
from fidelity.errors import FidelityError
from fidelity.text import one_line


def headline(command: str, exc: FidelityError) -> str:
    return f"fidelity {command}: not judged (exit {int(exc.exit_code)})"


def write(args: argparse.Namespace, exc: FidelityError) -> None:
    """Each report asked for, saying the refusal; one that cannot be written is skipped (the
    refusal itself is what the command exits with)."""
    title, why = headline(args.command, exc), str(exc)
    writers: tuple[tuple[Path | None, Callable[[Path], None]], ...] = (
        (args.junit, lambda path: _junit(path, title, why)),
        (args.markdown, lambda path: _markdown(path, title, why)),
        (args.html, lambda path: _html(path, title, why)),
    )
    for path, writer in writers:
        if path is None or options.to_stdout(path):
            continue
        try:
            writer(path)
        except options.ReportError:
            continue


def _junit(path: Path, title: str, why: str) -> None:
    case = report_junit.JUnitCase(title, "fidelity", error=why)
    options.save(path, report_junit.to_xml("fidelity", [case]))


def _markdown(path: Path, title: str, why: str) -> None:
    text = f"## {markdown.inline(title)}\n\n{markdown.inline(one_line(why))}\n"
    options.write_markdown(path, lambda limit: markdown.fit(text, limit))


def _html(path: Path, title: str, why: str) -> None:
    from fidelity.htmlreport import page

    body = [f"<h1>{page.esc(title)}</h1>\n", page.pre(why)]
    options.write(path, page.document(title, body))
