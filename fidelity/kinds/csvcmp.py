"""CSV/TSV outputs compared by value: rows aligned on key columns, tolerances per column.

Cells are read as text, so nothing is rounded on the way in; only cells whose text differs
are parsed as numbers and judged against the tolerance. Keys are tuples of cell texts end
to end (a label such as `a=1, b=x` is only ever shown, never compared), so no two keys can
be mistaken for each other.

Memory is bounded: both files are read in chunks (`csvread`) and walked in step. Rows that
arrive in step (same key at the same position, or no key) are compared a whole column at a
time (`csvblock`); a row whose partner has not been seen yet is held until it is, and
compared on its own. Duplicate keys are found from an 8-byte hash per row and side, sorted
at the end (a second pass names one). So the cost is about `KEY_BYTES` per row plus the
rows that arrive out of order, whatever the width of the rows; past `MAX_PENDING`
out-of-order rows the comparison stops and says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fidelity.kinds import csvblock
from fidelity.kinds.csvread import Chunk, NotPlain, chunks
from fidelity.kinds.diffs import (
    DEFAULT_TOP,
    OWN_PATHS,
    SHOWN_KEYS,
    OutputDiff,
    Tally,
    judge,
    tolerance_for,
)
from fidelity.kinds.ignores import unmatched_columns
from fidelity.kinds.sources import NO_PATHS, Neutral, Source
from fidelity.text import counted

MAX_PENDING = 2_000_000
KEY_BYTES = 16  # two sides' 8-byte key hashes per row

Key = tuple[str, ...]
Array = csvblock.Array


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which columns are keys, compared or ignored, on one side."""

    columns: tuple[str, ...]
    key: tuple[int, ...]


def _quoted(value: str) -> str:
    plain = value and value.strip() == value and not any(ch in value for ch in ',="\n')
    return value if plain else json.dumps(value)


def label(key: Sequence[str], values: Key) -> str:
    """How a key is shown: the value alone for one key column, else `a=1, b=x`; a value
    that could blur the boundary between two keys is quoted, so labels stay distinct."""
    if len(key) == 1:
        return values[0]
    return ", ".join(f"{k}={_quoted(v)}" for k, v in zip(key, values, strict=True))


