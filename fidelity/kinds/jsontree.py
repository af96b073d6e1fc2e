"""Kind `json`: two documents walked path by path; numbers judged with the tolerance.

Each leaf that differs is named by its path (`$.runs[3].t`); numbers are out of tolerance or
within it, anything else (text, booleans, null, a change of type) is changed. `ignore`
names paths or bare keys never compared (`ignores`). A file over `JSON_LIMIT_BYTES` is not
compared by value: parsed JSON takes many times its size in memory.

Equal bytes are settled unread. Without ignore entries, documents of up to `ORDINAL_BYTES`
are parsed with each number as its ordinal (`jsonordinal`), so `==` in C settles a subtree
in which only numbers moved, and those numbers are compared by their spellings range by
range; larger ones, or with ignore entries or a key given twice, with each number kept as
the text that spells it (`parsed`, in less memory), so `==` settles an equal subtree
exactly as the walk would. Either way a number
is read as one only where two differ, and two numbers that differ are collected as met,
unread and unnamed, and judged in bulk (`jsonbulk`): a path is made only for those a
report lists.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fidelity.kinds import jsonordinal
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
from fidelity.kinds.jsonbulk import PathOf, tally_spelled
from fidelity.kinds.jsonvalues import (
    ABSENT,
    RUN_FULL,
    Leaf,
    Met,
    Triples,
    indexed,
    keyed,
    leaf,
    member,
    same,
    show,
    text,
    value,
)
from fidelity.kinds.numberrun import RUN, NumberRun
from fidelity.kinds.sources import NO_PATHS, Neutral, Source, read, size

JSON_LIMIT_BYTES = 32 * 2**20  # parsed JSON takes ~10-45x its size in memory
# documents up to this size each are parsed with numbers as ordinals (`jsonordinal`): about
# 15% less CPU on documents of numbers, up to twice the memory for their numbers
ORDINAL_BYTES = 2**20
NAME = "json"
IGNORED = "no value differs outside the ignored paths"  # what `ignore` names may differ


Pair = tuple[Any, Any, str]  # both sides' values, and where
_NESTED = (dict, list)
_NUMBERS = (int, float)  # by exact type: a bool is no number here


def _members(b: dict[str, Any], c: dict[str, Any], here: str, every: bool = True) -> Iterator[Pair]:
    """Both sides' members by key; unless `every`, none whose two values are equal scalars
    (`parsed` ones: equal means the same to the walk)."""
    keys = b if b.keys() == c.keys() else dict.fromkeys([*b, *c])
    for k in keys:
        x, y = b.get(k, ABSENT), c.get(k, ABSENT)
        if every or type(x) in _NESTED or x != y:
            yield x, y, member(here, k)


def _items(b: list[Any], c: list[Any], here: str, every: bool = True) -> Iterator[Pair]:
    """Both sides' items by index, as `_members`."""
    nb, nc = len(b), len(c)
    for i in range(max(nb, nc)):
        x, y = (b[i] if i < nb else ABSENT), (c[i] if i < nc else ABSENT)
        if every or type(x) in _NESTED or x != y:
            yield x, y, f"{here}[{i}]"


def parsed(data: bytes) -> Any:
    """A JSON document whose numbers stay the bytes that spell them (b"1.50") and whose
    every NaN is an object of its own: `==` between two such documents never calls 1 and
    1.0, True and 1, or NaN and NaN equal, where the walk tells them apart. Parsing no
    float is also faster than parsing every one."""
    return json.loads(data, parse_int=str.encode, parse_float=str.encode, parse_constant=float)


