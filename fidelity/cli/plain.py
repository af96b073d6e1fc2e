"""The console of `-q`, a type of its own so that every renderer can tell it apart.

A module apart from `console` so that importing the CLI does not import rich: only a run
that prints makes one.
"""

from __future__ import annotations

from rich.console import Console


class PlainConsole(Console):
    """Reports print one record per line, unwrapped, no box tables; no colour, no progress.

    A type rather than a flag, so that every renderer given a console can tell, without
    each command passing `quiet` along.
    """
