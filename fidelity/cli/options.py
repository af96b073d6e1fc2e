"""Options shared by several commands, each defined once, and the one writer of reports.

A report path is checked before the command runs, so a gate that holds never turns into an
error at the end because its report folder cannot be written; `-` means standard output.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fidelity.errors import UsageError
from fidelity.text import printable

STDOUT = Path("-")
_HELP = {
    "json": "also write the {what} as JSON ('-' for standard output only)",
    "markdown": "also write it as Markdown for a PR comment or $GITHUB_STEP_SUMMARY",
    "junit": "also write it as JUnit XML, one test case per {unit}",
}


def quiet(parser: argparse.ArgumentParser) -> None:
    """`-q` after the command as well as before it (`fidelity run -q`, `fidelity -q run`)."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="plain output for CI logs: no progress, no colour, one record per line",
    )


def repo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the repository (default: the one holding the working directory)",
    )


def reports(
    parser: argparse.ArgumentParser, what: str = "report", *, junit: str | None = None
) -> None:
    """--json and --markdown, and --junit when `junit` names what one test case stands for."""
    parser.add_argument("--json", type=Path, metavar="PATH", help=_HELP["json"].format(what=what))
    parser.add_argument("--markdown", type=Path, metavar="PATH", help=_HELP["markdown"])
    if junit:
        parser.add_argument(
            "--junit", type=Path, metavar="PATH", help=_HELP["junit"].format(unit=junit)
        )


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (`--jobs 0` would run nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def jobs(parser: argparse.ArgumentParser, default: int, help: str) -> None:
    parser.add_argument("--jobs", type=positive_int, default=default, metavar="N", help=help)


def to_stdout(path: Path | None) -> bool:
    return path == STDOUT


def check_writable(*paths: Path | None) -> None:
    """UsageError, before anything runs, for a report path that cannot be written."""
    for path in paths:
        if path is None or path == STDOUT:
            continue
        if path.is_dir():
            raise UsageError(f"report path {path} is a directory; name a file")
        folder = path.parent
        existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
        if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write the report {path}: {existing} is not a writable folder")


def write(path: Path | None, text: str) -> None:
    """Write a report, making its folder; `-` writes to standard output."""
    if path is None:
        return
    text = printable(text)
    if path == STDOUT:
        sys.stdout.write(text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
