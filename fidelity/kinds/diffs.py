"""What a value-aware comparison finds: differences, tolerances and one output's explanation.

Shared by every comparator kind. Tolerances follow numpy's `isclose`,
relative to the baseline value: |cand - base| <= atol + rtol * |base|.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TOP = 5
SHOWN_LINE_CHARS = 200  # of one shown value or diff line
OWN_PATHS = "no value differs outside the side's own paths ({out}, {cache}, {worktree})"


@dataclass(frozen=True, slots=True)
class Difference:
    where: str  # row key and column, or JSON path
    base: str
    cand: str
    abs_diff: float | None = None  # None for non-numeric differences
    within: bool = False


@dataclass(frozen=True, slots=True)
class OutputDiff:
    path: str
    kind: str
    within_tolerance: bool
    summary: str
    columns: tuple[str, ...] = ()  # columns with values out of tolerance (or changed)
    keys: tuple[str, ...] = ()  # row keys (or JSON paths) out of tolerance, the first few
    keys_total: int = 0  # how many keys (or paths) are out of tolerance in all
    rows_added: tuple[str, ...] = ()
    rows_dropped: tuple[str, ...] = ()
    largest: tuple[Difference, ...] = ()
    diff: tuple[str, ...] = field(default=())  # bounded unified diff, for text
    limit: str = ""  # why the comparator could not judge by value (too large): a finding
    unmatched: tuple[str, ...] = ()  # ignore entries that matched nothing on either side
    values_out: int = 0  # values out of tolerance or changed (text lines: changed pairs)
    values_changed: int = 0  # of those, values no tolerance applies to (text, booleans, types)
    values_within: int = 0  # numbers that differ within tolerance


@dataclass(frozen=True, slots=True)
class Tolerance:
    rtol: float = 0.0
    atol: float = 0.0

    def holds(self, base: float, cand: float) -> bool:
        if math.isnan(base) or math.isnan(cand):
            return math.isnan(base) and math.isnan(cand)
        if math.isinf(base) or math.isinf(cand):  # as numpy.isclose: only the same infinity
            return base == cand
        return abs(cand - base) <= self.atol + self.rtol * abs(base)

    def judge(self, base: int | float, cand: int | float) -> tuple[float | None, bool]:
        """|cand - base| and whether it holds; two integers a float cannot tell apart
        (past 2**53) exactly; None and False (a change) for numbers too large for a float."""
        try:
            if type(base) is int and type(cand) is int and max(abs(base), abs(cand)) >= 2**53:
                gap = abs(cand - base)  # an int against a float compares exactly
                return float(gap), gap <= self.atol + self.rtol * float(abs(base))
            fb, fc = float(base), float(cand)
        except OverflowError:
            return None, False
        return abs(fc - fb), self.holds(fb, fc)


def tolerance_for(spec: Mapping[str, Any], column: str | None = None) -> Tolerance:
    own = spec.get("columns", {}).get(column, {}) if column else {}
    return Tolerance(
        rtol=float(own.get("rtol", spec.get("rtol", 0.0))),
        atol=float(own.get("atol", spec.get("atol", 0.0))),
    )


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isinf(value) and text.strip().lower() not in ("inf", "-inf") else value


def judge(where: str, base: str, cand: str, tol: Tolerance) -> Difference | None:
    """None when equal; otherwise the difference and whether tolerance covers it."""
    if base == cand:
        return None
    b, c = _number(base), _number(cand)
    if b is None or c is None:
        return Difference(where, base, cand)
    if b == c or (math.isnan(b) and math.isnan(c)):
        return Difference(where, base, cand, 0.0, True)
    return Difference(where, base, cand, abs(c - b), tol.holds(b, c))


def rank(abs_diff: float | None) -> float:
    """How large a difference ranks: a change no size applies to, or a NaN against a
    number, as large as any (a NaN key would leave the sort's order to chance)."""
    return math.inf if abs_diff is None or math.isnan(abs_diff) else abs_diff


def largest(diffs: Sequence[Difference], top: int) -> tuple[Difference, ...]:
    def order(d: Difference) -> tuple[bool, float]:
        return (d.within, -rank(d.abs_diff))

    return tuple(sorted(diffs, key=order)[:top])


def clip_pair(old: str, new: str, room: int) -> tuple[str, str]:
    """Two values, each at most about `room` characters: a longer one is cut around where
    the two first differ, with `...` where text was left out, so the change stays visible."""
    if len(old) <= room and len(new) <= room:
        return old, new
    start = max(0, len(os.path.commonprefix([old, new])) - room // 3)

    def cut(text: str) -> str:
        if len(text) <= room:
            return text
        begin = min(start, len(text) - room)
        head = "..." if begin else ""
        return head + text[begin : begin + room] + ("..." if begin + room < len(text) else "")

    return cut(old), cut(new)


def counted_summary(
    out: int, within: int, extra: Sequence[str], same: str = "", changed: int = 0
) -> str:
    """What differs, in words; `same` says why nothing did although the bytes differ.

    Of the `out` values, `changed` are ones no tolerance applies to (text, booleans, a
    change of type): they are "changed", never "out of tolerance"."""
    parts = [*extra]
    if out - changed:
        parts.append(f"{out - changed} values out of tolerance")
    if changed:
        parts.append(f"{changed} values changed")
    if within:
        parts.append(f"{within} differ within tolerance")
    return "; ".join(parts) or same or "no value differs (formatting or row order only)"


SHOWN_KEYS = 50


@dataclass(frozen=True, slots=True)
class Block:
    """Differences met in bulk (a block of rows compared column by column): counts, the
    columns out of tolerance in the order met, `rows` rows out of tolerance whose labels
    `key(n)` gives (asked only for the few shown), and the `top` largest in order met."""

    within: int
    out: int
    changed: int
    columns: Sequence[str]
    rows: int
    key: Callable[[int], str]
    top: Sequence[Difference]


@dataclass(slots=True)
class Tally:
    """Differences met while streaming through an output: counts, the first keys and
    columns out of tolerance, and the largest differences, in bounded memory."""

    top: int = DEFAULT_TOP
    out: int = 0
    within: int = 0
    changed: int = 0  # of `out`, the differences no tolerance applies to
    columns: dict[str, None] = field(default_factory=dict)
    keys: dict[str, None] = field(default_factory=dict)
    keys_total: int = 0
    _largest: list[Difference] = field(default_factory=list)
    _last_key: str | None = None

    def add(self, key: str, column: str | None, diff: Difference) -> None:
        if diff.within:
            self.within += 1
        else:
            self.out += 1
            self.changed += diff.abs_diff is None
            if column is not None:
                self.columns.setdefault(column, None)
            if key != self._last_key:  # a row's differences come together, once per row
                self.keys_total += 1
                if len(self.keys) < SHOWN_KEYS:
                    self.keys[key] = None
                self._last_key = key
        self._largest.append(diff)
        if len(self._largest) > 4 * self.top + 16:
            self._largest = list(largest(self._largest, self.top))

    def add_block(self, block: Block) -> None:
        """Differences counted in bulk, as `add` one by one would count them."""
        self.within += block.within
        self.out += block.out
        self.changed += block.changed
        for column in block.columns:
            self.columns.setdefault(column, None)
        if block.rows:
            self.keys_total += block.rows - (block.key(0) == self._last_key)
            n = 0
            while len(self.keys) < SHOWN_KEYS and n < block.rows:
                self.keys.setdefault(block.key(n), None)
                n += 1
            self._last_key = block.key(block.rows - 1)
        self._largest.extend(block.top)
        if len(self._largest) > 4 * self.top + 16:
            self._largest = list(largest(self._largest, self.top))

    def largest(self) -> tuple[Difference, ...]:
        return largest(self._largest, self.top)

    def summary(self, extra: Sequence[str], same: str = "") -> str:
        return counted_summary(self.out, self.within, extra, same, self.changed)
