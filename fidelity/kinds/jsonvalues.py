"""Parsed JSON values as the `json` kind's walks meet them: both sides' members zipped, a
number read from its spelling, two leaves told apart, a value shown as JSON spells it.

A parsed document keeps each number as the text that spells it (`jsontree.parsed`) or as
its ordinal (`jsonordinal`), so that `==` in C settles equal subtrees; these helpers read
such values back as `json.loads` would give them, where two differ.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

from fidelity.kinds.diffs import SHOWN_LINE_CHARS

Leaf = tuple[str, Any, Any]  # where, and both sides' values
Triples = Iterator[tuple[Any, Any, Any]]  # the key or index, and both sides' values
RUN_FULL = ("", None, None)  # yielded by a walk: the numbers it met make a run's worth


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()  # the side of a member or item that only the other side holds


def keyed(b: dict[str, Any], c: dict[str, Any]) -> Triples:
    """Both sides' members by key: zipped in C when both hold the same keys in the same
    order (as two runs of one program write them)."""
    keys = list(b)
    if keys == list(c):
        return zip(keys, b.values(), c.values(), strict=True)
    if b.keys() == c.keys():
        return ((k, x, c[k]) for k, x in b.items())
    return ((k, b.get(k, ABSENT), c.get(k, ABSENT)) for k in dict.fromkeys([*b, *c]))


def indexed(b: list[Any], c: list[Any]) -> Triples:
    """Both sides' items by index, as `keyed`."""
    nb, nc = len(b), len(c)
    if nb == nc:
        return zip(range(nb), b, c, strict=True)
    return ((i, b[i] if i < nb else ABSENT, c[i] if i < nc else ABSENT) for i in range(max(nb, nc)))


def member(here: str, key: str) -> str:
    """The path of an object's member: `$.a.b`, or `$.a["b.c"]` for a key a path segment
    cannot spell (`.`, `[`, `]`, or none at all), so that `ignore = ["$.a.b"]` or `["c"]`
    never matches the key `"b.c"`, and a report tells the two apart."""
    if key and "." not in key and "[" not in key and "]" not in key:
        return f"{here}.{key}"
    return f"{here}[{json.dumps(key, ensure_ascii=False)}]"


def number(spelling: bytes | str) -> int | float:
    """A number as `json.loads` reads its spelling."""
    text = spelling.decode() if type(spelling) is bytes else spelling
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def value(x: Any) -> Any:
    """A parsed value as `json.loads` gives it: a number's bytes as an int or a float (in a
    container too: one met where the other side holds a scalar)."""
    kind = type(x)
    if kind is bytes:
        return number(x)
    if kind is dict:
        return {k: value(v) for k, v in x.items()}
    return [value(v) for v in x] if kind is list else x


def leaf(path: str, b: Any, c: Any) -> Leaf | None:
    """Two values that are no containers of one type: as `json.loads` reads them, the leaf
    a walk yields, or None when they are equal and of one type."""
    if b == c:
        return None
    b, c = value(b), value(c)
    return (path, b, c) if b != c or type(b) is not type(c) else None


class Met:
    """Numbers a walk met spelled differently, unread and unnamed, column by column (the
    bulk judge reads each column in one pass): each one's parent's path and its key or
    index (None: the parent itself), or a parent of None and its ordinal's offset
    (`jsonordinal`); and both sides' spellings."""

    __slots__ = ("parents", "keys", "bs", "cs")

    def __init__(self) -> None:
        self.parents: list[str | None] = []
        self.keys: list[str | int | None] = []
        self.bs: list[bytes | str] = []
        self.cs: list[bytes | str] = []

    def add(self, parent: str, key: str | int | None, b: bytes | str, c: bytes | str) -> None:
        self.parents.append(parent)
        self.keys.append(key)
        self.bs.append(b)
        self.cs.append(c)

    def __len__(self) -> int:
        return len(self.bs)

    def clear(self) -> None:
        for column in (self.parents, self.keys, self.bs, self.cs):
            column.clear()

    def path(self, i: int) -> str:
        """The path of number i met by its parent's path: that and its key or index."""
        here, k = self.parents[i], self.keys[i]
        assert here is not None, "an ordinal's path is found in its document (jsonordinal)"
        if k is None:
            return here
        return f"{here}[{k}]" if type(k) is int else member(here, str(k))


def same(b: Any, c: Any) -> bool:
    """Two parsed containers a walk would find no difference in. False only means: walk
    them (a document nested too deeply for `==`, or numbers spelled two ways)."""
    try:
        return bool(b == c)
    except RecursionError:
        return False


def text(x: Any) -> str:
    """As JSON spells it (json.dumps'), the common scalars without its encoder's overhead."""
    kind = type(x)
    if kind is str:
        return encode_basestring_ascii(x)
    if kind is int or (kind is float and math.isfinite(x)):
        return repr(x)
    return repr(x) if x is ABSENT else json.dumps(x)


def show(x: Any) -> str:
    shown = text(x)
    return shown if len(shown) <= SHOWN_LINE_CHARS else shown[:SHOWN_LINE_CHARS] + "..."
