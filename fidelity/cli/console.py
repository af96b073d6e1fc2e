"""The terminal: one console per run, plain under `-q`, and a progress bar only when it helps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def make(quiet: bool) -> Console:
    from rich.console import Console

    from fidelity.cli.plain import PlainConsole

    if quiet:
        return PlainConsole(no_color=True, highlight=False, soft_wrap=True, force_terminal=False)
    return Console(highlight=False, soft_wrap=True)


@contextmanager
def progress(console: Console, quiet: bool, what: str) -> Iterator[Callable[..., None] | None]:
    """A callback `(role, name, status)` that advances a transient bar, or None."""
    if quiet or not console.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(what, total=None)

        def advance(role: str, name: str, status: object) -> None:
            bar.update(task, advance=1, description=f"{role}: {name} {status}")

        yield advance
