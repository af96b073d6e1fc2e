"""Kind `json`: two documents walked path by path; numbers judged with the tolerance.

Each leaf that differs is named by its path (`$.runs[3].t`); numbers are out of tolerance or
within it, anything else (text, booleans, null, a change of type) is changed. `ignore`
names paths or bare keys never compared (`ignores`). A file over `JSON_LIMIT_BYTES` is not
compared by value: parsed JSON takes many times its size in memory.

Equal bytes are settled unread. Documents are parsed with their numbers kept as the bytes
that spell them (`parsed`), so `==` in C settles an equal subtree exactly as the walk
would, with nothing encoded again; a number is read as one only where two differ. Without
ignore entries, two numbers that differ are collected as met, unread and unnamed, and
judged in bulk (`_tally_spelled`): a path is made only for those a report lists.
"""

from __future__ import annotations

import gc
import heapq
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import repeat
from json.encoder import encode_basestring_ascii
from operator import add, itemgetter, le, mul, sub
from typing import Any, cast

from fidelity.kinds.base import Plain, Problem, Spec
from fidelity.kinds.diffs import (
    DEFAULT_TOP,
    OWN_PATHS,
    SHOWN_LINE_CHARS,
    Block,
    Difference,
    OutputDiff,
    Tally,
    Tolerance,
    clip_pair,
    rank,
    tolerance_for,
)
from fidelity.kinds.ignores import Ignores, ignore_problem
from fidelity.kinds.numberrun import RUN, NumberRun
from fidelity.kinds.sources import NO_PATHS, Neutral, Source, read, size

JSON_LIMIT_BYTES = 32 * 2**20  # parsed JSON takes ~10-30x its size in memory
NAME = "json"


Pair = tuple[Any, Any, str]  # both sides' values, and where
Leaf = tuple[str, Any, Any]  # where, and both sides' values
# two numbers as met: the parent's path, the key or index (None: the parent itself), and
# both sides' spellings
Spelled = tuple[str, str | int | None, bytes, bytes]


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


Triples = Iterator[tuple[Any, Any, Any]]  # the key or index, and both sides' values


def _keyed(b: dict[str, Any], c: dict[str, Any]) -> Triples:
    """Both sides' members by key, for `_spelled_walk`: zipped in C when both hold the same
    keys in the same order (as two runs of one program write them)."""
    keys = list(b)
    if keys == list(c):
        return zip(keys, b.values(), c.values(), strict=True)
    if b.keys() == c.keys():
        return ((k, x, c[k]) for k, x in b.items())
    return ((k, b.get(k, _ABSENT), c.get(k, _ABSENT)) for k in dict.fromkeys([*b, *c]))


def _indexed(b: list[Any], c: list[Any]) -> Triples:
    """Both sides' items by index, as `_keyed`."""
    nb, nc = len(b), len(c)
    if nb == nc:
        return zip(range(nb), b, c, strict=True)
    return (
        (i, b[i] if i < nb else _ABSENT, c[i] if i < nc else _ABSENT) for i in range(max(nb, nc))
    )


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


_BASE, _CAND = itemgetter(2), itemgetter(3)  # a `Spelled`'s two spellings
_RUN_FULL = ("", None, None)  # yielded by `_spelled_walk`: `numbers` holds a run's worth


def _spelled_walk(base: Any, cand: Any, where: str, numbers: list[Spelled]) -> Iterator[Leaf]:
    """`_walk` with no ignore entries, made for documents whose numbers mostly moved: two
    numbers that are spelled differently are not yielded but appended to `numbers` as met,
    unread and with no path made (`_tally_spelled` judges them in bulk, and names only those
    it shows). Every other leaf that differs is yielded as `_walk` yields it; `_RUN_FULL`
    is yielded when `numbers` holds `RUN` of them.

    One loop over (key or index, value, value) triples per open container, zipped in C
    where it can be; descending into a container leaves the loop, and its iterator on the
    stack resumes where it stopped."""
    append, room = numbers.append, RUN - len(numbers)  # room: numbers until a run is full
    stack: list[tuple[Triples, str, bool]] = [(iter([(None, base, cand)]), where, False)]
    while stack:
        it, here, in_dict = stack[-1]
        for k, b, c in it:
            kind = type(b)
            if kind is bytes and type(c) is bytes:
                if b != c:
                    append((here, k, b, c))
                    room -= 1
                    if room <= 0:
                        yield _RUN_FULL
                        room = RUN - len(numbers)  # as the reader left it: emptied, or not
                continue
            if kind is not dict and kind is not list and b == c:
                continue  # equal `parsed` scalars: the same to the walk
            path = here if k is None else f"{here}.{k}" if in_dict else f"{here}[{k}]"
            if (kind is dict or kind is list) and type(c) is kind:
                if _same(b, c):
                    continue
                inner = _keyed(b, c) if kind is dict else _indexed(b, c)  # type: ignore[arg-type]
                stack.append((inner, path, kind is dict))
                break
            leaf = _leaf(path, b, c)
            if leaf is not None:
                yield leaf
                room = RUN - len(numbers)
        else:
            stack.pop()


def _leaf(path: str, b: Any, c: Any) -> Leaf | None:
    """Two values that are no containers of one type: as `json.loads` reads them, the leaf
    the walk yields, or None when they are equal and of one type."""
    if b == c:
        return None
    b, c = _value(b), _value(c)
    return (path, b, c) if b != c or type(b) is not type(c) else None


