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
from collections.abc import Iterator, Mapping
from typing import Any

from fidelity.matrix.diffs import (
    DEFAULT_TOP,
    Difference,
    OutputDiff,
    largest,
    summary,
    tolerance_for,
)

TEXT_DIFF_LINES = 40


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
        path,
        "json",
        not out,
        summary(out, [d for d in diffs if d.within], []),
        keys=tuple(d.where for d in out)[:50],
        keys_total=len(out),
        largest=largest(diffs, int(spec.get("top", DEFAULT_TOP))),
    )


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
            from fidelity.matrix.csvcmp import compare_csv  # pandas: only when a CSV differs

            return compare_csv(path, base, cand, spec)
        if kind == "json":
            return compare_json(path, base, cand, spec)
        if kind == "text":
            return compare_text(path, base, cand, spec)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return OutputDiff(path, kind, False, f"bytes differ and not parseable as {kind}: {first}")
    return OutputDiff(path, "bytes", False, f"bytes differ ({len(base)} -> {len(cand)} bytes)")