class _Walk:
    """Both sides' rows, paired by key (or by position without one), differences tallied."""

    def __init__(
        self,
        spec: Mapping[str, Any],
        key: Sequence[str],
        base: _Layout,
        cand: _Layout,
        neutral: Neutral = NO_PATHS,
    ):
        self.neutral = neutral
        self.paths_only = False
        self.key = tuple(key)
        self.ignore = ignore = set(spec.get("ignore", [])) - set(key)
        skip = ignore | set(key)
        shared = [c for c in base.columns if c in cand.columns and c not in skip]
        self.pairs = [
            csvblock.Column(c, base.columns.index(c), cand.columns.index(c), tolerance_for(spec, c))
            for c in shared
        ]
        ignored = [c for c in ignore if c in base.columns and c in cand.columns]
        self.ignored = [(base.columns.index(c), cand.columns.index(c)) for c in ignored]
        self.base, self.cand = base, cand
        self.tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
        self.pending_base: dict[Key, tuple[str, ...]] = {}
        self.pending_cand: dict[Key, tuple[str, ...]] = {}
        self.hashes_base: list[Array] = []  # int64 key hashes, a block at a time
        self.hashes_cand: list[Array] = []
        self.reordered = False
        self.ignored_differ = False
        self.position = 0

    def _key(self, layout: _Layout, row: tuple[str, ...]) -> Key:
        if not self.key:
            return (f"row {self.position}",)
        return tuple(row[i] for i in layout.key)

    def shown(self, key: Key) -> str:
        return label(self.key, key) if self.key else key[0]

    def compare(self, key: Key, b: tuple[str, ...], c: tuple[str, ...]) -> None:
        if b == c:
            return
        shown = self.shown(key)
        for column in self.pairs:
            i, j = column.base, column.cand
            if b[i] != c[j]:
                if self.neutral.same(b[i], c[j]):
                    self.paths_only = True
                    continue
                diff = judge(f"{shown} / {column.name}", b[i], c[j], column.tol)
                if diff is not None:
                    self.tally.add(shown, column.name, diff)
        if any(b[i] != c[j] for i, j in self.ignored):
            self.ignored_differ = True

    def remember(self, rows: Array, layout: _Layout, hashes: list[Array]) -> Array | None:
        """Each row's key hash, for the duplicate check (positions are unique)."""
        if not self.key or not len(rows):
            return None
        if len(layout.key) == 1:  # `_key_hash` of each row, without a tuple a row
            keys: Iterator[Any] = map(hash, rows[:, layout.key[0]].tolist())
        else:
            keys = map(hash, zip(*(rows[:, i].tolist() for i in layout.key), strict=True))
        hashes.append(np.fromiter(keys, dtype=np.int64, count=len(rows)))
        return hashes[-1]

    def alone(self, row: tuple[str, ...], base_side: bool) -> None:
        """A row the other side has nothing at this position for."""
        self.position += 1
        layout = self.base if base_side else self.cand
        if base_side:
            self._place(self._key(layout, row), row, self.pending_cand, self.pending_base, True)
        else:
            self._place(self._key(layout, row), row, self.pending_base, self.pending_cand, False)

    def apart(self, b: tuple[str, ...], c: tuple[str, ...]) -> None:
        """Two rows at one position whose keys differ: each waits for its partner."""
        self.position += 1
        kb, kc = self._key(self.base, b), self._key(self.cand, c)
        self._place(kb, b, self.pending_cand, self.pending_base, base_side=True)
        self._place(kc, c, self.pending_base, self.pending_cand, base_side=False)

    def in_step(self, b: Array, c: Array) -> None:
        """Rows at the same positions with the same keys, compared a column at a time."""
        first = self.position
        self.position += len(b)
        if not self.ignored_differ and any((b[:, i] != c[:, j]).any() for i, j in self.ignored):
            self.ignored_differ = True
        cells, paths_only = csvblock.differing(b, c, self.pairs, self.neutral)
        self.paths_only |= paths_only
        if cells is None:
            return

        def shown(row: int) -> str:
            if not self.key:
                return f"row {first + row + 1}"
            return label(self.key, tuple(b[row, i] for i in self.base.key))

        self.tally.add_block(csvblock.block(cells, self.pairs, self.tally.top, shown))

    def pair(self, b: Array, c: Array) -> None:
        """Two blocks of rows at the same positions: runs in step compared by column, rows
        whose keys differ placed one by one, in the order of their positions."""
        hashed = self.remember(b, self.base, self.hashes_base)
        if self.key:
            pairs = zip(self.base.key, self.cand.key, strict=True)
            same = np.logical_and.reduce([b[:, i] == c[:, j] for i, j in pairs])
            apart = np.flatnonzero(~same)
            if len(apart) or hashed is None:
                self.remember(c, self.cand, self.hashes_cand)
            else:  # every key the same text on both sides: the same hashes
                self.hashes_cand.append(hashed)
        else:
            apart = np.empty(0, dtype=np.intp)
        start = 0
        for n in (*apart.tolist(), len(b)):
            if n > start:
                self.in_step(b[start:n], c[start:n])
            if n < len(b):
                self.apart(tuple(b[n]), tuple(c[n]))
            start = n + 1

    def _place(
        self,
        key: Key,
        row: tuple[str, ...],
        other: dict[Key, tuple[str, ...]],
        own: dict[Key, tuple[str, ...]],
        base_side: bool,
    ) -> None:
        partner = other.pop(key, None)
        if partner is None:
            own[key] = row
            return
        self.reordered = True
        self.compare(key, row, partner) if base_side else self.compare(key, partner, row)

    @property
    def overflowing(self) -> bool:
        return len(self.pending_base) + len(self.pending_cand) > MAX_PENDING


def _layout(columns: tuple[str, ...], key: Sequence[str]) -> _Layout:
    return _Layout(columns, tuple(columns.index(k) for k in key if k in columns))


EMPTY: Chunk = ((), np.empty((0, 0), dtype=object))


@dataclass(frozen=True, slots=True)
class Dialect:
    """How a kind's files are split into cells, and the kind's name for its explanations."""

    kind: str = "csv"
    sep: str = ","


COMMA = Dialect()


def compare_csv(
    path: str,
    base: Source,
    cand: Source,
    spec: Mapping[str, Any],
    neutral: Neutral = NO_PATHS,
    *,
    dialect: Dialect = COMMA,
) -> OutputDiff:
    """Explain a CSV (or TSV: another `dialect`) difference under the spec's tolerances."""
    try:
        return _compare(path, (base, cand), spec, neutral, dialect, plain=True)
    except NotPlain:
        return _compare(path, (base, cand), spec, neutral, dialect, plain=False)


def _compare(
    path: str,
    sides: tuple[Source, Source],
    spec: Mapping[str, Any],
    neutral: Neutral,
    dialect: Dialect,
    *,
    plain: bool,
) -> OutputDiff:
    (base, cand), kind, sep = sides, dialect.kind, dialect.sep
    key = list(spec.get("key", []))
    base_chunks, cand_chunks = chunks(base, sep, plain), chunks(cand, sep, plain)
    base_first, cand_first = next(base_chunks, EMPTY), next(cand_chunks, EMPTY)
    problems = [
        f"{role} lacks key column {', '.join(absent)}"
        for role, (columns, _) in (("baseline", base_first), ("candidate", cand_first))
        if (absent := [k for k in key if k not in columns])
    ]
    if problems:
        return OutputDiff(path, kind, False, "; ".join(problems))
    walk = _Walk(spec, key, _layout(base_first[0], key), _layout(cand_first[0], key), neutral)
    base_rows = _blocks([base_first], base_chunks)
    cand_rows = _blocks([cand_first], cand_chunks)
    del base_first, cand_first
    for b, c in _aligned(base_rows, cand_rows):
        if c is None and b is not None:
            walk.remember(b, walk.base, walk.hashes_base)
            for row in b:
                walk.alone(tuple(row), base_side=True)
        elif b is None and c is not None:
            walk.remember(c, walk.cand, walk.hashes_cand)
            for row in c:
                walk.alone(tuple(row), base_side=False)
        elif b is not None and c is not None:
            walk.pair(b, c)
        if walk.overflowing:
            why = f"over {MAX_PENDING:,} rows out of order: too many to align in memory"
            return OutputDiff(path, kind, False, f"not compared by value: {why}", limit=why)
    duplicates = [
        f"{role} has duplicate keys ({_first_with(source, sep, key, dup, plain)})"
        for role, source, hashes in (
            ("baseline", base, walk.hashes_base),
            ("candidate", cand, walk.hashes_cand),
        )
        if (dup := _duplicated(hashes))
    ]
    if duplicates:
        return OutputDiff(path, kind, False, "; ".join(duplicates))
    return _result(path, kind, walk)