def spelled_path(met: Spelled) -> str:
    """The path of a number `_spelled_walk` met: its parent's path and its key or index."""
    here, k = met[0], met[1]
    if k is None:
        return here
    return f"{here}[{k}]" if type(k) is int else f"{here}.{k}"


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


def _both_parsed(b_bytes: bytes, c_bytes: bytes) -> tuple[Any, Any] | str:
    """Both documents `parsed`, or why one is no JSON."""
    try:
        return parsed(b_bytes), parsed(c_bytes)
    except (ValueError, RecursionError) as exc:
        return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while two documents are parsed and walked: parsed
    JSON holds no reference cycle, so each collection the parse's many allocations set off
    scans without finding anything to free (a sixth of a compare's CPU, issue 39). Memory is
    freed by reference counts as before; the collector is left as it was found."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
    tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
    ignore = Ignores(tuple(spec.get("ignore", [])))
    tol = tolerance_for(spec)
    with _no_cycle_collection():  # the documents are freed before it ends
        docs = _both_parsed(b_bytes, c_bytes)
        if isinstance(docs, str):
            return OutputDiff(path, NAME, False, f"not valid JSON: {docs}")
        paths_only = _tallied(*docs, tol=tol, tally=tally, ignore=ignore, neutral=neutral)
        del docs
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


def _tallied(
    b_doc: Any,
    c_doc: Any,
    *,
    tol: Tolerance,
    tally: Tally,
    ignore: Ignores,
    neutral: Neutral,
    spelled: bool = True,
) -> bool:
    """Every leaf that differs, into tally; whether some differ only in the run's own paths.
    With no ignore entries (and `spelled`), numbers are judged in bulk as `_spelled_walk`
    meets them; the same counts, keys in the same order and the same largest as one by one."""
    numbers = NumberRun(tol, tally.top, _show)
    met: list[Spelled] = []
    fast = spelled and not ignore.entries
    leaves = _spelled_walk(b_doc, c_doc, "$", met) if fast else _walk(b_doc, c_doc, "$", ignore)
    paths_only = False
    for where, b, c in leaves:
        if met:  # those met before this leaf, in order
            numbers.flush(tally)
            _tally_spelled(met, tol, tally)
            met.clear()
        if b is None and where == "":
            continue  # `_RUN_FULL`
        if type(b) in _NUMBERS and type(c) in _NUMBERS:
            numbers.add(where, b, c, tally)
        elif type(b) is str and type(c) is str and neutral.same(b, c):
            paths_only = True
        else:
            numbers.flush(tally)  # the order met stays the order listed
            tally.add(where, None, _changed(where, b, c))
    numbers.flush(tally)
    _tally_spelled(met, tol, tally)
    return paths_only


def _tally_spelled(met: list[Spelled], tol: Tolerance, tally: Tally) -> None:
    """Numbers `_spelled_walk` met, read and judged in bulk and tallied as one block, as
    `NumberRun` would tally them one by one; a path is made only for those listed. Equal
    values, infinities and integers too large for a float are settled one by one
    (`_spelled_exactly`), as the walk of `json.loads`' values would settle them."""
    if not met:
        return
    # each step a map in C, the float operations of `Tolerance.holds` in its order
    xs = list(map(float, map(_BASE, met)))
    gaps: list[float] = list(map(abs, map(sub, map(float, map(_CAND, met)), xs)))
    bounds = map(add, repeat(tol.atol), map(mul, repeat(tol.rtol), map(abs, xs)))
    holds = list(map(le, gaps, bounds))
    diffs = cast(list[float | None], gaps)  # None where `_spelled_exactly` finds a change
    kept = range(len(met))
    special: list[int] = []
    if not sum(gaps) < math.inf or 0.0 in gaps:  # a NaN, an infinity or a zero among them
        special = [i for i, e in enumerate(gaps) if not 0.0 < e < math.inf]
    if special:
        equal = set()
        for i in special:
            exact = _spelled_exactly(met[i], tol)
            if exact is None:
                equal.add(i)
            else:
                diffs[i], holds[i] = exact
        kept = [i for i in kept if i not in equal]  # type: ignore[assignment]
    out = [] if all(holds) else [i for i in kept if not holds[i]]
    if out:
        best = heapq.nsmallest(tally.top, kept, key=lambda i: (holds[i], -rank(diffs[i])))
    else:  # the same order: sorting is stable, also reversed; every difference is a number
        best = heapq.nlargest(tally.top, kept, key=diffs.__getitem__)  # type: ignore[arg-type]
    top = [
        Difference(
            spelled_path(met[i]),
            _show(_value(met[i][2])),
            _show(_value(met[i][3])),
            diffs[i],
            holds[i],
        )
        for i in best
    ]
    block = Block(
        within=len(kept) - len(out),
        out=len(out),
        changed=sum(1 for i in out if diffs[i] is None),
        columns=(),
        rows=len(out),
        key=lambda n: spelled_path(met[out[n]]),
        top=top,
    )
    tally.add_block(block)


def _spelled_exactly(met: Spelled, tol: Tolerance) -> tuple[float | None, bool] | None:
    """Two numbers read as `json.loads` reads them: None when equal and of one type; else
    their difference (None: too large for a float, a change) and whether it holds."""
    b, c = _value(met[2]), _value(met[3])
    if b == c and type(b) is type(c):
        return None
    try:
        fb, fc = float(b), float(c)
    except OverflowError:
        return None, False
    return abs(fc - fb), tol.holds(fb, fc)


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
