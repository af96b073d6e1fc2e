"""The `json` kind's bulk road: each number parsed as its ordinal, its place among its
document's numbers, so that `==` in C settles a subtree whose structure, keys and texts are
equal however many of its numbers moved.

Two runs of one program write the same document with other numbers: with numbers as
ordinals (from 2 on, past False and True, which equal 0 and 1), the subtrees that hold only
moved numbers compare equal on both sides, and the numbers inside one are the same ordinals
on both sides, in one contiguous range. The walk descends only where something else
differs; the numbers it skipped are compared by their spellings, range by range, in C. A
number's path is found in its document only when a report lists it (`path_of`).

A key given twice in one object drops a number `json.loads` never reads but the ordinals
count: such a document raises `Duplicate`, and is compared on the road of `jsontree`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import compress, repeat
from operator import ne
from typing import Any

from fidelity.kinds.jsonvalues import (
    RUN_FULL,
    Leaf,
    Met,
    indexed,
    keyed,
    member,
    number,
)
from fidelity.kinds.numberrun import RUN

FIRST = 2  # the first ordinal


class Duplicate(Exception):
    """A key given twice in one object: its first value is dropped, its numbers counted."""


def parse(data: bytes) -> tuple[Any, list[str]]:
    """A document with each number as its ordinal, and the spellings by ordinal - FIRST;
    NaN and infinities are floats (each NaN an object of its own, equal to nothing)."""
    spellings: list[str] = []
    append = spellings.append

    def ordinal(spelling: str) -> int:
        append(spelling)
        return len(spellings) + FIRST - 1

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(pairs)
        if len(found) != len(pairs):
            raise Duplicate
        return found

    doc = json.loads(
        data,
        parse_int=ordinal,
        parse_float=ordinal,
        parse_constant=float,
        object_pairs_hook=members,
    )
    return doc, spellings


def _edge(x: Any, order: Any) -> int | None:
    """The first (order `iter`) or last (`reversed`) ordinal in x, or None if it has none."""
    stack = [iter((x,))]
    while stack:
        for y in stack[-1]:
            kind = type(y)
            if kind is int:
                return y  # type: ignore[no-any-return]
            if kind is dict or kind is list:
                stack.append(order(y.values() if kind is dict else y))
                break
        else:
            stack.pop()
    return None


def _read(x: Any, spellings: list[str]) -> Any:
    """x as `json.loads` gives it: each ordinal in it read from its spelling."""
    kind = type(x)
    if kind is int:
        return number(spellings[x - FIRST])
    if kind is dict:
        return {k: _read(v, spellings) for k, v in x.items()}
    return [_read(v, spellings) for v in x] if kind is list else x


class _Ranges:
    """The base's ordinals the walk did not meet, which lay in subtrees equal on both
    sides: compared range by range, those whose spellings differ added to `met` with
    their ordinal's offset for a path, at most a run at a time."""

    def __init__(self, nb: list[str], nc: list[str], met: Met) -> None:
        self.nb, self.nc, self.met = nb, nc, met
        self.cursor = FIRST  # the first of the base's ordinals not yet met or in `todo`
        self.skipped: list[Any] = []  # base values found equal since then
        self.todo: list[tuple[int, int]] = []

    def skip_to(self, upto: int) -> None:
        """The ordinals from the cursor up to `upto` (excluded) are to be compared."""
        if self.cursor < upto:
            self.todo.append((self.cursor, upto))
            self.cursor = upto
        self.skipped.clear()

    def settle(self) -> None:
        """Skip to past the last ordinal among the values skipped since the cursor moved."""
        for x in reversed(self.skipped):
            last = _edge(x, reversed)
            if last is not None:
                self.skip_to(last + 1)
                return
        self.skipped.clear()

    def drain(self) -> Iterator[Leaf]:
        """Compare the ranges to do, yielding `RUN_FULL` whenever `met` holds a run."""
        nb, nc, met = self.nb, self.nc, self.met
        for lo, hi in self.todo:
            for a in range(lo - FIRST, hi - FIRST, RUN):
                z = min(a + RUN, hi - FIRST)
                sb, sc = nb[a:z], nc[a:z]
                moved = list(map(ne, sb, sc))
                at = list(compress(range(a, z), moved))
                met.parents.extend(repeat(None, len(at)))
                met.keys.extend(at)
                met.bs.extend(compress(sb, moved))
                met.cs.extend(compress(sc, moved))
                if len(met) >= RUN:
                    yield RUN_FULL
        self.todo.clear()

    def apart(self, here: str, k: Any, b: int, c: int) -> Iterator[Leaf]:
        """Two ordinals at one path, apart in their documents: met as two numbers."""
        self.skip_to(b)
        yield from self.drain()
        self.cursor = b + 1
        if self.nb[b - FIRST] != self.nc[c - FIRST]:
            self.met.add(here, k, self.nb[b - FIRST], self.nc[c - FIRST])
            if len(self.met) >= RUN:
                yield RUN_FULL

    def leaf(self, path: str, b: Any, c: Any) -> Iterator[Leaf]:
        """Two values that differ and are no containers of one type, as `json.loads` reads
        them, after every number before them; the base's numbers in them are read here."""
        self.settle()
        yield from self.drain()
        last = _edge(b, reversed)
        if last is not None:
            self.cursor = last + 1
        b, c = _read(b, self.nb), _read(c, self.nc)
        if b != c or type(b) is not type(c):  # True and 1 are equal, and of two types
            yield path, b, c


