"""Value-aware explanations of outputs whose bytes differ: CSV/TSV, JSON and text.

Bytes are compared first (in `compare`); these run only on files that differ, and say
whether the difference is inside the tolerances the harness table declares
(`within_tolerance`) or a move, and where: which columns and row keys, the largest
differences, rows added or dropped. Tolerances follow numpy's `isclose`, relative to the
baseline value: |cand - base| <= atol + rtol * |base|.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TOP = 5
TEXT_DIFF_LINES = 40


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
    columns: tuple[str, ...] = ()  # columns with values out of tolerance
    keys: tuple[str, ...] = ()  # row keys (or JSON paths) out of tolerance, the first few
    keys_total: int = 0  # how many keys (or paths) are out of tolerance in all
    rows_added: tuple[str, ...] = ()
    rows_dropped: tuple[str, ...] = ()
    largest: tuple[Difference, ...] = ()
    diff: tuple[str, ...] = field(default=())  # bounded unified diff, for text


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


def _largest(diffs: Sequence[Difference], top: int) -> tuple[Difference, ...]:
    def order(d: Difference) -> tuple[bool, float]:
        return (d.within, -(d.abs_diff if d.abs_diff is not None else math.inf))

    return tuple(sorted(diffs, key=order)[:top])


def _summary(out: Sequence[Difference], within: Sequence[Difference], extra: Sequence[str]) -> str:
    parts = [*extra]
    if out:
        parts.append(f"{len(out)} values out of tolerance")
    if within:
        parts.append(f"{len(within)} differ within tolerance")
    return "; ".join(parts) or "no value differs (formatting or row order only)"


def _walk(
    base: Any, cand: Any, where: str, ignore: frozenset[str]
) -> Iterator[tuple[str, Any, Any]]:
    """Yield (path, base, cand) for every leaf that differs; absent sides are `_ABSENT`."""
    if where in ignore:
        return
    if isinstance(base, dict) and isinstance(cand, dict):
        for k in dict.fromkeys([*base, *cand]):
            if k in ignore:
                continue
            yield from _walk(base.get(k, _ABSENT), cand.get(k, _ABSENT), f"{where}.{k}", ignore)
    elif isinstance(base, list) and isinstance(cand, list):
        for i in range(max(len(base), len(cand))):
            b = base[i] if i < len(base) else _ABSENT
            c = cand[i] if i < len(cand) else _ABSENT
            yield from _walk(b, c, f"{where}[{i}]", ignore)
    elif base != cand or type(base) is not type(cand):
        yield where, base, cand


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _show(value: Any) -> str:
    return repr(value) if value is _ABSENT else json.dumps(value)


def compare_json(
    path: str, base_bytes: bytes, cand_bytes: bytes, spec: Mapping[str, Any]
) -> OutputDiff:
    """Path-wise JSON differences; numbers are judged with the global tolerance."""
    try:
        base, cand = json.loads(base_bytes), json.loads(cand_bytes)
    except ValueError as exc:
        return OutputDiff(path, "json", False, f"not valid JSON: {exc}")
    tol = tolerance_for(spec)
    diffs = []
    for where, b, c in _walk(base, cand, "$", frozenset(spec.get("ignore", []))):
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (b, c))
        if numeric:
            diffs.append(
                Difference(where, _show(b), _show(c), abs(c - b), tol.holds(float(b), float(c)))
            )
        else:
            diffs.append(Difference(where, _show(b), _show(c)))
    out = [d for d in diffs if not d.within]
    return OutputDiff(
        path, "json", not out, _summary(out, [d for d in diffs if d.within], []),
        keys=tuple(d.where for d in out)[:50],
        keys_total=len(out),
        largest=_largest(diffs, int(spec.get("top", DEFAULT_TOP))),
    )  # fmt: skip


def compare_text(
    path: str, base_bytes: bytes, cand_bytes: bytes, spec: Mapping[str, Any]
) -> OutputDiff:
    """A bounded unified diff; text has no tolerance, so any difference is a move."""
    base = base_bytes.decode(errors="replace").splitlines()
    cand = cand_bytes.decode(errors="replace").splitlines()
    lines = list(difflib.unified_diff(base, cand, "baseline", "candidate", lineterm="", n=1))
    limit = int(spec.get("top", TEXT_DIFF_LINES))
    shown = lines[:limit] + (
        [f"... {len(lines) - limit} more diff lines"] if len(lines) > limit else []
    )
    changed = sum(1 for line in lines[2:] if line[:1] in "+-")
    return OutputDiff(path, "text", False, f"{changed} lines changed", diff=tuple(shown))


def explain(path: str, base: bytes, cand: bytes, spec: Mapping[str, Any]) -> OutputDiff:
    """Dispatch on the spec's kind; `bytes` (or no spec) only says that the bytes differ."""
    kind = spec.get("kind", "bytes")
    try:
        if kind in ("csv", "tsv"):
            from fidelity.csvcmp import compare_csv

            return compare_csv(path, base, cand, spec)
        if kind == "json":
            return compare_json(path, base, cand, spec)
        if kind == "text":
            return compare_text(path, base, cand, spec)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return OutputDiff(path, kind, False, f"bytes differ and not parseable as {kind}: {first}")
    return OutputDiff(path, "bytes", False, f"bytes differ ({len(base)} -> {len(cand)} bytes)")
