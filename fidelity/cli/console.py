"""The terminal: one console per run, plain under `-q`, and a progress bar only when it helps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import Console


def make(quiet: bool) -> Console:
    from rich.console import Console

    from fidelity.cli.plain import PlainConsole

    if quiet:
        return PlainConsole(no_color=True, highlight=False, soft_wrap=True, force_terminal=False)
    return Console(highlight=False, soft_wrap=True)


class Lazy:
    """A console made on first use: a command that prints nothing through it (the agent
    hook, which runs on every tool call) never imports rich."""

    def __init__(self, factory: Callable[[], Console]) -> None:
        self._factory = factory
        self._made: Console | None = None

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