def walk(b_doc: Any, c_doc: Any, nb: list[str], nc: list[str], met: Met) -> Iterator[Leaf]:
    """`jsontree._spelled_walk` for two `parse`d documents: every leaf that differs as
    `json.loads` reads it, in document order, the numbers before it added to `met`
    first (those in skipped subtrees too); `RUN_FULL` whenever `met` holds a run."""
    ranges = _Ranges(nb, nc, met)
    stack: list[tuple[Iterator[tuple[Any, Any, Any]], str, bool]] = [
        (iter([(None, b_doc, c_doc)]), "$", False)
    ]
    while stack:
        it, here, in_dict = stack[-1]
        for k, b, c in it:
            try:
                if b == c:
                    ranges.skipped.append(b)
                    continue
            except RecursionError:
                pass  # nested too deeply for `==`: walked
            kind = type(b)
            if kind is int and type(c) is int:  # numbers at other places in their documents
                yield from ranges.apart(here, k, b, c)
                continue
            path = here if k is None else member(here, k) if in_dict else f"{here}[{k}]"
            if (kind is dict or kind is list) and type(c) is kind:
                inner = keyed(b, c) if kind is dict else indexed(b, c)  # type: ignore[arg-type]
                stack.append((inner, path, kind is dict))
                break
            yield from ranges.leaf(path, b, c)
        else:
            stack.pop()
    ranges.skip_to(len(nb) + FIRST)
    yield from ranges.drain()


def path_of(b_doc: Any) -> Callable[[Met, int], str]:
    """Where a number met is: by its parent's path, or found by its ordinal in b_doc. What
    a search learns of a container is kept for the next (`_Children`): a report names the
    largest numbers of every run of them, and each search from the root alone would scan
    the same children again (a list of 20,000 objects without a number: minutes)."""
    seen: dict[int, _Children] = {}

    def where(met: Met, i: int) -> str:
        if met.parents[i] is not None:
            return met.path(i)
        return _locate(b_doc, met.keys[i] + FIRST, seen)  # type: ignore[operator]

    return where


def _locate(doc: Any, g: int, seen: dict[int, _Children]) -> str:
    """The path of ordinal g in doc: at each level, the last child whose first ordinal is
    at most g holds it (ordinals grow in document order), found by bisection."""
    path, node = "$", doc
    while type(node) is not int:
        known = seen.get(id(node))  # the document outlives the search: ids stay its own
        if known is None:
            known = seen[id(node)] = _Children(node)
        j = known.holding(g)
        node = known.children[j]
        path = member(path, known.keys[j]) if known.keys is not None else f"{path}[{j}]"
    return path


class _Children:
    """A container's children, and for each place the first child at or after it that
    holds an ordinal, with that ordinal: found once, so every child is looked into once."""

    def __init__(self, node: Any) -> None:
        self.keys = list(node) if type(node) is dict else None
        self.children: list[Any] = list(node.values()) if self.keys is not None else node
        self._next: dict[int, tuple[int, int | None]] = {}

    def _numbered(self, j: int) -> tuple[int, int | None]:
        """(place, first ordinal) of the first child at or after j holding one; (len, None)
        when none does."""
        passed = []
        found: tuple[int, int | None] = (len(self.children), None)
        while j < len(self.children):
            if j in self._next:
                found = self._next[j]
                break
            first = _edge(self.children[j], iter)
            if first is not None:
                found = (j, first)
                break
            passed.append(j)
            j += 1
        for k in (*passed, j):
            self._next[k] = found
        return found

    def holding(self, g: int) -> int:
        """The place of the last child whose first ordinal is at most g."""
        lo, hi, best = 0, len(self.children), -1
        while lo < hi:
            mid = (lo + hi) // 2
            j, first = self._numbered(mid)
            if first is None or j >= hi:
                hi = mid  # no child in [mid, hi) holds an ordinal
            elif first <= g:
                best, lo = j, j + 1
            else:
                hi = mid
        return best
