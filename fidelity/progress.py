"""What long work tells whoever watches it: how many steps there are, and each one done.

The matrix and the controls report through this; the CLI decides how it is shown (a bar on
a terminal, a plain line at a steady rhythm in a log, nothing under `-q`).
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def expect(self, total: int) -> None:
        """The number of steps, once the work knows it (after set-up, selection, resume)."""

    def step(self, role: str, name: str, status: str, failed: bool) -> None:
        """One step done: `role` is the side or phase, `failed` whether it went wrong."""
