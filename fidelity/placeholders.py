"""The `{name}` placeholders of case and control tables: one grammar, read in one place.

A value is read left to right into pieces (`pieces`); the tables' validation (`problems`)
and the substitution (`fill`) both use that reading, so a table is checked at exactly the
places that will be filled:

- `{{name}}` is a literal `{name}`, never filled;
- `${name}` is the shell's variable, kept as written and never filled; when `name` is a
  placeholder there, validation calls it an error (a table that wrote `${out}` most likely
  meant `{out}`; `${{out}}` is how to write the shell's variable);
- `{name}`, name in lower case (`[a-z_][a-z0-9_]*`), is a placeholder;
- everything else is text, kept as it is.

`{python}` is the interpreter fidelity itself runs in: a table that names it works the same
from an activated venv, a venv that is not activated and a pipx-style install, where a bare
`python` would be whatever comes first on PATH.
"""

from __future__ import annotations

import enum
import re
import shlex
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

CASE = frozenset({"out", "cache", "worktree", "python", "venv", "harness"})
SIDE = frozenset(
    {"worktree", "python", "venv", "harness"}
)  # setup, [matrix] env and python: no case yet

_NAME = r"[a-z_][a-z0-9_]*"
# at each place the first alternative that matches wins: an escape, then a shell variable
_TOKEN = re.compile(
    rf"\{{\{{(?P<escaped>{_NAME})\}}\}}"  # {{name}}
    rf"|\$\{{(?P<shell>{_NAME})\}}"  # ${name}
    rf"|\{{(?P<place>{_NAME})\}}"  # {name}
)


class Kind(enum.Enum):
    TEXT = "text"
    PLACE = "place"  # `{name}`: filled
    ESCAPED = "escaped"  # `{{name}}`: a literal `{name}`
    SHELL = "shell"  # `${name}`: the shell's variable, kept as written


@dataclass(frozen=True, slots=True)
class Piece:
    kind: Kind
    text: str  # as written
    name: str = ""  # the name, for every kind but TEXT


def pieces(value: str) -> Iterator[Piece]:
    """value read left to right; the pieces' texts joined give value back."""
    at = 0
    for m in _TOKEN.finditer(value):
        if m.start() > at:
            yield Piece(Kind.TEXT, value[at : m.start()])
        kind = Kind(m.lastgroup)
        yield Piece(kind, m.group(), m.group(m.lastgroup or ""))
        at = m.end()
    if at < len(value):
        yield Piece(Kind.TEXT, value[at:])


def names(value: str) -> list[str]:
    """The names of value's placeholders, in order, once per occurrence."""
    if "{" not in value:  # most words of a table name none: no pieces to read
        return []
    return [p.name for p in pieces(value) if p.kind is Kind.PLACE]


def with_python(places: Mapping[str, str]) -> dict[str, str]:
    """places plus `{python}`; a place given by the caller wins."""
    return {"python": sys.executable, **places}


def fill(value: str, places: Mapping[str, str]) -> str:
    """Each `{name}` replaced by its place; `{{name}}` is a literal `{name}`; `${name}` and a
    `{name}` with no place are kept as written."""
    if "{" not in value:  # most of a case's words: nothing to fill (once per word and case)
        return value
    filled = with_python(places)
    out = []
    for piece in pieces(value):
        if piece.kind is Kind.PLACE:
            out.append(filled.get(piece.name, piece.text))
        elif piece.kind is Kind.ESCAPED:
            out.append("{" + piece.name + "}")
        else:
            out.append(piece.text)
    return "".join(out)


def fill_shell(command: str, places: Mapping[str, str]) -> str:
    """A shell command line with each place quoted: a path with a space, or one holding
    `$(...)`, stays one word and is never run."""
    return fill(command, {name: shlex.quote(path) for name, path in with_python(places).items()})


def unknown(value: str, allowed: Iterable[str]) -> list[str]:
    """Placeholders in value that are not among allowed (a typo such as `{outt}`)."""
    known = set(allowed)
    return [f"{{{name}}}" for name in names(value) if name not in known]


def _shell_spelled(name: str) -> str:
    return (
        f"${{{name}}} is the shell's variable, which fidelity does not fill: write {{{name}}} "
        f"for fidelity's placeholder, or ${{{{{name}}}}} (or ${name}) for the shell's variable"
    )


NUL = (
    "holds a NUL character (\\u0000), which no command argument or environment value can "
    "carry; remove it"
)


def problems(value: str, allowed: Iterable[str]) -> list[str]:
    """Every placeholder problem in value, in order: a name not among allowed (a typo such as
    `{outt}`), a name among them written as the shell's `${name}`; and a NUL, which no
    command argument, folder or environment value can carry (each value checked here is
    one of them)."""
    known = set(allowed)
    listed = ", ".join(f"{{{n}}}" for n in sorted(known))
    found = [NUL] if "\0" in value else []
    for piece in pieces(value):
        if piece.kind is Kind.PLACE and piece.name not in known:
            found.append(f"unknown placeholder {piece.text}; known here: {listed}")
        elif piece.kind is Kind.SHELL and piece.name in known:
            found.append(_shell_spelled(piece.name))
    return found
