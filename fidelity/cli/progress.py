"""Progress a person can follow: a bar on a terminal, a plain line at a steady rhythm in a
log, nothing under `-q`.

Off a terminal (a CI log, `| tee`, a file) a long run used to say nothing until its verdict;
now a line goes to standard error every `FIDELITY_PROGRESS_EVERY` seconds (default 10, 0
turns it off): steps done of the total, failures so far, time elapsed. Standard error, so it
never mixes into `--json -` or the records of standard output.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

from fidelity.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

    from fidelity.progress import Progress

EVERY = "FIDELITY_PROGRESS_EVERY"
DEFAULT_EVERY = 10.0


def every(environ: dict[str, str] | os._Environ[str]) -> float:
    """Seconds between plain progress lines; 0 means none."""
    given = environ.get(EVERY, "").strip()
    if not given:
        return DEFAULT_EVERY
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise UsageError(
            f"{EVERY}={given!r} is not a number of seconds: set it to a number such as 10, "
            "or 0 for no progress lines"
        )
    return seconds


def elapsed(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class Counts:
    """Steps done and failed out of a total that becomes known once the work is planned."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.done = 0
        self.failed = 0
        self._lock = threading.Lock()

    def expect(self, total: int) -> None:
        with self._lock:
            self.total = total

    def count(self, failed: bool) -> None:
        with self._lock:
            self.done += 1
            self.failed += failed


class Ticker:
    """A plain line on `stream` every `interval` seconds while the work runs."""

    def __init__(self, command: str, noun: str, interval: float, stream: IO[str]) -> None:
        self.counts = Counts()
        self._command, self._noun, self._interval, self._stream = command, noun, interval, stream
        self._began = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)

    def expect(self, total: int) -> None:
        self.counts.expect(total)

    def step(self, role: str, name: str, status: str, failed: bool) -> None:
        self.counts.count(failed)

    def line(self, now: float) -> str:
        c = self.counts
        took = elapsed(now - self._began)
        if c.total is None:
            return f"fidelity {self._command}: setting up, {took} elapsed"
        return (
            f"fidelity {self._command}: {c.done} of {c.total} {self._noun} done, "
            f"{c.failed} failed, {took} elapsed"
        )

    def _beat(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._stream.write(self.line(time.monotonic()) + "\n")
                self._stream.flush()
            except (OSError, ValueError):  # a closed pipe ends the lines, never the run
                return

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Bar:
    """A transient rich bar on the terminal: steps done of the total, the last step named."""

    def __init__(self, bar: RichProgress, task: TaskID) -> None:
        self._bar, self._task = bar, task

    def expect(self, total: int) -> None:
        self._bar.update(self._task, total=total)

    def step(self, role: str, name: str, status: str, failed: bool) -> None:
        self._bar.update(self._task, advance=1, description=f"{role}: {name} {status}")


@contextmanager
def shown(
    console: Console, quiet: bool, command: str, noun: str, *, stdout_taken: bool = False
) -> Iterator[Progress | None]:
    """The progress of `fidelity COMMAND`'s work of `noun` (e.g. "case runs"), as the
    output's road allows: a bar on a terminal, plain lines otherwise, none under `-q`. With
    a report on standard output (`--json -`) it goes to standard error, bar or lines: drawn
    on the terminal standard output was, the bar came before the JSON."""
    if quiet:
        yield None
        return
    if console.is_terminal and not stdout_taken or stdout_taken and sys.stderr.isatty():
        if stdout_taken:
            from rich.console import Console as RichConsole

            console = RichConsole(stderr=True)
        with _bar(console, noun) as bar:
            yield bar
        return
    interval = every(os.environ)
    if interval == 0:
        yield None
        return
    with Ticker(command, noun, interval, sys.stderr) as ticker:
        yield ticker


@contextmanager
def _bar(console: Console, what: str) -> Iterator[Bar]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from fidelity.cli.console import real

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=real(console), transient=True) as bar:
        yield Bar(bar, bar.add_task(what, total=None))
