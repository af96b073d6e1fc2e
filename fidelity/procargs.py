"""Why a command cannot be given to a process at all (below `fidelity.proc`, which raises it).

subprocess refuses a NUL in an argument, the working folder or an environment value with a
bare `ValueError: embedded null byte`; the tables refuse NULs where they are written, and
this names the value for any other road (pyproject.toml, an option), as a usage error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


class Unstartable(ValueError):
    """A command no process can be given: the user's to fix, so the CLI exits 2 with it."""


def nul_words(
    argv: Sequence[str] | str, cwd: Path | str | None, env: Mapping[str, str] | None
) -> str:
    """What holds the NUL that kept a command from starting, and what to do."""
    words = [argv] if isinstance(argv, str) else list(argv)
    where = [f"its argument {w!r}" for w in words if "\0" in w]
    where += [f"its folder {str(cwd)!r}"] if cwd is not None and "\0" in str(cwd) else []
    where += [f"${k}" for k, v in (env or {}).items() if "\0" in k + v]
    program = words[0] if words else "?"
    return (
        f"cannot start {program!r}: {', '.join(where) or 'a value'} holds a NUL character, "
        "which no process can be given; remove it where it was set (a case or control table, "
        "pyproject.toml, or an option)"
    )
