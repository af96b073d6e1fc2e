"""Kind `json`: two documents walked path by path; numbers judged with the tolerance.

Each leaf that differs is named by its path (`$.runs[3].t`); numbers are out of tolerance or
within it, anything else (text, booleans, null, a change of type) is changed. `ignore`
names paths or bare keys never compared (`ignores`). A file over `JSON_LIMIT_BYTES` is not
compared by value: parsed JSON takes many times its size in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fidelity.kinds.base import Plain, Problem, Spec
from fidelity.kinds.diffs import (
    DEFAULT_TOP,
    OWN_PATHS,
    SHOWN_LINE_CHARS,
    Difference,
    OutputDiff,
    Tally,
    Tolerance,
    clip_pair,
    tolerance_for,
)
from fidelity.kinds.ignores import Ignores, ignore_problem
from fidelity.kinds.sources import NO_PATHS, Neutral, Source, read, size

JSON_LIMIT_BYTES = 32 * 2**20  # parsed JSON takes ~10-30x its size in memory
NAME = "json"


Pair = tuple[Any, Any, str]


def _members(b: dict[str, Any], c: dict[str, Any], here: str) -> Iterator[Pair]:
    for k in dict.fromkeys([*b, *c]):
        yield b.get(k, _ABSENT), c.get(k, _ABSENT), f"{here}.{k}"


def _items(b: list[Any], c: list[Any], here: str) -> Iterator[Pair]:
    for i in range(max(len(b), len(c))):
        yield (b[i] if i < len(b) else _ABSENT), (c[i] if i < len(c) else _ABSENT), f"{here}[{i}]"


def _walk(base: Any, cand: Any, where: str, ignore: Ignores) -> Iterator[Pair]:
    """Yield (path, base, cand) for every leaf that differs; absent sides are `_ABSENT`.

    Iterative, with one lazy iterator per open container, so neither a deeply nested nor
    a very long document costs more than the parsed documents themselves.
    """
    stack: list[Iterator[Pair]] = [iter([(base, cand, where)])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        b, c, here = item
        if ignore.ignored(here):
            continue
        if ignore.all_hit() and isinstance(b, dict | list) and _same(b, c):
            continue  # an equal subtree, settled by one `==` instead of leaf by leaf
        if isinstance(b, dict) and isinstance(c, dict):
            stack.append(_members(b, c, here))
        elif isinstance(b, list) and isinstance(c, list):
            stack.append(_items(b, c, here))
        elif b != c or type(b) is not type(c):
            yield here, b, c


def _same(b: Any, c: Any) -> bool:
    """Two containers the walk would find no difference in: `==` in C, confirmed by their
    JSON texts where `==` is looser than the walk (1 == 1.0 == True; NaN, which the walk
    never finds equal, refuses to encode). False only means: walk them."""
    try:
        if b != c:
            return False
        return json.dumps(b, allow_nan=False) == json.dumps(c, allow_nan=False)
    except (ValueError, RecursionError):
        return False


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _text(value: Any) -> str:
    return repr(value) if value is _ABSENT else json.dumps(value)


def _show(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= SHOWN_LINE_CHARS else text[:SHOWN_LINE_CHARS] + "..."


def _changed(where: str, b: Any, c: Any) -> Difference:
    """Two values no tolerance applies to, each cut around where they first differ."""
    return Difference(where, *clip_pair(_text(b), _text(c), SHOWN_LINE_CHARS))


def _numbers(where: str, b: Any, c: Any, tol: Tolerance) -> Difference:
    """Two JSON numbers: judged as floats, or exactly when they are too large for one."""
    try:
        fb, fc = float(b), float(c)
    except OverflowError:
        return Difference(where, _show(b), _show(c))
    return Difference(where, _show(b), _show(c), abs(fc - fb), tol.holds(fb, fc))


def _too_large(path: str, kind: str, base: Source, cand: Source, limit: int) -> OutputDiff | None:
    biggest = max(size(base), size(cand))
    if biggest <= limit:
        return None
    why = f"{biggest / 2**20:.1f} MiB is over the {kind} comparator's {limit / 2**20:.0f} MiB limit"
    return OutputDiff(path, kind, False, f"not compared by value: {why}", limit=why)


def compare_json(
    path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """Path-wise JSON differences; numbers are judged with the global tolerance."""
    refused = _too_large(path, NAME, base, cand, JSON_LIMIT_BYTES)
    if refused is not None:
        return refused
    try:
        b_doc, c_doc = json.loads(read(base)), json.loads(read(cand))
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return OutputDiff(path, NAME, False, f"not valid JSON: {why}")
    tol = tolerance_for(spec)
    tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
    ignore = Ignores(tuple(spec.get("ignore", [])))
    paths_only = False
    for where, b, c in _walk(b_doc, c_doc, "$", ignore):
        if isinstance(b, str) and isinstance(c, str) and neutral.same(b, c):
            paths_only = True
            continue
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (b, c))
        diff = _numbers(where, b, c, tol) if numeric else _changed(where, b, c)
        tally.add(where, None, diff)
    return OutputDiff(
        path,
        NAME,
        not tally.out,
        tally.summary([], OWN_PATHS if paths_only else ""),
        keys=tuple(tally.keys),
        keys_total=tally.keys_total,
        largest=tally.largest(),
        unmatched=ignore.unmatched(),
        values_out=tally.out,
        values_changed=tally.changed,
        values_within=tally.within,
    )


@dataclass(frozen=True, slots=True)
class Json(Plain):
    name: str = NAME
    reads: frozenset[str] = frozenset({"ignore", "rtol", "atol", "top", "own_paths"})
    tolerant: bool = True
    where_is_key: bool = True  # a change names its path
    plots: bool = False

    def problems(self, spec: Spec) -> list[Problem]:
        """Each `ignore` entry that is neither a path nor a bare key: it could never match."""
        return [
            (("ignore", k), why)
            for k, entry in enumerate(spec.get("ignore", []))
            if (why := ignore_problem(entry))
        ]

    def explain(
        self, path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral
    ) -> OutputDiff:
        return compare_json(path, base, cand, spec, neutral)

    def parts(self, found: OutputDiff) -> tuple[str, ...] | None:
        """Its paths, when the explanation lists every one that moved; else judged whole."""
        return found.keys if found.keys_total <= len(found.keys) else None


KIND = Json()
