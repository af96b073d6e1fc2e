"""`ignore` entries of the JSON comparator: a path (`$.a.b`, `$.runs[0]`, `$.runs[*].t`,
`$["a.b"]` for a key a segment cannot spell) or a bare key ignored at any depth
(`wall_clock`). `a.b` is neither, and is refused."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_PATH = re.compile(r'^\$(\.[^.\[\]]+|\[(\d+|\*)\]|\["(?:[^"\\]|\\.)*"\])*$')
_BARE = re.compile(r"^[^.\[\]$]+$")


def ignore_problem(entry: str) -> str | None:
    """Why a JSON ignore entry can never match, or None."""
    if _PATH.match(entry) or _BARE.match(entry):
        return None
    hint = "$." + entry if not entry.startswith("$") else entry
    return (
        f"{entry!r} is neither a JSON path ($.key, $.list[0], $.list[*].key) nor a bare key "
        f"(ignored at any depth); did you mean {hint!r}?"
    )


def _regex(entry: str) -> re.Pattern[str]:
    if _BARE.match(entry):
        return re.compile(r"^\$.*\." + re.escape(entry) + r"$")
    body = re.escape(entry).replace(r"\[\*\]", r"\[\d+\]")
    return re.compile("^" + body + "$")


@dataclass(slots=True)
class Ignores:
    """The entries of one spec, and which of them matched something."""

    entries: tuple[str, ...]
    hit: set[str] = field(default_factory=set)
    _compiled: list[tuple[str, re.Pattern[str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._compiled = [(e, _regex(e)) for e in self.entries]

    def ignored(self, path: str) -> bool:
        for entry, pattern in self._compiled:
            if pattern.match(path):
                self.hit.add(entry)
                return True
        return False

    def all_hit(self) -> bool:
        """Every entry has matched: a subtree skipped now cannot leave one unmatched."""
        return len(self.hit) == len(self.entries)

    def unmatched(self) -> tuple[str, ...]:
        return tuple(e for e in self.entries if e not in self.hit)


def unmatched_columns(ignore: Iterable[str], *headers: Iterable[str]) -> tuple[str, ...]:
    """CSV ignore entries naming a column neither side has."""
    present = {c for header in headers for c in header}
    return tuple(c for c in ignore if c not in present)
