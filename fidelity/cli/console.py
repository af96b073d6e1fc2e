"""The terminal: one console per run, plain under `-q`, and a progress bar only when it helps.

Off a terminal (a CI log, a pipe, a file) the console is `WIDE`, whatever COLUMNS says: a
table is then as wide as its content, so no log path, test id or sha is folded mid-token.
This is the one rule for every table fidelity prints (the case matrix, controls, check-docs,
stale and the other reports); on a terminal, tables fit its width.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import Console


WIDE = 10_000  # columns off a terminal: wider than any row fidelity prints


def width(stream: object) -> int | None:
    """None (fit the terminal) when `stream` is a terminal, else `WIDE`. Whether it is one
    is asked of the stream itself: FORCE_COLOR makes rich treat a CI log as a terminal."""
    isatty = getattr(stream, "isatty", None)
    try:
        return None if isatty is not None and isatty() else WIDE
    except ValueError:  # closed
        return WIDE


def make(quiet: bool) -> Console:
    from rich.console import Console

    from fidelity.cli.plain import PlainConsole

    columns = width(sys.stdout)
    # off a terminal a table is as wide as its widest row, and rich pads every other row to
    # it: a log or a file would carry thousands of trailing blanks per row
    out = sys.stdout if columns is None else cast("IO[str]", Trimmed(sys.stdout))
    if quiet:
        return PlainConsole(
            file=out,
            no_color=True,
            highlight=False,
            soft_wrap=True,
            force_terminal=False,
            width=columns,
        )
    return Console(file=out, highlight=False, soft_wrap=True, width=columns)


class Trimmed(io.TextIOBase):
    """A text stream that drops the blanks at the end of each line written through it."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        *lines, self._pending = (self._pending + text).split("\n")
        if lines:
            self._stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # rich asks the stream's encoding
        return getattr(self._stream, "encoding", "utf-8")


class Lazy:
    """A console made on first use: a command that prints nothing through it (the agent
    hook, which runs on every tool call) never imports rich."""

    def __init__(self, factory: Callable[[], Console], stdout_quiet: bool | None = None) -> None:
        self._factory = factory
        self._made: Console | None = None
        self.stdout_quiet = stdout_quiet  # None: not `make`'s console of standard output

    def _console(self) -> Console:
        if self._made is None:
            self._made = self._factory()
        return self._made

    def __getattr__(self, name: str) -> object:
        return getattr(self._console(), name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(console, PlainConsole) sees the made console
        return type(self._console())


def lazy(factory: Callable[[], Console]) -> Console:
    return cast("Console", Lazy(factory))


def lazy_stdout(quiet: bool) -> Console:
    """`make(quiet)`, made on first use."""
    return cast("Console", Lazy(lambda: make(quiet), stdout_quiet=quiet))


# what makes rich take a stream that is no terminal for one (and colour it)
_TERMINAL_HINTS = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def plain_stdout(console: Console) -> IO[str] | None:
    """Standard output, to draw a table on without making `console` (rich's console costs
    15 ms to import and make): when `console` is `lazy_stdout(False)` not made yet, standard
    output is no terminal, is UTF-8, and nothing in the environment makes rich treat it as
    one. Then the console would be `WIDE` and uncoloured. Else None: ask the console."""
    if not isinstance(console, Lazy) or console._made is not None:
        return None
    if console.stdout_quiet is not False or width(sys.stdout) is None:
        return None
    if any(name in os.environ for name in _TERMINAL_HINTS):
        return None
    if not (getattr(sys.stdout, "encoding", None) or "").lower().startswith("utf"):
        return None  # rich draws an ASCII box there
    return cast("IO[str]", Trimmed(sys.stdout))


def real(console: Console) -> Console:
    """The console itself, made if it is a lazy one not made yet. Whatever hands the console
    to another rich object (a progress bar, a live display) hands it this: rich uses it with
    `with console:` and other special methods, which Python looks up on the type, so a proxy
    that forwards attributes cannot stand in for it."""
    if isinstance(console, Lazy):
        return console._console()
    return console


def plain_file(console: Console) -> IO[str]:
    """Where a ``-q`` report is written: standard output when ``console`` is a run's lazy
    one not made yet (so rich is not imported for it), else the console's own file."""
    if isinstance(console, Lazy) and console._made is None:
        return sys.stdout
    return console.file
