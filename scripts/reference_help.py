"""Every command's `--help` as it reads at a fixed width, whatever Python prints it
(scripts/gen_reference.py pastes them into docs/reference/commands.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator

from fidelity.cli.main import build_parser

COLUMNS = 100


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from parsers(sub)


def pinned(formatter: type[argparse.HelpFormatter]) -> Callable[..., argparse.HelpFormatter]:
    """The parser's own formatter at a fixed width (as with COLUMNS=100), writing
    `-o FILE, --out FILE` as Python 3.11 and 3.12 do (3.13 writes `-o, --out FILE`), so that
    the page does not change with the Python that generates it."""

    class Pinned(formatter):  # type: ignore[misc, valid-type]
        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=COLUMNS - 2)

        def _format_action_invocation(self, action: argparse.Action) -> str:
            if not action.option_strings or action.nargs == 0:
                text: str = super()._format_action_invocation(action)
                return text
            args = self._format_args(action, self._get_default_metavar_for_optional(action))
            return ", ".join(f"{option} {args}" for option in action.option_strings)

    return Pinned


def helps() -> dict[str, str]:
    """prog -> its `--help`, for every command and subcommand."""
    out = {}
    for parser in parsers(build_parser()):
        parser.formatter_class = pinned(parser.formatter_class)
        if hasattr(parser, "color"):  # Python 3.14 colours help on a terminal
            parser.color = False
        out[parser.prog] = parser.format_help()
    return out
