"""Exit codes, and the exceptions that the CLI turns into them, in one place (see cli.main).

`EXIT_CODES` is the one written form of the contract: `fidelity --help` prints its short
words, and scripts/gen_reference.py writes docs/reference/exit-codes.md from all of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum


class Exit(IntEnum):
    """What every command's exit code means (a contract: extend it, never change it)."""

    HOLDS = 0
    NO = 1
    USAGE = 2
    UNTRUSTED = 3


@dataclass(frozen=True, slots=True)
class ExitCode:
    """One exit code: its short words (the `--help` epilog) and what it covers."""

    code: Exit
    short: str
    covers: str


EXIT_CODES = (
    ExitCode(
        Exit.HOLDS,
        "the gate holds",
        "everything compared and identical, or the stated expectation held",
    ),
    ExitCode(
        Exit.NO,
        "the evidence says no",
        "moved, falsified prediction, failing check, new failure, survived control",
    ),
    ExitCode(
        Exit.USAGE,
        "usage or configuration error",
        "bad arguments, invalid case table or configuration, unknown revision, a run "
        "directory interrupted before it was judged (finish it with `run --resume`)",
    ),
    ExitCode(
        Exit.UNTRUSTED,
        "the evidence cannot be trusted",
        "provenance findings, nothing compared, incomplete run (a declared case that ran in "
        "no shard), a damaged run directory, an internal error",
    ),
)
# Interrupted runs clean up first (processes killed, worktrees removed), then exit as a shell
# would report the signal.
INTERRUPTED = 130  # Ctrl-C (SIGINT)
SIGNALLED = 128  # plus the signal's number: SIGTERM (143) or SIGHUP (129), a cancelled CI job


def exit_summary() -> str:
    """`Exit codes: 0 the gate holds; 1 ...; 3 ...`: the line `fidelity --help` ends with."""
    return "Exit codes: " + "; ".join(f"{e.code:d} {e.short}" for e in EXIT_CODES) + "."


class FidelityError(Exception):
    """Base class; `exit_code` is what the CLI returns for it."""

    exit_code = Exit.UNTRUSTED


class UsageError(FidelityError):
    """Bad arguments, invalid configuration or case table, unknown revision: exit 2."""

    exit_code = Exit.USAGE


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

    exit_code = Exit.UNTRUSTED
