"""GitHub Actions annotations: `::error file=F,line=N,title=T::message` lines on stdout.

The one writer of workflow commands, for every command that runs in CI (check-docs
`--format github`, the matrix gates, the history gates, and preflight's renderer). GitHub
reads a whole stdout line as one command, so its text is escaped as the Actions toolkit
does (`escapeData`, `escapeProperty`): `%`, CR and LF in the message, and also `:` and `,`
in a property (file, title). Control characters are shown as escapes besides, so case
text cannot reach the log raw. GitHub keeps at most 10 error annotations per step.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import IO

from fidelity.text import visible


@dataclass(frozen=True, slots=True)
class Annotation:
    title: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None


def active(environ: Mapping[str, str] | None = None) -> bool:
    """Running under GitHub Actions, which sets GITHUB_ACTIONS=true in every step."""
    return (os.environ if environ is None else environ).get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return visible(text)


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(note: Annotation) -> str:
    """The workflow command line for one annotation, without its newline."""
    props = [f"file={escape_property(note.file)}"] if note.file else []
    if note.file and note.line is not None:  # a line means nothing without its file
        props.append(f"line={note.line}")
        if note.col is not None:
            props.append(f"col={note.col}")
    props.append(f"title={escape_property(note.title)}")
    return f"::error {','.join(props)}::{escape_data(note.message)}"


def error(file: str | None, line: int | None, title: str, message: str) -> str:
    """One `::error` line: at file:line when there is one, else a plain `::error title=...`."""
    return command(Annotation(title, message, file, line))


def emit(stream: IO[str], notes: Iterable[Annotation]) -> None:
    """Write each annotation as its own line, straight to the stream (never through a
    renderer that could wrap it or read `:name:` as an emoji)."""
    stream.write("".join(command(note) + "\n" for note in notes))
    stream.flush()