def _blocks(first: list[Chunk], rest: Iterator[Chunk]) -> Iterator[Array]:
    """The rows of each chunk, the first taken out of `first`: nothing here holds a chunk
    while the next is read (memory: one chunk a side, see `csvread`)."""
    chunk: Chunk | None = first.pop()
    while chunk is not None:
        rows = chunk[1]
        chunk = None
        if len(rows):
            yield rows
        del rows
        chunk = next(rest, None)


def _aligned(
    base: Iterator[Array], cand: Iterator[Array]
) -> Iterator[tuple[Array | None, Array | None]]:
    """Blocks of rows at the same positions on both sides (the longer one's rest carried
    to the next step), then the rows of whichever side is longer, alone."""
    b = next(base, None)
    c = next(cand, None)
    while b is not None and c is not None:
        n = min(len(b), len(c))
        yield b[:n], c[:n]
        b = b[n:] if len(b) > n else None  # let go of a chunk before the next is read
        c = c[n:] if len(c) > n else None
        b = next(base, None) if b is None else b
        c = next(cand, None) if c is None else c
    while b is not None:
        yield b, None
        b = next(base, None)
    while c is not None:
        yield None, c
        c = next(cand, None)


def _key_hash(values: tuple[str, ...]) -> int:
    return hash(values[0]) if len(values) == 1 else hash(values)  # one column: no tuple hash


def _duplicated(blocks: list[Array]) -> set[int]:
    hashes = np.concatenate(blocks) if blocks else np.empty(0, dtype=np.int64)
    if len(hashes) < 2:
        return set()
    values, counts = np.unique(hashes, return_counts=True)
    return {int(v) for v in values[counts > 1][:3]}


def _first_with(source: Source, sep: str, key: Sequence[str], hashes: set[int], plain: bool) -> str:
    """A second pass, only when duplicates were seen: the first key with such a hash."""
    for columns, rows in chunks(source, sep, plain):
        where = [columns.index(k) for k in key]
        for values in zip(*(rows[:, i] for i in where), strict=True):
            if _key_hash(values) in hashes:
                return label(key, values)
    return "?"


def _result(path: str, kind: str, walk: _Walk) -> OutputDiff:
    hidden = walk.ignore | set(walk.key)
    base_cols = [c for c in walk.base.columns if c not in hidden]
    cand_cols = [c for c in walk.cand.columns if c not in hidden]
    extra = [f"column {c} added" for c in cand_cols if c not in base_cols]
    extra += [f"column {c} dropped" for c in base_cols if c not in cand_cols]
    added = [walk.shown(k) for k in walk.pending_cand]
    dropped = [walk.shown(k) for k in walk.pending_base]
    if added:
        extra.append(f"{counted(len(added), 'row')} added")
    if dropped:
        extra.append(f"{counted(len(dropped), 'row')} dropped")
    tally = walk.tally
    return OutputDiff(
        path=path,
        kind=kind,
        within_tolerance=not tally.out and not extra,
        summary=tally.summary(extra, _why_same(walk)),
        columns=tuple(tally.columns),
        keys=tuple(tally.keys),
        keys_total=tally.keys_total,
        rows_added=tuple(added[:SHOWN_KEYS]),
        rows_dropped=tuple(dropped[:SHOWN_KEYS]),
        largest=tally.largest(),
        unmatched=unmatched_columns(walk.ignore, walk.base.columns, walk.cand.columns),
        values_out=tally.out,
        values_changed=tally.changed,
        values_within=tally.within,
    )


def _why_same(walk: _Walk) -> str:
    """Why bytes differ although no value does: said as it is, never guessed."""
    if walk.paths_only:
        return OWN_PATHS
    if walk.ignored_differ and walk.reordered:
        return "no value differs outside the ignored columns; the row order changed"
    if walk.ignored_differ:
        return "no value differs outside the ignored columns"
    if walk.reordered:
        return "no value differs; only the row order changed"
    return "no value differs; only the formatting changed (quoting, spacing or line endings)"
