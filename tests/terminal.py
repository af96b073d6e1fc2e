"""A command run as a person types it: on a real pseudo-terminal (pexpect), at a chosen width,
with or without colour. Output captured from a pipe never takes the terminal's road (rich's
live displays, colour, fitting tables to the width), so a crash there hides from every other
test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pexpect
from support import PY

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>]")
TRACEBACK = ("Traceback (most recent call last)", "internal error")


@dataclass(frozen=True, slots=True)
class Session:
    code: int
    raw: str  # as the terminal received it: colour codes and cursor moves included
    text: str  # the same with escape sequences removed and carriage returns as newlines

    @property
    def coloured(self) -> bool:
        return "\x1b[1;" in self.raw or "\x1b[3" in self.raw

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.text.splitlines()]

    def clean(self) -> bool:
        """No traceback, no internal error."""
        return not any(mark in self.text for mark in TRACEBACK)


def strip(raw: str) -> str:
    return ANSI.sub("", raw).replace("\r\n", "\n").replace("\r", "\n")


def on_pty(
    args: list[str],
    cwd: Path,
    *,
    columns: int = 80,
    colour: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> Session:
    """`python -m fidelity ARGS` on a pseudo-terminal of `columns` x 40; with `colour=False`,
    NO_COLOR is set as a person who turned colour off has it."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "CI", "TERM")
    }
    base.update(PYTHONPATH=str(ROOT), TERM="xterm-256color")
    if not colour:
        base["NO_COLOR"] = "1"
    child = pexpect.spawn(
        PY,
        ["-m", "fidelity", *args],
        cwd=str(cwd),
        env={**base, **(env or {})},
        dimensions=(40, columns),
        encoding="utf-8",
        codec_errors="replace",
        timeout=timeout,
        use_poll=True,  # select() refuses descriptors past 1,024, which a long session reaches
    )
    raw = child.read()  # until the command closes the terminal
    child.close()
    code = child.exitstatus if child.exitstatus is not None else 128 + (child.signalstatus or 0)
    return Session(code, raw, strip(raw))