def _walk(base: Any, cand: Any, where: str, ignore: Ignores) -> Iterator[Leaf]:
    """Yield (path, base, cand) for every leaf that differs, numbers read as Python reads
    them; absent sides are `ABSENT`. The documents are `parsed` ones.

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
            if (not every or ignore.all_hit()) and same(b, c):
                continue  # an equal subtree, settled by one `==` instead of leaf by leaf
            if isinstance(b, dict) and isinstance(c, dict):
                stack.append(_members(b, c, here, every))
                continue
            if isinstance(b, list) and isinstance(c, list):
                stack.append(_items(b, c, here, every))
                continue
        if b != c:
            b, c = value(b), value(c)
            if b != c or type(b) is not type(c):
                yield here, b, c


def _spelled_walk(base: Any, cand: Any, where: str, numbers: Met) -> Iterator[Leaf]:
    """`_walk` with no ignore entries, made for documents whose numbers mostly moved: two
    numbers that are spelled differently are not yielded but added to `numbers` as met,
    unread and with no path made (`jsonbulk` judges them in bulk, and names only those
    it shows). Every other leaf that differs is yielded as `_walk` yields it; `RUN_FULL`
    is yielded when `numbers` holds `RUN` of them.

    One loop over (key or index, value, value) triples per open container, zipped in C
    where it can be; descending into a container leaves the loop, and its iterator on the
    stack resumes where it stopped."""
    add, room = numbers.add, RUN - len(numbers)  # room: numbers until a run is full
    stack: list[tuple[Triples, str, bool]] = [(iter([(None, base, cand)]), where, False)]
    while stack:
        it, here, in_dict = stack[-1]
        for k, b, c in it:
            kind = type(b)
            if kind is bytes and type(c) is bytes:
                if b != c:
                    add(here, k, b, c)
                    room -= 1
                    if room <= 0:
                        yield RUN_FULL
                        room = RUN - len(numbers)  # as the reader left it: emptied, or not
                continue
            if kind is not dict and kind is not list and b == c:
                continue  # equal `parsed` scalars: the same to the walk
            path = here if k is None else member(here, k) if in_dict else f"{here}[{k}]"
            if (kind is dict or kind is list) and type(c) is kind:
                if same(b, c):
                    continue
                inner = keyed(b, c) if kind is dict else indexed(b, c)  # type: ignore[arg-type]
                stack.append((inner, path, kind is dict))
                break
            found = leaf(path, b, c)
            if found is not None:
                yield found
                room = RUN - len(numbers)
        else:
            stack.pop()


def _changed(where: str, b: Any, c: Any) -> Difference:
    """Two values no tolerance applies to, each cut around where they first differ."""
    return Difference(where, *clip_pair(text(b), text(c), SHOWN_LINE_CHARS))


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
    try:
        with _no_cycle_collection():  # the documents are freed before it ends
            paths_only = _both_judged(
                b_bytes, c_bytes, tol=tol, tally=tally, ignore=ignore, neutral=neutral
            )
    except RecursionError:  # a value nested too deeply to read back, where the other is none
        why = "a value is nested too deeply to read back"
        return OutputDiff(path, NAME, False, f"not compared by value: {why}", limit=why)
    if isinstance(paths_only, str):
        return OutputDiff(path, NAME, False, f"not valid JSON: {paths_only}")
    return OutputDiff(
        path,
        NAME,
        not tally.out,
        tally.summary([], OWN_PATHS if paths_only else IGNORED if ignore.hit else ""),
        keys=tuple(tally.keys),
        keys_total=tally.keys_total,
        largest=tally.largest(),
        unmatched=ignore.unmatched(),
        values_out=tally.out,
        values_changed=tally.changed,
        values_within=tally.within,
    )


def _both_judged(
    b_bytes: bytes,
    c_bytes: bytes,
    *,
    tol: Tolerance,
    tally: Tally,
    ignore: Ignores,
    neutral: Neutral,
) -> bool | str:
    """Both documents parsed and every leaf that differs tallied (`_judged`); why one is
    no JSON instead. By ordinals without ignore entries and up to `ORDINAL_BYTES` each,
    else (or with a key given twice) as `parsed` documents."""
    ordinal = not ignore.entries and max(len(b_bytes), len(c_bytes)) <= ORDINAL_BYTES
    numbers: tuple[list[str], list[str]] | None = None
    try:  # only the parse: an error while judging two valid documents is no "not JSON"
        if ordinal:
            try:
                (b_doc, nb), (c_doc, nc) = jsonordinal.parse(b_bytes), jsonordinal.parse(c_bytes)
                numbers = nb, nc
            except jsonordinal.Duplicate:
                pass
        if numbers is None:
            b_doc, c_doc = parsed(b_bytes), parsed(c_bytes)
    except (ValueError, RecursionError) as exc:
        return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    if numbers is not None:
        met = Met()
        leaves = jsonordinal.walk(b_doc, c_doc, *numbers, met)
        where = jsonordinal.path_of(b_doc)
        return _judged(leaves, met, where, tol=tol, tally=tally, neutral=neutral)
    return _tallied(b_doc, c_doc, tol=tol, tally=tally, ignore=ignore, neutral=neutral)


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
    """Every leaf of two `parsed` documents that differs, into tally (`_judged`). With no
    ignore entries (and `spelled`), numbers are judged in bulk as `_spelled_walk` meets
    them; the same counts, keys in the same order and the same largest as one by one."""
    met = Met()
    fast = spelled and not ignore.entries
    leaves = _spelled_walk(b_doc, c_doc, "$", met) if fast else _walk(b_doc, c_doc, "$", ignore)
    return _judged(leaves, met, Met.path, tol=tol, tally=tally, neutral=neutral)


def _judged(
    leaves: Iterator[Leaf],
    met: Met,
    path_of: PathOf,
    *,
    tol: Tolerance,
    tally: Tally,
    neutral: Neutral,
) -> bool:
    """Every leaf a walk yields and every number it met, into tally, in the walk's order;
    whether some differ only in the run's own paths."""
    numbers = NumberRun(tol, tally.top, show)
    paths_only = False
    for where, b, c in leaves:
        if met:  # those met before this leaf, in order
            numbers.flush(tally)
            tally_spelled(met, tol, tally, path_of)
            met.clear()
        if b is None and where == "":
            continue  # `RUN_FULL`
        if type(b) in _NUMBERS and type(c) in _NUMBERS:
            numbers.add(where, b, c, tally)
        elif type(b) is str and type(c) is str and neutral.same(b, c):
            paths_only = True
        else:
            numbers.flush(tally)  # the order met stays the order listed
            tally.add(where, None, _changed(where, b, c))
    numbers.flush(tally)
    tally_spelled(met, tol, tally, path_of)
    return paths_only


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
