"""Kind `json`: two documents walked path by path; numbers judged with the tolerance.

Each leaf that differs is named by its path (`$.runs[3].t`); numbers are out of tolerance or
within it, anything else (text, booleans, null, a change of type) is changed. `ignore`
names paths or bare keys never compared (`ignores`). A file over `JSON_LIMIT_BYTES` is not
compared by value: parsed JSON takes many times its size in memory.

Equal bytes are settled unread. Documents are parsed with their numbers kept as the bytes
that spell them (`parsed`), so `==` in C settles an equal subtree exactly as the walk
would, with nothing encoded again; a number is read as one only where two differ.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from fidelity.kinds.base import Plain, Problem, Spec
from fidelity.kinds.diffs import (
    DEFAULT_TOP,
    OWN_PATHS,
    SHOWN_LINE_CHARS,
    Difference,
    OutputDiff,
    Tally,
    clip_pair,
    tolerance_for,
)
from fidelity.kinds.ignores import Ignores, ignore_problem
from fidelity.kinds.numberrun import NumberRun
from fidelity.kinds.sources import NO_PATHS, Neutral, Source, read, size

JSON_LIMIT_BYTES = 32 * 2**20  # parsed JSON takes ~10-30x its size in memory
NAME = "json"


Pair = tuple[Any, Any, str]  # both sides' values, and where
Leaf = tuple[str, Any, Any]  # where, and both sides' values


_NESTED = (dict, list)
_NUMBERS = (int, float)  # by exact type: a bool is no number here


def _members(b: dict[str, Any], c: dict[str, Any], here: str, every: bool = True) -> Iterator[Pair]:
    """Both sides' members by key; unless `every`, none whose two values are equal scalars
    (`parsed` ones: equal means the same to the walk)."""
    keys = b if b.keys() == c.keys() else dict.fromkeys([*b, *c])
    for k in keys:
        x, y = b.get(k, _ABSENT), c.get(k, _ABSENT)
        if every or type(x) in _NESTED or x != y:
            yield x, y, f"{here}.{k}"


def _items(b: list[Any], c: list[Any], here: str, every: bool = True) -> Iterator[Pair]:
    """Both sides' items by index, as `_members`."""
    nb, nc = len(b), len(c)
    for i in range(max(nb, nc)):
        x, y = (b[i] if i < nb else _ABSENT), (c[i] if i < nc else _ABSENT)
        if every or type(x) in _NESTED or x != y:
            yield x, y, f"{here}[{i}]"


def parsed(data: bytes) -> Any:
    """A JSON document whose numbers stay the bytes that spell them (b"1.50") and whose
    every NaN is an object of its own: `==` between two such documents never calls 1 and
    1.0, True and 1, or NaN and NaN equal, where the walk tells them apart. Parsing no
    float is also faster than parsing every one."""
    return json.loads(data, parse_int=str.encode, parse_float=str.encode, parse_constant=float)


def _value(x: Any) -> Any:
    """A parsed value as `json.loads` gives it: a number's bytes as an int or a float (in a
    container too: one met where the other side holds a scalar)."""
    kind = type(x)
    if kind is bytes:
        return float(x) if b"." in x or b"e" in x or b"E" in x else int(x)
    if kind is dict:
        return {k: _value(v) for k, v in x.items()}
    return [_value(v) for v in x] if kind is list else x


def _walk(base: Any, cand: Any, where: str, ignore: Ignores) -> Iterator[Leaf]:
    """Yield (path, base, cand) for every leaf that differs, numbers read as Python reads
    them; absent sides are `_ABSENT`. The documents are `parsed` ones.

    Iterative, with one lazy iterator per open container, so neither a deeply nested nor
    a very long document costs more than the parsed documents themselves.
    """
    stack: list[Iterator[Pair]] = [iter([(base, cand, where)])]
    every = bool(ignore.entries)  # an ignore entry must see every path, equal or not
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        b, c, here = item
        if every and ignore.ignored(here):
            continue
        kind = type(b)
        if kind is dict or kind is list:
            if (not every or ignore.all_hit()) and _same(b, c):
                continue  # an equal subtree, settled by one `==` instead of leaf by leaf
            if isinstance(b, dict) and isinstance(c, dict):
                stack.append(_members(b, c, here, every))
                continue
            if isinstance(b, list) and isinstance(c, list):
                stack.append(_items(b, c, here, every))
                continue
        if b != c:
            b, c = _value(b), _value(c)
            if b != c or type(b) is not type(c):
                yield here, b, c


def _same(b: Any, c: Any) -> bool:
    """Two `parsed` containers the walk would find no difference in. False only means:
    walk them (a document nested too deeply for `==`, or numbers spelled two ways)."""
    try:
        return bool(b == c)
    except RecursionError:
        return False


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _text(value: Any) -> str:
    """As JSON spells it (json.dumps'), the common scalars without its encoder's overhead."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)
    return repr(value) if value is _ABSENT else json.dumps(value)


def _show(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= SHOWN_LINE_CHARS else text[:SHOWN_LINE_CHARS] + "..."


def _changed(where: str, b: Any, c: Any) -> Difference:
    """Two values no tolerance applies to, each cut around where they first differ."""
    return Difference(where, *clip_pair(_text(b), _text(c), SHOWN_LINE_CHARS))


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
    b_bytes, c_bytes = read(base), read(cand)
    if b_bytes == c_bytes:
        return OutputDiff(path, NAME, True, "the bytes are identical")
    try:
        b_doc, c_doc = parsed(b_bytes), parsed(c_bytes)
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return OutputDiff(path, NAME, False, f"not valid JSON: {why}")
    tol = tolerance_for(spec)
    tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
    ignore = Ignores(tuple(spec.get("ignore", [])))
    paths_only = False
    numbers = NumberRun(tol, tally.top, _show)
    for where, b, c in _walk(b_doc, c_doc, "$", ignore):
        if type(b) in _NUMBERS and type(c) in _NUMBERS:
            numbers.add(where, b, c, tally)
        elif type(b) is str and type(c) is str and neutral.same(b, c):
            paths_only = True
        else:
            numbers.flush(tally)  # the order met stays the order listed
            tally.add(where, None, _changed(where, b, c))
    numbers.flush(tally)
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
