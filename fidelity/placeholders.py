"""The `{name}` placeholders of case and control tables, filled in one place.

`{python}` is the interpreter fidelity itself runs in: a table that names it works the same
from an activated venv, a venv that is not activated and a pipx-style install, where a bare
`python` would be whatever comes first on PATH.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable, Mapping

# `{name}` in lower case, not `${name}` (a shell variable) and not `{{` (a literal brace)
_PLACEHOLDER = re.compile(r"(?<![\${])\{([a-z_][a-z0-9_]*)\}(?!\})")
CASE = frozenset({"out", "cache", "worktree", "python", "venv"})
SIDE = frozenset({"worktree", "python", "venv"})  # setup, [matrix] env and python: no case yet


def with_python(places: Mapping[str, str]) -> dict[str, str]:
    """places plus `{python}`; a place given by the caller wins."""
    return {"python": sys.executable, **places}


_ESCAPED = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


def fill(value: str, places: Mapping[str, str]) -> str:
    """Each `{name}` replaced by its place; `{{name}}` is a literal `{name}`."""
    parts = _ESCAPED.split(value)  # even indexes: text; odd: escaped names, kept literal
    for i in range(0, len(parts), 2):
        for name, path in with_python(places).items():
            parts[i] = parts[i].replace("{" + name + "}", path)
    for i in range(1, len(parts), 2):
        parts[i] = "{" + parts[i] + "}"
    return "".join(parts)


def fill_shell(command: str, places: Mapping[str, str]) -> str:
    """A shell command line with each place quoted: a path with a space, or one holding
    `$(...)`, stays one word and is never run."""
    return fill(command, {name: shlex.quote(path) for name, path in with_python(places).items()})


def unknown(value: str, allowed: Iterable[str]) -> list[str]:
    """Placeholders in value that are not among allowed (a typo such as `{outt}`)."""
    known = set(allowed)
    return [f"{{{name}}}" for name in _PLACEHOLDER.findall(value) if name not in known]
