"""Exceptions that the CLI turns into exit codes, in one place (see cli.main)."""

from __future__ import annotations

from collections.abc import Sequence


class FidelityError(Exception):
    """Base class; `exit_code` is what the CLI returns for it."""

    exit_code = 3


class UsageError(FidelityError):
    """Bad arguments, invalid configuration or case table, unknown revision: exit 2."""

    exit_code = 2


class TableError(UsageError):
    """An invalid case or control table (`kind`); the message lists every problem, each
    located."""

    def __init__(self, kind: str, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"invalid {kind} table {source}:\n{lines}")


class UntrustedError(FidelityError):
    """The evidence cannot be produced or trusted (git failed mid-run, corrupt run dir): exit 3."""

    exit_code = 3
