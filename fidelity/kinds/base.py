"""The `Kind` protocol: what the matrix and the report ask of a comparator, and no more.

A comparator kind is one module and one row in `registry` (as pre-commit adds a language):
the verdict code, the words of a report and the HTML page ask the kind, never compare its
name. The helpers below are the answers most kinds share.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fidelity.kinds.diffs import Difference, OutputDiff
from fidelity.kinds.sources import Neutral, Source

Spec = Mapping[str, Any]
Problem = tuple[tuple[str | int, ...], str]  # where under the spec, and why
Change = tuple[str, str, str]  # where, old, new: as a report shows one change
LARGEST = "the largest differences"


@dataclass(frozen=True, slots=True)
class Series:
    """One figure's data: both sides' values as floats (NaN where one is not a number; None
    when a side lacks them), and the candidate minus the baseline per paired unit (a row's
    key, an array's element), or None when nothing pairs them."""

    name: str  # a column, or what an array holds
    base: Any  # 1-D float array, or None
    cand: Any
    deltas: Any = None
    per: str = "key"  # what one delta is for
    order: str = ""  # the x axis when each delta is drawn: how the units are ordered


@runtime_checkable
class Kind(Protocol):
    """A comparator: how one output is judged by value once its bytes differ."""

    @property
    def name(self) -> str:
        """As a table's `kind = "..."` names it."""
        ...

    @property
    def reads(self) -> frozenset[str]:
        """The spec keys it reads besides `kind`; a spec with another is refused."""
        ...

    @property
    def tolerant(self) -> bool:
        """Whether its spec can let differences pass, so that loosening it widens a gate."""
        ...

    @property
    def where_is_key(self) -> bool:
        """A change's `where` names its key (a JSON path, an array index): the keys need
        not be listed beside the changes shown."""
        ...

    @property
    def plots(self) -> bool:
        """Whether the HTML report draws figures of its outputs."""
        ...

    def problems(self, spec: Spec) -> list[Problem]:
        """What in a spec of this kind could never mean what it says, beyond its keys."""
        ...

    def explain(
        self, path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral
    ) -> OutputDiff:
        """Two outputs whose bytes differ, judged by value under the spec."""
        ...

    def parts(self, found: OutputDiff) -> tuple[str, ...] | None:
        """The parts (columns, paths) an explanation says moved, each judged against a
        nondeterministic case's spread on its own; None: the file is judged whole."""
        ...

    def part(self, where: str) -> str:
        """The part a difference's `where` belongs to."""
        ...

    def changes(self, found: OutputDiff) -> tuple[list[Change], int]:
        """The changes a report's words show as old -> new, and how many there are."""
        ...

    def kept(self, found: OutputDiff) -> tuple[str, tuple[Difference, ...]]:
        """What the report's table of differences is called, and its rows."""
        ...

    def plotted(self, found: OutputDiff) -> tuple[str, ...]:
        """The figures the report would draw for an explanation, by name, unread."""
        ...

    def series(
        self, found: OutputDiff, files: tuple[Path, Path], spec: Spec, limit: int
    ) -> list[Series]:
        """The data of at most `limit` figures, read from both sides' files."""
        ...


def largest_changes(found: OutputDiff, quote: bool) -> tuple[list[Change], int]:
    """The values out of tolerance or changed (largest first), else those within tolerance;
    with `quote`, a value no tolerance applies to is quoted, so that "" and " x" show."""
    out = [d for d in found.largest if not d.within]
    chosen, total = (out, found.values_out) if out else (list(found.largest), found.values_within)
    marks = [quote and d.abs_diff is None for d in chosen]
    shown = [
        (d.where, json.dumps(d.base) if q else d.base, json.dumps(d.cand) if q else d.cand)
        for d, q in zip(chosen, marks, strict=True)
    ]
    return shown, total


def unread(spec: Spec, reads: frozenset[str]) -> list[str]:
    """The keys of a spec its kind does not read, in the spec's order."""
    return [k for k in spec if k != "kind" and k not in reads]


class Plain:
    """The answers most kinds share: no problems beyond the keys, judged whole under a
    spread, changes shown as kept (unquoted), the largest differences, no figures. A kind
    subclasses it and answers the rest itself."""

    __slots__ = ()

    def problems(self, spec: Spec) -> list[Problem]:
        return []

    def parts(self, found: OutputDiff) -> tuple[str, ...] | None:
        return None

    def part(self, where: str) -> str:
        return where

    def changes(self, found: OutputDiff) -> tuple[list[Change], int]:
        return largest_changes(found, quote=False)

    def kept(self, found: OutputDiff) -> tuple[str, tuple[Difference, ...]]:
        return LARGEST, found.largest

    def plotted(self, found: OutputDiff) -> tuple[str, ...]:
        return ()

    def series(
        self, found: OutputDiff, files: tuple[Path, Path], spec: Spec, limit: int
    ) -> list[Series]:
        return []
